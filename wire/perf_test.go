package wire

import (
	"math/rand/v2"
	"testing"

	"github.com/whippetio/whippet/internal/invariant"
)

// TestSteadyPathAllocations: decoding SendMessages and PollMessages
// requests, admitting and stamping a batch, slicing it and decoding and
// walking a poll reply allocate nothing.
func TestSteadyPathAllocations(t *testing.T) {
	send := expectedSendMessages(t)
	sendFrame := make([]byte, RequestBytes(send))
	EncodeRequest(sendFrame, RequestHeader{Client: Uint128{Lo: 1}, Request: 1, Operation: OperationSendMessages,
		Session: 1}, send)
	poll := expectedRequests()["PollMessages"]
	pollFrame := make([]byte, RequestBytes(poll))
	EncodeRequest(pollFrame, RequestHeader{Client: Uint128{Lo: 1}, Request: 1, Operation: OperationNonReplicated,
		Session: 1, Code: CodePollMessages}, poll)
	stored := append([]byte(nil), send.Batch...)
	StampBatch(stored, 2, 100, 1)
	pollReply := make([]byte, PollPrefixBytes+len(stored))
	EncodePollPrefix(pollReply, 2, 102, 3)
	copy(pollReply[PollPrefixBytes:], stored)

	var sendBody SendMessages
	var pollBody PollMessages
	var polled PolledMessages
	cases := []struct {
		name string
		run  func() error
	}{
		{"decode SendMessages request", func() error {
			request, _, err := DecodeRequest(sendFrame)
			if err != nil {
				return err
			}
			return DecodeAll(&sendBody, request.Body)
		}},
		{"decode PollMessages request", func() error {
			request, _, err := DecodeRequest(pollFrame)
			if err != nil {
				return err
			}
			return DecodeAll(&pollBody, request.Body)
		}},
		{"validate and stamp batch", func() error {
			if _, err := ValidateBatch(sendBody.Batch); err != nil {
				return err
			}
			StampBatch(stored, 2, 100, 1)
			return nil
		}},
		{"slice batch", func() error {
			if _, ok := SliceBatch(stored, 101, 1); !ok {
				return StatusError
			}
			return nil
		}},
		{"decode and walk poll reply", func() error {
			if err := DecodeAll(&polled, pollReply[:]); err != nil {
				return err
			}
			iterator := polled.Messages()
			for _, ok := iterator.Next(); ok; _, ok = iterator.Next() {
			}
			return nil
		}},
	}
	for _, test := range cases {
		if err := test.run(); err != nil {
			t.Fatalf("%s: %v", test.name, err)
		}
		if invariant.Enabled {
			continue // invariant builds re-verify sliced records, which allocates
		}
		if allocs := testing.AllocsPerRun(100, func() { _ = test.run() }); allocs != 0 {
			t.Errorf("%s: %.1f allocations per run, want 0", test.name, allocs)
		}
	}
}

// benchmarkBatch builds a batch record of about batchBytes with payloads of
// payloadBytes and a small user-header block on every message.
func benchmarkBatch(b *testing.B, batchBytes, payloadBytes int) []byte {
	random := rand.New(rand.NewPCG(1, 2))
	headers := Headers{StringHeader("trace", "abc")}
	encodedHeaders := make([]byte, headers.EncodedSize())
	headers.Encode(encodedHeaders)
	count := (batchBytes - BatchHeaderBytes) / (MessageHeaderBytes + payloadBytes + len(encodedHeaders))
	messages := make([]OutgoingMessage, count)
	for i := range messages {
		payload := make([]byte, payloadBytes)
		for j := range payload {
			payload[j] = byte(random.Uint32())
		}
		messages[i] = OutgoingMessage{ID: Uint128{Lo: uint64(i + 1)}, OriginTimestamp: 1700000000000000 + uint64(i),
			Payload: payload, UserHeaders: encodedHeaders}
	}
	batch := make([]byte, BatchBytes(messages))
	EncodeBatch(batch, messages)
	return batch
}

// BenchmarkValidateBatch measures admission of 1 MiB batches, checksums
// included, at several message sizes.
func BenchmarkValidateBatch(b *testing.B) {
	for _, payloadBytes := range []int{100, 1000, 4000, 64000} {
		b.Run("payload="+itoa(payloadBytes), func(b *testing.B) {
			batch := benchmarkBatch(b, 1<<20, payloadBytes)
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ValidateBatch(batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncodeBatch measures a producer building a 1 MiB batch.
func BenchmarkEncodeBatch(b *testing.B) {
	random := rand.New(rand.NewPCG(3, 4))
	messages := make([]OutgoingMessage, 1000)
	for i := range messages {
		payload := make([]byte, 1000)
		for j := range payload {
			payload[j] = byte(random.Uint32())
		}
		messages[i] = OutgoingMessage{ID: Uint128{Lo: uint64(i)}, OriginTimestamp: uint64(i), Payload: payload}
	}
	batch := make([]byte, BatchBytes(messages))
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		EncodeBatch(batch, messages)
	}
}

// BenchmarkDecodeSendMessages measures the request decode of the hot path.
func BenchmarkDecodeSendMessages(b *testing.B) {
	batch := benchmarkBatch(b, 1<<20, 1000)
	send := &SendMessages{Stream: NumericID(1), Topic: NamedID("orders"), Partitioning: PartitionID(0),
		MessagesCount: readBatchHeader(batch).MessageCount, Batch: batch}
	frame := make([]byte, RequestBytes(send))
	EncodeRequest(frame, RequestHeader{Client: Uint128{Lo: 1}, Request: 1, Operation: OperationSendMessages,
		Session: 1}, send)
	var body SendMessages
	b.ReportAllocs()
	for b.Loop() {
		request, _, err := DecodeRequest(frame)
		if err != nil {
			b.Fatal(err)
		}
		if err := DecodeAll(&body, request.Body); err != nil {
			b.Fatal(err)
		}
	}
}

func itoa(value int) string {
	digits := []byte{}
	for {
		digits = append([]byte{byte('0' + value%10)}, digits...)
		value /= 10
		if value == 0 {
			return string(digits)
		}
	}
}

// TestRequestSetCoversEveryCode: every known code except the legacy logins
// has a member, decoding into it allocates nothing for the hot commands,
// and each golden body decodes into the set as into a fresh value.
func TestRequestSetCoversEveryCode(t *testing.T) {
	var set RequestSet
	for _, code := range Codes() {
		_, ok, _ := set.Decode(code, nil)
		legacy := code == CodeLoginUser || code == CodeLoginWithPersonalAccessToken
		if ok == legacy {
			t.Errorf("%s: member %v", code, ok)
		}
	}
	send := expectedSendMessages(t)
	body := make([]byte, send.EncodedSize())
	send.Encode(body)
	allocs := testing.AllocsPerRun(100, func() {
		if _, _, err := set.Decode(CodeSendMessages, body); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("RequestSet.Decode(SendMessages) allocates %.1f", allocs)
	}
}
