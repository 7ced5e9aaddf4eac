package described

import (
	"slices"
	"strings"
)

// The variables templates may use. Which ones a template may use depends
// on where it is (Variables).
const (
	// A node's own.
	VarID         = "id"          // the node's name: n1, n2, ...
	VarAddr       = "addr"        // the address it binds to and is reached at
	VarClientPort = "client_port" // ports.client
	VarPeerPort   = "peer_port"   // ports.peer (only when set)
	VarClientAddr = "client_addr" // addr:client_port
	VarPeerAddr   = "peer_addr"   // addr:peer_port (only when ports.peer is set)
	VarDataDir    = "data_dir"    // the node's data directory (wiped between runs)
	VarLogDir     = "log_dir"     // the node's log directory (wiped between runs)
	VarBinDir     = "bin_dir"     // where uploads usually go
	VarMembers    = "members"     // every member, as members.each and members.separator say

	// The start command's only.
	VarBugFlags = "bug_flags" // " --bug NAME" per --bug, as shell words

	// upload.src's only.
	VarChaosBinary = "chaos_binary" // this chaos executable, or --binary

	// A client's (the command, and the HTTP templates).
	VarReadConsistency = "read_consistency" // linearizable or serializable
	VarSerializable    = "serializable"     // true or false

	// An operation's (the HTTP templates): decimal integers, and
	// base64 of their text.
	VarKey      = "key"
	VarKeyB64   = "key_b64"
	VarValue    = "value"
	VarValueB64 = "value_b64"
	VarFrom     = "from"
	VarFromB64  = "from_b64"
	VarTo       = "to"
	VarToB64    = "to_b64"
)

// Operations of an HTTP client (client.http's keys).
const (
	OpRead    = "read"     // register read of key
	OpWrite   = "write"    // register write of value to key
	OpCAS     = "cas"      // register cas of key from from to to
	OpAdd     = "add"      // set add of value, at key s<value>
	OpSetRead = "set_read" // the set's final read: every element
)

// nodeVariables are the variables every template of a node may use;
// peer ones only when the description has a peer port.
func nodeVariables(hasPeer bool) []string {
	v := []string{VarID, VarAddr, VarClientPort, VarClientAddr, VarDataDir, VarLogDir, VarBinDir}
	if hasPeer {
		v = append(v, VarPeerPort, VarPeerAddr)
	}
	return v
}

// opVariables are the variables an HTTP operation's templates add.
func opVariables(op string) []string {
	switch op {
	case OpRead:
		return []string{VarKey, VarKeyB64, VarReadConsistency, VarSerializable}
	case OpWrite, OpAdd:
		return []string{VarKey, VarKeyB64, VarValue, VarValueB64}
	case OpCAS:
		return []string{VarKey, VarKeyB64, VarFrom, VarFromB64, VarTo, VarToB64}
	case OpSetRead:
		return []string{VarReadConsistency, VarSerializable}
	}
	return nil
}

// Variables returns the variables a template at where may use, sorted.
// where is a place of the schema: "start", "members.each", "upload.src",
// "client.command", "client.http.<op>", or any other node template
// ("upload.dest", "pidfile", "logs", "wipe", "up", "ready", "leader").
func Variables(where string, hasPeer bool) []string {
	node := nodeVariables(hasPeer)
	var v []string
	switch {
	case where == "upload.src":
		v = []string{VarChaosBinary}
	case where == "members.each":
		v = node
	case where == "start":
		v = append(node, VarMembers, VarBugFlags)
	case where == "client.command":
		v = append(node, VarMembers, VarReadConsistency, VarSerializable)
	case strings.HasPrefix(where, "client.http."):
		v = append(append(node, VarMembers), opVariables(strings.TrimPrefix(where, "client.http."))...)
	default:
		v = append(node, VarMembers)
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v
}
