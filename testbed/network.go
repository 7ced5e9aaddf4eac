package testbed

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
)

// bridgeCommands make the bridge and give it the subnet's first address, so
// the machine is on the hosts' network.
func bridgeCommands(st State) [][]string {
	return [][]string{
		{"ip", "link", "add", st.Bridge, "type", "bridge"},
		{"ip", "addr", "add", st.BridgeAddr, "dev", st.Bridge},
		{"ip", "link", "set", st.Bridge, "up"},
	}
}

// hostNetworkCommands make host h's network namespace with loopback up and
// an eth0 on the bridge, holding h's address, with a default route through
// the bridge (the machine does not forward, so that reaches the machine only).
func hostNetworkCommands(st State, h Host) ([][]string, error) {
	cidr, err := h.cidr(st.Subnet)
	if err != nil {
		return nil, err
	}
	gateway, _, _ := strings.Cut(st.BridgeAddr, "/")
	return [][]string{
		{"ip", "netns", "add", h.Netns},
		{"ip", "link", "add", h.Veth, "type", "veth", "peer", "name", "eth0", "netns", h.Netns},
		{"ip", "link", "set", h.Veth, "master", st.Bridge},
		{"ip", "link", "set", h.Veth, "up"},
		{"ip", "-n", h.Netns, "link", "set", "lo", "up"},
		{"ip", "-n", h.Netns, "addr", "add", cidr, "dev", "eth0"},
		{"ip", "-n", h.Netns, "link", "set", "eth0", "up"},
		{"ip", "-n", h.Netns, "route", "add", "default", "via", gateway},
	}, nil
}

// runAll runs commands in order and stops at the first that fails.
func runAll(ctx context.Context, sys System, commands [][]string) error {
	for _, argv := range commands {
		if _, err := sys.Run(ctx, argv...); err != nil {
			return err
		}
	}
	return nil
}

// checkSubnetFree fails with ErrConfig when a route of the machine overlaps
// subnet: another testbed, a VPN or a LAN uses those addresses.
func checkSubnetFree(ctx context.Context, sys System, subnet netip.Prefix) error {
	out, err := sys.Run(ctx, "ip", "-j", "-4", "route", "show")
	if err != nil {
		return fmt.Errorf("list routes: %w", err)
	}
	var routes []struct {
		Dst string `json:"dst"`
		Dev string `json:"dev"`
	}
	if err := decodeJSONList(out, &routes); err != nil {
		return fmt.Errorf("list routes: %w", err)
	}
	for _, r := range routes {
		dst, ok := routePrefix(r.Dst)
		if ok && dst.Overlaps(subnet) {
			return configErrorf("--subnet %s overlaps the route to %s on %s: choose another --subnet", subnet, r.Dst, r.Dev)
		}
	}
	return nil
}

// routePrefix parses a route's destination; false for "default".
func routePrefix(dst string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(dst); err == nil {
		return p, true
	}
	if a, err := netip.ParseAddr(dst); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

// firewallRule is the rule that lets traffic between two hosts cross the
// bridge.
func firewallRule(bridge string) []string {
	return []string{"FORWARD", "-i", bridge, "-o", bridge, "-j", "ACCEPT"}
}

// links returns the names of the machine's network interfaces.
func links(ctx context.Context, sys System) (map[string]bool, error) {
	out, err := sys.Run(ctx, "ip", "-j", "link", "show")
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	var list []struct {
		Name string `json:"ifname"`
	}
	if err := decodeJSONList(out, &list); err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	names := make(map[string]bool, len(list))
	for _, l := range list {
		names[l.Name] = true
	}
	return names, nil
}

// netnses returns the names of the machine's named network namespaces.
func netnses(ctx context.Context, sys System) (map[string]bool, error) {
	out, err := sys.Run(ctx, "ip", "-j", "netns", "list")
	if err != nil {
		return nil, fmt.Errorf("list network namespaces: %w", err)
	}
	var list []struct {
		Name string `json:"name"`
	}
	if err := decodeJSONList(out, &list); err != nil {
		return nil, fmt.Errorf("list network namespaces: %w", err)
	}
	names := make(map[string]bool, len(list))
	for _, n := range list {
		names[n.Name] = true
	}
	return names, nil
}

// decodeJSONList decodes ip's JSON output, which is empty rather than []
// for an empty list in some versions.
func decodeJSONList(out string, v any) error {
	if strings.TrimSpace(out) == "" {
		return nil
	}
	return json.Unmarshal([]byte(out), v)
}
