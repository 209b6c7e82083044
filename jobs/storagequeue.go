package jobs

// StorageQueueMessage is a storageQueue action: put Message on QueueName
// of StorageAccount, authorized by SasToken (a secret: never echoed).
type StorageQueueMessage struct {
	StorageAccount string `json:"storageAccount,omitempty"`
	QueueName      string `json:"queueName,omitempty"`
	SasToken       string `json:"sasToken,omitempty"`
	Message        string `json:"message,omitempty"`
}

func (m *StorageQueueMessage) validate(path string) error {
	return &Error{Code: CodeNotSupported, Target: path, Message: "storage queue actions are not supported yet"}
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
