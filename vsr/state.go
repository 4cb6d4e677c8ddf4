package vsr

import "github.com/whippetio/whippet/internal/invariant"

// State transfer moves a peer's committed state (client table and
// application snapshot, the "payload") to a replica too far behind for
// repair. The payload is sent in chunks of at most StateChunkBytes: the
// server takes the snapshot once, keeps it while requesters pull chunks by
// offset, and names it by its op and the CRC-32C of the whole payload, so
// a requester never mixes chunks of two snapshots.

// stateServed is the payload a replica serves, taken at one commit point.
type stateServed struct {
	op       uint64
	checksum uint32 // of op
	sum      uint32 // CRC-32C of payload
	payload  []byte
}

// stateFetched is a payload being pulled from one peer.
type stateFetched struct {
	active   bool
	peer     uint8
	op       uint64
	checksum uint32
	commit   uint64
	sum      uint32
	total    uint64
	payload  []byte
	stalls   int // repair rounds without a new chunk
}

// stateStallsMax is how many repair rounds a transfer may go without a
// chunk before it starts over, possibly from another peer. It must outlast
// a slow round trip many times over: restarting too early on a slow
// network means no transfer ever finishes.
const stateStallsMax = 64

// requestState asks for the next chunk of the transfer under way, or for a
// fresh snapshot from peer. Repair calls it each round: a transfer that
// made no progress for stateStallsMax rounds starts over.
func (r *Replica) requestState(peer uint8) {
	fetch := &r.fetched
	if fetch.active {
		fetch.stalls++
		if fetch.stalls > stateStallsMax {
			fetch.active = false
		}
	}
	r.sendRequestState(peer)
}

func (r *Replica) sendRequestState(peer uint8) {
	fetch := &r.fetched
	request := r.header(CommandRequestState)
	request.Op = r.commitMin
	if fetch.active {
		peer = fetch.peer
		request.Commit = fetch.op
		request.Nonce = uint64(len(fetch.payload))
	}
	r.sendHeader(peer, 0, &request)
}

// onRequestState serves one chunk. A request for a snapshot no longer held
// (or for any: Commit zero) gets the first chunk of the current one.
func (r *Replica) onRequestState(h *Header) {
	if h.Replica == r.replica || r.commitMin <= h.Op || r.cfg.Snapshotter == nil || r.commitUnknown {
		return
	}
	if r.appliedOp != r.commitMin {
		// Ops committed in this batch (say, replayed by Open) are not
		// applied yet: the snapshot would miss them. The requester retries.
		return
	}
	served := &r.served
	offset := h.Nonce
	if h.Commit == 0 || h.Commit != served.op {
		offset = 0
		if served.op != r.commitMin || served.payload == nil {
			r.takeSnapshot()
		}
	}
	if offset > uint64(len(served.payload)) {
		return
	}
	// A burst of consecutive chunks per request keeps a slow round trip
	// from setting the pace of the whole transfer.
	burst := headerBytes + r.cfg.StateChunkBytes
	if len(r.stateBuf) < stateChunksPerRequest*burst {
		r.stateBuf = make([]byte, stateChunksPerRequest*burst)
	}
	for i := 0; i < stateChunksPerRequest; i++ {
		end := min(uint64(len(served.payload)), offset+uint64(r.cfg.StateChunkBytes))
		state := r.header(CommandState)
		state.Op = served.op
		state.Context = served.checksum
		state.Commit = r.commitMax
		state.Parent = served.sum
		state.Nonce = offset
		state.Request = uint64(len(served.payload))
		buf := r.stateBuf[i*burst : i*burst+headerBytes+int(end-offset)]
		r.sendMessage(h.Replica, encodeMessage(buf, &state, served.payload[offset:end]))
		if end == uint64(len(served.payload)) {
			return
		}
		offset = end
	}
}

// takeSnapshot captures the payload as of the commit point the caller has
// applied.
func (r *Replica) takeSnapshot() {
	invariant.Assert(r.appliedOp == r.commitMin, "a snapshot is served from applied state")
	invariant.Assert(!r.commitUnknown, "a snapshot is served from a known commit point")
	served := &r.served
	payload := appendClients(served.payload[:0], r.clients.rows)
	payload = r.cfg.Snapshotter.Snapshot(payload)
	*served = stateServed{op: r.commitMin, checksum: r.commitChecksum,
		sum: checksum(payload), payload: payload}
}

// onState takes one chunk; the last one installs the payload.
func (r *Replica) onState(h *Header, message []byte) {
	if h.Op <= r.commitMin || r.complete() && h.Op <= r.op || h.Request > stateBytesMax {
		return
	}
	fetch := &r.fetched
	chunk := message[headerBytes:]
	if !fetch.active || fetch.op != h.Op || fetch.sum != h.Parent {
		if h.Nonce != 0 {
			return
		}
		*fetch = stateFetched{active: true, peer: h.Replica, op: h.Op, checksum: h.Context,
			commit: h.Commit, sum: h.Parent, total: h.Request, payload: fetch.payload[:0]}
	}
	if h.Nonce != uint64(len(fetch.payload)) || uint64(len(fetch.payload)+len(chunk)) > fetch.total {
		return
	}
	fetch.payload = append(fetch.payload, chunk...)
	fetch.stalls = 0
	if uint64(len(fetch.payload)) < fetch.total {
		if (len(fetch.payload)/r.cfg.StateChunkBytes)%stateChunksPerRequest == 0 {
			r.sendRequestState(fetch.peer) // the burst is in: ask for the next
		}
		return
	}
	fetch.active = false
	if checksum(fetch.payload) != fetch.sum {
		return
	}
	r.installState(fetch)
}

// installState makes the fetched payload this replica's committed state.
func (r *Replica) installState(fetch *stateFetched) {
	var rows [clientsMax]ClientSession
	decoded, snapshot, err := decodeClients(fetch.payload, rows[:0])
	if err != nil {
		return
	}
	r.clients.reset(decoded)
	r.commitMin = fetch.op
	r.commitChecksum = fetch.checksum
	r.commitUnknown = false
	r.commitMax = max(r.commitMax, fetch.commit, fetch.op)
	r.hardChanged = true
	r.ready.Snapshot = snapshot
	r.ready.SnapshotOp = fetch.op
	r.ready.Committed = r.ready.Committed[:0]
	if r.op <= fetch.op {
		r.op = fetch.op
		r.opChecksum = fetch.checksum
	}
	r.chainLow = max(r.chainLow, fetch.op+1)
	r.extendChain()
	invariant.Assert(r.commitMin == fetch.op, "the state installed is the commit point")
	r.repair()
}
