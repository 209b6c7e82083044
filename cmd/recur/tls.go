package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
)

// certReloadEvery is how often certificate files are checked for a
// change: a renewed certificate is served without a restart.
const certReloadEvery = 10 * time.Second

// certFiles is a certificate and key in PEM files, read again when
// either file changes.
type certFiles struct {
	certPath, keyPath string

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   string // the files' sizes and modification times
	checked time.Time
}

// loadCertFiles reads the pair once, so a bad pair stops recur at start.
func loadCertFiles(certPath, keyPath string) (*certFiles, error) {
	f := &certFiles{certPath: certPath, keyPath: keyPath}
	if _, err := f.get(); err != nil {
		return nil, err
	}
	return f, nil
}

// get returns the certificate, reading the files again when they changed.
// A pair that no longer loads (half-written by a renewal) leaves the
// previous one in use.
func (f *certFiles) get() (*tls.Certificate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cert != nil && time.Since(f.checked) < certReloadEvery {
		return f.cert, nil
	}
	f.checked = time.Now()
	stamp, err := fileStamp(f.certPath, f.keyPath)
	if err == nil && stamp == f.stamp {
		return f.cert, nil
	}
	cert, err := tls.LoadX509KeyPair(f.certPath, f.keyPath)
	if err != nil {
		if f.cert != nil {
			return f.cert, nil
		}
		return nil, fmt.Errorf("load certificate %s and key %s: %w", f.certPath, f.keyPath, err)
	}
	f.cert, f.stamp = &cert, stamp
	return f.cert, nil
}

func fileStamp(paths ...string) (string, error) {
	var stamp string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		stamp += fmt.Sprintf("%d@%d;", info.Size(), info.ModTime().UnixNano())
	}
	return stamp, nil
}

// apiTLS is the REST API's TLS configuration for a certificate and key,
// or nil when neither is given.
func apiTLS(certPath, keyPath string) (*tls.Config, error) {
	if certPath == "" && keyPath == "" {
		return nil, nil
	}
	if certPath == "" || keyPath == "" {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	files, err := loadCertFiles(certPath, keyPath)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return files.get() },
	}, nil
}

// temporalFlags say how to reach an external Temporal cluster securely.
type temporalFlags struct {
	tls        bool
	ca         string
	cert, key  string
	serverName string
	apiKey     string
}

func (f *temporalFlags) register(fs *flag.FlagSet, e *envDefaults) {
	fs.BoolVar(&f.tls, "temporal-tls", e.bool("RECUR_TEMPORAL_TLS", false),
		"connect to Temporal over TLS, trusting the system's roots (RECUR_TEMPORAL_TLS=true); implied by the other --temporal-tls-* flags and --temporal-api-key")
	fs.StringVar(&f.ca, "temporal-tls-ca", env("RECUR_TEMPORAL_TLS_CA", ""),
		"PEM `file` of the CA certificates that sign Temporal's certificate, instead of the system's roots (RECUR_TEMPORAL_TLS_CA)")
	fs.StringVar(&f.cert, "temporal-tls-cert", env("RECUR_TEMPORAL_TLS_CERT", ""),
		"PEM `file` of the client certificate for mutual TLS (RECUR_TEMPORAL_TLS_CERT)")
	fs.StringVar(&f.key, "temporal-tls-key", env("RECUR_TEMPORAL_TLS_KEY", ""),
		"PEM `file` of the client certificate's key (RECUR_TEMPORAL_TLS_KEY)")
	fs.StringVar(&f.serverName, "temporal-tls-server-name", env("RECUR_TEMPORAL_TLS_SERVER_NAME", ""),
		"`name` Temporal's certificate must carry, when it is not the host of --temporal-address (RECUR_TEMPORAL_TLS_SERVER_NAME)")
	fs.StringVar(&f.apiKey, "temporal-api-key", "",
		"API `key` for Temporal Cloud, sent as a bearer token over TLS; prefer RECUR_TEMPORAL_API_KEY, as flags show in process lists")
}

// temporalConn is how to reach Temporal beyond its address; the zero value
// is plaintext without credentials, gzip-compressed as the SDK does by
// default.
type temporalConn struct {
	tls         *tls.Config
	credentials client.Credentials
	// compression is nil for the SDK's default, gzip.
	compression client.GrpcCompression
}

// embeddedConn reaches recur dev's embedded server: over loopback in one
// process, gzip would spend CPU at both ends of every workflow task, poll
// and list to save bandwidth that costs nothing.
var embeddedConn = temporalConn{compression: &client.GrpcCompressionNone{}}

// conn builds the connection options of the flags. RECUR_TEMPORAL_API_KEY
// is read here rather than as the flag's default, so that the key never
// shows in the usage text.
func (f temporalFlags) conn() (temporalConn, error) {
	if f.apiKey == "" {
		f.apiKey = os.Getenv("RECUR_TEMPORAL_API_KEY")
	}
	var conn temporalConn
	if !f.tls && f.ca == "" && f.cert == "" && f.key == "" && f.serverName == "" && f.apiKey == "" {
		return conn, nil
	}
	// An API key travels only over TLS: Temporal Cloud wants it so, and a
	// bearer token in the clear is anyone's.
	conn.tls = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.serverName}
	if f.ca != "" {
		pem, err := os.ReadFile(f.ca)
		if err != nil {
			return conn, fmt.Errorf("--temporal-tls-ca: %w", err)
		}
		conn.tls.RootCAs = x509.NewCertPool()
		if !conn.tls.RootCAs.AppendCertsFromPEM(pem) {
			return conn, fmt.Errorf("--temporal-tls-ca: %s holds no PEM certificate", f.ca)
		}
	}
	switch {
	case f.cert != "" && f.key != "":
		files, err := loadCertFiles(f.cert, f.key)
		if err != nil {
			return conn, fmt.Errorf("--temporal-tls-cert: %w", err)
		}
		conn.tls.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return files.get() }
	case f.cert != "" || f.key != "":
		return conn, errors.New("--temporal-tls-cert and --temporal-tls-key go together")
	}
	if f.apiKey != "" {
		conn.credentials = client.NewAPIKeyStaticCredentials(f.apiKey)
	}
	return conn, nil
}
