package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/connlimit"
	"github.com/recurhq/recur/metrics"
)

func TestConnFlagsCapConnections(t *testing.T) {
	t.Setenv("RECUR_MAX_CONNECTIONS_PER_CLIENT", "0")
	var f connFlags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var envs envDefaults
	f.register(fs, &envs)
	require.NoError(t, envs.err())
	require.NoError(t, fs.Parse(nil))
	limits, err := f.limits()
	require.NoError(t, err)
	require.Equal(t, connlimit.Limits{Total: defaultMaxConnections, PerClient: 0}, limits, "RECUR_MAX_CONNECTIONS_PER_CLIENT=0: no cap per client")
	require.NoError(t, fs.Parse([]string{"--max-connections", "100", "--max-connections-per-client", "10"}))
	limits, err = f.limits()
	require.NoError(t, err)
	require.Equal(t, connlimit.Limits{Total: 100, PerClient: 10}, limits)

	for _, args := range [][]string{{"--max-connections", "-1"}, {"--max-connections-per-client", "-5"}} {
		var stderr bytes.Buffer
		require.Equal(t, 2, runDev(context.Background(), append([]string{"--http-addr", "127.0.0.1:0"}, args...), &stderr), "%v", args)
		require.Contains(t, stderr.String(), "must be 0 (no cap) or more", "%v", args)
		stderr.Reset()
		require.Equal(t, 2, runCluster(context.Background(), "worker", roles{worker: true}, append([]string{"--insecure-no-encryption"}, args...), &stderr), "%v", args)
		require.Contains(t, stderr.String(), "must be 0 (no cap) or more", "%v", args)
	}
}

// TestSlowRequestsOnEveryListener serves each of recur's HTTP listeners
// as its command does (the REST API over TLS, --metrics-addr and
// --pprof-addr) and sends it a request whose body never arrives: each is
// answered and closed. A TLS client that never says hello is closed too.
func TestSlowRequestsOnEveryListener(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	limits := connlimit.Limits{Total: defaultMaxConnections, PerClient: defaultMaxConnectionsPerClient}
	const token = "listeners-token-0123456789"
	apiAddr, tlsConfig := serveTestAPI(t, token, limits, log)

	metricsLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	set := metrics.New(log)
	t.Cleanup(func() { _ = set.Close() })
	t.Cleanup(serveMetrics(metricsLn, set, limits, log))

	pprofAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	stopPprof, err := servePprof(pprofAddr, limits, log)
	require.NoError(t, err)
	t.Cleanup(stopPprof)

	plain := func(addr string) func() (net.Conn, error) {
		return func() (net.Conn, error) { return net.DialTimeout("tcp", addr, 5*time.Second) }
	}
	for _, tc := range []struct {
		name         string
		dial         func() (net.Conn, error)
		method, path string
		want         string // the answer's status line, "" for none
	}{
		{"REST API over TLS", func() (net.Conn, error) {
			return tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", apiAddr, tlsConfig)
		}, http.MethodPut, slowCollection, "HTTP/1.1 503 "}, // its Temporal never answers: not ready
		{"REST API, a TLS client that never says hello", plain(apiAddr), "", "", ""},
		{"metrics", plain(metricsLn.Addr().String()), http.MethodGet, "/metrics", "HTTP/1.1 200 "},
		{"profiles", plain(pprofAddr), http.MethodGet, "/debug/pprof/cmdline", "HTTP/1.1 200 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := tc.dial()
			require.NoError(t, err)
			defer c.Close()
			if tc.method != "" {
				require.NoError(t, writeSlowRequest(c, "recur", tc.method, tc.path, token))
			}
			require.NoError(t, c.SetReadDeadline(time.Now().Add(slowDeadline)))
			answer, err := io.ReadAll(c)
			require.NoError(t, err, "the server must answer and close the connection; it sent %q", answer)
			if tc.want == "" {
				require.Empty(t, answer)
				return
			}
			require.True(t, strings.HasPrefix(string(answer), tc.want), "%q", answer)
		})
	}
}

// serveTestAPI runs the REST API as serveRoles does, over TLS with a
// certificate of a test CA and a static token, in front of a Temporal
// client that is never used, and returns its address and a client TLS
// configuration that trusts it.
func serveTestAPI(t *testing.T, token string, limits connlimit.Limits, log *slog.Logger) (string, *tls.Config) {
	t.Helper()
	ca := newTestCA(t)
	certPath, keyPath := ca.issue(t, t.TempDir(), "recur-api", x509.ExtKeyUsageServerAuth, "127.0.0.1")
	serverTLS, err := apiTLS(certPath, keyPath)
	require.NoError(t, err)
	tokens, err := api.ParseTokenList(token + "=*")
	require.NoError(t, err)
	c, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1", Logger: sdklog.NewStructuredLogger(log)})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	set := metrics.New(log)
	t.Cleanup(func() { _ = set.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	r := roles{api: true, apiConfig: apiConfig{auth: tokens, tls: serverTLS}, metrics: set, limits: limits}
	go func() { done <- serveRoles(ctx, c, r, ln, "default", log) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
}
