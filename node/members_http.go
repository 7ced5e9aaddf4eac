package node

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"chaos/node/nodeapi"
	"chaos/raft"
)

func (s *Server) memberRoutes(mux *http.ServeMux) {
	mux.HandleFunc(nodeapi.RouteMembers, s.handleMembers)
	mux.HandleFunc(nodeapi.RouteAddMember, s.handleAddMember)
	mux.HandleFunc(nodeapi.RoutePromoteMember, s.memberChange(raft.PromoteVoter))
	mux.HandleFunc(nodeapi.RouteRemoveMember, s.memberChange(raft.RemoveNode))
}

func (s *Server) handleMembers(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.membersNow())
}

// membersNow is the configuration in force as of the last Ready.
func (s *Server) membersNow() nodeapi.MembersResponse {
	cs := *s.conf.Load()
	return nodeapi.MembersResponse{Members: s.members.view(cs), Leader: s.Status().Leader, Former: s.members.former(cs)}
}

func (s *Server) handleAddMember(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeError(w, http.StatusBadRequest, "reading body: "+err.Error())
		return
	}
	var m nodeapi.Member
	if err := decodeAddMember(raw, &m); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	req := &confRequest{change: raft.ConfChange{Type: raft.AddLearner}, add: &m}
	if s.changeMembers(w, r, raw, req) {
		writeJSON(w, http.StatusOK, nodeapi.AddMemberResponse{Member: nodeapi.Member{ID: m.ID, Name: m.Name,
			Peer: m.Peer, Client: m.Client, Role: nodeapi.RoleLearner}, MembersResponse: s.membersNow()})
	}
}

// decodeAddMember decodes and checks POST /members's body into m.
func decodeAddMember(raw []byte, m *nodeapi.Member) error {
	var b nodeapi.AddMemberRequest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return fmt.Errorf("malformed JSON body: %v (want {\"name\":..., \"peer\":\"host:port\", \"client\":\"host:port\"})", err)
	}
	if b.Name == "" || strings.ContainsAny(b.Name, ", =\t\n") {
		return fmt.Errorf("member name %q: want a non-empty name without commas, spaces or '='", b.Name)
	}
	for _, f := range []struct{ field, addr string }{{"peer", b.Peer}, {"client", b.Client}} {
		if _, _, err := net.SplitHostPort(f.addr); err != nil {
			return fmt.Errorf("%s address %q: %v (want host:port)", f.field, f.addr, err)
		}
	}
	*m = nodeapi.Member{Name: b.Name, Peer: b.Peer, Client: b.Client}
	return nil
}

// memberChange handles a promote or a remove of member {id}.
func (s *Server) memberChange(typ raft.ConfChangeType) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
		if err != nil || id == 0 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("member id %q: want a positive integer (see GET /members)", r.PathValue("id")))
			return
		}
		if s.changeMembers(w, r, nil, &confRequest{change: raft.ConfChange{Type: typ, NodeID: id}}) {
			writeJSON(w, http.StatusOK, s.membersNow())
		}
	}
}

// changeMembers has the leader make a membership change: here if this node
// leads (ok once the change applied), else by forwarding the request once
// (the leader's answer is copied back, and ok is false).
func (s *Server) changeMembers(w http.ResponseWriter, r *http.Request, raw []byte, req *confRequest) (ok bool) {
	if st := s.Status(); st.Role != "leader" {
		if st.Leader == "" || r.Header.Get(forwardedHeader) != "" {
			writeError(w, http.StatusServiceUnavailable, errNoLeader.Error())
		} else {
			s.forward(w, r, raw, st.Leader)
		}
		return false
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	req.p = &proposal{done: make(chan proposalResult, 1)}
	if _, err := handOver(s, ctx, s.confC, req, req.p.done); err != nil {
		writeFailure(w, err)
		return false
	}
	return true
}
