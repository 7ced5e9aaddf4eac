package raftcheck

import (
	"fmt"
	"time"
)

// Findings says what the raft checker found, for a person.
func (d *RaftDetails) Findings() []string {
	lines := []string{fmt.Sprintf("%d events from %d nodes, %d terms with a leader", d.Events, len(d.Nodes), len(d.Leaders))}
	for _, v := range d.Violations {
		lines = append(lines, fmt.Sprintf("%s: %s (%s, %s)", v.Kind, v.Text, v.Node, v.Time.Format(time.RFC3339Nano)))
	}
	if d.Omitted > 0 {
		lines = append(lines, fmt.Sprintf("and %d more violations (see results.json)", d.Omitted))
	}
	for _, v := range d.Damaged {
		lines = append(lines, fmt.Sprintf("not a violation, a fault's: %s, after cutting a damaged WAL tail off (%s)", v.Text, v.Node))
	}
	if m := d.Membership; m != nil {
		lines = append(lines, m.summary()...)
	}
	if d.Reason != "" {
		lines = append(lines, d.Reason)
	}
	if n := len(d.Skipped); n > 0 {
		lines = append(lines, fmt.Sprintf("%d event-log lines skipped, first %s", n, d.Skipped[0]))
	}
	return lines
}

// Findings says what the availability checker found, for a person.
func (d *AvailabilityDetails) Findings() []string {
	lines := []string{fmt.Sprintf("no leader for %.1f s in %d windows; %d client-visible unavailability windows",
		d.LeaderlessTotal.Seconds(), len(d.Leaderless), len(d.Unavailable))}
	if h := d.FinalHeal; h != nil && h.Recovered {
		bound := fmt.Sprintf("bound %.0f s", d.RecoveryBound.Seconds())
		if d.RecoveryAdvisory {
			bound = fmt.Sprintf("advisory bound %.0f s: the system states none", d.RecoveryBound.Seconds())
		}
		lines = append(lines, fmt.Sprintf("recovered %.2f s after the final heal (%s)", h.After.Seconds(), bound))
	}
	if d.SlowRecovery != "" {
		lines = append(lines, "slow recovery, not a failure: "+d.SlowRecovery)
	}
	if l := d.Liveness; l != nil {
		lines = append(lines, l.summary())
		if l.Reason != "" {
			lines = append(lines, "stuck-leaderless rule not applied: "+l.Reason)
		}
	}
	if d.Reason != "" {
		lines = append(lines, d.Reason)
	}
	return lines
}

// summary states the liveness rules and the largest figures they saw.
func (l *LivenessDetails) summary() string {
	stuck := "not measured"
	if l.LoadStart != nil {
		stuck = fmt.Sprintf("%.1f s", l.LongestStuck.Seconds())
	}
	return fmt.Sprintf("liveness: longest run of leaderless terms %d (livelock rule: %v); longest leaderless stretch with a majority up and connected %s (bound %v)",
		l.LongestLeaderlessRun, LivelockRule{l.LivelockTerms, l.LivelockWindow}, stuck, l.StuckBound)
}

// summary says what the membership checks saw: the configurations, the
// leaders' majorities checked, and the first vote of a non-voter.
func (m *MembershipDetails) summary() []string {
	n := len(m.Configurations) + m.OmittedConfigurations
	lines := []string{fmt.Sprintf("membership: %d configurations", n)}
	if n > 0 && m.OmittedConfigurations == 0 {
		lines[0] += ", the last " + m.Configurations[n-1].String()
	}
	lines[0] += fmt.Sprintf("; leaders' majorities of voters checked in %d terms, %d undecided", m.QuorumsChecked, m.QuorumsUndecided)
	if m.NonVoterVotesCount > 0 {
		lines = append(lines, fmt.Sprintf("%d votes by non-voters (not counted, not violations), first: %s",
			m.NonVoterVotesCount, m.NonVoterVotes[0].Text))
	}
	return lines
}
