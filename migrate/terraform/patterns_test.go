package terraform

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"software.sslmate.com/src/go-pkcs12"
)

// newPFX returns a PKCS#12 file of a new self-signed certificate, sealed
// with password, as a client certificate of a job is.
func newPFX(t *testing.T, password string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "partner client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pfx, err := pkcs12.Modern.Encode(key, cert, nil, password)
	require.NoError(t, err)
	return pfx
}

// pfxPlaceholder stands in the golden file for the base64 of the PFX a
// test makes, new each run.
const pfxPlaceholder = "BASE64 OF client.pfx"

// TestReadPatterns reads the patterns of real configurations (testdata/
// patterns011: blocks written as attributes, monthly_occurrences as a
// list of maps, base64encode(file()) of a PFX; patterns012: the same in
// 0.12 syntax, monthly_occurrences as repeated blocks, filebase64() of
// the PFX) and compares every field with the golden file.
func TestReadPatterns(t *testing.T) {
	pfx := newPFX(t, "client-pa55")
	for _, syntax := range []string{"patterns011", "patterns012"} {
		t.Run(syntax, func(t *testing.T) {
			dir := example(t, syntax)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "client.pfx"), pfx, 0o600))
			rs, err := Read([]string{dir}, Options{})
			require.NoError(t, err)
			assertDecodes(t, rs)
			for i := range rs {
				rs[i].Body = json.RawMessage(strings.ReplaceAll(string(rs[i].Body), base64.StdEncoding.EncodeToString(pfx), pfxPlaceholder))
			}
			assertResources(t, filepath.Join("testdata", "patterns.golden.json"), rs)
		})
	}
}
