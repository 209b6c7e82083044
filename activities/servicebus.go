package activities

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
)

// DefaultServiceBusEndpoint is Azure's Service Bus namespace URL, used
// when Activities.ServiceBusEndpoint is empty.
const DefaultServiceBusEndpoint = "https://{namespace}.servicebus.windows.net"

// sasTokenSlack is how long a SAS token outlives the attempt it signs:
// room for clock skew between recur and Service Bus.
const sasTokenSlack = 5 * time.Minute

// maxMessageID is the longest MessageId Service Bus accepts.
const maxMessageID = 128

// ServiceBus sends a serviceBusQueue or serviceBusTopic action's message
// with Service Bus's REST "Send Message" operation
// (https://learn.microsoft.com/rest/api/servicebus/send-message-to-queue):
//
//	POST {endpoint}/{queueName|topicPath}/messages
//	Authorization: SharedAccessSignature sr=…&sig=…&se=…&skn=… (see SASToken)
//	BrokerProperties: {"MessageId":"…",…}
//	Content-Type: the contentType brokered property, else text/plain
//	{custom property}: "JSON-quoted value"
//
// and the message as the body. 201 Created succeeds; any other status
// fails the attempt, retryably for 408, 429 and 5xx, as does no answer.
//
// Unless the job sets messageId, the message's MessageId is the occurrence
// ID (see ServiceBusMessageID): every attempt of an occurrence sends the
// same one, so an entity with duplicate detection keeps one message
// however often at-least-once delivery retries the send.
//
// Neither the key nor the signature is ever logged or returned.
func (a *Activities) ServiceBus(ctx context.Context, in jobs.ActionInput) (_ jobs.HTTPResponse, err error) {
	ctx, logger, end := a.begin(ctx, in.Key, in.OccurrenceID, in.ActionName)
	defer func() { end(err) }()
	out := jobs.HTTPResponse{Attempt: int(activity.GetInfo(ctx).Attempt)}
	m, entity := in.Spec.ServiceBusQueueMessage, ""
	if in.Spec.Type == jobs.ActionServiceBusTopic {
		m = in.Spec.ServiceBusTopicMessage
	}
	if m != nil {
		entity = m.QueueName
		if in.Spec.Type == jobs.ActionServiceBusTopic {
			entity = m.TopicPath
		}
	}
	if m == nil || m.Authentication == nil || entity == "" {
		return out, temporal.NewNonRetryableApplicationError("no Service Bus message to send", ErrTypeInvalidAction, nil, out)
	}
	ctx, cancel, timeout := withAttemptTimeout(ctx, in.Timeout)
	defer cancel()

	entityURL := a.serviceBusEntityURL(m.Namespace, entity)
	req, err := newServiceBusRequest(ctx, entityURL, m, ServiceBusMessageID(in.OccurrenceID, in.ActionName))
	if err != nil {
		return out, temporal.NewNonRetryableApplicationError("build Service Bus request: "+err.Error(), ErrTypeInvalidAction, nil, out)
	}
	token, sig := SASToken(entityURL, m.Authentication.SasKeyName, m.Authentication.SasKey, time.Now().Add(timeout+sasTokenSlack))
	req.Header.Set("Authorization", token)
	secrets := []string{m.Authentication.SasKey, token, sig, url.QueryEscape(sig)}

	resp, err := a.client().Do(req)
	if rErr := refusal("POST "+req.URL.String(), err, out, secrets); rErr != nil {
		return out, rErr
	}
	if err != nil {
		err = withoutURL(err)
		return out, temporal.NewApplicationError(
			redactSecrets(fmt.Sprintf("POST %s: %v", req.URL, err), secrets), ErrTypeTransport, out)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, jobs.MaxResponseBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	out.StatusCode, out.Status, out.Body = resp.StatusCode, clip(redactSecrets(resp.Status, secrets)), redactSecrets(string(body), secrets)
	logger.Info("service bus action", "entity", entityURL, "status", resp.StatusCode)
	if resp.StatusCode == http.StatusCreated {
		return out, nil
	}
	msg := fmt.Sprintf("POST %s: %s", req.URL, out.Status)
	if retryableStatus(resp.StatusCode) {
		return out, temporal.NewApplicationError(msg, ErrTypeHTTPStatus, out)
	}
	return out, temporal.NewNonRetryableApplicationError(msg, ErrTypeHTTPStatus, nil, out)
}

// serviceBusEntityURL is the URL of a queue or topic: the endpoint with
// the namespace in it, then the entity's path (validated: URL-safe).
func (a *Activities) serviceBusEntityURL(namespace, entity string) string {
	endpoint := a.ServiceBusEndpoint
	if endpoint == "" {
		endpoint = DefaultServiceBusEndpoint
	}
	return strings.TrimRight(strings.ReplaceAll(endpoint, "{namespace}", namespace), "/") + "/" + entity
}

// newServiceBusRequest builds the Send Message request of m to the entity
// at entityURL, without its Authorization.
func newServiceBusRequest(ctx context.Context, entityURL string, m *jobs.ServiceBusMessage, messageID string) (*http.Request, error) {
	broker, contentType, err := brokerProperties(m.BrokeredMessageProperties, messageID)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, entityURL+"/messages", strings.NewReader(m.Message))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("BrokerProperties", broker)
	for name, value := range m.CustomMessageProperties {
		// Assigned, not Set: the property keeps its name's spelling.
		req.Header[name] = []string{jsonString(value)}
	}
	return req, nil
}

// brokerProperties returns the BrokerProperties header of the brokered
// properties props (validated: swagger names, normalized values) and the
// message's content type. Names are PascalCase; TimeToLive is in seconds
// and ScheduledEnqueueTimeUtc in RFC 1123 (HTTP date) form, as Service
// Bus's "Message headers and properties" reference shows them.
// ContentType is the Content-Type header, not a broker property.
func brokerProperties(props map[string]any, messageID string) (header, contentType string, err error) {
	out := map[string]any{"MessageId": messageID}
	contentType = "text/plain"
	for name, v := range props {
		switch name {
		case jobs.BrokeredContentType:
			contentType, _ = v.(string)
			continue
		case jobs.BrokeredTimeToLive:
			s, _ := v.(string)
			d, err := jobs.ParseInterval(s)
			if err != nil {
				return "", "", fmt.Errorf("timeToLive: %w", err)
			}
			v = d.Seconds()
		case jobs.BrokeredScheduledEnqueueTimeUtc:
			s, _ := v.(string)
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return "", "", fmt.Errorf("scheduledEnqueueTimeUtc: %w", err)
			}
			v = t.UTC().Format(http.TimeFormat)
		}
		out[strings.ToUpper(name[:1])+name[1:]] = v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return "", "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), contentType, nil
}

// jsonString is s as a JSON string, the form Service Bus reads string
// custom properties in ("Priority: \"High\""). DEL, which JSON leaves as
// it is, is escaped too: it may not appear in a header.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.ReplaceAll(strings.TrimSuffix(b.String(), "\n"), "\x7f", `\u007f`)
}

// ServiceBusMessageID is the MessageId a Service Bus action's message
// gets unless the job sets one: the occurrence ID, with "/errorAction"
// for the error action (so that it is never taken for a duplicate of the
// main action's), or when that is longer than the 128 characters Service
// Bus allows, "sha256:" and the hex SHA-256 of it.
func ServiceBusMessageID(occurrenceID, actionName string) string {
	id := occurrenceID
	if actionName == jobs.ErrorAction {
		id += "/errorAction"
	}
	if len(id) > maxMessageID {
		sum := sha256.Sum256([]byte(id))
		id = "sha256:" + hex.EncodeToString(sum[:])
	}
	return id
}

// SASToken returns the Authorization header value that signs requests to
// resourceURI with the SAS key named keyName until expiry, and the
// signature alone (so that callers can keep it out of what they record).
// It is Microsoft's documented algorithm
// (https://learn.microsoft.com/azure/service-bus-messaging/service-bus-sas#generate-a-shared-access-signature-token):
//
//	sr  = lower(urlencode(resourceURI))
//	se  = expiry, in seconds since the Unix epoch
//	sig = base64(HMAC-SHA256(key as UTF-8 bytes, sr + "\n" + se))
//	SharedAccessSignature sr={sr}&sig={urlencode(sig)}&se={se}&skn={keyName}
//
// The URI is lower-cased after encoding, as Azure's own SDKs do (for Go,
// azure-amqp-common-go's sas.Signer). The key name is URL-encoded too:
// Azure's names (letters, digits, '.', '-', '_') pass unchanged, and any
// other name a job was given cannot add parameters or break the header.
func SASToken(resourceURI, keyName, key string, expiry time.Time) (token, sig string) {
	sr := strings.ToLower(url.QueryEscape(resourceURI))
	se := strconv.FormatInt(expiry.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(sr + "\n" + se))
	sig = base64.StdEncoding.EncodeToString(mac.Sum(nil))
	return "SharedAccessSignature sr=" + sr + "&sig=" + url.QueryEscape(sig) + "&se=" + se + "&skn=" + url.QueryEscape(keyName), sig
}
