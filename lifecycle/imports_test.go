package lifecycle_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTheMachinesImportNoTemporal: the job's machine and the collection's
// ledger import no Temporal package of their own; what they ask of
// history they ask through their World. (jobs, which both import, names
// Temporal's error types for the messages it defines.)
func TestTheMachinesImportNoTemporal(t *testing.T) {
	for _, dir := range []string{".", "lifecycletest", "../collectionstate"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range parsed.Imports {
				if path, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(path, "go.temporal.io/") {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
	}
}
