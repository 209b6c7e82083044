// Command recur is the one binary of recur, a self-hosted, durable job
// scheduler that speaks the Azure Scheduler REST API and runs every job as
// a Temporal workflow. Its subcommands are described by "recur help".
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	// Time zones must resolve on machines without a zoneinfo database.
	_ "time/tzdata"
)

const usage = `recur is a self-hosted, durable job scheduler that speaks the Azure Scheduler
REST API (2016-03-01) and runs every job as a Temporal workflow.

Usage:
  recur [dev] [flags]      everything on one machine: embedded Temporal server
                           and Web UI, a worker and the REST API
  recur serve [flags]      worker and REST API against a Temporal cluster
  recur worker [flags]     only the worker, against a Temporal cluster
  recur api [flags]        only the REST API, against a Temporal cluster
  recur preview [flags]    print the next occurrences of a job's schedule
  recur keygen [FILE]      make an encryption key file, or add a key to one

Client of a running recur's REST API (--server, default http://127.0.0.1:8080):
  recur jobs VERB          put, get, list, delete, run a job; its history
  recur collections VERB   put, get, list, enable, disable, delete a job
                           collection
  recur import FILE...     create or update the collections and jobs of Azure
                           Scheduler's ARM templates and Terraform files
  recur export             write collections and jobs as an ARM template or
                           Terraform, secrets left to parameters

  recur help [command]     show this help, or a command's flags and verbs
`

func main() {
	// SIGINT and SIGTERM end ctx: the commands then shut down cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the process's exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "dev"
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || isHelp(args[0])) {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "dev":
		return runDev(ctx, args, stderr)
	case "serve":
		return runCluster(ctx, cmd, roles{worker: true, api: true}, args, stderr)
	case "worker":
		return runCluster(ctx, cmd, roles{worker: true}, args, stderr)
	case "api":
		return runCluster(ctx, cmd, roles{api: true}, args, stderr)
	case "preview":
		return runPreview(args, stdin, stdout, stderr, time.Now)
	case "keygen":
		return runKeygen(args, stdout, stderr)
	case "jobs":
		return runClient(ctx, jobsCommand, args, stdin, stdout, stderr)
	case "collections":
		return runClient(ctx, collectionsCommand, args, stdin, stdout, stderr)
	case "import":
		return runImport(ctx, args, stdout, stderr)
	case "export":
		return runExport(ctx, args, stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(args) > 0 && (args[0] == "preview" || args[0] == "jobs" || args[0] == "collections" || args[0] == "import" || args[0] == "export") {
			return run(ctx, []string{args[0], "-h"}, stdin, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "recur: unknown command %q\n", cmd)
	}
	fmt.Fprint(stderr, usage)
	return 2
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }
