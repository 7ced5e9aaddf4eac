package runreport

import "chaos/history"

// denseProcesses bounds the process numbers inFlight keeps in a slice:
// clients number their processes from 0, one more per client for each
// operation of unknown outcome, so a history's processes are small
// numbers and a slice indexed by them is cheaper than a map.
const denseProcesses = 1 << 20

// inFlight are the invoke times of the client operations in flight, by
// process: in a slice for processes under denseProcesses, in a map for
// any other. The zero inFlight is empty.
type inFlight struct {
	dense  []int64 // by process: invoke time + 1; 0 when none is in flight
	sparse map[history.Process]int64
}

// invoke records that p invoked an operation at t >= 0.
func (f *inFlight) invoke(p history.Process, t int64) {
	if p >= 0 && p < denseProcesses {
		if int(p) >= len(f.dense) {
			f.dense = append(f.dense, make([]int64, int(p)+1-len(f.dense))...)
		}
		f.dense[p] = t + 1
		return
	}
	if f.sparse == nil {
		f.sparse = map[history.Process]int64{}
	}
	f.sparse[p] = t
}

// complete forgets the operation p has in flight and returns its invoke
// time; false when p has none.
func (f *inFlight) complete(p history.Process) (int64, bool) {
	if p >= 0 && p < denseProcesses {
		if int(p) >= len(f.dense) || f.dense[p] == 0 {
			return 0, false
		}
		t := f.dense[p] - 1
		f.dense[p] = 0
		return t, true
	}
	t, ok := f.sparse[p]
	delete(f.sparse, p)
	return t, ok
}
