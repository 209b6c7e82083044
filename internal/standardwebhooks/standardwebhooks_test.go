package standardwebhooks_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/standardwebhooks"
	"github.com/recurhq/recur/jobs"
)

// TestTheLibraryVerifiesRecursSignatures: a signature of jobs.Signing
// verifies with the library for each of its secrets; a tampered body,
// another secret, a call older or newer than five minutes and a call
// without a signature do not. The specification's own example verifies.
func TestTheLibraryVerifiesRecursSignatures(t *testing.T) {
	v := standardwebhooks.Start(t)
	const spec = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specHeader := http.Header{"Webhook-Id": {"msg_p5jXN8AQM9LWM0D4loKWxJek"}, "Webhook-Timestamp": {"1614265330"},
		"Webhook-Signature": {"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="}}
	require.NoError(t, v.Verify(spec, specHeader, []byte(`{"test": 2432232314}`), time.Unix(1614265330, 0)))

	other := "whsec_dGhlIG90aGVyIHNlY3JldCwgdGhpcnR5LXR3byBieXQ="
	unused := "whsec_YW4gdW51c2VkIHNlY3JldCBvZiAzMiBieXRlcywgb2s="
	sent := time.Now().Truncate(time.Second)
	body := []byte("not JSON: a body is any text")
	sig, err := (&jobs.Signing{Secrets: []string{spec, other}}).Signature("msg_x", sent, body)
	require.NoError(t, err)
	header := http.Header{}
	header.Set(jobs.HeaderWebhookID, "msg_x")
	header.Set(jobs.HeaderWebhookTimestamp, strconv.FormatInt(sent.Unix(), 10))
	header.Set(jobs.HeaderWebhookSignature, sig)
	for _, secret := range []string{spec, other} {
		require.NoError(t, v.Verify(secret, header, body, sent))
		require.NoError(t, v.Verify(secret, header, body, sent.Add(5*time.Minute)), "within the tolerance")
	}
	require.ErrorContains(t, v.Verify(spec, header, []byte("not JSON: a body is any text!"), sent), "No matching signature")
	require.ErrorContains(t, v.Verify(unused, header, body, sent), "No matching signature")
	require.ErrorContains(t, v.Verify(spec, header, body, sent.Add(5*time.Minute+time.Second)), "too old")
	require.ErrorContains(t, v.Verify(spec, header, body, sent.Add(-5*time.Minute-time.Second)), "too new")
	header.Del(jobs.HeaderWebhookSignature)
	require.ErrorContains(t, v.Verify(spec, header, body, sent), "Missing required headers")
}
