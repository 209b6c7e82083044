package arm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/recurhq/recur/recurrence"
)

// templateFunctions are ARM's template functions, as Microsoft's
// documentation of them lists them ("ARM template functions": array,
// CIDR, comparison, date, deployment, lambda, logical, numeric, object,
// resource, scope and string functions). The reader evaluates few of
// them (functions); the list tells a function it does not evaluate from
// a name that is none, which ARM itself refuses, and offers the nearest
// for a misspelling.
var templateFunctions = []string{
	// array
	"array", "concat", "contains", "createArray", "empty", "first", "indexFromEnd", "indexOf", "intersection",
	"last", "lastIndexOf", "length", "max", "min", "range", "skip", "take", "tryGet", "tryIndexFromEnd", "union",
	// CIDR
	"parseCidr", "cidrSubnet", "cidrHost",
	// comparison
	"coalesce", "equals", "greater", "greaterOrEquals", "less", "lessOrEquals",
	// date
	"dateTimeAdd", "dateTimeFromEpoch", "dateTimeToEpoch", "utcNow",
	// deployment
	"deployer", "deployment", "environment", "parameters", "variables",
	// lambda, with the two functions a lambda is written with
	"filter", "groupBy", "map", "mapValues", "reduce", "sort", "toObject", "lambda", "lambdaVariables",
	// logical
	"and", "bool", "false", "if", "not", "or", "true",
	// numeric
	"add", "copyIndex", "div", "float", "int", "mod", "mul", "sub",
	// object
	"createObject", "items", "json", "null", "objectKeys", "shallowMerge",
	// resource (list* is any name that starts with list)
	"extensionResourceId", "listAccountSas", "listKeys", "listSecrets", "managementGroupResourceId", "pickZones",
	"providers", "reference", "references", "resourceId", "subscriptionResourceId", "tenantResourceId",
	// scope
	"managementGroup", "resourceGroup", "subscription", "tenant",
	// string
	"base64", "base64ToJson", "base64ToString", "dataUri", "dataUriToString", "endsWith", "format", "guid",
	"join", "newGuid", "padLeft", "replace", "split", "startsWith", "string", "substring", "toLower", "toUpper",
	"trim", "uniqueString", "uri", "uriComponent", "uriComponentToString",
}

// notEvaluated says why the reader has no value for a call of the
// function name: a function it does not evaluate, or a name that is no
// template function at all, with the nearest that is.
func notEvaluated(name string) string {
	switch {
	case strings.Contains(name, "."):
		return fmt.Sprintf("the user-defined function %s is not evaluated by recur import", name)
	case isTemplateFunction(name):
		return fmt.Sprintf("the template function %s is not evaluated by recur import", name)
	}
	if guess := recurrence.Closest(name, templateFunctions); guess != "" {
		return fmt.Sprintf("%s is not an ARM template function; did you mean %s?", name, guess)
	}
	return fmt.Sprintf("%s is not an ARM template function", name)
}

// isTemplateFunction reports whether name, in any letter case, is one of
// templateFunctions or a list* function: a resource's list operation.
func isTemplateFunction(name string) bool {
	if len(name) >= 4 && strings.EqualFold(name[:4], "list") {
		return true
	}
	return slices.ContainsFunc(templateFunctions, func(f string) bool { return strings.EqualFold(f, name) })
}
