package temporalcluster

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr runs a child as owner (nil: as this process) and sends it
// onParentDeath when this process dies: a test binary killed by its
// timeout leaves no server behind.
func sysProcAttr(owner *account, onParentDeath syscall.Signal) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Pdeathsig: onParentDeath}
	if owner != nil {
		attr.Credential = &syscall.Credential{Uid: owner.uid, Gid: owner.gid}
	}
	return attr
}

// alive says whether the process pid runs: it exists and, where /proc
// tells, is no zombie (a killed test binary stays one until reaped).
func alive(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// The state follows the command name, which is in parentheses.
	_, after, ok := strings.Cut(string(stat), ") ")
	return !ok || !strings.HasPrefix(after, "Z")
}
