package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
)

// healthProbes are the answers of /healthz during the flood.
type healthProbes struct {
	Latencies []time.Duration // of the probes answered 200
	Failures  map[string]int
	MaxFDs    int    // recur's file descriptors, the most seen
	Ready     string // /readyz at the end: "200" or the error
}

// healthProcess is this program run with -health-of: the flood takes up
// to all of this process's file descriptors, and /healthz's failures must
// be recur's, not a lack of descriptors here.
type healthProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout bytes.Buffer
}

func startHealth(api string, pid int) (*healthProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	h := &healthProcess{cmd: exec.Command(self, "-health-of", api, "-pid", strconv.Itoa(pid))}
	h.cmd.Stdout, h.cmd.Stderr = &h.stdout, os.Stderr
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := h.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the /healthz prober: %w", err)
	}
	return h, nil
}

// stop ends the probes and returns their answers.
func (h *healthProcess) stop() (*healthProbes, error) {
	_ = h.stdin.Close()
	if err := h.cmd.Wait(); err != nil {
		return nil, fmt.Errorf("the /healthz prober: %w", err)
	}
	var probes healthProbes
	if err := json.Unmarshal(h.stdout.Bytes(), &probes); err != nil {
		return nil, fmt.Errorf("the /healthz prober's answers: %w", err)
	}
	return &probes, nil
}

// reportHealth is the -health-of process: it asks api's /healthz four
// times a second, one probe at a time, and counts recur's file
// descriptors, until its stdin ends; then asks /readyz once and prints
// the answers as JSON.
func reportHealth(api string, pid int) error {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	h := &healthProbes{Failures: map[string]int{}}
	client := healthClient()
	for ctx.Err() == nil {
		h.MaxFDs = max(h.MaxFDs, recurproc.FDsOf(pid))
		began := time.Now()
		if err := get(client, api+"/healthz"); err != nil {
			h.Failures[shortError(err)]++
		} else {
			h.Latencies = append(h.Latencies, time.Since(began))
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
	h.Ready = "200"
	if err := get(client, api+"/readyz"); err != nil {
		h.Ready = shortError(err)
	}
	return json.NewEncoder(os.Stdout).Encode(h)
}

// healthClient's connections come from 127.0.0.2, another client address
// than the flood's for recur; each probe opens a new one.
func healthClient() *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// get asks url and wants 200.
func get(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// shortError is err without its URL and addresses.
func shortError(err error) string {
	s := err.Error()
	if strings.Contains(s, "Client.Timeout") {
		return "no answer within 5s"
	}
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}
