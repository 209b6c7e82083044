package terraform

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNestedCountsWhatRecurses counts, against a limit of 8, what HCL's
// parser and evaluator recurse into, and not what they read flat: text in
// strings, heredocs and comments, a long template, a long list.
func TestNestedCountsWhatRecurses(t *testing.T) {
	for src, want := range map[string]bool{
		`a = "((((((((((((" # ((((((((((((`:                             false,
		"a = <<EOF\n{\"a\": [[[[[[[[[[1]]]]]]]]]]}\nEOF\nb = 1":         false,
		"a = <<-EOT\n  ${x}(((((((((((\n  EOT\n":                        false,
		`a = "$${(((((((((((("`:                                         false,
		"/* ((((((((((((( */ a = 1":                                     false,
		`a = "` + strings.Repeat("${x}", 100) + `"`:                     false,
		`a = [` + strings.Repeat("1, ", 100) + `]`:                      false,
		"headers = {\n Content-Type = \"a\"\n X-A-B-C-D-E-F = \"b\"\n}": false,
		"a = x == 1 || x == 2\nb = y == 1 || y == 2\nc = 1":             false,
		`a = ((((((((1))))))))`:                                         true,
		`a = 1+1+1+1+1+1+1+1+1`:                                         true,
		`a = !!!!!!!!true`:                                              true,
		`a = "${"${"${"${x}"}"}"}"`:                                     true,
		`a = x ? 1 : y ? 2 : z ? 3 : w ? 4 : 5`:                         true,
	} {
		deep, _ := nested([]byte(src), 8)
		assert.Equal(t, want, deep, "%s", src)
	}
	_, line := nested([]byte("a = 1\n\nb = (((((((((((1)))))))))))"), 8)
	assert.Equal(t, 3, line)
}
