package contract

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/internal/recurtest"
)

// What Azure Scheduler's own recorded traffic of 2016 (its SDK's scenario
// tests against the live service) sent and was answered, replayed: each
// test is a request the service took that recur once refused or answered
// otherwise.

// TestSuspendedCollection: the contract's JobCollectionState has
// Suspended, and Azure took a PUT with it. recur keeps it as given, lists
// it, and a suspended collection's jobs do not run, as a disabled one's;
// enable makes it Enabled and its jobs run again.
func TestSuspendedCollection(t *testing.T) {
	s := newStack(t)
	tg := newTarget(t)
	coll := armPrefix + "/jobCollections/" + unique("suspended")
	status, body := s.do(t, http.MethodPut, coll, map[string]any{"location": "North Central US",
		"properties": map[string]any{"sku": map[string]any{"name": "Standard"}, "state": "Suspended"}})
	require.Equal(t, http.StatusCreated, status, body)
	assert.Equal(t, "Suspended", field(body, "properties", "state"), "written back as Azure wrote it")
	status, body = s.do(t, http.MethodGet, coll, nil)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, "Suspended", field(body, "properties", "state"))

	status, body = s.do(t, http.MethodPatch, coll, map[string]any{"properties": map[string]any{"state": "Enabled"}})
	require.Equal(t, http.StatusOK, status, body)
	status, body = s.do(t, http.MethodPut, coll+"/jobs/j", map[string]any{"properties": map[string]any{
		"startTime":  time.Now().UTC().Add(time.Hour).Format(time.RFC3339),
		"action":     map[string]any{"type": "Http", "request": map[string]any{"uri": tg.URL, "method": "GET"}},
		"recurrence": map[string]any{"frequency": "Hour"},
	}})
	require.Equal(t, http.StatusCreated, status, body)
	jobState := func() any {
		_, body := s.do(t, http.MethodGet, coll+"/jobs/j", nil)
		return field(body, "properties", "state")
	}
	status, body = s.do(t, http.MethodPatch, coll, map[string]any{"properties": map[string]any{"state": "suspended"}})
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, "Suspended", field(body, "properties", "state"))
	require.Eventually(t, func() bool { return jobState() == "disabled" }, 10*time.Second, 100*time.Millisecond,
		"a suspended collection's jobs do not run")
	require.Eventually(t, func() bool {
		_, list := s.do(t, http.MethodGet, armPrefix+"/jobCollections", nil)
		rows, _ := list["value"].([]any)
		for _, r := range rows {
			if row, _ := r.(map[string]any); field(row, "id") == coll {
				return field(row, "properties", "state") == "Suspended"
			}
		}
		return false
	}, 10*time.Second, 200*time.Millisecond, "listed as Suspended")

	status, body = s.do(t, http.MethodPost, coll+"/enable", nil)
	require.Equal(t, http.StatusOK, status, body)
	_, body = s.do(t, http.MethodGet, coll, nil)
	assert.Equal(t, "enabled", field(body, "properties", "state"), "as the service wrote Enabled")
	require.Eventually(t, func() bool { return jobState() == "enabled" }, 10*time.Second, 100*time.Millisecond)
}

// TestCredentialsAreTheServicesToJudge: Azure took a storage queue
// sasToken of "ThIsiSmYtOkeNdoyOusEe" and Service Bus credentials of any
// shape; so does recur (the run fails if storage refuses them), and
// never shows them.
func TestCredentialsAreTheServicesToJudge(t *testing.T) {
	s := newStack(t)
	coll := s.newCollection(t, "credentials")
	later := time.Now().UTC().Add(time.Hour).Format(time.RFC3339)
	for name, action := range map[string]map[string]any{
		"storage queue": {"type": "StorageQueue", "queueMessage": map[string]any{
			"storageAccount": "schedulersdktest", "queueName": "queue1", "sasToken": "ThIsiSmYtOkeNdoyOusEe", "message": "some message!"}},
		"service bus": {"type": "ServiceBusQueue", "serviceBusQueueMessage": map[string]any{
			"namespace": "scheduler-sdktest", "queueName": "queue1", "message": "some message!", "transportType": "NetMessaging",
			"authentication": map[string]any{"type": "SharedAccessKey", "sasKeyName": "Root Manage&Shared", "sasKey": "not base64 at all!"}}},
	} {
		status, body := s.do(t, http.MethodPut, coll+"/jobs/"+unique("j"), map[string]any{"properties": map[string]any{
			"startTime": later, "action": action}})
		require.Equal(t, http.StatusCreated, status, "%s: %v", name, body)
		assert.NotContains(t, body, "ThIsiSmYtOkeNdoyOusEe")
		assert.Nil(t, field(body, "properties", "action", "serviceBusQueueMessage", "authentication", "sasKey"), name)
	}
}

// TestClientCertificateExpiryUnderBothNames: Azure's answers named the
// expiry certificateExpiration, the contract certificateExpirationDate;
// recur answers both, with the same value.
func TestClientCertificateExpiryUnderBothNames(t *testing.T) {
	s := newStack(t)
	coll := s.newCollection(t, "certificate")
	notAfter := time.Date(2031, 1, 1, 7, 0, 0, 0, time.UTC)
	status, body := s.do(t, http.MethodPut, coll+"/jobs/cert", map[string]any{"properties": map[string]any{
		"startTime": time.Now().UTC().Add(time.Hour).Format(time.RFC3339),
		"action": map[string]any{"type": "Https", "request": map[string]any{"uri": "https://example.com", "method": "GET",
			"authentication": map[string]any{"type": "ClientCertificate", "pfx": testPFX(t, notAfter, "Password1!"), "password": "Password1!"}}},
	}})
	require.Equal(t, http.StatusCreated, status, body)
	for _, method := range []string{http.MethodGet, http.MethodPut} {
		if method == http.MethodGet {
			_, body = s.do(t, method, coll+"/jobs/cert", nil)
		}
		auth := field(body, "properties", "action", "request", "authentication")
		require.NotNil(t, auth, body)
		assert.Equal(t, "2031-01-01T07:00:00Z", field(auth.(map[string]any), "certificateExpirationDate"), method)
		assert.Equal(t, "2031-01-01T07:00:00Z", field(auth.(map[string]any), "certificateExpiration"), method)
		assert.Nil(t, field(auth.(map[string]any), "pfx"))
	}
}

// TestCountWithEndTimeIsTaken: Azure's recorded job had both count and
// an endTime; the earlier of the two ends the job (the workflows package's
// TestCountAndEndTimeTheEarlierEnds runs it through).
func TestCountWithEndTimeIsTaken(t *testing.T) {
	s := newStack(t)
	coll := s.newCollection(t, "count-end")
	status, body := s.do(t, http.MethodPut, coll+"/jobs/both", map[string]any{"properties": map[string]any{
		"startTime":  "2015-10-10T10:10:10Z",
		"action":     map[string]any{"type": "Http", "request": map[string]any{"uri": "http://www.bing.com/", "method": "GET"}},
		"recurrence": map[string]any{"frequency": "Minute", "interval": 1, "count": 10000, "endTime": "2020-10-10T10:10:10Z"},
	}})
	require.Equal(t, http.StatusCreated, status, body)
	assert.EqualValues(t, 10000, field(body, "properties", "recurrence", "count"))
	assert.Equal(t, "2020-10-10T10:10:10Z", field(body, "properties", "recurrence", "endTime"))
}

// testPFX is a PKCS#12 file, base64, of a self-signed certificate valid
// until notAfter, encrypted with password.
func testPFX(t *testing.T, notAfter time.Time, password string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Scheduler Mgmt"},
		NotBefore: notAfter.AddDate(-1, 0, 0), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pfx, err := pkcs12.Modern.Encode(key, cert, nil, password)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(pfx)
}

// TestFinishedJobsAreDeletedAfterTheirRetention: Azure deleted completed
// and faulted jobs after 60 days. On a worker that keeps them 4 s, a
// completed job is readable, then gone: GET answers 404, the list leaves
// it out and its slot in the collection's quota is free again.
func TestFinishedJobsAreDeletedAfterTheirRetention(t *testing.T) {
	st, err := recurtest.StartWith(recurtest.Config{Activities: []func(*activities.Activities){
		func(a *activities.Activities) { a.FinishedRetention = 4 * time.Second }}})
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	s := &stack{Stack: st, client: &http.Client{Transport: rec, Timeout: time.Minute}}
	tg := newTarget(t)
	coll := armPrefix + "/jobCollections/" + unique("retention")
	status, body := s.do(t, http.MethodPut, coll, map[string]any{"location": "westus",
		"properties": map[string]any{"quota": map[string]any{"maxJobCount": 1}}})
	require.Equal(t, http.StatusCreated, status, body)
	once := func(name string) {
		status, body := s.do(t, http.MethodPut, coll+"/jobs/"+name, map[string]any{"properties": map[string]any{
			"action": map[string]any{"type": "Http", "request": map[string]any{"uri": tg.URL, "method": "GET"}}}})
		require.Equal(t, http.StatusCreated, status, "%s: %v", name, body)
	}
	once("first")
	require.Eventually(t, func() bool {
		_, body := s.do(t, http.MethodGet, coll+"/jobs/first", nil)
		return field(body, "properties", "state") == "completed"
	}, 20*time.Second, 100*time.Millisecond, "the job ran and completed")
	status, body = s.do(t, http.MethodPut, coll+"/jobs/second", map[string]any{"properties": map[string]any{
		"action": map[string]any{"type": "Http", "request": map[string]any{"uri": tg.URL, "method": "GET"}}}})
	require.Equal(t, http.StatusConflict, status, "the completed job holds the only slot: %v", body)

	require.Eventually(t, func() bool {
		status, _ := s.do(t, http.MethodGet, coll+"/jobs/first", nil)
		return status == http.StatusNotFound
	}, 20*time.Second, 200*time.Millisecond, "deleted once its retention passed")
	// A list is not read-your-writes (docs/api.md, "Lists lag writes"): the collection drops
	// the name when the job's leave reaches it, a moment after the job's
	// workflow has ended.
	var list map[string]any
	assert.Eventually(t, func() bool {
		_, list = s.do(t, http.MethodGet, coll+"/jobs", nil)
		items, _ := list["value"].([]any)
		return len(items) == 0
	}, 10*time.Second, 100*time.Millisecond, "not listed: %v", list)
	once("second")
}
