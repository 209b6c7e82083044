package jobs_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/recurhq/recur/jobs"
)

const pfxPassword = "pfx-pa55"

// newCert returns a self-signed certificate of a new key, signed by
// parent (itself when nil).
func newCert(t *testing.T, cn string, notAfter time.Time, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"recur"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		IsCA:         parent == nil, BasicConstraintsValid: true,
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return cert, key
}

func encodePFX(t *testing.T, enc *pkcs12.Encoder, key any, cert *x509.Certificate, chain []*x509.Certificate, password string) string {
	t.Helper()
	der, err := enc.Encode(key, cert, chain, password)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(der)
}

func thumbprintOf(c *x509.Certificate) string {
	sum := sha1.Sum(c.Raw)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

// authJob is a valid job whose request authenticates with auth.
func authJob(uri string, auth *jobs.Authentication) jobs.Job {
	return jobs.Job{Properties: jobs.Properties{Action: &jobs.Action{ActionSpec: jobs.ActionSpec{
		Type: "https", Request: &jobs.HTTPRequest{URI: uri, Method: "GET", Authentication: auth},
	}}}}
}

var authKey = jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}

func normalizeAuth(t *testing.T, auth *jobs.Authentication) (*jobs.Authentication, error) {
	t.Helper()
	j := authJob("https://example.com/hook", auth)
	err := j.Accept(authKey, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return j.Properties.Action.Request.Authentication, err
}

func TestAuthenticationNormalize(t *testing.T) {
	t.Run("Basic in any case, foreign fields dropped", func(t *testing.T) {
		got, err := normalizeAuth(t, &jobs.Authentication{Type: "basic", Username: "u", Password: "p", Secret: "stray", Tenant: "t"})
		require.NoError(t, err)
		require.Equal(t, &jobs.Authentication{Type: jobs.AuthBasic, Username: "u", Password: "p"}, got)
	})
	t.Run("ActiveDirectoryOAuth in any case", func(t *testing.T) {
		in := &jobs.Authentication{Type: "activedirectoryoauth", Tenant: "contoso.onmicrosoft.com",
			Audience: "https://management.core.windows.net/", ClientID: "c1", Secret: "s3cret", Username: "stray"}
		got, err := normalizeAuth(t, in)
		require.NoError(t, err)
		require.Equal(t, &jobs.Authentication{Type: jobs.AuthActiveDirectoryOAuth, Tenant: "contoso.onmicrosoft.com",
			Audience: "https://management.core.windows.net/", ClientID: "c1", Secret: "s3cret"}, got)
	})
	t.Run("NotSpecified is none", func(t *testing.T) {
		got, err := normalizeAuth(t, &jobs.Authentication{Type: "notspecified", Password: "x"})
		require.NoError(t, err)
		require.Nil(t, got)
	})
}

func TestAuthenticationValidateTargets(t *testing.T) {
	const p = "properties.action.request.authentication"
	oauth := func(change func(*jobs.Authentication)) *jobs.Authentication {
		a := &jobs.Authentication{Type: "ActiveDirectoryOAuth", Tenant: "t", Audience: "a", ClientID: "c", Secret: "oauth-s3cret"}
		change(a)
		return a
	}
	tests := []struct {
		name   string
		auth   *jobs.Authentication
		target string
	}{
		{"unknown type", &jobs.Authentication{Type: "Kerberos", Password: "basic-pa55"}, p + ".type"},
		{"Basic without username", &jobs.Authentication{Type: "Basic", Password: "basic-pa55"}, p + ".username"},
		{"Basic without password", &jobs.Authentication{Type: "Basic", Username: "u"}, p + ".password"},
		{"ClientCertificate without pfx", &jobs.Authentication{Type: "ClientCertificate", Password: pfxPassword}, p + ".pfx"},
		{"pfx not base64", &jobs.Authentication{Type: "ClientCertificate", Pfx: "not base64!", Password: pfxPassword}, p + ".pfx"},
		{"pfx not PKCS#12", &jobs.Authentication{Type: "ClientCertificate", Pfx: base64.StdEncoding.EncodeToString([]byte("hello")), Password: pfxPassword}, p + ".pfx"},
		{"OAuth without tenant", oauth(func(a *jobs.Authentication) { a.Tenant = "" }), p + ".tenant"},
		{"OAuth without audience", oauth(func(a *jobs.Authentication) { a.Audience = "" }), p + ".audience"},
		{"OAuth without clientId", oauth(func(a *jobs.Authentication) { a.ClientID = "" }), p + ".clientId"},
		{"OAuth without secret", oauth(func(a *jobs.Authentication) { a.Secret = "" }), p + ".secret"},
		{"OAuth tenant is one path segment", oauth(func(a *jobs.Authentication) { a.Tenant = "../common" }), p + ".tenant"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := normalizeAuth(t, tc.auth)
			var e *jobs.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, jobs.CodeInvalidRequest, e.Code)
			require.Equal(t, tc.target, e.Target)
			for _, secret := range []string{"basic-pa55", pfxPassword, "oauth-s3cret"} {
				require.NotContains(t, e.Message, secret)
			}
		})
	}
}

func TestClientCertificateInfoFromPFX(t *testing.T) {
	notAfter := time.Date(2031, 1, 1, 7, 0, 0, 0, time.UTC)
	cert, key := newCert(t, "Scheduler Mgmt", notAfter, nil, nil)
	for name, enc := range map[string]*pkcs12.Encoder{"modern": pkcs12.Modern, "legacy": pkcs12.Legacy} {
		t.Run(name, func(t *testing.T) {
			pfx := encodePFX(t, enc, key, cert, nil, pfxPassword)
			got, err := normalizeAuth(t, &jobs.Authentication{Type: "clientcertificate", Pfx: pfx, Password: pfxPassword,
				CertificateThumbprint: "FORGED", CertificateSubjectName: "CN=forged"})
			require.NoError(t, err)
			require.Equal(t, jobs.AuthClientCertificate, got.Type)
			require.Equal(t, thumbprintOf(cert), got.CertificateThumbprint)
			require.Len(t, got.CertificateThumbprint, 40)
			require.Equal(t, "CN=Scheduler Mgmt,O=recur", got.CertificateSubjectName)
			require.Equal(t, notAfter, *got.CertificateExpirationDate)
			require.Equal(t, pfx, got.Pfx, "the stored definition keeps the pfx for the run")

			data, err := json.Marshal(got.Redacted())
			require.NoError(t, err)
			require.JSONEq(t, `{"type":"ClientCertificate","certificateThumbprint":"`+thumbprintOf(cert)+
				`","certificateSubjectName":"CN=Scheduler Mgmt,O=recur","certificateExpirationDate":"2031-01-01T07:00:00Z",`+
				`"certificateExpiration":"2031-01-01T07:00:00Z"}`, string(data), "answers name the expiry as the contract and as Azure did")
			require.Nil(t, got.CertificateExpiration, "stored under the contract's name only")
		})
	}
}

func TestClientCertificateRejectsBadPFX(t *testing.T) {
	const target = "properties.action.request.authentication.pfx"
	cert, key := newCert(t, "leaf", time.Now().Add(time.Hour), nil, nil)
	_, otherKey := newCert(t, "other", time.Now().Add(time.Hour), nil, nil)
	tests := []struct {
		name string
		auth *jobs.Authentication
		want string // in the message
	}{
		{"wrong password", &jobs.Authentication{Type: "ClientCertificate",
			Pfx: encodePFX(t, pkcs12.Modern, key, cert, nil, pfxPassword), Password: "wrong-pa55"}, "password incorrect"},
		{"key of another certificate", &jobs.Authentication{Type: "ClientCertificate",
			Pfx: encodePFX(t, pkcs12.Modern, otherKey, cert, nil, pfxPassword), Password: pfxPassword}, "no certificate of its private key"},
		{"too many iterations", &jobs.Authentication{Type: "ClientCertificate",
			Pfx: encodePFX(t, pkcs12.Modern.WithIterations(jobs.MaxPFXIterations+1), key, cert, nil, pfxPassword), Password: pfxPassword}, "iterations"},
		{"not PKCS#12", &jobs.Authentication{Type: "ClientCertificate",
			Pfx: base64.StdEncoding.EncodeToString(cert.Raw), Password: pfxPassword}, "is not a PKCS#12 file: give the base64 of a whole .pfx or .p12 file"},
		{"cut short", &jobs.Authentication{Type: "ClientCertificate",
			Pfx: cutShort(t, encodePFX(t, pkcs12.Modern, key, cert, nil, pfxPassword)), Password: pfxPassword}, "is not a PKCS#12 file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := normalizeAuth(t, tc.auth)
			var e *jobs.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, target, e.Target)
			require.Contains(t, e.Message, tc.want)
			require.NotContains(t, e.Message, tc.auth.Password)
			require.NotContains(t, e.Message, tc.auth.Pfx[:min(16, len(tc.auth.Pfx))])
			for _, dump := range []string{"asn1", "tag:", "class:", "{", "structure error"} {
				require.NotContains(t, e.Message, dump, "the message is words, not Go's struct dump")
			}
		})
	}
}

// cutShort returns pfx, a PFX's base64, without its last quarter.
func cutShort(t *testing.T, pfx string) string {
	t.Helper()
	der, err := base64.StdEncoding.DecodeString(pfx)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(der[:len(der)*3/4])
}

func TestClientCertificateFindsTheKeysCertificateInAChain(t *testing.T) {
	ca, caKey := newCert(t, "Test CA", time.Now().Add(time.Hour), nil, nil)
	leaf, leafKey := newCert(t, "leaf", time.Now().Add(time.Hour), ca, caKey)
	// The CA first: the PFX does not say which certificate is the key's.
	pfx := encodePFX(t, pkcs12.Modern, leafKey, ca, []*x509.Certificate{leaf}, pfxPassword)
	auth := &jobs.Authentication{Type: "ClientCertificate", Pfx: pfx, Password: pfxPassword}
	got, err := normalizeAuth(t, auth)
	require.NoError(t, err)
	require.Equal(t, thumbprintOf(leaf), got.CertificateThumbprint)
	tlsCert, err := got.Certificate()
	require.NoError(t, err)
	require.Equal(t, [][]byte{leaf.Raw, ca.Raw}, tlsCert.Certificate)
}

func TestClientCertificateNeedsHTTPS(t *testing.T) {
	cert, key := newCert(t, "leaf", time.Now().Add(time.Hour), nil, nil)
	j := authJob("http://example.com", &jobs.Authentication{Type: "ClientCertificate",
		Pfx: encodePFX(t, pkcs12.Modern, key, cert, nil, pfxPassword), Password: pfxPassword})
	j.Properties.Action.Type = "http"
	var e *jobs.Error
	require.ErrorAs(t, j.Accept(authKey, time.Now()), &e)
	require.Equal(t, "properties.action.request.authentication.type", e.Target)
}

func TestJobRedacted(t *testing.T) {
	j := authJob("https://example.com", &jobs.Authentication{Type: "Basic", Username: "u", Password: "basic-pa55"})
	j.Properties.Action.ErrorAction = &jobs.ActionSpec{Type: "Https", Request: &jobs.HTTPRequest{
		URI: "https://example.com/err", Method: "POST", Authentication: &jobs.Authentication{
			Type: "ActiveDirectoryOAuth", Tenant: "t", Audience: "a", ClientID: "c", Secret: "oauth-s3cret"}}}
	before, err := json.Marshal(j)
	require.NoError(t, err)

	r := j.Redacted()
	data, err := json.Marshal(r)
	require.NoError(t, err)
	require.NotContains(t, string(data), "basic-pa55")
	require.NotContains(t, string(data), "oauth-s3cret")
	require.NotContains(t, string(data), `"password"`)
	require.NotContains(t, string(data), `"secret"`)
	require.Equal(t, "u", r.Properties.Action.Request.Authentication.Username)
	require.Equal(t, "c", r.Properties.Action.ErrorAction.Request.Authentication.ClientID)

	after, err := json.Marshal(j)
	require.NoError(t, err)
	require.JSONEq(t, string(before), string(after), "Redacted leaves the stored definition whole")

	require.Equal(t, jobs.Job{}, jobs.Job{}.Redacted(), "a job without an action")
	plain := authJob("https://example.com", nil)
	require.Equal(t, plain, plain.Redacted())
}
