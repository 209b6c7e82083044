package migrate

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/recurhq/recur/jobs"
)

// Exported is a resource as recur export writes it: its definition as a
// PUT would send it, and the places of its secrets, which recur's answers
// never show, so that a writer leaves each to a parameter.
type Exported struct {
	Resource
	// Definition is Body decoded: what a writer walks.
	Definition map[string]any
	Secrets    []Secret
}

// Secret is the place of a secret in a definition: the members from its
// top (properties, action, request, authentication, password).
type Secret []string

func (s Secret) String() string { return strings.Join(s, ".") }

// SecretName names the parameter or variable that a writer leaves the
// secret s of r to: its collection, job and place, in letters, digits and
// underscores, from a letter or an underscore, as ARM parameters and
// Terraform variables both take them. Two secrets may share it: the
// writer numbers the second.
func SecretName(r Resource, s Secret) string {
	parts := []string{r.Collection, r.Job}
	for _, member := range s {
		switch member {
		case "properties", "action", "request", "authentication":
		default:
			parts = append(parts, member)
		}
	}
	name := unsafeName.ReplaceAllString(strings.Join(parts, "_"), "_")
	if name == "" || !(name[0] == '_' || 'A' <= name[0] && name[0] <= 'Z' || 'a' <= name[0] && name[0] <= 'z') {
		name = "_" + name
	}
	return name
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// ExportOptions says what an export holds as secrets beyond the members
// recur's answers never show.
type ExportOptions struct {
	// SecretHeaders are more names of request headers whose values are
	// secrets (any case), beside the well-known ones (CredentialHeader).
	SecretHeaders []string
}

// ForExport makes an Exported of a resource as recur's GET answered it:
// without what the scheduler keeps (id, type, name, etag, the status,
// a client certificate's computed members) and with its secrets' places:
// the members recur's answers never show, and the values that GET shows
// but that are credentials all the same (a credential header, a URI with
// a credential in its query: CredentialHeader, CredentialQuery).
// A completed job is written completed, which a PUT takes as it creates a
// job, and a faulted job disabled: a job that ran its course should not
// run again because it moved. Every state is spelled as Azure's enums
// have it (Enabled, Disabled), collections' as jobs'.
func ForExport(r Resource, answer json.RawMessage, o ExportOptions) (Exported, error) {
	var def map[string]any
	if err := json.Unmarshal(answer, &def); err != nil {
		return Exported{}, fmt.Errorf("%s %s: %w", r.Kind, r.Name(), err)
	}
	for _, name := range []string{"id", "type", "name", "etag"} {
		delete(def, name)
	}
	e := Exported{Resource: r, Definition: def}
	props, _ := def["properties"].(map[string]any)
	if state, ok := props["state"].(string); ok {
		props["state"] = exportedState(state)
	}
	if r.Kind == Job && props != nil {
		delete(props, "status")
		if action, ok := props["action"].(map[string]any); ok {
			e.Secrets = append(e.Secrets, actionSecrets(action, Secret{"properties", "action"}, o)...)
			if errorAction, ok := action["errorAction"].(map[string]any); ok {
				e.Secrets = append(e.Secrets, actionSecrets(errorAction, Secret{"properties", "action", "errorAction"}, o)...)
			}
		}
	}
	body, err := json.Marshal(def)
	if err != nil {
		return Exported{}, err
	}
	e.Body = body
	return e, nil
}

// exportedState is how an export spells a collection's or a job's state:
// a faulted job is disabled, and every state is spelled as Azure's enums
// have it, whatever the case recur's answer used.
func exportedState(state string) string {
	if strings.EqualFold(state, "Faulted") {
		return "Disabled"
	}
	for _, s := range []string{"Enabled", "Disabled", "Completed", "Suspended"} {
		if strings.EqualFold(state, s) {
			return s
		}
	}
	return state
}

// authSecrets are the secret members of each type of HTTP authentication.
var authSecrets = map[string][]string{
	"basic":                {"password"},
	"clientcertificate":    {"pfx", "password"},
	"activedirectoryoauth": {"secret"},
}

// computedAuth are an authentication's members that recur computes from
// the PFX: a PUT does not give them.
var computedAuth = []string{"certificateThumbprint", "certificateSubjectName", "certificateExpirationDate", "certificateExpiration"}

// retryTypes are the retry types as a PUT spells them; answers write them
// in lower case, as Azure did.
var retryTypes = map[string]string{"fixed": "Fixed", "exponential": "Exponential", "none": "None"}

// actionSecrets returns the places of an action's secrets, at, drops its
// authentication's computed members and spells its retry type as a PUT
// does, as the files Azure's users kept spell it.
func actionSecrets(action map[string]any, at Secret, o ExportOptions) []Secret {
	if policy, ok := action["retryPolicy"].(map[string]any); ok {
		if typ, ok := policy["retryType"].(string); ok && retryTypes[strings.ToLower(typ)] != "" {
			policy["retryType"] = retryTypes[strings.ToLower(typ)]
		}
	}
	var out []Secret
	place := func(names ...string) Secret { return append(append(Secret{}, at...), names...) }
	if request, ok := action["request"].(map[string]any); ok {
		if uri, ok := request["uri"].(string); ok && CredentialQuery(uri) != "" {
			out = append(out, place("request", "uri"))
		}
		if headers, ok := request["headers"].(map[string]any); ok {
			for _, name := range slices.Sorted(maps.Keys(headers)) {
				if CredentialHeader(name) || slices.ContainsFunc(o.SecretHeaders, func(s string) bool { return strings.EqualFold(s, name) }) {
					out = append(out, place("request", "headers", name))
				}
			}
		}
		if signing, ok := request["signing"].(map[string]any); ok {
			// An answer counts the signing secrets; the definition lists them.
			// The count is the server's word: bounded, it makes no huge list.
			n, _ := signing["secretCount"].(float64)
			delete(signing, "secretCount")
			secrets := make([]any, int(max(0, min(n, jobs.MaxSigningSecrets))))
			signing["secrets"] = secrets
			for i := range secrets {
				secrets[i] = ""
				out = append(out, place("request", "signing", "secrets", strconv.Itoa(i)))
			}
		}
		if auth, ok := request["authentication"].(map[string]any); ok {
			for _, name := range computedAuth {
				delete(auth, name)
			}
			typ, _ := auth["type"].(string)
			for _, name := range authSecrets[strings.ToLower(typ)] {
				out = append(out, place("request", "authentication", name))
			}
		}
	}
	if _, ok := action["queueMessage"].(map[string]any); ok {
		out = append(out, place("queueMessage", "sasToken"))
	}
	for _, member := range []string{"serviceBusQueueMessage", "serviceBusTopicMessage"} {
		if msg, ok := action[member].(map[string]any); ok {
			if _, ok := msg["authentication"].(map[string]any); ok {
				out = append(out, place(member, "authentication", "sasKey"))
			}
		}
	}
	return out
}

// credentialHeaders are the headers whose values are credentials by
// their names alone, in lower case.
var credentialHeaders = []string{"authorization", "proxy-authorization", "cookie", "api-key", "x-api-key",
	"ocp-apim-subscription-key", "x-functions-key", "x-auth-token", "x-access-token", "x-ms-client-secret"}

// credentialWords mark a header's name or a query parameter's as naming a
// credential wherever they are in it.
var credentialWords = []string{"token", "secret", "password", "passwd", "apikey", "api-key", "api_key", "signature", "credential"}

// CredentialHeader reports whether the header name names a credential:
// one of the well-known ones (Authorization, X-Api-Key, Azure Functions'
// and API Management's keys, ...), or a name with a word such as token,
// secret or password in it.
func CredentialHeader(name string) bool {
	name = strings.ToLower(name)
	return slices.Contains(credentialHeaders, name) || slices.ContainsFunc(credentialWords, func(w string) bool { return strings.Contains(name, w) })
}

// credentialParams are the query parameters whose values are credentials
// by their names alone, in lower case: a SAS signature (sig), an Azure
// Functions key (code), and the usual names of keys.
var credentialParams = []string{"sig", "code", "key", "auth", "access_token", "client_secret", "subscription-key"}

// CredentialQuery returns the name of the first query parameter of uri
// that holds a credential, "" when none does (or uri does not parse).
func CredentialQuery(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return ""
	}
	q, _ := url.ParseQuery(u.RawQuery)
	for _, name := range slices.Sorted(maps.Keys(q)) {
		lower := strings.ToLower(name)
		if slices.Contains(credentialParams, lower) || slices.ContainsFunc(credentialWords, func(w string) bool { return strings.Contains(lower, w) }) {
			return name
		}
	}
	return ""
}

// Set puts value at place in def, making the objects on the way. A
// member of an array (a signing secret's place) is named by its index in
// it, which must be there.
func (s Secret) Set(def map[string]any, value any) {
	obj := def
	for i, name := range s[:len(s)-1] {
		if list, ok := obj[name].([]any); ok && i == len(s)-2 {
			if at, err := strconv.Atoi(s[len(s)-1]); err == nil && at >= 0 && at < len(list) {
				list[at] = value
				return
			}
		}
		next, ok := obj[name].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[name] = next
		}
		obj = next
	}
	obj[s[len(s)-1]] = value
}

// MapStrings returns a copy of the JSON value v (as encoding/json decodes
// into any) with f applied to each string in it, object keys left as
// they are.
func MapStrings(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = MapStrings(x, f)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = MapStrings(x, f)
		}
		return out
	}
	return v
}
