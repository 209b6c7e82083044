package jobs

// ServiceBusMessage is a serviceBusQueue or serviceBusTopic action, in the
// swagger's shape. SasKey is a secret: never echoed.
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

func (m *ServiceBusMessage) validate(path string, topic bool) error {
	return &Error{Code: CodeNotSupported, Target: path, Message: "service bus actions are not supported yet"}
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
