package hostcmd

// The probes that ask a host, changing nothing, what it offers a fault
// family: each prints what its caller in nemesis parses.

// NetProbeScript tests each capability. The kernel features are tried in a
// network namespace of their own (unshare --net) that dies with the
// command, so the probe leaves nothing behind, even when it is killed half
// way; only the iptables check runs in the host's namespace, and it only
// lists rules. Each line reads "<name> ok" or "<name> no <why>".
const NetProbeScript = `p() { n=$1; shift; o=$("$@" 2>&1); s=$?; ` +
	`if [ $s -eq 0 ]; then echo "$n ok"; else echo "$n no exit $s: $(printf '%s' "$o" | head -n 1)"; fi; }; ` +
	`p iptables iptables -w -S INPUT; ` +
	`p statistic unshare --net iptables -w -A INPUT -m statistic --mode random --probability 0.5 -j DROP; ` +
	`p htb unshare --net tc qdisc add dev lo root handle 1: htb; ` +
	`p u32 unshare --net sh -c 'tc qdisc add dev lo root handle 1: htb && ` +
	`tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip dst 127.0.0.1/32 flowid 1:1'; ` +
	`p netem unshare --net tc qdisc add dev lo root handle 1: netem delay 1ms; ` +
	`p redirect unshare --net iptables -w -t nat -A OUTPUT -p tcp -m mark ! --mark 1 -j REDIRECT --to-ports 9; ` +
	`p tee unshare --net iptables -w -t mangle -A POSTROUTING -j TEE --gateway 127.0.0.1; ` +
	`p ss ss -tn 'fwmark = 0x1/0xffffffff'`

// StorageProbeScript says on one line what keeps the host from serving a
// fault file system, or "ok": the FUSE device, the kernel's FUSE file
// system, root (the mount is made directly, without fusermount).
const StorageProbeScript = `if [ ! -c /dev/fuse ]; then echo "/dev/fuse is missing (load the fuse module, or give the container the device)"; ` +
	`elif ! grep -qw fuse /proc/filesystems; then echo "the kernel has no FUSE file system (modprobe fuse)"; ` +
	`elif [ "$(id -u)" != 0 ]; then echo "not root: the fault file system is mounted directly, which needs root"; ` +
	`else echo ok; fi`

// VDSOProbeCmd prints the host's architecture, Yama's ptrace scope
// ("none" without Yama), the user's id and its effective capabilities.
const VDSOProbeCmd = `uname -m; cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo none; id -u; sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status`
