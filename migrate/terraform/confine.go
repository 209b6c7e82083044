package terraform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/recurhq/recur/migrate"
)

// A configuration comes from someone else, and file("/proc/self/environ")
// would put the importer's environment, its API token too, in a job that
// sends it where the file says. So file and filebase64 read only regular
// files under the configuration's directory, and a configuration's
// directory lends the reader only the .tf and var files under it: a path
// that leads out of the directory, as written, through .. or through a
// link, is refused, and so is a directory, a device or a pipe.

// confined reads files under one configuration's directory.
type confined struct {
	dir      string // absolute
	resolved string // dir with its links resolved
	root     *os.Root
}

func openConfined(dir string) (*confined, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(resolved)
	if err != nil {
		return nil, err
	}
	return &confined{dir: abs, resolved: resolved, root: root}, nil
}

func (c *confined) close() {
	if c != nil {
		c.root.Close()
	}
}

// refusal is a path the reader does not read: where it leads, and why.
type refusal struct {
	resolved, why string
}

func (r *refusal) Error() string {
	return fmt.Sprintf("it reads %s, %s: recur import reads only regular files under the directory of the configuration",
		migrate.Shorten(r.resolved), r.why)
}

// open opens the file written, relative to the directory, and returns it
// with its absolute path. A file under the directory that is not there
// is an error of fs.ErrNotExist; any other refusal is a *refusal.
func (c *confined) open(written string) (*os.File, string, error) {
	full := written
	if !filepath.IsAbs(full) {
		full = filepath.Join(c.dir, full)
	}
	full = filepath.Clean(full)
	rel, ok := under(c.dir, full)
	if !ok {
		rel, ok = under(c.resolved, full)
	}
	if !ok {
		return nil, full, &refusal{c.resolution(full), "outside " + c.dir}
	}
	// A path under the directory may still lead out through a link:
	// the root follows none that does. Opening without blocking keeps
	// a pipe from holding the import; the file is checked as opened.
	f, err := c.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, full, err
	case err != nil:
		return nil, full, &refusal{c.resolution(full), c.outside(full, err)}
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = &refusal{c.resolution(full), "which is " + kindOf(info.Mode())}
	}
	if err != nil {
		f.Close()
		return nil, full, err
	}
	return f, full, nil
}

// resolution names where full leads, links resolved, as far as it can
// be known.
func (c *confined) resolution(full string) string {
	if r, err := filepath.EvalSymlinks(full); err == nil && r != full {
		return full + ", a link to " + r
	}
	return full
}

// outside says why the root refused to open full.
func (c *confined) outside(full string, err error) string {
	if r, rerr := filepath.EvalSymlinks(full); rerr == nil {
		if _, ok := under(c.resolved, r); !ok {
			return "outside " + c.dir
		}
	}
	return "which cannot be read there: " + err.Error()
}

// under returns path relative to dir when path is dir or under it.
func under(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}
