package jobs

import (
	"fmt"
	"maps"
	"mime"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

// ServiceBusMessage is a serviceBusQueue or serviceBusTopic action, in the
// swagger's shape: QueueName is a queue action's, TopicPath a topic
// action's. SasKey is a secret: never echoed.
//
// Validation spells the keys of BrokeredMessageProperties as the swagger
// does (camelCase: "messageId"); the send uses them PascalCase
// ("MessageId"), as Service Bus's BrokerProperties header does.
// TransportType is kept but means nothing: recur sends over REST.
type ServiceBusMessage struct {
	Authentication            *ServiceBusAuthentication `json:"authentication,omitempty"`
	BrokeredMessageProperties map[string]any            `json:"brokeredMessageProperties,omitempty"`
	CustomMessageProperties   map[string]string         `json:"customMessageProperties,omitempty"`
	Message                   string                    `json:"message,omitempty"`
	Namespace                 string                    `json:"namespace,omitempty"`
	TransportType             string                    `json:"transportType,omitempty"`
	QueueName                 string                    `json:"queueName,omitempty"`
	TopicPath                 string                    `json:"topicPath,omitempty"`
}

// ServiceBusAuthentication is the SAS key that signs Service Bus sends.
type ServiceBusAuthentication struct {
	SasKey     string `json:"sasKey,omitempty"`
	SasKeyName string `json:"sasKeyName,omitempty"`
	Type       string `json:"type,omitempty"`
}

// ServiceBusSharedAccessKey is the one Service Bus authentication type,
// and the default.
const ServiceBusSharedAccessKey = "SharedAccessKey"

// Limits of Service Bus messages (Standard tier).
const (
	// MaxServiceBusMessage is the largest message body, in bytes.
	MaxServiceBusMessage = 256 << 10
	// MaxServiceBusPropertyBytes bounds the custom properties, names and
	// values together: Service Bus's limit on a message's header.
	MaxServiceBusPropertyBytes = 64 << 10
)

// Brokered message properties, as the swagger spells them.
const (
	BrokeredContentType             = "contentType"
	BrokeredForcePersistence        = "forcePersistence"
	BrokeredMessageID               = "messageId"
	BrokeredPartitionKey            = "partitionKey"
	BrokeredScheduledEnqueueTimeUtc = "scheduledEnqueueTimeUtc"
	BrokeredSessionID               = "sessionId"
	BrokeredTimeToLive              = "timeToLive"
)

// brokeredNames are the properties Service Bus's BrokerProperties
// accepts on a send, sorted.
var brokeredNames = []string{
	BrokeredContentType, "correlationId", BrokeredForcePersistence, "label", BrokeredMessageID,
	BrokeredPartitionKey, "replyTo", "replyToSessionId", BrokeredScheduledEnqueueTimeUtc,
	BrokeredSessionID, BrokeredTimeToLive, "to", "viaPartitionKey",
}

// brokeredLimits are the most characters a brokered property may have,
// where Service Bus sets a limit.
var brokeredLimits = map[string]int{
	BrokeredMessageID: 128, BrokeredPartitionKey: 128, "replyToSessionId": 128,
	BrokeredSessionID: 128, "viaPartitionKey": 128,
}

var (
	serviceBusAuthTypes      = []string{"NotSpecified", ServiceBusSharedAccessKey}
	serviceBusTransportTypes = []string{"NotSpecified", "NetMessaging", "AMQP"}

	// Azure's naming rules: namespaces 6 to 50 letters, digits and
	// hyphens, from a letter to a letter or digit; entity paths up to 260
	// letters, digits, '.', '-', '_' and '/'.
	namespacePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{4,48}[A-Za-z0-9]$`)
	entityPattern    = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$`)
)

// reservedHeaders are headers the send itself sets or HTTP owns: no
// custom property may take their names.
var reservedHeaders = []string{
	"Authorization", "BrokerProperties", "Content-Type", "Content-Length", "Content-Encoding",
	"Host", "Connection", "Keep-Alive", "Transfer-Encoding", "TE", "Trailer", "Upgrade", "Expect",
	"Proxy-Authorization", "Proxy-Connection", "User-Agent", "Accept-Encoding", "x-ms-retrypolicy",
}

func (m *ServiceBusMessage) validate(path string, topic bool) error {
	kind := ActionServiceBusQueue
	if topic {
		kind = ActionServiceBusTopic
	}
	if m == nil {
		return invalidf(path, "%s is required for a %s action", path, kind)
	}
	entityField, entity, other := "queueName", &m.QueueName, &m.TopicPath
	if topic {
		entityField, entity, other = "topicPath", &m.TopicPath, &m.QueueName
	}
	if !namespacePattern.MatchString(m.Namespace) {
		return invalidf(path+".namespace", "namespace %q must be 6 to 50 letters, digits or hyphens, starting with a letter and ending with a letter or digit", m.Namespace)
	}
	switch {
	case *entity == "":
		return invalidf(path+"."+entityField, "%s is required for a %s action", entityField, kind)
	case len(*entity) > 260 || !entityPattern.MatchString(*entity) || slices.ContainsFunc(strings.Split(*entity, "/"), dots):
		return invalidf(path+"."+entityField, "%s %q must be up to 260 letters, digits, '.', '-', '_' or '/' between names", entityField, *entity)
	}
	*other = "" // the other kind's: never sent
	if err := m.validateAuthentication(path + ".authentication"); err != nil {
		return err
	}
	switch {
	case m.Message == "":
		return invalidf(path+".message", "message is required")
	case len(m.Message) > MaxServiceBusMessage:
		return invalidf(path+".message", "message is %d bytes; at most %d are allowed", len(m.Message), MaxServiceBusMessage)
	}
	if m.TransportType != "" {
		typ, ok := canonical(m.TransportType, serviceBusTransportTypes)
		if !ok {
			return invalidf(path+".transportType", "transportType %q is not one of %s", m.TransportType, strings.Join(serviceBusTransportTypes, ", "))
		}
		m.TransportType = typ
	}
	if err := m.validateBrokered(path + ".brokeredMessageProperties"); err != nil {
		return err
	}
	return m.validateCustom(path + ".customMessageProperties")
}

// dots reports whether an entity path segment is "." or "..": they would
// change the URL the send goes to.
func dots(segment string) bool { return segment == "." || segment == ".." }

// validateAuthentication checks the SAS key; no message quotes it.
func (m *ServiceBusMessage) validateAuthentication(path string) error {
	a := m.Authentication
	if a == nil {
		return invalidf(path, "authentication (sasKeyName and sasKey) is required")
	}
	// NotSpecified is the swagger's zero value: the default, like absent.
	if _, ok := canonical(a.Type, serviceBusAuthTypes); a.Type != "" && !ok {
		return invalidf(path+".type", "authentication type %q is not %s", a.Type, ServiceBusSharedAccessKey)
	}
	a.Type = ServiceBusSharedAccessKey
	// Beyond being there, the credentials are Service Bus's to judge, as
	// Azure Scheduler let them be: a client's stored definitions load
	// unchanged, and a send with a key the namespace refuses fails its run.
	switch {
	case a.SasKeyName == "":
		return invalidf(path+".sasKeyName", "sasKeyName is required")
	case a.SasKey == "":
		return invalidf(path+".sasKey", "sasKey is required")
	}
	return nil
}

// validateBrokered checks the brokered message properties and spells
// their names as the swagger does. Names are visited sorted: the first
// error is the same on every run, as workflows need.
func (m *ServiceBusMessage) validateBrokered(path string) error {
	if len(m.BrokeredMessageProperties) == 0 {
		m.BrokeredMessageProperties = nil
		return nil
	}
	props := make(map[string]any, len(m.BrokeredMessageProperties))
	for _, given := range sortedKeys(m.BrokeredMessageProperties) {
		name, ok := canonical(given, brokeredNames)
		if !ok {
			return invalidf(path+"."+given, "brokered message property %q is not one of %s", given, strings.Join(brokeredNames, ", "))
		}
		if _, dup := props[name]; dup {
			return invalidf(path+"."+given, "brokered message property %s is given twice", name)
		}
		value, err := brokeredValue(name, m.BrokeredMessageProperties[given])
		if err != nil {
			return invalidf(path+"."+name, "%s: %v", name, err)
		}
		props[name] = value
	}
	session, hasSession := props[BrokeredSessionID]
	partition, hasPartition := props[BrokeredPartitionKey]
	if hasSession && hasPartition && session != partition {
		return invalidf(path+"."+BrokeredPartitionKey, "partitionKey must equal sessionId when both are set")
	}
	m.BrokeredMessageProperties = props
	return nil
}

// brokeredValue checks the value of the brokered property name and
// returns it normalized: scheduledEnqueueTimeUtc in RFC 3339 UTC.
func brokeredValue(name string, v any) (any, error) {
	switch name {
	case BrokeredForcePersistence:
		if _, ok := v.(bool); !ok {
			return nil, fmt.Errorf("must be true or false, not %v", v)
		}
		return v, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("must be a string, not %v", v)
	}
	switch name {
	case BrokeredContentType:
		// A pure function of s: deterministic in workflows too, though
		// it builds a map.
		//workflowcheck:ignore
		if _, _, err := mime.ParseMediaType(s); err != nil {
			return nil, fmt.Errorf("%q is not a media type", s)
		}
	case BrokeredMessageID:
		if s == "" {
			return nil, fmt.Errorf("must not be empty")
		}
	case BrokeredScheduledEnqueueTimeUtc:
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil, fmt.Errorf("%q is not an RFC 3339 date-time", s)
		}
		return t.UTC().Format(time.RFC3339), nil
	case BrokeredTimeToLive:
		d, err := ParseInterval(s)
		if err != nil {
			return nil, err
		}
		if d < time.Second {
			return nil, fmt.Errorf("%q is shorter than a second", s)
		}
	}
	if limit := brokeredLimits[name]; limit > 0 && len([]rune(s)) > limit {
		return nil, fmt.Errorf("is longer than %d characters", limit)
	}
	return s, nil
}

// validateCustom checks the custom properties: each becomes an HTTP
// header of its name. Names are visited sorted (see validateBrokered).
func (m *ServiceBusMessage) validateCustom(path string) error {
	if len(m.CustomMessageProperties) == 0 {
		m.CustomMessageProperties = nil
		return nil
	}
	size := 0
	for _, name := range sortedKeys(m.CustomMessageProperties) {
		if !httpguts.ValidHeaderFieldName(name) {
			return invalidf(path+"."+name, "custom property name %q must be an HTTP header name (letters, digits, and !#$%%&'*+-.^_`|~)", name)
		}
		if !httpguts.ValidHeaderFieldValue(m.CustomMessageProperties[name]) {
			return invalidf(path+"."+name, "the value of custom property %s must not hold control characters such as CR, LF or NUL", name)
		}
		if _, reserved := canonical(name, reservedHeaders); reserved {
			return invalidf(path+"."+name, "custom property name %q is a header the send sets itself", name)
		}
		size += len(name) + len(m.CustomMessageProperties[name])
	}
	if size > MaxServiceBusPropertyBytes {
		return invalidf(path, "custom properties take %d bytes; at most %d are allowed", size, MaxServiceBusPropertyBytes)
	}
	return nil
}

// sortedKeys returns the keys of m sorted: an order workflows may use.
func sortedKeys[V any](m map[string]V) []string {
	//workflowcheck:ignore
	return slices.Sorted(maps.Keys(m))
}

// redacted returns m without its SAS key.
func (m *ServiceBusMessage) redacted() *ServiceBusMessage {
	if m == nil || m.Authentication == nil {
		return m
	}
	c := *m
	auth := *m.Authentication
	auth.SasKey = ""
	c.Authentication = &auth
	return &c
}

// timeToLive returns the timeToLive brokered property of a validated
// message, "" when it has none.
func (m *ServiceBusMessage) timeToLive() string {
	if m == nil {
		return ""
	}
	ttl, _ := m.BrokeredMessageProperties[BrokeredTimeToLive].(string)
	return ttl
}
