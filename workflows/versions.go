package workflows

// Every workflow version ID, one per line, oldest first. Each guards a
// change of the commands a running workflow issues (workflow.GetVersion,
// the package doc): its comment says what changed, and a history recorded
// under testdata with the change in effect proves old and new replay
// (TestEveryVersionHasARecordedHistory). It is empty while no release has
// run shapes other than the recorded ones.
const ()
