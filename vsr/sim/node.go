package sim

import (
	"math/rand/v2"
	"slices"

	"github.com/whippetio/whippet/vsr"
)

// storage is what one replica of one group keeps across a crash: the bytes
// of every journal slot and the superblock (encoded HardState). Writes in
// the simulator are durable when a batch's persist step finishes; a crash
// inside that step tears the write it was in.
type storage struct {
	slots      [][]byte
	superblock []byte
}

// host is one group's replica on a node, with its storage and application.
type host struct {
	replica *vsr.Replica
	storage storage
	app     app
	// commitDurable is the commit point of the last superblock written.
	commitDurable uint64
	commitLast    uint64
}

type node struct {
	index    int
	up       bool
	hosts    []host
	tearNext bool
	damaged  bool // a restart found a torn or corrupt slot; cleared when every replica is normal again
	downFor  int
}

func (c *Cluster) replicaConfig(nodeIndex, group int) vsr.Config {
	h := &c.nodes[nodeIndex].hosts[group]
	salt := uint64(1000 + nodeIndex*64 + group)
	return vsr.Config{
		Cluster:          c.opts.ClusterID,
		Group:            uint64(group),
		ReplicaCount:     c.opts.Replicas,
		Replica:          nodeIndex,
		JournalSlotCount: c.opts.JournalSlots,
		PipelineLen:      c.opts.PipelineLen,
		ClientsMax:       c.opts.ClientsMax,
		Rand:             rand.New(rand.NewPCG(c.opts.Seed, salt+uint64(c.restarts)<<20)),
		Snapshotter:      &h.app,
		StateChunkBytes:  c.opts.StateChunkBytes,
		Timeouts:         c.opts.Timeouts,
		EagerCommit:      c.opts.EagerCommit,
	}
}

func (c *Cluster) startNode(nodeIndex int) {
	n := &c.nodes[nodeIndex]
	n.up = true
	n.downFor = 0
	for g := range n.hosts {
		h := &n.hosts[g]
		hs := vsr.HardState{}
		if h.storage.superblock != nil {
			decoded, err := vsr.DecodeHardState(h.storage.superblock)
			if err != nil {
				c.fail("superblock unreadable after restart: " + err.Error())
				return
			}
			hs = decoded
		}
		cfg := c.replicaConfig(nodeIndex, g)
		cfg.AppliedOp = h.app.applied
		open := vsr.Open
		if c.now == 0 && !c.opts.BootFresh {
			// The cluster is formatted: every replica is known new.
			open = func(cfg vsr.Config, _ vsr.HardState, _ [][]byte) (*vsr.Replica, error) { return vsr.New(cfg) }
		}
		r, err := open(cfg, hs, h.storage.slots)
		if err != nil {
			c.fail("open replica: " + err.Error())
			n.up = false
			return
		}
		if r.CommitMax() < h.commitDurable {
			c.fail("invariant 7: a restarted replica lost its durable commit point")
		}
		h.replica = r
		h.commitLast = r.CommitMin()
	}
}

// crash stops a node. With tornGroup ≥ 0 the crash happens inside that
// group's next persist step instead (see execute).
func (c *Cluster) crash(nodeIndex int) {
	n := &c.nodes[nodeIndex]
	n.up = false
	if c.opts.Replicas > 1 && n.holdsNothing() {
		// Empty storage is indistinguishable from lost storage: the
		// replica will recover, which counts against the fault budget.
		n.damaged = true
	}
	for g := range n.hosts {
		n.hosts[g].replica = nil
	}
	c.crashes++
}

// crashPoint is where inside a batch a node may crash.
type crashPoint uint8

const (
	crashNone        crashPoint = iota
	crashTorn                   // inside persist: the write in progress is torn
	crashBeforeApply            // after persist and send, before apply
)

// execute runs one Ready batch in the documented order: persist, send,
// restore and apply, crashing at crash when the batch reaches that point.
func (c *Cluster) execute(nodeIndex, group int, ready *vsr.Ready, crash crashPoint) {
	h := &c.nodes[nodeIndex].hosts[group]
	n := &c.nodes[nodeIndex]
	if (crash == crashTorn || n.tearNext) && len(ready.Writes) > 0 {
		n.tearNext = false
		c.tearWrites(h, ready.Writes)
		c.crash(nodeIndex)
		c.nodes[nodeIndex].damaged = true
		return
	}
	for _, w := range ready.Writes {
		writeSlot(&h.storage, w.Slot, w.Message)
	}
	if ready.HardStateChanged {
		h.storage.superblock, _ = ready.HardState.AppendBinary(h.storage.superblock[:0])
		h.commitDurable = ready.HardState.Commit
	}
	for _, envelope := range ready.Messages {
		if envelope.Client != 0 {
			c.net.send(nodeIndex, -1, envelope.Client, envelope.Message)
		} else {
			c.net.send(nodeIndex, envelope.Replica, 0, envelope.Message)
		}
	}
	if crash == crashBeforeApply && (len(ready.Committed) > 0 || ready.Snapshot != nil) {
		// The node dies after persisting and sending, before it applies:
		// the application lags the durable commit point at restart. A
		// snapshot never installed is lost state the journal cannot replay,
		// so the replica recovers: that counts against the fault budget.
		lost := ready.Snapshot != nil
		if !lost || n.damaged || c.damageAllowed() {
			c.crash(nodeIndex)
			c.crashesBeforeApply++
			n.damaged = n.damaged || lost
			return
		}
	}
	if ready.Snapshot != nil {
		if err := h.app.restore(ready.SnapshotOp, ready.Snapshot); err != nil {
			c.fail("state transfer: " + err.Error())
			return
		}
		c.stateTransfers++
		c.checkSnapshot(group, h)
	}
	for i := range ready.Committed {
		c.applyEntry(nodeIndex, group, h, &ready.Committed[i])
	}
}

func writeSlot(s *storage, slot int, message []byte) {
	if len(message) == 0 {
		clear(s.slots[slot])
		s.slots[slot] = s.slots[slot][:0]
		return
	}
	s.slots[slot] = append(s.slots[slot][:0], message...)
}

// tearWrites persists the batch's writes up to a seeded point and leaves the
// write at that point half done: a prefix of the new bytes over the old.
func (c *Cluster) tearWrites(h *host, writes []vsr.Write) {
	torn := c.faults.IntN(len(writes))
	for _, w := range writes[:torn] {
		writeSlot(&h.storage, w.Slot, w.Message)
	}
	w := writes[torn]
	old := h.storage.slots[w.Slot]
	size := max(len(old), len(w.Message))
	buf := make([]byte, size)
	copy(buf, old)
	cut := 1 + c.faults.IntN(max(1, len(w.Message)-1))
	copy(buf, w.Message[:min(cut, len(w.Message))])
	if len(w.Message) == 0 && size > 0 {
		buf[c.faults.IntN(len(buf))] ^= 0xff
	}
	h.storage.slots[w.Slot] = buf
	c.tornWrites++
}

// corruptSlot flips a byte of a written slot, as a latent sector error the
// replica finds when it next reads its journal.
func (c *Cluster) corruptSlot(h *host) bool {
	var written []int
	for i, s := range h.storage.slots {
		if len(s) > 0 {
			written = append(written, i)
		}
	}
	if len(written) == 0 {
		return false
	}
	slot := written[c.faults.IntN(len(written))]
	s := slices.Clone(h.storage.slots[slot])
	s[c.faults.IntN(len(s))] ^= byte(1 + c.faults.IntN(255))
	h.storage.slots[slot] = s
	c.corruptions++
	return true
}
