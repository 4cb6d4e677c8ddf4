package wire

import (
	"github.com/whippetio/whippet/internal/invariant"
)

// PollPlan is what one PollMessages reply serves: the records to write
// after the 16-byte prefix, in order, each a header and a view of stored
// frames. A server writes them with one vectored write, or EncodePoll
// copies them into one buffer.
type PollPlan struct {
	Slices        []BatchSlice
	MessagesCount uint32
	OffsetLast    uint64
	PayloadBytes  int // prefix plus records
}

// PlanPoll fills plan from stored batches (in offset order, stamped and
// validated) with the messages at offsets ≥ offsetFirst, at most countMax
// of them and at most payloadBytesMax bytes of reply payload: whole
// batches while they fit, the first and last ones sliced as needed, and at
// least one message whenever one qualifies (§8.5, §15 #4). plan.Slices
// keeps its capacity, so a reused plan does not allocate.
func PlanPoll(plan *PollPlan, batches [][]byte, offsetFirst uint64, countMax uint32, payloadBytesMax int) {
	invariant.Assert(payloadBytesMax >= PollPrefixBytes, "wire: poll reply cap below its prefix")
	*plan = PollPlan{Slices: plan.Slices[:0], PayloadBytes: PollPrefixBytes}
	for _, batch := range batches {
		remaining := countMax - plan.MessagesCount
		if remaining == 0 {
			break
		}
		room := payloadBytesMax - plan.PayloadBytes
		if len(plan.Slices) > 0 && room < BatchHeaderBytes+MessageHeaderBytes {
			break
		}
		if len(plan.Slices) == 0 {
			room = max(room, BatchHeaderBytes+1) // the first message is always served
		}
		slice, ok := SliceBatchWithin(batch, offsetFirst, remaining, room)
		if !ok {
			continue
		}
		if len(plan.Slices) > 0 && slice.Bytes() > room {
			break // a later batch whose first message alone does not fit
		}
		plan.Slices = append(plan.Slices, slice)
		plan.MessagesCount += slice.MessageCount
		plan.OffsetLast = slice.OffsetLast
		plan.PayloadBytes += slice.Bytes()
		offsetFirst = slice.OffsetLast + 1
	}
}

// EncodePoll writes the whole PollMessages reply payload of a plan into
// dst and returns PayloadBytes.
func EncodePoll(dst []byte, partitionID uint32, currentOffset uint64, plan *PollPlan) int {
	invariant.Assert(len(dst) >= plan.PayloadBytes, "wire: poll buffer shorter than the plan")
	position := EncodePollPrefix(dst, partitionID, currentOffset, plan.MessagesCount)
	for i := range plan.Slices {
		position += copy(dst[position:], plan.Slices[i].Header[:])
		position += copy(dst[position:], plan.Slices[i].Frames)
	}
	invariant.Assert(position == plan.PayloadBytes, "wire: poll plan size differs from its records")
	return position
}
