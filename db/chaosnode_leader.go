package db

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"chaos/node/nodeapi"
)

// Leader implements LeaderFinder: the leader named by the node with the
// highest term among those whose /status answers.
func (c *ChaosNode) Leader(ctx context.Context, nodes []Node) (string, error) {
	client := &http.Client{Timeout: 500 * time.Millisecond}
	var best nodeapi.Status
	for _, n := range nodes {
		st, err := nodeapi.NewClient(c.ClientAddr(n), client).Status(ctx)
		if err == nil && st.Leader != "" && st.Term >= best.Term {
			best = st
		}
	}
	if best.Leader == "" {
		return "", errors.New("no node reports a leader")
	}
	return strings.TrimSpace(best.Leader), nil
}
