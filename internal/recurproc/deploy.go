package recurproc

import (
	"context"
	"fmt"
	"log"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/recurhq/recur/internal/temporalcluster"
)

// Deployment is recur and the Temporal server it runs on, as a bench tool
// measures them: `recur dev` with the server inside it, or `recur serve`
// against a cluster (a Temporal server process on PostgreSQL, started as
// the cluster tests start it).
type Deployment struct {
	*Process
	// Cluster is the Temporal server and PostgreSQL; nil on recur dev.
	Cluster   *temporalcluster.Cluster
	Namespace string
}

// Deploy starts recur dev, or with cluster a durable cluster and recur
// serve against it, with work as the directory of recur's data, keys and
// log. With profile, recur serves Go's profiles. The caller must Close
// the deployment.
func Deploy(ctx context.Context, bin, work string, cluster, profile bool) (*Deployment, error) {
	logPath := filepath.Join(work, "recur.log")
	if !cluster {
		p, err := Start(bin, filepath.Join(work, "data"), logPath, profile)
		if err != nil {
			return nil, err
		}
		return &Deployment{Process: p, Namespace: "default"}, nil
	}
	// Durable: PostgreSQL syncs its commits, as a production database does
	// and as recur dev's SQLite does.
	c, err := temporalcluster.Launch(ctx, temporalcluster.Options{Durable: true})
	if err != nil {
		return nil, err
	}
	log.Printf("cluster: Temporal %s (pid %d) on PostgreSQL %s (pid %d)", c.FrontendAddress(), c.Server.PID(),
		c.Postgres.Address(), c.Postgres.PID())
	keys := filepath.Join(work, "keys.json")
	if out, err := exec.Command(bin, "keygen", keys).CombinedOutput(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("recur keygen: %w\n%s", err, out)
	}
	p, err := StartServe(bin, c.FrontendAddress(), c.Namespace(), keys, logPath, profile)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return &Deployment{Process: p, Cluster: c, Namespace: c.Namespace()}, nil
}

// Close kills recur and removes the cluster, if any.
func (d *Deployment) Close() {
	d.Kill()
	if d.Cluster != nil {
		if err := d.Cluster.Close(); err != nil {
			log.Printf("close the cluster: %v", err)
		}
	}
}

// Usage is the CPU time each process of a deployment used; Server and
// Postgres are zero on recur dev, whose server runs in the recur process.
type Usage struct{ Recur, Server, Postgres time.Duration }

// CPU returns the CPU time used so far by recur, and on a cluster by the
// Temporal server and PostgreSQL (the postmaster and its backends).
func (d *Deployment) CPU() Usage {
	u := Usage{Recur: d.Process.CPU()}
	if d.Cluster != nil {
		u.Server = CPUOf(d.Cluster.Server.PID())
		u.Postgres = TreeCPUOf(d.Cluster.Postgres.PID())
	}
	return u
}

// Sub returns the CPU used between v and u.
func (u Usage) Sub(v Usage) Usage {
	return Usage{Recur: u.Recur - v.Recur, Server: u.Server - v.Server, Postgres: u.Postgres - v.Postgres}
}

// Total is the CPU of every process.
func (u Usage) Total() time.Duration { return u.Recur + u.Server + u.Postgres }
