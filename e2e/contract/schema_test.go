package contract

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// violation is one way a JSON value breaks its schema.
type violation struct {
	Path string // JSON path of the value, "$" for the document
	Rule string // the schema keyword broken: type, enum, required, ...
	Msg  string
}

func (v violation) String() string { return v.Path + ": " + v.Rule + ": " + v.Msg }

// validate checks a JSON value, decoded with json.Decoder.UseNumber (or
// plain json.Unmarshal), against s, resolving $refs in sp's definitions,
// and returns every violation.
//
// It supports type (object, array, string, integer, number, boolean),
// properties (recursively), required, items, enum, additionalProperties
// (false, or a schema for the other members), allOf, a discriminator with
// its x-ms-discriminator-value subtypes, and the formats date-time
// (RFC 3339) and duration (ISO 8601). A schema without a type but with
// properties is an object, as AutoRest reads Azure's definitions. Swagger
// 2.0 has no null, so null is a type violation wherever a type is given.
// readOnly, descriptions and x-ms-* extensions other than the
// discriminator value are not checked.
func (sp *spec) validate(s *schema, v any, path string) []violation {
	return sp.check(s, v, path, true)
}

func (sp *spec) check(s *schema, v any, path string, dispatch bool) []violation {
	if s == nil {
		return nil
	}
	s, name, err := sp.resolve(s)
	if err != nil {
		return []violation{{path, "$ref", err.Error()}}
	}
	// A value of a base type with a discriminator is checked as the
	// subtype it names; the subtype's allOf checks the base's members.
	if dispatch && s.Discriminator != "" {
		if obj, ok := v.(map[string]any); ok {
			value, _ := obj[s.Discriminator].(string)
			// In any case, as enums (see inEnum).
			for dv, sub := range sp.subtypes[name] {
				if strings.EqualFold(dv, value) {
					return sp.check(&schema{Ref: "#/definitions/" + sub}, v, path, false)
				}
			}
		}
	}
	var out []violation
	for _, parent := range s.AllOf {
		out = append(out, sp.check(parent, v, path, false)...)
	}
	typ := s.Type
	if typ == "" && (s.Properties != nil || s.AdditionalProperties != nil) {
		typ = "object"
	}
	if typ != "" && !hasType(v, typ) {
		return append(out, violation{path, "type", fmt.Sprintf("want %s, got %s", typ, typeOf(v))})
	}
	if len(s.Enum) > 0 && !inEnum(v, s.Enum) {
		out = append(out, violation{path, "enum", fmt.Sprintf("%s is not one of %s", show(v), show(s.Enum))})
	}
	if str, ok := v.(string); ok && s.Format != "" {
		if msg := checkFormat(s.Format, str); msg != "" {
			out = append(out, violation{path, "format", msg})
		}
	}
	switch v := v.(type) {
	case map[string]any:
		out = append(out, sp.checkObject(s, v, path)...)
	case []any:
		for i, item := range v {
			out = append(out, sp.check(s.Items, item, fmt.Sprintf("%s[%d]", path, i), true)...)
		}
	}
	return out
}

func (sp *spec) checkObject(s *schema, obj map[string]any, path string) []violation {
	var out []violation
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			out = append(out, violation{path, "required", fmt.Sprintf("member %q is missing", name)})
		}
	}
	var (
		extra   *schema
		noExtra bool
	)
	switch raw := strings.TrimSpace(string(s.AdditionalProperties)); {
	case raw == "false":
		noExtra = true
	case strings.HasPrefix(raw, "{"):
		extra = new(schema)
		if err := json.Unmarshal([]byte(raw), extra); err != nil {
			return append(out, violation{path, "additionalProperties", err.Error()})
		}
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		at := path + "." + name
		switch prop, ok := s.Properties[name]; {
		case ok:
			out = append(out, sp.check(prop, obj[name], at, true)...)
		case noExtra:
			out = append(out, violation{at, "additionalProperties", "member is not in the schema, which allows no others"})
		case extra != nil:
			out = append(out, sp.check(extra, obj[name], at, true)...)
		}
	}
	return out
}

// resolve follows $refs to a definition and returns it with its name ("" for
// an inline schema).
func (sp *spec) resolve(s *schema) (*schema, string, error) {
	name := ""
	for range 16 {
		if s.Ref == "" {
			return s, name, nil
		}
		n, ok := strings.CutPrefix(s.Ref, "#/definitions/")
		def := sp.Definitions[n]
		if !ok || def == nil {
			return nil, "", fmt.Errorf("unresolvable $ref %q", s.Ref)
		}
		s, name = def, n
	}
	return nil, "", fmt.Errorf("$ref cycle at %q", s.Ref)
}

func hasType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		return typeOf(v) == "number" || typeOf(v) == "integer"
	case "integer":
		return typeOf(v) == "integer"
	}
	return true // "file" and unknown types are not checked
}

func typeOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return "integer"
		}
		return "number"
	case float64:
		if v == math.Trunc(v) && !math.IsInf(v, 0) {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// inEnum compares case-insensitively on purpose: Azure Scheduler accepted
// enum values in any case and wrote several of them in lower case although
// the contract spells them capitalized (frequency "minute" for "Minute",
// weekDays "monday" for "Monday", retryType "none" for "None"), and recur
// keeps those spellings. A value that is none of the enum's in any case is
// still a violation.
func inEnum(v any, enum []any) bool {
	for _, e := range enum {
		es, eok := e.(string)
		vs, vok := v.(string)
		switch {
		case eok && vok:
			if strings.EqualFold(es, vs) {
				return true
			}
		case !eok && !vok:
			if fmt.Sprint(e) == fmt.Sprint(v) {
				return true
			}
		}
	}
	return false
}

// isoDuration is ISO 8601's PnYnMnWnDTnHnMnS with at least one part.
var isoDuration = regexp.MustCompile(`^-?P(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$`)

func checkFormat(format, s string) string {
	switch format {
	case "date-time":
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return fmt.Sprintf("%q is not an RFC 3339 date-time", s)
		}
	case "duration":
		if !isoDuration.MatchString(s) || s == "P" || strings.HasSuffix(s, "T") {
			return fmt.Sprintf("%q is not an ISO 8601 duration", s)
		}
	}
	return ""
}

func show(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
