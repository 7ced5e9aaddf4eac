package nemesis

// How a schedule picks the next family: by weight, the targeted ones in
// turns, among those that may start now.

// pickTurn draws the index of the fault to start among those `may`
// allows, and false when it allows none. It draws by every weight (see
// pick), which says whether a fault that takes turns starts; if one does,
// it is drawn again, by weight, among those `may` allows that have not had
// their turn (all of them again when each has), and marked as having had
// it; once every fault that takes turns has, all are back. So the faults
// that take turns start as often as their weights say, each in turn.
func (s *scheduleRun) pickTurn(may func(int) bool) (int, bool) {
	i, ok := s.pick(may)
	if !ok || s.Turns == nil || !s.Turns[i] {
		return i, ok
	}
	waiting := func(j int) bool { return may(j) && s.Turns[j] && !s.taken[j] }
	if !s.anyOf(waiting) {
		clear(s.taken)
	}
	i, _ = s.pick(waiting)
	s.taken[i] = true
	for j, turns := range s.Turns {
		if turns && !s.taken[j] {
			return i, true
		}
	}
	clear(s.taken)
	return i, true
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
