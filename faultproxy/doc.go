// Package faultproxy is the transparent TCP proxy that degrades a
// cluster's links where the kernel cannot (no netem qdisc): iptables
// REDIRECTs a node's connections toward its peers to the proxy on the
// node's own host, which reads where each connection was going
// (SO_ORIGINAL_DST), dials that address from the node's own address with a
// socket mark the REDIRECT rules skip (so its connections are not
// redirected again), and forwards both directions, delaying and
// rate-limiting the bytes as the links' Behavior says.
//
// A connection is intercepted on the host that opened it. The bytes its
// opener (address From) sends toward the peer (To) follow the link
// From->To; the bytes coming back follow the link To->From. The links
// can change while connections live: every chunk read is shaped by the
// links in force when it arrived.
//
// Shaping keeps a stream's order, as TCP must (see Shaper): a chunk is
// released at its arrival plus the delay and a jitter, or when the chunk
// before it was, whichever is later; a token bucket caps the bandwidth.
// What a byte stream cannot express is not done here: loss, duplication,
// reordering and corruption of packets belong to the packet filter or
// the kernel's qdiscs.
//
// The proxy is run by `chaos fault-proxy serve` on each host and driven
// through a control socket (see Handler and SetLinks) by `chaos
// fault-proxy set`, which the nemesis runs there.
//
// Shopify/toxiproxy's toxics were weighed for the shaping and left out:
// they can be driven without toxiproxy's server, but they read the wall
// clock and a global random source (so they cannot be tested
// deterministically), their jitter is ± rather than the [0, jitter) of
// chaos's packet faults, their bandwidth is in whole KB/s, and a change
// of a live connection's toxic takes toxiproxy's interrupt protocol. The
// token bucket is golang.org/x/time/rate's, driven with explicit times.
package faultproxy
