package arm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportsNameWhatHasNoName names each resource whose name is not
// known as the template writes it, so that a report's row says which it
// is: the template string of its name, within its collection's for a
// nested job, or its path when the template gives no name.
func TestReportsNameWhatHasNoName(t *testing.T) {
	file := write(t, "names.json", `{
  "parameters": { "coll": { "type": "string" } },
  "resources": [
    {
      "type": "Microsoft.Scheduler/jobCollections", "apiVersion": "2016-03-01",
      "name": "[parameters('coll')]", "location": "westeurope",
      "resources": [
        { "type": "jobs", "name": "nightly", "properties": {} },
        { "type": "jobs", "name": "[concat('n-', bogus())]", "properties": {} }
      ]
    },
    {
      "type": "Microsoft.Scheduler/jobCollections", "apiVersion": "2016-03-01",
      "name": "ops", "location": "westeurope",
      "resources": [
        { "type": "jobs", "name": "[concat('shard-', copyIndex())]", "copy": { "name": "s", "count": 2 }, "properties": {} },
        { "type": "jobs", "name": "[concat('n-', bogus())]", "properties": {} }
      ]
    },
    { "type": "Microsoft.Scheduler/jobCollections/jobs", "apiVersion": "2016-03-01", "name": "[concat(parameters('coll'), '/weekly')]", "properties": {} },
    { "type": "Microsoft.Scheduler/jobCollections/jobs", "apiVersion": "2016-03-01", "name": "weekly", "properties": {} },
    { "type": "Microsoft.Scheduler/jobCollections", "apiVersion": "2016-03-01", "location": "westeurope" }
  ]
}`)
	rs, err := Read([]string{file}, Options{})
	require.NoError(t, err)
	var names []string
	for _, r := range rs {
		names = append(names, r.Name())
	}
	assert.Equal(t, []string{
		"[parameters('coll')]",
		"[parameters('coll')]/nightly",
		"[parameters('coll')]/[concat('n-', bogus())]",
		"ops",
		"ops/[concat('shard-', copyIndex())]",
		"ops/[concat('n-', bogus())]",
		"[concat(parameters('coll'), '/weekly')]",
		"weekly",
		"resources[4]",
	}, names)
}
