package readme

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCommandsOfASection: only the code blocks under the section's
// heading count, comments are cut off, blank lines dropped, and a missing
// section is an error.
func TestCommandsOfASection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	require.NoError(t, os.WriteFile(path, []byte("# x\n\n## Other\n\n```sh\nrecur other\n```\n\n"+
		"## Against a Temporal cluster\n\nText, `recur not-a-command`.\n\n```sh\nrecur keygen keys.json    # once\n\n"+
		"temporal operator search-attribute create --name A  # and so on\n```\n\n## Layout\n\n```\nrecur after\n```\n"), 0o600))
	commands, err := Commands(path, "Against a Temporal cluster")
	require.NoError(t, err)
	require.Equal(t, [][]string{
		{"recur", "keygen", "keys.json"},
		{"temporal", "operator", "search-attribute", "create", "--name", "A"},
	}, commands)
	_, err = Commands(path, "Missing")
	require.ErrorContains(t, err, `no section "Missing"`)
}
