package metadata

import "testing"

// TestLimits relates the metadata limits and says why each holds.
func TestLimits(t *testing.T) {
	check := func(ok bool, why string) {
		t.Helper()
		if !ok {
			t.Error(why)
		}
	}
	check(nameBytesMax == 255, "names are name8 on the wire: at most 255 bytes")
	check(usernameBytesMin == 3 && usernameBytesMax == 50, "usernames are 3..50 bytes (PROTOCOL.md §9)")
	check(partitionsPerRequest == 1000, "one request creates or deletes at most 1000 partitions")
	check(partitionsPerRequest <= partitionsPerTopicMax, "one request fits in a topic")
	check(topicsPerStreamMax == 4096 && streamsMax == 1<<20, "the stream and topic limits of the reference server")
	check(tokensPerUserMax == 100, "max_tokens_per_user is 100")
	check(recordBytesMax >= 2*100_000, "a record holds a topic's largest option block with room for the rest")
	check(snapshotRecords > 0 && snapshotRecords*recordBytesMax <= 1<<31, "the log stays small enough to read whole at open")
	check(snapshotBytesMax >= recordBytesMax, "a snapshot holds at least one record's worth")
}
