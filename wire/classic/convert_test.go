package classic

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/zeebo/xxh3"
)

// frameVector is one 0.9 message frame as the 0.9 golden batch lists it.
type frameVector struct {
	AbsoluteOffset uint64 `json:"absolute_offset"`
	AbsoluteOrigin uint64 `json:"absolute_origin_timestamp"`
	FrameHex       string `json:"frame_hex"`
	IDHex          string `json:"id@8"`
	OffsetDelta    uint32 `json:"offset_delta@24"`
	TimestampDelta uint32 `json:"timestamp_delta@28"`
	HeadersLength  uint32 `json:"user_headers_length@32"`
	PayloadLength  uint32 `json:"payload_length@36"`
}

type batchVector struct {
	PollMessages struct {
		RecordHeader struct {
			BaseOffset      uint64 `json:"base_offset@8"`
			BaseTimestamp   uint64 `json:"base_timestamp@16"`
			OriginTimestamp uint64 `json:"origin_timestamp@24"`
		} `json:"record_header"`
		Messages []frameVector `json:"messages"`
	} `json:"poll_messages"`
}

// Goal: a message a 0.9 client sent, as the server stores it, is served to a
// classic client with its id, offset, timestamps, payload and user headers
// intact, and the classic form converts back to the very same 0.9 frame.
// Method: take the stored frames of the 0.9 golden batch (read from the
// vector's labelled fields, not through any 0.9 codec), convert with
// FromFrame, serve with AppendMessage, decode as a classic poll reply, then
// rebuild the 48-byte frame from ToFrame's values and compare its bytes.
func TestConvertAgainst09Batch(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(vectorsDir, "..", "..", "vectors", "messages_batch.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vector batchVector
	if err := json.Unmarshal(text, &vector); err != nil {
		t.Fatal(err)
	}
	record := vector.PollMessages.RecordHeader
	batch := BatchFields{BaseOffset: record.BaseOffset, BaseTimestamp: record.BaseTimestamp,
		OriginTimestamp: record.OriginTimestamp}
	if len(vector.PollMessages.Messages) != 3 {
		t.Fatalf("%d frames in the 0.9 batch, want 3", len(vector.PollMessages.Messages))
	}
	served := AppendPollReplyHeader(nil, 2, 102, 3)
	for _, m := range vector.PollMessages.Messages {
		frame := unhex(t, m.FrameHex)
		var id MessageID
		copy(id[:], unhex(t, m.IDHex))
		fields := FrameFields{ID: id, OffsetDelta: m.OffsetDelta, TimestampDelta: m.TimestampDelta,
			UserHeadersLength: m.HeadersLength, PayloadLength: m.PayloadLength}
		payload := frame[48 : 48+m.PayloadLength]
		headers := frame[48+m.PayloadLength:]
		classic := FromFrame(fields, batch, payload, headers)
		if classic.Offset != m.AbsoluteOffset || classic.OriginTimestamp != m.AbsoluteOrigin ||
			classic.Timestamp != record.BaseTimestamp || classic.ID != id {
			t.Fatalf("frame %d became %+v", m.OffsetDelta, classic)
		}
		served = AppendMessage(served, &classic)
		back, err := ToFrame(&classic, uint32(classic.Offset-batch.BaseOffset), batch.OriginTimestamp)
		if err != nil || back != fields {
			t.Fatalf("frame %d came back as %+v, %v", m.OffsetDelta, back, err)
		}
		if rebuilt := frame09(back, payload, headers); !bytes.Equal(rebuilt, frame) {
			t.Fatalf("rebuilt 0.9 frame %x\nwant %x", rebuilt, frame)
		}
	}
	var reply PollReply
	if err := reply.Decode(served); err != nil {
		t.Fatalf("served poll reply: %v", err)
	}
	iterator := reply.Messages()
	for _, m := range vector.PollMessages.Messages {
		message, ok := iterator.Next()
		if !ok || !ChecksumValid(message.Raw) || message.Header.Offset != m.AbsoluteOffset {
			t.Fatalf("served message %d = %+v", m.OffsetDelta, message.Header)
		}
	}
}

// frame09 lays out a 0.9 frame (PROTOCOL.md §8.3) for the comparison only.
func frame09(f FrameFields, payload, headers []byte) []byte {
	out := make([]byte, 8, 48+len(payload)+len(headers))
	out = append(out, f.ID[:]...)
	out = binary.LittleEndian.AppendUint32(out, f.OffsetDelta)
	out = binary.LittleEndian.AppendUint32(out, f.TimestampDelta)
	out = binary.LittleEndian.AppendUint32(out, f.UserHeadersLength)
	out = binary.LittleEndian.AppendUint32(out, f.PayloadLength)
	out = binary.LittleEndian.AppendUint64(out, 0)
	out = append(append(out, payload...), headers...)
	binary.LittleEndian.PutUint64(out, xxh3.Hash(out[8:]))
	return out
}
