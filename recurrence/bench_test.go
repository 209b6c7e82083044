package recurrence_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/recurhq/recur/recurrence"
)

// benchRules are one typical rule per frequency, with a schedule where the
// frequency has one, in UTC and in a DST zone; rrules with BYSETPOS,
// BYWEEKNO, BYYEARDAY and SECONDLY; and a union of three rules.
var benchRules = []struct{ name, recurrence string }{
	{"Second", `{"frequency":"Second","interval":10}`},
	{"SecondFilteredBerlin", `{"frequency":"Second","interval":15,"schedule":{"hours":[9,10,11,12,13,14,15,16],"minutes":[0,1,2,3,4,30]},"timeZone":"Europe/Berlin"}`},
	{"Minute", `{"frequency":"Minute","interval":7}`},
	{"MinuteFiltered", `{"frequency":"Minute","interval":5,"schedule":{"hours":[9,10,11,12,13,14,15,16],"minutes":[0,15,30,45]}}`},
	{"Hour", `{"frequency":"Hour","interval":3,"schedule":{"minutes":[0,30]}}`},
	{"HourFiltered", `{"frequency":"Hour","interval":1,"schedule":{"minutes":[15],"hours":[5,17]}}`},
	{"Day", `{"frequency":"Day","interval":2,"schedule":{"hours":[5,17],"minutes":[15,45]}}`},
	{"Week", `{"frequency":"Week","schedule":{"weekDays":["monday","wednesday","friday"],"hours":[17]}}`},
	{"Month", `{"frequency":"Month","schedule":{"monthDays":[1,-1],"monthlyOccurrences":[{"day":"friday","occurrence":-1}],"hours":[6]}}`},
	{"Year", `{"frequency":"Year","interval":1}`},
	{"DayBerlin", `{"frequency":"Day","schedule":{"hours":[2,14],"minutes":[30]},"timeZone":"Europe/Berlin"}`},
	{"MonthNewYork", `{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"sunday","occurrence":2}],"hours":[2],"minutes":[30]},"timeZone":"America/New_York"}`},
	{"CronWeekdays", `{"cron":"*/15 9-17 * * MON-FRI"}`},
	{"CronSeconds", `{"cron":"*/10 * 9-17 * * MON-FRI"}`},
	{"CronLastWeekdayBerlin", `{"cron":"30 2 LW * *","timeZone":"Europe/Berlin"}`},
	{"DayExclusions", `{"frequency":"Day","exclusions":[{"from":"2026-12-24","to":"2027-01-01"},{"date":"2027-05-01"}]}`},
	{"RRuleSetPosBerlin", `{"rrule":"FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3;BYHOUR=9;BYMINUTE=0;BYSECOND=0","timeZone":"Europe/Berlin"}`},
	{"RRuleWeekNoNewYork", `{"rrule":"FREQ=YEARLY;BYWEEKNO=1,10,20,30,40,50;BYDAY=MO,FR;BYHOUR=8;BYMINUTE=0;BYSECOND=0","timeZone":"America/New_York"}`},
	{"RRuleYearDay", `{"rrule":"FREQ=YEARLY;BYYEARDAY=1,100,200,-1;BYHOUR=6,18;BYMINUTE=0;BYSECOND=0"}`},
	{"RRuleSecondlyBerlin", `{"rrule":"FREQ=SECONDLY;INTERVAL=15","timeZone":"Europe/Berlin"}`},
	{"RulesUnionOfThreeBerlin", `{"timeZone":"Europe/Berlin","rules":[
		{"frequency":"Week","schedule":{"weekDays":["Monday","Tuesday","Wednesday","Thursday","Friday"],"hours":[9],"minutes":[0]}},
		{"cron":"30 17 * * 1-5"},
		{"rrule":"FREQ=WEEKLY;BYDAY=SA;BYHOUR=10;BYMINUTE=0;BYSECOND=0"}]}`},
}

// BenchmarkNext measures one Next call, stepping along the occurrences, for
// a start an hour before the first call and a start in 1970.
func BenchmarkNext(b *testing.B) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for _, rule := range benchRules {
		for _, start := range []struct {
			name string
			t    time.Time
		}{{"startNow", now.Add(-time.Hour)}, {"start1970", time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)}} {
			b.Run(rule.name+"/"+start.name, func(b *testing.B) {
				def := defOf(b, fmt.Sprintf(`{"startTime":%q,"recurrence":%s}`, start.t.Format(time.RFC3339), rule.recurrence))
				r, err := recurrence.Compile(def, now)
				if err != nil {
					b.Fatal(err)
				}
				first, _ := r.First(now)
				t := first
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					next, ok := r.Next(t)
					if !ok {
						b.Fatal("no next occurrence")
					}
					t = next
					if i%1024 == 1023 {
						t = first // stay near now: 1970 vs now is what is compared
					}
				}
			})
		}
	}
}

// BenchmarkPreview1000 measures a preview of 1,000 occurrences, parsing
// and compiling included.
func BenchmarkPreview1000(b *testing.B) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	def := defOf(b, `{"startTime":"2015-04-07T14:00Z","recurrence":{"frequency":"Week","schedule":{"weekDays":["monday","wednesday","friday"],"hours":[5,17],"minutes":[15,45]}}}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		got, err := recurrence.Preview(def, now, now, 1000)
		if err != nil || len(got) != 1000 {
			b.Fatal(err, len(got))
		}
	}
}

const benchJob = `{"startTime":"2015-04-07T14:00Z","recurrence":{"frequency":"Month","schedule":{"monthDays":[1,-1],"hours":[6]},"timeZone":"Europe/Berlin"}}`

// BenchmarkParse measures reading and validating job properties JSON, as
// the API does for every PUT.
func BenchmarkParse(b *testing.B) {
	js := []byte(benchJob)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := recurrence.Parse(js); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompile measures compiling a decoded definition, which the job
// workflow does for every occurrence it plans.
func BenchmarkCompile(b *testing.B) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	def := defOf(b, benchJob)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := recurrence.Compile(def, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileRRule measures compiling an rrule and a list of rules,
// which the job workflow does for every occurrence it plans, as
// BenchmarkCompile does for Azure's fields.
func BenchmarkCompileRRule(b *testing.B) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for _, rule := range benchRules {
		if !strings.Contains(rule.recurrence, `"rr`) && !strings.Contains(rule.recurrence, `"rules"`) {
			continue
		}
		b.Run(rule.name, func(b *testing.B) {
			def := defOf(b, fmt.Sprintf(`{"startTime":%q,"recurrence":%s}`, now.Add(-time.Hour).Format(time.RFC3339), rule.recurrence))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := recurrence.Compile(def, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
