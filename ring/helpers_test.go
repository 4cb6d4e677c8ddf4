package ring

import (
	"errors"
	"runtime"
	"testing"
	"time"
)

// waitTimeout bounds every wait in the tests: long enough for a loaded CI
// machine, short enough that a lost completion fails fast.
const waitTimeout = 5 * time.Second

// newTestRing locks the test goroutine to its thread (a single-issuer ring
// must be used from its creating thread) and closes the ring at the end.
func newTestRing(t testing.TB, options Options) *Ring {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("io_uring: %v", err)
	}
	runtime.LockOSThread()
	r, err := New(options)
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		runtime.UnlockOSThread()
	})
	return r
}

// probeOrSkip returns the kernel's features.
func probeOrSkip(t testing.TB) Features {
	t.Helper()
	features, err := Probe()
	if err != nil {
		t.Skipf("io_uring probe: %v", err)
	}
	return features
}

// mustSQE returns a fresh SQE or fails.
func mustSQE(t testing.TB, r *Ring) *SQE {
	t.Helper()
	sqe, ok := r.SQE()
	if !ok {
		t.Fatal("SQ full")
	}
	return sqe
}

// waitFor submits and waits until a CQE with userData arrives. CQEs seen on
// the way are kept in others (when not nil), where later calls look first.
func waitFor(t testing.TB, r *Ring, userData uint64, others *[]CQE) CQE {
	t.Helper()
	if others != nil {
		for i, cqe := range *others {
			if cqe.UserData == userData {
				*others = append((*others)[:i], (*others)[i+1:]...)
				return cqe
			}
		}
	}
	deadline := time.Now().Add(waitTimeout)
	var batch [CompletionsPerReapMax]CQE
	for time.Now().Before(deadline) {
		if _, err := r.SubmitAndWait(1, waitTimeout); err != nil && !errors.Is(err, ErrTimeout) {
			t.Fatalf("SubmitAndWait: %v", err)
		}
		count := r.ReapInto(batch[:])
		found := -1
		for i, cqe := range batch[:count] {
			if cqe.UserData == userData && found < 0 {
				found = i
				continue
			}
			if others != nil {
				*others = append(*others, cqe)
			}
		}
		if found >= 0 {
			return batch[found]
		}
	}
	t.Fatalf("no CQE with user_data %#x within %v", userData, waitTimeout)
	return CQE{}
}
