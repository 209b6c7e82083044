package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
)

// DefaultStorageQueueEndpoint is Azure's storage queue service.
const DefaultStorageQueueEndpoint = "https://{account}.queue.core.windows.net"

// HeaderClientRequestID is the header Azure Storage keeps in its logs: it
// carries the occurrence ID, so that a message can be traced to its run.
const HeaderClientRequestID = "x-ms-client-request-id"

// StorageQueue puts a storageQueue action's message on its queue, with the
// action's SAS token as authorization. The message goes as given, not
// base64-encoded, as Azure Scheduler put it. Success is the insertion
// result (message ID, insertion and expiration times); failures are
// retryable as the HTTP activity's are: 408, 429, 5xx and no answer.
// Neither errors nor history ever carry the SAS token.
func (a *Activities) StorageQueue(ctx context.Context, in jobs.ActionInput) (_ jobs.HTTPResponse, err error) {
	ctx, logger, end := a.begin(ctx, in.Key, in.OccurrenceID, in.ActionName)
	defer func() { end(err) }()
	out := jobs.HTTPResponse{Attempt: int(activity.GetInfo(ctx).Attempt)}
	m := in.Spec.QueueMessage
	if m == nil {
		return out, temporal.NewNonRetryableApplicationError("no queue message to put", ErrTypeInvalidAction, nil, out)
	}
	ctx, cancel, _ := withAttemptTimeout(ctx, in.Timeout)
	defer cancel()

	queueURL := a.queueURL(m)
	sas := strings.TrimPrefix(m.SasToken, "?")
	queue, err := azqueue.NewQueueClientWithNoCredential(queueURL+"?"+sas, a.queueClientOptions())
	if err != nil {
		return out, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("queue client for %s: %s", queueURL, scrubSAS(err.Error(), sas)), ErrTypeInvalidAction, nil, out)
	}
	var raw *http.Response
	ctx = policy.WithCaptureResponse(ctx, &raw)
	ctx = policy.WithHTTPHeader(ctx, http.Header{HeaderClientRequestID: {in.OccurrenceID}})
	resp, err := queue.EnqueueMessage(ctx, m.Message, nil)
	if err != nil {
		return out, queueError(out, queueURL, sas, err)
	}
	if raw != nil {
		out.StatusCode, out.Status = raw.StatusCode, raw.Status
	}
	out.Body = insertionResult(resp)
	logger.Info("storage queue action", "queue", queueURL, "status", out.StatusCode)
	return out, nil
}

// queueURL returns the URL of m's queue, without any query.
func (a *Activities) queueURL(m *jobs.StorageQueueMessage) string {
	endpoint := a.StorageQueueEndpoint
	if endpoint == "" {
		endpoint = DefaultStorageQueueEndpoint
	}
	endpoint = strings.ReplaceAll(endpoint, "{account}", m.StorageAccount)
	return strings.TrimSuffix(endpoint, "/") + "/" + m.QueueName
}

// queueClientOptions sends through a's HTTP client (never the SDK's own,
// which the egress policy does not guard) and lets Temporal, not the SDK,
// retry: the job's retry policy decides.
func (a *Activities) queueClientOptions() *azqueue.ClientOptions {
	o := &azqueue.ClientOptions{}
	o.Retry.MaxRetries = -1 // one try
	o.Telemetry.Disabled = true
	o.Transport = a.client()
	return o
}

// insertionResult is the history's record of a message put on a queue:
// what identifies it, never its pop receipt.
func insertionResult(resp azqueue.EnqueueMessagesResponse) string {
	var r struct {
		MessageID      string     `json:"messageId,omitempty"`
		InsertionTime  *time.Time `json:"insertionTime,omitempty"`
		ExpirationTime *time.Time `json:"expirationTime,omitempty"`
		RequestID      string     `json:"requestId,omitempty"`
	}
	if len(resp.Messages) > 0 && resp.Messages[0] != nil {
		msg := resp.Messages[0]
		if msg.MessageID != nil {
			r.MessageID = *msg.MessageID
		}
		r.InsertionTime, r.ExpirationTime = msg.InsertionTime, msg.ExpirationTime
	}
	if resp.RequestID != nil {
		r.RequestID = *resp.RequestID
	}
	data, _ := json.Marshal(r)
	return string(data)
}

// queueError turns a failed put into the attempt's failure: an answer's
// status and error code, or a transport error, with the SAS token
// scrubbed from whatever the SDK said.
func queueError(out jobs.HTTPResponse, queueURL, sas string, err error) error {
	if rErr := refusal("put message on "+queueURL, err, out, []string{sas}); rErr != nil {
		return rErr
	}
	var respErr *azcore.ResponseError
	if !errors.As(err, &respErr) {
		msg := fmt.Sprintf("put message on %s: %s", queueURL, scrubSAS(err.Error(), sas))
		return temporal.NewApplicationError(msg, ErrTypeTransport, out)
	}
	out.StatusCode = respErr.StatusCode
	out.Status = fmt.Sprintf("%d %s", respErr.StatusCode, http.StatusText(respErr.StatusCode))
	if respErr.RawResponse != nil && respErr.RawResponse.Status != "" {
		out.Status = respErr.RawResponse.Status
	}
	out.Status = scrubSAS(out.Status, sas)
	out.Body = scrubSAS(respErr.ErrorCode, sas)
	msg := fmt.Sprintf("put message on %s: %s", queueURL, out.Status)
	if respErr.StatusCode == http.StatusForbidden {
		// The token is taken as given at PUT: this is where a bad one shows.
		msg += " (the queue service refused the sasToken: not a shared access signature, expired, revoked, " +
			"for another queue or account, or without the add permission)"
	}
	if retryableStatus(respErr.StatusCode) {
		return temporal.NewApplicationError(msg, ErrTypeHTTPStatus, out)
	}
	return temporal.NewNonRetryableApplicationError(msg, ErrTypeHTTPStatus, nil, out)
}

var (
	// queryPattern is a URL's query, up to what ends the URL in a message.
	queryPattern = regexp.MustCompile(`\?[^\s"'<>]*`)
	// sigPattern is a SAS signature outside a URL.
	sigPattern = regexp.MustCompile(`(?i)\bsig=[^&\s"'<>]*`)
)

// scrubSAS removes the SAS token, every URL query and every signature from
// s, a message of the SDK or of the transport.
func scrubSAS(s, sas string) string {
	s = redactSecrets(s, []string{sas})
	s = queryPattern.ReplaceAllString(s, "")
	return sigPattern.ReplaceAllString(s, redacted)
}
