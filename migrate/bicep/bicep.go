// Package bicep turns Bicep files into ARM templates for recur import,
// with a Bicep CLI: bicep itself, or Azure's az, which runs its own. The
// templates are then read as any other (package migrate/arm).
//
// The CLI is run as its documentation says a template is printed,
// `bicep build FILE --stdout --no-restore` or
// `az bicep build --file FILE --stdout --no-restore`: no shell, the
// file one argument, its output read as a template file is (bounded by
// the budget's TemplateBytes), the run bounded by a timeout, its stderr
// shown when it fails. --no-restore keeps a build from fetching modules
// from a registry.
//
// A Bicep file is built only when it reads no other file: the Bicep CLI
// reads whatever loadTextContent, loadFileAsBase64, loadJsonContent, a
// module or an import names, anywhere the user may read, and puts it
// in the template, out of reach of the rule that confines what recur
// import reads (docs/security.md). Check refuses such a file, and the
// user builds it by hand and reads what it embeds.
package bicep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/recurhq/recur/migrate"
)

// DefaultTimeout bounds one build: az may install or update its Bicep CLI
// before its first build, which takes longer than any build.
const DefaultTimeout = 2 * time.Minute

// CLI is a Bicep CLI recur import runs.
type CLI struct {
	// Path is the program: a bicep, or an az.
	Path string
	// Az says Path is Azure's CLI, which takes az bicep build's flags.
	Az bool
	// Env is the environment the CLI runs in (az needs PATH to find
	// Python); nil for recur's own.
	Env []string
	// Timeout bounds one build.
	Timeout time.Duration
}

// Find returns the first Bicep CLI that lookPath (exec.LookPath) finds:
// bicep, else az. ok is false when there is neither.
func Find(lookPath func(string) (string, error)) (cli CLI, ok bool) {
	for _, name := range []string{"bicep", "az"} {
		if path, err := lookPath(name); err == nil {
			return CLI{Path: path, Az: name == "az", Timeout: DefaultTimeout}, true
		}
	}
	return CLI{}, false
}

// args are the arguments of a build of file that prints the template.
func (c CLI) args(file string) []string {
	// A file named -x would be read as a flag.
	if strings.HasPrefix(file, "-") {
		file = "." + string(filepath.Separator) + file
	}
	if c.Az {
		return []string{"bicep", "build", "--file", file, "--stdout", "--no-restore"}
	}
	return []string{"build", file, "--stdout", "--no-restore"}
}

// String is the command line of a build of FILE, for messages.
func (c CLI) String() string {
	return filepath.Base(c.Path) + " " + strings.Join(c.args("FILE"), " ")
}

// maxStderr is how much of a failed build's stderr an error shows.
const maxStderr = 4 << 10

// Build checks the Bicep file at path (Check) and returns the ARM
// template that c builds of it, read within budget as a template file
// is and recorded as a read of path. ctx ending stops the build.
func (c CLI) Build(ctx context.Context, path string, budget *migrate.Budget) ([]byte, error) {
	limit := budget.Limits().TemplateBytes
	limitName := migrate.Size(limit) + " for an ARM template or parameters file"
	src, err := budget.ReadFile(path, limit, limitName)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := Check(path, src); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, c.Path, c.args(path)...)
	cmd.Env = c.Env
	// A CLI that leaves a child holding its output open is not waited
	// for past its end.
	cmd.WaitDelay = time.Second
	stderr := &headBuffer{max: maxStderr}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	run := c.String()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("build %s: run %s: %w", path, run, err)
	}
	data, readErr := budget.Read(path+" (as "+filepath.Base(c.Path)+" builds it)", stdout, limit, limitName)
	if readErr != nil {
		// Over the limit: the rest of the output is not wanted.
		cancel()
	}
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("build %s: %s did not finish within %s, and was stopped%s", path, run, c.Timeout, stderr.said())
	case readErr != nil:
		return nil, fmt.Errorf("build %s: %w", path, readErr)
	case waitErr != nil:
		return nil, fmt.Errorf("build %s: %s failed (%v)%s", path, run, waitErr, stderr.said())
	}
	return data, nil
}

// reads matches what makes the Bicep CLI read a file other than the one
// it builds, or the environment: a load function, a module, an import
// (modules and imports read other files, or a registry), an extension,
// and readEnvironmentVariable. It is matched in the whole text, comments
// and strings too: a file it wrongly refuses is built by hand.
var reads = regexp.MustCompile(`(?im)\b(load[a-z0-9_]*|readEnvironmentVariable)\s*\(|^[ \t]*(module|import|extension|provider|using)\b[ \t]*[^\s:=]`)

// Check refuses src, the Bicep file at path, when building it would read
// another file or the environment (reads).
func Check(path string, src []byte) error {
	loc := reads.FindSubmatchIndex(src)
	if loc == nil {
		return nil
	}
	what := ""
	if loc[2] >= 0 {
		what = string(src[loc[2]:loc[3]])
	} else {
		what = string(src[loc[4]:loc[5]])
	}
	line := 1 + bytes.Count(src[:loc[0]], []byte("\n"))
	return fmt.Errorf("%s:%d: %s makes the Bicep CLI read another file, or the environment, which recur import does not let it do: "+
		"build the template yourself, look at what it holds, and import it:\n%s", path, line, what, HowToBuild([]string{path}))
}

// HowToBuild says how to build the templates of files, Bicep files, by
// hand and import them.
func HowToBuild(files []string) string {
	var b strings.Builder
	var templates []string
	for _, f := range files {
		fmt.Fprintf(&b, "  az bicep build --file %s    (or: bicep build %s)\n", quote(f), quote(f))
		templates = append(templates, quote(strings.TrimSuffix(f, filepath.Ext(f))+".json"))
	}
	fmt.Fprintf(&b, "  recur import [flags] %s", strings.Join(templates, " "))
	return b.String()
}

// quote quotes s for a POSIX shell when it needs it.
func quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("/._-+,:@%=", r)))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// headBuffer keeps the first max bytes written to it. A CLI's child may
// still write to it after Wait gave up on it (WaitDelay).
type headBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
	cut bool
}

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - h.buf.Len(); len(p) > room {
		h.buf.Write(p[:room])
		h.cut = true
	} else {
		h.buf.Write(p)
	}
	return len(p), nil
}

// said is the stderr a failed build wrote, to end an error with:
// control characters but newlines and tabs taken out, as they could
// rewrite the user's terminal.
func (h *headBuffer) said() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	text := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return -1
		}
		return r
	}, strings.ToValidUTF8(strings.TrimSpace(h.buf.String()), "\uFFFD"))
	if text == "" {
		return "; it wrote nothing to stderr"
	}
	if h.cut {
		text += "\n…"
	}
	return "; its stderr:\n" + text
}
