package wire

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
)

// Durability levels of our `durability` topic option (§15 #9).
const (
	DurabilityMemory     = "memory"
	DurabilityWritten    = "written"
	DurabilityPersisted  = "persisted"
	DurabilityReplicated = "replicated"
)

// TopicSettings are a topic's resolved options (§6.5 catalog).
type TopicSettings struct {
	Compression                  Compression
	MessageExpiry                uint64 // µs; ExpiryNever = never
	MaxTopicSize                 uint64 // bytes; ExpiryNever = unlimited
	SegmentSize                  uint64
	EnforceFsync                 bool
	MessagesRequiredToSave       uint32
	SizeOfMessagesRequiredToSave uint64
	PreallocateSegments          bool
	Durability                   string
}

// DefaultTopicSettings returns the server defaults of §6.5.
func DefaultTopicSettings() TopicSettings {
	return TopicSettings{
		Compression: CompressionNone, MessageExpiry: ExpiryNever, MaxTopicSize: ExpiryNever,
		SegmentSize: SegmentBytesDefault, MessagesRequiredToSave: MessagesRequiredToSaveDefault,
		SizeOfMessagesRequiredToSave: SizeOfMessagesRequiredToSaveDefault, Durability: DurabilityPersisted,
	}
}

// topicCatalog lists the topic options in catalog order with their
// canonical kinds and descriptions.
var topicCatalog = [...]struct {
	key         string
	kind        HeaderKind
	description string
}{
	{OptionCompressionAlgorithm, HeaderString, "Compression algorithm (none, gzip)"},
	{OptionMessageExpiry, HeaderUint64, "Message expiry in microseconds"},
	{OptionMaxTopicSize, HeaderUint64, "Maximum topic size in bytes"},
	{OptionSegmentSize, HeaderUint64, "Segment size in bytes (512-byte multiple, 1 MiB..1 GiB)"},
	{OptionEnforceFsync, HeaderBool, "Fsync every append"},
	{OptionMessagesRequiredToSave, HeaderUint32, "Messages buffered before a save"},
	{OptionSizeOfMessagesRequiredToSave, HeaderUint64, "Bytes buffered before a save"},
	{OptionPreallocateSegments, HeaderBool, "Preallocate segment files"},
	{OptionDurability, HeaderString, "Acknowledge after memory, written, persisted or replicated"},
}

// TopicCatalog returns the DescribeOptions reply for the topic scope: each
// key with its canonical kind and the default, canonically encoded.
func TopicCatalog() OptionSpecs {
	defaults := DefaultTopicSettings()
	specs := make(OptionSpecs, len(topicCatalog))
	for i, entry := range topicCatalog {
		specs[i] = OptionSpec{Key: entry.key, Kind: entry.kind, Default: defaults.value(entry.key).Value,
			Description: entry.description}
	}
	return specs
}

// Apply resolves options over s. updatableOnly restricts the keys to the
// three UpdateTopic accepts (§6.5). It returns StatusUnsupportedOptionKey
// for a key outside the catalog (or an unknown durability, §15 #9),
// StatusInvalidOptionValue for a value of the wrong kind or out of bounds,
// and StatusInvalidTopicSize when max_topic_size is below the segment size.
// s is unchanged on error.
func (s *TopicSettings) Apply(options Headers, updatableOnly bool) error {
	resolved := *s
	for _, entry := range options {
		key := string(entry.Key.Value)
		if updatableOnly && key != OptionCompressionAlgorithm && key != OptionMessageExpiry && key != OptionMaxTopicSize {
			return StatusUnsupportedOptionKey
		}
		if err := resolved.applyOne(key, entry.Value); err != nil {
			return err
		}
	}
	if resolved.MaxTopicSize != 0 && resolved.MaxTopicSize != ExpiryNever && resolved.MaxTopicSize < resolved.SegmentSize {
		return StatusInvalidTopicSize
	}
	*s = resolved
	return nil
}

func (s *TopicSettings) applyOne(key string, value HeaderValue) error {
	var ok bool
	switch key {
	case OptionCompressionAlgorithm:
		s.Compression, ok = parseCompression(value)
	case OptionMessageExpiry:
		s.MessageExpiry, ok = optionUint64(value, parseDuration)
	case OptionMaxTopicSize:
		s.MaxTopicSize, ok = optionUint64(value, parseByteSize)
	case OptionSegmentSize:
		s.SegmentSize, ok = optionUint64(value, parseByteSize)
		if s.SegmentSize == 0 {
			s.SegmentSize = SegmentBytesDefault
		}
		ok = ok && s.SegmentSize >= SegmentBytesMin && s.SegmentSize <= SegmentBytesMax &&
			s.SegmentSize%SegmentBytesAlignment == 0
	case OptionEnforceFsync:
		s.EnforceFsync, ok = optionBool(value)
	case OptionMessagesRequiredToSave:
		var count uint64
		count, ok = optionUint64(value, nil)
		ok = ok && count >= 1 && count <= math.MaxUint32
		s.MessagesRequiredToSave = uint32(count)
	case OptionSizeOfMessagesRequiredToSave:
		s.SizeOfMessagesRequiredToSave, ok = optionUint64(value, parseByteSize)
		if s.SizeOfMessagesRequiredToSave == 0 {
			s.SizeOfMessagesRequiredToSave = SizeOfMessagesRequiredToSaveDefault
		}
	case OptionPreallocateSegments:
		s.PreallocateSegments, ok = optionBool(value)
	case OptionDurability:
		if value.Kind != HeaderString {
			return StatusInvalidOptionValue
		}
		switch text := string(value.Value); text {
		case DurabilityMemory, DurabilityWritten, DurabilityPersisted, DurabilityReplicated:
			s.Durability, ok = text, true
		default:
			return StatusUnsupportedOptionKey
		}
	default:
		return StatusUnsupportedOptionKey
	}
	if !ok {
		return StatusInvalidOptionValue
	}
	return nil
}

// Explicit returns the options block a topic reply carries for the keys
// the client set, re-encoded in canonical kinds and catalog order.
func (s *TopicSettings) Explicit(options Headers) Headers {
	var explicit Headers
	for _, entry := range topicCatalog {
		if _, set := options.Lookup(entry.key); set {
			explicit = append(explicit, HeaderEntry{HeaderValue{HeaderString, []byte(entry.key)}, s.value(entry.key)})
		}
	}
	return explicit
}

// Derived returns the resolved catalog keys the client did not set (§7.2).
func (s *TopicSettings) Derived(options Headers) Headers {
	var derived Headers
	for _, entry := range topicCatalog {
		if _, set := options.Lookup(entry.key); !set {
			derived = append(derived, HeaderEntry{HeaderValue{HeaderString, []byte(entry.key)}, s.value(entry.key)})
		}
	}
	return derived
}

func (s *TopicSettings) value(key string) HeaderValue {
	switch key {
	case OptionCompressionAlgorithm:
		return HeaderValue{HeaderString, []byte(s.Compression.String())} // settings hold only parsed algorithms
	case OptionMessageExpiry:
		return HeaderValue{HeaderUint64, binary.LittleEndian.AppendUint64(nil, s.MessageExpiry)}
	case OptionMaxTopicSize:
		return HeaderValue{HeaderUint64, binary.LittleEndian.AppendUint64(nil, s.MaxTopicSize)}
	case OptionSegmentSize:
		return HeaderValue{HeaderUint64, binary.LittleEndian.AppendUint64(nil, s.SegmentSize)}
	case OptionEnforceFsync:
		return boolValue(s.EnforceFsync)
	case OptionMessagesRequiredToSave:
		return HeaderValue{HeaderUint32, binary.LittleEndian.AppendUint32(nil, s.MessagesRequiredToSave)}
	case OptionSizeOfMessagesRequiredToSave:
		return HeaderValue{HeaderUint64, binary.LittleEndian.AppendUint64(nil, s.SizeOfMessagesRequiredToSave)}
	case OptionPreallocateSegments:
		return boolValue(s.PreallocateSegments)
	}
	return HeaderValue{HeaderString, []byte(s.Durability)}
}

func boolValue(value bool) HeaderValue {
	if value {
		return HeaderValue{HeaderBool, []byte{1}}
	}
	return HeaderValue{HeaderBool, []byte{0}}
}

func parseCompression(value HeaderValue) (Compression, bool) {
	if value.Kind != HeaderString {
		return 0, false
	}
	switch strings.ToLower(string(value.Value)) {
	case "none":
		return CompressionNone, true
	case "gzip":
		return CompressionGzip, true
	}
	return 0, false
}

func optionUint64(value HeaderValue, parseText func(string) (uint64, bool)) (uint64, bool) {
	if value.Kind == HeaderString && parseText != nil {
		return parseText(strings.TrimSpace(string(value.Value)))
	}
	return value.Uint64()
}

func optionBool(value HeaderValue) (bool, bool) {
	if value.Kind == HeaderString {
		switch strings.ToLower(string(value.Value)) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
		return false, false
	}
	return value.Bool()
}

var durationUnits = map[string]uint64{
	"us": 1, "µs": 1, "usec": 1, "ms": 1_000, "msec": 1_000,
	"s": 1_000_000, "sec": 1_000_000, "secs": 1_000_000, "second": 1_000_000, "seconds": 1_000_000,
	"m": 60_000_000, "min": 60_000_000, "mins": 60_000_000, "minute": 60_000_000, "minutes": 60_000_000,
	"h": 3_600_000_000, "hr": 3_600_000_000, "hrs": 3_600_000_000, "hour": 3_600_000_000, "hours": 3_600_000_000,
	"d": 86_400_000_000, "day": 86_400_000_000, "days": 86_400_000_000,
	"w": 604_800_000_000, "week": 604_800_000_000, "weeks": 604_800_000_000,
}

// parseDuration reads a humantime string ("1h 30m", "500ms") as µs;
// "none", "never" and "unlimited" mean ExpiryNever.
func parseDuration(text string) (uint64, bool) {
	switch strings.ToLower(text) {
	case "none", "never", "unlimited":
		return ExpiryNever, true
	case "server_default", "0":
		return 0, true
	}
	total := uint64(0)
	fields := strings.Fields(text)
	for _, field := range fields {
		number, unit := splitNumber(field)
		scale, known := durationUnits[strings.ToLower(unit)]
		value, err := strconv.ParseUint(number, 10, 64)
		if !known || err != nil || value > (math.MaxUint64-total)/scale {
			return 0, false
		}
		total += value * scale
	}
	return total, len(fields) > 0
}

var byteUnits = map[string]uint64{
	"": 1, "b": 1, "kb": 1_000, "kib": 1 << 10, "mb": 1_000_000, "mib": 1 << 20,
	"gb": 1_000_000_000, "gib": 1 << 30, "tb": 1_000_000_000_000, "tib": 1 << 40,
}

// parseByteSize reads "1 GiB", "500MB" or "4096"; "unlimited" and "none"
// mean ExpiryNever.
func parseByteSize(text string) (uint64, bool) {
	switch strings.ToLower(text) {
	case "unlimited", "none":
		return ExpiryNever, true
	}
	number, unit := splitNumber(strings.ReplaceAll(text, " ", ""))
	scale, known := byteUnits[strings.ToLower(unit)]
	value, err := strconv.ParseUint(number, 10, 64)
	if !known || err != nil || value > math.MaxUint64/scale {
		return 0, false
	}
	return value * scale, true
}

func splitNumber(text string) (number, unit string) {
	end := 0
	for end < len(text) && text[end] >= '0' && text[end] <= '9' {
		end++
	}
	return text[:end], text[end:]
}
