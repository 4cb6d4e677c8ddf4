package main

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"net/http"
	"reflect"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// field64 is one Iggy HeaderField as JSON: a kind and base64 bytes.
func field64(kind string, value []byte) map[string]any {
	return map[string]any{"kind": kind, "value": base64.StdEncoding.EncodeToString(value)}
}

// User headers go in and come out in Iggy's JSON shape: an array of
// {key, value} fields with base64 bytes; [] for none.
func TestHTTPMessageHeadersIggyShape(t *testing.T) {
	s := startServer(t)
	root := newAPI(t, s).basic("iggy", "iggy")
	root.want(http.StatusCreated, "POST", "/streams", map[string]string{"name": "h"})
	root.want(http.StatusCreated, "POST", "/streams/h/topics", map[string]any{"name": "t", "partitions_count": 2})
	partition1 := map[string]any{"kind": "partition_id", "value": base64.StdEncoding.EncodeToString([]byte{1, 0, 0, 0})}
	entries := []any{
		map[string]any{"key": field64("string", []byte("trace")), "value": field64("string", []byte("abc-1"))},
		map[string]any{"key": field64("string", []byte("count")),
			"value": field64("uint64", binary.LittleEndian.AppendUint64(nil, math.MaxUint64))},
		map[string]any{"key": field64("string", []byte("flag")), "value": field64("bool", []byte{1})},
		map[string]any{"key": field64("uint32", []byte{7, 0, 0, 0}), "value": field64("raw", []byte{0, 1, 255})},
	}
	root.want(http.StatusNoContent, "POST", "/streams/h/topics/t/messages", map[string]any{"partitioning": partition1,
		"messages": []map[string]any{{"payload": b64("one"), "user_headers": entries}, {"payload": b64("two")}}})
	polled := root.want(http.StatusOK, "GET", "/streams/h/topics/t/messages?partition_id=1&kind=offset&value=0&count=10", nil)
	messages := field(t, polled, "messages").([]any)
	if len(messages) != 2 {
		t.Fatalf("polled %v", polled)
	}
	if got := field(t, messages[0], "user_headers"); !reflect.DeepEqual(got, entries) {
		t.Fatalf("user_headers %#v\nwant %#v", got, entries)
	}
	if got, ok := field(t, messages[1], "user_headers").([]any); !ok || len(got) != 0 {
		t.Fatalf("a message without headers shows %#v, want []", field(t, messages[1], "user_headers"))
	}

	// The base64 block (Iggy's fallback), and the typed object under the
	// alias "headers", both read.
	block := make([]byte, wire.Headers{wire.StringHeader("k", "v")}.EncodedSize())
	wire.Headers{wire.StringHeader("k", "v")}.Encode(block)
	typed := []byte(`{"partitioning":{"kind":"partition_id","value":"AQAAAA=="},"messages":[` +
		`{"payload":"` + b64("three") + `","user_headers":"` + base64.StdEncoding.EncodeToString(block) + `"},` +
		`{"payload":"` + b64("four") + `","headers":{"n":{"kind":"int16","value":-2},"big":{"kind":"uint64",` +
		`"value":18446744073709551615},"s":{"kind":"string","value":"x y"},"f":{"kind":"float64","value":0.5}}}]}`)
	root.want(http.StatusNoContent, "POST", "/streams/h/topics/t/messages", typed)
	polled = root.want(http.StatusOK, "GET", "/streams/h/topics/t/messages?partition_id=1&kind=offset&value=2&count=10", nil)
	messages = field(t, polled, "messages").([]any)
	wantThree := []any{map[string]any{"key": field64("string", []byte("k")), "value": field64("string", []byte("v"))}}
	float := binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.5))
	wantFour := []any{ // sorted by key on the way in
		map[string]any{"key": field64("string", []byte("big")), "value": field64("uint64", binary.LittleEndian.AppendUint64(nil, math.MaxUint64))},
		map[string]any{"key": field64("string", []byte("f")), "value": field64("float64", float)},
		map[string]any{"key": field64("string", []byte("n")), "value": field64("int16", []byte{0xfe, 0xff})},
		map[string]any{"key": field64("string", []byte("s")), "value": field64("string", []byte("x y"))},
	}
	if len(messages) != 2 || !reflect.DeepEqual(field(t, messages[0], "user_headers"), wantThree) ||
		!reflect.DeepEqual(field(t, messages[1], "user_headers"), wantFour) {
		t.Fatalf("polled %v\nwant %v and %v", polled, wantThree, wantFour)
	}

	bad := []string{
		`[{"key":{"kind":"string","value":"eA=="},"value":{"kind":"uint8","value":"AAA="}}]`,
		`[{"key":{"kind":"string","value":"eA=="},"value":{"kind":"nope","value":"AA=="}}]`,
		`[{"key":{"kind":"string","value":""},"value":{"kind":"raw","value":"AA=="}}]`,
		`[{"key":{"kind":"string","value":"eA=="},"value":{"kind":"raw","value":"not base64!"}}]`,
		`{"x":{"kind":"uint8","value":256}}`, `{"x":{"kind":"int8","value":-129}}`,
		`{"x":{"kind":"bool","value":"yes"}}`, `{"x":{"kind":"string","value":""}}`,
		`{"x":{"kind":"uint32","value":1.5}}`, `"not base64!"`, `7`,
	}
	for _, headersText := range bad {
		root.wantError(http.StatusBadRequest, 4, "invalid_format", "POST", "/streams/h/topics/t/messages",
			[]byte(`{"messages":[{"payload":"`+b64("x")+`","user_headers":`+headersText+`}]}`))
	}
}
