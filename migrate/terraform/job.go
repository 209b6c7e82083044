package terraform

import (
	"strings"
)

// The azurerm 1.x schema of azurerm_scheduler_job, as the provider's
// resource_arm_scheduler_job.go declared it across its versions.
var (
	webSchema = schema{
		"url":     {kind: text},
		"method":  {kind: text},
		"body":    {kind: text},
		"headers": {kind: textMap},
		"authentication_basic": {kind: block, fields: schema{
			"username": {kind: text},
			"password": {kind: text},
		}},
		"authentication_certificate": {kind: block, fields: schema{
			"pfx":      {kind: text},
			"password": {kind: text},
			// Computed from the pfx by Azure, as recur computes them.
			"thumbprint":   {kind: ignored},
			"expiration":   {kind: ignored},
			"subject_name": {kind: ignored},
		}},
		"authentication_active_directory": {kind: block, fields: schema{
			"tenant_id": {kind: text},
			"client_id": {kind: text},
			"secret":    {kind: text},
			"audience":  {kind: text},
		}},
	}
	queueSchema = schema{
		"storage_account_name": {kind: text},
		"storage_queue_name":   {kind: text},
		"sas_token":            {kind: text},
		"message":              {kind: text},
	}
	jobSchema = withMeta(schema{
		"name":                       {kind: text},
		"resource_group_name":        {kind: text},
		"job_collection_name":        {kind: text},
		"action_web":                 {kind: block, fields: webSchema},
		"action_storage_queue":       {kind: block, fields: queueSchema},
		"error_action_web":           {kind: block, fields: webSchema},
		"error_action_storage_queue": {kind: block, fields: queueSchema},
		"retry": {kind: block, fields: schema{
			"interval": {kind: text},
			"count":    {kind: number},
		}},
		"recurrence": {kind: block, fields: schema{
			"frequency":  {kind: text},
			"interval":   {kind: number},
			"count":      {kind: number},
			"end_time":   {kind: text},
			"minutes":    {kind: numbers},
			"hours":      {kind: numbers},
			"week_days":  {kind: texts},
			"month_days": {kind: numbers},
			"monthly_occurrences": {kind: blocks, fields: schema{
				"day":        {kind: text},
				"occurrence": {kind: number},
			}},
		}},
		"start_time":    {kind: text},
		"state":         {kind: text},
		recurProperties: {kind: value},
	})
)

// The provider's defaults that it sent to Azure. A member the provider
// left out is left out here too, so that recur applies Azure's default.
const (
	// defaultMethod is the method of a web action without one: the
	// provider's default while method was optional (later it was
	// required).
	defaultMethod = "Get"
	// defaultAudience is the audience of Active Directory authentication
	// without one: the provider's default, the public cloud's management
	// endpoint.
	defaultAudience = "https://management.core.windows.net/"
	// defaultRetryInterval and defaultRetryCount fill a retry block.
	defaultRetryInterval = "00:00:30"
	defaultRetryCount    = 4
	// defaultInterval fills a recurrence block.
	defaultInterval = 1
)

// job is the PUT body of a job: {"properties": {...}} in Azure's
// 2016-03-01 shape.
func (r *reading) job(n *node) map[string]any {
	props := map[string]any{}
	action := r.action(n, "action_web", "action_storage_queue")
	if errorAction := r.action(n, "error_action_web", "error_action_storage_queue"); errorAction != nil {
		if action == nil {
			action = map[string]any{}
		}
		action["errorAction"] = errorAction
	}
	if action != nil {
		action["retryPolicy"] = r.retry(n)
		props["action"] = action
	}
	if rec := r.recurrence(r.one(n, "recurrence")); rec != nil {
		props["recurrence"] = rec
	}
	r.put(props, "startTime", n, "start_time")
	r.put(props, "state", n, "state")
	return map[string]any{"properties": r.extend(props, n)}
}

// put sets member to the string attribute name of n, when n sets it.
func (r *reading) put(m map[string]any, member string, n *node, name string) {
	if s, ok := r.str(n, name); ok {
		m[member] = s
	}
}

// action is the job's action or error action: a web action or a storage
// queue action, nil for none.
func (r *reading) action(n *node, web, queue string) map[string]any {
	w, q := r.one(n, web), r.one(n, queue)
	if w != nil && q != nil {
		r.conflict(n, web, queue)
	}
	switch {
	case w != nil:
		return r.webAction(w)
	case q != nil:
		return r.queueAction(q)
	}
	return nil
}

func (r *reading) webAction(n *node) map[string]any {
	action, req := map[string]any{}, map[string]any{}
	if url, ok := r.str(n, "url"); ok {
		req["uri"] = url
		// The provider took the type from the url's scheme.
		action["type"] = "Http"
		if strings.HasPrefix(strings.ToLower(url), "https://") {
			action["type"] = "Https"
		}
	}
	req["method"] = defaultMethod
	r.put(req, "method", n, "method")
	// The provider sent a body only when it was not empty.
	if body, ok := r.str(n, "body"); ok && body != "" {
		req["body"] = body
	}
	if headers := r.strMap(n, "headers"); len(headers) > 0 {
		req["headers"] = headers
	}
	if auth := r.authentication(n); auth != nil {
		req["authentication"] = auth
	}
	action["request"] = req
	return action
}

func (r *reading) authentication(n *node) map[string]any {
	basic, cert, ad := r.one(n, "authentication_basic"), r.one(n, "authentication_certificate"), r.one(n, "authentication_active_directory")
	auth := map[string]any{}
	switch {
	case basic != nil:
		auth["type"] = "Basic"
		r.put(auth, "username", basic, "username")
		r.put(auth, "password", basic, "password")
	case cert != nil:
		auth["type"] = "ClientCertificate"
		r.put(auth, "pfx", cert, "pfx")
		r.put(auth, "password", cert, "password")
	case ad != nil:
		auth["type"] = "ActiveDirectoryOAuth"
		r.put(auth, "tenant", ad, "tenant_id")
		r.put(auth, "clientId", ad, "client_id")
		r.put(auth, "secret", ad, "secret")
		auth["audience"] = defaultAudience
		r.put(auth, "audience", ad, "audience")
	default:
		return nil
	}
	switch {
	case basic != nil && cert != nil:
		r.conflict(n, "authentication_basic", "authentication_certificate")
	case (basic != nil || cert != nil) && ad != nil:
		r.conflict(n, "authentication_basic or authentication_certificate", "authentication_active_directory")
	}
	return auth
}

func (r *reading) queueAction(n *node) map[string]any {
	msg := map[string]any{}
	r.put(msg, "storageAccount", n, "storage_account_name")
	r.put(msg, "queueName", n, "storage_queue_name")
	r.put(msg, "sasToken", n, "sas_token")
	r.put(msg, "message", n, "message")
	return map[string]any{"type": "StorageQueue", "queueMessage": msg}
}

// retry is the action's retry policy. Without a retry block the provider
// sent retryType None: Azure's default (and recur's) is to retry.
func (r *reading) retry(n *node) map[string]any {
	b := r.one(n, "retry")
	if b == nil {
		return map[string]any{"retryType": "None"}
	}
	policy := map[string]any{"retryType": "Fixed", "retryInterval": defaultRetryInterval, "retryCount": defaultRetryCount}
	r.put(policy, "retryInterval", b, "interval")
	if count, ok := r.num(b, "count"); ok {
		policy["retryCount"] = count
	}
	return policy
}

func (r *reading) recurrence(n *node) map[string]any {
	if n == nil {
		return nil
	}
	rec := map[string]any{"interval": defaultInterval}
	r.put(rec, "frequency", n, "frequency")
	if interval, ok := r.num(n, "interval"); ok {
		rec["interval"] = interval
	}
	if count, ok := r.num(n, "count"); ok {
		rec["count"] = count
	}
	r.put(rec, "endTime", n, "end_time")
	schedule := map[string]any{}
	for _, f := range [][2]string{{"minutes", "minutes"}, {"hours", "hours"}, {"monthDays", "month_days"}} {
		if list := r.nums(n, f[1]); len(list) > 0 {
			schedule[f[0]] = list
		}
	}
	if days := r.strs(n, "week_days"); len(days) > 0 {
		schedule["weekDays"] = days
	}
	var occurrences []map[string]any
	for _, b := range n.blocks["monthly_occurrences"] {
		o := map[string]any{}
		r.put(o, "day", b, "day")
		if i, ok := r.num(b, "occurrence"); ok {
			o["occurrence"] = i
		}
		occurrences = append(occurrences, o)
	}
	if len(occurrences) > 0 {
		schedule["monthlyOccurrences"] = occurrences
	}
	// The provider sent no schedule when it had none of these: Azure
	// refused an empty one.
	if len(schedule) > 0 {
		rec["schedule"] = schedule
	}
	return rec
}
