package classic

import "testing"

// Goal: the limits relate to each other the way the codec relies on; each
// check says why it must hold.
func TestLimits(t *testing.T) {
	// A SendMessages body may be larger than any control body: it carries the data.
	if SendMessagesBodyBytesMax < ControlBodyBytesMax {
		t.Fatal("SendMessages cap below the control cap")
	}
	// One batch must fit a 0.9 frame too, so a classic batch converts to one record.
	if SendMessagesBodyBytesMax > VSRFrameBytesMax {
		t.Fatal("a classic batch could exceed the 0.9 frame cap")
	}
	// A single message at the 0.8 caps must fit in one SendMessages body.
	if IndexEntryBytes+MessageHeaderBytes+MessagePayloadBytesMax+UserHeadersBytesMax+64 > SendMessagesBodyBytesMax {
		t.Fatal("a maximal message does not fit a SendMessages body")
	}
	// A client must accept the largest poll reply a server may build.
	if ReplyBodyBytesMax < SendMessagesBodyBytesMax {
		t.Fatal("a poll of one full batch would exceed the reply cap")
	}
	// MessagesCountMax counts the cheapest possible messages in a full body.
	if MessagesCountMax*(IndexEntryBytes+MessageHeaderBytes) > SendMessagesBodyBytesMax {
		t.Fatal("MessagesCountMax does not fit the body cap")
	}
	// The detector waits for a whole VSR header, which must exceed the prologue.
	if VSRHeaderBytes <= DetectPrologueBytes || DetectPrologueBytes != RequestPrologueBytes {
		t.Fatal("detection sizes inconsistent")
	}
	// Every classic code's minimum body must pass its own cap (detection step 3).
	for _, info := range codeTable {
		if info.bodyBytesMin > info.code.BodyBytesMax() || (info.emptyBody && info.bodyBytesMin != 0) {
			t.Fatalf("%v: minimum body %d", info.code, info.bodyBytesMin)
		}
	}
	// The server-side ranges sit inside the name8 wire range.
	if UsernameBytesMax > NameBytesMax || PasswordBytesMax > NameBytesMax || TokenNameBytesMax > NameBytesMax {
		t.Fatal("a server range exceeds the name8 wire range")
	}
	if DetectCandidateDeadline <= 0 {
		t.Fatal("the VSR candidate deadline must be positive")
	}
}

// Goal: pin the fixed sizes of the wire layouts.
func TestLayoutSizes(t *testing.T) {
	if MessageHeaderBytes != 64 || PollReplyHeaderBytes != 16 {
		t.Fatal("named layout sizes moved")
	}
	if got := len(AppendMessageHeader(nil, &MessageHeader{})); got != 64 {
		t.Fatalf("message header is %d bytes", got)
	}
	if got := len(AppendPollReplyHeader(nil, 0, 0, 0)); got != 16 {
		t.Fatalf("poll reply head is %d bytes", got)
	}
	if got := len(appendIdentifier(nil, num(7))); got != IdentifierNumericBytes {
		t.Fatalf("numeric identifier is %d bytes", got)
	}
	if got := len(appendOptionalPartition(nil, PartitionOf(1))); got != OptionalPartitionBytes {
		t.Fatalf("optional partition is %d bytes", got)
	}
	if got := len(indexEntry(0, 0, 0)); got != IndexEntryBytes {
		t.Fatalf("index entry is %d bytes", got)
	}
	if got := len(appendPartitionEntry(nil, &PartitionEntry{})); got != PartitionEntryBytes {
		t.Fatalf("partition entry is %d bytes", got)
	}
}

// Goal: the 0.8 ranges map to their statuses on both sides of each bound.
func TestServerRanges(t *testing.T) {
	name := func(n int) []byte { return make([]byte, n) }
	cases := []struct {
		username, password int
		want               Status
	}{
		{3, 3, StatusOK}, {50, 100, StatusOK}, {2, 3, StatusInvalidUsername}, {51, 3, StatusInvalidUsername},
		{3, 2, StatusInvalidPassword}, {3, 101, StatusInvalidPassword},
	}
	for _, c := range cases {
		if got := CheckCredentials(name(c.username), name(c.password)); got != c.want {
			t.Errorf("username %d password %d: %v, want %v", c.username, c.password, got, c.want)
		}
	}
	if CheckTokenName(name(2)) != StatusInvalidPersonalAccessTokenName || CheckTokenName(name(3)) != StatusOK ||
		CheckTokenName(name(30)) != StatusOK || CheckTokenName(name(31)) != StatusInvalidPersonalAccessTokenName {
		t.Error("token name range")
	}
}
