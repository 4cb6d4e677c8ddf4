package shard

import "testing"

// TestDataLimits asserts the relationships between the data plane's named
// limits, each with the reason it must hold.
func TestDataLimits(t *testing.T) {
	check := func(ok bool, why string) {
		t.Helper()
		if !ok {
			t.Error(why)
		}
	}
	check(dataOpsPerShardMax >= connectionsPerShardMax*inflightRequestsMax, "every in-flight frame of a shard can hold one data op")
	check(dataPendingSendsMax >= (shardCountMax-1)*dataOpsPerShardMax+dataOpsPerShardMax, "held messages cover a shard's own requests and its replies to every peer")
	check(dataOpsPoolMax <= dataOpsPerShardMax, "the free pool never keeps more ops than can be live")
	check(partitionParkedMax >= inflightRequestsMax, "one connection's whole pipeline can park on a busy partition")
	check(storageDeliverMax >= completionsPerTurnMax, "a delivery runs at least as many namespace completions as a turn reaps")
	check(dataRetryPeriod > 0 && dataRetryPeriod < spinMax, "the retry timer fires every turn, shorter than any wait")
	check(dataTickIntervalDefault < dataMaintenanceIntervalDefault, "ticks (stalled-write retries) come more often than retention")
	check(dataStopWait < dataStopTimeout, "a stopping shard waits in steps within its timeout")
	check(shardCountMax <= 64, "a topic op's owners fit one 64-bit mask")
	check(dataMessageLast-dataMessageBase < 16, "the data plane's message kinds stay in their small range")
	check(NamespaceStreamMax == 1<<20-1 && NamespaceTopicMax == 1<<12-1, "the namespace packs 20 stream bits and 12 topic bits (IGGY-SERVER-NOTES §3.3)")
	check(NamespacePartitionMax < 1<<20, "partition ids fit the namespace's low 20 bits")
}
