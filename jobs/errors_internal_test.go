package jobs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
)

// TestEveryCodeCrossesTheWire: every string constant named Code... in this
// package and in recurrence is a code FromApplicationError takes back, so
// that a code added later is not answered 500.
func TestEveryCodeCrossesTheWire(t *testing.T) {
	found := 0
	for _, dir := range []string{".", "../recurrence"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			require.NoError(t, err)
			for _, decl := range f.Decls {
				gen, ok := decl.(*ast.GenDecl)
				if !ok || gen.Tok != token.CONST {
					continue
				}
				for _, spec := range gen.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if !strings.HasPrefix(name.Name, "Code") || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						code, err := strconv.Unquote(lit.Value)
						require.NoError(t, err)
						require.True(t, wireCodes[code], "%s: %s (%q) is not in wireCodes", path, name.Name, code)
						found++
					}
				}
			}
		}
	}
	require.Len(t, wireCodes, found, "wireCodes lists exactly the codes declared")
}

// TestAnApplicationErrorOfAnotherTypeIsNoBusinessError: the error a
// workflow's validator returns comes back with its code and target; one
// Temporal raises, with a type of its own, does not.
func TestAnApplicationErrorOfAnotherTypeIsNoBusinessError(t *testing.T) {
	e, ok := FromApplicationError((&Error{Code: CodeConflict, Target: "properties.state", Message: "final"}).ToApplicationError())
	require.True(t, ok)
	require.Equal(t, &Error{Code: CodeConflict, Target: "properties.state", Message: "final"}, e)

	_, ok = FromApplicationError(temporal.NewNonRetryableApplicationError(
		"Workflow Update failed because the Workflow completed before the Update completed.", "AcceptedUpdateCompletedWorkflow", nil))
	require.False(t, ok)
}
