// Package contract checks recur's REST API against Azure Scheduler's
// 2016-03-01 Swagger contract (api/openapi): every response the tests
// receive is validated against the schema the contract gives for its
// operation and status, and the run fails when an operation of the
// contract is neither covered by a conforming response nor listed as
// pending. It has no non-test code.
package contract
