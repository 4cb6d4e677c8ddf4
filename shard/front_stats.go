package shard

import (
	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/wire"
)

// statsReads are the reads whose replies carry partition counters (sizes,
// message counts, current offsets): the front first gathers them from the
// partitions' owners, then answers from the view.
var statsReads = map[wire.Code]bool{
	wire.CodeGetStats:   true,
	wire.CodeGetStream:  true,
	wire.CodeGetStreams: true,
	wire.CodeGetTopic:   true,
	wire.CodeGetTopics:  true,
}

// topicsOfRead lists the topics whose partition counters a read reports.
func topicsOfRead(c *call, view *frontView) []topicRange {
	var streams []*metadata.Stream
	switch request := c.body.(type) {
	case *wire.StreamTarget: // GetStream, GetTopics
		streams = append(streams, view.streamOf(request.Stream))
	case *wire.TopicTarget: // GetTopic
		stream := view.streamOf(request.Stream)
		if topic := topicOf(stream, request.Topic); topic != nil {
			return []topicRange{{key: PartitionKey{Stream: stream.ID, Topic: topic.ID}, count: len(topic.Partitions)}}
		}
	default: // GetStreams
		streams = view.streams
	}
	var ranges []topicRange
	for _, stream := range streams {
		if stream == nil {
			continue
		}
		for _, topic := range stream.Topics {
			if topic != nil && len(topic.Partitions) > 0 {
				ranges = append(ranges, topicRange{key: PartitionKey{Stream: stream.ID, Topic: topic.ID},
					count: len(topic.Partitions)})
			}
		}
	}
	return ranges
}

// readWithStats gathers the counters a read reports, then runs it.
func (f *front) readWithStats(c *call, view *frontView, read func(f *front, c *call, view *frontView)) {
	local := f.server.data.Local(f.shard)
	collected := make(map[PartitionKey]PartitionStats)
	answer := func() {
		f.stats = collected
		read(f, c, view)
		f.stats = nil
		f.complete(c)
	}
	if c.code == wire.CodeGetStats {
		f.statsAll(c, view, read)
		return
	}
	ranges := topicsOfRead(c, view)
	pending := len(ranges)
	if pending == 0 {
		answer()
		return
	}
	for _, r := range ranges {
		op := local.Get()
		op.Key, op.PartitionCount = r.key, r.count
		op.Stats = make([]PartitionStats, r.count)
		op.Done = func(op *DataOp) {
			for i, stats := range op.Stats[:op.PartitionCount] {
				key := op.Key
				key.Partition += uint32(i)
				collected[key] = stats
			}
			local.Put(op)
			pending--
			if pending == 0 {
				answer()
			}
		}
		local.TopicStats(op)
	}
}

// statsAll answers GetStats with every shard's totals.
func (f *front) statsAll(c *call, view *frontView, read func(f *front, c *call, view *frontView)) {
	local := f.server.data.Local(f.shard)
	op := local.Get()
	op.Shards = make([]ShardDataStats, len(f.shard.Runtime().Shards()))
	op.Done = func(op *DataOp) {
		read(f, c, view)
		if stats, ok := c.payload.(*wire.Stats); ok {
			stats.SegmentsCount, stats.MessagesCount, stats.MessagesSizeBytes = 0, 0, 0
			for _, shard := range op.Shards {
				stats.SegmentsCount += uint32(shard.Segments)
				stats.MessagesCount += shard.MessagesCount
				stats.MessagesSizeBytes += uint64(shard.SizeBytes)
			}
		}
		local.Put(op)
		f.complete(c)
	}
	local.StatsAll(op)
}

// partitionInfo reports one partition with the counters gathered for the
// read being answered.
func (f *front) partitionInfo(streamID, topicID uint32, partition metadata.Partition) wire.PartitionInfo {
	info := wire.PartitionInfo{ID: partition.ID, CreatedAt: partition.CreatedAt, SegmentsCount: 1}
	stats, ok := f.stats[PartitionKey{Stream: streamID, Topic: topicID, Partition: partition.ID}]
	if !ok || stats.Err != nil {
		return info
	}
	info.SegmentsCount = uint32(max(stats.SegmentCount, 1))
	info.CurrentOffset = stats.CurrentOffset
	info.SizeBytes = uint64(max(stats.SizeBytes, 0))
	info.MessagesCount = stats.MessagesCount
	return info
}
