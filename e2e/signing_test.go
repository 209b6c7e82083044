package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/standardwebhooks"
	"github.com/recurhq/recur/jobs"
)

// The secrets of a rotation: the old one, and the new one added beside it.
var (
	oldSigningSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("e2e old signing key, 32 bytes ok"))
	newSigningSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("e2e new signing key, 32 bytes ok"))
)

// signedCall is a call the signing target received, and the verdicts on
// it with each secret as it arrived: the library's, and that of the Go
// function docs/security.md shows (verified).
type signedCall struct {
	header   http.Header
	body     []byte
	at       time.Time
	verdicts map[string]error
	verified map[string]bool
}

// verified is the Go a target verifies with in docs/security.md, as it is
// written there.
func verified(secret string, h http.Header, body []byte, now time.Time) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	ts, perr := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	if err != nil || perr != nil || now.Sub(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}

// signingTarget hands each call to the Standard Webhooks library, with
// each of the rotation's secrets apart, and answers 500 to the first call
// of the job, 200 to the others.
func signingTarget(t *testing.T, v *standardwebhooks.Verifier) (*httptest.Server, chan signedCall) {
	got := make(chan signedCall, 16)
	var mu sync.Mutex
	calls := 0
	srv := newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c := signedCall{header: r.Header.Clone(), body: body, at: time.Now(), verdicts: map[string]error{}, verified: map[string]bool{}}
		for _, secret := range []string{oldSigningSecret, newSigningSecret} {
			c.verdicts[secret] = v.Verify(secret, c.header, c.body, c.at)
			c.verified[secret] = verified(secret, c.header, c.body, c.at)
		}
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		got <- c
		if first {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	t.Cleanup(srv.Close)
	return srv, got
}

func nextSignedCall(t *testing.T, got chan signedCall, what string) signedCall {
	t.Helper()
	select {
	case c := <-got:
		return c
	case <-time.After(60 * time.Second):
		t.Fatalf("the target never got %s", what)
		return signedCall{}
	}
}

// requireNoSigningSecret fails when an API answer shows a signing secret.
func requireNoSigningSecret(t *testing.T, body map[string]any) {
	t.Helper()
	data, err := json.Marshal(body)
	require.NoError(t, err)
	require.NotContains(t, string(data), "whsec_")
	for _, secret := range []string{oldSigningSecret, newSigningSecret} {
		require.NotContains(t, string(data), strings.TrimPrefix(secret, "whsec_"))
	}
}

// TestSignedCallsVerifyWithTheReferenceLibrary runs a job that signs with
// two secrets against a target that verifies each call with Standard
// Webhooks' reference library: its first attempt (answered 500) and its
// retry carry the occurrence's webhook-id and verify with either secret;
// the same call with a tampered body, or arriving more than five minutes
// later (replayed), is refused. The rotation ends with a PUT that drops
// the old secret: the next call verifies with the new one only. No answer
// and no raw history shows a secret.
func TestSignedCallsVerifyWithTheReferenceLibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: its retry is 15 s after its first attempt, the least an interval may be")
	}
	t.Parallel() // it waits on timers: beside the others (TestMain)
	s := newStack(t)
	v := standardwebhooks.Start(t)
	target, got := signingTarget(t, v)
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)

	// rawHistories reads the job of this name.
	const job = "secret"
	jobPath := collectionPath + "/jobs/" + job
	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	definition := func(secrets ...string) map[string]any {
		return map[string]any{"properties": map[string]any{
			"startTime":  start.Format(time.RFC3339),
			"recurrence": map[string]any{"frequency": "Hour"},
			"action": map[string]any{"type": "Http",
				"request": map[string]any{"uri": target.URL + "/hook", "method": "POST", "body": `{"order": 42}`,
					"headers": map[string]any{"Content-Type": "application/json"},
					"signing": map[string]any{"secrets": secrets}},
				"retryPolicy": map[string]any{"retryType": "Fixed", "retryCount": 1, "retryInterval": "PT15S"}},
		}}
	}
	status, body = s.do(t, http.MethodPut, jobPath, definition(oldSigningSecret, newSigningSecret))
	require.Equal(t, http.StatusCreated, status, body)
	requireNoSigningSecret(t, body)
	require.EqualValues(t, 2, path(body, "properties", "action", "request", "signing", "secretCount"))

	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: job}
	wantID := jobs.WebhookID(jobs.OccurrenceID(k.JobWorkflowID(), start), jobs.MainAction)
	first := nextSignedCall(t, got, "the first attempt")
	retry := nextSignedCall(t, got, "the retry")
	for i, c := range []signedCall{first, retry} {
		require.Equal(t, wantID, c.header.Get("webhook-id"), "call %d: the occurrence's id, on every attempt", i)
		require.Equal(t, `{"order": 42}`, string(c.body))
		for secret, verdict := range c.verdicts {
			require.NoError(t, verdict, "call %d verifies with each secret of the rotation (%s...)", i, secret[:10])
			require.True(t, c.verified[secret], "call %d, in Go", i)
		}
	}
	firstSent, err := strconv.ParseInt(first.header.Get("webhook-timestamp"), 10, 64)
	require.NoError(t, err)
	retrySent, err := strconv.ParseInt(retry.header.Get("webhook-timestamp"), 10, 64)
	require.NoError(t, err)
	require.Greater(t, retrySent, firstSent, "each attempt is signed as it is sent")

	tampered, replayed := []byte(`{"order": 43}`), retry.at.Add(5*time.Minute+2*time.Second)
	require.ErrorContains(t, v.Verify(newSigningSecret, retry.header, tampered, retry.at),
		"No matching signature", "a tampered body is refused")
	require.ErrorContains(t, v.Verify(newSigningSecret, retry.header, retry.body, replayed),
		"too old", "the call replayed over five minutes later is refused")
	require.False(t, verified(newSigningSecret, retry.header, tampered, retry.at))
	require.False(t, verified(newSigningSecret, retry.header, retry.body, replayed))

	for _, p := range []string{jobPath, collectionPath + "/jobs"} {
		status, body = s.do(t, http.MethodGet, p, nil)
		require.Equal(t, http.StatusOK, status, body)
		requireNoSigningSecret(t, body)
	}

	// The rotation's second write drops the old secret.
	status, body = s.do(t, http.MethodPut, jobPath, definition(newSigningSecret))
	require.Equal(t, http.StatusOK, status, body)
	require.EqualValues(t, 1, path(body, "properties", "action", "request", "signing", "secretCount"))
	status, body = s.do(t, http.MethodPost, jobPath+"/run", nil)
	require.Equal(t, http.StatusOK, status, body)
	rotated := nextSignedCall(t, got, "the call after the rotation")
	require.NoError(t, rotated.verdicts[newSigningSecret])
	require.ErrorContains(t, rotated.verdicts[oldSigningSecret], "No matching signature", "the old secret no longer signs")
	require.True(t, rotated.verified[newSigningSecret])
	require.False(t, rotated.verified[oldSigningSecret])
	require.NotEqual(t, wantID, rotated.header.Get("webhook-id"), "another occurrence, another id")

	// A PATCH that does not mention signing keeps the secret.
	status, body = s.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{
		"action": map[string]any{"request": map[string]any{"body": `{"order": 44}`}}}})
	require.Equal(t, http.StatusOK, status, body)
	requireNoSigningSecret(t, body)
	status, body = s.do(t, http.MethodPost, jobPath+"/run", nil)
	require.Equal(t, http.StatusOK, status, body)
	patched := nextSignedCall(t, got, "the call after the PATCH")
	require.Equal(t, `{"order": 44}`, string(patched.body))
	require.NoError(t, patched.verdicts[newSigningSecret])

	raw := rawHistories(t, s)
	for _, secret := range []string{oldSigningSecret, newSigningSecret} {
		require.False(t, containsAny(raw, strings.TrimPrefix(secret, "whsec_")), "a signing secret is in a raw history")
	}
}
