package ring

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestClassifySetupError feeds every errno io_uring_setup fails with, under
// each io_uring_disabled setting, to the classifier: unavailability must
// match ErrUnavailable, keep the errno, and name its cause and remedy; other
// errnos pass through unchanged.
func TestClassifySetupError(t *testing.T) {
	cases := []struct {
		name        string
		err         error
		disabled    int
		unavailable bool
		words       []string
	}{
		{"no syscall", unix.ENOSYS, -1, true, []string{"no io_uring", "5.19"}},
		{"sysctl 2", unix.EPERM, 2, true, []string{"io_uring_disabled=2", "sysctl -w kernel.io_uring_disabled=0"}},
		{"sysctl 1", unix.EPERM, 1, true, []string{"io_uring_group", "add the server's user"}},
		{"seccomp", unix.EPERM, 0, true, []string{"seccomp", "io_uring_setup"}},
		{"seccomp, old kernel", unix.EPERM, -1, true, []string{"seccomp"}},
		{"LSM", unix.EACCES, 0, true, []string{"security module"}},
		{"memlock", unix.ENOMEM, -1, true, []string{"RLIMIT_MEMLOCK", "ulimit -l"}},
		{"bad params", unix.EINVAL, 0, false, nil},
		{"fd limit", unix.EMFILE, 0, false, nil},
		{"not an errno", errors.New("other"), 0, false, nil},
	}
	for _, c := range cases {
		got := classifySetupError(c.err, c.disabled)
		if errors.Is(got, ErrUnavailable) != c.unavailable {
			t.Errorf("%s: %v: unavailable = %v, want %v", c.name, got, !c.unavailable, c.unavailable)
			continue
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%s: %v lost the cause %v", c.name, got, c.err)
		}
		for _, word := range c.words {
			if !strings.Contains(got.Error(), word) {
				t.Errorf("%s: %q does not mention %q", c.name, got.Error(), word)
			}
		}
		var detail *UnavailableError
		if c.unavailable && (!errors.As(got, &detail) || detail.Hint == "" || detail.Cause == "") {
			t.Errorf("%s: %v carries no cause and hint", c.name, got)
		}
	}
}

// TestAvailableAgreesWithNew checks Available against reality: where it
// says yes, New works; where it says no, the error is the classified one.
func TestAvailableAgreesWithNew(t *testing.T) {
	err := Available()
	if err != nil {
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Available: %v does not match ErrUnavailable", err)
		}
		t.Skipf("io_uring unavailable here: %v", err)
	}
	r := newTestRing(t, Options{SQEntries: 2, Shared: true})
	if r.FD() < 0 {
		t.Fatal("ring fd negative")
	}
	if disabled := readDisabledSysctl(); disabled == 2 {
		t.Fatalf("io_uring_disabled=2 but a ring was created")
	}
}

// TestNewRejectsBadOptions checks the options gateway.
func TestNewRejectsBadOptions(t *testing.T) {
	features := probeOrSkip(t)
	bad := []Options{
		{SQEntries: SQEntriesMax + 1, Shared: true},
		{SQEntries: 64, CQEntries: 32, Shared: true},
		{SQEntries: 8, CQEntries: CQEntriesMax + 1, Shared: true},
	}
	if !features.HasSetup(SetupSQPoll) {
		bad = append(bad, Options{SQEntries: 8, SetupFlags: SetupSQPoll, Shared: true})
	}
	for _, options := range bad {
		if r, err := New(options); err == nil {
			_ = r.Close() // Reported below; the ring holds nothing.
			t.Errorf("New(%+v) succeeded", options)
		}
	}
}

// TestRingFDSlotsReused opens and closes more single-issuer rings on one
// thread than there are registered ring fd slots: Close must give each slot
// back, or the 17th New fails with EBUSY.
func TestRingFDSlotsReused(t *testing.T) {
	if features := probeOrSkip(t); !features.RingFDs {
		t.Skip("kernel lacks IORING_REGISTER_RING_FDS")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := range 2 * ringFDSlotsMax {
		r, err := New(Options{SQEntries: 2})
		if err != nil {
			t.Fatalf("ring %d: New: %v", i, err)
		}
		registered := r.ringFDIndex >= 0
		if err := r.Close(); err != nil {
			t.Fatalf("ring %d: Close: %v", i, err)
		}
		if !registered {
			t.Fatalf("ring %d did not register its fd", i)
		}
	}
}

// TestSubmitReapAllocs pins invariant 8: preparing, submitting, waiting and
// reaping allocate nothing.
func TestSubmitReapAllocs(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 64})
	handler := &counter{}
	id := r.AddHandler(handler)
	var batch [32]CQE
	allocs := testing.AllocsPerRun(200, func() {
		for i := range 32 {
			sqe, _ := r.SQE()
			sqe.PrepNop()
			sqe.SetUserData(UserData(id, uint64(i)))
		}
		if _, err := r.SubmitAndWait(32, time.Second); err != nil {
			t.Fatal(err)
		}
		if r.ReapInto(batch[:16]) != 16 || r.Dispatch() != 16 {
			t.Fatal("short reap")
		}
		if _, err := r.Submit(); err != nil {
			t.Fatal(err)
		}
		r.Reap(func(cqe CQE) { handler.count += int(cqe.Res) })
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per submit/reap round, want 0", allocs)
	}
	if handler.count != 201*16 {
		t.Fatalf("handler saw %d CQEs, want %d", handler.count, 201*16)
	}
}

type counter struct{ count int }

func (c *counter) Complete(CQE) { c.count++ }

// TestSetupFlagNames pins the spelling used in the backend's log line.
func TestSetupFlagNames(t *testing.T) {
	cases := []struct {
		flags uint32
		want  string
	}{
		{0, "none"},
		{SetupSingleIssuer | SetupDeferTaskrun, "SINGLE_ISSUER|DEFER_TASKRUN"},
		{SetupSubmitAll | SetupCQSize | SetupNoSQArray, "CQSIZE|SUBMIT_ALL|NO_SQARRAY"},
		{SetupCoopTaskrun | 1<<30, "COOP_TASKRUN|0x40000000"},
	}
	for _, c := range cases {
		if got := SetupFlagNames(c.flags); got != c.want {
			t.Errorf("SetupFlagNames(%#x) = %q, want %q", c.flags, got, c.want)
		}
	}
	features := Features{SetupFlags: SetupSubmitAll, Bits: 0x3ffff, LastOp: 62, SendZC: true}
	want := "setup SUBMIT_ALL, features 0x3ffff, ops up to 62, no multishot accept, no multishot recv, " +
		"no buffer rings, send zc, no msg ring, no registered ring fds"
	if got := features.String(); got != want {
		t.Errorf("Features.String() = %q, want %q", got, want)
	}
}
