package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"
)

// env returns the environment variable's value, or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

// envDefaults reads the defaults of a command's flags from the
// environment. A value that does not parse does not fall back to the
// built-in default in silence (RECUR_TEMPORAL_TLS=yes would connect in
// plaintext): the command reports every such variable and stops before it
// starts anything, as it does for a bad flag.
type envDefaults struct{ errs []error }

// int reads an integer variable, def when it is unset or empty.
func (e *envDefaults) int(name string, def int) int {
	return parseEnv(e, name, def, "an integer", strconv.Atoi)
}

// float reads a number variable, def when it is unset or empty.
func (e *envDefaults) float(name string, def float64) float64 {
	return parseEnv(e, name, def, "a number", func(v string) (float64, error) { return strconv.ParseFloat(v, 64) })
}

// duration reads a duration variable (e.g. 5m), def when it is unset or
// empty.
func (e *envDefaults) duration(name string, def time.Duration) time.Duration {
	return parseEnv(e, name, def, "a duration such as 30s or 5m", time.ParseDuration)
}

// bool reads a boolean variable, def when it is unset or empty.
func (e *envDefaults) bool(name string, def bool) bool {
	return parseEnv(e, name, def, "true or false", strconv.ParseBool)
}

// value sets v from the variable with v's own parsing, when it is set.
func (e *envDefaults) value(name string, v flag.Value) {
	if s := env(name, ""); s != "" {
		if err := v.Set(s); err != nil {
			e.errs = append(e.errs, fmt.Errorf("%s=%q: %w", name, s, err))
		}
	}
}

// err is every variable that did not parse, nil when none.
func (e *envDefaults) err() error { return errors.Join(e.errs...) }

func parseEnv[T any](e *envDefaults, name string, def T, want string, parse func(string) (T, error)) T {
	s := env(name, "")
	if s == "" {
		return def
	}
	v, err := parse(s)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s=%q: want %s", name, s, want))
		return def
	}
	return v
}

// funcValue is a flag.Value that hands each value to a func, as
// flag.FlagSet.Func does: for envDefaults.value.
type funcValue func(string) error

func (f funcValue) Set(s string) error { return f(s) }
func (f funcValue) String() string     { return "" }
