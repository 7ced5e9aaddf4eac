package described

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A placeholder inside quotes the template opens itself is found, and one
// the shell reads as a plain word is not.
func TestUnsafePlaceholderInQuotes(t *testing.T) {
	quoted := map[string]string{
		`echo "{data_dir}"`:                    `{data_dir} inside "..." quotes`,
		`nc -z '{addr}' 7000`:                  `{addr} inside '...' quotes`,
		`mydb --dir "{data_dir}/db" --id {id}`: `{data_dir} inside "..." quotes`,
		`mydb --id {id} --log "x {log_dir}"`:   `{log_dir} inside "..." quotes`,
		`echo "$(date) {id}"`:                  `{id} inside "..." quotes`,
		`sh -c 'mydb --id {id}'`:               `{id} inside '...' quotes`,
		`a="it's" b="{id}"`:                    `{id} inside "..." quotes`,
		"mydb \\\\\"{id}\"":                    `{id} inside "..." quotes`, // \\ then a real quote
		"# a comment\nmydb \"{id}\"":           `{id} inside "..." quotes`,
		`printf $'it\'s {id}'`:                 `{id} inside $'...' quotes`, // as bash reads it
		`printf $'it\'' {id} '`:                `{id} inside '...' quotes`,  // as dash reads it
	}
	for text, want := range quoted {
		h := unsafePlaceholder(text)
		require.NotNil(t, h, text)
		assert.Equal(t, want, "{"+h.name+"} "+h.context, text)
	}
	for _, text := range []string{
		`mydb --id {id} --data {data_dir}`,
		`mydb --dir {data_dir}/db --peers {members}`,
		`echo "no variable here" {id} 'nor {here'`,
		`curl -d '{"key":1}' http://{client_addr}/kv`,
		`echo \"{id}\"`,
		`kill "$(cat {data_dir}/pid)"`,
		`test -f "$(dirname $(echo {data_dir}))"`,
		`mydb {id} # the "id" in this comment is not the shell's`,
		`mydb --name=x{id}y`,
	} {
		h := unsafePlaceholder(text)
		assert.Nil(t, h, "%s: %+v", text, h)
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

// unsafeTemplate is a wipe template with a placeholder where its quoted
// value is not one plain word, and the start of Load's message about it.
type unsafeTemplate struct{ name, text, want string }

// unsafeTemplates are the contexts Load refuses besides quotes (above).
func unsafeTemplates() []unsafeTemplate {
	arith := "; the shell evaluates the value there as an expression, whatever its quotes, and runs a $(...) in it: " +
		"set a variable before the command (v={client_port}), check that it is a number (case $v in ''|*[!0-9]*) exit 1;; esac), then use $v"
	return []unsafeTemplate{
		{"here-document", "cat <<EOF\n--addr {addr}\nEOF",
			"{addr} is in the body of here-document <<EOF in wipe; where the shell runs any $(...) of the value, whatever its quotes: " +
				"set a variable before the command (v={addr}) and write $v in the body, under an unquoted delimiter"},
		{"here-document <<-", "cat <<-EOF\n\t--addr {addr}\n\tEOF", "{addr} is in the body of here-document <<-EOF in wipe; "},
		{"here-document, quoted delimiter", "cat <<'EOF'\n{addr}\nEOF",
			"{addr} is in the body of here-document <<'EOF' in wipe; where its quotes stay in the text, and a line EOF in the value would end the body early and run the rest: "},
		{"here-document, double-quoted delimiter", "cat <<\"END\" >/dev/null\nx {addr}\nEND",
			`{addr} is in the body of here-document <<"END" in wipe; where its quotes stay in the text, and a line END in the value`},
		{"here-document, escaped delimiter", "cat <<\\EOF\n{addr}\nEOF", `{addr} is in the body of here-document <<\EOF in wipe; `},
		{"here-document in $( )", "x=$(cat <<EOF\n{addr}\nEOF\n)\necho \"$x\"", "{addr} is in the body of here-document <<EOF in wipe; "},
		{"second here-document of a line", "cat <<A - <<B\nA\n{id}\nB", "{id} is in the body of here-document <<B in wipe; "},
		{"here-document after a placeholder on its line", "cat <<EOF >{data_dir}.conf\nid={id}\nEOF", "{id} is in the body of here-document <<EOF in wipe; "},
		{"here-document delimiter", "cat <<{id}\nx\n{id}", "{id} is in the delimiter of a here-document in wipe; write a fixed word such as EOF there"},
		{"arithmetic", "echo $(( {client_port} + 1 ))", "{client_port} is inside $((...)) arithmetic in wipe" + arith},
		{"arithmetic without blanks", "echo $(({client_port}+1))", "{client_port} is inside $((...)) arithmetic in wipe; "},
		{"arithmetic in $( )", "echo $(echo $(( {client_port} + 1 )))", "{client_port} is inside $((...)) arithmetic in wipe; "},
		{"arithmetic in double quotes", `echo "$(( {client_port} + 1 ))"`, "{client_port} is inside $((...)) arithmetic in wipe; "},
		{"quoted in arithmetic", `echo $(( "{client_port}" + 1 ))`, "{client_port} is inside $((...)) arithmetic in wipe; "},
		{"$[ ]", "echo $[ {client_port} + 1 ]", "{client_port} is inside $[...] arithmetic in wipe; "},
		{"(( ))", "(( {client_port} + 1 )) && echo yes", "{client_port} is inside ((...)) arithmetic in wipe; "},
		{"for (( ))", "for (( i = 0; i < {client_port}; i++ )); do :; done", "{client_port} is inside ((...)) arithmetic in wipe; "},
		{"substring", "v=abcdef; echo ${v:{client_port}}", "{client_port} is inside the subscript or substring of a ${...}, which is arithmetic in wipe; "},
		{"subscript", "a=(x y); echo ${a[{client_port}]}", "{client_port} is inside the subscript or substring of a ${...}, which is arithmetic in wipe; "},
		{"backquotes", "echo `echo {addr}`",
			"{addr} is inside `...` backquotes in wipe; the shell finds the closing ` before it reads any quotes, so a ` or \\ in the value changes the command: write $(...) instead of `...`"},
		{"backquotes in double quotes", "echo \"`echo {addr}`\"", "{addr} is inside `...` backquotes in wipe; "},
		{"backquotes in $( )", "echo $(echo `echo {addr}`)", "{addr} is inside `...` backquotes in wipe; "},
		{"comment", "echo {id} # {id} is the node's name",
			"{id} is in a comment in wipe; a newline in the value would end the comment and the rest would run: take {id} out of the comment"},
		{"after a $", "echo ${id}", "{id} is right after a $ in wipe; bash reads $ and the quoted value as $'...' escapes, and a plain value as a variable's name: remove the $ (write {id}, not ${id})"},
		{"after a \\", `echo \{id}`, `{id} is right after a \ in wipe; it escapes the quote the value begins with, leaving the value unquoted: remove the \ before {id}`},
		{"name of ${ }", "echo ${{id}}", "{id} is the name in ${...} in wipe; "},
		{"$' ' as bash reads it", `echo $'it\'s {id}'`, "{id} is inside $'...' quotes in wipe; "},
		{"$' ' as dash reads it", `echo $'it\'' {id} '`, "{id} is inside '...' quotes in wipe; "},
		{"double quotes in a case in $( )", `echo "$(case a in a) echo "{id}";; esac)"`, `{id} is inside "..." quotes in wipe; `},
	}
}

// withWipe is minimal with text as its wipe, a literal block at line 8.
func withWipe(text string) string {
	return minimal + "wipe: |-\n  " + strings.ReplaceAll(text, "\n", "\n  ") + "\n"
}

// A placeholder in a here-document, arithmetic, backquotes, a comment,
// right after a $ or \, or as the name of a ${...} is refused at load, in
// one line: FILE:LINE (the template's), the placeholder, its context and
// the fix.
func TestLoadRefusesUnsafeShellContexts(t *testing.T) {
	for _, c := range unsafeTemplates() {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, "mydb.yaml", withWipe(c.text))
			_, err := Load(p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), p+":8: "+c.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
	text := strings.Replace(minimal, "start: mydb --id {id} --peers {members} --data {data_dir}\n",
		"start: |\n  cat <<EOF >conf\n  peers={members}\n  EOF\n  mydb --id {id}\n", 1)
	p := writeFile(t, "mydb.yaml", text)
	_, err := Load(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), p+":4: {members} is in the body of here-document <<EOF in start; ")
}

// safeTemplates put placeholders where their quoted values are plain
// words, the fixes Load's messages propose among them.
func safeTemplates() []string {
	return []string{
		"echo {addr} {id}",
		"echo x={addr} --data={data_dir}/db",
		"echo $(echo {addr}) \"$(echo {addr})\" $( (echo {addr}) )",
		"echo ${v:-{addr}} ${v-{addr}} ${v:+{addr}} ${v+{addr}}",
		": ${v:={addr}}; echo \"$v\"",
		"v=abc; echo ${v#{addr}} ${v%%{addr}} ${v##*{addr}}",
		"v={addr}; echo \"$v\"",
		"v={addr}; cat <<EOF\nhello $v\nEOF",
		"cat <<'EOF'\nhello $v\nEOF\necho {addr}",
		"cat <<-EOF\n\thello\n\tEOF\necho {addr}",
		"x=$(cat <<EOF\nhello\nEOF\n)\necho \"$x\" {addr}",
		"v={client_port}; case $v in ''|*[!0-9]*) exit 1;; esac; echo $((v + 1))",
		"echo $(( 1 << 2 )) {addr} $((3)) {id}",
		"cat <<<{addr}",
		"f() { printf '%s\\n' \"$1\"; }; f {addr}",
		"if [ -n {addr} ]; then echo {addr}; fi",
		"case {addr} in *) echo {addr};; esac",
		"echo \"$v\" '$v' {addr} \"it's\" {id}",
		"printf '%s\\n' {addr} # a comment",
		"# a comment\necho {addr}",
		"echo $'a\\tb' {addr} $'x' {id}",
		"echo \\$ {addr} \\\\{id} $$ {id}",
		"echo \"${v:-x}\" {addr} \"`echo x`\" {id}",
		"echo `echo x` {addr}",
		"echo \"$(case {id} in a) echo x;; (*) echo y;; esac)\" {addr}",
		"x=$(case a in (a) echo {id};; esac; echo {addr}); echo \"$x\"",
	}
}

// hostileValues each try to run touch M from a placeholder, in some
// context or other.
func hostileValues() []string {
	return []string{
		"$(touch M)", "`touch M`", "'$(touch M)'", `"$(touch M)"`, `\$(touch M)`,
		"$(touch M)'",            // after a \: \'$(touch M)'\'''
		`\'; touch M #`,          // after a $, as bash reads $'...'
		"a`;touch M;`",           // in backquotes, under bash
		"a[$(touch M)]",          // in arithmetic, under bash
		"x\nEOF\ntouch M\n",      // in a here-document with a quoted delimiter
		"x\ntouch M\n",           // in a comment
		"}$(touch M)",            // in a ${...}
		"x\nEND\ntouch M\nEND\n", // in a here-document <<"END"
	}
}

// Whatever Load accepts is safe: every template of safeTemplates and
// unsafeTemplates that loads is run under /bin/sh and bash with a hostile
// value in every placeholder, and none may make a file. safeTemplates must
// load.
func TestAcceptedTemplatesRunHostileValuesAsWords(t *testing.T) {
	shells := []string{"/bin/sh"}
	if bash, err := exec.LookPath("bash"); err == nil {
		shells = append(shells, bash)
	} else {
		t.Log("no bash here: /bin/sh only")
	}
	texts := safeTemplates()
	for _, c := range unsafeTemplates() {
		texts = append(texts, c.text)
	}
	dir := t.TempDir()
	for k, text := range texts {
		_, err := Load(writeFile(t, "mydb.yaml", withWipe(text)))
		if k < len(safeTemplates()) {
			require.NoError(t, err, text)
		}
		if err != nil {
			continue
		}
		for _, value := range hostileValues() {
			vars := Vars{}
			for _, name := range Variables("wipe", true) {
				vars[name] = value
			}
			cmd := Template{Text: text}.ExpandShell(vars)
			for _, sh := range shells {
				runHostile(t, dir, sh, cmd)
			}
		}
	}
}

// runHostile runs cmd under sh in dir, which must stay empty.
func runHostile(t *testing.T, dir, sh, cmd string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	run := exec.CommandContext(ctx, sh, "-c", cmd)
	run.Dir = dir
	_ = run.Run() // many fail; what matters is what they made
	require.NoError(t, ctx.Err(), "%s -c %q", sh, cmd)
	made, err := os.ReadDir(dir)
	require.NoError(t, err)
	if len(made) > 0 {
		for _, e := range made {
			require.NoError(t, os.RemoveAll(filepath.Join(dir, e.Name())))
		}
		t.Errorf("%s -c %q made %s", sh, cmd, made[0].Name())
	}
}

// The scanner ends on any text, and a hazard names a placeholder that is
// where it says.
func FuzzUnsafePlaceholder(f *testing.F) {
	for _, text := range safeTemplates() {
		f.Add(text)
	}
	for _, c := range unsafeTemplates() {
		f.Add(c.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if h := unsafePlaceholder(text); h != nil {
			require.True(t, strings.HasPrefix(text[h.at:], "{"+h.name+"}"), "%q: %+v", text, h)
			require.NotEmpty(t, h.context)
			require.NotEmpty(t, h.fix)
		}
	})
}
