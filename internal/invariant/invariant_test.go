package invariant

import "testing"

func TestAssertPanicsWithReason(t *testing.T) {
	Assert(true, "true holds")
	defer func() {
		got := recover()
		if got != "invariant: must fail" {
			t.Fatalf("panic value = %v, want %q", got, "invariant: must fail")
		}
	}()
	Assert(false, "must fail")
	t.Fatal("Assert(false) returned")
}
