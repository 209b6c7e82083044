package terraform

import (
	"fmt"
	"regexp"

	"github.com/recurhq/recur/migrate"
)

// unsafeName matches what Terraform's names do not take: they are
// letters, digits, underscores and dashes, from a letter or underscore.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// identifier makes a name a Terraform identifier.
func identifier(s string) string {
	s = unsafeName.ReplaceAllString(s, "_")
	if s == "" || !(s[0] == '_' || 'A' <= s[0] && s[0] <= 'Z' || 'a' <= s[0] && s[0] <= 'z') {
		s = "_" + s
	}
	return s
}

// numbered returns base, or base_2, base_3, ... when taken has it, and
// takes it.
func numbered(base string, taken map[string]bool) string {
	name := base
	for n := 2; taken[name]; n++ {
		name = fmt.Sprintf("%s_%d", base, n)
	}
	taken[name] = true
	return name
}

// resourceNames names the resource of each of es: a collection after its
// name, a job after its; prefixed with the resource group or collection
// when two of es would share it, so that the name still says which.
func resourceNames(es []migrate.Exported) []string {
	groups, collections := map[string]map[string]bool{}, map[string]map[string]bool{}
	add := func(m map[string]map[string]bool, k, v string) {
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		m[k][v] = true
	}
	for _, e := range es {
		if e.Kind == migrate.Collection {
			add(groups, e.Collection, e.ResourceGroup)
		} else {
			add(collections, e.Job, e.ResourceGroup+"/"+e.Collection)
		}
	}
	// The two types are two namespaces: a collection and a job may share
	// a name.
	taken := map[migrate.Kind]map[string]bool{migrate.Collection: {}, migrate.Job: {}}
	names := make([]string, len(es))
	for i, e := range es {
		base := e.Collection
		switch {
		case e.Kind == migrate.Collection && len(groups[e.Collection]) > 1:
			base = e.ResourceGroup + "_" + e.Collection
		case e.Kind == migrate.Job && len(collections[e.Job]) > 1:
			base = e.Collection + "_" + e.Job
		case e.Kind == migrate.Job:
			base = e.Job
		}
		names[i] = numbered(identifier(base), taken[e.Kind])
	}
	return names
}

// variableName names the variable of the secret s of r
// (migrate.SecretName).
func (wr *writer) variableName(r migrate.Resource, s migrate.Secret) string {
	return numbered(migrate.SecretName(r, s), wr.taken)
}
