package contract

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// specPath is the in-repo copy of the contract, byte-identical to
// ../shared/reference (TestSpecCopyIsIdentical keeps it so).
const specPath = "../../api/openapi/azure-scheduler-2016-03-01.swagger.json"

// spec is the part of a Swagger 2.0 document the contract tests read.
type spec struct {
	Produces    []string                              `json:"produces"`
	Paths       map[string]map[string]json.RawMessage `json:"paths"`
	Definitions map[string]*schema                    `json:"definitions"`

	ops []*operation
	// subtypes maps a definition with a discriminator to its subtypes by
	// discriminator value (x-ms-discriminator-value, else the name).
	subtypes map[string]map[string]string
}

// operation is one method of one path of the contract.
type operation struct {
	ID        string              `json:"operationId"`
	Responses map[string]response `json:"responses"`
	Method    string              `json:"-"`
	Path      string              `json:"-"`
}

type response struct {
	Schema *schema `json:"schema"`
}

func (o *operation) String() string { return o.ID + " (" + o.Method + " " + o.Path + ")" }

// schema is the subset of a Swagger 2.0 schema object the validator
// understands; see validate.
type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Enum                 []any              `json:"enum"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	Items                *schema            `json:"items"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	AllOf                []*schema          `json:"allOf"`
	Discriminator        string             `json:"discriminator"`
	DiscriminatorValue   string             `json:"x-ms-discriminator-value"`
}

var httpMethods = []string{"get", "put", "post", "patch", "delete", "head", "options"}

// loadSpec reads and indexes the Swagger document at path.
func loadSpec(path string) (*spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read contract: %w", err)
	}
	return parseSpec(data)
}

func parseSpec(data []byte) (*spec, error) {
	var sp spec
	if err := json.Unmarshal(data, &sp); err != nil {
		return nil, fmt.Errorf("parse contract: %w", err)
	}
	for p, item := range sp.Paths {
		for method, raw := range item {
			if !slices.Contains(httpMethods, method) {
				continue // path-level "parameters" and extensions
			}
			op := &operation{Method: strings.ToUpper(method), Path: p}
			if err := json.Unmarshal(raw, op); err != nil {
				return nil, fmt.Errorf("parse %s %s: %w", method, p, err)
			}
			sp.ops = append(sp.ops, op)
		}
	}
	slices.SortFunc(sp.ops, func(a, b *operation) int { return strings.Compare(a.ID, b.ID) })
	sp.subtypes = map[string]map[string]string{}
	for name, def := range sp.Definitions {
		for _, parent := range def.AllOf {
			base, ok := strings.CutPrefix(parent.Ref, "#/definitions/")
			if !ok || sp.Definitions[base] == nil || sp.Definitions[base].Discriminator == "" {
				continue
			}
			value := def.DiscriminatorValue
			if value == "" {
				value = name
			}
			if sp.subtypes[base] == nil {
				sp.subtypes[base] = map[string]string{}
			}
			sp.subtypes[base][value] = name
		}
	}
	return &sp, nil
}

// operation returns the contract's operation for a request, or nil. Path
// parameters match any one non-empty segment; literal segments match in
// any letter case, as Azure Resource Manager's do.
func (sp *spec) operation(method, urlPath string) *operation {
	got := strings.Split(strings.Trim(urlPath, "/"), "/")
	for _, op := range sp.ops {
		if op.Method != method {
			continue
		}
		want := strings.Split(strings.Trim(op.Path, "/"), "/")
		if len(want) != len(got) {
			continue
		}
		match := true
		for i, w := range want {
			if strings.HasPrefix(w, "{") && strings.HasSuffix(w, "}") {
				match = got[i] != ""
			} else {
				match = strings.EqualFold(w, got[i])
			}
			if !match {
				break
			}
		}
		if match {
			return op
		}
	}
	return nil
}
