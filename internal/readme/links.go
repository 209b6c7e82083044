package readme

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// linkPattern matches a Markdown link's target: [text](target).
var linkPattern = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingPattern matches a Markdown heading; idPattern an HTML anchor.
var (
	headingPattern = regexp.MustCompile(`^#{1,6} (.+)$`)
	idPattern      = regexp.MustCompile(`id="([^"]+)"`)
)

// BrokenLinks returns the links of the Markdown files named (paths
// relative to root) that lead nowhere: to a file that does not exist, or
// to an anchor its Markdown file lacks (a heading as GitHub names it, or
// an HTML id). Links to other sites are not followed; code blocks are
// skipped.
func BrokenLinks(root string, files []string) ([]string, error) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		lines, err := prose(path)
		if err != nil {
			return nil, err
		}
		a := map[string]bool{}
		seen := map[string]int{}
		for _, line := range lines {
			if m := headingPattern.FindStringSubmatch(line); m != nil {
				s := Slug(m[1])
				if n := seen[s]; n > 0 {
					a[fmt.Sprintf("%s-%d", s, n)] = true
				} else {
					a[s] = true
				}
				seen[s]++
			}
			for _, m := range idPattern.FindAllStringSubmatch(line, -1) {
				a[m[1]] = true
			}
		}
		anchors[path] = a
		return a, nil
	}
	var broken []string
	for _, file := range files {
		src := filepath.Join(root, file)
		lines, err := prose(src)
		if err != nil {
			return nil, err
		}
		for _, line := range lines {
			for _, m := range linkPattern.FindAllStringSubmatch(line, -1) {
				link := m[1]
				if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
					continue
				}
				path, frag, _ := strings.Cut(link, "#")
				target := src
				if path != "" {
					target = filepath.Join(filepath.Dir(src), path)
				}
				if _, err := os.Stat(target); err != nil {
					broken = append(broken, fmt.Sprintf("%s: %s: no such file", file, link))
					continue
				}
				if frag == "" || !strings.HasSuffix(target, ".md") {
					continue
				}
				a, err := anchorsOf(target)
				if err != nil {
					return nil, err
				}
				if !a[frag] {
					broken = append(broken, fmt.Sprintf("%s: %s: no such anchor", file, link))
				}
			}
		}
	}
	return broken, nil
}

// Slug is the anchor GitHub gives a heading: lower case, spaces made
// hyphens, and every character but letters, digits, hyphens and
// underscores dropped.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// prose returns the lines of the Markdown file at path outside its
// fenced code blocks.
func prose(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	inBlock := false
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			out = append(out, line)
		}
	}
	return out, nil
}
