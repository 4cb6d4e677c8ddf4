package ring_test

import (
	"fmt"
	"runtime"
	"time"

	"github.com/whippetio/whippet/ring"
)

// echoHandler receives the completions routed to it by Dispatch.
type echoHandler struct{ seen []uint64 }

func (h *echoHandler) Complete(cqe ring.CQE) { h.seen = append(h.seen, cqe.Tag()) }

// Example shows a shard's use of a ring: lock the thread, create the ring,
// route completions to a handler through user_data, and run one loop turn.
// (It has no Output line: an example cannot skip on a kernel without
// io_uring; TestDispatchRoutes checks the same path.)
func Example() {
	if err := ring.Available(); err != nil {
		fmt.Println(err) // Names the cause; the portable backend runs instead.
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := ring.New(ring.Options{SQEntries: 64})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	handler := &echoHandler{}
	id := r.AddHandler(handler)
	for tag := uint64(1); tag <= 3; tag++ {
		sqe, ok := r.SQE()
		if !ok {
			break
		}
		sqe.PrepNop()
		sqe.SetUserData(ring.UserData(id, tag))
	}
	if _, err := r.SubmitAndWait(3, time.Second); err != nil {
		fmt.Println(err)
		return
	}
	r.Dispatch()
	fmt.Println("tags", handler.seen) // tags [1 2 3]
}
