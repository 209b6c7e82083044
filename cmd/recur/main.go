// Command recur is the one binary of recur, a self-hosted, durable job
// scheduler that speaks the Azure Scheduler REST API and runs every job as
// a Temporal workflow. Its subcommands are described by "recur help".
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	// Time zones must resolve on machines without a zoneinfo database.
	_ "time/tzdata"
)

const usage = `recur is a self-hosted, durable job scheduler that speaks the Azure Scheduler
REST API (2016-03-01) and runs every job as a Temporal workflow.

Usage:
  recur [dev]              run everything on one machine (not implemented yet)
  recur preview [flags]    print the next occurrences of a job's schedule
  recur help [command]     show this help, or a command's flags
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the process's exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "dev"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "preview":
		return runPreview(args, stdin, stdout, stderr, time.Now)
	case "help", "-h", "-help", "--help":
		if len(args) > 0 && args[0] == "preview" {
			return runPreview([]string{"-h"}, stdin, stdout, stderr, time.Now)
		}
		fmt.Fprint(stdout, usage)
		return 0
	case "dev":
		fmt.Fprintln(stderr, "recur: dev mode (embedded Temporal server, worker and REST API) is not implemented yet")
	default:
		fmt.Fprintf(stderr, "recur: unknown command %q\n", cmd)
	}
	fmt.Fprint(stderr, usage)
	return 2
}
