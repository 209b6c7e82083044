package jobs_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// The Standard Webhooks specification's own example: its secret, message,
// timestamp and payload, and the signature it gives.
const (
	specSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTimestamp = 1614265330
	specPayload   = `{"test": 2432232314}`
	specSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

// otherSecret is a second valid secret: 32 bytes.
var otherSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

func TestSignatureIsTheSpecifications(t *testing.T) {
	s := &jobs.Signing{Secrets: []string{specSecret}}
	got, err := s.Signature(specID, time.Unix(specTimestamp, 0), []byte(specPayload))
	require.NoError(t, err)
	require.Equal(t, specSignature, got)
}

// TestEverySecretSignsDuringARotation: two secrets give two signatures,
// space-separated, each the one its secret alone gives.
func TestEverySecretSignsDuringARotation(t *testing.T) {
	at := time.Unix(specTimestamp, 0)
	other, err := (&jobs.Signing{Secrets: []string{otherSecret}}).Signature(specID, at, []byte(specPayload))
	require.NoError(t, err)
	require.NotEqual(t, specSignature, other)
	both, err := (&jobs.Signing{Secrets: []string{specSecret, otherSecret}}).Signature(specID, at, []byte(specPayload))
	require.NoError(t, err)
	require.Equal(t, specSignature+" "+other, both)
}

// TestWebhookIDIsTheOccurrences: the id is a function of the occurrence
// (the job and the nominal time, and a run now's place among those of
// its time) and the action alone, and stays what it is: a target that
// deduplicates on it, and a run of the occurrence again, rely on it
// across versions of recur.
func TestWebhookIDIsTheOccurrences(t *testing.T) {
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "job1"}
	nominal := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	occurrence := jobs.OccurrenceID(k.JobWorkflowID(), nominal)
	id := jobs.WebhookID(occurrence, jobs.MainAction)
	require.Equal(t, "msg_c36fac69cb4955a16f4cae4f61d476e6", id,
		"sha256 of the occurrence ID and the action's name, cut to 16 bytes: the derivation never changes")

	other := k
	other.Job = "job2"
	for name, differs := range map[string]string{
		"another job":                        jobs.WebhookID(jobs.OccurrenceID(other.JobWorkflowID(), nominal), jobs.MainAction),
		"another occurrence":                 jobs.WebhookID(jobs.OccurrenceID(k.JobWorkflowID(), nominal.Add(time.Second)), jobs.MainAction),
		"a run now of the same nominal time": jobs.WebhookID(occurrence+"/run-now", jobs.MainAction),
		"the error action":                   jobs.WebhookID(occurrence, jobs.ErrorAction),
	} {
		require.NotEqual(t, id, differs, name)
		require.True(t, strings.HasPrefix(differs, "msg_"), name)
	}
	require.NotEqual(t, jobs.WebhookID(occurrence+"/run-now", jobs.MainAction), jobs.WebhookID(occurrence+"/run-now-2", jobs.MainAction),
		"two runs now of one workflow task")
}

// signedJob is a valid Http job whose action and error action sign with
// secrets and errorSecrets.
func signedJob(secrets, errorSecrets []string) jobs.Job {
	j := httpJob(nil, nil)
	j.Properties.Action.Request.Signing = &jobs.Signing{Secrets: secrets}
	if errorSecrets != nil {
		j.Properties.Action.ErrorAction.Request.Signing = &jobs.Signing{Secrets: errorSecrets}
	}
	return j
}

func TestSigningSecretsAreAccepted(t *testing.T) {
	j := signedJob([]string{specSecret, otherSecret}, []string{otherSecret})
	j.Properties.Action.Request.Signing.SecretCount = 7
	j.Properties.Action.Request.Headers = map[string]string{"X-Webhook-Idea": "not one of the three"}
	require.Nil(t, normalizeError(t, j))
	require.Equal(t, &jobs.Signing{Secrets: []string{specSecret, otherSecret}}, j.Properties.Action.Request.Signing,
		"stored with its secrets; the count is the answers' alone")

	longest := "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, jobs.MaxSigningKey))
	shortest := "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, jobs.MinSigningKey))
	require.Nil(t, normalizeError(t, signedJob([]string{longest, shortest}, nil)))
}

// TestBadSigningIsRefused: each fault is a 400 naming the field, and no
// message quotes a secret.
func TestBadSigningIsRefused(t *testing.T) {
	const req = "properties.action.request"
	short := "whsec_" + base64.StdEncoding.EncodeToString([]byte("s3cret-but-short"))
	long := "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, jobs.MaxSigningKey+1))
	six := []string{specSecret, specSecret, specSecret, specSecret, specSecret, specSecret}
	for _, tc := range []struct {
		name         string
		job          jobs.Job
		target, says string
	}{
		{"no secrets", signedJob(nil, nil), req + ".signing.secrets", "secrets is required"},
		{"an empty list", signedJob([]string{}, nil), req + ".signing.secrets", "secrets is required"},
		{"too many", signedJob(six, nil), req + ".signing.secrets", "6 secrets; at most 5"},
		{"no prefix", signedJob([]string{strings.TrimPrefix(specSecret, "whsec_")}, nil), req + ".signing.secrets[0]", `starts with "whsec_"`},
		{"another scheme's", signedJob([]string{specSecret, "whsk_" + specSecret[6:]}, nil), req + ".signing.secrets[1]", `starts with "whsec_"`},
		{"not base64", signedJob([]string{"whsec_s3cret!!not*base64"}, nil), req + ".signing.secrets[0]", "standard base64"},
		{"unpadded", signedJob([]string{strings.TrimRight(short, "=")}, nil), req + ".signing.secrets[0]", "standard base64"},
		{"a short key", signedJob([]string{short}, nil), req + ".signing.secrets[0]", "16 bytes; it must be 24 to 64"},
		{"a long key", signedJob([]string{long}, nil), req + ".signing.secrets[0]", "65 bytes"},
		{"in the error action", signedJob([]string{specSecret}, []string{short}), req[:len(req)-len("request")] + "errorAction.request.signing.secrets[0]", "16 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := normalizeError(t, tc.job)
			require.NotNil(t, e)
			require.Equal(t, tc.target, e.Target)
			require.Contains(t, e.Message, tc.says)
			for _, secret := range append([]string{specSecret, short, "s3cret"}, six...) {
				require.NotContains(t, e.Message, strings.TrimPrefix(secret, "whsec_"))
			}
		})
	}
}

// TestASignedRequestCannotSetTheSignaturesHeaders: a job that signs may
// not send webhook-id, webhook-timestamp or webhook-signature of its own,
// in any letter case: a target trusts all three. One that does not sign
// may.
func TestASignedRequestCannotSetTheSignaturesHeaders(t *testing.T) {
	for _, name := range []string{"webhook-id", "Webhook-Timestamp", "WEBHOOK-SIGNATURE"} {
		j := signedJob([]string{specSecret}, nil)
		j.Properties.Action.Request.Headers = map[string]string{name: "forged"}
		e := normalizeError(t, j)
		require.NotNil(t, e, name)
		require.Equal(t, "properties.action.request.headers", e.Target)
		require.Contains(t, e.Message, "header "+name+" is recur's to set on a signed request")

		j = signedJob([]string{specSecret}, []string{specSecret})
		j.Properties.Action.ErrorAction.Request.Headers = map[string]string{name: "forged"}
		e = normalizeError(t, j)
		require.NotNil(t, e, name)
		require.Equal(t, "properties.action.errorAction.request.headers", e.Target)

		require.Nil(t, normalizeError(t, httpJob(map[string]string{name: "theirs"}, nil)), "without signing it is the job's own header")
	}
}

// TestSigningSecretsAreNeverShown: the answers' and the memo's forms of a
// job carry no signing secret, only how many there are; the definition
// itself keeps them.
func TestSigningSecretsAreNeverShown(t *testing.T) {
	j := signedJob([]string{specSecret, otherSecret}, []string{otherSecret})
	require.Nil(t, normalizeError(t, j))
	before, err := json.Marshal(j)
	require.NoError(t, err)

	st := jobs.JobState{Job: j}
	memo, _ := st.Views(false)
	for name, shown := range map[string]jobs.Job{"Redacted": j.Redacted(), "Public": j.Public(), "memo": memo.Job} {
		data, err := json.Marshal(shown)
		require.NoError(t, err)
		for _, secret := range []string{specSecret, otherSecret} {
			require.NotContains(t, string(data), strings.TrimPrefix(secret, "whsec_"), name)
		}
		require.NotContains(t, string(data), "whsec_", name)
		require.Equal(t, &jobs.Signing{SecretCount: 2}, shown.Properties.Action.Request.Signing, name)
		require.Equal(t, &jobs.Signing{SecretCount: 1}, shown.Properties.Action.ErrorAction.Request.Signing, name)
	}

	after, err := json.Marshal(j)
	require.NoError(t, err)
	require.JSONEq(t, string(before), string(after), "Redacted leaves the stored definition whole")

	// A client that PUTs back what it read is told to give the secrets.
	back := j.Public()
	back.Properties.State = jobs.Enabled
	e := normalizeError(t, back)
	require.NotNil(t, e)
	require.Equal(t, "properties.action.request.signing.secrets", e.Target)
}

// TestAPatchKeepsOrReplacesTheSigningSecrets: a PATCH that leaves signing
// out keeps the stored secrets (the workflow merges it into the
// definition that holds them); one that gives secrets replaces the list
// whole, as a rotation's two writes do; null turns signing off.
func TestAPatchKeepsOrReplacesTheSigningSecrets(t *testing.T) {
	j := signedJob([]string{specSecret}, nil)
	require.Nil(t, normalizeError(t, j))
	for _, tc := range []struct {
		patch string
		want  *jobs.Signing
	}{
		{`{"properties":{"action":{"request":{"body":"new"}}}}`, &jobs.Signing{Secrets: []string{specSecret}}},
		{`{"properties":{"action":{"request":{"signing":{"secrets":["` + specSecret + `","` + otherSecret + `"]}}}}}`,
			&jobs.Signing{Secrets: []string{specSecret, otherSecret}}},
		{`{"properties":{"action":{"request":{"signing":{"secrets":["` + otherSecret + `"]}}}}}`, &jobs.Signing{Secrets: []string{otherSecret}}},
		{`{"properties":{"action":{"request":{"signing":null}}}}`, nil},
	} {
		got, err := jobs.PatchJob(j, json.RawMessage(tc.patch))
		require.NoError(t, err, tc.patch)
		require.Nil(t, normalizeError(t, got), tc.patch)
		require.Equal(t, tc.want, got.Properties.Action.Request.Signing, tc.patch)
	}
}
