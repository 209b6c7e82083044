package main

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"

	"github.com/recurhq/recur/internal/syncbuf"
	"github.com/recurhq/recur/temporalserver"
)

// testCA is a certificate authority made for a test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "recur test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns PEM files of a certificate for the names (DNS names or
// IPs) signed by ca, and its key.
func (ca *testCA) issue(t *testing.T, dir, cn string, usage x509.ExtKeyUsage, names ...string) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	certPath, keyPath = filepath.Join(dir, cn+".crt"), filepath.Join(dir, cn+".key")
	require.NoError(t, os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	return certPath, keyPath
}

func (ca *testCA) file(t *testing.T, dir string) string {
	p := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(p, ca.pem, 0o600))
	return p
}

// fakeFrontend is a Temporal frontend that answers the call the SDK makes
// when it connects, over mutual TLS, and records what it was sent.
type fakeFrontend struct {
	workflowservice.UnimplementedWorkflowServiceServer
	mu      sync.Mutex
	auth    []string
	clients []string // common names of client certificates
}

func (f *fakeFrontend) GetSystemInfo(ctx context.Context, _ *workflowservice.GetSystemInfoRequest) (*workflowservice.GetSystemInfoResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auth = append(f.auth, md.Get("authorization")...)
	if p, ok := peer.FromContext(ctx); ok {
		if info, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(info.State.PeerCertificates) > 0 {
			f.clients = append(f.clients, info.State.PeerCertificates[0].Subject.CommonName)
		}
	}
	return &workflowservice.GetSystemInfoResponse{}, nil
}

// startFrontend serves a fakeFrontend with a certificate for
// temporal.test (not for its IP) that requires client certificates of ca.
func startFrontend(t *testing.T, ca *testCA, dir string) (string, *fakeFrontend) {
	t.Helper()
	certPath, keyPath := ca.issue(t, dir, "temporal.test", x509.ExtKeyUsageServerAuth, "temporal.test")
	cert, err := tls.LoadX509KeyPair(certPath, keyPath)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert,
		MinVersion: tls.VersionTLS12,
	})))
	f := &fakeFrontend{}
	workflowservice.RegisterWorkflowServiceServer(srv, f)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return ln.Addr().String(), f
}

// TestTemporalMutualTLSAndAPIKey dials a TLS frontend that wants a client
// certificate, with the options recur builds from its flags: the CA, the
// server name, the client certificate and the API key all reach it.
func TestTemporalMutualTLSAndAPIKey(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t)
	addr, frontend := startFrontend(t, ca, dir)
	clientCert, clientKey := ca.issue(t, dir, "recur-worker", x509.ExtKeyUsageClientAuth)
	log := slog.New(slog.DiscardHandler)
	flags := temporalFlags{ca: ca.file(t, dir), cert: clientCert, key: clientKey, serverName: "temporal.test", apiKey: "cloud-key-123"}

	conn, err := flags.conn()
	require.NoError(t, err)
	require.Equal(t, "temporal.test", conn.tls.ServerName)
	require.Equal(t, uint16(tls.VersionTLS12), conn.tls.MinVersion)
	chains, err := ca.cert.Verify(x509.VerifyOptions{Roots: conn.tls.RootCAs})
	require.NoError(t, err, "the pool trusts the CA")
	require.NotEmpty(t, chains)
	cert, err := conn.tls.GetClientCertificate(nil)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	require.NoError(t, err)
	require.Equal(t, "recur-worker", leaf.Subject.CommonName)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := dial(ctx, addr, "default", conn, nil, nil, log)
	require.NoError(t, err)
	c.Close()
	frontend.mu.Lock()
	require.Equal(t, []string{"Bearer cloud-key-123"}, frontend.auth)
	require.Equal(t, []string{"recur-worker"}, frontend.clients)
	frontend.mu.Unlock()

	// Each part matters: without the client certificate, without the
	// server name (the certificate is not for 127.0.0.1) or without the
	// CA, the connection fails.
	for name, broken := range map[string]temporalFlags{
		"no client certificate": {ca: flags.ca, serverName: "temporal.test"},
		"no server name":        {ca: flags.ca, cert: clientCert, key: clientKey},
		"system roots":          {tls: true, cert: clientCert, key: clientKey, serverName: "temporal.test"},
	} {
		conn, err := broken.conn()
		require.NoError(t, err, name)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, err = dial(ctx, addr, "default", conn, nil, nil, log)
		cancel()
		require.Error(t, err, name)
	}
}

func TestTemporalFlagsBuildTLS(t *testing.T) {
	dir := t.TempDir()
	conn, err := temporalFlags{}.conn()
	require.NoError(t, err)
	require.Nil(t, conn.tls, "no flags: plaintext, as for recur dev's embedded server")
	require.Nil(t, conn.credentials)

	conn, err = temporalFlags{tls: true}.conn()
	require.NoError(t, err)
	require.NotNil(t, conn.tls)
	require.Nil(t, conn.tls.RootCAs, "--temporal-tls alone trusts the system's roots")
	require.Nil(t, conn.tls.GetClientCertificate)

	t.Setenv("RECUR_TEMPORAL_API_KEY", "from-env")
	conn, err = temporalFlags{}.conn()
	require.NoError(t, err)
	require.NotNil(t, conn.tls, "an API key implies TLS")
	require.NotNil(t, conn.credentials)

	bad := filepath.Join(dir, "bad.pem")
	require.NoError(t, os.WriteFile(bad, []byte("not pem"), 0o600))
	for flags, want := range map[temporalFlags]string{
		{ca: bad}:                     "holds no PEM certificate",
		{ca: filepath.Join(dir, "x")}: "--temporal-tls-ca",
		{cert: bad}:                   "go together",
		{cert: bad, key: bad}:         "--temporal-tls-cert",
	} {
		_, err := flags.conn()
		require.ErrorContains(t, err, want)
	}
}

func TestAPITLSConfig(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t)
	certPath, keyPath := ca.issue(t, dir, "api", x509.ExtKeyUsageServerAuth, "127.0.0.1")
	cfg, err := apiTLS(certPath, keyPath)
	require.NoError(t, err)
	require.Equal(t, uint16(tls.VersionTLS12), cfg.MinVersion)
	first, err := cfg.GetCertificate(nil)
	require.NoError(t, err)

	cfg, err = apiTLS("", "")
	require.NoError(t, err)
	require.Nil(t, cfg)
	_, err = apiTLS(certPath, "")
	require.ErrorContains(t, err, "go together")
	_, err = apiTLS(keyPath, certPath)
	require.Error(t, err)

	// A renewed certificate is served once the files change.
	files, err := loadCertFiles(certPath, keyPath)
	require.NoError(t, err)
	ca.issue(t, dir, "api", x509.ExtKeyUsageServerAuth, "127.0.0.1")
	files.checked = time.Time{}
	renewed, err := files.get()
	require.NoError(t, err)
	require.NotEqual(t, first.Certificate[0], renewed.Certificate[0])
	// A half-written renewal keeps the previous certificate.
	require.NoError(t, os.WriteFile(certPath, []byte("partial"), 0o600))
	files.checked = time.Time{}
	kept, err := files.get()
	require.NoError(t, err)
	require.Equal(t, renewed.Certificate[0], kept.Certificate[0])
}

// compressionRecorder is a gRPC stats handler that records the
// compression of every request a server receives.
type compressionRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *compressionRecorder) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return ctx
}
func (r *compressionRecorder) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (r *compressionRecorder) HandleConn(context.Context, stats.ConnStats) {}
func (r *compressionRecorder) HandleRPC(_ context.Context, s stats.RPCStats) {
	if h, ok := s.(*stats.InHeader); ok {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.seen = append(r.seen, cmp.Or(h.Compression, "none"))
	}
}

// TestEmbeddedServerIsDialedUncompressed: recur dev talks to its embedded
// server over loopback without gzip, which would cost CPU at both ends
// for nothing; a cluster is dialed with the SDK's default, gzip.
func TestEmbeddedServerIsDialedUncompressed(t *testing.T) {
	for name, c := range map[string]struct {
		conn temporalConn
		want string
	}{
		"embedded": {embeddedConn, "none"},
		"cluster":  {temporalConn{}, "gzip"},
	} {
		t.Run(name, func(t *testing.T) {
			rec := &compressionRecorder{}
			srv := grpc.NewServer(grpc.StatsHandler(rec))
			workflowservice.RegisterWorkflowServiceServer(srv, &fakeFrontend{})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			go func() { _ = srv.Serve(ln) }()
			defer srv.Stop()

			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			cl, err := dial(ctx, ln.Addr().String(), "default", c.conn, nil, nil, slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			cl.Close()
			rec.mu.Lock()
			defer rec.mu.Unlock()
			require.NotEmpty(t, rec.seen)
			for _, got := range rec.seen {
				require.Equal(t, c.want, got)
			}
		})
	}
}

// TestALargeMemoIsNoWarning: recur's memos pass the SDK's default memo
// warning (2 KiB) by design, a collection's job names among them; the
// client recur dials warns only at temporalserver.MemoSizeWarning.
func TestALargeMemoIsNoWarning(t *testing.T) {
	srv := grpc.NewServer()
	workflowservice.RegisterWorkflowServiceServer(srv, &fakeFrontend{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()

	var logged syncbuf.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, nil))
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cl, err := dial(ctx, ln.Addr().String(), "default", embeddedConn, nil, nil, log)
	require.NoError(t, err)
	defer cl.Close()
	memo := func(size int) map[string]any { return map[string]any{"names": strings.Repeat("n", size)} }
	start := func(size int) {
		// The fake frontend refuses the start; the SDK checks the memo
		// before it sends the request.
		_, err := cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "q", Memo: memo(size)}, "w")
		require.Error(t, err)
	}
	start(100 << 10)
	require.NotContains(t, logged.String(), "TMPRL1103")
	start(temporalserver.MemoSizeWarning)
	require.Contains(t, logged.String(), "TMPRL1103", "a memo past the limit is still a warning")
}
