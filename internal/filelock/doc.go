// Package filelock serialises, across processes, the installs that tests
// make into the user's cache (Azurite, the temporal CLI): the test binaries
// of several packages run at once, and two installs into one directory
// would race.
package filelock
