// Package servicebusfake is a fake Azure Service Bus for tests: an HTTP
// server implementing the REST "Send Message" operation
// (https://learn.microsoft.com/rest/api/servicebus/send-message-to-queue)
// with SAS authentication
// (https://learn.microsoft.com/azure/service-bus-messaging/service-bus-sas).
//
// It checks what the real service is documented to check and records what
// arrives; it was written from the documentation, not checked against the
// real service. Its endpoint has the form Activities.ServiceBusEndpoint
// takes: http://127.0.0.1:port/{namespace}.
package servicebusfake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// MaxMessage is the largest body the fake takes, Service Bus Standard's.
const MaxMessage = 256 << 10

// Message is a message the fake took.
type Message struct {
	Namespace, Entity string // as the URL spelled them
	Body              string
	ContentType       string
	// BrokerProperties is the BrokerProperties header, decoded.
	BrokerProperties map[string]any
	// Properties are the custom properties: every other header, by its
	// canonical name, JSON strings unquoted.
	Properties map[string]string
}

// Server is a fake Service Bus. Its zero value is not usable: call Start.
type Server struct {
	*httptest.Server
	// DuplicateDetection drops a message whose MessageId an entity already
	// took, as an entity with duplicate detection does; it still answers 201.
	DuplicateDetection bool
	// EchoToken quotes the Authorization header in 401 answers, as a
	// careless server might: tests check that it never reaches history.
	EchoToken bool

	mu       sync.Mutex
	keys     map[string]string // SAS policy name -> key
	entities map[string]bool   // lower(namespace + "/" + entity path)
	messages []Message
	tokens   []string // every Authorization header, in order
	failures []int    // statuses to answer authenticated sends with, first first
}

// standardHeaders are the headers that are not custom properties.
var standardHeaders = []string{
	"Authorization", "Brokerproperties", "Content-Type", "Content-Length", "Host", "User-Agent",
	"Accept-Encoding", "Connection", "X-Ms-Retrypolicy", "X-Ms-Client-Request-Id", "Expect",
}

// Start starts a fake with no entities and no keys, stopped when t ends.
func Start(t testing.TB) *Server {
	s := &Server{keys: map[string]string{}, entities: map[string]bool{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Endpoint is the fake's URL with "{namespace}" for the namespace.
func (s *Server) Endpoint() string { return s.URL + "/{namespace}" }

// AddKey makes the fake accept tokens signed with key under keyName.
func (s *Server) AddKey(keyName, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[keyName] = key
}

// AddEntity creates a queue or topic at path in namespace.
func (s *Server) AddEntity(namespace, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entities[strings.ToLower(namespace+"/"+path)] = true
}

// FailNext makes the next authenticated sends answer these statuses, one
// each, instead of taking the message.
func (s *Server) FailNext(statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, statuses...)
}

// Messages returns the messages taken so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.messages)
}

// Authorizations returns the Authorization headers of every request so
// far, so that tests can check a token's secrets went nowhere else.
func (s *Server) Authorizations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tokens)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	namespace, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	entity, ok := strings.CutSuffix(rest, "/messages")
	if r.Method != http.MethodPost || !ok || namespace == "" || entity == "" {
		fail(w, http.StatusNotFound, "NotFound", "no such operation: "+r.Method+" "+r.URL.Path)
		return
	}
	s.mu.Lock()
	s.tokens = append(s.tokens, r.Header.Get("Authorization"))
	s.mu.Unlock()
	entityURL := "http://" + r.Host + "/" + namespace + "/" + entity
	if detail := s.authorize(r.Header.Get("Authorization"), entityURL); detail != "" {
		if s.EchoToken {
			detail += " (got " + r.Header.Get("Authorization") + ")"
		}
		fail(w, http.StatusUnauthorized, "401", detail)
		return
	}
	if !s.exists(namespace, entity) {
		fail(w, http.StatusNotFound, "404", "MessagingEntityNotFound: "+namespace+"/"+entity)
		return
	}
	if status, failing := s.nextFailure(); failing {
		fail(w, status, strconv.Itoa(status), "injected failure")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxMessage+1))
	if err != nil || len(body) > MaxMessage {
		fail(w, http.StatusForbidden, "403", "the message is larger than 256 KiB or unreadable")
		return
	}
	m := Message{Namespace: namespace, Entity: entity, Body: string(body),
		ContentType: r.Header.Get("Content-Type"), Properties: map[string]string{}}
	if broker := r.Header.Get("BrokerProperties"); broker != "" {
		if err := json.Unmarshal([]byte(broker), &m.BrokerProperties); err != nil {
			fail(w, http.StatusBadRequest, "400", "BrokerProperties is not a JSON object: "+err.Error())
			return
		}
	}
	for name, values := range r.Header {
		if slices.Contains(standardHeaders, name) {
			continue
		}
		var s string
		if err := json.Unmarshal([]byte(values[0]), &s); err != nil {
			s = values[0] // numbers, booleans: as they came
		}
		m.Properties[name] = s
	}
	s.take(m)
	w.WriteHeader(http.StatusCreated)
}

// authorize checks a SharedAccessSignature token for the entity at
// entityURL and returns what is wrong with it, "" when nothing is. The
// signature is recomputed over sr and se exactly as sent.
func (s *Server) authorize(header, entityURL string) string {
	token, ok := strings.CutPrefix(header, "SharedAccessSignature ")
	if !ok {
		return "MissingToken: the Authorization header is not a SharedAccessSignature"
	}
	fields := map[string]string{}
	for _, part := range strings.Split(token, "&") {
		k, v, _ := strings.Cut(part, "=")
		fields[k] = v
	}
	sr, sig, se, skn := fields["sr"], fields["sig"], fields["se"], fields["skn"]
	if sr == "" || sig == "" || se == "" || skn == "" {
		return "InvalidToken: sr, sig, se and skn are all required"
	}
	expiry, err := strconv.ParseInt(se, 10, 64)
	if err != nil {
		return "InvalidToken: se is not a number"
	}
	if time.Now().Unix() >= expiry {
		return "ExpiredToken: the token expired at " + time.Unix(expiry, 0).UTC().Format(time.RFC3339)
	}
	s.mu.Lock()
	key, known := s.keys[skn]
	s.mu.Unlock()
	if !known {
		return "UnknownKey: no policy named " + skn
	}
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(sr + "\n" + se))
	got, err := url.QueryUnescape(sig)
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if err != nil || !hmac.Equal([]byte(got), []byte(want)) {
		return "InvalidSignature: the token has an invalid signature"
	}
	// The token's resource must be the entity or one of its parents.
	resource, err := url.QueryUnescape(sr)
	resource = strings.TrimSuffix(strings.ToLower(resource), "/")
	target := strings.ToLower(entityURL)
	if err != nil || (target != resource && !strings.HasPrefix(target, resource+"/")) {
		return fmt.Sprintf("InvalidAudience: the token is for %s, not %s", resource, target)
	}
	return ""
}

func (s *Server) exists(namespace, entity string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entities[strings.ToLower(namespace+"/"+entity)]
}

func (s *Server) nextFailure() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failures) == 0 {
		return 0, false
	}
	status := s.failures[0]
	s.failures = s.failures[1:]
	return status, true
}

// take records m unless duplicate detection drops it.
func (s *Server) take(m Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.DuplicateDetection {
		id, _ := m.BrokerProperties["MessageId"].(string)
		for _, old := range s.messages {
			if id != "" && old.BrokerProperties["MessageId"] == id && strings.EqualFold(old.Namespace+"/"+old.Entity, m.Namespace+"/"+m.Entity) {
				return
			}
		}
	}
	s.messages = append(s.messages, m)
}

// fail answers status with a Service Bus error body.
func fail(w http.ResponseWriter, status int, code, detail string) {
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, "<Error><Code>%s</Code><Detail>%s</Detail></Error>", code, html.EscapeString(detail))
}
