// Package hostcmd builds the shell commands faults run on hosts: the
// iptables chains and rules of network partitions, targeted cuts and lossy
// links (Chain, DropCmd), the tc htb and netem qdiscs of degraded links
// (NetemSenderCmds), the fault proxy's REDIRECT rules (ProxyRedirectCmds),
// the TEE rules of duplicated packets (TeeCmd), the system clock's and
// fake clocks' commands (DisableNTPCmd, ResetClockCmd, FakeResetCmd), the
// probes of what a host offers the network, storage and vdso clock
// families (NetProbeScript, StorageProbeScript, VDSOProbeCmd), and the
// checks that keep what a host answers (interface names) out of commands
// unless it is safe. It also runs the network commands on a
// control.Remote, lists what of chaos's is left on a host and heals it.
//
// It knows nothing of clusters or fault families: package nemesis decides
// which node's link to cut or degrade and hands this package addresses,
// chain names and netem arguments. The bytes of every command are part of
// nemesis's golden transcripts (nemesis/testdata).
package hostcmd
