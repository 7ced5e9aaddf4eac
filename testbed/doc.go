// Package testbed makes local hosts for chaos out of Linux namespaces, so a
// campaign can run over SSH on one machine without Docker or VMs.
//
// A testbed lives in a directory D. Up makes hosts n1..nN, each
//
//   - a network namespace whose eth0 is one end of a veth pair, the other end
//     attached to a bridge that holds the subnet's first address, so this
//     machine (where the controller runs) reaches every host and the hosts
//     reach each other; nothing is routed beyond the bridge;
//   - a mount namespace where /opt/chaos, /var/lib/chaos and /tmp are bind
//     mounts of the host's own directories under D/hosts/nK, and /run is a
//     private tmpfs;
//   - a PID namespace whose init is sshd, so killing that one process ends
//     everything that ever ran on the host;
//   - a UTS namespace whose hostname is nK.
//
// Up writes the inventory `chaos run` takes as is: D/nodes (one address per
// line), D/id_ed25519 (the client key, authorized for root on every host) and
// D/known_hosts (every host's key). Before it creates anything it records
// what it is about to create in D/state.json; Down removes exactly what that
// file names, so it also cleans up after an Up that failed or was killed
// half-way. Every name starts with a prefix derived from D (see PrefixFor),
// so two testbeds in different directories never touch each other's objects.
//
// Everything the package does to the machine goes through System, which the
// tests replace with a recording fake.
package testbed
