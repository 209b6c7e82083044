package temporalcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/recurhq/recur/internal/freeport"
)

// StopTimeout bounds a graceful Stop; a server still running after it is
// killed.
const StopTimeout = 30 * time.Second

// ReadyTimeout bounds Start's and Restart's wait for the server to be
// ready when the caller's context has no earlier deadline.
const ReadyTimeout = 2 * time.Minute

// Server is the Temporal server process. Its methods are safe for
// concurrent use.
type Server struct {
	bin        string
	configPath string
	logPath    string
	ports      serverPorts
	namespace  string
	retention  time.Duration

	mu   sync.Mutex
	proc *process // nil before the first start
}

func newServer(bin, dir string, pg *Postgres, opts Options) (*Server, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ports, err := freeport.Pick("127.0.0.1", numServerPorts)
	if err != nil {
		return nil, err
	}
	s := &Server{
		bin:        bin,
		configPath: filepath.Join(dir, "config.yaml"),
		logPath:    filepath.Join(dir, "server.log"),
		ports:      portsOf(ports),
		namespace:  opts.Namespace,
		retention:  opts.Retention,
	}
	err = writeConfig(s.configPath, filepath.Join(dir, "dynamicconfig.yaml"), configData{
		LogLevel:      opts.LogLevel,
		HistoryShards: opts.HistoryShards,
		Postgres:      pg.Address(),
		User:          User,
		Password:      Password,
		Ports:         s.ports,
	}, opts.DynamicConfig)
	return s, err
}

// FrontendAddress is the host:port of the frontend's gRPC API, the same
// across restarts.
func (s *Server) FrontendAddress() string { return hostPort(s.ports.FrontendGRPC) }

// FrontendHTTPAddress is the host:port of the frontend's HTTP API.
func (s *Server) FrontendHTTPAddress() string { return hostPort(s.ports.FrontendHTTP) }

// MetricsURL is where the server serves its Prometheus metrics.
func (s *Server) MetricsURL() string { return "http://" + hostPort(s.ports.Metrics) + "/metrics" }

// LogPath is the file the server logs to, every run appended.
func (s *Server) LogPath() string { return s.logPath }

// ConfigPath is the server's YAML config.
func (s *Server) ConfigPath() string { return s.configPath }

// PID is the server's process ID, or 0 when it is not running.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || !s.proc.running() {
		return 0
	}
	return s.proc.pid()
}

// Running says whether the server process is running, ready or not.
func (s *Server) Running() bool { return s.PID() != 0 }

// Start starts the server again after Stop or Kill, on the same ports and
// database, and returns once the namespace is usable (ReadyTimeout bounds
// the wait unless ctx ends first). Starting a running server is an error.
func (s *Server) Start(ctx context.Context) error {
	return s.start(ctx, true)
}

// Stop stops the server gracefully (SIGTERM) and waits for it to exit,
// killing it after StopTimeout. Stopping a stopped server does nothing.
func (s *Server) Stop() error {
	return s.signal(syscall.SIGTERM, StopTimeout)
}

// Kill kills the server (SIGKILL) and waits for it to exit: a crash, with
// whatever it had not written lost. Killing a stopped server does nothing.
func (s *Server) Kill() error {
	return s.signal(syscall.SIGKILL, StopTimeout)
}

// Restart stops the server gracefully and starts it again.
func (s *Server) Restart(ctx context.Context) error {
	if err := s.Stop(); err != nil {
		return err
	}
	return s.Start(ctx)
}

func (s *Server) signal(sig syscall.Signal, timeout time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return nil
	}
	if err := s.proc.stop(sig, timeout); err != nil {
		return fmt.Errorf("temporal server: %w", err)
	}
	return nil
}

// setupSchema creates the databases and applies the schemas, with the
// server binary (see temporal-server/schema.go).
func (s *Server) setupSchema(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, s.bin, "-config", s.configPath, "setup-schema")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("set up the schemas: %w\n%s", err, out)
	}
	return nil
}

// start starts the process and waits until it is ready: the frontend
// answers and the namespace is usable, after registering it unless
// registered says an earlier start did.
func (s *Server) start(ctx context.Context, registered bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil && s.proc.running() {
		return fmt.Errorf("temporal server is running (pid %d)", s.proc.pid())
	}
	cmd := exec.Command(s.bin, "-config", s.configPath, "start")
	cmd.SysProcAttr = sysProcAttr(nil, syscall.SIGKILL)
	proc, err := startProcess(cmd, s.logPath)
	if err != nil {
		return fmt.Errorf("start temporal server: %w", err)
	}
	s.proc = proc
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	if err := s.becomeReady(ctx, registered); err != nil {
		if errors.Is(err, errExited) {
			return fmt.Errorf("temporal server: %w\n%s", err, tail(s.logPath, 30))
		}
		return fmt.Errorf("temporal server (pid %d) not ready: %w", proc.pid(), err)
	}
	return nil
}

func hostPort(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}
