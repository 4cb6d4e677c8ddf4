package wire

import (
	"bytes"
	"flag"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/zeebo/xxh3"
)

var vectorSeed = flag.Uint64("vector-seed", 0, "seed of TestRequestVectorMatchesFlat (0: a fixed one)")

// randomOutgoing builds a random SendMessages body that CheckOutgoing
// accepts: up to countMax messages with payloads and user-header blocks of
// random sizes, empty ones and nil ones included, origin timestamps spread
// within a u32 of µs, and a random stream, topic and partitioning.
func randomOutgoing(random *rand.Rand, countMax int) *OutgoingMessages {
	messages := make([]OutgoingMessage, 1+random.IntN(countMax))
	base := random.Uint64N(1 << 60)
	for i := range messages {
		messages[i] = OutgoingMessage{ID: Uint128{Lo: random.Uint64(), Hi: random.Uint64()},
			OriginTimestamp: base + random.Uint64N(1<<32), Payload: randomBytes(random, 3000),
			UserHeaders: randomBytes(random, 300)}
	}
	identifiers := []Identifier{NumericID(random.Uint32()), NamedID("orders"), NamedID(string(make([]byte, 255)))}
	partitionings := []Partitioning{Balanced(), PartitionID(random.Uint32()), MessagesKey([]byte("key-7"))}
	return &OutgoingMessages{Stream: identifiers[random.IntN(3)], Topic: identifiers[random.IntN(3)],
		Partitioning: partitionings[random.IntN(3)], Messages: messages}
}

// randomBytes returns nil, an empty slice, or up to lengthMax random bytes.
func randomBytes(random *rand.Rand, lengthMax int) []byte {
	switch random.IntN(8) {
	case 0:
		return nil
	case 1:
		return []byte{}
	case 2:
		return make([]byte, lengthMax) // a long run of zeros
	}
	value := make([]byte, random.IntN(lengthMax+1))
	for i := range value {
		value[i] = byte(random.Uint32())
	}
	return value
}

// checkVector asserts that v, freshly encoded from header and body, holds
// the frame EncodeRequest writes, that no piece is empty, that every
// non-empty payload and user-header block travels as the caller's own
// slice, and that the session and request-checksum stamps match the flat
// frame's.
func checkVector(t *testing.T, v *RequestVector, header RequestHeader, body *OutgoingMessages) {
	t.Helper()
	flat := make([]byte, RequestBytes(body))
	EncodeRequest(flat, header, body)
	joined := v.AppendTo(nil)
	if len(joined) != len(flat) || len(v.Head) != SendHeadBytes(body) {
		t.Fatalf("vector of %d bytes with a %d-byte head, want %d and %d", len(joined), len(v.Head), len(flat),
			SendHeadBytes(body))
	}
	if !bytes.Equal(joined, flat) {
		t.Fatalf("vector differs from the flat frame at byte %d of %d", firstDifference(joined, flat), len(flat))
	}
	aliased := 0
	for _, piece := range v.Pieces {
		if len(piece) == 0 {
			t.Fatal("an empty piece")
		}
		for i := range body.Messages {
			message := &body.Messages[i]
			if len(message.Payload) > 0 && &piece[0] == &message.Payload[0] ||
				len(message.UserHeaders) > 0 && &piece[0] == &message.UserHeaders[0] {
				aliased++
			}
		}
	}
	if want := nonEmptyBlocks(body.Messages); aliased != want {
		t.Fatalf("%d pieces are the caller's blocks, want %d", aliased, want)
	}
	client := Uint128{Lo: 7, Hi: 9}
	StampRequest(flat, client, 42, 3)
	StampRequestChecksum(flat)
	StampRequest(v.Head, client, 42, 3)
	v.StampRequestChecksum()
	if joined := v.AppendTo(nil); !bytes.Equal(joined, flat) {
		t.Fatalf("stamped vector differs from the stamped flat frame at byte %d", firstDifference(joined, flat))
	}
}

func nonEmptyBlocks(messages []OutgoingMessage) int {
	count := 0
	for i := range messages {
		count += min(len(messages[i].Payload), 1) + min(len(messages[i].UserHeaders), 1)
	}
	return count
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestRequestVectorMatchesFlat: over seeded random batches (sizes, user
// headers, empty and nil blocks, identifiers, partitionings), one reused
// RequestVector encodes the same bytes as EncodeRequest and passes the
// server's admission checks. -vector-seed replays a seed.
func TestRequestVectorMatchesFlat(t *testing.T) {
	seed := *vectorSeed
	if seed == 0 {
		seed = 0x5eed_7ec7
	}
	t.Logf("seed %d", seed)
	random := rand.New(rand.NewPCG(seed, 1))
	var v RequestVector
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	for round := range rounds {
		body := randomOutgoing(random, 1+random.IntN(200))
		if err := CheckOutgoing(body.Messages); err != nil {
			t.Fatalf("round %d: generated batch refused: %v", round, err)
		}
		header := RequestHeader{Operation: OperationSendMessages}
		if size := EncodeSendVector(&v, header, body); size != RequestBytes(body) {
			t.Fatalf("round %d: size %d, want %d", round, size, RequestBytes(body))
		}
		checkVector(t, &v, header, body)
		request, _, err := DecodeRequest(v.AppendTo(nil))
		if err != nil {
			t.Fatal(err)
		}
		var send SendMessages
		if err := DecodeAll(&send, request.Body); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if _, err := ValidateBatch(send.Batch); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}

// TestRequestVectorGolden: the golden SendMessages frame of
// messages_batch.json, encoded as a vector.
func TestRequestVectorGolden(t *testing.T) {
	var vectors batchVectors
	loadJSON(t, "messages_batch.json", &vectors)
	body := &OutgoingMessages{Stream: stream1, Topic: topicOrders, Partitioning: PartitionID(2),
		Messages: outgoingFromVectors(t, vectors.Send.Messages)}
	header := RequestHeader{Client: Uint128{Lo: 0x0807060504030201, Hi: 0x100f0e0d0c0b0a09}, Request: 11,
		Operation: OperationSendMessages, Session: 1}
	var v RequestVector
	EncodeSendVector(&v, header, body)
	if joined := v.AppendTo(nil); !bytes.Equal(joined, unhex(t, vectors.Send.Frame)) {
		t.Fatalf("vector frame\n%x\nwant\n%s", joined, vectors.Send.Frame)
	}
	checkVector(t, &v, header, body)
}

// TestRequestVectorRelease: a released vector holds no view of the
// messages and encodes the next batch from scratch.
func TestRequestVectorRelease(t *testing.T) {
	random := rand.New(rand.NewPCG(5, 6))
	var v RequestVector
	EncodeSendVector(&v, RequestHeader{Operation: OperationSendMessages}, randomOutgoing(random, 50))
	pieces := v.Pieces[:cap(v.Pieces)]
	v.Release()
	if joined := v.AppendTo(nil); len(v.Pieces) != 0 || len(joined) != 0 {
		t.Fatalf("released vector holds %d pieces, %d bytes", len(v.Pieces), len(joined))
	}
	for i, piece := range pieces {
		if piece != nil {
			t.Fatalf("piece %d still set after Release", i)
		}
	}
	body := randomOutgoing(random, 5)
	EncodeSendVector(&v, RequestHeader{Operation: OperationSendMessages}, body)
	checkVector(t, &v, RequestHeader{Operation: OperationSendMessages}, body)
}

// TestRequestVectorAllocations: re-encoding into a vector that has grown
// to the batch allocates nothing.
func TestRequestVectorAllocations(t *testing.T) {
	if invariant.Enabled {
		t.Skip("invariant builds compare every vector with a flat copy, which allocates")
	}
	body := randomOutgoing(rand.New(rand.NewPCG(7, 8)), 300)
	var v RequestVector
	header := RequestHeader{Operation: OperationSendMessages}
	EncodeSendVector(&v, header, body)
	if allocs := testing.AllocsPerRun(20, func() { EncodeSendVector(&v, header, body) }); allocs != 0 {
		t.Fatalf("EncodeSendVector allocates %.1f times", allocs)
	}
}

// FuzzRequestVector is a differential fuzz test: batches derived from the
// input bytes encode the same as a vector and as a flat frame.
func FuzzRequestVector(f *testing.F) {
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
		var v RequestVector
		EncodeSendVector(&v, RequestHeader{Operation: OperationSendMessages, Request: seed}, body)
		checkVector(t, &v, RequestHeader{Operation: OperationSendMessages, Request: seed}, body)
	})
}

// benchmarkMessages returns count messages of payloadBytes random bytes.
func benchmarkMessages(count, payloadBytes int) []OutgoingMessage {
	random := rand.New(rand.NewPCG(3, 4))
	messages := make([]OutgoingMessage, count)
	for i := range messages {
		payload := make([]byte, payloadBytes)
		for j := range payload {
			payload[j] = byte(random.Uint32())
		}
		messages[i] = OutgoingMessage{ID: Uint128{Lo: uint64(i)}, OriginTimestamp: uint64(i), Payload: payload}
	}
	return messages
}

var sendShapes = []struct{ count, payloadBytes int }{{1000, 1000}, {10, 1000}, {10, 100}, {100, 10000}, {1, 1 << 20}}

// BenchmarkEncodeSend compares a producer encoding a SendMessages request
// into one frame (flat: every payload copied) and as a vector (vector).
func BenchmarkEncodeSend(b *testing.B) {
	for _, shape := range sendShapes {
		body := &OutgoingMessages{Stream: NumericID(1), Topic: NamedID("orders"), Partitioning: PartitionID(0),
			Messages: benchmarkMessages(shape.count, shape.payloadBytes)}
		header := RequestHeader{Operation: OperationSendMessages}
		name := strconv.Itoa(shape.count) + "x" + strconv.Itoa(shape.payloadBytes)
		b.Run("flat/"+name, func(b *testing.B) {
			frame := make([]byte, RequestBytes(body))
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				EncodeRequest(frame, header, body)
			}
		})
		b.Run("vector/"+name, func(b *testing.B) {
			var v RequestVector
			b.SetBytes(int64(RequestBytes(body)))
			b.ReportAllocs()
			for b.Loop() {
				EncodeSendVector(&v, header, body)
			}
		})
	}
}

// BenchmarkFrameChecksum compares two ways to hash a frame whose header
// and payload lie apart: the streaming hasher, and copying both into a
// reused scratch for one one-shot hash. frameChecksum picks between them
// by frameScratchBytes.
func BenchmarkFrameChecksum(b *testing.B) {
	for _, payloadBytes := range []int{100, 1000, 4000, 64000} {
		message := benchmarkMessages(1, payloadBytes)[0]
		var header [MessageHeaderBytes]byte
		writeMessageHeader(header[:], &message, 0, 0)
		var hasher xxh3.Hasher
		streamed := func() uint64 {
			hasher.Reset()
			_, _ = hasher.Write(header[messageOffsetID:])
			_, _ = hasher.Write(message.Payload)
			_, _ = hasher.Write(message.UserHeaders)
			return hasher.Sum64()
		}
		var scratch []byte
		copied := func() uint64 {
			scratch = append(scratch[:0], header[messageOffsetID:]...)
			scratch = append(scratch, message.Payload...)
			scratch = append(scratch, message.UserHeaders...)
			return xxh3.Hash(scratch)
		}
		var v RequestVector
		if streamed() != copied() || copied() != v.frameChecksum(header[:], &message) {
			b.Fatal("the ways to hash a frame disagree")
		}
		for _, way := range []struct {
			name string
			hash func() uint64
		}{{"hasher", streamed}, {"scratch", copied}} {
			b.Run(way.name+"/payload="+strconv.Itoa(payloadBytes), func(b *testing.B) {
				b.SetBytes(int64(payloadBytes))
				b.ReportAllocs()
				for b.Loop() {
					way.hash()
				}
			})
		}
	}
}
