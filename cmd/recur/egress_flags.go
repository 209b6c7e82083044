package main

import (
	"flag"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/recurhq/recur/egress"
)

// egressFlags are the flags of the egress policy: which destinations
// actions, token requests and queue sends may reach.
type egressFlags struct {
	// dev makes loopback allowed unless said otherwise: `recur dev` runs
	// on a developer's machine, whose targets are local.
	dev bool
	// policy is the policy the flags and environment say, once parsed.
	policy egress.Policy
	// loopbackSet says whether loopback was set by flag or environment,
	// not by the dev default.
	loopbackSet bool
	// err is a bad environment variable, reported by load.
	err error
}

// register registers the egress flags on fs, with defaults from the
// environment (and for dev, loopback allowed).
func (e *egressFlags) register(fs *flag.FlagSet) {
	loopback, ok := e.envBool("RECUR_EGRESS_ALLOW_LOOPBACK")
	e.loopbackSet = ok
	if !ok {
		loopback = e.dev
	}
	private, _ := e.envBool("RECUR_EGRESS_ALLOW_PRIVATE")
	redirects, _ := e.envBool("RECUR_EGRESS_FOLLOW_REDIRECTS")
	if v := env("RECUR_EGRESS_ALLOW", ""); v != "" {
		if err := e.policy.AddAllowed(v); err != nil && e.err == nil {
			e.err = fmt.Errorf("RECUR_EGRESS_ALLOW: %w", err)
		}
	}
	fs.Func("egress-allow", "comma-separated CIDR ranges, addresses and host names outbound calls may reach although loopback or private; "+
		"a host name is allowed whatever it resolves to (RECUR_EGRESS_ALLOW)", e.policy.AddAllowed)
	fs.BoolFunc("egress-allow-loopback", fmt.Sprintf("outbound calls may reach loopback addresses (default %t) (RECUR_EGRESS_ALLOW_LOOPBACK)", loopback),
		e.setBool(&e.policy.AllowLoopback, &e.loopbackSet))
	fs.BoolFunc("egress-allow-private", "outbound calls may reach private addresses: 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7 (RECUR_EGRESS_ALLOW_PRIVATE)",
		e.setBool(&e.policy.AllowPrivate, nil))
	fs.BoolFunc("egress-follow-redirects", "outbound HTTP calls follow redirects, each checked as the first call (RECUR_EGRESS_FOLLOW_REDIRECTS)",
		e.setBool(&e.policy.FollowRedirects, nil))
	e.policy.AllowLoopback, e.policy.AllowPrivate, e.policy.FollowRedirects = loopback, private, redirects
}

// envBool reads a boolean environment variable; ok is false when it is
// unset or bad (then e.err says so).
func (e *egressFlags) envBool(name string) (value, ok bool) {
	v := env(name, "")
	if v == "" {
		return false, false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		if e.err == nil {
			e.err = fmt.Errorf("%s: want true or false, not %q", name, v)
		}
		return false, false
	}
	return b, true
}

// setBool returns a flag.BoolFunc setting *dst, and *set when not nil.
func (e *egressFlags) setBool(dst, set *bool) func(string) error {
	return func(s string) error {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("want true or false")
		}
		*dst = b
		if set != nil {
			*set = true
		}
		return nil
	}
}

// load reports a bad environment variable, and for dev says when loopback
// is allowed by default.
func (e *egressFlags) load(log *slog.Logger) error {
	if e.err != nil {
		return e.err
	}
	if e.dev && e.policy.AllowLoopback && !e.loopbackSet {
		log.Info("outbound calls may reach loopback addresses (dev default); --egress-allow-loopback=false refuses them, " +
			"as recur serve and recur worker do unless told otherwise")
	}
	return nil
}

// logEgress logs the policy a worker's outbound calls follow.
func logEgress(log *slog.Logger, p egress.Policy) {
	log.Info("outbound call policy", "egress", p.String())
}
