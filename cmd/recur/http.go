package main

import (
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/connlimit"
)

// recur's HTTP servers (the REST API, --metrics-addr, --pprof-addr, and in
// `recur dev` the Temporal Web UI and, for its caps, the frontend) share
// timeouts and connection caps: a client that is slow or silent is cut
// off within seconds, and one that opens connections by the thousand gets
// its share and no more, so that the process keeps file descriptors for
// other clients and, in `recur dev`, for the embedded Temporal server.
const (
	// readHeaderTimeout bounds a request's head. It bounds the TLS
	// handshake before it too: net/http gives the handshake the shortest
	// of a server's timeouts.
	readHeaderTimeout = 10 * time.Second
	// readTimeout bounds a whole request, from its first byte: a body is
	// at most api.MaxJobSize (16 KiB), which takes a client far less than
	// the 5 s it has past the head.
	readTimeout = readHeaderTimeout + 5*time.Second
	// writeTimeout runs from the end of a request's head to the end of its
	// answer: the body, the handler's calls to Temporal, an OIDC issuer's
	// keys fetched on the way (10 s at most), and the answer's bytes.
	writeTimeout = readTimeout + api.RequestTimeout + 15*time.Second
	// idleTimeout closes a keep-alive connection without a request. It is
	// longer than the 60 s a load balancer such as AWS's keeps an idle
	// connection by default, so that the balancer closes it first and
	// never sends a request on a connection recur is closing.
	idleTimeout = 2 * time.Minute
)

// Default connection caps of each HTTP listener. A client (a browser, the
// CLI, a load test at -concurrency 16) holds a few connections; 256 from
// one address is far past any of them. Each connection takes a file
// descriptor: 4096 in all leave the rest of ulimit -n (which Go raises to
// its hard limit at start) to the process, where 20,000 slow requests once
// took them all (bench/history/2026-11-22-slow-clients.md).
const (
	defaultMaxConnections          = 4096
	defaultMaxConnectionsPerClient = 256
)

// connFlags are the flags of the HTTP listeners' connection caps.
type connFlags struct {
	total, perClient int
}

func (f *connFlags) register(fs *flag.FlagSet, e *envDefaults) {
	fs.IntVar(&f.total, "max-connections", e.int("RECUR_MAX_CONNECTIONS", defaultMaxConnections),
		"connections each listener (the REST API, --metrics-addr, --pprof-addr; in recur dev the Temporal frontend and Web UI too) holds at once, 0 for no cap; more are closed at once; each takes a file descriptor (three on the Temporal frontend), so keep it well under ulimit -n (RECUR_MAX_CONNECTIONS)")
	fs.IntVar(&f.perClient, "max-connections-per-client", e.int("RECUR_MAX_CONNECTIONS_PER_CLIENT", defaultMaxConnectionsPerClient),
		"connections one client address (IPv6: one /64) holds at once on each listener, 0 for no cap; behind a load balancer or proxy all clients have its address: set 0 and let it limit them (RECUR_MAX_CONNECTIONS_PER_CLIENT)")
}

// limits checks the flags and returns the caps they set.
func (f *connFlags) limits() (connlimit.Limits, error) {
	if f.total < 0 || f.perClient < 0 {
		return connlimit.Limits{}, errors.New("--max-connections and --max-connections-per-client must be 0 (no cap) or more")
	}
	return connlimit.Limits{Total: f.total, PerClient: f.perClient}, nil
}

// httpServer returns a server of h with recur's timeouts; write is its
// WriteTimeout, 0 for none.
func httpServer(h http.Handler, write time.Duration) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      write,
		IdleTimeout:       idleTimeout,
	}
}

// limitListener returns ln with the caps of limits; name says which
// listener in the log of the connections refused.
func limitListener(ln net.Listener, limits connlimit.Limits, name string, log *slog.Logger) net.Listener {
	return connlimit.New(ln, limits, log.With("listener", name))
}
