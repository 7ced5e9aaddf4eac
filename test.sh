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
need ansible ansible-playbook   # ansible/: the playbook run against testbed hosts
need ansible-lint ansible-lint  # ansible/: lint
# The apt module on the hosts needs python3-apt, which ansible does not pull in.
if ! /usr/bin/python3 -c 'import apt' 2>/dev/null; then
	if [ -z "${apt_updated:-}" ]; then apt-get update -qq; apt_updated=1; fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-apt >/dev/null
fi
for dep in ${TEST_DEPS:-}; do
	need "${dep%%:*}" "${dep##*:}"
done

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

echo "== go test"
go test -count=1 -timeout 15m ./...

echo "== go test -race (concurrent packages)"
race_pkgs=$(go list ./... | grep -E '/(node|workload|checker|nemesis|control|db)(/|$)' || true)
if [ -n "$race_pkgs" ]; then
	go test -count=1 -race -timeout 15m $race_pkgs
fi
echo "== all tests passed"
