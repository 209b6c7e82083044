package arm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/migrate"
)

// jobWith is a template of one job whose request has the headers given,
// with the variables given.
func jobWith(variables, headers string) string {
	return `{"variables": {` + variables + `}, "resources": [{
  "type": "Microsoft.Scheduler/jobCollections/jobs", "apiVersion": "2016-03-01", "name": "c/j",
  "properties": {"action": {"type": "Https", "request": {"uri": "https://x.example", "method": "GET",
    "headers": {` + headers + `}}}, "recurrence": {"frequency": "Hour"}}}]}`
}

// TestTemplatesAreBounded reads a template larger than Azure deploys, one
// whose variables double an array of large strings, and one whose body
// holds a large variable many times: each refused, named, with the limit.
func TestTemplatesAreBounded(t *testing.T) {
	big := jobWith(`"pad": "`+strings.Repeat("p", 5<<20)+`"`, "")
	_, err := Read([]string{write(t, "big.json", big)}, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "big.json is 5.0 MiB")
	assert.Contains(t, err.Error(), "limit of 4 MiB for an ARM template or parameters file")

	_, err = Read([]string{"testdata/collection.json"}, Options{ParameterFiles: []string{write(t, "big.parameters.json", big)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "big.parameters.json is 5.0 MiB")

	vars := `"v0": ["` + strings.Repeat("a", 1<<10) + `"]`
	for i := 1; i <= 15; i++ {
		vars += fmt.Sprintf(`, "v%d": "[concat(variables('v%d'), variables('v%d'))]"`, i, i-1, i-1)
	}
	_, err = Read([]string{write(t, "doubling.json", jobWith(vars, `"all": "[variables('v15')]"`))}, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "doubling.json: [concat(variables('v9'), variables('v9'))]: what concat returns would be larger than 1 MiB")
	assert.Contains(t, err.Error(), "limit of 1 MiB for a value")

	var headers []string
	for i := range 20 {
		headers = append(headers, fmt.Sprintf(`"h%d": "[variables('big')]"`, i))
	}
	_, err = Read([]string{write(t, "headers.json", jobWith(`"big": "`+strings.Repeat("h", 100<<10)+`"`, strings.Join(headers, ", ")))}, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "headers.json: resources[0]: the body of the resource is larger than 1 MiB")
}

// TestEvaluationStepsAreCounted reads a template with a budget of few
// steps: refused once they are spent, naming where.
func TestEvaluationStepsAreCounted(t *testing.T) {
	budget := migrate.NewBudget(migrate.Limits{TemplateBytes: 1 << 20, TotalBytes: 1 << 20, ValueBytes: 1 << 20, EvalBytes: 1 << 20, Steps: 10})
	_, err := Read([]string{write(t, "steps.json", jobWith(`"a": "[concat('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k')]"`, `"h": "[variables('a')]"`))},
		Options{Budget: budget})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the evaluation takes more than 10 steps")
	assert.Contains(t, err.Error(), "steps.json: [concat('a', 'b'")
	require.Len(t, budget.Files(), 1)
	assert.True(t, strings.HasSuffix(budget.Files()[0], "steps.json"), "the file read is recorded")
}
