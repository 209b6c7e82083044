package jobs

import (
	"regexp"
	"strings"
)

// StorageQueueMessage is a storageQueue action: put Message on QueueName
// of StorageAccount, authorized by SasToken (a secret: never echoed).
// Message goes on the queue as given, as Azure Scheduler put it: a
// consumer that expects base64 (the default of several Azure SDKs and of
// Functions' queue trigger) needs a message written in base64.
type StorageQueueMessage struct {
	StorageAccount string `json:"storageAccount,omitempty"`
	QueueName      string `json:"queueName,omitempty"`
	SasToken       string `json:"sasToken,omitempty"`
	Message        string `json:"message,omitempty"`
}

// MaxQueueMessage is the largest message a storage queue takes, in bytes.
const MaxQueueMessage = 64 << 10

// Azure's naming rules: an account is 3-24 lowercase letters and digits; a
// queue is 3-63 lowercase letters, digits and single hyphens, beginning
// and ending with a letter or digit.
var (
	storageAccountPattern = regexp.MustCompile(`^[a-z0-9]{3,24}$`)
	queueNamePattern      = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
)

func (m *StorageQueueMessage) validate(path string) error {
	switch {
	case m == nil:
		return invalidf(path, "%s is required for a StorageQueue action", path)
	case !storageAccountPattern.MatchString(m.StorageAccount):
		return invalidf(path+".storageAccount", "storageAccount %q must be 3 to 24 lowercase letters and digits", m.StorageAccount)
	case len(m.QueueName) < 3 || len(m.QueueName) > 63 || !queueNamePattern.MatchString(m.QueueName):
		return invalidf(path+".queueName", "queueName %q must be 3 to 63 lowercase letters, digits and single hyphens, beginning and ending with a letter or digit", m.QueueName)
	case m.Message == "":
		return invalidf(path+".message", "message is required")
	case len(m.Message) > MaxQueueMessage:
		return invalidf(path+".message", "message is %d bytes; at most %d are allowed", len(m.Message), MaxQueueMessage)
	}
	return validateSASToken(path+".sasToken", m.SasToken)
}

// validateSASToken checks that there is a token, without ever quoting
// it: the token is a secret. Whether it is a valid shared access signature
// is the queue service's to say, as it was when Azure Scheduler took any
// string: a client's stored definitions load unchanged, and a token the
// service refuses fails the run with its 403.
func validateSASToken(target, token string) error {
	if strings.TrimPrefix(token, "?") == "" {
		return invalidf(target, "sasToken is required")
	}
	return nil
}

// redacted returns m without its SAS token.
func (m *StorageQueueMessage) redacted() *StorageQueueMessage {
	if m == nil {
		return nil
	}
	c := *m
	c.SasToken = ""
	return &c
}
