package nemesis

// How a schedule picks the next family: by weight, the targeted ones in
// turns, among those that may start now.

// pickTurn draws the index of the fault to start among those `may`
// allows, and false when it allows none. It draws by every weight (see
// pick), which says which group starts: the faults that take turns (see
// Turns) or the others; then it draws again, by weight, among those of
// that group `may` allows that have not had their turn (all of the group
// again when each has), and marks the one drawn as having had it; once
// every fault of the group has, all of it is back. So each group starts
// as often as its weights say, and its faults each in turn: a minute's
// run covers the families instead of repeating one.
func (s *scheduleRun) pickTurn(may func(int) bool) (int, bool) {
	i, ok := s.pick(may)
	if !ok {
		return i, false
	}
	group := s.takesTurns(i)
	inGroup := func(j int) bool { return s.takesTurns(j) == group }
	waiting := func(j int) bool { return may(j) && inGroup(j) && !s.taken[j] }
	if !s.anyOf(waiting) {
		s.clearTurns(inGroup)
	}
	i, _ = s.pick(waiting)
	s.taken[i] = true
	if !s.anyOf(func(j int) bool { return inGroup(j) && !s.taken[j] }) {
		s.clearTurns(inGroup)
	}
	return i, true
}

// takesTurns reports whether fault i is of the group that takes turns.
func (s *Schedule) takesTurns(i int) bool { return s.Turns != nil && s.Turns[i] }

// clearTurns gives the faults of a group their turn back.
func (s *scheduleRun) clearTurns(inGroup func(int) bool) {
	for j := range s.taken {
		if inGroup(j) {
			s.taken[j] = false
		}
	}
}

// pick draws the index of a fault among those `may` allows, by Weights
// (all alike without them); false when `may` allows none. A draw over no
// fault draws nothing from Rng.
func (s *Schedule) pick(may func(int) bool) (int, bool) {
	weight := func(i int) int {
		switch {
		case !may(i):
			return 0
		case s.Weights == nil:
			return 1
		}
		return s.Weights[i]
	}
	total := 0
	for i := range s.Faults {
		total += weight(i)
	}
	if total == 0 {
		return 0, false
	}
	r := s.Rng.IntN(total)
	for i := range s.Faults {
		if r < weight(i) {
			return i, true
		}
		r -= weight(i)
	}
	return len(s.Faults) - 1, true // unreachable: r < total
}

// anyOf reports whether `may` allows some fault, drawing nothing.
func (s *Schedule) anyOf(may func(int) bool) bool {
	for i := range s.Faults {
		if may(i) {
			return true
		}
	}
	return false
}
