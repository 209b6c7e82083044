package recurrence

// Error codes carried by ValidationError. They are part of the API's error
// envelope, so they never change once released.
const (
	CodeInvalidJSON      = "InvalidJson"
	CodeInvalidDateTime  = "InvalidDateTime"
	CodeRequired         = "MissingRequiredProperty"
	CodeInvalidValue     = "InvalidValue"
	CodeOutOfRange       = "ValueOutOfRange"
	CodeNotAllowed       = "PropertyNotAllowed"
	CodeUnknownProperty  = "UnknownProperty"
	CodeUnknownTimeZone  = "UnknownTimeZone"
	CodeEndBeforeStart   = "EndTimeBeforeStartTime"
	CodeNeverOccurs      = "RecurrenceNeverOccurs"
	CodeTooManyWeekDays  = "TooManyWeekDays"
	CodeInvalidFrequency = "InvalidFrequency"
)

// ValidationError is a definition that breaks a rule of docs/recurrence.md.
// Path is the JSON path of the offending field relative to the job's
// properties ("recurrence.schedule.minutes[2]"); callers that nest the
// properties deeper prefix it with WithPrefix.
type ValidationError struct {
	Path    string
	Code    string
	Message string
}

func (e *ValidationError) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

// WithPrefix returns a copy of e whose Path starts with prefix
// ("properties" turns "startTime" into "properties.startTime").
func (e *ValidationError) WithPrefix(prefix string) *ValidationError {
	c := *e
	switch {
	case prefix == "":
	case c.Path == "":
		c.Path = prefix
	default:
		c.Path = prefix + "." + c.Path
	}
	return &c
}

func invalid(path, code, message string) *ValidationError {
	return &ValidationError{Path: path, Code: code, Message: message}
}
