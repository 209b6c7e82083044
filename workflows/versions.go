package workflows

// Every workflow version ID, one per line, oldest first. Each guards a
// change of the commands a running workflow issues (workflow.GetVersion,
// the package doc): its comment says what changed, and a history recorded
// under testdata with the change in effect proves old and new replay
// (TestEveryVersionHasARecordedHistory).
const (
	// A job asks its collection to admit a definition by an update from a
	// local activity, where it sent a signal and awaited one back.
	versionAdmitByUpdate = "2026-11-23-admit-by-update"
)
