package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/recurhq/recur/migrate"
	"github.com/recurhq/recur/migrate/bicep"
)

// importFiles are an import's files by reader: ARM templates, Bicep files
// (built into templates) and Terraform configurations (.tf files, and
// directories of them).
type importFiles struct {
	templates, bicep, configs []string
}

// sortImportFiles sorts the files and directories an import is given by
// reader. A directory is read for its .tf files (one configuration) and
// its .bicep files; one with neither is refused, naming what it holds:
// an import of nothing is not a success.
func sortImportFiles(paths []string) (importFiles, error) {
	var f importFiles
	for _, p := range paths {
		info, err := os.Stat(p)
		switch ext := strings.ToLower(filepath.Ext(p)); {
		case err != nil:
			return f, err
		case info.IsDir():
			if err := f.addDir(p); err != nil {
				return f, err
			}
		case ext == ".tf":
			f.configs = append(f.configs, p)
		case ext == ".json":
			f.templates = append(f.templates, p)
		case ext == ".bicep":
			f.addBicep(p)
		default:
			return f, fmt.Errorf("%s: recur import reads ARM templates (.json), Bicep files (.bicep) and Terraform files (.tf, or a directory of them)", p)
		}
	}
	return f, nil
}

// addDir adds the files of the directory dir. A .bicep file found there
// must be a regular file, not a link: the Bicep CLI would follow a link
// out of the directory, where a file named on the command line is the
// user's choice.
func (f *importFiles) addDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	others := map[string]int{}
	tf, bicepFiles := false, 0
	for _, e := range entries {
		// As Terraform, and as package terraform lists them, a
		// directory's files are told by their exact suffix.
		name := e.Name()
		switch {
		case e.IsDir():
		case strings.HasSuffix(name, ".tf"):
			tf = true
		case strings.HasSuffix(name, ".bicep") && !e.Type().IsRegular():
			return fmt.Errorf("%s: it is not a regular file, and recur import builds only the regular .bicep files of a directory: name it to build it",
				filepath.Join(dir, name))
		case strings.HasSuffix(name, ".bicep"):
			f.addBicep(filepath.Join(dir, name))
			bicepFiles++
		default:
			others[cmp.Or(filepath.Ext(name), "extensionless")]++
		}
	}
	if tf {
		f.configs = append(f.configs, dir)
	}
	if !tf && bicepFiles == 0 {
		return fmt.Errorf("%s: recur import reads a directory's Terraform (.tf) and Bicep (.bicep) files, and it holds none (%s): name ARM templates (.json) themselves",
			dir, describe(others))
	}
	return nil
}

// addBicep adds the Bicep file path, once: a file named and found in a
// directory named is one template.
func (f *importFiles) addBicep(path string) {
	if !slices.ContainsFunc(f.bicep, func(b string) bool { return filepath.Clean(b) == filepath.Clean(path) }) {
		f.bicep = append(f.bicep, path)
	}
}

// describe says what others, a count of files by extension, are.
func describe(others map[string]int) string {
	if len(others) == 0 {
		return "no files"
	}
	var parts []string
	for _, ext := range slices.Sorted(maps.Keys(others)) {
		n := others[ext]
		plural := "s"
		if n == 1 {
			plural = ""
		}
		parts = append(parts, fmt.Sprintf("%d %s file%s", n, ext, plural))
	}
	return strings.Join(parts, ", ")
}

// bicepMode is --bicep: whether recur import runs a Bicep CLI.
type bicepMode string

const (
	bicepAuto bicepMode = "auto" // the first of bicep and az on PATH
	bicepOff  bicepMode = "off"  // none: a Bicep file is refused
)

func (m *bicepMode) String() string { return string(*m) }

func (m *bicepMode) Set(s string) error {
	switch bicepMode(s) {
	case bicepAuto, bicepOff:
		*m = bicepMode(s)
		return nil
	}
	return fmt.Errorf("%q: want auto or off", s)
}

// buildBicep builds the ARM template of each Bicep file with the Bicep
// CLI on PATH, within budget. Without one, or with --bicep off, it says
// how to build them by hand.
func buildBicep(ctx context.Context, files []string, mode bicepMode, budget *migrate.Budget) (map[string][]byte, error) {
	if len(files) == 0 {
		return nil, nil
	}
	cli, found := bicep.Find(exec.LookPath)
	switch {
	case mode == bicepOff:
		return nil, fmt.Errorf("%s: recur reads Bicep through a Bicep CLI, and --bicep off runs none; build the ARM templates, then import them:\n%s",
			strings.Join(files, ", "), bicep.HowToBuild(files))
	case !found:
		return nil, fmt.Errorf("%s: recur reads Bicep through a Bicep CLI (bicep, or az), and none is on PATH; build the ARM templates, then import them:\n%s",
			strings.Join(files, ", "), bicep.HowToBuild(files))
	}
	cli.Env = cliEnv()
	built := map[string][]byte{}
	for _, f := range files {
		data, err := cli.Build(ctx, f, budget)
		if err != nil {
			return nil, err
		}
		built[f] = data
	}
	return built, nil
}

// cliEnv is the environment a Bicep CLI runs in: recur's, but for its
// own variables (RECUR_TOKEN among them), which are no business of the
// CLI's.
func cliEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "RECUR_") })
}

// errNothingToImport is an import whose files define no job collection
// or job.
var errNothingToImport = errors.New("the files define no job collection or job (Microsoft.Scheduler/jobCollections, azurerm_scheduler_job_collection, or their jobs)")
