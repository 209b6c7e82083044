package terraform

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/recurhq/recur/migrate"
)

// recurProperties is the attribute of both resources that holds what the
// azurerm schema cannot say, in the shape of Azure's properties.
const recurProperties = "recur_properties"

// extend deep-merges n's recur_properties into props, the properties the
// azurerm attributes made, and returns the result.
func (r *reading) extend(props map[string]any, n *node) map[string]any {
	v, ok := r.value(n, recurProperties, cty.DynamicPseudoType)
	if !ok {
		return props
	}
	path := n.join(recurProperties)
	if ty := v.Type(); !ty.IsObjectType() && !ty.IsMapType() {
		r.missing = append(r.missing, migrate.Missing{Path: path,
			Reason: "it is not an object: it holds members of Azure's properties, { overlapPolicy = \"Skip\" }"})
		return props
	}
	src, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		r.missing = append(r.missing, migrate.Missing{Path: path, Reason: "it does not write as JSON: " + err.Error()})
		return props
	}
	patch := decodeJSON(src).(map[string]any)
	// The properties hold the reader's Go types (map[string]string,
	// []int64); the merge walks JSON's.
	out := decodeJSON(marshal(props)).(map[string]any)
	mergePatch(out, patch)
	return out
}

// decodeJSON decodes JSON that marshal or cty wrote. Numbers stay as
// written: the value goes back to JSON, and a float64 may round a long
// number on the way.
func decodeJSON(src []byte) any {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		// The source is JSON that encoding/json or cty wrote.
		panic(err)
	}
	return v
}

// mergePatch deep-merges patch into dst: where both hold an object at a
// member, the objects merge member by member; null removes the member;
// any other value (a list too) replaces it, as it is. It is JSON Merge
// Patch (RFC 7386), but that an object meeting something other than an
// object replaces it whole, its nulls kept: a workflow's input or a
// brokered property may be null, and nothing else could write it.
func mergePatch(dst, patch map[string]any) {
	for k, v := range patch {
		switch v := v.(type) {
		case nil:
			delete(dst, k)
		case map[string]any:
			if d, ok := dst[k].(map[string]any); ok {
				mergePatch(d, v)
				continue
			}
			dst[k] = v
		default:
			dst[k] = v
		}
	}
}

// diffPatch returns the patch that mergePatch needs to make want of have:
// null for what have holds and want does not, a member's patch where both
// hold objects, want's value for anything else that differs. Where want
// holds null at a member the merge reaches into, no patch can write it:
// the caller checks the merge's result.
func diffPatch(have, want map[string]any) map[string]any {
	patch := map[string]any{}
	for k := range have {
		if _, ok := want[k]; !ok {
			patch[k] = nil
		}
	}
	for k, w := range want {
		h, ok := have[k]
		switch {
		case ok && reflect.DeepEqual(h, w):
		case isObject(h) && isObject(w):
			if sub := diffPatch(h.(map[string]any), w.(map[string]any)); len(sub) > 0 {
				patch[k] = sub
			}
		default:
			patch[k] = w
		}
	}
	return patch
}

func isObject(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}
