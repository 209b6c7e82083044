package temporalcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// account is a user and group a child process runs as.
type account struct {
	uid, gid uint32
}

// process is a started child whose output goes to a log file, appended to
// so that one file holds every run of a server that is restarted.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // Wait's result, set before exited closes
}

func startProcess(cmd *exec.Cmd, logPath string) (*process, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, err
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = log.Close()
		close(p.exited)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// exitErr says how the process ended; call it once exited is closed.
func (p *process) exitErr() error {
	return fmt.Errorf("%w: %v", errExited, p.err)
}

// stop sends sig and waits for the process to exit, killing it when it
// has not after timeout. An exit caused by sig or the kill is no error.
func (p *process) stop(sig syscall.Signal, timeout time.Duration) error {
	if !p.running() {
		return nil
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %v to pid %d: %w", sig, p.pid(), err)
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(timeout):
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill pid %d: %w", p.pid(), err)
	}
	<-p.exited
	return fmt.Errorf("pid %d did not exit within %v of %v: killed", p.pid(), timeout, sig)
}

// waitFor calls probe every interval until it succeeds, fails with a
// permanent error, the process exits or ctx ends. Each call gets at most a
// few seconds.
func waitFor(ctx context.Context, p *process, interval time.Duration, probe func(context.Context) error) error {
	for {
		attempt, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := probe(attempt)
		cancel()
		if err == nil {
			return nil
		}
		var perm permanent
		if errors.As(err, &perm) {
			return perm.err
		}
		select {
		case <-p.exited:
			return p.exitErr()
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(interval):
		}
	}
}
