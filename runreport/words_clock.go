package runreport

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"chaos/history/faultrec"
)

// describeClock words a clock fault: "clock jumped: n2 +500 ms",
// "n1, n2 clocks strobed ±200 ms every 10 ms, 50 times", "n1 clock at 2× speed".
func describeClock(v faultrec.Clock, flt Fault) Fault {
	switch {
	case v.Kind == "strobe":
		flt.Targets = fmt.Sprintf("%s %s strobed ±%d ms every %d ms, %d times", nodeList(v.Nodes), clocks(v.Nodes), v.DeltaMS, v.PeriodMS, v.Count)
	case len(v.OffsetsMS) > 0:
		var parts []string
		for _, n := range slices.Sorted(maps.Keys(v.OffsetsMS)) {
			parts = append(parts, fmt.Sprintf("%s %+d ms", n, v.OffsetsMS[n]))
		}
		flt.Targets = clocks(v.Nodes) + " jumped: " + strings.Join(parts, ", ")
	case len(v.Rates) > 0:
		var parts []string
		for _, n := range slices.Sorted(maps.Keys(v.Rates)) {
			parts = append(parts, fmt.Sprintf("%s at %g× speed", n, v.Rates[n]))
		}
		flt.Targets = clocks(v.Nodes) + " skewed: " + strings.Join(parts, ", ")
	default:
		flt.Targets = nodeList(v.Nodes) + " " + clocks(v.Nodes) + " changed"
	}
	flt.Mechanism, flt.Effect = v.Mechanism, v.Effect
	if len(v.Unchanged) > 0 {
		flt.Effect += "; unchanged: " + nodeList(v.Unchanged)
	}
	return flt
}

// clocks is "clock" for one node, "clocks" for more.
func clocks(nodes []string) string {
	if len(nodes) == 1 {
		return "clock"
	}
	return "clocks"
}

// describePacket words a packet fault: the degraded links, then what
// happens on them: "n1 → n2, n3: 10% loss, 20–80 ms delay".
func describePacket(v faultrec.Packet, flt Fault) Fault {
	var links []string
	for _, s := range slices.Sorted(maps.Keys(v.Targets)) {
		links = append(links, s+" → "+nodeList(sorted(v.Targets[s])))
	}
	flt.Targets = strings.Join(links, "; ") + ": " + behaviorWords(v.Behavior)
	var mechs []string
	for _, part := range slices.Sorted(maps.Keys(v.Mechanism)) {
		mechs = append(mechs, part+" by "+v.Mechanism[part])
	}
	flt.Mechanism = strings.Join(mechs, ", ")
	if len(v.Unavailable) > 0 {
		flt.Effect = "not performed: " + strings.Join(v.Unavailable, ", ")
	}
	return flt
}

// behaviorWords says what a packet fault does to each packet.
func behaviorWords(b faultrec.PacketBehavior) string {
	var parts []string
	if b.Loss > 0 {
		parts = append(parts, percent(b.Loss)+" loss")
	}
	switch {
	case b.JitterMS > 0:
		parts = append(parts, fmt.Sprintf("%g–%g ms delay", b.DelayMS, b.DelayMS+b.JitterMS))
	case b.DelayMS > 0:
		parts = append(parts, fmt.Sprintf("%g ms delay", b.DelayMS))
	}
	for _, p := range []struct {
		p    float64
		what string
	}{{b.Reorder, "reordered"}, {b.Duplicate, "duplicated"}, {b.Corrupt, "corrupted"}} {
		if p.p > 0 {
			parts = append(parts, percent(p.p)+" "+p.what)
		}
	}
	if b.RateKbit > 0 {
		parts = append(parts, fmt.Sprintf("%d kbit/s", b.RateKbit))
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, ", ")
}
