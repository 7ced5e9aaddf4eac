package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"chaos/storeweb"
)

// serveOptions are the flags of `chaos serve`.
type serveOptions struct {
	store, addr string
}

// shutdownGrace bounds how long serve waits, after SIGINT or SIGTERM, for
// requests in flight (a zip download, say) before it closes them.
const shutdownGrace = 5 * time.Second

func newServeCmd() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Web UI over the store: the runs, each run's report and files, the campaigns",
		Long: `serve shows the store in a browser: the runs, newest first, with their
verdict, op counts, duration and faults, filtered by verdict and name; each
run's report.html and files, and the run directory as a .zip; the campaigns of
chaos test-all with their tables, linking to their runs. A run whose
results.json is missing or corrupt is listed as broken, with the reason.

Every page reads the store afresh. Nothing outside the store is served: no
".." and no symlink leading out of it. Every response says nosniff and has a
Content-Security-Policy that loads nothing and runs no script but a page's
own; a run file that is not text, JSON, report.html or a visualization is a
download. It serves until SIGINT or SIGTERM.

Exit status: 0 stopped by SIGINT or SIGTERM; 254 a store that does not exist or
a bad --addr; 255 the address cannot be listened on.`,
		Example: `  chaos serve
  chaos serve --store /tmp/store --addr 127.0.0.1:9000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.store, "store", "./store", "the store to serve (what chaos run --store wrote)")
	f.StringVar(&o.addr, "addr", "127.0.0.1:8080", "host:port to listen on (port 0: any free port)")
	return cmd
}

// runServe serves the store until the command's context ends or SIGINT or
// SIGTERM comes, then shuts the server down.
func runServe(cmd *cobra.Command, o *serveOptions) error {
	store, err := storeweb.Open(o.store)
	var missing *storeweb.NoStoreError
	if errors.As(err, &missing) {
		return usageErrorf("serve: %v; give --store the directory chaos run --store wrote", missing)
	}
	if err != nil {
		return setupError(fmt.Errorf("serve: %w", err))
	}
	defer store.Close()
	if _, _, err := net.SplitHostPort(o.addr); err != nil {
		return usageErrorf("serve: --addr %q: %v; give host:port, such as 127.0.0.1:8080", o.addr, err)
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return setupError(fmt.Errorf("serve: %w", err))
	}
	srv := &http.Server{Handler: storeweb.NewHandler(store), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(cmd.OutOrStdout(), "serving %s at http://%s/ (Ctrl-C to stop)\n", store.Dir(), ln.Addr())

	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return setupError(fmt.Errorf("serve: %w", err))
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close()
	}
	<-served
	return nil
}
