package main

import (
	"encoding/base64"
	"net/http"
	"reflect"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// User headers go in and come out as Iggy's typed JSON object.
func TestHTTPMessageHeadersTyped(t *testing.T) {
	s := startServer(t)
	root := newAPI(t, s).basic("iggy", "iggy")
	root.want(http.StatusCreated, "POST", "/streams", map[string]string{"name": "h"})
	root.want(http.StatusCreated, "POST", "/streams/h/topics", map[string]any{"name": "t", "partitions_count": 2})
	body := []byte(`{"partitioning":{"kind":"partition_id","value":"` + base64.StdEncoding.EncodeToString([]byte{1, 0, 0, 0}) +
		`"},"messages":[{"payload":"` + b64("one") + `","headers":{` +
		`"trace":{"kind":"string","value":"abc-1"},"blob":{"kind":"raw","value":"AAH/"},` +
		`"flag":{"kind":"bool","value":true},"count":{"kind":"uint64","value":18446744073709551615},` +
		`"delta":{"kind":"int32","value":-7},"ratio":{"kind":"float64","value":0.25},` +
		`"huge":{"kind":"uint128","value":"340282366920938463463374607431768211455"},` +
		`"signed":{"kind":"int8","value":-128}}},` +
		`{"payload":"` + b64("two") + `"}]}`)
	root.want(http.StatusNoContent, "POST", "/streams/h/topics/t/messages", body)
	polled := root.want(http.StatusOK, "GET", "/streams/h/topics/t/messages?partition_id=1&kind=offset&value=0&count=10", nil)
	messages := field(t, polled, "messages").([]any)
	if len(messages) != 2 {
		t.Fatalf("polled %v", polled)
	}
	want := map[string]any{
		"trace":  map[string]any{"kind": "string", "value": "abc-1"},
		"blob":   map[string]any{"kind": "raw", "value": "AAH/"},
		"flag":   map[string]any{"kind": "bool", "value": true},
		"count":  map[string]any{"kind": "uint64", "value": 18446744073709551615.0},
		"delta":  map[string]any{"kind": "int32", "value": -7.0},
		"ratio":  map[string]any{"kind": "float64", "value": 0.25},
		"huge":   map[string]any{"kind": "uint128", "value": "340282366920938463463374607431768211455"},
		"signed": map[string]any{"kind": "int8", "value": -128.0},
	}
	if got := field(t, messages[0], "user_headers"); !reflect.DeepEqual(got, want) {
		t.Fatalf("user_headers %#v\nwant %#v", got, want)
	}
	if got := field(t, messages[1], "user_headers"); got != nil {
		t.Fatalf("a message without headers shows %v", got)
	}
	// Iggy's name for the poll field is accepted on send too; the legacy
	// base64 TLV block still reads.
	block := make([]byte, wire.Headers{wire.StringHeader("k", "v")}.EncodedSize())
	wire.Headers{wire.StringHeader("k", "v")}.Encode(block)
	root.want(http.StatusNoContent, "POST", "/streams/h/topics/t/messages", map[string]any{
		"partitioning": map[string]any{"kind": "partition_id", "value": base64.StdEncoding.EncodeToString([]byte{1, 0, 0, 0})},
		"messages": []map[string]any{
			{"payload": b64("three"), "user_headers": map[string]any{"a": map[string]any{"kind": "uint8", "value": 255}}},
			{"payload": b64("four"), "user_headers": base64.StdEncoding.EncodeToString(block)}}})
	polled = root.want(http.StatusOK, "GET", "/streams/h/topics/t/messages?partition_id=1&kind=offset&value=2&count=10", nil)
	messages = field(t, polled, "messages").([]any)
	if len(messages) != 2 || field(t, messages[0], "user_headers", "a", "value") != 255.0 ||
		field(t, messages[1], "user_headers", "k", "value") != "v" {
		t.Fatalf("polled %v", polled)
	}
	bad := []string{
		`{"x":{"kind":"uint8","value":256}}`, `{"x":{"kind":"int8","value":-129}}`,
		`{"x":{"kind":"bool","value":"yes"}}`, `{"x":{"kind":"raw","value":"not base64!"}}`,
		`{"x":{"kind":"nope","value":1}}`, `{"x":{"kind":"string","value":""}}`, `[1,2]`,
		`{"x":{"kind":"uint32","value":1.5}}`,
	}
	for _, headersText := range bad {
		root.wantError(http.StatusBadRequest, 4, "invalid_format", "POST", "/streams/h/topics/t/messages",
			[]byte(`{"messages":[{"payload":"`+b64("x")+`","headers":`+headersText+`}]}`))
	}
}
