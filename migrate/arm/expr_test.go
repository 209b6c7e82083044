package arm

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/migrate"
)

// scopeTemplate is the template the expression tests evaluate in.
const scopeTemplate = `{
  "parameters": {
    "name": {"type": "string", "defaultValue": "Web"},
    "obj": {"type": "object", "defaultValue": {"a": {"b": "deep"}, "list": [10, 20]}},
    "list": {"type": "array", "defaultValue": ["x", "y"]},
    "n": {"type": "int", "defaultValue": 7},
    "unset1": {"type": "string"},
    "unset2": {"type": "securestring"},
    "fromVar": {"type": "string", "defaultValue": "[concat(parameters('name'), '-default')]"},
    "loopA": {"type": "string", "defaultValue": "[parameters('loopB')]"},
    "loopB": {"type": "string", "defaultValue": "[parameters('loopA')]"}
  },
  "variables": {
    "prefix": "[toLower(parameters('name'))]",
    "full": "[concat(variables('prefix'), '-', parameters('n'))]",
    "nested": {"inner": "[variables('prefix')]", "keys": "[listKeys('id', '2019-06-01')]"},
    "more": ["z"],
    "self": "[variables('self')]"
  },
  "resources": []
}`

func newScope(t testing.TB, opts *Options) *template {
	root, err := parseJSON([]byte(scopeTemplate))
	require.NoError(t, err)
	return newTemplate(root.val.(*object), opts, nil)
}

func TestEvaluate(t *testing.T) {
	opts := &Options{Subscription: "sub", ResourceGroup: "rg", Location: "westeurope"}
	for _, c := range []struct {
		in   string
		want any
	}{
		{"plain text", "plain text"},
		{"[[escaped]", "[escaped]"},
		{"[[no end", "[[no end"},
		{"[x] y", "[x] y"},
		{"[concat('a', 'b', 'c')]", "abc"},
		{"[CONCAT('a')]", "a"},
		{"[ concat ( 'a' , 'b' ) ]", "ab"},
		{"[concat(parameters('list'), variables('more'))]", []any{"x", "y", "z"}},
		{"['it''s']", "it's"},
		{"['']", ""},
		{"[42]", int64(42)},
		{"[-3]", int64(-3)},
		{"[true()]", true},
		{"[False()]", false},
		{"[toLower('ABC')]", "abc"},
		{"[toUpper('abc')]", "ABC"},
		{"[format('{0}-{1}', 'a', 2)]", "a-2"},
		{"[format('{{{0}}} {1} {0}', 'x', 'y')]", "{x} y x"},
		{"[format('{0 }', 'x')]", "x"},
		{"[parameters('name')]", "Web"},
		{"[PARAMETERS('NAME')]", "Web"},
		{"[parameters('fromVar')]", "Web-default"},
		{"[parameters('obj')]", map[string]any{"a": map[string]any{"b": "deep"}, "list": []any{int64(10), int64(20)}}},
		{"[parameters('obj').a.b]", "deep"},
		{"[parameters('obj')['a']['b']]", "deep"},
		{"[parameters('obj').A.B]", "deep"},
		{"[parameters('obj').list[1]]", int64(20)},
		{"[parameters('list')[0]]", "x"},
		{"[variables('prefix')]", "web"},
		{"[variables('nested').inner]", "web"},
		{"[resourceGroup().name]", "rg"},
		{"[resourceGroup().location]", "westeurope"},
		{"[resourceGroup().id]", "/subscriptions/sub/resourceGroups/rg"},
		{"[subscription().subscriptionId]", "sub"},
		{"[subscription().id]", "/subscriptions/sub"},
	} {
		got := newScope(t, opts).evalString(c.in)
		assert.Equal(t, c.want, got, c.in)
	}
}

func TestEvaluateUnknown(t *testing.T) {
	for _, c := range []struct {
		in       string
		problems []problem
	}{
		{"[listKeys('id', '2019-06-01').keys[0].value]", []problem{{"[listKeys('id', '2019-06-01').keys[0].value]", "the template function listKeys is not evaluated by recur import"}}},
		{"[if(true(), 'a', 'b')]", []problem{{"[if(true(), 'a', 'b')]", "the template function if is not evaluated by recur import"}}},
		{"[contoso.helper('a')]", []problem{{"[contoso.helper('a')]", "the user-defined function contoso.helper is not evaluated by recur import"}}},
		// A function ARM has and one it has not say so differently.
		{"[uniqueString('a')]", []problem{{"[uniqueString('a')]", "the template function uniqueString is not evaluated by recur import"}}},
		{"[UNIQUESTRING('a')]", []problem{{"[UNIQUESTRING('a')]", "the template function UNIQUESTRING is not evaluated by recur import"}}},
		{"[listConnectionStrings('id', '2019-06-01')]", []problem{{"[listConnectionStrings('id', '2019-06-01')]",
			"the template function listConnectionStrings is not evaluated by recur import"}}},
		{"[bogusFn('a')]", []problem{{"[bogusFn('a')]", "bogusFn is not an ARM template function"}}},
		{"[uniqeString('a')]", []problem{{"[uniqeString('a')]", "uniqeString is not an ARM template function; did you mean uniqueString?"}}},
		{"[concta('a', 'b')]", []problem{{"[concta('a', 'b')]", "concta is not an ARM template function; did you mean concat?"}}},
		{"[resourcegroupe().location]", []problem{{"[resourcegroupe().location]", "resourcegroupe is not an ARM template function; did you mean resourceGroup?"}}},
		{"[parameters('unset1')]", []problem{{"unset1", "the parameter has no value: no --set, parameters file or defaultValue gives one"}}},
		{"[concat(parameters('unset1'), '-', parameters('unset2'))]", []problem{
			{"unset1", "the parameter has no value: no --set, parameters file or defaultValue gives one"},
			{"unset2", "the parameter has no value: no --set, parameters file or defaultValue gives one"}}},
		{"[parameters('undeclared')]", []problem{{"undeclared", "the template declares no parameter undeclared"}}},
		{"[parameters('loopA')]", []problem{{"loopA", "the defaultValue of parameter loopA refers to itself"}}},
		{"[variables('nope')]", []problem{{"[variables('nope')]", "the template defines no variable nope"}}},
		{"[variables('self')]", []problem{{"[variables('self')]", "variable self refers to itself"}}},
		{"[variables('nested').keys]", []problem{{"[listKeys('id', '2019-06-01')]", "the template function listKeys is not evaluated by recur import"}}},
		{"[concat('a', 1)]", []problem{{"[concat('a', 1)]", "the expression cannot be evaluated: concat: argument 2 is an int; concat joins strings or arrays"}}},
		{"[concat(parameters('list'), 'a')]", []problem{{"[concat(parameters('list'), 'a')]", "the expression cannot be evaluated: concat: argument 2 is a string; concat joins arrays or strings, not both"}}},
		{"[variables('full')]", []problem{{"[concat(variables('prefix'), '-', parameters('n'))]", "the expression cannot be evaluated: concat: argument 3 is an int; concat joins strings or arrays"}}},
		{"[format('{0:D2}', 5)]", []problem{{"[format('{0:D2}', 5)]", "the expression cannot be evaluated: format: format item {0:D2} has an alignment or format specifier, which recur import does not evaluate"}}},
		{"[format('{1}', 5)]", []problem{{"[format('{1}', 5)]", "the expression cannot be evaluated: format: format item {1} has no argument"}}},
		{"[format('a}', 5)]", []problem{{"[format('a}', 5)]", "the expression cannot be evaluated: format: the format has a } at 1 that closes nothing"}}},
		{"[format('{0}', true())]", []problem{{"[format('{0}', true())]", "the expression cannot be evaluated: format: format item {0} is a bool; recur import formats strings and ints"}}},
		{"[toLower(1)]", []problem{{"[toLower(1)]", "the expression cannot be evaluated: toLower: the argument is an int, not a string"}}},
		{"[toLower('a', 'b')]", []problem{{"[toLower('a', 'b')]", "the expression cannot be evaluated: toLower takes 1 argument, not 2"}}},
		{"[parameters('list')[2]]", []problem{{"[parameters('list')[2]]", "the expression cannot be evaluated: index 2 is out of the array's 2 elements"}}},
		{"[parameters('list')['a']]", []problem{{"[parameters('list')['a']]", "the expression cannot be evaluated: an array's element is chosen by an int, not a string"}}},
		{"[parameters('obj').missing]", []problem{{"[parameters('obj').missing]", `the expression cannot be evaluated: the object has no member "missing"`}}},
		{"[parameters('name').length]", []problem{{"[parameters('name').length]", "the expression cannot be evaluated: a string has no members"}}},
		{"[resourceGroup().managedBy]", []problem{{"[resourceGroup().managedBy]", "resourceGroup().managedBy is not known to recur import"}}},
		{"[resourceGroup().location]", []problem{{"[resourceGroup().location]", "resourceGroup().location is not given to recur import: give --location"}}},
		{"[name]", []problem{{"[name]", "the expression does not parse: at 4: expected (, found the end"}}},
		{"[concat('a',]", []problem{{"[concat('a',]", "the expression does not parse: at 11: expected a string, an integer or a function call, found the end"}}},
		{"['open]", []problem{{"['open]", "the expression does not parse: at 0: a string is not closed"}}},
		{"[]", []problem{{"[]", "the expression does not parse: at 0: expected a string, an integer or a function call, found the end"}}},
		{"['a' 'b']", []problem{{"['a' 'b']", `the expression does not parse: at 4: unexpected "b" after the expression`}}},
		{"[1.5]", []problem{{"[1.5]", `the expression does not parse: at 2: expected a member name after ., found "5"`}}},
		{"[a(#)]", []problem{{"[a(#)]", "the expression does not parse: at 2: unexpected character '#'"}}},
		{"[99999999999999999999]", []problem{{"[99999999999999999999]", "the expression does not parse: at 0: integer 99999999999999999999 is out of range"}}},
	} {
		got := newScope(t, &Options{}).evalString(c.in)
		u, ok := got.(*unknown)
		if assert.True(t, ok, "%s = %v", c.in, got) {
			assert.Equal(t, c.problems, u.problems, c.in)
		}
	}
}

func TestSetSuppliesAnExpression(t *testing.T) {
	const text = "[listKeys('id', '2019-06-01').keys[0].value]"
	tp := newScope(t, &Options{Set: map[string]string{text: "key", "unset1": "given"}})
	assert.Equal(t, "key", tp.evalString(text))
	assert.Equal(t, "given-x", tp.evalString("[concat(parameters('UNSET1'), '-x')]"))
	// A variable's unknown member is supplied by its own text.
	tp = newScope(t, &Options{Set: map[string]string{"[listKeys('id', '2019-06-01')]": "keys"}})
	assert.Equal(t, "keys", tp.evalString("[variables('nested').keys]"))
}

func TestNestingIsBounded(t *testing.T) {
	deep := "[" + strings.Repeat("concat(", maxNesting+1) + "'a'" + strings.Repeat(")", maxNesting+1) + "]"
	u, ok := newScope(t, &Options{}).evalString(deep).(*unknown)
	require.True(t, ok)
	assert.Contains(t, u.problems[0].reason, "nests deeper than")

	doubling := `{"variables": {"v0": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"`
	for i := 1; i <= 40; i++ {
		doubling += `, "v` + strconv.Itoa(i) + `": "[concat(variables('v` + strconv.Itoa(i-1) + `'), variables('v` + strconv.Itoa(i-1) + `'))]"`
	}
	root, err := parseJSON([]byte(doubling + `}, "resources": []}`))
	require.NoError(t, err)
	tp := newTemplate(root.val.(*object), &Options{}, nil)
	_, ok = tp.evalString("[variables('v40')]").(*unknown)
	require.True(t, ok)
	var limit *migrate.LimitError
	require.ErrorAs(t, tp.err, &limit, "the reading stops")
	assert.Contains(t, limit.What, "concat(variables('v14'), variables('v14'))", "the first too large")
	assert.Equal(t, "1 MiB for a value", limit.Limit)
}

// FuzzExpression checks that any text between brackets parses to an
// expression or an error, never both or neither, and evaluates to a value
// of the JSON kinds, or to an unknown, without panicking.
func FuzzExpression(f *testing.F) {
	for _, s := range []string{
		"concat('a', 'b')", "format('{0}-{{1}}', parameters('name'), 3)", "parameters('obj').a['b']",
		"variables('nested').keys", "listKeys('x', '1').keys[0].value", "resourceGroup().location",
		"toLower(variables('prefix'))", "'it''s'", "-12", "true()", "a.b.c()", "concat(", "[", "'",
		"parameters('list')[1]", "format('{0:D2}', 1)", "concat(parameters('list'), parameters('list'))",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		x, err := parseExpr(src)
		if (x == nil) == (err == nil) {
			t.Fatalf("parseExpr(%q) = %v, %v", src, x, err)
		}
		v := newScope(t, &Options{ResourceGroup: "rg"}).evalString("[" + src + "]")
		switch v := v.(type) {
		case string, int64, bool, nil, map[string]any, []any, *scope, json.Number:
		case *unknown:
			if len(v.problems) == 0 {
				t.Fatalf("%q is unknown for no reason", src)
			}
		default:
			t.Fatalf("%q evaluates to a %T", src, v)
		}
	})
}
