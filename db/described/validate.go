package described

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"chaos/db"
)

var (
	nameRe   = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	methodRe = regexp.MustCompile(`^[A-Z]+$`)
)

// validator checks a decoded description; top is its YAML, for lines.
type validator struct {
	d   *Description
	top *yaml.Node
}

// at is an error on the key at path (the closest existing key).
func (v validator) at(path []string, format string, args ...any) *Error {
	return &Error{File: v.d.File, Line: lineOf(v.top, path...), Msg: fmt.Sprintf(format, args...)}
}

// validate checks what decoding cannot: required keys, one of several
// kinds, and every template's variables.
func (d *Description) validate(top *yaml.Node) error {
	v := validator{d: d, top: top}
	for _, check := range []func() *Error{v.basics, v.uploads, v.probes, v.leader, v.clock, v.state, v.timing, v.client, v.templates,
		v.shellQuoting, v.httpPaths} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (v validator) basics() *Error {
	s := &v.d.Spec
	switch {
	case s.Name == "":
		return v.at(nil, "no name; add name: a short name for the system, such as mydb")
	case !nameRe.MatchString(s.Name):
		return v.at([]string{"name"}, "name %q: use lowercase letters, digits, '.', '_' and '-', starting with a letter or digit", s.Name)
	case s.Ports.Client == 0:
		return v.at([]string{"ports"}, "no ports.client; add ports: {client: PORT}, the port clients reach each node at")
	case s.Ports.Client < 1 || s.Ports.Client > 65535:
		return v.at([]string{"ports", "client"}, "ports.client %d: want a port from 1 to 65535", s.Ports.Client)
	case s.Ports.Peer < 0 || s.Ports.Peer > 65535:
		return v.at([]string{"ports", "peer"}, "ports.peer %d: want a port from 1 to 65535", s.Ports.Peer)
	case !s.Start.IsSet() || strings.TrimSpace(s.Start.Text) == "":
		return v.at([]string{"start"}, "no start; add start: the shell command line that runs one node in the foreground, such as: mydb --name {id} --listen {client_addr}")
	}
	return nil
}

func (v validator) uploads() *Error {
	for i, u := range v.d.Upload {
		at := []string{"upload", strconv.Itoa(i)}
		switch {
		case !u.Src.IsSet():
			return v.at(at, "upload %d has no src; add src: a local file (relative to this file's directory) or {chaos_binary}", i+1)
		case !u.Dest.IsSet():
			return v.at(at, "upload %d has no dest; add dest: where the file goes on each host, such as {bin_dir}/mydb", i+1)
		}
		if len(u.Src.Names()) == 0 {
			src := u.Src.Text
			if !filepath.IsAbs(src) {
				src = filepath.Join(v.d.Dir, src)
			}
			if st, err := os.Stat(src); err != nil || !st.Mode().IsRegular() {
				return &Error{File: v.d.File, Line: u.Src.Line, Msg: fmt.Sprintf("upload src %s is not a file here; give a path relative to this file's directory, or an absolute one", src)}
			}
		}
	}
	return nil
}

func (v validator) probes() *Error {
	if err := v.probe("up", v.d.Up); err != nil {
		return err
	}
	if v.d.Ready != nil {
		return v.probe("ready", *v.d.Ready)
	}
	return nil
}

// probe checks that c is exactly one kind of check.
func (v validator) probe(key string, c Check) *Error {
	at := []string{key}
	kinds := 0
	for _, set := range []bool{c.HTTP.IsSet(), c.TCP != "", c.Command.IsSet()} {
		if set {
			kinds++
		}
	}
	switch {
	case kinds == 0:
		return v.at(at, "no %s; add %s: {http: /path} (a GET that answers 200), {tcp: client} or {command: ...} to tell that a node answers", key, key)
	case kinds > 1:
		return v.at(at, "%s has more than one of http, tcp and command; keep one", key)
	case !c.HTTP.IsSet() && (c.Status != 0 || c.BodyContains != ""):
		return v.at(at, "%s has status or body_contains without http; they check an http answer", key)
	case c.Status != 0 && (c.Status < 100 || c.Status > 599):
		return v.at(append(at, "status"), "%s.status %d is not an HTTP status code; write one such as 200", key, c.Status)
	case c.TCP != "":
		if _, err := v.d.tcpPort(c.TCP); err != nil {
			return v.at(append(at, "tcp"), "%s.tcp: %v", key, err)
		}
	}
	return nil
}

func (v validator) leader() *Error {
	l := v.d.Leader
	if l == nil {
		return nil
	}
	at := []string{"leader"}
	switch {
	case !l.Path.IsSet():
		return v.at(at, "leader has no path; add path: the HTTP path that tells a node's id and its leader's, such as /status")
	case !l.Self.IsSet() || !l.Leader.IsSet():
		return v.at(at, "leader needs self and leader: the answer's fields holding the node's own id and its leader's, such as self: id, leader: leader")
	case l.Self.Wild() || l.Leader.Wild():
		return v.at(at, "leader's self and leader name one field each; remove the *")
	}
	return v.method(at, l.Method)
}

func (v validator) clock() *Error {
	c := v.d.Clock
	if c == nil {
		return nil
	}
	at := []string{"clock"}
	switch {
	case !c.Path.IsSet():
		return v.at(at, "clock has no path; add path: the HTTP path whose answer tells the node's time, such as /clock")
	case !c.Now.IsSet():
		return v.at(at, "clock needs now: the answer's field holding the node's time in seconds since 1970, such as now: now")
	case c.Now.Wild():
		return v.at(at, "clock's now names one field; remove the *")
	}
	return v.method(at, c.Method)
}

func (v validator) state() *Error {
	st := v.d.State
	if st == nil {
		return nil
	}
	at := []string{"state"}
	switch {
	case !st.Path.IsSet() && !st.Command.IsSet():
		return v.at(at, "state has neither path nor command; add path: the HTTP path that tells a node's state, with term: and the other "+
			"fields of its answer, or command: a shell command printing {\"role\": ..., \"term\": ...}")
	case st.Path.IsSet() && st.Command.IsSet():
		return v.at(at, "state has both path and command; keep one")
	case st.Command.IsSet():
		return v.stateCommand(at, st)
	case !st.Term.IsSet():
		return v.at(at, "state needs term: the field of the answer holding the node's term, such as term")
	}
	for _, p := range st.paths() {
		if p.Wild() {
			return v.at(at, "state's fields name one field each; remove the * from %s", p.Text)
		}
	}
	return v.method(at, st.Method)
}

// stateCommand checks a state command: the HTTP keys have no place.
func (v validator) stateCommand(at []string, st *State) *Error {
	http := st.Method != "" || st.Body.IsSet() || len(st.Headers) > 0
	for _, p := range st.paths() {
		http = http || p.IsSet()
	}
	if http {
		return v.at(at, "state has command and HTTP keys (method, body, headers, or field paths such as term); a state command "+
			"prints one JSON object with the keys role, term, leader, vote, commit, applied, last_index, self: remove the HTTP keys")
	}
	return nil
}

// paths are the state's field paths, Self's included.
func (st *State) paths() []Path {
	return []Path{st.Self, st.Role, st.Term, st.Leader, st.Vote, st.Commit, st.Applied, st.LastIndex}
}

func (v validator) timing() *Error {
	t := v.d.Timing
	if t == nil {
		return nil
	}
	got := t.Get()
	if got.Heartbeat >= got.ElectionTimeout {
		return v.at([]string{"timing"}, "timing: heartbeat %v is not shorter than election_timeout %v; a follower would campaign "+
			"between two heartbeats: give the system's own values (default heartbeat %v, election_timeout %v)",
			got.Heartbeat, got.ElectionTimeout, db.DefaultTiming().Heartbeat, db.DefaultTiming().ElectionTimeout)
	}
	return nil
}

func (v validator) method(at []string, m string) *Error {
	if m != "" && !methodRe.MatchString(m) {
		return v.at(append(at, "method"), "method %q: want an HTTP method in capitals, such as GET or POST", m)
	}
	return nil
}

func (v validator) client() *Error {
	c := v.d.Client
	at := []string{"client"}
	switch {
	case c.HTTP == nil && !c.Command.IsSet():
		return v.at(at, "no client; add client: {command: ...} (a client process, README \"Your own system\") or client: {http: ...} (request templates)")
	case c.HTTP != nil && c.Command.IsSet():
		return v.at(at, "client has both http and command; keep one")
	case c.Command.IsSet():
		return nil
	}
	any := false
	for _, name := range []string{OpRead, OpWrite, OpCAS, OpAdd, OpSetRead} {
		op := c.HTTP.Op(name)
		if op == nil {
			continue
		}
		any = true
		if err := v.operation(name, op); err != nil {
			return err
		}
	}
	if !any {
		return v.at(append(at, "http"), "client.http has no operation; add read, write and cas (register workload) or add and set_read (set workload)")
	}
	return nil
}

func (v validator) operation(name string, op *Operation) *Error {
	at := []string{"client", "http", name}
	switch {
	case !op.Path.IsSet():
		return v.at(at, "client.http.%s has no path; add path: the request's path, such as /kv/{key}", name)
	case len(op.Answers) == 0:
		return v.at(at, "client.http.%s has no answers; add answers: rules such as {status: 200, type: ok}", name)
	}
	if err := v.method(at, op.Method); err != nil {
		return err
	}
	for i, r := range op.Answers {
		if err := v.rule(name, append(at, "answers", strconv.Itoa(i)), r); err != nil {
			return err
		}
	}
	return nil
}

func (v validator) rule(op string, at []string, r Rule) *Error {
	reads := op == OpRead || op == OpSetRead
	switch {
	case r.Type != "ok" && r.Type != "fail" && r.Type != "info":
		return v.at(at, "answer rule type %q: want ok, fail or info", r.Type)
	case r.Value.IsSet() && !reads:
		return v.at(append(at, "value"), "only read and set_read answers have a value; remove value")
	case r.Value.IsSet() && r.Type != "ok":
		return v.at(append(at, "value"), "only an ok answer has a value; remove value or make the type ok")
	case op == OpSetRead && r.Type == "ok" && !r.Value.Wild():
		return v.at(at, "an ok set_read answer needs value: a path with a * that lists the elements, such as kvs.*.value")
	case op == OpRead && r.Value.Wild():
		return v.at(append(at, "value"), "a read's value is one field; remove the *")
	case r.Base64 && !r.Value.IsSet():
		return v.at(append(at, "base64"), "base64 decodes the value; it needs value")
	case (r.Equals != nil) && !r.Field.IsSet():
		return v.at(append(at, "equals"), "equals compares a field; add field")
	}
	return nil
}

// placedTemplate is a template and where it is in the schema.
type placedTemplate struct {
	where string
	t     Template
}

// templates checks that every template uses only the variables of its
// place, and that {members} has members.each to expand.
func (v validator) templates() *Error {
	hasPeer := v.d.Ports.Peer != 0
	for _, p := range v.d.placedTemplates() {
		known := Variables(p.where, hasPeer)
		for _, name := range p.t.Names() {
			if !slices.Contains(known, name) {
				return &Error{File: v.d.File, Line: p.t.Line, Msg: unknownVariable(p.where, name, known, hasPeer)}
			}
			if name == VarMembers && !v.d.Members.Each.IsSet() {
				return &Error{File: v.d.File, Line: p.t.Line, Msg: "{members} is used but members.each is not set; add members: {each: \"{id}={peer_addr}\", separator: \",\"}"}
			}
		}
	}
	return nil
}

// httpPaths checks that every HTTP path begins with "/": the request goes
// to http://ADDR+PATH, so a path such as "@other-host/x" or ".evil.com/"
// would send it to another host.
func (v validator) httpPaths() *Error {
	for _, p := range v.d.httpPathTemplates() {
		if p.t.IsSet() && !strings.HasPrefix(p.t.Text, "/") {
			return &Error{File: v.d.File, Line: p.t.Line, Msg: fmt.Sprintf(
				"%s path %q does not begin with /; write the path on the node, such as /%s", p.where, p.t.Text, strings.TrimLeft(p.t.Text, "/@:."))}
		}
	}
	return nil
}

// httpPathTemplates are the templates that are HTTP paths.
func (d *Description) httpPathTemplates() []placedTemplate {
	out := []placedTemplate{{"up.http", d.Up.HTTP}}
	if d.Ready != nil {
		out = append(out, placedTemplate{"ready.http", d.Ready.HTTP})
	}
	if d.Leader != nil {
		out = append(out, placedTemplate{"leader", d.Leader.Path})
	}
	if d.Clock != nil {
		out = append(out, placedTemplate{"clock", d.Clock.Path})
	}
	if d.State != nil {
		out = append(out, placedTemplate{"state", d.State.Path})
	}
	if h := d.Client.HTTP; h != nil {
		for _, name := range []string{OpRead, OpWrite, OpCAS, OpAdd, OpSetRead} {
			if op := h.Op(name); op != nil {
				out = append(out, placedTemplate{"client.http." + name, op.Path})
			}
		}
	}
	return out
}

func unknownVariable(where, name string, known []string, hasPeer bool) string {
	hint := "fix the name, or leave the braces out"
	switch {
	case (name == VarPeerPort || name == VarPeerAddr) && !hasPeer:
		hint = "set ports.peer to use it"
	case name == VarBugFlags:
		hint = "only start may use it"
	case name == VarChaosBinary:
		hint = "only upload.src may use it"
	}
	return fmt.Sprintf("unknown variable {%s} in %s; the variables there are %s: %s", name, where, joinNames(known), hint)
}

// placedTemplates lists every template of the description with its place.
func (d *Description) placedTemplates() []placedTemplate {
	out := []placedTemplate{{"start", d.Start}, {"pidfile", d.Pidfile}, {"binary", d.Binary}, {"wipe", d.Wipe}, {"members.each", d.Members.Each},
		{"up", d.Up.HTTP}, {"up", d.Up.Command}, {"client.command", d.Client.Command}}
	for _, u := range d.Upload {
		out = append(out, placedTemplate{"upload.src", u.Src}, placedTemplate{"upload.dest", u.Dest})
	}
	for _, l := range d.Logs {
		out = append(out, placedTemplate{"logs", l})
	}
	if d.Ready != nil {
		out = append(out, placedTemplate{"ready", d.Ready.HTTP}, placedTemplate{"ready", d.Ready.Command})
	}
	if d.Leader != nil {
		out = append(out, placedTemplate{"leader", d.Leader.Path}, placedTemplate{"leader", d.Leader.Body})
	}
	if d.Clock != nil {
		out = append(out, placedTemplate{"clock", d.Clock.Path}, placedTemplate{"clock", d.Clock.Body})
	}
	if d.State != nil {
		out = append(out, placedTemplate{"state", d.State.Path}, placedTemplate{"state", d.State.Body},
			placedTemplate{"state", d.State.Command})
	}
	out = append(out, placedTemplate{"events", d.Events})
	if h := d.Client.HTTP; h != nil {
		for _, name := range []string{OpRead, OpWrite, OpCAS, OpAdd, OpSetRead} {
			if op := h.Op(name); op != nil {
				out = append(out, placedTemplate{"client.http." + name, op.Path}, placedTemplate{"client.http." + name, op.Body})
			}
		}
	}
	return out
}

// tcpPort is the port a tcp check dials: "client", "peer" or a number.
func (d *Description) tcpPort(s string) (int, error) {
	switch s {
	case "client":
		return d.Ports.Client, nil
	case "peer":
		if d.Ports.Peer == 0 {
			return 0, fmt.Errorf("peer, but ports.peer is not set; set it or use client")
		}
		return d.Ports.Peer, nil
	}
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("%q: want client, peer or a port number", s)
	}
	return p, nil
}

// Supports says why the description cannot run workload ("register" or
// "set"), or nil when it can.
func (d *Description) Supports(workload string) error {
	h := d.Client.HTTP
	if h == nil {
		return nil // a client command is asked for every operation
	}
	need := []string{OpRead, OpWrite, OpCAS}
	if workload == "set" {
		need = []string{OpAdd, OpSetRead}
	}
	for _, name := range need {
		if h.Op(name) == nil {
			return &Error{File: d.File, Line: d.httpLine, Msg: fmt.Sprintf("client.http has no %s, which the %s workload needs; add %s",
				name, workload, strings.Join(need, ", "))}
		}
	}
	return nil
}
