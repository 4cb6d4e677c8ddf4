package classic

import (
	"bytes"
	"testing"
)

// Goal: the user-header blocks of the captured messages walk to the pairs
// the vector lists, re-encode identically, and bad blocks are refused.
func TestUserHeaders(t *testing.T) {
	want := [][]HeaderEntry{
		{{HeaderString, text("content-type"), HeaderString, text("application/json")}},
		{{HeaderInt32, []byte{7, 0, 0, 0}, HeaderBool, []byte{1}},
			{HeaderString, text("retries"), HeaderUint32, []byte{3, 0, 0, 0}}},
		{{HeaderString, text("trace"), HeaderRaw, []byte{0xde, 0xad, 0xbe, 0xef}}},
	}
	for i, message := range threeOrders() {
		it := UserHeaderEntries(message.UserHeaders)
		var rebuilt []byte
		count := 0
		for entry, ok := it.Next(); ok; entry, ok = it.Next() {
			if count >= len(want[i]) || fmtEntry(entry) != fmtEntry(want[i][count]) {
				t.Fatalf("message %d pair %d = %+v", i, count, entry)
			}
			var err error
			if rebuilt, err = AppendUserHeader(rebuilt, entry); err != nil {
				t.Fatal(err)
			}
			count++
		}
		if it.Err() != nil || count != len(want[i]) || !bytes.Equal(rebuilt, message.UserHeaders) {
			t.Fatalf("message %d: %d pairs, err %v", i, count, it.Err())
		}
	}
	bad := map[string][]byte{
		"kind 0":            {0, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'},
		"kind 16":           {16, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'},
		"empty key":         {2, 0, 0, 0, 0, 2, 1, 0, 0, 0, 'v'},
		"int32 of 3 bytes":  {2, 1, 0, 0, 0, 'k', 6, 3, 0, 0, 0, 1, 2, 3},
		"key without value": {2, 1, 0, 0, 0, 'k'},
		"truncated value":   {2, 1, 0, 0, 0, 'k', 2, 4, 0, 0, 0, 'v'},
	}
	for name, raw := range bad {
		if err := CheckUserHeaders(raw); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := CheckUserHeaders(nil); err != nil {
		t.Errorf("an empty block is valid: %v", err)
	}
	if _, err := AppendUserHeader(nil, HeaderEntry{HeaderBool, []byte{1, 2}, HeaderRaw, []byte{1}}); err == nil {
		t.Error("a two-byte bool key was encoded")
	}
}

func fmtEntry(e HeaderEntry) string {
	return string(rune(e.KeyKind)) + string(e.Key) + "|" + string(rune(e.ValueKind)) + string(e.Value)
}
