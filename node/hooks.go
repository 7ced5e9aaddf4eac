package node

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"chaos/node/nodeapi"
	"chaos/node/transport"
)

// faultState is what the fault hooks have set: a drop list (an in-process
// partition) and per-peer message faults. Both combine into the
// transport's per-peer Faults. The clock's faults live in Server.clock.
type faultState struct {
	mu   sync.Mutex
	drop map[string]bool
	net  map[string]transport.Faults // peer name -> faults; "" for every peer
}

func (s *Server) hookRoutes(mux *http.ServeMux) {
	fs := &faultState{drop: map[string]bool{}, net: map[string]transport.Faults{}}
	hook := func(h func(*faultState, http.ResponseWriter, *http.Request)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if !s.cfg.EnableFaultHooks {
				writeError(w, http.StatusForbidden, "fault hooks are disabled; start the node with --enable-fault-hooks")
				return
			}
			h(fs, w, r)
		}
	}
	mux.HandleFunc(nodeapi.RouteFaults, hook(s.getFaults))
	mux.HandleFunc(nodeapi.RouteSetClock, hook(s.setClock))
	mux.HandleFunc(nodeapi.RouteResetClock, hook(s.resetClock))
	mux.HandleFunc(nodeapi.RouteSetPartition, hook(s.setPartition))
	mux.HandleFunc(nodeapi.RouteHealPartition, hook(s.healPartition))
	mux.HandleFunc(nodeapi.RouteSetNet, hook(s.setNet))
	mux.HandleFunc(nodeapi.RouteClearNet, hook(s.clearNet))
	mux.HandleFunc(nodeapi.RouteSetAppend, hook(s.setAppend))
	mux.HandleFunc(nodeapi.RouteResetAppend, hook(s.resetAppend))
	mux.HandleFunc(nodeapi.RouteClearFaults, hook(s.clearAll))
}

func decodeHookBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "malformed JSON body: "+err.Error())
		return false
	}
	return true
}

func (s *Server) getFaults(fs *faultState, w http.ResponseWriter, _ *http.Request) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	drop := make([]string, 0, len(fs.drop))
	for p := range fs.drop {
		drop = append(drop, p)
	}
	slices.Sort(drop)
	rate, offset := s.clock.state()
	writeJSON(w, http.StatusOK, nodeapi.Faults{Drop: drop, Net: fs.net,
		Clock:  nodeapi.ClockFault{OffsetMS: offset.Milliseconds(), Rate: rate},
		Append: s.appendLimitNow()})
}

// setClock bumps the node's clock by offset_ms and sets its rate (when > 0).
func (s *Server) setClock(fs *faultState, w http.ResponseWriter, r *http.Request) {
	var c nodeapi.ClockFault
	if !decodeHookBody(w, r, &c) {
		return
	}
	if c.Rate < 0 || c.Rate > 100 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("rate %v outside (0, 100]", c.Rate))
		return
	}
	s.clock.set(c.Rate, time.Duration(c.OffsetMS)*time.Millisecond)
	s.log.Warn("clock fault", "offset_ms", c.OffsetMS, "rate", c.Rate)
	s.getFaults(fs, w, r)
}

func (s *Server) resetClock(fs *faultState, w http.ResponseWriter, r *http.Request) {
	s.clock.reset()
	s.getFaults(fs, w, r)
}

// setAppend sets the append limit; the event loop applies it at its next
// tick (within a quarter of a heartbeat interval).
func (s *Server) setAppend(fs *faultState, w http.ResponseWriter, r *http.Request) {
	var a nodeapi.AppendLimit
	if !decodeHookBody(w, r, &a) {
		return
	}
	s.appendLimit.Store(&a)
	s.log.Warn("append limit", "max_bytes", a.MaxBytes, "max_inflight", a.MaxInflight)
	s.getFaults(fs, w, r)
}

// appendLimitNow is the append limit the hook set, zero when none.
func (s *Server) appendLimitNow() nodeapi.AppendLimit {
	if a := s.appendLimit.Load(); a != nil {
		return *a
	}
	return nodeapi.AppendLimit{}
}

func (s *Server) resetAppend(fs *faultState, w http.ResponseWriter, r *http.Request) {
	s.appendLimit.Store(nil)
	s.getFaults(fs, w, r)
}

// setPartition replaces the drop list: messages to and from these peers are
// discarded by the transport.
func (s *Server) setPartition(fs *faultState, w http.ResponseWriter, r *http.Request) {
	var body nodeapi.PartitionRequest
	if !decodeHookBody(w, r, &body) {
		return
	}
	for _, p := range body.Drop {
		if _, ok := s.members.id(p); !ok || p == s.cfg.Name {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("unknown peer %q", p))
			return
		}
	}
	s.updateFaults(fs, w, r, func() {
		clear(fs.drop)
		for _, p := range body.Drop {
			fs.drop[p] = true
		}
	})
}

func (s *Server) healPartition(fs *faultState, w http.ResponseWriter, r *http.Request) {
	s.updateFaults(fs, w, r, func() { clear(fs.drop) })
}

// setNet sets message faults toward some or all peers.
func (s *Server) setNet(fs *faultState, w http.ResponseWriter, r *http.Request) {
	var b nodeapi.NetFaults
	if !decodeHookBody(w, r, &b) {
		return
	}
	f := transport.Faults{Loss: b.Loss, Duplicate: b.Duplicate, Reorder: b.Reorder,
		Delay: time.Duration(b.DelayMS * float64(time.Millisecond)), Jitter: time.Duration(b.JitterMS * float64(time.Millisecond))}
	if err := f.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	targets := b.Peers
	if len(targets) == 0 {
		targets = []string{""}
	}
	for _, p := range targets {
		if _, ok := s.members.id(p); p != "" && (!ok || p == s.cfg.Name) {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("unknown peer %q", p))
			return
		}
	}
	s.updateFaults(fs, w, r, func() {
		for _, p := range targets {
			fs.net[p] = f
		}
	})
}

func (s *Server) clearNet(fs *faultState, w http.ResponseWriter, r *http.Request) {
	s.updateFaults(fs, w, r, func() { clear(fs.net) })
}

// clearAll removes every fault the hooks can set.
func (s *Server) clearAll(fs *faultState, w http.ResponseWriter, r *http.Request) {
	s.clock.reset()
	s.appendLimit.Store(nil)
	s.updateFaults(fs, w, r, func() {
		clear(fs.net)
		clear(fs.drop)
	})
}

// updateFaults changes the fault state with change, pushes it into the
// transport and answers with the new state.
func (s *Server) updateFaults(fs *faultState, w http.ResponseWriter, r *http.Request, change func()) {
	fs.mu.Lock()
	change()
	err := s.applyFaults(fs)
	fs.mu.Unlock()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	s.getFaults(fs, w, r)
}

// applyFaults pushes the combined faults of every peer into the transport.
// Called with fs.mu held.
func (s *Server) applyFaults(fs *faultState) error {
	s.trans.ClearFaults()
	for _, m := range s.members.view(*s.conf.Load()) { // the members in force
		name, id := m.Name, m.ID
		if name == s.cfg.Name {
			continue
		}
		f, ok := fs.net[name]
		if !ok {
			f = fs.net[""]
		}
		f.Drop = fs.drop[name]
		if f == (transport.Faults{}) {
			continue
		}
		if err := s.trans.SetFaults(id, f); err != nil {
			return err
		}
	}
	s.log.Warn("network faults changed", "drop", len(fs.drop), "net", len(fs.net))
	return nil
}
