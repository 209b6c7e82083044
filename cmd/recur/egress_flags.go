package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/recurhq/recur/egress"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/temporalserver"
)

// egressFlags are the flags of the egress policy: which destinations
// actions, token requests and queue sends may reach.
type egressFlags struct {
	// dev makes loopback allowed unless said otherwise: `recur dev` runs
	// on a developer's machine, whose targets are local.
	dev bool
	// policy is the policy the flags and environment say, once parsed;
	// workflowTargets where Workflow actions may start workflows.
	policy          egress.Policy
	workflowTargets jobs.WorkflowTargets
	// loopbackSet says whether loopback was set by flag or environment,
	// not by the dev default.
	loopbackSet bool
}

// register registers the egress flags on fs, with defaults from the
// environment (and for dev, loopback allowed).
func (e *egressFlags) register(fs *flag.FlagSet, envs *envDefaults) {
	e.loopbackSet = env("RECUR_EGRESS_ALLOW_LOOPBACK", "") != ""
	loopback := envs.bool("RECUR_EGRESS_ALLOW_LOOPBACK", e.dev)
	private := envs.bool("RECUR_EGRESS_ALLOW_PRIVATE", false)
	redirects := envs.bool("RECUR_EGRESS_FOLLOW_REDIRECTS", false)
	envs.value("RECUR_EGRESS_ALLOW", funcValue(e.policy.AddAllowed))
	envs.value("RECUR_WORKFLOW_ACTION_ALLOW", funcValue(e.workflowTargets.Add))
	fs.Func("workflow-action-allow", "comma-separated namespace/taskQueue pairs where Workflow actions may start workflows, '*' for any run of characters "+
		"in either part, e.g. recur/reports,billing/*; none by default. Temporal's system namespace, workflows and task queues and recur's own task queues "+
		"are refused whatever this says (RECUR_WORKFLOW_ACTION_ALLOW)", e.workflowTargets.Add)
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

// load decides, for dev, loopback when no flag or variable did: allowed for one developer, refused when the API has
// tenants (authenticated is true), whose jobs could otherwise call
// whatever else listens on the machine. It logs which and why.
func (e *egressFlags) load(log *slog.Logger, authenticated bool) error {
	if !e.dev || e.loopbackSet {
		return nil
	}
	if authenticated {
		e.policy.AllowLoopback = false
		log.Info("outbound calls may not reach loopback addresses: the API has tokens, so its tenants' jobs could call what listens " +
			"on this machine; --egress-allow-loopback allows them")
		return nil
	}
	log.Info("outbound calls may reach loopback addresses (dev default); --egress-allow-loopback=false refuses them, " +
		"as recur serve and recur worker do unless told otherwise")
	return nil
}

// logEgress logs the policy a worker's outbound calls follow, and where
// its Workflow actions may start workflows.
func logEgress(log *slog.Logger, p egress.Policy, targets jobs.WorkflowTargets) {
	log.Info("outbound call policy", "egress", p.String(), "workflowActionsAllowed", targets.String())
}

// refuseOwn adds to p the listeners outbound calls must never reach: own
// (recur's API, the embedded server's ports, the Temporal frontend recur
// uses) and pprofAddr when set. A host name among them is resolved now.
func refuseOwn(ctx context.Context, p *egress.Policy, pprofAddr string, own ...temporalserver.Listener) error {
	if pprofAddr != "" {
		own = append(own, temporalserver.Listener{What: "recur's pprof", Address: pprofAddr})
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, l := range own {
		if err := p.AddOwn(ctx, l.Address, l.What); err != nil {
			return err
		}
	}
	return nil
}
