package wire

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// TestBodyRejects: each row is a malformed body for one command and the
// rule its DecodeError must name. A server answers all of them status 3.
func TestBodyRejects(t *testing.T) {
	rows := []struct {
		name string
		code Code
		hex  string
		want string
	}{
		{"identifier kind 3", CodeGetStream, "030401000000", "identifier kind unknown"},
		{"numeric identifier of 3 bytes", CodeGetStream, "0103010000", "numeric identifier length not 4"},
		{"empty string identifier", CodeGetStream, "0200", "empty identifier name"},
		{"truncated identifier", CodeGetStream, "01040100", "need 4 bytes, have 2"},
		{"trailing byte", CodeGetStream, "01040100000000", "trailing bytes"},
		{"consumer kind 3", CodeGetConsumerOffset, "03010407000000" + "010401000000" + "010402000000" + "0000000000", "consumer kind unknown"},
		{"partition flag 2", CodeGetConsumerOffset, "01010407000000" + "010401000000" + "010402000000" + "0200000000", "boolean not 0 or 1"},
		{"absent partition with an id", CodeGetConsumerOffset, "01010407000000" + "010401000000" + "010402000000" + "0002000000", "absent partition"},
		{"poll strategy 6", CodePollMessages, "010104070000000104010000000104020000000102000000" + "06" + "0000000000000000" + "0a000000" + "00", "polling strategy unknown"},
		{"poll strategy 0", CodePollMessages, "010104070000000104010000000104020000000102000000" + "00" + "0000000000000000" + "0a000000" + "00", "polling strategy unknown"},
		{"empty stream name", CodeCreateStream, "00", "empty name"},
		{"option kind zero", CodeCreateStream, "0470726f64" + "00020000006b31" + "02020000007631", "kind zero"},
		{"option length zero", CodeCreateStream, "0470726f64" + "02000000006b31", "length outside 1..255"},
		{"option length 256", CodeCreateStream, "0470726f64" + "0200010000", "length outside 1..255"},
		{"option key without value", CodeCreateStream, "0470726f64" + "02020000006b31", "header value"},
		{"option key not a string", CodeCreateStream, "0470726f64" + "01020000006b31" + "02020000007631", "not a UTF-8 String"},
		{"option key not UTF-8", CodeCreateStream, "0470726f64" + "0202000000ff31" + "02020000007631", "not a UTF-8 String"},
		{"duplicate option key", CodeCreateStream, "0470726f64" + "02020000006b31" + "02020000007631" + "02020000006b31" + "02020000007632", "duplicate option key"},
		{"fixed kind of wrong size", CodeCreateStream, "0470726f64" + "02020000006b31" + "0c0400000001000000", "does not match its kind"},
		{"user status 3", CodeCreateUser, "05616c69636503616263" + "03" + "00", "unknown user status"},
		{"permissions length lies", CodeUpdatePermissions, "0205616c696365" + "01" + "05000000" + "0000000000000000000000", "permissions length"},
		{"ack level 2", CodeDeleteConsumerOffset, "0101040700000001040100000002066f7264657273010200000002", "ack level unknown"},
		{"options scope 4", CodeDescribeOptions, "04", "options scope unknown"},
		{"snapshot type 7", CodeGetSnapshot, "010107", "snapshot type unknown"},
		{"login in neither shape", CodeLoginRegister, "002c000006676f2d73646b0c302e392e302d656467652e34" + "00", "login"},
		{"login without prefix", CodeLoginRegister, "002c0000", "sdk name"},
		{"send metadata length lies", CodeSendMessages, "1900000001040100000002066f72646572730204020000000300000000", "metadata length"},
		{"send count zero", CodeSendMessages, "1800000001040100000002066f72646572730204020000000000000000", "messages count zero"},
		{"send batch shorter than its header", CodeSendMessages, "1800000001040100000002066f726465727302040200000003000000" + "00", "batch header"},
		{"partitioning key empty", CodeSendMessages, "1400000001040100000002066f72646572730300" + "01000000", "partitioning"},
	}
	for _, row := range rows {
		body, ok := NewRequestBody(row.code)
		if !ok {
			t.Fatalf("%s: no body for %s", row.name, row.code)
		}
		err := DecodeAll(body, unhex(t, row.hex))
		var decodeErr *DecodeError
		if !errors.As(err, &decodeErr) || !strings.Contains(err.Error(), row.want) {
			t.Errorf("%s: error %v, want a DecodeError naming %q", row.name, err, row.want)
			continue
		}
		if StatusOf(err) != StatusInvalidCommand {
			t.Errorf("%s: status %v, want InvalidCommand", row.name, StatusOf(err))
		}
	}
}

// TestBatchRejects corrupts the golden batch one field at a time; each
// corruption must be refused with the status a server answers.
func TestBatchRejects(t *testing.T) {
	golden := expectedSendMessages(t).Batch
	rows := []struct {
		name   string
		mutate func(batch []byte) []byte
		want   Status
	}{
		{"payload byte flipped", func(b []byte) []byte { b[BatchHeaderBytes+MessageHeaderBytes] ^= 1; return b }, StatusInvalidMessageChecksum},
		{"user header byte flipped", func(b []byte) []byte { b[BatchHeaderBytes+66] ^= 1; return b }, StatusInvalidMessageChecksum},
		{"batch checksum flipped", func(b []byte) []byte { b[batchOffsetChecksum] ^= 1; return b }, StatusInvalidBatchChecksum},
		{"origin timestamp changed", func(b []byte) []byte { b[batchOffsetOriginTimestamp] ^= 1; return b }, StatusInvalidBatchChecksum},
		{"batch reserved byte", func(b []byte) []byte { b[200] = 1; return b }, StatusInvalidReservedField},
		{"message reserved byte", func(b []byte) []byte { b[BatchHeaderBytes+messageOffsetReserved] = 1; return b }, StatusInvalidReservedField},
		{"message count too high", func(b []byte) []byte { b[batchOffsetMessageCount] = 4; return b }, StatusInvalidMessagesCount},
		{"message count zero", func(b []byte) []byte { b[batchOffsetMessageCount] = 0; return b }, StatusInvalidMessagesCount},
		{"offset delta skips", func(b []byte) []byte {
			b[BatchHeaderBytes+messageOffsetOffsetDelta] = 1
			frameBytes := readMessageHeader(b[BatchHeaderBytes:]).FrameBytes()
			binary.LittleEndian.PutUint64(b[BatchHeaderBytes:], Checksum(b[BatchHeaderBytes+8:BatchHeaderBytes+frameBytes]))
			binary.LittleEndian.PutUint64(b[batchOffsetChecksum:], BatchChecksum(b))
			return b
		}, StatusInvalidMessagesCount},
		{"batch length lies", func(b []byte) []byte { b[batchOffsetLength]++; return b }, StatusInvalidMessagesSize},
		{"truncated last frame", func(b []byte) []byte {
			b = b[:len(b)-1]
			binary.LittleEndian.PutUint64(b[batchOffsetLength:], uint64(len(b)))
			return b
		}, StatusInvalidMessagesSize},
		{"payload length overruns", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[BatchHeaderBytes+messageOffsetPayloadLength:], 1<<20)
			return b
		}, StatusInvalidMessagesSize},
		{"payload above the cap", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[BatchHeaderBytes+messageOffsetPayloadLength:], PayloadBytesMax+1)
			return b
		}, StatusTooBigMessagePayload},
	}
	if _, err := ValidateBatch(golden); err != nil {
		t.Fatalf("golden batch rejected: %v", err)
	}
	for _, row := range rows {
		batch := row.mutate(append([]byte(nil), golden...))
		_, err := ValidateBatch(batch)
		if StatusOf(err) != row.want {
			t.Errorf("%s: %v, want status %s", row.name, err, row.want)
		}
		var batchErr *BatchError
		if err != nil && !errors.As(err, &batchErr) {
			t.Errorf("%s: error of type %T", row.name, err)
		}
	}
}

// TestHeaderRejects covers the frame-level rules of §2.
func TestHeaderRejects(t *testing.T) {
	valid := make([]byte, HeaderBytes)
	EncodeRequest(valid, RequestHeader{Client: Uint128{Lo: 1}, Request: 1, Operation: OperationNonReplicated,
		Code: CodePing}, nil)
	rows := []struct {
		name   string
		mutate func(frame []byte)
		want   string
	}{
		{"reply command", func(f []byte) { f[offsetCommand] = byte(CommandReply) }, "not Request"},
		{"reserved frame byte", func(f []byte) { f[100] = 1 }, "reserved header byte"},
		{"padding byte", func(f []byte) { f[180] = 1 }, "padding"},
		{"tail reserved byte", func(f []byte) { f[255] = 1 }, "reserved header byte"},
		{"size below 256", func(f []byte) { binary.LittleEndian.PutUint32(f[offsetSize:], 255) }, "frame size"},
		{"size above 64 MiB", func(f []byte) { binary.LittleEndian.PutUint32(f[offsetSize:], FrameBytesMax+1) }, "frame size"},
		{"size beyond the input", func(f []byte) { binary.LittleEndian.PutUint32(f[offsetSize:], 300) }, "need 44 bytes, have 0"},
	}
	for _, row := range rows {
		frame := append([]byte(nil), valid...)
		row.mutate(frame)
		_, _, err := DecodeRequest(frame)
		if err == nil || !strings.Contains(err.Error(), row.want) {
			t.Errorf("%s: %v, want %q", row.name, err, row.want)
		}
	}
	invalid := []struct {
		header RequestHeader
		want   string
	}{
		{RequestHeader{Operation: OperationNonReplicated}, "client id is zero"},
		{RequestHeader{Client: Uint128{Hi: 1}}, "operation not declared"},
		{RequestHeader{Client: Uint128{Hi: 1}, Operation: 99, Request: 1}, "operation not declared"},
		{RequestHeader{Client: Uint128{Hi: 1}, Operation: OperationRegister, Session: 1}, "non-zero session"},
		{RequestHeader{Client: Uint128{Hi: 1}, Operation: OperationRegister, Request: 1}, "non-zero request"},
		{RequestHeader{Client: Uint128{Hi: 1}, Operation: OperationCreateStream, Session: 1}, "request id zero"},
		{RequestHeader{Client: Uint128{Hi: 1}, Operation: OperationCreateStream, Request: 1}, ""},
		{RequestHeader{Client: Uint128{Hi: 1}, Operation: OperationNonReplicated}, ""},
	}
	for _, row := range invalid {
		got := row.header.Invalid()
		if (row.want == "") != (got == "") || !strings.Contains(got, row.want) {
			t.Errorf("Invalid(%+v) = %q, want %q", row.header, got, row.want)
		}
	}
}

// TestReplyChannels checks the three error channels and the result-section
// rules of §4.1 from the client's side.
func TestReplyChannels(t *testing.T) {
	buffer := make([]byte, 1024)
	header := ReplyHeader{Client: Uint128{Lo: 9}, Request: 3, Operation: OperationCreateStream}
	size := EncodeResultReply(buffer, header, StatusStreamNameAlreadyExists)
	reply, _, err := DecodeReply(buffer[:size])
	if err != nil || !errors.Is(reply.Err(), StatusStreamNameAlreadyExists) {
		t.Fatalf("result channel: %v / %v", err, reply.Err())
	}
	size = EncodeStatusReply(buffer, header, StatusUnauthorized)
	if reply, _, _ = DecodeReply(buffer[:size]); !errors.Is(reply.Err(), StatusUnauthorized) {
		t.Fatalf("status channel: %v", reply.Err())
	}
	eviction := EvictionHeader{Client: Uint128{Lo: 9}, Reason: EvictionIncompatibleProtocol}
	eviction.Encode(buffer)
	if reply, _, _ = DecodeReply(buffer[:HeaderBytes]); !errors.Is(reply.Err(), StatusUnauthenticated) {
		t.Fatalf("eviction without a window must degrade to Unauthenticated: %v", reply.Err())
	}
	short := EncodeReply(buffer, header, nil)
	binary.LittleEndian.PutUint32(buffer[HeaderBytes:], 2) // two results, none present
	if _, _, err := DecodeReply(buffer[:short]); err == nil {
		t.Fatal("a result section longer than the body decoded")
	}
	buffer[offsetCommand] = byte(CommandPrepare)
	if _, _, err := DecodeReply(buffer[:short]); err == nil {
		t.Fatal("a Prepare frame decoded as a reply")
	}
	var topics TopicList
	hostile := []byte{0xff, 0xff, 0xff, 0xff}
	if err := DecodeAll(&topics, hostile); err == nil || cap(topics) != 0 {
		t.Fatal("a hostile count was trusted")
	}
}

// TestAssemblerRejectsBadSize: a declared size outside 256..64 MiB breaks
// the stream as soon as the header is complete.
func TestAssemblerRejectsBadSize(t *testing.T) {
	frame := make([]byte, HeaderBytes)
	binary.LittleEndian.PutUint32(frame[offsetSize:], 100)
	var assembler Assembler
	if _, err := assembler.Write(frame[:200]); err != nil {
		t.Fatalf("error before the header is complete: %v", err)
	}
	if _, err := assembler.Write(frame[200:]); err == nil {
		t.Fatal("size 100 accepted")
	}
}

// TestConsumerKey: numeric consumers key by number, named ones by XXH32
// of the name (the reference value of messages_batch.json).
func TestConsumerKey(t *testing.T) {
	if key := (Consumer{Kind: ConsumerSingle, ID: NumericID(7)}).Key(); key != 7 {
		t.Fatalf("numeric key %d", key)
	}
	if key := (Consumer{Kind: ConsumerSingle, ID: NamedID("order-key-1")}).Key(); key != 0x0d3fe0e1 {
		t.Fatalf("named key %#x", key)
	}
}
