package db

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
)

// Leader implements LeaderFinder: the leader named by the node with the
// highest term among those whose /status answers.
func (c *ChaosNode) Leader(ctx context.Context, nodes []Node) (string, error) {
	client := &http.Client{Timeout: 500 * time.Millisecond}
	var best struct {
		Term   uint64 `json:"term"`
		Leader string `json:"leader"`
	}
	for _, n := range nodes {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.ClientAddr(n)+"/status", nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			continue
		}
		var st struct {
			Term   uint64 `json:"term"`
			Leader string `json:"leader"`
		}
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err == nil && st.Leader != "" && st.Term >= best.Term {
			best = st
		}
	}
	if best.Leader == "" {
		return "", errors.New("no node reports a leader")
	}
	return strings.TrimSpace(best.Leader), nil
}

// HookAddr implements FaultHooker: nodes answer the hooks on their client
// address when started with them.
func (c *ChaosNode) HookAddr(n Node) (string, bool) {
	if !c.FaultHooks {
		return "", false
	}
	return c.ClientAddr(n), true
}
