package activities

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// TestEveryActionTypeHasItsPerformer: every action type but Http and Https
// has a performer, whose name is the name of the method it calls: the
// name worker.Register registers that method under (the SDK names an
// activity method after itself), so the workflow's dispatch by name and
// a first attempt's call in place reach the same activity.
func TestEveryActionTypeHasItsPerformer(t *testing.T) {
	for _, typ := range jobs.ActionTypes() {
		p, ok := PerformerOf(typ)
		if typ == jobs.ActionHTTP || typ == jobs.ActionHTTPS {
			require.False(t, ok, typ)
			continue
		}
		require.True(t, ok, "action type %s has no performer", typ)
		fn := runtime.FuncForPC(reflect.ValueOf(p.perform).Pointer()).Name()
		require.True(t, strings.HasSuffix(fn, ".(*Activities)."+p.Name), "%s: performer %s calls %s", typ, p.Name, fn)
		_, isMethod := reflect.TypeFor[*Activities]().MethodByName(p.Name)
		require.True(t, isMethod, typ)
	}
	_, ok := PerformerOf("CarrierPigeon")
	require.False(t, ok)
}
