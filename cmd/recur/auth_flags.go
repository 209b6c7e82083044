package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/jobs"
)

// Default rate limits per subscription of `recur serve` and `recur api`.
// `recur dev` has none by default: it serves one developer, whose load
// tests and soak runs should not meet a limit.
const (
	defaultRateLimit = 50
	defaultRateBurst = 100
)

// defaultMaxCollections is the cap of job collections per subscription:
// Azure Scheduler's documented limit.
const defaultMaxCollections = 200_000

// apiSecurity are the flags of the REST API's authentication, TLS and
// rate limits.
type apiSecurity struct {
	tokensFile   string
	oidcIssuer   string
	oidcAudience string
	oidcClaim    string
	insecureOpen bool
	tlsCert      string
	tlsKey       string
	rateLimit    float64
	rateBurst    int
	// maxCollections caps the job collections of a subscription.
	maxCollections int
	// minInterval is the floor of how often a job may run.
	minInterval time.Duration
	// backfill paces backfills (backfill_flags.go).
	backfill backfillFlags
	// allowedHosts are the names requests may give in Host beyond
	// localhost, IP addresses and the listen address; trustedProxies
	// whose forwarded headers the API believes.
	allowedHosts   api.Hosts
	trustedProxies api.TrustedProxies
}

// register adds the flags; rate is the default rate limit of the command.
func (s *apiSecurity) register(fs *flag.FlagSet, rate float64, e *envDefaults) {
	fs.StringVar(&s.tokensFile, "api-tokens-file", env("RECUR_API_TOKENS_FILE", ""),
		"JSON `file` of the API's bearer tokens and their subscriptions (RECUR_API_TOKENS_FILE); RECUR_API_TOKENS=\"token=sub1,sub2;token2=*\" adds more")
	fs.StringVar(&s.oidcIssuer, "oidc-issuer", env("RECUR_OIDC_ISSUER", ""),
		"OpenID Connect issuer `URL` whose JWTs the API accepts (RECUR_OIDC_ISSUER)")
	fs.StringVar(&s.oidcAudience, "oidc-audience", env("RECUR_OIDC_AUDIENCE", ""),
		"`audience` the JWTs must be for; required with --oidc-issuer (RECUR_OIDC_AUDIENCE)")
	fs.StringVar(&s.oidcClaim, "oidc-subscriptions-claim", env("RECUR_OIDC_SUBSCRIPTIONS_CLAIM", api.DefaultSubscriptionsClaim),
		"JWT `claim` with the token's subscription IDs, \"*\" for all (RECUR_OIDC_SUBSCRIPTIONS_CLAIM)")
	fs.BoolVar(&s.insecureOpen, "insecure-open-api", e.bool("RECUR_INSECURE_OPEN_API", false),
		"serve the REST API without authentication on an address other machines can reach (RECUR_INSECURE_OPEN_API=true)")
	fs.StringVar(&s.tlsCert, "tls-cert", env("RECUR_TLS_CERT", ""),
		"PEM `file` of the REST API's TLS certificate (chain); with --tls-key the API serves HTTPS (RECUR_TLS_CERT)")
	fs.StringVar(&s.tlsKey, "tls-key", env("RECUR_TLS_KEY", ""), "PEM `file` of the TLS certificate's key (RECUR_TLS_KEY)")
	fs.Float64Var(&s.rateLimit, "rate-limit", e.float("RECUR_RATE_LIMIT", rate),
		"requests per second per subscription, 0 for no limit (RECUR_RATE_LIMIT)")
	fs.IntVar(&s.rateBurst, "rate-burst", e.int("RECUR_RATE_BURST", defaultRateBurst),
		"requests a subscription may make at once before --rate-limit applies (RECUR_RATE_BURST)")
	e.value("RECUR_ALLOWED_HOSTS", funcValue(s.allowedHosts.Add))
	fs.Func("allowed-hosts", "comma-separated host `names` requests may give in Host beyond localhost, IP addresses and --http-addr's host, "+
		"e.g. recur.example.com,.internal.example (a leading dot: its subdomains too), * for any; links in answers name only these. "+
		"Without tokens any other name is refused (DNS rebinding), with tokens once names are given (RECUR_ALLOWED_HOSTS)", s.allowedHosts.Add)
	e.value("RECUR_TRUSTED_PROXIES", funcValue(s.trustedProxies.Add))
	fs.Func("trusted-proxies", "comma-separated IP `addresses` and CIDR ranges of the proxies in front of the API, whose "+
		"X-Forwarded-For, X-Real-IP and X-Forwarded-Proto are believed; none by default (RECUR_TRUSTED_PROXIES)", s.trustedProxies.Add)
	fs.IntVar(&s.maxCollections, "max-collections-per-subscription", e.int("RECUR_MAX_COLLECTIONS_PER_SUBSCRIPTION", defaultMaxCollections),
		"job collections one subscription may have, 0 for no cap; a PUT that would create one more answers 409 (RECUR_MAX_COLLECTIONS_PER_SUBSCRIPTION)")
	fs.DurationVar(&s.minInterval, "min-interval", e.duration("RECUR_MIN_INTERVAL", jobs.DefaultMinInterval),
		"shortest time a job's occurrences may come apart, at least 1s; a PUT or PATCH of a job that runs more often answers 400, jobs already admitted keep running (RECUR_MIN_INTERVAL)")
	s.backfill.register(fs, e)
}

// apiConfig is what the REST API is served with.
type apiConfig struct {
	auth           api.Authenticator // nil: open
	rateLimit      api.RateLimit
	tls            *tls.Config // nil: plain HTTP
	maxCollections int         // per subscription; 0 for no cap
	minInterval    time.Duration
	// backfill paces backfills (backfill_flags.go), checked apart from
	// prepare.
	backfill       api.BackfillLimits
	allowedHosts   api.Hosts
	trustedProxies api.TrustedProxies
}

// prepare builds the API's configuration and applies the start-up rules:
// an open API on loopback starts with a loud warning; an open API on any
// other address is refused unless --insecure-open-api says otherwise.
func (s *apiSecurity) prepare(ctx context.Context, addr string, log *slog.Logger) (apiConfig, error) {
	var cfg apiConfig
	var err error
	if s.rateLimit < 0 || s.rateBurst < 1 {
		return cfg, errors.New("--rate-limit must be 0 or more and --rate-burst 1 or more")
	}
	cfg.rateLimit = api.RateLimit{PerSecond: s.rateLimit, Burst: s.rateBurst}
	if s.maxCollections < 0 {
		return cfg, errors.New("--max-collections-per-subscription must be 0 (no cap) or more")
	}
	cfg.maxCollections = s.maxCollections
	if s.minInterval < jobs.SmallestMinInterval {
		return cfg, fmt.Errorf("--min-interval must be at least %s, not %s", jobs.SmallestMinInterval, s.minInterval)
	}
	cfg.minInterval = s.minInterval
	cfg.allowedHosts, cfg.trustedProxies = s.allowedHosts, s.trustedProxies
	if cfg.tls, err = apiTLS(s.tlsCert, s.tlsKey); err != nil {
		return cfg, err
	}
	if cfg.auth, err = s.authenticator(ctx, log); err != nil {
		return cfg, err
	}
	if cfg.auth != nil {
		return cfg, nil
	}
	const configure = "configure --api-tokens-file, RECUR_API_TOKENS or --oidc-issuer"
	// What the open API refuses, so that a web page open in a browser
	// cannot drive it (api's edge).
	const browsers = "web pages open in a browser cannot: requests from pages of other origins and sites, " +
		"requests with side effects a browser sends without Content-Type: application/json, and Host names other than localhost, " +
		"IP addresses and --allowed-hosts are refused"
	switch {
	case loopbackOnly(ctx, addr):
		log.Warn("the REST API is open: anyone who can reach " + addr + " (every user and process on this machine, and anything they proxy) can read, change and run every job, and make recur call any URL; " + browsers + "; " + configure)
	case s.insecureOpen:
		log.Warn("the REST API is open on " + addr + " (--insecure-open-api): anyone who can reach it can read, change and run every job, and make recur call any URL; " + browsers + "; " + configure)
	default:
		return cfg, fmt.Errorf("refusing to serve the REST API on %s without authentication: anyone who can reach it could read, change and run every job and make recur call any URL; %s, or pass --insecure-open-api to serve it open anyway", addr, configure)
	}
	return cfg, nil
}

// authenticator builds the API's authenticator from the static tokens and
// the OIDC issuer configured, or returns nil when there are none.
func (s *apiSecurity) authenticator(ctx context.Context, log *slog.Logger) (api.Authenticator, error) {
	tokens := &api.StaticTokens{}
	if s.tokensFile != "" {
		data, err := os.ReadFile(s.tokensFile)
		if err != nil {
			return nil, fmt.Errorf("--api-tokens-file: %w", err)
		}
		if tokens, err = api.ParseTokenFile(data); err != nil {
			return nil, fmt.Errorf("--api-tokens-file %s: %w", s.tokensFile, err)
		}
	}
	if list := os.Getenv("RECUR_API_TOKENS"); list != "" {
		fromEnv, err := api.ParseTokenList(list)
		if err == nil {
			tokens, err = tokens.Merge(fromEnv)
		}
		if err != nil {
			return nil, fmt.Errorf("RECUR_API_TOKENS: %w", err)
		}
	}
	var auth api.Authenticators
	if tokens.Len() > 0 {
		auth = append(auth, tokens)
		log.Info("REST API accepts static bearer tokens", "tokens", tokens.Len())
	}
	if s.oidcIssuer != "" {
		o, err := api.NewOIDC(api.OIDCConfig{Issuer: s.oidcIssuer, Audience: s.oidcAudience, SubscriptionsClaim: s.oidcClaim})
		if err != nil {
			return nil, fmt.Errorf("--oidc-issuer: %w", err)
		}
		refreshCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err = o.Refresh(refreshCtx)
		cancel()
		if err != nil {
			// The issuer may be down for a while; tokens are checked once
			// it answers, and meanwhile JWTs get 503.
			log.Warn("OIDC issuer not reachable at start; JWTs are checked once it is", "issuer", s.oidcIssuer, "error", err)
		}
		auth = append(auth, o)
		log.Info("REST API accepts JWTs", "issuer", s.oidcIssuer, "audience", s.oidcAudience, "subscriptionsClaim", s.oidcClaim)
	} else if s.oidcAudience != "" {
		return nil, errors.New("--oidc-audience needs --oidc-issuer")
	}
	switch len(auth) {
	case 0:
		return nil, nil
	case 1:
		return auth[0], nil
	}
	return auth, nil
}

// loopbackOnly reports whether addr can be reached from this machine
// only: a loopback IP, or a host name all of whose addresses are loopback.
// An empty host (all interfaces) or a name that does not resolve is not.
func loopbackOnly(ctx context.Context, addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil || len(ips) == 0 {
		return false
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return false
		}
	}
	return true
}
