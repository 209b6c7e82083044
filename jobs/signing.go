package jobs

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Signing is recur's extension of an HTTP(S) request: the Standard
// Webhooks (standardwebhooks.com) secrets that sign each of its calls, so
// that a target can tell a call came from its scheduler and was not
// replayed. With more than one secret every call carries one signature
// per secret: a rotation adds the new secret with one write and drops the
// old with a later one, and the target moves from one to the other in
// between. The secrets are stored but never shown (see Job.Redacted).
type Signing struct {
	// Secrets are "whsec_" and the base64 of a key of MinSigningKey to
	// MaxSigningKey bytes, as Standard Webhooks' libraries make and read
	// them.
	Secrets []string `json:"secrets,omitempty"`
	// SecretCount is how many secrets sign the calls: answers show it in
	// their place. Only Redacted copies set it.
	SecretCount int `json:"secretCount,omitempty"`
}

// The headers of a signed call. A job that signs may not set them itself.
const (
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
)

// SigningHeaders are the headers a signed call carries.
var SigningHeaders = []string{HeaderWebhookID, HeaderWebhookTimestamp, HeaderWebhookSignature}

// Limits of a request's signing secrets: the specification's advice for
// a key's size, and enough secrets for a rotation with room to spare.
const (
	SigningSecretPrefix = "whsec_"
	MinSigningKey       = 24
	MaxSigningKey       = 64
	MaxSigningSecrets   = 5
)

// redacted returns s without its secrets, counted.
func (s *Signing) redacted() *Signing {
	if s == nil {
		return nil
	}
	return &Signing{SecretCount: len(s.Secrets)}
}

// validateSigning checks the signing secrets of the request at path, and
// that its own headers do not stand in for the signature's: a target must
// be able to trust all three. SecretCount, which only answers show, is
// dropped. Messages never quote a secret.
func (r *HTTPRequest) validateSigning(path string) error {
	s := r.Signing
	if s == nil {
		return nil
	}
	s.SecretCount = 0
	if len(s.Secrets) == 0 {
		return invalidf(path+".signing.secrets", "secrets is required: 1 to %d %s secrets (answers never show them: a PUT gives them again)",
			MaxSigningSecrets, SigningSecretPrefix)
	}
	if len(s.Secrets) > MaxSigningSecrets {
		return invalidf(path+".signing.secrets", "%d secrets; at most %d are allowed", len(s.Secrets), MaxSigningSecrets)
	}
	for i, secret := range s.Secrets {
		if _, err := signingKey(secret); err != nil {
			return invalidf(fmt.Sprintf("%s.signing.secrets[%d]", path, i), "%v", err)
		}
	}
	for _, name := range sortedKeys(r.Headers) {
		for _, signed := range SigningHeaders {
			if strings.EqualFold(name, signed) {
				return invalidf(path+".headers",
					"header %s is recur's to set on a signed request: remove it, or remove signing", name)
			}
		}
	}
	return nil
}

// signingKey returns the key of a signing secret: the base64 after
// "whsec_". Its errors never quote the secret.
func signingKey(secret string) ([]byte, error) {
	encoded, ok := strings.CutPrefix(secret, SigningSecretPrefix)
	if !ok {
		return nil, fmt.Errorf("a signing secret starts with %q and goes on with base64", SigningSecretPrefix)
	}
	key, err := base64.StdEncoding.Strict().DecodeString(encoded)
	if err != nil {
		return nil, errors.New("a signing secret's part after " + SigningSecretPrefix + " must be standard base64 (padded)")
	}
	if len(key) < MinSigningKey || len(key) > MaxSigningKey {
		return nil, fmt.Errorf("a signing secret's key is %d bytes; it must be %d to %d (as `openssl rand -base64 32` makes one)",
			len(key), MinSigningKey, MaxSigningKey)
	}
	return key, nil
}

// Signature returns a call's webhook-signature header: "v1," and the
// base64 of HMAC-SHA256(key, id "." timestamp "." body) for each secret,
// space-separated. Its errors never quote a secret.
func (s *Signing) Signature(id string, timestamp time.Time, body []byte) (string, error) {
	signed := id + "." + strconv.FormatInt(timestamp.Unix(), 10) + "."
	sigs := make([]string, 0, len(s.Secrets))
	for i, secret := range s.Secrets {
		key, err := signingKey(secret)
		if err != nil {
			return "", fmt.Errorf("signing secret %d: %w", i, err)
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(signed))
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}

// WebhookID is the webhook-id of the calls of one action of one
// occurrence: "msg_" and a digest of the occurrence's ID (the job's
// workflow ID and the nominal time, and for a run now its place among the
// runs now of that time) and the action's name. Every attempt of the
// action sends it, and so would a run of the same occurrence again, so a
// target deduplicates on it; the main and the error action of an
// occurrence are two messages and have two.
func WebhookID(occurrenceID, action string) string {
	sum := sha256.Sum256([]byte(occurrenceID + "\n" + action))
	return "msg_" + hex.EncodeToString(sum[:16])
}
