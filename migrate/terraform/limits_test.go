package terraform

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allocated returns the bytes the process allocates while f runs.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestDoublingLocalsAreRefused reads 39 locals, each twice the one before
// (2^39 bytes at the last). The first over a value's limit
// (1 MiB, at the 17th) is refused, named with its place, having
// allocated a few megabytes.
func TestDoublingLocalsAreRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("locals {\n  l0 = \"aaaaaaaaaaaaaaaa\"\n")
	for i := 1; i <= 39; i++ {
		fmt.Fprintf(&b, "  l%d = \"${local.l%d}${local.l%d}\"\n", i, i-1, i-1)
	}
	b.WriteString("}\n" + bodyJob("local.l39"))
	dir := write(t, map[string]string{"main.tf": b.String()})
	var err error
	n := allocated(func() { _, err = Read([]string{dir}, Options{}) })
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, "main.tf")+":19,")
	assert.Contains(t, err.Error(), `"${local.l16}${local.l16}"`)
	assert.Contains(t, err.Error(), "limit of 1 MiB for a value")
	assert.Less(t, n, uint64(64<<20), "allocated %d bytes", n)
}

// TestExpressionsAreBounded reads expressions that would build far more
// than a value may hold, or recurse deeper than the stack, in a few
// lines: each is refused before it is built, naming where and the limit.
func TestExpressionsAreBounded(t *testing.T) {
	kib := strings.Repeat("k", 64<<10)
	for _, c := range []struct {
		name, locals, body string
		want               []string
	}{{
		name:   "a value repeated in one template",
		locals: `big = "` + kib + `"`,
		body:   `"` + strings.Repeat("${local.big}", 300) + `"`,
		want:   []string{"could build more than 16 MiB", "16 MiB for what one expression builds"},
	}, {
		name:   "a list iterated within itself",
		locals: `l = [` + strings.Repeat(`"x",`, 1000) + `]`,
		body:   `jsonencode([for a in local.l : [for b in local.l : [for c in local.l : c]]])`,
		want:   []string{"[for b in local.l", "could build more than 16 MiB"},
	}, {
		name: "a number a hundred million digits long",
		body: `"${1e99999999}"`,
		want: []string{"1e99999999 could build more than 16 MiB"},
	}, {
		name: "a format's width",
		body: `format("%0999999999d", 1)`,
		want: []string{`format("%0999999999d", 1)`, "could build more than 16 MiB"},
	}, {
		name:   "a join's separator",
		locals: `sep = "` + kib + `"` + "\n" + `l = [` + strings.Repeat(`"",`, 100) + `]`,
		body:   `join(local.sep, local.l)`,
		want:   []string{"join", "limit of 1 MiB for a value"},
	}, {
		name:   "a format whose width is a variable",
		locals: `f = "%0999999999d"`,
		body:   `format(local.f, 1)`,
		want:   []string{"what format returns would be larger than 1 MiB", "limit of 1 MiB for a value"},
	}, {
		name:   "a body of many headers",
		locals: `big = "` + strings.Repeat("h", 100<<10) + `"`,
		want:   []string{"main.tf:5: azurerm_scheduler_job.j's body is larger than 1 MiB", "limit of 1 MiB for a value"},
	}, {
		name: "parentheses",
		body: strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300),
		want: []string{"main.tf:12 nests deeper than 256", "256 levels of brackets, strings and operators"},
	}, {
		name: "a chain of operators",
		body: strings.Repeat("1+", 100000) + "1",
		want: []string{"nests deeper than 256"},
	}, {
		name: "negations",
		body: strings.Repeat("!", 100000) + "true",
		want: []string{"nests deeper than 256"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			main := "locals {\n" + c.locals + "\n}\n" + bodyJob(c.body)
			if c.body == "" {
				var headers strings.Builder
				for i := range 12 {
					fmt.Fprintf(&headers, "      h%d = local.big\n", i)
				}
				main = "locals {\n" + c.locals + "\n}\n" + jobHead + `
  action_web {
    url     = "https://x.example"
    headers = {
` + headers.String() + `    }
  }
}`
			}
			dir := write(t, map[string]string{"main.tf": main})
			var err error
			n := allocated(func() { _, err = Read([]string{dir}, Options{}) })
			require.Error(t, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Less(t, len(err.Error()), 1000, "the error quotes the files shortened")
			assert.Less(t, n, uint64(256<<20), "allocated %d bytes", n)
		})
	}
}

// TestReferencesChainWithinTheLimit reads locals that refer to each
// other 300 deep: refused, where the stack is still shallow.
func TestReferencesChainWithinTheLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("locals {\n  l0 = \"x\"\n")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&b, "  l%d = local.l%d\n", i, i-1)
	}
	b.WriteString("}\n" + bodyJob("local.l300"))
	_, err := Read([]string{write(t, map[string]string{"main.tf": b.String()})}, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "references chain more than 256 deep")
}

// TestEvaluationStepsAreCounted reads a tuple of 4,000 calls of a function
// recur does not evaluate, each call a search among the others: refused
// once it has taken ten million steps.
func TestEvaluationStepsAreCounted(t *testing.T) {
	calls := make([]string, 4000)
	for i := range calls {
		calls[i] = fmt.Sprintf("t(%d)", i)
	}
	_, err := Read([]string{write(t, map[string]string{"main.tf": bodyJob("jsonencode([" + strings.Join(calls, ", ") + "])")})}, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the evaluation takes more than 10000000 steps")
	assert.Contains(t, err.Error(), "10000000 steps for an import")
}

// TestFilesAreBounded reads a file() larger than a value may be, and a
// configuration larger than one may be: each refused, named, before it is
// read whole.
func TestFilesAreBounded(t *testing.T) {
	big := strings.Repeat("b", 1<<20+1)
	dir := write(t, map[string]string{"main.tf": bodyJob(`file("big.txt")`), "big.txt": big})
	_, err := Read([]string{dir}, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `file("big.txt")`)
	assert.Contains(t, err.Error(), "limit of 1 MiB for a value")

	dir = write(t, map[string]string{"main.tf": bodyJob(`"x"`), "padding.tf": "# " + big + "\n"})
	_, err = Read([]string{dir}, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "padding.tf")
	assert.Contains(t, err.Error(), "limit of 1 MiB for the files of one Terraform configuration together")

	// A var file named on the command line may be a pipe: it is read
	// to its limit, not to its end.
	fifo := filepath.Join(t.TempDir(), "vars.tfvars")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		f.WriteString(`url = "` + big)
	}()
	_, err = Read([]string{write(t, map[string]string{"main.tf": bodyJob(`"x"`)})}, Options{VarFiles: []string{fifo}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "vars.tfvars is larger than 1 MiB")
}
