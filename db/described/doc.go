// Package described is a system under test given by a description file
// (YAML) rather than by Go code: what to upload to each host, the start
// command as a template, how to tell a node is up, where its logs are, how
// to find its leader, and its client, as HTTP request templates with rules
// or as a client command (docs/FORMATS.md, "Described systems").
//
// Load parses and validates a file: every error is one *Error naming the
// file and line, and saying how to fix it, before any host is touched.
// New builds a db.DB from a Description; its db.Capabilities are those the
// description declares (a leader probe, ...), never fault hooks. The
// workload package builds the clients from Description.Client.
//
// Templates hold {name} placeholders (a name of [a-z0-9_]); anything else in
// braces, such as JSON, is literal. Each template may use a fixed set of
// variables, checked when the file is loaded (see Variables).
package described
