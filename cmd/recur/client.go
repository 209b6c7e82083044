package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/recurhq/recur/api"
)

// The client commands, recur jobs and recur collections, talk to a recur
// REST API as any Azure Scheduler client would. This file holds what they
// share: the resource address, the one HTTP helper, list paging and the
// progress line.

const (
	defaultServer = "http://" + defaultHTTPAddr
	// clientTimeout bounds one request; the API itself gives up after 30 s.
	clientTimeout = 2 * time.Minute
	// maxErrorBody is how much of an answer that is not ARM's error
	// envelope an error message quotes.
	maxErrorBody = 200
)

// part is one part of a resource's address, with its flag and environment
// variable.
type part struct{ flag, env, noun string }

var (
	partSubscription  = part{"subscription", "RECUR_SUBSCRIPTION", "subscription"}
	partResourceGroup = part{"resource-group", "RECUR_RESOURCE_GROUP", "resource group"}
	partCollection    = part{"collection", "RECUR_COLLECTION", "job collection"}
	partJob           = part{"job", "RECUR_JOB", "job"}
)

// address names a subscription, a resource group, a job collection and a
// job, as far as a command needs them.
type address struct {
	subscription, resourceGroup, collection, job string
	arg                                          string // a verb's own argument (verb.arg)
}

// field returns the field of a that holds p.
func (a *address) field(p part) *string {
	switch p {
	case partSubscription:
		return &a.subscription
	case partResourceGroup:
		return &a.resourceGroup
	case partCollection:
		return &a.collection
	}
	return &a.job
}

// require returns an error naming the flag and the variable of the first
// of parts that a lacks. The last part may also be given as an argument
// when named is set.
func (a *address) require(parts []part, named bool) error {
	for i, p := range parts {
		if *a.field(p) != "" {
			continue
		}
		if named && i == len(parts)-1 {
			return fmt.Errorf("no %s given: name it as an argument, or use --%s or %s", p.noun, p.flag, p.env)
		}
		return fmt.Errorf("no %s given: use --%s or %s", p.noun, p.flag, p.env)
	}
	return nil
}

// collections is the path of the collections of a's resource group, or of
// its subscription when a has no resource group.
func (a address) collections() string {
	p := "/subscriptions/" + url.PathEscape(a.subscription)
	if a.resourceGroup != "" {
		p += "/resourceGroups/" + url.PathEscape(a.resourceGroup)
	}
	return p + "/providers/Microsoft.Scheduler/jobCollections"
}

func (a address) collectionPath() string {
	return a.collections() + "/" + url.PathEscape(a.collection)
}

func (a address) jobsPath() string { return a.collectionPath() + "/jobs" }

func (a address) jobPath() string { return a.jobsPath() + "/" + url.PathEscape(a.job) }

// rerunPath is the path that runs the job's failure a.arg again.
func (a address) rerunPath() string {
	return a.jobPath() + "/failures/" + url.PathEscape(a.arg) + "/run"
}

// connection is a client command's --server and --token.
type connection struct{ server, token string }

func (c *connection) register(fs *flag.FlagSet) {
	fs.StringVar(&c.server, "server", env("RECUR_SERVER", defaultServer), "`URL` of the recur REST API (RECUR_SERVER)")
	// No default from RECUR_TOKEN here: usage prints defaults.
	fs.StringVar(&c.token, "token", "", "bearer `token` sent to the API (RECUR_TOKEN, better: other users may see command lines)")
}

// resolve takes RECUR_TOKEN when no --token was given.
func (c *connection) resolve() {
	if c.token == "" {
		c.token = env("RECUR_TOKEN", "")
	}
}

// parseServer checks the --server URL.
func parseServer(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSuffix(s, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("--server %q: want the API's URL, such as %s", s, defaultServer)
	}
	return u, nil
}

// armError is an error answer of the API, in ARM's envelope when it had
// one.
type armError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Target is the JSON path or parameter at fault, when the answer
	// names one.
	Target string `json:"target,omitempty"`
}

func (e *armError) Error() string {
	if e.Target != "" {
		return e.Code + " (" + e.Target + "): " + e.Message
	}
	return e.Code + ": " + e.Message
}

// apiClient sends requests to one recur API.
type apiClient struct {
	server *url.URL
	token  string // sent as a bearer token, never printed
	http   *http.Client
	// progress, when not nil, is the terminal lists report their paging
	// to.
	progress io.Writer
}

func newClient(server *url.URL, token string, stderr io.Writer) *apiClient {
	c := &apiClient{server: server, token: token, http: &http.Client{Timeout: clientTimeout}}
	if isTerminal(stderr) {
		c.progress = stderr
	}
	return c
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// do sends one request with api-version and returns the answer's body.
// Answers other than 2xx are *armError.
func (c *apiClient) do(ctx context.Context, method, path string, query url.Values, body []byte) ([]byte, error) {
	q := withVersion(query)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.server.String()+path+"?"+q.Encode(), rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, data, err := c.exchange(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, answerError(resp.Status, data)
	}
	if loc := resp.Header.Get("Location"); resp.StatusCode == http.StatusAccepted && loc != "" {
		return c.await(ctx, loc, resp.Header.Get("Retry-After"))
	}
	return data, nil
}

// await polls the Location of a 202, a long-running operation, until it
// answers otherwise, and returns that answer's body. As with nextLink,
// only the Location's path and query are followed, on --server.
func (c *apiClient) await(ctx context.Context, location, retryAfter string) ([]byte, error) {
	loc, err := url.Parse(location)
	if err != nil {
		return nil, fmt.Errorf("the server answered 202 with a Location that is no URL: %q", location)
	}
	if c.progress != nil {
		fmt.Fprintln(c.progress, "the server runs the operation on; waiting for it (Ctrl-C stops the wait, not the operation)")
	}
	for {
		pause := 5 * time.Second
		if n, err := strconv.Atoi(retryAfter); err == nil && n >= 1 && n <= 60 {
			pause = time.Duration(n) * time.Second
		}
		select {
		case <-ctx.Done():
			return nil, errors.New("interrupted; the operation runs on")
		case <-time.After(pause):
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.server.String()+loc.EscapedPath()+"?"+loc.RawQuery, nil)
		if err != nil {
			return nil, err
		}
		resp, data, err := c.exchange(req)
		switch {
		case err != nil:
			return nil, err
		case resp.StatusCode == http.StatusAccepted:
			retryAfter = resp.Header.Get("Retry-After")
		case resp.StatusCode/100 != 2:
			return nil, answerError(resp.Status, data)
		default:
			return data, nil
		}
	}
}

// exchange sends req with the headers of every request (JSON wanted, the
// token) and reads the whole answer.
func (c *apiClient) exchange(req *http.Request) (*http.Response, []byte, error) {
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, c.transportError(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("read the answer to %s %s: %w", req.Method, req.URL.Path, err)
	}
	return resp, data, nil
}

// withVersion returns a copy of query with api-version.
func withVersion(query url.Values) url.Values {
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	q.Set("api-version", api.APIVersion)
	return q
}

// transportError says that the server could not be reached, naming it
// (without any user info of its URL).
func (c *apiClient) transportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(err, context.Canceled):
		return errors.New("interrupted")
	case ue != nil && ue.Timeout():
		return fmt.Errorf("the recur server at %s did not answer within %s", c.server.Redacted(), clientTimeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot reach the recur server at %s: connection refused; is recur running there? (--server, RECUR_SERVER)",
			c.server.Redacted())
	}
	return fmt.Errorf("cannot reach the recur server at %s: %w", c.server.Redacted(), err)
}

// answerError reads ARM's error envelope, or quotes the start of a body
// that is not one (a proxy's error page, say).
func answerError(status string, body []byte) error {
	var envelope struct {
		Error *armError `json:"error"`
	}
	if json.Unmarshal(body, &envelope) == nil && envelope.Error != nil && envelope.Error.Code != "" {
		return envelope.Error
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > maxErrorBody {
		msg = msg[:maxErrorBody] + "…"
	}
	if msg == "" {
		msg = "the server answered without a body"
	}
	return &armError{Code: status, Message: msg}
}

// list GETs every page of a list, following nextLink, and returns the
// values. Only nextLink's query is followed, on the same path and server:
// the token goes nowhere but --server, whatever host the link names (a
// proxy in front of recur may make the API see another).
func (c *apiClient) list(ctx context.Context, path string, query url.Values, noun string) ([]json.RawMessage, error) {
	p := progress{w: c.progress, noun: noun}
	defer p.clear()
	query = withVersion(query)
	var values []json.RawMessage
	for {
		data, err := c.do(ctx, http.MethodGet, path, query, nil)
		if err != nil {
			return nil, err
		}
		var page struct {
			Value    []json.RawMessage `json:"value"`
			NextLink string            `json:"nextLink"`
		}
		if err := json.Unmarshal(data, &page); err != nil {
			return nil, fmt.Errorf("read the list of %s: %w", noun, err)
		}
		values = append(values, page.Value...)
		if page.NextLink == "" {
			return values, nil
		}
		next, err := url.Parse(page.NextLink)
		if err != nil {
			return nil, fmt.Errorf("read the list of %s: nextLink: %w", noun, err)
		}
		q := withVersion(next.Query())
		if q.Encode() == query.Encode() {
			return nil, fmt.Errorf("read the list of %s: nextLink %s points to the page it came with", noun, page.NextLink)
		}
		query = q
		p.update(len(values))
	}
}

// progress rewrites one line of a terminal with how many items a list has
// fetched so far. With no terminal (w nil) it shows nothing.
type progress struct {
	w     io.Writer
	noun  string
	shown int // width of the line on screen
}

func (p *progress) update(n int) {
	if p.w == nil {
		return
	}
	line := fmt.Sprintf("fetched %d %s…", n, p.noun)
	pad := max(p.shown-len([]rune(line)), 0)
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
	p.shown = len([]rune(line)) + pad
}

// clear blanks the line, so that what follows starts on a clean one.
func (p *progress) clear() {
	if p.w == nil || p.shown == 0 {
		return
	}
	fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.shown))
	p.shown = 0
}

// readBody reads the JSON of a put from the file, or stdin for "-".
func readBody(file string, stdin io.Reader) ([]byte, error) {
	var (
		data []byte
		err  error
	)
	if file == "-" {
		data, err = io.ReadAll(stdin)
		file = "stdin"
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("read %s: not valid JSON", file)
	}
	return data, nil
}
