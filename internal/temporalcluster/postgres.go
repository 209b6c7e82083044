package temporalcluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/recurhq/recur/internal/debian"
	"github.com/recurhq/recur/internal/freeport"
)

// PostgresVersion is the PostgreSQL major version looked for first:
// Debian 12's, the one `apt-get install postgresql` installs there.
const PostgresVersion = "15"

// User and Password are the PostgreSQL superuser the cluster's databases
// belong to and the Temporal server connects as, over TCP with
// scram-sha-256 as a production server would ask.
const (
	User     = "temporal"
	Password = "temporal"
)

// InstallTimeout bounds `apt-get install postgresql`, an update of the
// package lists included.
const InstallTimeout = 10 * time.Minute

// postgresTools are the binaries the cluster runs, all from one directory.
var postgresTools = []string{"initdb", "postgres", "pg_isready"}

// Postgres is a PostgreSQL server of the cluster's own, in the cluster's
// directory, listening on a free port of 127.0.0.1 only.
type Postgres struct {
	port    int
	dir     string
	logPath string
	proc    *process
}

// Address is PostgreSQL's host:port.
func (p *Postgres) Address() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }

// Port is PostgreSQL's TCP port on 127.0.0.1.
func (p *Postgres) Port() int { return p.port }

// DSN is the connection URL of database as User, e.g. the Temporal
// server's "temporal" or "temporal_visibility".
func (p *Postgres) DSN(database string) string {
	return fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", User, Password, p.Address(), database)
}

// LogPath is the file PostgreSQL logs to.
func (p *Postgres) LogPath() string { return p.logPath }

// TablesDir is the directory of every database's tables and indexes (the
// data directory's base/): without the write-ahead log, whose size
// follows checkpoints rather than what is stored. A relation's file grows
// when a page is added to it, not at a checkpoint.
func (p *Postgres) TablesDir() string { return filepath.Join(p.dir, "data", "base") }

// PID is the process ID of PostgreSQL's postmaster.
func (p *Postgres) PID() int { return p.proc.pid() }

var (
	postgresMu  sync.Mutex
	postgresBin string // the binaries' directory, once found
)

// postgresBinaries returns the directory of PostgreSQL's server binaries,
// installing them first when they are missing and the process may.
func postgresBinaries(ctx context.Context) (string, error) {
	postgresMu.Lock()
	defer postgresMu.Unlock()
	if postgresBin != "" {
		return postgresBin, nil
	}
	ictx, cancel := context.WithTimeout(ctx, InstallTimeout)
	defer cancel()
	if err := debian.Install(ictx, "postgresql", func() bool { _, ok := findPostgres(); return ok }); err != nil {
		return "", fmt.Errorf("postgresql server binaries (%s) are in neither /usr/lib/postgresql/*/bin nor PATH: %w",
			strings.Join(postgresTools, ", "), err)
	}
	dir, _ := findPostgres()
	postgresBin = dir
	return dir, nil
}

// findPostgres looks for the binaries where Debian puts them, the version
// of PostgresVersion first and then the newest, and then on PATH.
func findPostgres() (string, bool) {
	dirs := []string{filepath.Join("/usr/lib/postgresql", PostgresVersion, "bin")}
	others, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(others, func(a, b string) int {
		return majorOf(b) - majorOf(a)
	})
	dirs = append(dirs, others...)
	if initdb, err := exec.LookPath("initdb"); err == nil {
		// Debian links some of them into PATH; the link's target directory
		// has the rest.
		if real, err := filepath.EvalSymlinks(initdb); err == nil {
			dirs = append(dirs, filepath.Dir(real))
		}
		dirs = append(dirs, filepath.Dir(initdb))
	}
	for _, dir := range dirs {
		if hasAll(dir, postgresTools) {
			return dir, true
		}
	}
	return "", false
}

// majorOf is the major version of a /usr/lib/postgresql/N/bin directory.
func majorOf(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return n
}

func hasAll(dir string, names []string) bool {
	for _, name := range names {
		if info, err := os.Stat(filepath.Join(dir, name)); err != nil || info.IsDir() {
			return false
		}
	}
	return true
}

// startPostgres creates a database cluster in dir with initdb and starts
// PostgreSQL on it. PostgreSQL refuses to run as root: a root process runs
// both as the postgres user, who then owns dir.
func startPostgres(ctx context.Context, bin, dir string, settings []string) (*Postgres, error) {
	owner, err := postgresOwner()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	pwfile := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(Password+"\n"), 0o600); err != nil {
		return nil, err
	}
	if owner != nil {
		// The postgres user must reach dir through its parent, the
		// cluster's directory, which is root's.
		if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
			return nil, err
		}
		for _, path := range []string{dir, pwfile} {
			if err := os.Chown(path, int(owner.uid), int(owner.gid)); err != nil {
				return nil, err
			}
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data,
		"-U", User, "--pwfile", pwfile, "--auth-local=trust", "--auth-host=scram-sha-256",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = sysProcAttr(owner, syscall.SIGKILL)
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb %s: %w\n%s", data, err, out)
	}
	p := &Postgres{dir: dir, logPath: filepath.Join(dir, "postgres.log")}
	// A port picked free may be taken before PostgreSQL binds it; it then
	// exits at once, and another port is tried.
	for attempt := 1; ; attempt++ {
		err := p.start(ctx, bin, data, owner, settings)
		if err == nil || attempt == 3 || !errors.Is(err, errExited) {
			return p, err
		}
	}
}

// errExited is the error of a process that exited while it was awaited.
var errExited = errors.New("exited")

// postgresSettings are the parameters PostgreSQL runs with beside its
// addresses, as name=value: the cluster's, then o's own in the order of
// their names.
func postgresSettings(o Options) []string {
	// Each Temporal service has pools of up to 20 connections per store
	// (see serverConfig).
	settings := []string{"max_connections=300"}
	if !o.Durable {
		settings = append(settings, "fsync=off", "synchronous_commit=off", "full_page_writes=off")
	}
	for _, name := range slices.Sorted(maps.Keys(o.PostgresSettings)) {
		settings = append(settings, name+"="+o.PostgresSettings[name])
	}
	return settings
}

func (p *Postgres) start(ctx context.Context, bin, data string, owner *account, settings []string) error {
	ports, err := freeport.Pick("127.0.0.1", 1)
	if err != nil {
		return err
	}
	p.port = ports[0]
	args := []string{"-D", data, "-p", strconv.Itoa(p.port),
		"-c", "listen_addresses=127.0.0.1",
		// The socket goes with the data, not into /var/run/postgresql
		// where the system's server would put it.
		"-c", "unix_socket_directories=" + p.dir,
	}
	for _, s := range settings {
		args = append(args, "-c", s)
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	// When the test process dies without its cleanup, PostgreSQL shuts
	// down (fast: SIGINT) rather than outliving it.
	cmd.SysProcAttr = sysProcAttr(owner, syscall.SIGINT)
	if p.proc, err = startProcess(cmd, p.logPath); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	err = waitFor(ctx, p.proc, 100*time.Millisecond, func(ctx context.Context) error {
		return exec.CommandContext(ctx, filepath.Join(bin, "pg_isready"),
			"-q", "-h", "127.0.0.1", "-p", strconv.Itoa(p.port), "-U", User, "-d", "postgres", "-t", "1").Run()
	})
	if err != nil {
		_ = p.stop()
		return fmt.Errorf("postgres on port %d: %w\n%s", p.port, err, tail(p.logPath, 20))
	}
	return nil
}

// stop shuts PostgreSQL down fast: clients are disconnected, nothing is
// waited for but the final checkpoint.
func (p *Postgres) stop() error {
	if p.proc == nil {
		return nil
	}
	return p.proc.stop(syscall.SIGINT, 30*time.Second)
}

// postgresOwner is the postgres user when this process is root, which
// PostgreSQL refuses to run as, and nil otherwise.
func postgresOwner() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, postgresql must run as the postgres user (the Debian package creates it): %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("uid of postgres: %w", err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("gid of postgres: %w", err)
	}
	return &account{uid: uint32(uid), gid: uint32(gid)}, nil
}
