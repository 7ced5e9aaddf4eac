#!/usr/bin/env bash
# The whole test suite: formatting, vet, unit, integration and end-to-end tests.
# Installs what the tests need with apt-get when it is missing (run as root).
# CI runs exactly this script (.ci/run).
set -euo pipefail
cd "$(dirname "$0")"

# need PACKAGE COMMAND: install the Debian package when COMMAND is missing.
need() {
	local pkg=$1 cmd=$2
	command -v "$cmd" >/dev/null 2>&1 && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "test.sh: $cmd is missing; install it with: sudo apt-get install -y $pkg" >&2
		return 1
	fi
	if [ -z "${apt_updated:-}" ]; then
		apt-get update -qq
		apt_updated=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null
}

# Packages the tests use beyond Go itself; more as PACKAGE:COMMAND in TEST_DEPS.
need etcd-server etcd       # workload's TestEtcdRealServer (etcd 3.4+, v3 JSON gateway)
need iproute2 ip             # testbed: network namespaces, veth, bridge
need openssh-server sshd     # testbed hosts and the control plane's SSH tests
need iptables iptables       # testbed firewall checks and, later, partitions
need sudo sudo               # the control plane's sudo and password tests
need procps pkill            # cleanup of the control plane's test accounts
need python3 python3         # examples/clients: the example client command of described systems
need faketime faketime       # libfaketime: the faketime clock strategy (examples/systems/clockserver.yaml)
need ansible ansible-playbook   # ansible/: the playbook run against testbed hosts
need ansible-lint ansible-lint  # ansible/: lint
need chromium chromium         # runreport: report.html rendered in headless Chromium
need gcc gcc                   # nemesis/vdsoclock: C programs read their clocks through the patch
need musl-tools musl-gcc       # nemesis/vdsoclock: and musl programs, dynamic and static
need default-jdk-headless java # nemesis/vdsoclock: a JVM program does (java runs its one source file)
need docker.io dockerd         # containers as hosts: the Docker remote, testbed up --docker
need busybox-static busybox    # the containers' images: a static busybox, imported offline
# The apt module on the hosts needs python3-apt, which ansible does not pull in.
if ! /usr/bin/python3 -c 'import apt' 2>/dev/null; then
	if [ -z "${apt_updated:-}" ]; then apt-get update -qq; apt_updated=1; fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-apt >/dev/null
fi
for dep in ${TEST_DEPS:-}; do
	need "${dep%%:*}" "${dep##*:}"
done

# The Docker tests need a daemon; start one when none answers (as root). vfs
# needs no kernel storage driver. It is started before any testbed: dockerd
# sets the FORWARD chain's policy to DROP, and a testbed lets its bridge
# through when it comes up.
if ! docker info >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	nohup dockerd --storage-driver vfs >"${TMPDIR:-/tmp}/chaos-dockerd.log" 2>&1 &
	for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
	docker info >/dev/null 2>&1 || { echo "test.sh: dockerd did not start; see ${TMPDIR:-/tmp}/chaos-dockerd.log" >&2; exit 1; }
fi

# Client commands (examples/clients) start python3 once per worker; a
# version manager's shim in front of it (pyenv) costs 0.3 s a start, and
# seconds under load. The tests use Debian's python3 directly.
if [ -x /usr/bin/python3 ]; then
	pybin=$(mktemp -d)
	ln -s /usr/bin/python3 "$pybin/python3"
	export PATH="$pybin:$PATH"
fi

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi

echo "== go vet"
go vet ./...

echo "== go build"
go build -o bin/chaos ./cmd/chaos

# The tests run in three passes, each package's test binary once per pass,
# and every pass runs even when one before it failed.
#  1. Packages without testbed tests, in parallel (go test's default -p,
#     the number of CPUs).
#  2. Packages whose tests bring up a testbed (their tests import
#     chaos/testbed), one package at a time: each starts hosts, sshd and
#     clusters in network namespaces, and two at once starve each other of
#     CPU on a small machine.
#  3. The race detector on the packages with concurrent code, in parallel,
#     all their tests but the testbed end-to-end ones, which pass 2 ran and
#     which turn themselves off with CHAOS_TESTBED_E2E=skip (see
#     testbed/bedtest).
failed=()
# pass NAME COMMAND...: run one pass, say how long it took, note a failure.
pass() {
	local name=$1 start=$SECONDS
	shift
	echo "== $name"
	if "$@"; then
		echo "== $name: passed in $((SECONDS - start))s"
	else
		echo "== $name: FAILED after $((SECONDS - start))s"
		failed+=("$name")
	fi
}

all_pkgs=$(go list ./...)
testbed_pkgs=$(go list -f '{{.ImportPath}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}' ./... |
	awk '{ for (i = 2; i <= NF; i++) if ($i == "chaos/testbed" || $i == "chaos/testbed/bedtest") { print $1; break } }')
other_pkgs=$(grep -vxF -f <(echo "$testbed_pkgs") <<<"$all_pkgs" || true)
race_pkgs=$(grep -E '/(node|eventlog|workload|checker|nemesis|control|db|faultfs|faultproxy)(/|$)' <<<"$all_pkgs" || true)

# Files tests leave for a person to look at (the report's screenshot), one
# directory per run of this script; listed at the end.
export CHAOS_ARTIFACTS=${CHAOS_ARTIFACTS:-${TMPDIR:-/tmp}/chaos-artifacts/$(date -u +%Y%m%dT%H%M%SZ)}

[ -z "$other_pkgs" ] || pass "go test (packages without testbed tests)" \
	go test -count=1 -timeout 15m $other_pkgs
[ -z "$testbed_pkgs" ] || pass "go test -p 1 (packages with testbed tests)" \
	go test -count=1 -p 1 -timeout 40m $testbed_pkgs
[ -z "$race_pkgs" ] || pass "go test -race (concurrent packages, no testbed tests)" \
	env CHAOS_TESTBED_E2E=skip go test -count=1 -race -timeout 15m $race_pkgs

if [ -d "$CHAOS_ARTIFACTS" ]; then
	echo "== test artifacts in $CHAOS_ARTIFACTS:"
	find "$CHAOS_ARTIFACTS" -type f | sort
fi

if [ ${#failed[@]} -gt 0 ]; then
	printf '== FAILED: %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "== all tests passed"
