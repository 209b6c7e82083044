package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAQuotaHoldsAcrossAKill9: 200 PUTs of new jobs race into a collection
// of maxJobCount 50, and recur is killed with SIGKILL once 30 of them are
// answered, before the quota can be full. A client retries what the crash left unanswered, as any
// client must (its PUT may or may not have taken effect), until each PUT
// is answered. Then exactly 50 jobs exist, and each name's last answer
// says so: 201 or 200 for the 50, 409 for the 150 others. A slot held by
// a PUT the crash cut short is neither lost nor counted twice.
func TestAQuotaHoldsAcrossAKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it kills recur amid 200 PUTs (about a minute)")
	}
	// Most of its minute waits for the collection's look at the dead
	// process's lease: beside TestACluster, the package's longest.
	t.Parallel()
	const (
		names     = 200
		quota     = 50
		killAfter = 30 // answers
	)
	bin := buildRecur(t)
	dataDir := t.TempDir()
	p := startDev(t, bin, dataDir)
	coll := "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/quota"
	code, body := p.do(t, http.MethodPut, coll, map[string]any{"properties": map[string]any{
		"sku": map[string]any{"name": "P20Premium"}, "quota": map[string]any{"maxJobCount": quota}}})
	require.Equal(t, http.StatusCreated, code, body)

	// A one-time job a year away: nothing runs during the test.
	job, err := json.Marshal(map[string]any{"properties": map[string]any{
		"startTime": time.Now().UTC().AddDate(1, 0, 0).Format(time.RFC3339),
		"action":    map[string]any{"type": "Http", "request": map[string]any{"uri": "http://127.0.0.1:9/", "method": "POST"}},
	}})
	require.NoError(t, err)
	client := &http.Client{Timeout: time.Minute}
	put := func(api, name string) (int, error) {
		req, err := http.NewRequest(http.MethodPut, api+coll+"/jobs/"+name+"?api-version=2016-03-01", bytes.NewReader(job))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}

	status := make([]int, names) // 0: no answer (the crash cut it short)
	var answered atomic.Int32
	half := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for i := range names {
		wg.Go(func() {
			code, err := put(p.api, fmt.Sprintf("j%03d", i))
			if err == nil && code != http.StatusServiceUnavailable {
				status[i] = code
			}
			if answered.Add(1) >= killAfter {
				once.Do(func() { close(half) })
			}
		})
	}
	select {
	case <-half:
	case <-time.After(2 * time.Minute):
		t.Fatalf("%d PUTs were not answered in 2 minutes", killAfter)
	}
	p.kill(t)
	wg.Wait()
	cut, created := 0, 0
	for _, s := range status {
		switch s {
		case 0:
			cut++
		case http.StatusCreated:
			created++
		}
	}
	t.Logf("before the crash %d PUTs were answered 201; %d were left unanswered", created, cut)
	require.Less(t, created, quota, "the crash comes before the quota is full")

	p = startDev(t, bin, dataDir)
	for i, s := range status {
		for s == 0 || s == http.StatusServiceUnavailable || s == http.StatusNotFound {
			// NotFound: the workflow of a name whose first PUT the crash
			// cut short is on its way out; the API sends the PUT on, so
			// it is not expected here, but a client would send it again.
			code, err := put(p.api, fmt.Sprintf("j%03d", i))
			require.NoError(t, err)
			s = code
		}
		status[i] = s
	}

	defined, refused := 0, 0
	for i, s := range status {
		name := fmt.Sprintf("j%03d", i)
		code, _, err := p.get(coll + "/jobs/" + name)
		require.NoError(t, err)
		switch s {
		case http.StatusCreated, http.StatusOK:
			defined++
			require.Equal(t, http.StatusOK, code, "%s was answered %d: it exists", name, s)
		case http.StatusConflict:
			refused++
			require.Equal(t, http.StatusNotFound, code, "%s was answered 409: it does not exist", name)
		default:
			t.Fatalf("%s was answered %d", name, s)
		}
	}
	require.Equal(t, quota, defined, "exactly maxJobCount jobs exist")
	require.Equal(t, names-quota, refused)
}
