package recurrence

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// Member names Parse knows inside a recurrence. A misspelt name would
// otherwise be silently ignored and the job run at the wrong times. Names
// match in any letter case, as encoding/json matches them.
//
// The API and recur preview check whole bodies first, against the Go types
// of package jobs (jobs.CheckMembers), with UnknownProperty's error. This
// check stays for Parse's own callers, which give it job properties
// without that check; recurrence cannot reach jobs' types (jobs imports
// it), so it checks the part it reads, against its own types.
var (
	recurrenceFields = jsonNames(reflect.TypeFor[Recurrence]())
	scheduleFields   = jsonNames(reflect.TypeFor[Schedule]())
	occurrenceFields = jsonNames(reflect.TypeFor[MonthlyOccurrence]())
	exclusionFields  = jsonNames(reflect.TypeFor[Exclusion]())
	dstFields        = jsonNames(reflect.TypeFor[DSTPolicy]())
	ruleFields       = jsonNames(reflect.TypeFor[RuleSpec]())
)

// jsonNames returns the JSON names of the fields of struct type t, in
// their order.
func jsonNames(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "-" {
			names = append(names, cmp.Or(name, f.Name))
		}
	}
	return names
}

// checkUnknownFields runs on JSON that decoded, so only the shapes of the
// objects it walks into can still be unexpected; those are left to Parse.
func checkUnknownFields(data []byte) error {
	var top, rec map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil || json.Unmarshal(fieldFold(top, "recurrence"), &rec) != nil {
		return nil
	}
	if err := unknownField("recurrence", rec, recurrenceFields); err != nil {
		return err
	}
	var dst map[string]json.RawMessage
	if json.Unmarshal(fieldFold(rec, "dst"), &dst) == nil {
		if err := unknownField("recurrence.dst", dst, dstFields); err != nil {
			return err
		}
	}
	var exclusions []map[string]json.RawMessage
	if json.Unmarshal(fieldFold(rec, "exclusions"), &exclusions) == nil {
		for i, e := range exclusions {
			if err := unknownField(fmt.Sprintf("recurrence.exclusions[%d]", i), e, exclusionFields); err != nil {
				return err
			}
		}
	}
	var rules []map[string]json.RawMessage
	if json.Unmarshal(fieldFold(rec, "rules"), &rules) == nil {
		for i, m := range rules {
			path := fmt.Sprintf("recurrence.rules[%d]", i)
			if err := unknownField(path, m, ruleFields); err != nil {
				return err
			}
			if err := checkUnknownSchedule(path+".schedule", fieldFold(m, "schedule")); err != nil {
				return err
			}
		}
	}
	return checkUnknownSchedule("recurrence.schedule", fieldFold(rec, "schedule"))
}

// checkUnknownSchedule checks the member names of the schedule at path.
func checkUnknownSchedule(path string, raw json.RawMessage) error {
	var sched map[string]json.RawMessage
	var occs []map[string]json.RawMessage
	if json.Unmarshal(raw, &sched) != nil {
		return nil
	}
	if err := unknownField(path, sched, scheduleFields); err != nil {
		return err
	}
	if json.Unmarshal(fieldFold(sched, "monthlyOccurrences"), &occs) != nil {
		return nil
	}
	for i, occ := range occs {
		if err := unknownField(fmt.Sprintf("%s.monthlyOccurrences[%d]", path, i), occ, occurrenceFields); err != nil {
			return err
		}
	}
	return nil
}

// fieldFold returns obj's member named name in any letter case, or JSON
// null when there is none.
func fieldFold(obj map[string]json.RawMessage, name string) json.RawMessage {
	for k, v := range obj {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return json.RawMessage("null")
}

// unknownField returns the error for the first member of obj, in sorted
// order so that the error is the same on every run, that is none of known.
func unknownField(path string, obj map[string]json.RawMessage, known []string) error {
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !slices.ContainsFunc(known, func(name string) bool { return strings.EqualFold(name, k) }) {
			return UnknownProperty(path, k, known)
		}
	}
	return nil
}

// UnknownProperty is the error for the member name of the object at the
// JSON path parent ("" for the top of a body) when name is none of known:
// code CodeUnknownProperty at the member's path. Its message names the
// closest of the known names when one is close enough to be what was
// meant, and lists them all otherwise.
func UnknownProperty(parent, name string, known []string) *ValidationError {
	path, where := name, "the body"
	if parent != "" {
		path, where = parent+"."+name, lastName(parent)
	}
	msg := "is not a property of " + where
	if guess := Closest(name, known); guess != "" {
		msg += "; did you mean " + guess + "?"
	} else {
		msg += " (known: " + strings.Join(known, ", ") + ")"
	}
	return invalid(path, CodeUnknownProperty, msg)
}

// lastName is the member name a path ends with, without array indexes:
// monthlyOccurrences for recurrence.schedule.monthlyOccurrences[0].
func lastName(path string) string {
	path = path[strings.LastIndex(path, ".")+1:]
	if i := strings.IndexByte(path, '['); i >= 0 {
		return path[:i]
	}
	return path
}

// Closest returns the name of known nearest to name in any letter case
// (the fewest insertions, deletions, substitutions and swaps of adjacent
// letters), or "" when even that one differs in more than a third of
// name's letters (one letter for names of up to five): too far to be a
// typo of it. Of names equally near, the first in known wins. It is what
// UnknownProperty, jobs.PruneUnknown and recur import's ARM reader (for a
// function's name) suggest, so that all suggest alike.
func Closest(name string, known []string) string {
	given := foldedRunes(name)
	best, bestDist := "", max(1, len(given)/3)+1
	for _, k := range known {
		if d := editDistance(given, foldedRunes(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// foldedRunes returns s's runes in one letter case, each replaced by the
// smallest rune of its case-folding orbit, so that two names equal in any
// letter case (strings.EqualFold) give the same runes.
func foldedRunes(s string) []rune {
	out := []rune(s)
	for i, r := range out {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			out[i] = min(out[i], f)
		}
	}
	return out
}

// editDistance is the optimal string alignment distance of a and b:
// Levenshtein's, where swapping two adjacent runes also costs one.
func editDistance(a, b []rune) int {
	// rows[i%3] is the row of a[:i]: the current and the two before it.
	var rows [3][]int
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur, prev, prev2 := rows[i%3], rows[(i-1)%3], rows[(i+1)%3]
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
	}
	return rows[len(a)%3][len(b)]
}
