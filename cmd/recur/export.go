package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/recurhq/recur/migrate"
	"github.com/recurhq/recur/migrate/arm"
	"github.com/recurhq/recur/migrate/terraform"
)

// recur export writes the collections and jobs of a subscription, a
// resource group or one collection as the files recur import reads: an ARM
// template, or Terraform. recur's answers never show a secret, so neither
// does an export: each secret is left to a parameter.

const exportSynopsis = "usage: recur export --subscription S [--resource-group RG [--collection C]] [--format arm|terraform] [--secret-headers NAMES] [-o FILE]"

// exportFormats are the writers of recur export, by --format.
var exportFormats = map[string]func(io.Writer, []migrate.Exported) error{
	"arm":       arm.Write,
	"terraform": terraform.Write,
}

type exportOptions struct {
	connection
	addr        address
	format, out string
	migrate.ExportOptions
}

func parseExportFlags(args []string) (*flag.FlagSet, exportOptions, error) {
	var o exportOptions
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	o.connection.register(fs)
	for _, p := range collectionParts {
		fs.StringVar(o.addr.field(p), p.flag, env(p.env, ""), p.noun+" `name` ("+p.env+")")
	}
	fs.StringVar(&o.format, "format", "arm", "`format` of the output: arm (an ARM template) or terraform")
	fs.StringVar(&o.out, "o", "", "write to `FILE` (mode 0600) instead of stdout")
	secretHeaders := fs.String("secret-headers", env("RECUR_SECRET_HEADERS", ""),
		"comma-separated `names` of more request headers whose values are secrets, left to parameters as passwords are (RECUR_SECRET_HEADERS)")
	if err := fs.Parse(args); err != nil {
		return fs, o, err
	}
	for _, name := range strings.Split(*secretHeaders, ",") {
		if name = strings.TrimSpace(name); name != "" {
			o.SecretHeaders = append(o.SecretHeaders, name)
		}
	}
	o.connection.resolve()
	switch {
	case fs.NArg() > 0:
		return fs, o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case exportFormats[o.format] == nil:
		return fs, o, fmt.Errorf("--format %q: want arm or terraform", o.format)
	case o.addr.collection != "" && o.addr.resourceGroup == "":
		return fs, o, errors.New("--collection needs --resource-group")
	}
	return fs, o, o.addr.require([]part{partSubscription}, false)
}

// runExport runs recur export: 0 when it wrote every resource, 1 when the
// API failed it, 2 for a usage error.
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, o, err := parseExportFlags(args)
	server, code, ok := clientStart("export", exportSynopsis, fs, err, o.server, stdout, stderr)
	if !ok {
		return code
	}
	es, err := exportResources(ctx, newClient(server, o.token, stderr), o.addr, o.ExportOptions)
	if err == nil {
		err = writeExport(o, es, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "recur export: %v\n", err)
		return 1
	}
	collections, secrets := 0, 0
	for _, e := range es {
		if e.Kind == migrate.Collection {
			collections++
		}
		secrets += len(e.Secrets)
	}
	left := "parameters"
	if o.format == "terraform" {
		left = "variables"
	}
	fmt.Fprintf(stderr, "exported %d collections and %d jobs; %d secrets are %s without a value, for you to supply\n",
		collections, len(es)-collections, secrets, left)
	return 0
}

func writeExport(o exportOptions, es []migrate.Exported, stdout io.Writer) error {
	if o.out == "" {
		return exportFormats[o.format](stdout, es)
	}
	// An export holds URIs and headers that a reader of the API sees, and
	// those may still say more than its owner meant to share: the file is
	// its owner's alone, an existing one included.
	f, err := os.OpenFile(o.out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if err := exportFormats[o.format](f, es); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// exportResources reads the collections a names (one, those of its
// resource group, or those of its subscription) and their jobs.
func exportResources(ctx context.Context, c *apiClient, a address, o migrate.ExportOptions) ([]migrate.Exported, error) {
	var answers []json.RawMessage
	if a.collection != "" {
		data, err := c.do(ctx, http.MethodGet, a.collectionPath(), nil, nil)
		if err != nil {
			return nil, err
		}
		answers = []json.RawMessage{data}
	} else {
		var err error
		if answers, err = c.list(ctx, a.collections(), nil, "collections"); err != nil {
			return nil, err
		}
	}
	var out []migrate.Exported
	for _, answer := range answers {
		var coll struct{ ID, Name string }
		if err := json.Unmarshal(answer, &coll); err != nil {
			return nil, fmt.Errorf("read a collection: %w", err)
		}
		at := address{subscription: a.subscription, resourceGroup: resourceGroupOf(coll.ID), collection: coll.Name}
		e, err := migrate.ForExport(migrate.Resource{Kind: migrate.Collection, ResourceGroup: at.resourceGroup, Collection: at.collection}, answer, o)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		jobAnswers, err := c.list(ctx, at.jobsPath(), nil, "jobs")
		if err != nil {
			return nil, err
		}
		for _, answer := range jobAnswers {
			var job struct{ Name string }
			if err := json.Unmarshal(answer, &job); err != nil {
				return nil, fmt.Errorf("read a job of %s: %w", at.collection, err)
			}
			e, err := migrate.ForExport(migrate.Resource{Kind: migrate.Job, ResourceGroup: at.resourceGroup,
				Collection: at.collection, Job: shortName(job.Name)}, answer, o)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
	}
	return out, nil
}
