package main

import "testing"

// TestRunManyAndReplay drives the command's two modes on a few seeds: a
// clean run exits 0, and replaying one of its seeds does too.
func TestRunManyAndReplay(t *testing.T) {
	if code := runMany(1, 5, false); code != 0 {
		t.Fatalf("runMany exit %d", code)
	}
	if code := replay(3); code != 0 {
		t.Fatalf("replay exit %d", code)
	}
}
