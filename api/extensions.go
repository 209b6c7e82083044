package api

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// recur's extensions live beside the ARM paths, under /recur/v1, and never
// change them.

var (
	//go:embed openapi/azure-scheduler-2016-03-01.swagger.json
	azureSpec []byte
	//go:embed openapi/recur-extensions.json
	extensionSpec []byte
)

// openAPI is Azure's document with recur's paths and definitions merged
// in, built once.
var openAPI = sync.OnceValues(func() ([]byte, error) {
	var doc, ext map[string]any
	if err := json.Unmarshal(azureSpec, &doc); err != nil {
		return nil, fmt.Errorf("azure spec: %w", err)
	}
	if err := json.Unmarshal(extensionSpec, &ext); err != nil {
		return nil, fmt.Errorf("extension spec: %w", err)
	}
	for _, section := range []string{"paths", "definitions"} {
		into, _ := doc[section].(map[string]any)
		from, _ := ext[section].(map[string]any)
		for k, v := range from {
			into[k] = v
		}
	}
	// recur's fields in Azure's objects join those objects' properties.
	defs, _ := doc["definitions"].(map[string]any)
	extra, _ := ext["x-recur-definition-properties"].(map[string]any)
	for name, props := range extra {
		def, ok := defs[name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("extension spec: no definition %s in Azure's", name)
		}
		into, _ := def["properties"].(map[string]any)
		for k, v := range props.(map[string]any) {
			into[k] = v
		}
	}
	return json.MarshalIndent(doc, "", "  ")
})

func (s *Server) openAPI(c *gin.Context) {
	doc, err := openAPI()
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	c.Data(http.StatusOK, "application/json", doc)
}

// previewCount reads ?count=, 1 to jobs.MaxPreview, default 10.
func previewCount(c *gin.Context) (int, error) {
	raw := c.DefaultQuery("count", "10")
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > jobs.MaxPreview {
		return 0, &apiError{status: http.StatusBadRequest, code: codeInvalidQuery, target: "count",
			message: fmt.Sprintf("count must be an integer from 1 to %d, not %q", jobs.MaxPreview, clipValue(raw))}
	}
	return n, nil
}

// previewList is a preview's answer: the times, those a DST transition
// moved or repeated (recur's dst, omitted when none), and the IANA zone
// the schedule is read in (omitted for UTC). The zone is there for
// clients that know IANA names only, such as a browser's Intl, and cannot
// resolve a Windows name ("W. Europe Standard Time") themselves.
type previewList struct {
	Value    []time.Time          `json:"value"`
	DST      []recurrence.Shifted `json:"dst,omitempty"`
	TimeZone string               `json:"timeZone,omitempty"`
}

func newPreviewList(times []time.Time, shifts []recurrence.Shifted, timeZone string) previewList {
	for i := range shifts {
		shifts[i].Time = shifts[i].Time.UTC()
	}
	return previewList{Value: utc(times), DST: shifts, TimeZone: ianaZone(timeZone)}
}

// ianaZone is the IANA name of a recurrence's timeZone, "" for UTC (or a
// name that is no zone, which validation refused before).
func ianaZone(name string) string {
	loc, err := recurrence.LoadLocation(name)
	if err != nil || loc == time.UTC {
		return ""
	}
	return loc.String()
}

// previewZone is the zone of the recurrence in a preview's body (its
// timeZone, or its rrule's DTSTART;TZID): a job's properties, or a whole
// job definition.
func previewZone(data []byte) string {
	type withZone struct {
		Recurrence *recurrence.Recurrence `json:"recurrence"`
	}
	var body struct {
		withZone
		Properties *withZone `json:"properties"`
	}
	if json.Unmarshal(data, &body) != nil {
		return ""
	}
	if body.Properties != nil {
		body.withZone = *body.Properties
	}
	if body.Recurrence == nil {
		return ""
	}
	return body.Recurrence.Zone()
}

// previewBody answers POST /recur/v1/preview: the next runs of a job not
// yet saved, planned as if created now.
func (s *Server) previewBody(_ context.Context, c *gin.Context, _ jobs.Key) error {
	n, err := previewCount(c)
	if err != nil {
		return err
	}
	data, err := readBody(c, jobs.CheckPreviewMembers)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	times, shifts, err := recurrence.PreviewJob(data, now, now, n)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, newPreviewList(times, shifts, previewZone(data)))
	return nil
}

// previewJob answers GET .../jobs/{j}/preview: a saved job's next
// scheduled runs, planned from the view its workflow keeps in its memo,
// with no worker.
func (s *Server) previewJob(ctx context.Context, c *gin.Context, k jobs.Key) error {
	n, err := previewCount(c)
	if err != nil {
		return err
	}
	view, err := s.store.JobView(ctx, k)
	if err != nil {
		return err
	}
	var next *time.Time
	if st := view.Job.Properties.Status; st != nil {
		next = st.NextExecutionTime
	}
	var zone string
	if r := view.Job.Properties.Recurrence; r != nil {
		zone = r.Zone()
	}
	times, shifts := jobs.UpcomingStarts(k, view.Job, view.PlannedFrom, view.Runs, next, n)
	c.JSON(http.StatusOK, newPreviewList(times, shifts, zone))
	return nil
}

func utc(times []time.Time) []time.Time {
	out := make([]time.Time, len(times))
	for i, t := range times {
		out[i] = t.UTC()
	}
	return out
}
