package wire

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/zeebo/xxh3"
)

// streamFrame encodes header and body with s into a fresh frame (its bytes
// set to 0xee first, so a byte Next leaves unwritten shows), takes chunks
// of chunkBytes, and returns the frame and the chunks joined. It fails t
// when a chunk is longer than chunkBytes, empty, not the next part of the
// frame, or the stream ends early or late.
func streamFrame(t *testing.T, s *RequestStream, header RequestHeader, body *OutgoingMessages,
	chunkBytes int) (frame, joined []byte) {
	t.Helper()
	frame = bytes.Repeat([]byte{0xee}, RequestBytes(body))
	if size := s.Start(frame, header, body); size != len(frame) {
		t.Fatalf("Start returned %d, want %d", size, len(frame))
	}
	for !s.Done() {
		chunk := s.Next(chunkBytes)
		if len(chunk) == 0 || len(chunk) > chunkBytes {
			t.Fatalf("a chunk of %d bytes, chunks of %d asked", len(chunk), chunkBytes)
		}
		if &chunk[0] != &frame[len(joined)] {
			t.Fatalf("the chunk at %d is not the frame's next part", len(joined))
		}
		joined = append(joined, chunk...)
		if len(joined) < len(frame) && len(chunk) != chunkBytes {
			t.Fatalf("a short chunk of %d bytes before the frame's end", len(chunk))
		}
	}
	if len(joined) != len(frame) {
		t.Fatalf("the chunks hold %d bytes of a %d-byte frame", len(joined), len(frame))
	}
	return frame, joined
}

// TestRequestStreamMatchesFlat: over seeded random batches (sizes, user
// headers, empty and nil blocks, identifiers, partitionings) and chunk
// sizes from 1 byte to past the frame, one reused RequestStream yields
// chunks that join to the frame EncodeRequest writes, and the frame is
// that too. -vector-seed replays a seed.
func TestRequestStreamMatchesFlat(t *testing.T) {
	seed := *vectorSeed
	if seed == 0 {
		seed = 0x5eed_57e4
	}
	t.Logf("seed %d", seed)
	random := rand.New(rand.NewPCG(seed, 2))
	var s RequestStream
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	for round := range rounds {
		body := randomOutgoing(random, 1+random.IntN(200))
		header := RequestHeader{Operation: OperationSendMessages, Request: random.Uint64()}
		flat := make([]byte, RequestBytes(body))
		EncodeRequest(flat, header, body)
		chunkSizes := []int{1 + random.IntN(64), 1 + random.IntN(4096), 1 + random.IntN(len(flat)+100)}
		chunkBytes := chunkSizes[random.IntN(len(chunkSizes))]
		frame, joined := streamFrame(t, &s, header, body, chunkBytes)
		if !bytes.Equal(joined, flat) || !bytes.Equal(frame, flat) {
			t.Fatalf("round %d (chunks of %d): the streamed frame differs from the flat one at byte %d of %d",
				round, chunkBytes, firstDifference(joined, flat), len(flat))
		}
	}
}

// TestRequestStreamGolden: the golden SendMessages frame of
// messages_batch.json, streamed in chunks of 100 bytes.
func TestRequestStreamGolden(t *testing.T) {
	var vectors batchVectors
	loadJSON(t, "messages_batch.json", &vectors)
	body := &OutgoingMessages{Stream: stream1, Topic: topicOrders, Partitioning: PartitionID(2),
		Messages: outgoingFromVectors(t, vectors.Send.Messages)}
	header := RequestHeader{Client: Uint128{Lo: 0x0807060504030201, Hi: 0x100f0e0d0c0b0a09}, Request: 11,
		Operation: OperationSendMessages, Session: 1}
	var s RequestStream
	if _, joined := streamFrame(t, &s, header, body, 100); !bytes.Equal(joined, unhex(t, vectors.Send.Frame)) {
		t.Fatalf("streamed frame\n%x\nwant\n%s", joined, vectors.Send.Frame)
	}
}

// TestRequestStreamRelease: the last chunk, or Release part way, leaves
// the stream with no view of the frame or the messages, and the stream
// then encodes the next batch from scratch.
func TestRequestStreamRelease(t *testing.T) {
	random := rand.New(rand.NewPCG(9, 10))
	var s RequestStream
	header := RequestHeader{Operation: OperationSendMessages}
	body := randomOutgoing(random, 50)
	s.Start(make([]byte, RequestBytes(body)), header, body)
	s.Next(10)
	s.Release()
	if s.frame != nil || s.messages != nil || !s.Done() {
		t.Fatalf("released part way, the stream holds a %d-byte frame and %d messages", cap(s.frame), len(s.messages))
	}
	body = randomOutgoing(random, 5)
	flat := make([]byte, RequestBytes(body))
	EncodeRequest(flat, header, body)
	if _, joined := streamFrame(t, &s, header, body, 333); !bytes.Equal(joined, flat) {
		t.Fatal("a reused stream encodes another frame")
	}
	if s.frame != nil || s.messages != nil {
		t.Fatal("after its last chunk, the stream holds a view of the frame or the messages")
	}
}

// TestRequestStreamAllocations: streaming a frame allocates nothing.
func TestRequestStreamAllocations(t *testing.T) {
	if invariant.Enabled {
		t.Skip("invariant builds validate every streamed batch, which allocates")
	}
	body := randomOutgoing(rand.New(rand.NewPCG(7, 8)), 300)
	frame := make([]byte, RequestBytes(body))
	var s RequestStream
	header := RequestHeader{Operation: OperationSendMessages}
	allocs := testing.AllocsPerRun(20, func() {
		s.Start(frame, header, body)
		for !s.Done() {
			s.Next(4096)
		}
	})
	if allocs != 0 {
		t.Fatalf("streaming a frame allocates %.1f times", allocs)
	}
}

// FuzzRequestStream is a differential fuzz test: batches derived from the
// input bytes, streamed in chunks of a size the input picks, join to the
// flat frame.
func FuzzRequestStream(f *testing.F) {
	f.Add([]byte{3, 10, 0, 200, 0, 0, 5, 1, 1})
	f.Add([]byte{0})
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		seed := xxh3.Hash(data)
		random := rand.New(rand.NewPCG(seed, uint64(len(data))))
		body := randomOutgoing(random, 1+len(data)%64)
		for i := range body.Messages {
			if len(data) > i && data[i]%3 == 0 {
				body.Messages[i].Payload = data[i:]
			}
		}
		if CheckOutgoing(body.Messages) != nil {
			return
		}
		header := RequestHeader{Operation: OperationSendMessages, Request: seed}
		flat := make([]byte, RequestBytes(body))
		EncodeRequest(flat, header, body)
		var s RequestStream
		if _, joined := streamFrame(t, &s, header, body, 1+int(seed%uint64(len(flat)))); !bytes.Equal(joined, flat) {
			t.Fatalf("the streamed frame differs from the flat one at byte %d", firstDifference(joined, flat))
		}
	})
}
