// Package nodeapi is chaos-node's client API, on both of its sides: the
// routes, the JSON bodies of requests and answers, what each status code
// means, and a thin typed Client. The node's HTTP handlers decode and encode
// these types, and everything in chaos that talks to a chaos-node (the
// workload's clients, the nemesis's fault hooks, leader discovery, readiness
// polls) goes through them, so the two sides cannot drift apart.
//
// The API is HTTP/1.1 with JSON bodies, documented for users in
// docs/FORMATS.md ("chaos-node's HTTP API"). Any node accepts any request
// and forwards writes to the leader. Status codes:
//
//   - 200: done. A GET of a key answers ValueResponse, a write "{}", GET
//     /status a Status, every fault hook the node's Faults after it.
//   - 400: the request is malformed (bad JSON, an unknown field, a missing
//     field, an empty key, an unknown peer, a fault out of range).
//   - 403: a fault hook, and the node runs without --enable-fault-hooks.
//   - 404: GET of an absent key ("key not found"), or no such route.
//   - 409: a cas whose key holds another value: MismatchResponse.
//   - 413: a key, value or body over its limit.
//   - 500: the node failed inside: a forward it could not build (nothing
//     changed), a fault hook the transport refused.
//   - 503: no leader, no quorum, or the leader changed: the request was
//     certainly not applied.
//   - 504: timed out, or a forwarded request was lost: the outcome is
//     unknown; a write may still apply.
//
// Every answer that is not a 200 carries ErrorResponse (or, for 409,
// MismatchResponse); the Client returns it as an *Error.
package nodeapi
