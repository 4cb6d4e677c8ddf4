package wire

import (
	"testing"
	"unsafe"
)

// TestLimits asserts the relationships between the named maxima and pins
// the fixed sizes.
func TestLimits(t *testing.T) {
	checks := []struct {
		ok  bool
		why string
	}{
		{HeaderBytes == 256, "the consensus header is pinned at 256 bytes (§2.1)"},
		{BatchHeaderBytes == 256 && MessageHeaderBytes == 48, "batch and frame headers are pinned (§8.2, §8.3)"},
		{FrameBytesMax == 64<<20, "readers on both sides bound frames at 64 MiB (§2.1)"},
		{BodyBytesMax+HeaderBytes == FrameBytesMax, "a body fills what the header leaves"},
		{PayloadBytesMax+UserHeadersBytesMax+MessageHeaderBytes+BatchHeaderBytes+64 <= BodyBytesMax,
			"one maximal message must fit a SendMessages frame with its metadata"},
		{MessagesPerBatchMax*MessageHeaderBytes+BatchHeaderBytes <= BodyBytesMax,
			"the message cap follows from the smallest frame"},
		{PollPrefixBytes+BatchHeaderBytes+MessageHeaderBytes <= BodyBytesMax, "a poll reply can carry one message"},
		{UsernameBytesMax <= NameBytesMax && PasswordBytesMax <= NameBytesMax, "credentials fit u8 lengths"},
		{UsernameBytesMin <= UsernameBytesMax && PasswordBytesMin <= PasswordBytesMax, "ranges are not empty"},
		{HeaderValueBytesMax == NameBytesMax, "TLV values share the u8-sized cap of names (§1.7)"},
		{OptionsEntriesMax*2*(tlvPrefixBytes+1) >= OptionsBlockBytesMax/10, "entry cap and byte cap are of one scale"},
		{PartitionsPerRequestMax < PartitionIDMax, "one request cannot exhaust the partition id space"},
		{ProtocolVersion == 0x2C00, "we speak packed protocol 0.11.0 (§1.10)"},
		{VersionAccepted(PackVersion(0, 11, 7), ProtocolVersion, ProtocolVersion), "patch levels are accepted"},
		{!VersionAccepted(PackVersion(0, 12, 0), ProtocolVersion, ProtocolVersion), "newer minors are not"},
		{!VersionAccepted(PackVersion(0, 10, 9), ProtocolVersion, ProtocolVersion), "older minors are not"},
		{unsafe.Sizeof(Uint128{}) == 16, "Uint128 is two words"},
		{ResultReplyBytes == HeaderBytes+12, "a committed rejection is one result entry"},
		{SegmentBytesMin%SegmentBytesAlignment == 0 && SegmentBytesMax%SegmentBytesAlignment == 0,
			"segment bounds are themselves legal segment sizes"},
		{SegmentBytesDefault >= SegmentBytesMin && SegmentBytesDefault <= SegmentBytesMax, "the default is in bounds"},
		{frameScratchBytes >= MessageHeaderBytes && frameScratchBytes <= 64<<10,
			"the checksum scratch holds a header tail and stays small enough to pool with every vector"},
	}
	for _, check := range checks {
		if !check.ok {
			t.Error(check.why)
		}
	}
}
