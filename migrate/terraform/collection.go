package terraform

import "strings"

// collectionSchema is the azurerm 1.x schema of
// azurerm_scheduler_job_collection.
var collectionSchema = withMeta(schema{
	"name":                {kind: text},
	"location":            {kind: text},
	"resource_group_name": {kind: text},
	"tags":                {kind: textMap},
	"sku":                 {kind: text},
	"state":               {kind: text},
	"quota": {kind: block, fields: schema{
		"max_job_count":            {kind: number},
		"max_recurrence_frequency": {kind: text},
		"max_recurrence_interval":  {kind: number},
		// max_retry_interval is max_recurrence_interval's deprecated
		// name, which the provider documented as the same value.
		"max_retry_interval": {kind: number},
	}},
	recurProperties: {kind: value},
})

// defaultCollectionState is the state the provider sent for a collection
// without one.
const defaultCollectionState = "Enabled"

// collection is the PUT body of a collection: {"location": ...,
// "tags": ..., "properties": {...}} in Azure's 2016-03-01 shape.
func (r *reading) collection(n *node) map[string]any {
	body, props := map[string]any{}, map[string]any{}
	if loc, ok := r.str(n, "location"); ok {
		// As the provider sent it: "West Europe" is westeurope.
		body["location"] = strings.ToLower(strings.ReplaceAll(loc, " ", ""))
	}
	if tags := r.strMap(n, "tags"); len(tags) > 0 {
		body["tags"] = tags
	}
	if sku, ok := r.str(n, "sku"); ok {
		props["sku"] = map[string]any{"name": sku}
	}
	props["state"] = defaultCollectionState
	r.put(props, "state", n, "state")
	if q := r.quota(r.one(n, "quota")); q != nil {
		props["quota"] = q
	}
	body["properties"] = r.extend(props, n)
	return body
}

func (r *reading) quota(n *node) map[string]any {
	if n == nil {
		return nil
	}
	quota, max := map[string]any{}, map[string]any{}
	if count, ok := r.num(n, "max_job_count"); ok {
		quota["maxJobCount"] = count
	}
	r.put(max, "frequency", n, "max_recurrence_frequency")
	for _, name := range []string{"max_retry_interval", "max_recurrence_interval"} {
		if interval, ok := r.num(n, name); ok {
			max["interval"] = interval
		}
	}
	if len(max) > 0 {
		quota["maxRecurrence"] = max
	}
	return quota
}
