// Package readme reads the commands the README tells its reader to run,
// so that tests run exactly those.
package readme

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Commands returns the commands in the code blocks of the README at path
// under the heading "## "+section, each as its words with its comment
// (from "#") cut off, in order.
func Commands(path, section string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]string
	var inSection, inBlock, found bool
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			inSection = line == "## "+section
			found = found || inSection
		case !inSection:
		case strings.HasPrefix(line, "```"):
			inBlock = !inBlock
		case inBlock:
			if i := strings.Index(line, "#"); i >= 0 {
				line = line[:i]
			}
			if words := strings.Fields(line); len(words) > 0 {
				out = append(out, words)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !found {
		return nil, fmt.Errorf("%s has no section %q", path, section)
	}
	return out, nil
}
