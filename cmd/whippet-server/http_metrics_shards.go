package main

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/whippetio/whippet/shard"
)

// shardCollector exports each shard's counters. It reads only atomics
// the shards publish (Shard.Stats, Connections, QueueDepth), so a scrape
// takes no lock and adds no work on a shard's thread.
type shardCollector struct {
	shards []*shard.Shard
}

var (
	descShardConnections = prometheus.NewDesc("whippet_shard_connections", "Connections a shard owns.", []string{"shard"}, nil)
	descShardQueueDepth  = prometheus.NewDesc("whippet_shard_queue_depth",
		"Cross-shard messages waiting in a shard's inbound queues.", []string{"shard"}, nil)
	descShardRequests = prometheus.NewDesc("whippet_shard_requests_total", "Request frames a shard received.", []string{"shard"}, nil)
	descShardBytesIn  = prometheus.NewDesc("whippet_shard_received_bytes_total", "Bytes a shard received.", []string{"shard"}, nil)
	descShardBytesOut = prometheus.NewDesc("whippet_shard_sent_bytes_total", "Bytes a shard sent.", []string{"shard"}, nil)
	descShardMessages = prometheus.NewDesc("whippet_shard_cross_messages_total",
		"Cross-shard messages a shard handled.", []string{"shard"}, nil)
	descShardAccepted = prometheus.NewDesc("whippet_shard_connections_accepted_total",
		"Connections a shard took ownership of.", []string{"shard"}, nil)
	descShardMovedIn = prometheus.NewDesc("whippet_shard_connections_moved_in_total",
		"Connections other shards moved to this one because their partitions live here.", []string{"shard"}, nil)
	descShardMovedOut = prometheus.NewDesc("whippet_shard_connections_moved_out_total",
		"Connections this shard moved to the shard owning their partitions.", []string{"shard"}, nil)
	descShardStreamed = prometheus.NewDesc("whippet_shard_streamed_sends_total",
		"Large sends a shard began writing while they arrived.", []string{"shard"}, nil)
	descShardStreamsDropped = prometheus.NewDesc("whippet_shard_streamed_sends_dropped_total",
		"Streamed sends that ended without storing and were appended whole, or not at all.", []string{"shard"}, nil)
	descShardBytesInPlace = prometheus.NewDesc("whippet_shard_poll_bytes_in_place_total",
		"Poll reply bytes a shard sent straight from the cache, without a copy.", []string{"shard"}, nil)
	descShardRepliesCopied = prometheus.NewDesc("whippet_shard_poll_replies_copied_out_total",
		"Poll replies copied out of the cache because a slow reader's pins held back eviction.", []string{"shard"}, nil)
	descShardPinned = prometheus.NewDesc("whippet_shard_cache_pinned_records",
		"Cache records pinned now by poll replies not yet sent.", []string{"shard"}, nil)
	descCacheRecords = prometheus.NewDesc("whippet_shard_cache_records",
		"Batches a shard's cache holds, with dead ones (a deleted partition's) its tail has not passed yet (as of its last data tick).", []string{"shard"}, nil)
	descCacheBytes = prometheus.NewDesc("whippet_shard_cache_bytes",
		"Bytes of the batches a shard's cache holds (as of its last data tick).", []string{"shard"}, nil)
	descCacheCapacity = prometheus.NewDesc("whippet_shard_cache_capacity_bytes",
		"Arena memory a shard's cache claimed from the shared budget (system.cache.size).", []string{"shard"}, nil)
	descCacheEvicted = prometheus.NewDesc("whippet_shard_cache_evicted_records_total",
		"Batches a shard's cache evicted to make room.", []string{"shard"}, nil)
)

func (c *shardCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, desc := range []*prometheus.Desc{descShardConnections, descShardQueueDepth, descShardRequests,
		descShardBytesIn, descShardBytesOut, descShardMessages, descShardAccepted, descShardMovedIn, descShardMovedOut,
		descShardStreamed, descShardStreamsDropped, descShardBytesInPlace, descShardRepliesCopied, descShardPinned,
		descCacheRecords, descCacheBytes, descCacheCapacity, descCacheEvicted} {
		ch <- desc
	}
}

func (c *shardCollector) Collect(ch chan<- prometheus.Metric) {
	for _, sh := range c.shards {
		label := strconv.Itoa(sh.ID())
		stats := sh.Stats()
		ch <- prometheus.MustNewConstMetric(descShardConnections, prometheus.GaugeValue, float64(sh.Connections()), label)
		ch <- prometheus.MustNewConstMetric(descShardQueueDepth, prometheus.GaugeValue, float64(sh.QueueDepth()), label)
		ch <- prometheus.MustNewConstMetric(descShardRequests, prometheus.CounterValue, float64(stats.FramesIn), label)
		ch <- prometheus.MustNewConstMetric(descShardBytesIn, prometheus.CounterValue, float64(stats.BytesIn), label)
		ch <- prometheus.MustNewConstMetric(descShardBytesOut, prometheus.CounterValue, float64(stats.BytesOut), label)
		ch <- prometheus.MustNewConstMetric(descShardMessages, prometheus.CounterValue, float64(stats.MessagesIn), label)
		ch <- prometheus.MustNewConstMetric(descShardAccepted, prometheus.CounterValue, float64(stats.ConnsAdopted), label)
		ch <- prometheus.MustNewConstMetric(descShardMovedIn, prometheus.CounterValue, float64(stats.ConnsMovedIn), label)
		ch <- prometheus.MustNewConstMetric(descShardMovedOut, prometheus.CounterValue, float64(stats.ConnsMovedOut), label)
		ch <- prometheus.MustNewConstMetric(descShardStreamed, prometheus.CounterValue, float64(stats.StreamsOpened), label)
		ch <- prometheus.MustNewConstMetric(descShardStreamsDropped, prometheus.CounterValue, float64(stats.StreamsAborted), label)
		ch <- prometheus.MustNewConstMetric(descShardBytesInPlace, prometheus.CounterValue, float64(stats.BytesInPlace), label)
		ch <- prometheus.MustNewConstMetric(descShardRepliesCopied, prometheus.CounterValue, float64(stats.RepliesCopied), label)
		ch <- prometheus.MustNewConstMetric(descShardPinned, prometheus.GaugeValue, float64(stats.SpansPinned), label)
		ch <- prometheus.MustNewConstMetric(descCacheRecords, prometheus.GaugeValue, float64(stats.CacheRecords), label)
		ch <- prometheus.MustNewConstMetric(descCacheBytes, prometheus.GaugeValue, float64(stats.CacheBytes), label)
		ch <- prometheus.MustNewConstMetric(descCacheCapacity, prometheus.GaugeValue, float64(stats.CacheCapacityBytes), label)
		ch <- prometheus.MustNewConstMetric(descCacheEvicted, prometheus.CounterValue, float64(stats.CacheEvicted), label)
	}
}

var descRequestLatency = prometheus.NewDesc("whippet_request_duration_seconds",
	"Server-side request latency by command (start to reply ready), over TCP, TLS and HTTP alike.", []string{"command"}, nil)

// latencyCollector exports the shards' request latency tables, summed
// over shards.
type latencyCollector struct {
	server *shard.Server
}

func (c *latencyCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descRequestLatency }

func (c *latencyCollector) Collect(ch chan<- prometheus.Metric) {
	type total struct {
		counts [shard.LatencyBucketCount]uint64
		sum    uint64
	}
	byCode := map[string]*total{}
	var names []string
	for _, entry := range c.server.RequestLatencies() {
		name := entry.Code.String()
		sum := byCode[name]
		if sum == nil {
			sum = &total{}
			byCode[name] = sum
			names = append(names, name)
		}
		for i, count := range entry.Counts {
			sum.counts[i] += count
		}
		sum.sum += entry.SumNanos
	}
	for _, name := range names {
		sum := byCode[name]
		ch <- latencyHistogram(descRequestLatency, &sum.counts, sum.sum, name)
	}
}

var descFileLatency = prometheus.NewDesc("whippet_file_op_duration_seconds",
	"Segment file op latency by kind (write: the append path's disk time; fsync: its durability wait), submit to completion.",
	[]string{"shard", "op"}, nil)

// fileCollector exports each shard's file op latency histograms.
type fileCollector struct {
	shards []*shard.Shard
}

func (c *fileCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descFileLatency }

func (c *fileCollector) Collect(ch chan<- prometheus.Metric) {
	for _, sh := range c.shards {
		for _, entry := range sh.FileLatencies() {
			ch <- latencyHistogram(descFileLatency, &entry.Counts, entry.SumNanos, strconv.Itoa(sh.ID()),
				entry.Kind.String())
		}
	}
}

var descAppendLatency = prometheus.NewDesc("whippet_append_duration_seconds",
	"End-to-end append latency: a send's batch from the data plane's start to the topic's durability point "+
		"(persisted: after the fdatasync), cross-shard hops included; by the shard of the sending connection.",
	[]string{"shard"}, nil)

// appendCollector exports each shard's end-to-end append histogram.
type appendCollector struct {
	server *shard.Server
}

func (c *appendCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descAppendLatency }

func (c *appendCollector) Collect(ch chan<- prometheus.Metric) {
	for _, entry := range c.server.AppendLatencies() {
		ch <- latencyHistogram(descAppendLatency, &entry.Counts, entry.SumNanos, strconv.Itoa(entry.Shard))
	}
}

// latencyHistogram turns a shard latency table (per-bucket counts, the
// last bucket open-ended) into Prometheus's cumulative histogram.
func latencyHistogram(desc *prometheus.Desc, counts *[shard.LatencyBucketCount]uint64, sumNanos uint64,
	labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, shard.LatencyBucketCount-1)
	cumulative := uint64(0)
	for i := range shard.LatencyBucketCount - 1 {
		cumulative += counts[i]
		buckets[shard.LatencyBucketBound(i).Seconds()] = cumulative
	}
	cumulative += counts[shard.LatencyBucketCount-1]
	return prometheus.MustNewConstHistogram(desc, cumulative, float64(sumNanos)/1e9, buckets, labels...)
}
