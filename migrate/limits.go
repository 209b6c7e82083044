package migrate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"unicode/utf8"
)

// Limits bound what reading an import's files may cost. The files come
// from someone else (a colleague, a repository, a vendor), and a few lines
// of either language can ask for more memory and time than any machine
// has: locals or variables that double each other, a number a billion
// digits long, a list iterated within itself.
type Limits struct {
	// TemplateBytes bounds one ARM template or parameters file: Azure's
	// own limit for a template.
	TemplateBytes int64
	// ConfigBytes bounds the Terraform files of one configuration (its
	// .tf and var files) together: HCL's syntax tree of the worst files
	// takes some 300 times their size, and a configuration is held whole.
	ConfigBytes int64
	// TotalBytes bounds every file an import reads, together.
	TotalBytes int64
	// ValueBytes bounds any one value an expression evaluates to (a
	// string, a list, an object, a file that file() reads), and one
	// resource's body. recur's API takes 16 KiB for a job.
	ValueBytes int
	// ExprBytes bounds what one expression may build, values within it
	// included, reckoned from what it refers to before it is evaluated:
	// a template that repeats a value a million times is refused
	// without being built.
	ExprBytes int64
	// EvalBytes bounds the values an import evaluates, together.
	EvalBytes int64
	// Steps bounds the evaluation's steps: expressions evaluated,
	// functions called, iterations of for expressions, references.
	Steps int64
	// Depth bounds how deeply expressions nest and references chain, well
	// within the stack.
	Depth int
}

// DefaultLimits are the limits of recur import.
var DefaultLimits = Limits{
	TemplateBytes: 4 << 20,
	ConfigBytes:   1 << 20,
	TotalBytes:    16 << 20,
	ValueBytes:    1 << 20,
	ExprBytes:     16 << 20,
	EvalBytes:     256 << 20,
	Steps:         10_000_000,
	Depth:         256,
}

// LimitError is an import refused for a limit: what went over which.
type LimitError struct {
	What  string // `main.tf:19,9-35: the value of "${local.l16}${local.l16}" is larger than 1 MiB`
	Limit string // "1 MiB for a value"
}

func (e *LimitError) Error() string { return e.What + ": over recur import's limit of " + e.Limit }

// Budget is what one import may still spend reading and evaluating its
// files, under its Limits, and which files it read. The readers of one
// import share one; it is not safe for concurrent use.
type Budget struct {
	limits    Limits
	read      int64
	evaluated int64
	steps     int64
	files     []string
	named     map[string]bool // files
}

// NewBudget returns a budget of limits.
func NewBudget(limits Limits) *Budget { return &Budget{limits: limits} }

// Limits returns the budget's limits.
func (b *Budget) Limits() Limits { return b.limits }

// Files returns the files read, in the order they were first read.
func (b *Budget) Files() []string { return b.files }

// ReadFile reads the file at path, of at most max bytes (limit names that
// bound in an error), and counts it against the import's total.
func (b *Budget) ReadFile(path string, max int64, limit string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return b.Read(path, f, max, limit)
}

// Read reads r, the file named name, as ReadFile does.
func (b *Budget) Read(name string, r io.Reader, max int64, limit string) ([]byte, error) {
	// A regular file's size is known before any of it is read; a pipe's
	// is not, so reading stops one byte past the bound either way.
	if f, ok := r.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && info.Size() > max {
			return nil, &LimitError{fmt.Sprintf("%s is %s", Shorten(name), Size(info.Size())), limit}
		}
	}
	left := b.limits.TotalBytes - b.read
	data, err := io.ReadAll(io.LimitReader(r, min(max, left)+1))
	if err != nil {
		return nil, err
	}
	switch n := int64(len(data)); {
	case n > max:
		return nil, &LimitError{fmt.Sprintf("%s is larger than %s", Shorten(name), Size(max)), limit}
	case n > left:
		return nil, &LimitError{"the files read, with " + Shorten(name) + ", are larger than " + Size(b.limits.TotalBytes) + " together",
			Size(b.limits.TotalBytes) + " for all the files of an import"}
	}
	b.read += int64(len(data))
	if !b.named[name] {
		if b.named == nil {
			b.named = map[string]bool{}
		}
		b.named[name] = true
		b.files = append(b.files, name)
	}
	return data, nil
}

// Step counts n steps of evaluation at where.
func (b *Budget) Step(n int64, where string) error {
	b.steps += n
	if b.steps > b.limits.Steps {
		return &LimitError{fmt.Sprintf("the evaluation takes more than %d steps (at %s)", b.limits.Steps, where),
			fmt.Sprintf("%d steps for an import", b.limits.Steps)}
	}
	return nil
}

// Value checks a value of size bytes that what evaluated to and counts it
// against the import's total.
func (b *Budget) Value(what string, size int) error {
	if size > b.limits.ValueBytes {
		return &LimitError{fmt.Sprintf("%s is larger than %s", what, Size(int64(b.limits.ValueBytes))), Size(int64(b.limits.ValueBytes)) + " for a value"}
	}
	b.evaluated += int64(size)
	if b.evaluated > b.limits.EvalBytes {
		return &LimitError{"the values evaluated, with " + what + ", are larger than " + Size(b.limits.EvalBytes) + " together",
			Size(b.limits.EvalBytes) + " for all the values an import evaluates"}
	}
	return nil
}

// ValueSize returns about the bytes v, a body of Go's JSON types and the
// readers' own (map[string]string, []int64), takes written as JSON; it
// stops counting past limit. Values shared within v count each time
// they appear, as they are written.
func ValueSize(v any, limit int) int {
	n := 0
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Invalid:
			n += 4
		case reflect.Interface, reflect.Pointer:
			if v.IsNil() {
				n += 4
				return
			}
			walk(v.Elem())
		case reflect.String:
			n += v.Len() + 2
		case reflect.Map:
			for it := v.MapRange(); n <= limit && it.Next(); {
				walk(it.Key())
				walk(it.Value())
				n += 2
			}
			n += 2
		case reflect.Slice, reflect.Array:
			for i := 0; n <= limit && i < v.Len(); i++ {
				walk(v.Index(i))
				n++
			}
			n += 2
		default:
			n += 20
		}
	}
	walk(reflect.ValueOf(v))
	return n
}

// Size writes n bytes as the limits are written: 1 MiB, 4 MiB, 512 bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n == 1:
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// maxShown is how much of a text from the files a report or an error
// quotes: an expression can be megabytes long.
const maxShown = 200

// Shorten returns s, or its start and its length when it is longer than
// a report quotes.
func Shorten(s string) string {
	if len(s) <= maxShown {
		return s
	}
	end := maxShown
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:end], len(s))
}

// IsLimit reports whether err is an import refused for a limit.
func IsLimit(err error) bool {
	var le *LimitError
	return errors.As(err, &le)
}
