package ring

import "testing"

// TestLimits asserts the relationships between the named limits, each with
// the reason it must hold.
func TestLimits(t *testing.T) {
	checks := []struct {
		ok  bool
		why string
	}{
		{SQEntriesDefault&(SQEntriesDefault-1) == 0, "the kernel rounds SQ sizes up to a power of two; the default should not waste a half"},
		{SQEntriesDefault <= SQEntriesMax, "the default SQ size must be one the kernel accepts"},
		{CQEntriesPerSQEntry*SQEntriesDefault <= CQEntriesMax, "the default CQ size must be one the kernel accepts"},
		{CQEntriesPerSQEntry >= 2, "multishot ops post many CQEs per SQE: the CQ must outsize the SQ"},
		{CompletionsPerReapMax <= SQEntriesDefault, "one reap must fit in the default CQ, or the bound never binds"},
		{CompletionsPerReapMax >= 32, "a reap must batch enough CQEs to amortise the head store"},
		{HandlersMax == 1<<handlerBits, "the handler table must match the user_data bits that index it"},
		{handlerBits+tagBits == 64, "handler and tag must fill user_data exactly"},
		{BufRingEntriesMax <= 1<<16, "buffer IDs are 16 bits in a CQE"},
		{BufRingsMax <= 1<<16, "buffer group IDs are 16 bits in an SQE"},
		{PoolBuffersMax <= 1<<16, "READ_FIXED/WRITE_FIXED carry the buffer index in 16 bits"},
		{BufferBytesMax <= 1<<30, "the kernel rejects registered buffers over 1 GiB"},
		{PageBytes%512 == 0, "O_DIRECT needs at least 512-byte alignment"},
		{FilesMax <= 1<<20, "the kernel's fixed file table is capped at rlimit/IORING_MAX_FIXED_FILES"},
		{ringFDSlotsMax == 16, "the kernel's IO_RINGFD_REG_MAX"},
	}
	for _, check := range checks {
		if !check.ok {
			t.Error(check.why)
		}
	}
}
