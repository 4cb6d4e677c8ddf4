package sim

import (
	"cmp"
	"math/rand/v2"
	"slices"
)

// packet is one message in flight. to is a node index, or -1 with client
// set for a message to a client.
type packet struct {
	deliverAt uint64
	seq       uint64
	from      int // node index, or -1 from a client
	to        int
	client    uint64
	message   []byte
}

// NetworkOptions are the packet faults; probabilities are per packet.
type NetworkOptions struct {
	DropProbability      float64
	DuplicateProbability float64
	DelayTicksMax        int // each packet takes 1..DelayTicksMax ticks, which reorders them
	// OneWayProbability is the chance a partition blocks only the links
	// from the second side to the first, not both directions.
	OneWayProbability float64
}

type network struct {
	opts      NetworkOptions
	prng      *rand.Rand
	now       uint64
	seq       uint64
	inFlight  []packet
	due       []packet
	side      []int // partition side per node; nodes talk only within a side
	oneWay    bool  // side 0 still reaches side 1
	dropped   int
	duplicate int
	sent      int
}

func newNetwork(opts NetworkOptions, prng *rand.Rand, nodes int) *network {
	return &network{opts: opts, prng: prng, side: make([]int, nodes)}
}

func (n *network) send(from, to int, client uint64, message []byte) {
	n.sent++
	if n.prng.Float64() < n.opts.DropProbability {
		n.dropped++
		return
	}
	copies := 1
	if n.prng.Float64() < n.opts.DuplicateProbability {
		copies = 2
		n.duplicate++
	}
	for range copies {
		delay := uint64(1)
		if n.opts.DelayTicksMax > 1 {
			delay += uint64(n.prng.IntN(n.opts.DelayTicksMax))
		}
		n.seq++
		n.inFlight = append(n.inFlight, packet{deliverAt: n.now + delay, seq: n.seq,
			from: from, to: to, client: client, message: slices.Clone(message)})
	}
}

// connected reports whether a packet between two endpoints may pass; clients
// (index -1) reach every node.
func (n *network) connected(from, to int) bool {
	if from < 0 || to < 0 {
		return true
	}
	if n.oneWay && n.side[from] == 0 {
		return true
	}
	return n.side[from] == n.side[to]
}

// takeDue removes and returns the packets due by now, in (deliverAt, seq)
// order. The returned slice is valid until the next call.
func (n *network) takeDue() []packet {
	n.due = n.due[:0]
	kept := n.inFlight[:0]
	for _, p := range n.inFlight {
		if p.deliverAt <= n.now {
			n.due = append(n.due, p)
		} else {
			kept = append(kept, p)
		}
	}
	clear(n.inFlight[len(kept):])
	n.inFlight = kept
	slices.SortFunc(n.due, func(a, b packet) int {
		if a.deliverAt != b.deliverAt {
			return cmp.Compare(a.deliverAt, b.deliverAt)
		}
		return cmp.Compare(a.seq, b.seq)
	})
	return n.due
}

func (n *network) partition(sides []int, oneWay bool) {
	copy(n.side, sides)
	n.oneWay = oneWay
}

func (n *network) heal() {
	clear(n.side)
	n.oneWay = false
}

func (n *network) partitioned() bool {
	for _, s := range n.side {
		if s != 0 {
			return true
		}
	}
	return false
}
