package activities

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/recurhq/recur/jobs"
)

// Two signing secrets, as during a rotation.
var (
	signingKeys    = [][]byte{[]byte("0123456789abcdef01234567"), []byte("another key of thirty-two bytes!")}
	signingSecrets = []string{"whsec_" + base64.StdEncoding.EncodeToString(signingKeys[0]),
		"whsec_" + base64.StdEncoding.EncodeToString(signingKeys[1])}
)

// signedInput is the input of an attempt of a signed HTTP action of job j
// at 2026-11-27T08:00Z.
func signedInput(uri string, headers map[string]string) jobs.HTTPRequestInput {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	nominal := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	return jobs.HTTPRequestInput{ActionName: jobs.MainAction, Key: k, Nominal: nominal,
		OccurrenceID: jobs.OccurrenceID(k.JobWorkflowID(), nominal), Timeout: 10 * time.Second,
		Request: jobs.HTTPRequest{URI: uri, Method: "POST", Body: `{"n": 1}`, Headers: headers,
			Signing: &jobs.Signing{Secrets: signingSecrets}}}
}

func runHTTPInput(t *testing.T, a *Activities, in jobs.HTTPRequestInput) error {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	_, err := env.ExecuteActivity(a.HTTP, in)
	return err
}

// hmacV1 is a v1 signature computed here, apart from jobs.Signing.
func hmacV1(key []byte, id, timestamp, body string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "." + body))
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// TestASignedCallCarriesStandardWebhooksHeaders: every attempt of a
// signed action carries the occurrence's webhook-id, its own send time
// and one signature per secret; the job's own headers of those names (a
// definition stored before validation refused them) do not get through.
func TestASignedCallCarriesStandardWebhooksHeaders(t *testing.T) {
	got := make(chan *http.Request, 2)
	bodies := make(chan string, 2)
	target := newCountingTarget(t, false, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- r
		bodies <- string(body)
	})
	in := signedInput(target.URL+"/hook", map[string]string{"Webhook-Signature": "v1,forged", "webhook-id": "msg_forged"})
	wantID := jobs.WebhookID(in.OccurrenceID, jobs.MainAction)
	for attempt := range 2 {
		before := time.Now().Unix()
		require.NoError(t, runHTTPInput(t, New(localPolicy), in))
		after := time.Now().Unix()
		r, body := <-got, <-bodies
		require.Equal(t, `{"n": 1}`, body)
		require.Equal(t, wantID, r.Header.Get("webhook-id"), "attempt %d: the occurrence's id, every attempt", attempt)
		require.Len(t, r.Header.Values("webhook-id"), 1)
		ts := r.Header.Get("webhook-timestamp")
		sent, err := strconv.ParseInt(ts, 10, 64)
		require.NoError(t, err)
		require.True(t, before <= sent && sent <= after, "the attempt's send time: %d in [%d, %d]", sent, before, after)
		require.Equal(t, hmacV1(signingKeys[0], wantID, ts, body)+" "+hmacV1(signingKeys[1], wantID, ts, body),
			r.Header.Get("webhook-signature"))
		require.Len(t, r.Header.Values("webhook-signature"), 1)
	}

	plain := signedInput(target.URL+"/hook", nil)
	plain.Request.Signing = nil
	require.NoError(t, runHTTPInput(t, New(localPolicy), plain))
	r := <-got
	<-bodies
	for _, name := range jobs.SigningHeaders {
		require.Empty(t, r.Header.Values(name), "a call that does not sign sends no %s", name)
	}
}

// TestARerunIsSignedAsTheRunItRunsAgain: a re-run's calls carry the
// webhook-id (and so the signature) of the occurrence it runs again, and
// its own idempotency key.
func TestARerunIsSignedAsTheRunItRunsAgain(t *testing.T) {
	got := make(chan *http.Request, 1)
	target := newCountingTarget(t, false, func(w http.ResponseWriter, r *http.Request) { got <- r })
	in := signedInput(target.URL+"/hook", nil)
	original := in.OccurrenceID
	in.OccurrenceID, in.SignedAs = original+"/rerun-1", original
	require.NoError(t, runHTTPInput(t, New(localPolicy), in))
	r := <-got
	wantID := jobs.WebhookID(original, jobs.MainAction)
	require.Equal(t, wantID, r.Header.Get("webhook-id"))
	ts := r.Header.Get("webhook-timestamp")
	require.Equal(t, hmacV1(signingKeys[0], wantID, ts, in.Request.Body)+" "+hmacV1(signingKeys[1], wantID, ts, in.Request.Body),
		r.Header.Get("webhook-signature"))
	require.Equal(t, original+"/rerun-1", r.Header.Get(HeaderIdempotencyKey))
}

// TestASignedCallIsNotSignedForAnotherOrigin: a redirect the egress
// policy follows to another origin carries none of the three headers (a
// signed call is its target's: another could replay it there); within
// the origin it carries them.
func TestASignedCallIsNotSignedForAnotherOrigin(t *testing.T) {
	first, other, got := redirectingTargets(t)

	require.NoError(t, runHTTPInput(t, New(localPolicy), signedInput(first.URL+"/?to="+other.URL+"/landed", nil)))
	h := <-got
	for _, name := range jobs.SigningHeaders {
		require.Empty(t, h.Get(name), "%s went to another origin", name)
	}
	require.NoError(t, runHTTPInput(t, New(localPolicy), signedInput(first.URL+"/?to="+first.URL+"/landed", nil)))
	h = <-got
	for _, name := range jobs.SigningHeaders {
		require.NotEmpty(t, h.Get(name), "%s within the origin", name)
	}
}
