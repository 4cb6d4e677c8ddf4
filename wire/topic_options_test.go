package wire

import (
	"reflect"
	"testing"
)

// TestTopicOptionsGolden resolves the golden CreateTopic options and
// compares the reply blocks and the catalog with the golden replies.
func TestTopicOptionsGolden(t *testing.T) {
	request := expectedRequests()["CreateTopic"].(*CreateTopic)
	settings := DefaultTopicSettings()
	if err := settings.Apply(request.Options, false); err != nil {
		t.Fatal(err)
	}
	if settings.Compression != CompressionGzip || settings.MessageExpiry != 3600000000 {
		t.Fatalf("resolved %+v", settings)
	}
	reply := ordersTopic(0, 0)
	if explicit := settings.Explicit(request.Options); !reflect.DeepEqual(explicit, reply.Options) {
		t.Fatalf("explicit options %v, want %v", explicit, reply.Options)
	}
	derived := settings.Derived(request.Options)
	for _, want := range reply.DerivedOptions { // the golden reply abbreviates the derived block
		got, ok := derived.Lookup(string(want.Key.Value))
		if !ok || !reflect.DeepEqual(got, want.Value) {
			t.Fatalf("derived %s = %v, want %v", want.Key.Value, got, want.Value)
		}
	}
	golden := *expectedReplies()["DescribeOptions"].(*OptionSpecs)
	if catalog := TopicCatalog(); !reflect.DeepEqual(catalog[:len(golden)], golden) {
		t.Fatalf("catalog %v, want prefix %v", catalog[:len(golden)], golden)
	}
}

// TestTopicOptionsRules covers the §6.5 rules one row at a time.
func TestTopicOptionsRules(t *testing.T) {
	rows := []struct {
		name      string
		options   Headers
		updatable bool
		want      error
		check     func(TopicSettings) bool
	}{
		{"humantime expiry", Headers{StringHeader(OptionMessageExpiry, "1h 30m")}, false, nil,
			func(s TopicSettings) bool { return s.MessageExpiry == 5400_000_000 }},
		{"byte-size max", Headers{StringHeader(OptionMaxTopicSize, "2 GiB")}, false, nil,
			func(s TopicSettings) bool { return s.MaxTopicSize == 2<<30 }},
		{"string bool", Headers{StringHeader(OptionEnforceFsync, "true")}, false, nil,
			func(s TopicSettings) bool { return s.EnforceFsync }},
		{"durability", Headers{StringHeader(OptionDurability, "memory")}, false, nil,
			func(s TopicSettings) bool { return s.Durability == DurabilityMemory }},
		{"segment size zero is default", Headers{Uint64Header(OptionSegmentSize, 0)}, false, nil,
			func(s TopicSettings) bool { return s.SegmentSize == SegmentBytesDefault }},
		{"unknown key", Headers{StringHeader("colour", "red")}, false, StatusUnsupportedOptionKey, nil},
		{"unknown durability", Headers{StringHeader(OptionDurability, "paper")}, false, StatusUnsupportedOptionKey, nil},
		{"update outside its keys", Headers{Uint64Header(OptionSegmentSize, 1<<20)}, true, StatusUnsupportedOptionKey, nil},
		{"wrong kind", Headers{Uint64Header(OptionCompressionAlgorithm, 2)}, false, StatusInvalidOptionValue, nil},
		{"unaligned segment", Headers{Uint64Header(OptionSegmentSize, 1<<20+1)}, false, StatusInvalidOptionValue, nil},
		{"segment too small", Headers{Uint64Header(OptionSegmentSize, 4096)}, false, StatusInvalidOptionValue, nil},
		{"zero messages to save", Headers{Uint32Header(OptionMessagesRequiredToSave, 0)}, false, StatusInvalidOptionValue, nil},
		{"bad humantime", Headers{StringHeader(OptionMessageExpiry, "soon")}, false, StatusInvalidOptionValue, nil},
		{"max below segment", Headers{Uint64Header(OptionMaxTopicSize, 1<<20)}, false, StatusInvalidTopicSize, nil},
	}
	for _, row := range rows {
		settings := DefaultTopicSettings()
		err := settings.Apply(row.options, row.updatable)
		if err != row.want {
			t.Errorf("%s: %v, want %v", row.name, err, row.want)
			continue
		}
		if err != nil && settings != DefaultTopicSettings() {
			t.Errorf("%s: settings changed on error", row.name)
		}
		if row.check != nil && !row.check(settings) {
			t.Errorf("%s: resolved %+v", row.name, settings)
		}
	}
}

// TestCompressionString names both algorithms and shows an unknown value's
// number instead of passing it off as "none".
func TestCompressionString(t *testing.T) {
	rows := map[Compression]string{CompressionNone: "none", CompressionGzip: "gzip", 0: "unknown(0)", 7: "unknown(7)"}
	for value, want := range rows {
		if got := value.String(); got != want {
			t.Errorf("Compression(%d).String() = %q, want %q", uint8(value), got, want)
		}
	}
}
