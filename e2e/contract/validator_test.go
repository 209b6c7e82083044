package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testSpec is a small contract exercising every keyword the validator
// supports.
const testSpec = `{
  "swagger": "2.0",
  "produces": ["application/json"],
  "paths": {
    "/things/{name}": {
      "parameters": [],
      "get": {"operationId": "Things_Get", "responses": {"200": {"schema": {"$ref": "#/definitions/Thing"}}}},
      "delete": {"operationId": "Things_Delete", "responses": {"200": {}}}
    }
  },
  "definitions": {
    "Thing": {
      "required": ["name"],
      "properties": {
        "name": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "on": {"type": "boolean"},
        "at": {"type": "string", "format": "date-time"},
        "every": {"type": "string", "format": "duration"},
        "day": {"type": "string", "enum": ["Monday", "Tuesday"]},
        "days": {"type": "array", "items": {"type": "string", "enum": ["Monday", "Tuesday"]}},
        "tags": {"type": "object", "additionalProperties": {"type": "string"}},
        "strict": {"$ref": "#/definitions/Strict"},
        "auth": {"$ref": "#/definitions/Auth"}
      }
    },
    "Strict": {"properties": {"a": {"type": "string"}}, "additionalProperties": false},
    "Auth": {"discriminator": "type", "required": ["type"], "properties": {"type": {"type": "string", "enum": ["Basic", "None"]}}},
    "BasicAuth": {"x-ms-discriminator-value": "Basic", "required": ["user"],
      "properties": {"user": {"type": "string"}}, "allOf": [{"$ref": "#/definitions/Auth"}]}
  }
}`

func TestValidate(t *testing.T) {
	sp, err := parseSpec([]byte(testSpec))
	require.NoError(t, err)
	thing := &schema{Ref: "#/definitions/Thing"}
	tests := []struct {
		name string
		doc  string
		want []string // "path: rule", in order
	}{
		{"good", `{"name": "x", "count": 3, "ratio": 0.5, "on": true, "at": "2024-02-29T10:00:00.5+01:00",
			"every": "PT30S", "day": "monday", "days": ["Monday", "TUESDAY"], "tags": {"k": "v"},
			"strict": {"a": "b"}, "auth": {"type": "Basic", "user": "u"}, "extension": {"any": 1}}`, nil},
		{"not an object", `[1]`, []string{"$: type"}},
		{"required", `{"count": 1}`, []string{"$: required"}},
		{"scalar types", `{"name": 1, "count": 1.5, "ratio": "1", "on": "true"}`,
			[]string{"$.count: type", "$.name: type", "$.on: type", "$.ratio: type"}},
		{"null is no type", `{"name": null}`, []string{"$.name: type"}},
		{"enum", `{"name": "x", "day": "Sunday", "days": ["monday", "Funday"]}`, []string{"$.day: enum", "$.days[1]: enum"}},
		{"date-time", `{"name": "x", "at": "2012-11-04"}`, []string{"$.at: format"}},
		{"date-time without seconds", `{"name": "x", "at": "2012-08-04T00:00Z"}`, []string{"$.at: format"}},
		{"duration", `{"name": "x", "every": "00:00:30"}`, []string{"$.every: format"}},
		{"additionalProperties schema", `{"name": "x", "tags": {"k": 1}}`, []string{"$.tags.k: type"}},
		{"additionalProperties false", `{"name": "x", "strict": {"a": "b", "c": "d"}}`, []string{"$.strict.c: additionalProperties"}},
		{"array items", `{"name": "x", "days": "Monday"}`, []string{"$.days: type"}},
		{"discriminated subtype", `{"name": "x", "auth": {"type": "basic", "user": 7}}`, []string{"$.auth.user: type"}},
		{"subtype required", `{"name": "x", "auth": {"type": "Basic"}}`, []string{"$.auth: required"}},
		{"base type", `{"name": "x", "auth": {"type": "Other"}}`, []string{"$.auth.type: enum"}},
		{"base required", `{"name": "x", "auth": {}}`, []string{"$.auth: required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc any
			dec := json.NewDecoder(strings.NewReader(tt.doc))
			dec.UseNumber()
			require.NoError(t, dec.Decode(&doc))
			var got []string
			for _, v := range sp.validate(thing, doc, "$") {
				got = append(got, v.Path+": "+v.Rule)
			}
			slices.Sort(got)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestValidateReportsBadRef(t *testing.T) {
	sp, err := parseSpec([]byte(testSpec))
	require.NoError(t, err)
	vs := sp.validate(&schema{Ref: "#/definitions/Nothing"}, map[string]any{}, "$")
	require.Len(t, vs, 1)
	assert.Equal(t, "$ref", vs[0].Rule)
}

func TestCheckResponse(t *testing.T) {
	sp, err := parseSpec([]byte(testSpec))
	require.NoError(t, err)
	jsonHeader := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	tests := []struct {
		name   string
		method string
		path   string
		status int
		header http.Header
		body   string
		op     string
		want   []string // rules
	}{
		{"conforming 200", "GET", "/things/a", 200, jsonHeader, `{"name": "a"}`, "Things_Get", nil},
		{"path literals in any case", "GET", "/THINGS/a", 200, jsonHeader, `{"name": "a"}`, "Things_Get", nil},
		{"bad body", "GET", "/things/a", 200, jsonHeader, `{"count": "1"}`, "Things_Get", []string{"required", "type"}},
		{"not JSON", "GET", "/things/a", 200, jsonHeader, `<html>`, "Things_Get", []string{"json"}},
		{"wrong content type", "GET", "/things/a", 200, http.Header{"Content-Type": {"text/plain"}}, `{"name": "a"}`, "Things_Get", []string{"produces"}},
		{"undocumented status", "GET", "/things/a", 201, jsonHeader, `{"name": "a"}`, "Things_Get", []string{"responses"}},
		{"no schema, no check", "DELETE", "/things/a", 200, nil, ``, "Things_Delete", nil},
		{"no operation", "GET", "/other", 200, jsonHeader, `{}`, "", []string{"operation"}},
		{"empty segment", "GET", "/things/", 200, jsonHeader, `{}`, "", []string{"operation"}},
		{"error envelope", "GET", "/things/a", 404, jsonHeader, `{"error": {"code": "NotFound", "message": "m", "target": "t"}}`, "Things_Get", nil},
		{"error envelope on no operation", "GET", "/other", 404, jsonHeader, `{"error": {"code": "NotFound", "message": "m"}}`, "", nil},
		{"bad error envelope", "PUT", "/things/a", 400, jsonHeader, `{"code": "Bad", "message": "m"}`, "", []string{"required"}},
		{"error without message", "GET", "/things/a", 500, jsonHeader, `{"error": {"code": "X", "target": 1}}`, "Things_Get", []string{"required", "type"}},
		{"error not JSON", "GET", "/things/a", 400, http.Header{"Content-Type": {"text/plain"}}, `bad request`, "Things_Get", []string{"json", "produces"}},
		{"redirects are not checked", "GET", "/things/a", 301, nil, ``, "Things_Get", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := sp.checkResponse(tt.method, tt.path, tt.status, tt.header, []byte(tt.body))
			var rules []string
			for _, v := range e.Violations {
				rules = append(rules, v.Rule)
			}
			slices.Sort(rules)
			assert.Equal(t, tt.want, rules, "%v", e.Violations)
			if tt.op == "" {
				assert.Nil(t, e.Op)
			} else if assert.NotNil(t, e.Op) {
				assert.Equal(t, tt.op, e.Op.ID)
			}
		})
	}
}

func TestCoverageProblems(t *testing.T) {
	ops := []*operation{{ID: "A_Get"}, {ID: "A_Put"}, {ID: "A_List"}, {ID: "A_Delete"}}
	pending := map[string]string{"A_List": "", "A_Delete": "", "A_Gone": ""}
	got := coverageProblems(ops, map[string]bool{"A_Get": true, "A_Delete": true}, pending)
	require.Len(t, got, 3, "%q", got)
	assert.Contains(t, got[0], "A_Put")
	assert.Contains(t, got[0], "not pending")
	assert.Contains(t, got[1], "A_Delete")
	assert.Contains(t, got[1], "covered now")
	assert.Contains(t, got[2], "A_Gone")
	assert.Empty(t, coverageProblems(ops, map[string]bool{"A_Get": true, "A_Put": true}, map[string]string{"A_List": "", "A_Delete": ""}))
}

// TestContractOperations pins the contract to its 15 operations and the
// pending list to names among them.
func TestContractOperations(t *testing.T) {
	require.Len(t, contractSpec.ops, 15)
	ids := map[string]bool{}
	for _, op := range contractSpec.ops {
		ids[op.ID] = true
		assert.NotEmpty(t, op.Responses, op.ID)
	}
	for id := range pending {
		assert.True(t, ids[id], "pending %s is an operation", id)
	}
	op := contractSpec.operation(http.MethodGet, armPrefix+"/jobCollections/c/jobs/j/history")
	require.NotNil(t, op)
	assert.Equal(t, "Jobs_ListJobHistory", op.ID)
}

// specSHA256 is the digest of Azure's published swagger file
// (reference/azure-scheduler-2016-03-01.swagger.json in the project's
// shared documents): the in-repo copy must stay byte-identical to it.
const specSHA256 = "dbd47c27e6f7b786d323d346a00e6c650064e11db7bee9686ffe49c0c954ed88"

// TestSpecCopyIsIdentical keeps the in-repo contract equal to the
// reference, without needing the reference beside the repository.
func TestSpecCopyIsIdentical(t *testing.T) {
	data, err := os.ReadFile(specPath)
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	require.Equal(t, specSHA256, hex.EncodeToString(sum[:]), "the contract copy was edited; restore it from the reference")
}
