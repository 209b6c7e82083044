package arm

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/recurhq/recur/migrate"
)

// APIVersion is the version of Microsoft.Scheduler's resources that
// templates name.
const APIVersion = "2016-03-01"

// The $schema and contentVersion of the templates Write writes.
const (
	templateSchema = "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"
	contentVersion = "1.0.0.0"
)

type armTemplate struct {
	Schema         string                 `json:"$schema"`
	ContentVersion string                 `json:"contentVersion"`
	Parameters     map[string]secureParam `json:"parameters"`
	Resources      []*resource            `json:"resources"`
}

type secureParam struct {
	Type     string            `json:"type"`
	Metadata map[string]string `json:"metadata"`
}

type resource struct {
	Type       string      `json:"type"`
	APIVersion string      `json:"apiVersion"`
	Name       string      `json:"name"`
	Location   any         `json:"location,omitempty"`
	Tags       any         `json:"tags,omitempty"`
	DependsOn  []string    `json:"dependsOn,omitempty"`
	Properties any         `json:"properties"`
	Resources  []*resource `json:"resources,omitempty"`
}

// Write writes one ARM template of the resources, which must all be in
// one resource group (a template deploys into one): each job nested in
// its collection's resources, or at the top level named "coll/job" when
// its collection is not among them. Every secret is a securestring
// parameter without a value, named after its job and place; the template
// holds none. A string that ARM would read as an expression ("[...]") is
// escaped ("[[...]").
func Write(w io.Writer, es []migrate.Exported) error {
	groups := map[string]bool{}
	for _, e := range es {
		groups[e.ResourceGroup] = true
	}
	if len(groups) > 1 {
		return fmt.Errorf("the resources are in %d resource groups; an ARM template deploys into one: export each resource group on its own", len(groups))
	}
	t := armTemplate{Schema: templateSchema, ContentVersion: contentVersion, Parameters: map[string]secureParam{}, Resources: []*resource{}}
	collections := map[string]*resource{}
	for _, e := range es {
		def := migrate.MapStrings(e.Definition, escaped).(map[string]any)
		for _, s := range e.Secrets {
			name := parameterName(e.Resource, s, t.Parameters)
			t.Parameters[name] = secureParam{Type: "securestring",
				Metadata: map[string]string{"description": fmt.Sprintf("%s of job %s", s, e.Name())}}
			s.Set(def, "[parameters('"+name+"')]")
		}
		switch e.Kind {
		case migrate.Collection:
			r := &resource{Type: "Microsoft.Scheduler/jobCollections", APIVersion: APIVersion, Name: e.Collection,
				Location: def["location"], Tags: def["tags"], Properties: def["properties"]}
			collections[e.Collection] = r
			t.Resources = append(t.Resources, r)
		case migrate.Job:
			r := &resource{Type: "jobs", APIVersion: APIVersion, Name: e.Job, Properties: def["properties"],
				DependsOn: []string{"[resourceId('Microsoft.Scheduler/jobCollections', '" + e.Collection + "')]"}}
			if coll, ok := collections[e.Collection]; ok {
				coll.Resources = append(coll.Resources, r)
				continue
			}
			r.Type, r.Name, r.DependsOn = "Microsoft.Scheduler/jobCollections/jobs", e.Collection+"/"+e.Job, nil
			t.Resources = append(t.Resources, r)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(t)
}

// parameterName names the parameter of secret s of r (migrate.SecretName),
// numbered when two would meet.
func parameterName(r migrate.Resource, s migrate.Secret, taken map[string]secureParam) string {
	base := migrate.SecretName(r, s)
	name := base
	for n := 2; ; n++ {
		if _, ok := taken[name]; !ok {
			return name
		}
		name = fmt.Sprintf("%s_%d", base, n)
	}
}

// escaped returns s escaped when ARM would evaluate it as an expression.
func escaped(s string) string {
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		return "[" + s
	}
	return s
}
