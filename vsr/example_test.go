package vsr_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/whippetio/whippet/vsr"
)

// app is a toy application: it counts bytes applied.
type app struct{ bytes int }

func (a *app) Snapshot(dst []byte) []byte { return append(dst, byte(a.bytes)) }

// Example shows how a caller drives one replica: feed a message, then
// execute the Ready batch in order (persist, send, apply). A one-replica
// group commits at once; with more replicas the Messages go to peers and
// commits arrive in the batches of later Steps.
func Example() {
	state := &app{}
	journal := map[int][]byte{} // slot → bytes: the durable journal
	var superblock []byte
	r, err := vsr.New(vsr.Config{Cluster: 1, Group: 7, ReplicaCount: 1, Replica: 0,
		Rand: rand.New(rand.NewPCG(1, 2)), Snapshotter: state})
	if err != nil {
		panic(err)
	}
	request := vsr.EncodeRequest(nil, 1, 7, 42, 1, 0, []byte("hello"))
	ready, err := r.Step(request)
	if err != nil {
		panic(err)
	}
	for _, w := range ready.Writes { // 1. persist (and fsync) ...
		journal[w.Slot] = append([]byte(nil), w.Message...)
	}
	if ready.HardStateChanged {
		superblock, _ = ready.HardState.AppendBinary(superblock[:0])
	}
	for _, m := range ready.Messages { // 2. ... then send ...
		var h vsr.Header
		_ = vsr.DecodeMessage(m.Message, &h)
		fmt.Printf("send %s to client %d: request %d committed at op %d\n", h.Command, m.Client, h.Request, h.Op)
	}
	for _, e := range ready.Committed { // 3. ... then apply.
		state.bytes += len(e.Body)
		fmt.Printf("apply op %d from client %d: %q\n", e.Op, e.Client, e.Body)
	}
	fmt.Println("journal slots written:", len(journal), "superblock bytes:", len(superblock) > 0)
	// Output:
	// send reply to client 42: request 1 committed at op 1
	// apply op 1 from client 42: "hello"
	// journal slots written: 1 superblock bytes: true
}
