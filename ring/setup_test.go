package ring

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"unsafe"
)

// TestABISizes pins the kernel structures: a wrong size or field order would
// corrupt the shared rings silently.
func TestABISizes(t *testing.T) {
	sizes := []struct {
		name string
		got  uintptr
		want uintptr
	}{
		{"io_uring_sqe", unsafe.Sizeof(SQE{}), 64},
		{"io_uring_cqe", unsafe.Sizeof(CQE{}), 16},
		{"io_uring_params", unsafe.Sizeof(params{}), 120},
		{"io_uring_probe", unsafe.Sizeof(probeHeader{}), 16},
		{"io_uring_probe_op", unsafe.Sizeof(probeOp{}), 8},
		{"io_uring_buf_reg", unsafe.Sizeof(bufReg{}), 40},
		{"io_uring_buf", unsafe.Sizeof(bufEntry{}), 16},
		{"io_uring_rsrc_update", unsafe.Sizeof(rsrcUpdate{}), 16},
		{"io_uring_files_update", unsafe.Sizeof(filesUpdate{}), 16},
		{"io_uring_rsrc_register", unsafe.Sizeof(rsrcRegister{}), 32},
		{"io_uring_rsrc_update2", unsafe.Sizeof(rsrcUpdate2{}), 32},
		{"io_uring_getevents_arg", unsafe.Sizeof(geteventsArg{}), 24},
	}
	for _, size := range sizes {
		if size.got != size.want {
			t.Errorf("%s: %d bytes, want %d", size.name, size.got, size.want)
		}
	}
	offsets := []struct {
		name string
		got  uintptr
		want uintptr
	}{
		{"sqe.user_data", unsafe.Offsetof(SQE{}.userData), 32},
		{"sqe.buf_index", unsafe.Offsetof(SQE{}.bufIndex), 40},
		{"sqe.file_index", unsafe.Offsetof(SQE{}.fileIndex), 44},
		{"sqe.addr3", unsafe.Offsetof(SQE{}.addr3), 48},
		{"params.sq_off", unsafe.Offsetof(params{}.sqOff), 40},
		{"params.cq_off", unsafe.Offsetof(params{}.cqOff), 80},
		{"buf.bid", unsafe.Offsetof(bufEntry{}.bid), 12},
		{"buf.resv (buf ring tail)", unsafe.Offsetof(bufEntry{}.resv), 14},
	}
	for _, offset := range offsets {
		if offset.got != offset.want {
			t.Errorf("%s at %d, want %d", offset.name, offset.got, offset.want)
		}
	}
}

// TestProbeReportsKernel logs what the kernel offers and checks the
// relations that must hold between the probed facts.
func TestProbeReportsKernel(t *testing.T) {
	features := probeOrSkip(t)
	t.Logf("%v", &features)
	if !features.Supports(OpNop) {
		t.Error("NOP not supported, yet the probe succeeded")
	}
	if features.Supports(features.LastOp + 1) {
		t.Errorf("op %d past the last op %d reported supported", features.LastOp+1, features.LastOp)
	}
	if features.SendZC != features.Supports(OpSendZC) {
		t.Error("SendZC disagrees with the op bitmap")
	}
	if features.HasSetup(SetupDeferTaskrun) && !features.HasSetup(SetupSingleIssuer) {
		t.Error("DEFER_TASKRUN accepted without SINGLE_ISSUER")
	}
}

// TestNopRoundTrip submits NOPs on every flag combination New can choose and
// checks each CQE comes back with its user_data.
func TestNopRoundTrip(t *testing.T) {
	for _, shared := range []bool{false, true} {
		r := newTestRing(t, Options{SQEntries: 8, Shared: shared})
		t.Logf("shared=%v setup flags %#x", shared, r.SetupFlags())
		for i := range uint64(5) {
			sqe := mustSQE(t, r)
			sqe.PrepNop()
			sqe.SetUserData(100 + i)
		}
		var others []CQE
		for i := range uint64(5) {
			cqe := waitFor(t, r, 100+i, &others)
			if cqe.Res != 0 {
				t.Fatalf("NOP %d: res %d", i, cqe.Res)
			}
		}
	}
}

// TestSharedRingAcrossThreads uses a Shared ring from two locked threads in
// turn (serialised by a mutex, as Options.Shared asks): every NOP each
// submits must complete, and no submit may be refused as a foreign issuer.
func TestSharedRingAcrossThreads(t *testing.T) {
	r := newTestRing(t, Options{SQEntries: 8, Shared: true})
	if r.SetupFlags()&SetupSingleIssuer != 0 {
		t.Fatal("a shared ring was created single-issuer")
	}
	var lock sync.Mutex
	errs := make(chan error, 2)
	for worker := range uint64(2) {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for round := range uint64(50) {
				lock.Lock()
				err := sharedRoundTrip(r, worker<<32|round)
				lock.Unlock()
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// sharedRoundTrip submits one NOP and waits for its CQE.
func sharedRoundTrip(r *Ring, userData uint64) error {
	sqe, ok := r.SQE()
	if !ok {
		return errors.New("SQ full")
	}
	sqe.PrepNop()
	sqe.SetUserData(userData)
	if _, err := r.SubmitAndWait(1, waitTimeout); err != nil {
		return err
	}
	var batch [1]CQE
	if r.ReapInto(batch[:]) != 1 || batch[0].UserData != userData {
		return errors.New("NOP completion missing or foreign")
	}
	return nil
}
