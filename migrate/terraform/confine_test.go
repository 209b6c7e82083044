package terraform

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bodyJob is a job whose body is expr.
func bodyJob(expr string) string {
	return jobHead + `
  action_web {
    url  = "https://x.example"
    body = ` + expr + `
  }
}`
}

// TestFileReadsOnlyUnderTheConfiguration reads configurations whose
// file() and filebase64() reach out of their directory, as written, through
// .. or through a link, or name what is not a regular file: each is refused,
// naming the path as written and where it leads, and no resource is read.
func TestFileReadsOnlyUnderTheConfiguration(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("RECUR_TOKEN=stolen"), 0o600))
	resolvedSecret, err := filepath.EvalSymlinks(secret)
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		call  string
		setup func(t *testing.T, dir string)
		// leads names where the call leads, as the error says it.
		leads []string
	}{
		{name: "the environment", call: `filebase64("/proc/self/environ")`, leads: []string{"/proc/self/environ"}},
		{name: "an absolute path", call: `file("/etc/passwd")`, leads: []string{"/etc/passwd"}},
		{name: "dot dots", call: `file("../../../../../../etc/hostname")`, leads: []string{"/etc/hostname"}},
		{name: "dot dots within", call: `file("sub/../../secret.txt")`},
		{name: "a link out", call: `file("link.txt")`, leads: []string{resolvedSecret},
			setup: func(t *testing.T, dir string) { require.NoError(t, os.Symlink(secret, filepath.Join(dir, "link.txt"))) }},
		{name: "a relative link out", call: `file("sub/up.txt")`, leads: []string{resolvedSecret},
			setup: func(t *testing.T, dir string) {
				rel, err := filepath.Rel(filepath.Join(dir, "sub"), secret)
				require.NoError(t, err)
				require.NoError(t, os.Symlink(rel, filepath.Join(dir, "sub", "up.txt")))
			}},
		{name: "a directory link out", call: `file("out/secret.txt")`, leads: []string{resolvedSecret},
			setup: func(t *testing.T, dir string) { require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out"))) }},
		{name: "a link to a device", call: `file("zero")`, leads: []string{"/dev/zero"},
			setup: func(t *testing.T, dir string) {
				require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero")))
			}},
		{name: "a directory", call: `file("sub")`, leads: []string{"which is a directory"}},
		{name: "a pipe", call: `file("fifo")`, leads: []string{"which is a pipe"},
			setup: func(t *testing.T, dir string) { require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := write(t, map[string]string{"main.tf": bodyJob(c.call), "sub/cert.txt": "inside"})
			if c.setup != nil {
				c.setup(t, dir)
			}
			rs, err := Read([]string{dir}, Options{})
			require.Error(t, err, "%s is refused", c.call)
			assert.Nil(t, rs, "nothing is read")
			assert.Contains(t, err.Error(), c.call, "the path as written")
			for _, l := range c.leads {
				assert.Contains(t, err.Error(), l, "where it leads")
			}
			assert.Contains(t, err.Error(), "main.tf:9,", "where the file calls it")
			assert.NotContains(t, err.Error(), "stolen")
		})
	}
}

// TestFileReadsUnderTheConfiguration reads files under the configuration's
// directory however they are named, and a --set value stands for a file
// outside it without reading it.
func TestFileReadsUnderTheConfiguration(t *testing.T) {
	dir := write(t, map[string]string{"sub/cert.txt": "inside", "other.txt": "other"})
	require.NoError(t, os.Symlink("other.txt", filepath.Join(dir, "alias.txt")))
	abs, err := filepath.Abs(filepath.Join(dir, "sub", "cert.txt"))
	require.NoError(t, err)
	for call, want := range map[string]string{
		`file("sub/cert.txt")`:                  "inside",
		`file("${path.module}/sub/cert.txt")`:   "inside",
		`file("./sub/../sub/cert.txt")`:         "inside",
		`file("` + abs + `")`:                   "inside",
		`file("alias.txt")`:                     "other",
		`base64decode(filebase64("alias.txt"))`: "other",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(bodyJob(call)), 0o600))
		rs, err := Read([]string{dir}, Options{})
		require.NoError(t, err, call)
		require.Len(t, rs, 1)
		assert.Empty(t, rs[0].Missing, call)
		assert.Equal(t, want, member(t, rs[0].Body, "properties", "action", "request", "body"), call)
	}

	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(bodyJob(`file("/etc/passwd")`)), 0o600))
	rs, err := Read([]string{dir}, Options{Set: map[string]string{`file("/etc/passwd")`: "given"}})
	require.NoError(t, err, "--set gives the value, and nothing is read")
	assert.Equal(t, "given", member(t, rs[0].Body, "properties", "action", "request", "body"))
}

// TestDirectoryLendsOnlyItsOwnFiles reads a directory whose .tf or var
// file is a link out of it: refused, as a file() would be.
func TestDirectoryLendsOnlyItsOwnFiles(t *testing.T) {
	elsewhere := write(t, map[string]string{
		"stolen.tf":     `variable "password" { default = "hunter2" }`,
		"secret.tfvars": `url = "https://stolen.example"`,
	})
	for link, target := range map[string]string{"stolen.tf": "stolen.tf", "terraform.tfvars": "secret.tfvars"} {
		t.Run(link, func(t *testing.T) {
			dir := write(t, map[string]string{"main.tf": `variable "url" {}` + jobHead + `
  action_web { url = var.url }
}`})
			require.NoError(t, os.Symlink(filepath.Join(elsewhere, target), filepath.Join(dir, link)))
			rs, err := Read([]string{dir}, Options{})
			require.Error(t, err)
			assert.Nil(t, rs)
			assert.Contains(t, err.Error(), filepath.Join(dir, link))
			assert.Contains(t, err.Error(), "outside "+dir)
		})
	}
}
