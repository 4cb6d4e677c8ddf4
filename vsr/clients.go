package vsr

import (
	"encoding/binary"
	"errors"
)

// ClientSession is one client table row: the latest request of a client
// that committed, and the op it committed at.
type ClientSession struct {
	Client  uint64
	Request uint64
	Op      uint64
}

// clientTable is replicated state: every replica updates it when it commits
// an op, so a new primary answers retries of requests its predecessor
// committed. Rows live in a fixed slice (their order is deterministic: it
// follows the commit order); the map only finds a row and is never iterated.
type clientTable struct {
	rows  []ClientSession
	index map[uint64]int
	max   int
}

func newClientTable(max int) clientTable {
	return clientTable{rows: make([]ClientSession, 0, max), index: make(map[uint64]int, max), max: max}
}

func (t *clientTable) find(client uint64) (ClientSession, bool) {
	i, ok := t.index[client]
	if !ok {
		return ClientSession{}, false
	}
	return t.rows[i], true
}

// commit records that client's request committed at op. When the table is
// full the session that committed longest ago is evicted; that client's next
// retry of an old request is then treated as new, which is why clientsMax is
// sized well above the number of live producers.
func (t *clientTable) commit(client, request, op uint64) {
	if i, ok := t.index[client]; ok {
		t.rows[i].Request = request
		t.rows[i].Op = op
		return
	}
	if len(t.rows) < t.max {
		t.index[client] = len(t.rows)
		t.rows = append(t.rows, ClientSession{client, request, op})
		return
	}
	oldest := 0
	for i := range t.rows {
		if t.rows[i].Op < t.rows[oldest].Op {
			oldest = i
		}
	}
	delete(t.index, t.rows[oldest].Client)
	t.rows[oldest] = ClientSession{client, request, op}
	t.index[client] = oldest
}

func (t *clientTable) reset(rows []ClientSession) {
	t.rows = t.rows[:0]
	clear(t.index)
	for _, row := range rows {
		if len(t.rows) == t.max {
			break
		}
		t.index[row.Client] = len(t.rows)
		t.rows = append(t.rows, row)
	}
}

func appendClients(dst []byte, rows []ClientSession) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(rows)))
	for _, row := range rows {
		dst = binary.LittleEndian.AppendUint64(dst, row.Client)
		dst = binary.LittleEndian.AppendUint64(dst, row.Request)
		dst = binary.LittleEndian.AppendUint64(dst, row.Op)
	}
	return dst
}

// decodeClients reads rows written by appendClients and returns the bytes
// after them.
func decodeClients(src []byte, rows []ClientSession) ([]ClientSession, []byte, error) {
	if len(src) < 4 {
		return nil, nil, ErrHardState
	}
	count := int(binary.LittleEndian.Uint32(src))
	src = src[4:]
	if count > clientsMax || len(src) < count*clientSessionBytes {
		return nil, nil, ErrHardState
	}
	for range count {
		le := binary.LittleEndian
		rows = append(rows, ClientSession{le.Uint64(src), le.Uint64(src[8:]), le.Uint64(src[16:])})
		src = src[clientSessionBytes:]
	}
	return rows, src, nil
}

// HardState is what a replica must find again after a restart: the view it
// last acted in, the view its log was last complete in, its commit point and
// the client table as of that commit point. Journal entries are persisted
// separately through Ready.Writes.
type HardState struct {
	View           uint32
	LogView        uint32
	VoteView       uint32 // highest view this replica sent a DoViewChange for
	Commit         uint64
	CommitChecksum uint32
	// Recovering: the replica was recovering when this was written; its
	// log is not known complete, so a restart recovers again.
	Recovering bool
	Clients    []ClientSession // owned by the replica until the next Step or Tick
	// written is set by DecodeHardState: a hard state read back was
	// written once, so the replica is not empty (Open's fresh rule).
	written bool
}

// ErrHardState reports a superblock that fails its checksum or framing.
var ErrHardState = errors.New("vsr: hard state corrupt")

const hardStateFixedBytes = 4 + 4 + 4 + 4 + 8 + 4 + 4

// AppendBinary encodes the hard state (layout in doc.go) onto dst.
func (hs HardState) AppendBinary(dst []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint32(dst, hs.View)
	dst = binary.LittleEndian.AppendUint32(dst, hs.LogView)
	dst = binary.LittleEndian.AppendUint32(dst, hs.VoteView)
	dst = binary.LittleEndian.AppendUint64(dst, hs.Commit)
	dst = binary.LittleEndian.AppendUint32(dst, hs.CommitChecksum)
	flags := uint32(0)
	if hs.Recovering {
		flags |= hardStateRecovering
	}
	dst = binary.LittleEndian.AppendUint32(dst, flags)
	dst = appendClients(dst, hs.Clients)
	binary.LittleEndian.PutUint32(dst[start:], checksum(dst[start+4:]))
	return dst, nil
}

// DecodeHardState reads what AppendBinary wrote; the returned Clients slice
// is freshly allocated and belongs to the caller.
func DecodeHardState(src []byte) (HardState, error) {
	var hs HardState
	if len(src) < hardStateFixedBytes+4 {
		return hs, ErrHardState
	}
	if binary.LittleEndian.Uint32(src) != checksum(src[4:]) {
		return hs, ErrHardState
	}
	le := binary.LittleEndian
	hs.View = le.Uint32(src[4:])
	hs.LogView = le.Uint32(src[8:])
	hs.VoteView = le.Uint32(src[12:])
	hs.Commit = le.Uint64(src[16:])
	hs.CommitChecksum = le.Uint32(src[24:])
	flags := le.Uint32(src[28:])
	if flags&^hardStateRecovering != 0 {
		return HardState{}, ErrHardState
	}
	hs.Recovering = flags&hardStateRecovering != 0
	hs.written = true
	rows, rest, err := decodeClients(src[hardStateFixedBytes:], nil)
	if err != nil || len(rest) != 0 {
		return HardState{}, ErrHardState
	}
	hs.Clients = rows
	return hs, nil
}

// hardStateRecovering is the HardState flag bit of Recovering.
const hardStateRecovering = 1 << 0

func (r *Replica) hardState() HardState {
	recovering := r.status == StatusRecovering
	if r.commitUnknown {
		hs := r.durable
		hs.View, hs.LogView, hs.VoteView, hs.Recovering = r.view, r.logView, r.voteView, recovering
		return hs
	}
	return HardState{View: r.view, LogView: r.logView, VoteView: r.voteView, Commit: r.commitMin,
		CommitChecksum: r.commitChecksum, Recovering: recovering, Clients: r.clients.rows}
}
