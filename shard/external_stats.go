package shard

// QueueDepth returns how many cross-shard messages wait in this shard's
// inbound queues: a snapshot for metrics, safe from any goroutine,
// because each queue's head and tail are atomics and the queue set is
// fixed before the shards start.
func (sh *Shard) QueueDepth() int {
	depth := 0
	for _, queue := range sh.inbox {
		if queue != nil {
			depth += queue.Len()
		}
	}
	return depth
}
