package ring

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/internal/invariant"
)

// TestTimeoutFires arms a 20 ms TIMEOUT and checks it completes with ETIME,
// not before its time.
func TestTimeoutFires(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	const duration = 20 * time.Millisecond
	sqe := mustSQE(t, r)
	r.PrepTimeout(sqe, duration, 0, 0)
	sqe.SetUserData(1)
	start := time.Now()
	cqe := waitFor(t, r, 1, nil)
	if elapsed := time.Since(start); elapsed < duration {
		t.Fatalf("timeout fired after %v, before %v", elapsed, duration)
	}
	if cqe.Err() != unix.ETIME {
		t.Fatalf("timeout: %v, want ETIME", cqe.Err())
	}
}

// TestTimeoutCountAndRemove checks the two other ways a TIMEOUT ends: a
// count of completions (res 0) and TIMEOUT_REMOVE (ECANCELED).
func TestTimeoutCountAndRemove(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	counted := mustSQE(t, r)
	r.PrepTimeout(counted, time.Hour, 1, 0)
	counted.SetUserData(1)
	nop := mustSQE(t, r)
	nop.PrepNop()
	nop.SetUserData(2)
	var others []CQE
	if cqe := waitFor(t, r, 1, &others); cqe.Res != 0 {
		t.Fatalf("counted timeout: %v, want res 0 after one completion", cqe.Err())
	}
	removed := mustSQE(t, r)
	r.PrepTimeout(removed, time.Hour, 0, 0)
	removed.SetUserData(3)
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	remove := mustSQE(t, r)
	remove.PrepTimeoutRemove(3)
	remove.SetUserData(4)
	if cqe := waitFor(t, r, 4, &others); cqe.Res != 0 {
		t.Fatalf("timeout remove: %v", cqe.Err())
	}
	if cqe := waitFor(t, r, 3, &others); cqe.Err() != unix.ECANCELED {
		t.Fatalf("removed timeout: %v, want ECANCELED", cqe.Err())
	}
}

// TestSubmitAndWaitTimeout waits for a CQE that never comes: the call must
// return ErrTimeout after the timeout, not sooner and not never.
func TestSubmitAndWaitTimeout(t *testing.T) {
	for _, shared := range []bool{false, true} {
		r := newTestRing(t, Options{SQEntries: 8, Shared: shared})
		const timeout = 30 * time.Millisecond
		start := time.Now()
		_, err := r.SubmitAndWait(1, timeout)
		elapsed := time.Since(start)
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("shared=%v: SubmitAndWait: %v, want ErrTimeout", shared, err)
		}
		if elapsed < timeout || elapsed > waitTimeout {
			t.Fatalf("shared=%v: waited %v for a %v timeout", shared, elapsed, timeout)
		}
		if count := r.CQReady(); count != 0 {
			t.Fatalf("%d CQEs after a timed-out wait", count)
		}
	}
}

// TestMsgRingWakesBlockedRing blocks a ring in SubmitAndWait on its own
// locked thread, waits until that thread sleeps in the kernel, then posts a
// CQE to it with MSG_RING from another ring: the sleeper must wake with the
// message's user_data and res well before its own timeout.
func TestMsgRingWakesBlockedRing(t *testing.T) {
	if features := probeOrSkip(t); !features.MsgRing {
		t.Skip("kernel lacks IORING_OP_MSG_RING")
	}
	type woken struct {
		cqe     CQE
		elapsed time.Duration
		err     error
	}
	ready := make(chan [2]int) // ring fd, thread id
	done := make(chan woken)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		target, err := New(Options{SQEntries: 4})
		if err != nil {
			ready <- [2]int{-1, 0}
			done <- woken{err: err}
			return
		}
		defer target.Close()
		ready <- [2]int{target.FD(), unix.Gettid()}
		start := time.Now()
		_, err = target.SubmitAndWait(1, waitTimeout)
		var batch [1]CQE
		target.ReapInto(batch[:])
		done <- woken{cqe: batch[0], elapsed: time.Since(start), err: err}
	}()
	target := <-ready
	if target[0] < 0 {
		t.Fatalf("target ring: %v", (<-done).err)
	}
	waitUntilSleeping(t, target[1])
	sender := newTestRing(t, Options{SQEntries: 4})
	sqe := mustSQE(t, sender)
	sqe.PrepMsgRing(int32(target[0]), 1234, 0xfeed)
	sqe.SetUserData(1)
	if cqe := waitFor(t, sender, 1, nil); cqe.Res != 0 {
		t.Fatalf("MSG_RING: %v", cqe.Err())
	}
	got := <-done
	if got.err != nil {
		t.Fatalf("target wait: %v", got.err)
	}
	if got.cqe.UserData != 0xfeed || got.cqe.Res != 1234 {
		t.Fatalf("target got user_data %#x res %d, want 0xfeed 1234", got.cqe.UserData, got.cqe.Res)
	}
	if got.elapsed >= waitTimeout {
		t.Fatalf("target woke after %v: by its timeout, not the message", got.elapsed)
	}
}

// waitUntilSleeping polls the thread's current system call until it is
// io_uring_enter and the thread sleeps (S), so the message is known to wake
// a ring blocked in the kernel rather than one about to look.
func waitUntilSleeping(t *testing.T, tid int) {
	t.Helper()
	task := "/proc/self/task/" + strconv.Itoa(tid) + "/"
	enter := strconv.Itoa(unix.SYS_IO_URING_ENTER) + " "
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		syscall, err := os.ReadFile(task + "syscall")
		if err != nil {
			t.Skipf("cannot read %ssyscall (%v): blocking state not observable", task, err)
		}
		stat, err := os.ReadFile(task + "stat")
		if err != nil {
			t.Fatalf("read %sstat: %v", task, err)
		}
		// The state follows the command name in parentheses.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if strings.HasPrefix(string(syscall), enter) && len(fields) > 0 && fields[0] == "S" {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("thread %d never slept in io_uring_enter", tid)
}

// TestDispatchRoutes registers two handlers and checks each CQE reaches the
// handler named in its user_data, with its tag.
func TestDispatchRoutes(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	handlers := [2]*recorder{{}, {}}
	ids := [2]HandlerID{r.AddHandler(handlers[0]), r.AddHandler(handlers[1])}
	for i := range 6 {
		sqe := mustSQE(t, r)
		sqe.PrepNop()
		sqe.SetUserData(UserData(ids[i%2], uint64(i)))
	}
	if _, err := r.SubmitAndWait(6, waitTimeout); err != nil {
		t.Fatal(err)
	}
	if count := r.Dispatch(); count != 6 {
		t.Fatalf("dispatched %d CQEs, want 6", count)
	}
	for h, handler := range handlers {
		want := []uint64{uint64(h), uint64(h + 2), uint64(h + 4)}
		if len(handler.tags) != 3 || handler.tags[0] != want[0] || handler.tags[1] != want[1] || handler.tags[2] != want[2] {
			t.Errorf("handler %d got tags %v, want %v", h, handler.tags, want)
		}
	}
}

type recorder struct{ tags []uint64 }

func (h *recorder) Complete(cqe CQE) { h.tags = append(h.tags, cqe.Tag()) }

// TestSQFullAndReapBound fills the SQ until SQE refuses, submits, and checks
// one Reap handles at most CompletionsPerReapMax CQEs.
func TestSQFullAndReapBound(t *testing.T) {
	const entries = 2 * CompletionsPerReapMax
	r := newTestRing(t, Options{SQEntries: entries})
	for i := range entries {
		sqe, ok := r.SQE()
		if !ok {
			t.Fatalf("SQ full after %d of %d", i, entries)
		}
		sqe.PrepNop()
	}
	if _, ok := r.SQE(); ok {
		t.Fatal("SQE handed out past the SQ size")
	}
	if _, err := r.SubmitAndWait(entries, waitTimeout); err != nil {
		t.Fatal(err)
	}
	if count := r.Reap(func(CQE) {}); count != CompletionsPerReapMax {
		t.Fatalf("one Reap handled %d CQEs, want the bound %d", count, CompletionsPerReapMax)
	}
	if count := r.Reap(func(CQE) {}); count != entries-CompletionsPerReapMax {
		t.Fatalf("second Reap handled %d CQEs", count)
	}
}

// TestOwnershipAsserts checks the negative space of buffer ownership: each
// misuse must panic with its reason.
func TestOwnershipAsserts(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	pool := newTestPool(t, 2, PageBytes)
	lent, _ := pool.Acquire()
	sqe := mustSQE(t, r)
	sqe.PrepWrite(-1, lent, 0, 1, 0)
	sqe.SetUserData(1)
	misuses := []struct {
		name string
		run  func()
	}{
		{"lend twice", func() { s := mustSQE(t, r); s.PrepSend(-1, lent, 0, 1, 0); s.PrepNop() }},
		{"touch lent bytes", func() { _ = lent.Bytes() }},
		{"release lent", func() { pool.Release(lent) }},
		{"span past end", func() { held, _ := pool.Acquire(); mustSQE(t, r).PrepRead(-1, held, 0, PageBytes+1, 0) }},
	}
	for _, misuse := range misuses {
		if !panics(misuse.run) {
			t.Errorf("%s did not panic", misuse.name)
		}
	}
	waitFor(t, r, 1, nil)
	pool.Reclaim(lent)
	if panics(func() { pool.Release(lent) }) {
		t.Error("release after reclaim panicked")
	}
	if pool.LentCount() != 0 {
		t.Fatalf("%d buffers lent after every CQE arrived", pool.LentCount())
	}
}

func panics(run func()) (panicked bool) {
	defer func() { panicked = recover() != nil }()
	run()
	return false
}

// TestCompletionsHeldUntilEnter checks the deferred-task-work contract a
// polling loop relies on: a completion stays out of the CQ (CQReady 0) but
// is announced by CompletionsHeld until the owner enters the kernel.
func TestCompletionsHeldUntilEnter(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	want := SetupDeferTaskrun | SetupTaskrunFlag
	if r.SetupFlags()&want != want {
		t.Skip("kernel lacks IORING_SETUP_DEFER_TASKRUN with IORING_SETUP_TASKRUN_FLAG")
	}
	if r.CompletionsHeld() {
		t.Fatal("completions held on an idle ring")
	}
	sqe := mustSQE(t, r)
	r.PrepTimeout(sqe, time.Millisecond, 0, 0)
	sqe.SetUserData(1)
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitTimeout)
	for !r.CompletionsHeld() {
		if time.Now().After(deadline) {
			t.Fatal("the expired timeout was never announced")
		}
		runtime.Gosched()
	}
	if ready := r.CQReady(); ready != 0 {
		t.Fatalf("%d CQEs visible before entering the kernel", ready)
	}
	if _, err := r.SubmitAndWait(0, 0); err != nil {
		t.Fatal(err)
	}
	if ready := r.CQReady(); ready != 1 {
		t.Fatalf("%d CQEs after entering, want 1", ready)
	}
	if r.CompletionsHeld() {
		t.Fatal("completions still held after entering")
	}
}

// TestSubmitFromAnotherThread checks invariant 1 from both sides: in
// invariant builds a submit from a thread other than the creator panics;
// otherwise the kernel refuses it, reported as a NotOwnerError, and nothing
// is lost.
func TestSubmitFromAnotherThread(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8})
	if r.SetupFlags()&SetupSingleIssuer == 0 {
		t.Skip("kernel lacks IORING_SETUP_SINGLE_ISSUER")
	}
	sqe := mustSQE(t, r)
	sqe.PrepNop()
	sqe.SetUserData(1)
	type outcome struct {
		panicked bool
		err      error
	}
	result := make(chan outcome)
	go func() {
		runtime.LockOSThread() // A fresh thread: the creator stays locked to the test.
		defer runtime.UnlockOSThread()
		var got outcome
		got.panicked = panics(func() { _, got.err = r.Submit() })
		result <- got
	}()
	got := <-result
	if invariant.Enabled {
		if !got.panicked {
			t.Fatal("submit from another thread did not panic in an invariant build")
		}
	} else if notOwner := (*NotOwnerError)(nil); got.panicked || !errors.As(got.err, &notOwner) {
		t.Fatalf("submit from another thread: panicked %v, err %v; want a NotOwnerError", got.panicked, got.err)
	}
	if cqe := waitFor(t, r, 1, nil); cqe.Res != 0 {
		t.Fatalf("NOP from the owner after the refused submit: %v", cqe.Err())
	}
}

// TestTimedWaitSurvivesSignals interrupts a 1 s SubmitAndWait with a
// signal every 100 ms (SIGURG, which the Go runtime tolerates): each EINTR
// must resume the wait with the time left, so the call ends near 1 s with
// ErrTimeout. A wait that restarted its timeout per signal would end after
// the last signal plus 1 s (1.8 s). Wall-clock bound, so long mode only.
func TestTimedWaitSurvivesSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test: runs without -short")
	}
	r := newTestRing(t, Options{SQEntries: 4})
	const timeout, interval, signalsMax = time.Second, 100 * time.Millisecond, 8
	tid := unix.Gettid()
	stop := make(chan struct{})
	sent := make(chan int)
	go func() {
		count := 0
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for count < signalsMax {
			select {
			case <-stop:
				sent <- count
				return
			case <-ticker.C:
			}
			if inEnter(tid) && unix.Tgkill(unix.Getpid(), tid, unix.SIGURG) == nil {
				count++
			}
		}
		<-stop
		sent <- count
	}()
	start := time.Now()
	_, err := r.SubmitAndWait(1, timeout)
	elapsed := time.Since(start)
	close(stop)
	signals := <-sent
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("SubmitAndWait: %v, want ErrTimeout", err)
	}
	if signals < signalsMax {
		t.Skipf("only %d of %d signals reached the waiting thread: too loaded to test", signals, signalsMax)
	}
	if elapsed < timeout || elapsed > timeout+timeout/2 {
		t.Fatalf("a %v wait interrupted by %d signals took %v", timeout, signals, elapsed)
	}
}

// inEnter reports whether thread tid is inside io_uring_enter.
func inEnter(tid int) bool {
	syscall, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/syscall")
	return err == nil && strings.HasPrefix(string(syscall), strconv.Itoa(unix.SYS_IO_URING_ENTER)+" ")
}
