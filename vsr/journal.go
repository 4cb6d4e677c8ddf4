package vsr

// slot holds one journaled prepare. The ring maps op to slot op%len(slots),
// so a slot's op says which of the ops sharing it is stored.
type slot struct {
	op       uint64
	checksum uint32
	parent   uint32
	client   uint64
	request  uint64
	present  bool
	message  []byte // the prepare exactly as the primary sealed it; reused
}

// journal is the in-memory copy of the durable journal ring. Slot buffers
// grow to the largest prepare they have held and are then reused, so the
// steady path does not allocate.
type journal struct {
	slots []slot
}

func newJournal(slotCount int) journal {
	return journal{slots: make([]slot, slotCount)}
}

func (j *journal) index(op uint64) int {
	return int(op % uint64(len(j.slots)))
}

// entry returns the prepare for op, or nil when the slot holds another op
// or nothing.
func (j *journal) entry(op uint64) *slot {
	s := &j.slots[j.index(op)]
	if !s.present || s.op != op {
		return nil
	}
	return s
}

// put stores a validated prepare in its slot, replacing whatever was there.
func (j *journal) put(h *Header, message []byte) *slot {
	s := &j.slots[j.index(h.Op)]
	s.message = append(s.message[:0], message...)
	j.claim(s, h)
	return s
}

// claim records h as the prepare held in s, whose message is already there.
func (j *journal) claim(s *slot, h *Header) {
	s.op = h.Op
	s.checksum = h.Checksum
	s.parent = h.Parent
	s.client = h.Client
	s.request = h.Request
	s.present = true
}

func (j *journal) erase(op uint64) bool {
	s := &j.slots[j.index(op)]
	if !s.present || s.op != op {
		return false
	}
	s.present = false
	s.message = s.message[:0]
	return true
}
