// Package invariant holds the one assertion helper every room may import.
//
// Assertions catch programmer errors and stay on in production: a broken
// invariant means the process state can no longer be trusted, so it panics.
// Operating errors (bad client bytes, disk full) are returned, never asserted.
// Expensive checks are gated on Enabled, which is true only in builds with
// -tags invariants.
package invariant

// Assert panics with "invariant: "+what when ok is false. what must be a
// constant string: arguments are evaluated even when the assertion holds.
func Assert(ok bool, what string) {
	if !ok {
		panic("invariant: " + what)
	}
}
