package main

import (
	"bytes"
	"errors"
	"testing"

	"github.com/whippetio/whippet/wire"
)

// TestParseHeader: each --header spelling encodes to the wire kind and
// little-endian bytes of §1.7 and renders back to the text it came from;
// malformed values are usage errors.
func TestParseHeader(t *testing.T) {
	cases := []struct {
		text  string
		kind  wire.HeaderKind
		value []byte
		shown string
	}{
		{"k:string:v", wire.HeaderString, []byte("v"), "v"},
		{"k:v", wire.HeaderString, []byte("v"), "v"},
		{"k:url:http://x", wire.HeaderString, []byte("url:http://x"), "url:http://x"},
		{"k:bool:true", wire.HeaderBool, []byte{1}, "true"},
		{"k:int8:-2", wire.HeaderInt8, []byte{0xfe}, "-2"},
		{"k:int16:-3", wire.HeaderInt16, []byte{0xfd, 0xff}, "-3"},
		{"k:int64:-1", wire.HeaderInt64, bytes.Repeat([]byte{0xff}, 8), "-1"},
		{"k:uint32:258", wire.HeaderUint32, []byte{2, 1, 0, 0}, "258"},
		{"k:uint64:1", wire.HeaderUint64, []byte{1, 0, 0, 0, 0, 0, 0, 0}, "1"},
		{"k:float32:1.5", wire.HeaderFloat32, []byte{0, 0, 0xc0, 0x3f}, "1.5"},
		{"k:raw:0a0b", wire.HeaderRaw, []byte{0x0a, 0x0b}, "0x0a0b"},
	}
	for _, c := range cases {
		entry, err := parseHeader(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		if string(entry.Key.Value) != "k" || entry.Value.Kind != c.kind || !bytes.Equal(entry.Value.Value, c.value) {
			t.Fatalf("%s: got %+v", c.text, entry)
		}
		if shown := headerText(entry.Value); shown != c.shown {
			t.Fatalf("%s: rendered %q, want %q", c.text, shown, c.shown)
		}
	}
	for _, bad := range []string{"novalue", ":string:v", "k:uint8:256", "k:int8:x", "k:bool:maybe", "k:raw:zz",
		"k:string:"} {
		var usage *usageError
		if _, err := parseHeader(bad); !errors.As(err, &usage) {
			t.Fatalf("%q: got %v, want a usage error", bad, err)
		}
	}
}

// TestParseLifetime: token lifetimes in humantime words, with the
// never and server-default sentinels.
func TestParseLifetime(t *testing.T) {
	cases := []struct {
		words []string
		want  uint64
	}{
		{nil, 0},
		{[]string{"server_default"}, 0},
		{[]string{"never"}, wire.ExpiryNever},
		{[]string{"1day", "12h"}, 36 * 3600 * 1_000_000},
		{[]string{"1", "day", "30", "min"}, (24*60 + 30) * 60 * 1_000_000},
		{[]string{"90s"}, 90 * 1_000_000},
		{[]string{"2w"}, 14 * 86400 * 1_000_000},
	}
	for _, c := range cases {
		got, err := parseLifetime(c.words)
		if err != nil || got != c.want {
			t.Fatalf("%q: got %d, %v; want %d", c.words, got, err, c.want)
		}
	}
	for _, bad := range [][]string{{"soon"}, {"3", "fortnights"}, {"h"}, {"99999999999999999999w"}} {
		if _, err := parseLifetime(bad); err == nil {
			t.Fatalf("%q: accepted", bad)
		}
	}
}
