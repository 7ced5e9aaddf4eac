package described

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuotedPlaceholder(t *testing.T) {
	quoted := map[string]string{
		`echo "{data_dir}"`:                    `{data_dir} "`,
		`nc -z '{addr}' 7000`:                  `{addr} '`,
		`mydb --dir "{data_dir}/db" --id {id}`: `{data_dir} "`,
		`mydb --id {id} --log "x {log_dir}"`:   `{log_dir} "`,
		`echo "$(date) {id}"`:                  `{id} "`,
		`sh -c 'mydb --id {id}'`:               `{id} '`,
		`a="it's" b="{id}"`:                    `{id} "`,
		"mydb \\\\\"{id}\"":                    `{id} "`, // \\ then a real quote
		"# a comment\nmydb \"{id}\"":           `{id} "`,
	}
	for text, want := range quoted {
		name, q, ok := quotedPlaceholder(text)
		require.True(t, ok, text)
		assert.Equal(t, want, "{"+name+"} "+string(q), text)
	}
	for _, text := range []string{
		`mydb --id {id} --data {data_dir}`,
		`mydb --dir {data_dir}/db --peers {members}`,
		`echo "no variable here" {id} 'nor {here'`,
		`curl -d '{"key":1}' http://{client_addr}/kv`,
		`echo \"{id}\"`,
		`kill "$(cat {data_dir}/pid)"`,
		"kill \"`cat {data_dir}/pid`\"",
		`test -f "$(dirname $(echo {data_dir}))"`,
		`mydb {id} # the "{id}" in this comment is not the shell's`,
		`mydb --name=x{id}y`,
	} {
		name, _, ok := quotedPlaceholder(text)
		assert.False(t, ok, "%s: %s", text, name)
	}
}

// A shell template that puts a variable inside quotes of its own is
// refused at load: FILE:LINE, where, and the fix.
func TestLoadRefusesQuotedVariables(t *testing.T) {
	cases := []struct {
		name, text string
		line       int
		want       string
	}{
		{"start", strings.Replace(minimal, "--data {data_dir}", `--data "{data_dir}"`, 1), 4,
			`{data_dir} is inside "..." quotes in start; variables are quoted for you: remove the quotes around {data_dir}`},
		{"up command", strings.Replace(minimal, "up: {http: /health}", `up: {command: "nc -z '{addr}' 7000"}`, 1), 5,
			`{addr} is inside '...' quotes in up.command; variables are quoted for you: remove the quotes around {addr}`},
		{"ready command", minimal + "ready: {command: \"test -d '{data_dir}'\"}\n", 8,
			`{data_dir} is inside '...' quotes in ready.command`},
		{"wipe", minimal + "wipe: rm -rf \"{data_dir}\"\n", 8,
			`{data_dir} is inside "..." quotes in wipe`},
		{"client command", strings.Replace(minimal, "./client --addr {client_addr}", `./client --addr "{client_addr}"`, 1), 7,
			`{client_addr} is inside "..." quotes in client.command`},
	}
	for _, c := range cases {
		p := writeFile(t, "mydb.yaml", c.text)
		_, err := Load(p)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), p+":"+strconv.Itoa(c.line)+": "+c.want, c.name)
		assert.NotContains(t, err.Error(), "\n", c.name)
	}
}

// An HTTP path that does not begin with / is refused at load: appended to
// http://ADDR it could name another host.
func TestLoadRefusesAPathWithoutASlash(t *testing.T) {
	http := "  http:\n    read:\n      path: PATH\n      answers: [{status: 200, type: ok}]\n"
	withPath := func(path string) string {
		return strings.Replace(minimal, "  command: ./client --addr {client_addr}\n", strings.Replace(http, "PATH", path, 1), 1)
	}
	cases := []struct {
		name, text string
		line       int
		want       string
	}{
		{"client path to another host", withPath(`"@evil.example/kv/{key}"`), 9,
			`client.http.read path "@evil.example/kv/{key}" does not begin with /; write the path on the node, such as /evil.example/kv/{key}`},
		{"client path without a slash", withPath("kv/{key}"), 9,
			`client.http.read path "kv/{key}" does not begin with /; write the path on the node, such as /kv/{key}`},
		{"up path", strings.Replace(minimal, "up: {http: /health}", "up: {http: health}", 1), 5,
			`up.http path "health" does not begin with /`},
		{"ready path", minimal + "ready: {http: \".x/health\"}\n", 8, `ready.http path ".x/health" does not begin with /`},
		{"leader path", minimal + "leader: {path: status, self: id, leader: leader}\n", 8, `leader path "status" does not begin with /`},
	}
	for _, c := range cases {
		p := writeFile(t, "mydb.yaml", c.text)
		_, err := Load(p)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), p+":"+strconv.Itoa(c.line)+": "+c.want, c.name)
	}
	d, err := Load(writeFile(t, "mydb.yaml", withPath("/kv/{key}")))
	require.NoError(t, err)
	assert.Equal(t, "/kv/{key}", d.Client.HTTP.Op(OpRead).Path.Text)
}
