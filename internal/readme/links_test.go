package readme

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryLinkOfTheDocsLeadsSomewhere: each relative link of the README,
// BENCHMARKS.md, docs/ and the lab notebook names a file that exists
// and, for a Markdown file, an anchor it has.
func TestEveryLinkOfTheDocsLeadsSomewhere(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{"README.md", "BENCHMARKS.md"}
	for _, dir := range []string{"docs", filepath.Join("bench", "history")} {
		matches, err := filepath.Glob(filepath.Join(root, dir, "*.md"))
		require.NoError(t, err)
		for _, m := range matches {
			rel, err := filepath.Rel(root, m)
			require.NoError(t, err)
			files = append(files, rel)
		}
	}
	require.Greater(t, len(files), 20, "the docs found")
	broken, err := BrokenLinks(root, files)
	require.NoError(t, err)
	require.Empty(t, broken)
}

// TestBrokenLinksFindsAMissingFileAndAnchor: a link to a file that does
// not exist and one to a heading spelled otherwise are broken; GitHub's
// anchors of headings with punctuation, a repeated heading and an HTML
// id are found, and links in code blocks and to other sites skipped.
func TestBrokenLinksFindsAMissingFileAndAnchor(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.md"), []byte(
		"# B\n\n### The floor (`--min-interval`)\n\n## Runs\n\n## Runs\n\n| <a id=\"row\"></a>x |\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.md"), []byte(
		"[ok](b.md#the-floor---min-interval) [ok](b.md#runs-1) [ok](b.md#row) [ok](https://example.com/x#y)\n"+
			"[bad](b.md#the-floor-min-interval) [bad](c.md)\n```\n[skipped](nowhere.md)\n```\n"), 0o600))
	broken, err := BrokenLinks(dir, []string{"a.md"})
	require.NoError(t, err)
	require.Equal(t, []string{"a.md: b.md#the-floor-min-interval: no such anchor", "a.md: c.md: no such file"}, broken)
}
