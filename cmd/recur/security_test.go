package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/syncbuf"
	"github.com/recurhq/recur/jobs"
)

// TestOpenAPIOffLoopbackIsRefused runs the real binary: an API without
// authentication on an address other machines can reach stops recur at
// once, with status 2, before anything listens.
func TestOpenAPIOffLoopbackIsRefused(t *testing.T) {
	bin := buildRecur(t)
	for _, args := range [][]string{
		{"dev", "--http-addr", "0.0.0.0:" + strconv.Itoa(freePort(t)), "--data-dir", t.TempDir()},
		{"dev", "--http-addr", ":" + strconv.Itoa(freePort(t)), "--data-dir", t.TempDir()},
		{"serve", "--http-addr", "[::]:" + strconv.Itoa(freePort(t)), "--temporal-address", "127.0.0.1:1"},
		{"api", "--http-addr", "192.0.2.10:" + strconv.Itoa(freePort(t)), "--temporal-address", "127.0.0.1:1"},
		// Nothing to authenticate with: an empty tokens list is no tokens.
		{"api", "--http-addr", "0.0.0.0:" + strconv.Itoa(freePort(t)), "--api-tokens-file", ""},
	} {
		start := time.Now()
		out, err := exec.Command(bin, args...).CombinedOutput()
		var exitErr *exec.ExitError
		require.ErrorAs(t, err, &exitErr, "%v: %s", args, out)
		require.Equal(t, 2, exitErr.ExitCode(), "%v: %s", args, out)
		require.Contains(t, string(out), "refusing to serve the REST API on "+args[2]+" without authentication", "%v", args)
		require.Contains(t, string(out), "--insecure-open-api")
		require.Less(t, time.Since(start), 10*time.Second, "refused before starting anything")
	}
}

// TestBadSecurityFlagsExit2: configuration errors are usage errors.
func TestBadSecurityFlagsExit2(t *testing.T) {
	bin := buildRecur(t)
	dir := t.TempDir()
	badTokens := filepath.Join(dir, "tokens.json")
	require.NoError(t, os.WriteFile(badTokens, []byte(`{"tokens":[{"name":"x","token":"short","subscriptions":["s"]}]}`), 0o600))
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--tls-cert", filepath.Join(dir, "missing.crt")}, "", "--tls-cert and --tls-key go together"},
		{[]string{"--tls-cert", filepath.Join(dir, "missing.crt"), "--tls-key", filepath.Join(dir, "missing.key")}, "", "missing.crt"},
		{[]string{"--api-tokens-file", badTokens}, "", "shorter than 16"},
		{[]string{"--api-tokens-file", filepath.Join(dir, "none.json")}, "", "--api-tokens-file"},
		{nil, "RECUR_API_TOKENS=just-a-token-without-subscriptions", "RECUR_API_TOKENS: env#1"},
		{[]string{"--oidc-issuer", "https://idp.example"}, "", "audience is required"},
		{[]string{"--oidc-audience", "x"}, "", "--oidc-audience needs --oidc-issuer"},
		{[]string{"--rate-burst", "0"}, "", "--rate-burst"},
	} {
		cmd := exec.Command(bin, append([]string{"dev", "--data-dir", dir, "--http-addr", "127.0.0.1:" + strconv.Itoa(freePort(t))}, tc.args...)...)
		cmd.Env = os.Environ()
		if tc.env != "" {
			cmd.Env = append(cmd.Env, tc.env)
		}
		out, err := cmd.CombinedOutput()
		var exitErr *exec.ExitError
		require.ErrorAs(t, err, &exitErr, "%v: %s", tc.args, out)
		require.Equal(t, 2, exitErr.ExitCode(), "%v: %s", tc.args, out)
		require.Contains(t, string(out), tc.want, "%v", tc.args)
		require.NotContains(t, string(out), "just-a-token", "a token is never printed")
	}
}

// TestDevOpenAPIWarns runs the real binary twice: open on loopback it
// starts with a loud warning; open on all interfaces it starts only with
// --insecure-open-api, and warns too. Either way the warning says what
// web pages cannot do, and they cannot: a POST from another origin and a
// Host of another name are refused.
func TestDevOpenAPIWarns(t *testing.T) {
	bin := buildRecur(t)
	for _, tc := range []struct {
		name, host string
		extra      []string
		warning    string
	}{
		{"loopback", "127.0.0.1", nil, "the REST API is open: anyone who can reach 127.0.0.1:"},
		{"all interfaces, overridden", "0.0.0.0", []string{"--insecure-open-api"}, "the REST API is open on 0.0.0.0:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			apiPort := freePort(t)
			p := &devProcess{api: "http://127.0.0.1:" + strconv.Itoa(apiPort), output: &syncbuf.Buffer{}, done: make(chan error, 1)}
			p.start(t, bin, append([]string{"dev", "--data-dir", t.TempDir(), "--http-addr", tc.host + ":" + strconv.Itoa(apiPort),
				"--temporal-port", strconv.Itoa(freePort(t)), "--ui-port", "0"}, tc.extra...)...)
			require.Contains(t, p.output.String(), tc.warning)
			require.Contains(t, p.output.String(), "web pages open in a browser cannot: requests from pages of other origins and sites")
			require.Contains(t, p.output.String(), `"level":"WARN"`, "JSON logs by default")
			coll := "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
			status, body := p.do(t, http.MethodPut, coll, map[string]any{"properties": map[string]any{}})
			require.Equal(t, http.StatusCreated, status, "open: no token needed: %v", body)
			for _, header := range []http.Header{
				{"Origin": {"https://evil.example"}, "Sec-Fetch-Site": {"cross-site"}},
				{"Host": {"rebind.attacker.example:" + strconv.Itoa(apiPort)}},
			} {
				req, err := http.NewRequest(http.MethodPost, p.api+coll+"/disable?api-version=2016-03-01", nil)
				require.NoError(t, err)
				req.Header = header
				req.Host = header.Get("Host")
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, http.StatusForbidden, resp.StatusCode, "%v", header)
			}
			p.stop(t, os.Interrupt)
		})
	}
}

// TestDevServesHTTPSWithTokens runs the real binary with a certificate,
// a tokens file holding only a token's SHA-256, and RECUR_API_TOKENS: the
// API answers over HTTPS only, to its tokens only, each within its
// subscriptions; the log names tokens and never shows them.
func TestDevServesHTTPSWithTokens(t *testing.T) {
	t.Parallel()
	bin := buildRecur(t)
	dir := t.TempDir()
	ca := newTestCA(t)
	certPath, keyPath := ca.issue(t, dir, "recur-api", x509.ExtKeyUsageServerAuth, "127.0.0.1")
	const fileToken, envToken = "file-token-of-team-a-0123", "env-token-of-ops-0123456789"
	digest := sha256.Sum256([]byte(fileToken))
	tokensFile := filepath.Join(dir, "tokens.json")
	require.NoError(t, os.WriteFile(tokensFile, []byte(`{"tokens":[{"name":"team-a","sha256":"`+
		hex.EncodeToString(digest[:])+`","subscriptions":["sub-a"]}]}`), 0o600))

	apiPort := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(apiPort)
	p := &devProcess{api: "https://" + addr, output: &syncbuf.Buffer{}, done: make(chan error, 1)}
	p.launchEnv(t, bin, []string{"RECUR_API_TOKENS=" + envToken + "=*", "RECUR_LOG_LEVEL=debug"},
		"dev", "--data-dir", t.TempDir(), "--http-addr", addr, "--temporal-port", strconv.Itoa(freePort(t)), "--ui-port", "0",
		"--tls-cert", certPath, "--tls-key", keyPath, "--api-tokens-file", tokensFile)
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	httpsClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	require.Eventually(t, func() bool {
		resp, err := httpsClient.Get(p.api + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 90*time.Second, 250*time.Millisecond, "recur dev never became ready over HTTPS:\n%s", p.output)

	send := func(method, path, token string) (int, string) {
		req, err := http.NewRequest(method, p.api+path+"?api-version=2016-03-01", strings.NewReader(`{"properties":{}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := httpsClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	coll := func(sub string) string {
		return "/subscriptions/" + sub + "/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
	}
	status, body := send(http.MethodPut, coll("sub-a"), "")
	require.Equal(t, http.StatusUnauthorized, status, body)
	status, body = send(http.MethodPut, coll("sub-a"), fileToken)
	require.Equal(t, http.StatusCreated, status, body)
	status, body = send(http.MethodPut, coll("sub-b"), fileToken)
	require.Equal(t, http.StatusNotFound, status, body)
	status, body = send(http.MethodGet, coll("sub-a"), envToken)
	require.Equal(t, http.StatusOK, status, "the operator token from the environment: %s", body)

	resp, err := http.Get("http://" + addr + "/healthz")
	if err == nil {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "plain HTTP gets no API: %s", data)
	}
	var insecure *tls.CertificateVerificationError
	_, err = http.Get("https://" + addr + "/healthz")
	require.True(t, errors.As(err, &insecure), "the certificate is the test CA's, not a public one: %v", err)
	tls11 := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS11}}}
	_, err = tls11.Get(p.api + "/healthz")
	require.Error(t, err, "TLS 1.1 is refused")

	out := p.output.String()
	require.Contains(t, out, "https://"+addr)
	require.Contains(t, out, `"principal":"team-a"`, "the log names the token")
	require.NotContains(t, out, fileToken)
	require.NotContains(t, out, envToken)
	require.NotContains(t, out, "REST API is open")
	p.stop(t, os.Interrupt)
}

// launchEnv is launch with more environment variables.
func (p *devProcess) launchEnv(t *testing.T, bin string, env []string, args ...string) {
	t.Helper()
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = p.dir
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.output, p.output
	require.NoError(t, p.cmd.Start())
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
}

func TestLoopbackOnly(t *testing.T) {
	ctx := context.Background()
	for addr, want := range map[string]bool{
		"127.0.0.1:8080":          true,
		"127.0.0.2:8080":          true,
		"[::1]:8080":              true,
		"localhost:8080":          true,
		"0.0.0.0:8080":            false,
		"[::]:8080":               false,
		":8080":                   false,
		"192.0.2.1:8080":          false,
		"no-such-host.invalid:80": false,
		"not an address":          false,
		"[::ffff:127.0.0.1]:8080": true,
		"[2001:db8::1]:8080":      false,
		"localhost.invalid.:8080": false,
	} {
		require.Equal(t, want, loopbackOnly(ctx, addr), addr)
	}
}

func TestPrepareStartUpRules(t *testing.T) {
	ctx := context.Background()
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))

	s := apiSecurity{rateLimit: 50, rateBurst: 100, minInterval: jobs.DefaultMinInterval}
	cfg, err := s.prepare(ctx, "127.0.0.1:8080", log)
	require.NoError(t, err)
	require.Nil(t, cfg.auth)
	require.Contains(t, logs.String(), "level=WARN")
	require.Equal(t, 50.0, cfg.rateLimit.PerSecond)

	_, err = s.prepare(ctx, "0.0.0.0:8080", log)
	require.ErrorContains(t, err, "refusing to serve the REST API on 0.0.0.0:8080 without authentication")

	s.insecureOpen = true
	_, err = s.prepare(ctx, "0.0.0.0:8080", log)
	require.NoError(t, err)
	require.Contains(t, logs.String(), "(--insecure-open-api)")

	t.Setenv("RECUR_API_TOKENS", "a-token-for-tests-0123=sub-a")
	logs.Reset()
	s.insecureOpen = false
	cfg, err = s.prepare(ctx, "0.0.0.0:8080", log)
	require.NoError(t, err, "with tokens any address is fine")
	require.NotNil(t, cfg.auth)
	require.NotContains(t, logs.String(), "level=WARN")
	require.NotContains(t, logs.String(), "a-token-for-tests")
}

// TestMaxCollectionsPerSubscriptionFlag: the cap is Azure's 200,000 by
// default, set by the flag or the environment, 0 for none, and reaches
// the API's configuration; a negative one is refused at start.
func TestMaxCollectionsPerSubscriptionFlag(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	parse := func(t *testing.T, args ...string) (apiConfig, error) {
		t.Helper()
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		var s apiSecurity
		var envs envDefaults
		s.register(fs, 0, &envs)
		require.NoError(t, fs.Parse(args))
		require.NoError(t, envs.err())
		return s.prepare(ctx, "127.0.0.1:8080", log)
	}
	cfg, err := parse(t)
	require.NoError(t, err)
	require.Equal(t, 200_000, cfg.maxCollections)
	cfg, err = parse(t, "--max-collections-per-subscription", "3")
	require.NoError(t, err)
	require.Equal(t, 3, cfg.maxCollections)
	cfg, err = parse(t, "--max-collections-per-subscription=0")
	require.NoError(t, err)
	require.Equal(t, 0, cfg.maxCollections)
	_, err = parse(t, "--max-collections-per-subscription=-1")
	require.ErrorContains(t, err, "--max-collections-per-subscription must be 0 (no cap) or more")
	t.Setenv("RECUR_MAX_COLLECTIONS_PER_SUBSCRIPTION", "7")
	cfg, err = parse(t)
	require.NoError(t, err)
	require.Equal(t, 7, cfg.maxCollections)
}
