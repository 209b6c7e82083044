package recurrence_test

import (
	"fmt"
	"time"

	"github.com/recurhq/recur/recurrence"
)

// The seed's worked example: a start in the past, every two days.
func ExamplePreview() {
	def, err := recurrence.Parse([]byte(`{"startTime":"2015-04-07T14:00Z","recurrence":{"frequency":"Day","interval":2}}`))
	if err != nil {
		panic(err)
	}
	now := time.Date(2015, 4, 8, 13, 0, 0, 0, time.UTC)
	runs, _ := recurrence.Preview(def, now, now, 4)
	for _, t := range runs {
		fmt.Println(t.Format(time.RFC3339))
	}
	// Output:
	// 2015-04-09T14:00:00Z
	// 2015-04-11T14:00:00Z
	// 2015-04-13T14:00:00Z
	// 2015-04-15T14:00:00Z
}

// A job workflow plans its first run with First, then steps from each
// nominal time with Next.
func ExampleRule_Next() {
	def, _ := recurrence.Parse([]byte(`{"startTime":"2026-06-01T00:00:00Z","recurrence":{
		"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"friday","occurrence":-1}],"hours":[17],"minutes":[0]},
		"timeZone":"W. Europe Standard Time"}}`))
	created := time.Date(2026, 5, 20, 9, 0, 0, 0, time.UTC)
	rule, _ := recurrence.Compile(def, created)
	t, ok := rule.First(created)
	for i := 0; ok && i < 3; i++ {
		fmt.Println(t.In(rule.Location()).Format("Mon 2006-01-02 15:04 MST"))
		t, ok = rule.Next(t)
	}
	// Output:
	// Fri 2026-06-26 17:00 CEST
	// Fri 2026-07-31 17:00 CEST
	// Fri 2026-08-28 17:00 CEST
}

func ExampleValidationError() {
	_, err := recurrence.Parse([]byte(`{"recurrence":{"frequency":"week","schedule":{"weekDays":["monday","someday"]}}}`))
	fmt.Println(err)
	// Output:
	// recurrence.schedule.weekDays[1]: "someday" is not a day: use Monday to Sunday
}
