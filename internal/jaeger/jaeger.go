// Package jaeger gives tests and measuring tools a real Jaeger: built from
// source (github.com/jaegertracing/jaeger's cmd/jaeger, pinned by tool.mod
// and tool.sum, the module `go get -tool` made) into the user's cache on
// first use, one build at a time across processes, then run with in-memory
// storage, its OTLP receivers and query API on free ports of 127.0.0.1.
package jaeger

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/recurhq/recur/internal/filelock"
	"github.com/recurhq/recur/internal/freeport"
	"github.com/recurhq/recur/internal/syncbuf"
)

// Version is the Jaeger release tool.mod pins.
const Version = "v1.76.0"

// The tools module: a go.mod holding only `tool
// github.com/jaegertracing/jaeger/cmd/jaeger` and its go.sum. It lives
// apart from recur's go.mod: Jaeger pins older OpenTelemetry and gRPC
// modules than Temporal's server needs.
var (
	//go:embed tool.mod
	toolMod []byte
	//go:embed tool.sum
	toolSum []byte
)

// InstallTimeout bounds one build: cold, it downloads and compiles an
// OpenTelemetry Collector with Jaeger's extensions (minutes on two busy
// cores); with the build cache warm, seconds.
const InstallTimeout = 30 * time.Minute

// Install returns the path of the jaeger binary, building it first unless
// the cache has it. The cache directory is named after the tools module's
// digest too: a changed pin builds anew.
func Install(ctx context.Context) (string, error) {
	sum := sha256.Sum256(append(append([]byte{}, toolMod...), toolSum...))
	dir, err := filelock.Install("recur-jaeger", Version+"-"+hex.EncodeToString(sum[:6]), func(dir string) error {
		for file, data := range map[string][]byte{"go.mod": toolMod, "go.sum": toolSum} {
			if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
				return err
			}
		}
		ctx, cancel := context.WithTimeout(ctx, InstallTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", "jaeger", "github.com/jaegertracing/jaeger/cmd/jaeger")
		// Only what go.sum pins, with the toolchain at hand.
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=-mod=readonly")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build jaeger %s: %w\n%s", Version, err, out)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "jaeger"), nil
}

// Jaeger is a running Jaeger.
type Jaeger struct {
	// OTLPHTTP and OTLPGRPC are the base URLs of its OTLP receivers
	// (http/protobuf and grpc).
	OTLPHTTP, OTLPGRPC string
	// Query is the base URL of its query API and UI.
	Query string

	cmd    *exec.Cmd
	output *syncbuf.Buffer
	done   chan struct{}
}

// config is Jaeger's configuration: OTLP in, memory storage, the query
// API; no internal metrics (their listener's port is fixed).
const config = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
      http:
        endpoint: 127.0.0.1:%d
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`

// Start installs Jaeger if need be and runs it with its configuration in
// dir, until Stop; it returns once the query API answers.
func Start(ctx context.Context, dir string) (*Jaeger, error) {
	bin, err := Install(ctx)
	if err != nil {
		return nil, err
	}
	ports, err := freeport.Pick("127.0.0.1", 4)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(path, fmt.Appendf(nil, config, ports[0], ports[1], ports[2], ports[3]), 0o644); err != nil {
		return nil, err
	}
	j := &Jaeger{
		Query:    "http://127.0.0.1:" + strconv.Itoa(ports[0]),
		OTLPGRPC: "http://127.0.0.1:" + strconv.Itoa(ports[2]),
		OTLPHTTP: "http://127.0.0.1:" + strconv.Itoa(ports[3]),
		output:   &syncbuf.Buffer{}, done: make(chan struct{}),
	}
	j.cmd = exec.Command(bin, "--config", path)
	j.cmd.Stdout, j.cmd.Stderr = j.output, j.output
	j.cmd.SysProcAttr = sysProcAttr()
	if err := j.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start jaeger: %w", err)
	}
	go func() { _ = j.cmd.Wait(); close(j.done) }()
	if err := j.waitReady(ctx, time.Minute); err != nil {
		j.Stop()
		return nil, fmt.Errorf("%w\n%s", err, j.output)
	}
	return j, nil
}

func (j *Jaeger) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-j.done:
			return errors.New("jaeger exited before it was ready")
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := http.Get(j.Query + "/api/services")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("jaeger was not ready within %s", limit)
}

// Output is what Jaeger wrote to stdout and stderr.
func (j *Jaeger) Output() string { return j.output.String() }

// Stop kills Jaeger and waits for it to exit.
func (j *Jaeger) Stop() {
	_ = j.cmd.Process.Kill()
	<-j.done
}

// Trace is a trace as Jaeger's query API (/api/traces/{id}) answers it.
type Trace struct {
	TraceID   string             `json:"traceID"`
	Spans     []Span             `json:"spans"`
	Processes map[string]Process `json:"processes"`
}

// Span is a span of a Trace.
type Span struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []Reference `json:"references"`
	Tags          []Tag       `json:"tags"`
	ProcessID     string      `json:"processID"`
}

// Reference is a span's parent (CHILD_OF) or link (FOLLOWS_FROM).
type Reference struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// Tag is a span's attribute.
type Tag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// Process is the emitter of spans: its service name.
type Process struct {
	ServiceName string `json:"serviceName"`
}

// Trace returns the trace traceID (32 hex digits) and Jaeger's answer as
// it came; ok is false while Jaeger has none of it.
func (j *Jaeger) Trace(ctx context.Context, traceID string) (t Trace, raw []byte, ok bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.Query+"/api/traces/"+traceID, nil)
	if err != nil {
		return t, nil, false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return t, nil, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return t, nil, false, nil
	}
	var out struct {
		Data []Trace `json:"data"`
	}
	raw, err = readAll(resp)
	if err != nil {
		return t, raw, false, err
	}
	if resp.StatusCode != http.StatusOK {
		return t, raw, false, fmt.Errorf("GET /api/traces/%s: %s: %s", traceID, resp.Status, raw)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return t, raw, false, err
	}
	if len(out.Data) == 0 {
		return t, raw, false, nil
	}
	return out.Data[0], raw, true, nil
}

// Tag returns the value of s's attribute key, nil without one.
func (s Span) Tag(key string) any {
	for _, t := range s.Tags {
		if t.Key == key {
			return t.Value
		}
	}
	return nil
}

// ServiceOf returns the service name of the process that emitted s.
func (t Trace) ServiceOf(s Span) string { return t.Processes[s.ProcessID].ServiceName }

// Parent returns the span s names as its parent, if the trace holds it.
func (t Trace) Parent(s Span) (Span, bool) {
	for _, r := range s.References {
		if r.RefType != "CHILD_OF" {
			continue
		}
		for _, p := range t.Spans {
			if p.SpanID == r.SpanID {
				return p, true
			}
		}
	}
	return Span{}, false
}

// readAll reads an answer's body, at most 64 MiB.
func readAll(resp *http.Response) ([]byte, error) {
	return io.ReadAll(io.LimitReader(resp.Body, 64<<20))
}

// Search returns Jaeger's answer to a search of service's traces with an
// operation's spans, as it came.
func (j *Jaeger) Search(ctx context.Context, service, operation string) ([]byte, error) {
	q := url.Values{"service": {service}, "operation": {operation}, "limit": {"100"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.Query+"/api/traces?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := readAll(resp)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET /api/traces?%s: %s: %s", q.Encode(), resp.Status, raw)
	}
	return raw, err
}
