//go:build invariants

package invariant

// Enabled gates expensive checks (walking a pipeline, re-checksumming a
// segment). It is true in builds with -tags invariants.
const Enabled = true
