package jobs

import (
	"crypto"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// Authentication types of an HTTP(S) request, spelled as the service
// wrote them. NotSpecified means none: validation drops it.
const (
	AuthNotSpecified         = "NotSpecified"
	AuthClientCertificate    = "ClientCertificate"
	AuthActiveDirectoryOAuth = "ActiveDirectoryOAuth"
	AuthBasic                = "Basic"
)

var authTypes = []string{AuthNotSpecified, AuthClientCertificate, AuthActiveDirectoryOAuth, AuthBasic}

// Authentication is the outbound authentication of an HTTP(S) request,
// the union of Azure's BasicAuthentication, ClientCertAuthentication and
// OAuthAuthentication. Password, Pfx and Secret are accepted and stored
// (a run needs them) but never shown: the API writes Redacted copies.
type Authentication struct {
	Type string `json:"type"`

	// Basic: Username and Password.
	Username string `json:"username,omitempty"`
	// Password is Basic's password or the PFX's password.
	Password string `json:"password,omitempty"`

	// ClientCertificate: Pfx (base64 PKCS#12) and Password; the
	// certificate fields are read-only, computed from Pfx by validation.
	Pfx                       string     `json:"pfx,omitempty"`
	CertificateThumbprint     string     `json:"certificateThumbprint,omitempty"`
	CertificateSubjectName    string     `json:"certificateSubjectName,omitempty"`
	CertificateExpirationDate *time.Time `json:"certificateExpirationDate,omitempty"`
	// CertificateExpiration is the same time under the name Azure's own
	// responses used (the contract says certificateExpirationDate):
	// clients read one or the other, so answers carry both. Only Redacted
	// copies, which answers are made of, set it.
	CertificateExpiration *time.Time `json:"certificateExpiration,omitempty"`

	// ActiveDirectoryOAuth: a client-credentials token for Audience from
	// the tenant's authority.
	Tenant   string `json:"tenant,omitempty"`
	Audience string `json:"audience,omitempty"`
	ClientID string `json:"clientId,omitempty"`
	Secret   string `json:"secret,omitempty"`
}

// Redacted returns a copy of a without its secrets (password, pfx,
// secret); what is left is what the API may show.
func (a Authentication) Redacted() Authentication {
	a.Password, a.Pfx, a.Secret = "", "", ""
	a.CertificateExpiration = a.CertificateExpirationDate
	return a
}

// Redacted returns a copy of j whose actions carry no authentication or
// signing secrets and no user info in their URIs: the form every API
// response must use. j itself, and whatever
// it shares with the copy, is left as it was.
func (j Job) Redacted() Job {
	if j.Properties.Action == nil {
		return j
	}
	a := j.Properties.Action.Redacted()
	j.Properties.Action = &a
	return j
}

// Redacted returns a copy of a without its secrets, as Job.Redacted.
func (a Action) Redacted() Action {
	a.ActionSpec = a.ActionSpec.redacted()
	if a.ErrorAction != nil {
		e := a.ErrorAction.redacted()
		a.ErrorAction = &e
	}
	return a
}

func (s ActionSpec) redacted() ActionSpec {
	s.QueueMessage = s.QueueMessage.redacted()
	s.ServiceBusQueueMessage = s.ServiceBusQueueMessage.redacted()
	s.ServiceBusTopicMessage = s.ServiceBusTopicMessage.redacted()
	if s.Request == nil {
		return s
	}
	r := *s.Request
	// New definitions have no user info (checkURIs); older ones may.
	r.URI = withoutUserinfo(r.URI)
	if r.Authentication != nil {
		auth := r.Authentication.Redacted()
		r.Authentication = &auth
	}
	r.Signing = r.Signing.redacted()
	s.Request = &r
	return s
}

// validateAuthentication checks the request's authentication and
// normalizes it: the type spelled as the service did, NotSpecified
// dropped, the fields of other types cleared and, for a client
// certificate, the certificate's thumbprint, subject and expiration
// computed from the PFX. Messages never quote a secret.
func (r *HTTPRequest) validateAuthentication(path string) error {
	a := r.Authentication
	if a == nil {
		return nil
	}
	typ, ok := canonical(a.Type, authTypes)
	if !ok {
		return invalidf(path+".type", "authentication type %q is not one of %s", a.Type, strings.Join(authTypes, ", "))
	}
	var err error
	switch typ {
	case AuthNotSpecified:
		r.Authentication = nil
		return nil
	case AuthBasic:
		*a = Authentication{Type: typ, Username: a.Username, Password: a.Password}
		err = a.validateBasic(path)
	case AuthClientCertificate:
		*a = Authentication{Type: typ, Pfx: a.Pfx, Password: a.Password}
		err = a.validateClientCertificate(path, r.URI)
	case AuthActiveDirectoryOAuth:
		*a = Authentication{Type: typ, Tenant: a.Tenant, Audience: a.Audience, ClientID: a.ClientID, Secret: a.Secret}
		err = a.validateOAuth(path)
	}
	return err
}

func (a *Authentication) validateBasic(path string) error {
	if a.Username == "" {
		return invalidf(path+".username", "username is required for Basic authentication")
	}
	if a.Password == "" {
		return invalidf(path+".password", "password is required for Basic authentication")
	}
	return nil
}

func (a *Authentication) validateClientCertificate(path, uri string) error {
	if a.Pfx == "" {
		return invalidf(path+".pfx", "pfx (the base64 of a PKCS#12 file) is required for ClientCertificate authentication")
	}
	if !strings.HasPrefix(strings.ToLower(uri), "https://") {
		return invalidf(path+".type", "ClientCertificate authentication needs an https uri")
	}
	// Decoding is a pure function of the PFX and its password, so it is
	// deterministic in workflows too; workflowcheck only sees the
	// runtime's garbage collector behind encoding/asn1 and crypto/x509.
	//workflowcheck:ignore
	if err := a.setCertificateInfo(); err != nil {
		return invalidf(path+".pfx", "%v", err)
	}
	return nil
}

// setCertificateInfo sets the certificate fields from the PFX.
func (a *Authentication) setCertificateInfo() error {
	cert, err := a.Certificate()
	if err != nil {
		return err
	}
	expires := cert.Leaf.NotAfter.UTC()
	a.CertificateThumbprint = thumbprint(cert.Leaf)
	a.CertificateSubjectName = cert.Leaf.Subject.String()
	a.CertificateExpirationDate = &expires
	return nil
}

// MaxPFXIterations bounds the key-derivation work a PFX may ask for:
// decoding runs in the API and in the job workflow's update validator,
// where a PFX asking for billions of iterations would stall both. Real
// PFX files use a few thousand.
const MaxPFXIterations = 1_000_000

// Certificate decodes a ClientCertificate authentication's PFX with its
// password into a TLS certificate (Leaf set, chain after it), the leaf
// being the certificate of the private key. Its errors never quote the
// PFX or the password.
func (a *Authentication) Certificate() (tls.Certificate, error) {
	der, err := base64.StdEncoding.DecodeString(strings.TrimSpace(a.Pfx))
	if err != nil {
		return tls.Certificate{}, errors.New("pfx is not valid base64")
	}
	if !boundedWork(der, 0) {
		return tls.Certificate{}, fmt.Errorf("pfx asks for more than %d key-derivation iterations", MaxPFXIterations)
	}
	key, first, rest, err := pkcs12.DecodeChain(der, a.Password)
	if err != nil {
		return tls.Certificate{}, pfxError(err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, fmt.Errorf("pfx private key of type %T cannot sign", key)
	}
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok {
		return tls.Certificate{}, fmt.Errorf("pfx private key of type %T is not supported", key)
	}
	// The PFX format does not say which certificate is the key's.
	var leaf *x509.Certificate
	var chain [][]byte
	for _, c := range append([]*x509.Certificate{first}, rest...) {
		if leaf == nil && pub.Equal(c.PublicKey) {
			leaf = c
			continue
		}
		chain = append(chain, c.Raw)
	}
	if leaf == nil {
		return tls.Certificate{}, errors.New("pfx holds no certificate of its private key")
	}
	return tls.Certificate{Certificate: append([][]byte{leaf.Raw}, chain...), PrivateKey: key, Leaf: leaf}, nil
}

// pfxError says in words why a PFX does not decode. The PKCS#12 decoder's
// errors for a malformed file are encoding/asn1's, which print Go's
// struct of the tag they met ("asn1: structure error: tags don't match
// (16 vs {class:1 tag:8 ...") and tell a user nothing.
func pfxError(err error) error {
	var unsupported pkcs12.NotImplementedError
	switch msg := strings.TrimPrefix(err.Error(), "pkcs12: "); {
	case errors.Is(err, pkcs12.ErrIncorrectPassword):
		return errors.New("pfx does not open with the password given: password incorrect")
	case errors.Is(err, pkcs12.ErrDecryption):
		return errors.New("pfx is damaged: its encrypted contents do not decrypt")
	case errors.As(err, &unsupported):
		return fmt.Errorf("pfx uses a form of PKCS#12 that recur does not read: %s", msg)
	case strings.Contains(msg, "asn1:"):
		return errors.New("pfx is not a PKCS#12 file: give the base64 of a whole .pfx or .p12 file, as `base64 -w0 cert.pfx` prints it")
	default:
		return fmt.Errorf("pfx is not a PKCS#12 file that recur can use: %s", msg)
	}
}

// boundedWork reports whether the iteration counts der shows stay within
// MaxPFXIterations. PKCS#12 puts each count (MAC, PBES1 and PBKDF2
// parameters) right after a salt: an INTEGER after an OCTET STRING in a
// SEQUENCE. Octet strings that are DER themselves (unencrypted safe
// contents) are searched too; encrypted ones cannot be, so a count hidden
// in an encrypted bag escapes the check.
func boundedWork(der []byte, depth int) bool {
	if depth > 12 {
		return true
	}
	afterSalt := false
	for len(der) > 0 {
		var v asn1.RawValue
		rest, err := asn1.Unmarshal(der, &v)
		if err != nil {
			return true // not DER: decoding will say what is wrong
		}
		der = rest
		universal := v.Class == asn1.ClassUniversal
		switch {
		case universal && v.Tag == asn1.TagInteger && afterSalt:
			if new(big.Int).SetBytes(v.Bytes).Cmp(big.NewInt(MaxPFXIterations)) > 0 {
				return false
			}
		case v.IsCompound, universal && v.Tag == asn1.TagOctetString:
			if !boundedWork(v.Bytes, depth+1) {
				return false
			}
		}
		afterSalt = universal && v.Tag == asn1.TagOctetString
	}
	return true
}

func (a *Authentication) validateOAuth(path string) error {
	for _, f := range []struct{ name, value string }{
		{"tenant", a.Tenant}, {"audience", a.Audience}, {"clientId", a.ClientID}, {"secret", a.Secret},
	} {
		if f.value == "" {
			return invalidf(path+"."+f.name, "%s is required for ActiveDirectoryOAuth authentication", f.name)
		}
	}
	// The tenant becomes a segment of the authority's URL path.
	if !validTenant(a.Tenant) {
		return invalidf(path+".tenant", "tenant %q must be a tenant ID or domain name (letters, digits, '.', '-', '_')", a.Tenant)
	}
	return nil
}

func validTenant(s string) bool {
	if s == "." || s == ".." || len(s) > 256 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// thumbprint is a certificate's thumbprint as Azure wrote it: SHA-1,
// upper-case hex.
func thumbprint(c *x509.Certificate) string {
	sum := sha1.Sum(c.Raw)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}
