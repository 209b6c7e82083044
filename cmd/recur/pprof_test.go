package main

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/recurhq/recur/connlimit"
)

func TestPprofServesOnLoopbackOnly(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:6060", "example.com:6060", "nonsense"} {
		if _, err := servePprof(addr, connlimit.Limits{}, log); err == nil {
			t.Errorf("servePprof(%q) was accepted; profiles must stay on loopback", addr)
		}
	}
	stop, err := servePprof("", connlimit.Limits{}, log)
	if err != nil {
		t.Fatalf("empty address: %v", err)
	}
	stop()

	var logged strings.Builder
	stop, err = servePprof("127.0.0.1:0", connlimit.Limits{}, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	_, url, ok := strings.Cut(logged.String(), "url=")
	if !ok {
		t.Fatalf("no url logged: %s", logged.String())
	}
	resp, err := http.Get(strings.TrimSpace(url) + "goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine profile") {
		t.Fatalf("goroutine profile: %d %.200s", resp.StatusCode, body)
	}
}
