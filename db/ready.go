package db

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// waitHTTP polls url until it answers 200 (and, when ok is set, ok accepts
// the body) or ctx ends. The last failure is in the error.
func waitHTTP(ctx context.Context, url string, ok func(body []byte) bool) error {
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		last = probe(ctx, client, url, ok)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last: %v)", url, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// upTimeout bounds one Up check, whatever ctx allows.
const upTimeout = time.Second

// probeOnce checks url once, within upTimeout.
func probeOnce(ctx context.Context, url string, ok func([]byte) bool) error {
	return probe(ctx, &http.Client{Timeout: upTimeout}, url, ok)
}

func probe(ctx context.Context, client *http.Client, url string, ok func([]byte) bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if ok != nil && !ok(body) {
		return fmt.Errorf("not healthy: %s", strings.TrimSpace(string(body)))
	}
	return nil
}
