package described

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// Spec is a description file as written (docs/FORMATS.md, "Described
// systems"). Required: name, ports.client, start, up, and client.
type Spec struct {
	// Name names the system in the store and its directories on the hosts.
	Name  string `yaml:"name"`
	Ports Ports  `yaml:"ports"`
	// Upload lists the files put on every host before the start.
	Upload []Upload `yaml:"upload"`
	// Start is the shell command line that starts one node in the
	// foreground; chaos runs it detached, in a session of its own.
	Start Template `yaml:"start"`
	// Pidfile, when set, is the pidfile the system writes itself (when it
	// daemonizes); otherwise chaos tracks the process Start leaves.
	Pidfile Template `yaml:"pidfile"`
	// Binary, when set, is the program start runs (a path on the hosts,
	// or a name on their PATH), for the faketime clock strategy to
	// inspect; without it, start's first word (after exec) is.
	Binary Template `yaml:"binary"`
	// Logs are more files to pull back after a run, besides the output of
	// the start command.
	Logs []Template `yaml:"logs"`
	// Up says the node's process answers, whatever the cluster (fault
	// transitions wait on it); Ready says it serves as a member of a
	// working cluster (setup waits on it), and defaults to Up.
	Up    Check  `yaml:"up"`
	Ready *Check `yaml:"ready"`
	// Wipe is a shell command removing a node's state; the default
	// removes data_dir, log_dir and the start command's output.
	Wipe Template `yaml:"wipe"`
	// Members is what {members} expands to.
	Members Members `yaml:"members"`
	// Leader, when set, asks each node who leads.
	Leader *Leader `yaml:"leader"`
	// Clock, when set, asks each node its time: what the system shows of
	// its clock, which the clock family records after bending it.
	Clock *Clock `yaml:"clock"`
	// State, when set, asks each node what it is: role, term, leader,
	// vote, commit and applied index.
	State *State `yaml:"state"`
	// Events, when set, is each node's protocol event log in chaos's
	// format (events.jsonl), which the targeted faults watch; it is pulled
	// back with the logs.
	Events Template `yaml:"events"`
	// Timing is the system's protocol timing; absent values are
	// db.DefaultTiming's.
	Timing *Timing `yaml:"timing"`
	Client Client  `yaml:"client"`
}

// Ports are a node's ports; every node uses the same.
type Ports struct {
	Client int `yaml:"client"`
	Peer   int `yaml:"peer"`
}

// Upload is one file copied from the controller to every host.
type Upload struct {
	// Src is a local path, relative to the description's directory, or
	// {chaos_binary}.
	Src  Template `yaml:"src"`
	Dest Template `yaml:"dest"`
	Mode FileMode `yaml:"mode"`
}

// Check is one way of telling a node answers: exactly one of HTTP (a GET
// of this path on the client port that answers Status, default 200, with
// BodyContains in its body when set), TCP (a connection to "client",
// "peer" or a port number) or Command (a shell command run on the
// controller; exit 0 means yes).
type Check struct {
	HTTP         Template `yaml:"http"`
	Status       int      `yaml:"status"`
	BodyContains string   `yaml:"body_contains"`
	TCP          string   `yaml:"tcp"`
	Command      Template `yaml:"command"`
}

// Members says how {members} lists every member: Each expanded with each
// member's variables, joined by Separator (default ",").
type Members struct {
	Each      Template `yaml:"each"`
	Separator *string  `yaml:"separator"`
}

// Request is an HTTP request to a node's client port.
type Request struct {
	// Method defaults to GET.
	Method string   `yaml:"method"`
	Path   Template `yaml:"path"`
	Body   Template `yaml:"body"`
	// Headers are sent as they are; a request with a body gets
	// Content-Type: application/json unless they set it.
	Headers map[string]string `yaml:"headers"`
}

// Leader asks every node the Request and reads two fields of its JSON
// answer: the node's own id (Self) and the id of the leader it knows
// (Leader). The leader is the node whose own id the most answers name.
type Leader struct {
	Request `yaml:",inline"`
	Self    Path `yaml:"self"`
	Leader  Path `yaml:"leader"`
}

// Clock asks a node the Request and reads its time from the JSON answer:
// Now, a number of seconds since 1970 (fractions allowed).
type Clock struct {
	Request `yaml:",inline"`
	Now     Path `yaml:"now"`
}

// State asks a node what it is, in exactly one of two ways: an HTTP
// request (Request) whose JSON answer holds the state's fields at the
// paths given, or Command, a shell command run on the controller that
// prints one JSON object with the keys role, term, leader, vote, commit,
// applied, last_index and self (each optional but term). Self is the
// node's own id, which names it when another node's leader or vote is an
// id rather than a node name.
type State struct {
	Request   `yaml:",inline"`
	Command   Template `yaml:"command"`
	Self      Path     `yaml:"self"`
	Role      Path     `yaml:"role"`
	Term      Path     `yaml:"term"`
	Leader    Path     `yaml:"leader"`
	Vote      Path     `yaml:"vote"`
	Commit    Path     `yaml:"commit"`
	Applied   Path     `yaml:"applied"`
	LastIndex Path     `yaml:"last_index"`
}

// Timing is a system's protocol timing: its heartbeat interval, its
// election timeout (the low end of its range), and its recovery bound
// (how soon after the final heal clients succeed again).
type Timing struct {
	Heartbeat       Duration `yaml:"heartbeat"`
	ElectionTimeout Duration `yaml:"election_timeout"`
	Recovery        Duration `yaml:"recovery"`
}

// Duration is a duration written as Go writes them (50ms, 1.5s, 2m).
type Duration struct {
	D    time.Duration
	Line int
}

// UnmarshalYAML takes a positive duration such as 50ms or 1s.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || v <= 0 {
		return &Error{Line: n.Line, Msg: fmt.Sprintf("duration %q: write a positive duration with its unit, such as 50ms, 1s or 1m30s", n.Value)}
	}
	*d = Duration{D: v, Line: n.Line}
	return nil
}

// Client is how chaos's workers talk to a node: exactly one of HTTP and
// Command.
type Client struct {
	HTTP *HTTPClient `yaml:"http"`
	// Command is a shell command line run on the controller, one process
	// per worker, speaking the client protocol on stdin and stdout
	// (README, "Your own system").
	Command Template `yaml:"command"`
}

// HTTPClient holds an HTTP request with answer rules per operation: read,
// write and cas for the register workload, add and set_read for the set.
type HTTPClient struct {
	Read    *Operation `yaml:"read"`
	Write   *Operation `yaml:"write"`
	CAS     *Operation `yaml:"cas"`
	Add     *Operation `yaml:"add"`
	SetRead *Operation `yaml:"set_read"`
}

// Op returns the operation called name (OpRead, ...), nil when absent.
func (h *HTTPClient) Op(name string) *Operation {
	switch name {
	case OpRead:
		return h.Read
	case OpWrite:
		return h.Write
	case OpCAS:
		return h.CAS
	case OpAdd:
		return h.Add
	case OpSetRead:
		return h.SetRead
	}
	return nil
}

// Operation is one operation's request and the rules that classify its
// answer, tried in order; an answer no rule matches is info.
type Operation struct {
	Request `yaml:",inline"`
	Answers []Rule `yaml:"answers"`
}

// Rule matches an answer and says what it means. It matches when the
// status is one of Status (any when empty) and, when Field is set, the
// answer's JSON body has that field, equal to Equals and containing
// Contains when they are set. Without Field, Contains looks at the whole
// body.
type Rule struct {
	Status   Statuses `yaml:"status"`
	Field    Path     `yaml:"field"`
	Equals   *string  `yaml:"equals"`
	Contains string   `yaml:"contains"`
	// Type is ok, fail or info.
	Type string `yaml:"type"`
	// Unavailable says the node did not take the request (no leader):
	// the worker backs off.
	Unavailable bool `yaml:"unavailable"`
	// Value is where an ok read finds its value (absent: nil); for
	// set_read a path with a * that lists the elements. Base64 decodes
	// it first. The value is a decimal integer.
	Value  Path `yaml:"value"`
	Base64 bool `yaml:"base64"`
}

// Statuses are HTTP status codes: one, or a list.
type Statuses []int

// UnmarshalYAML takes a status code or a list of them.
func (s *Statuses) UnmarshalYAML(n *yaml.Node) error {
	nodes := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		nodes = n.Content
	}
	*s = nil
	for _, c := range nodes {
		code, err := strconv.Atoi(c.Value)
		if c.Kind != yaml.ScalarNode || err != nil || code < 100 || code > 599 {
			return &Error{Line: c.Line, Msg: fmt.Sprintf("status %q is not an HTTP status code; write one such as 200, or a list such as [500, 503]", c.Value)}
		}
		*s = append(*s, code)
	}
	return nil
}

// FileMode is an upload's permission bits, written in octal (0755); the
// default is 0755.
type FileMode struct {
	Mode os.FileMode
	set  bool
}

// UnmarshalYAML takes an octal number such as 0755 or 0o644.
func (m *FileMode) UnmarshalYAML(n *yaml.Node) error {
	s := n.Value
	if len(s) > 2 && (s[:2] == "0o" || s[:2] == "0O") {
		s = s[2:]
	}
	v, err := strconv.ParseUint(s, 8, 32)
	if n.Kind != yaml.ScalarNode || err != nil || v > 0o7777 {
		return &Error{Line: n.Line, Msg: fmt.Sprintf("mode %q is not an octal file mode; write one such as 0755", n.Value)}
	}
	*m = FileMode{Mode: os.FileMode(v), set: true}
	return nil
}

// Get returns the mode, 0755 when the file gave none.
func (m FileMode) Get() os.FileMode {
	if !m.set {
		return 0o755
	}
	return m.Mode
}
