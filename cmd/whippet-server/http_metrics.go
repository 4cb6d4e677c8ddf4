package main

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// metrics is the Prometheus registry behind /metrics. Entity and lag
// gauges are read at scrape time through one admin session, with the
// same commands a client would send, so nothing is added to the shards'
// request path; the request histogram is observed by the gateway.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.HistogramVec
	scraper  *scraper
}

func newMetrics(admin func(ctx context.Context) (*client.Client, error)) *metrics {
	m := &metrics{registry: prometheus.NewRegistry(), scraper: &scraper{admin: admin}}
	m.requests = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "whippet_http_request_duration_seconds",
		Help:    "HTTP API request latency by route and outcome.",
		Buckets: prometheus.ExponentialBuckets(0.00005, 2, 18)}, []string{"route", "outcome"})
	m.registry.MustRegister(m.requests, m.scraper)
	return m
}

func (m *metrics) observeRequest(route, outcome string, elapsed time.Duration) {
	m.requests.WithLabelValues(route, outcome).Observe(elapsed.Seconds())
}

var (
	descPartitionMessages = prometheus.NewDesc("whippet_partition_messages", "Messages held by a partition.",
		[]string{"stream", "topic", "partition"}, nil)
	descPartitionBytes = prometheus.NewDesc("whippet_partition_bytes", "Bytes held by a partition.",
		[]string{"stream", "topic", "partition"}, nil)
	descPartitionOffset = prometheus.NewDesc("whippet_partition_current_offset", "Offset of a partition's last message.",
		[]string{"stream", "topic", "partition"}, nil)
	descGroupLagMessages = prometheus.NewDesc("whippet_consumer_group_lag_messages",
		"Messages of a partition after the group's stored offset.", []string{"stream", "topic", "group", "partition"}, nil)
	descGroupLagSeconds = prometheus.NewDesc("whippet_consumer_group_lag_seconds",
		"Age of the group's next unconsumed message in a partition (0 when caught up).",
		[]string{"stream", "topic", "group", "partition"}, nil)
	descClients  = prometheus.NewDesc("whippet_clients", "Connected clients (TCP, TLS and HTTP sessions).", nil, nil)
	descEntities = prometheus.NewDesc("whippet_entities", "Entities on the server by kind.", []string{"kind"}, nil)
	descMessages = prometheus.NewDesc("whippet_messages", "Messages on the server.", nil, nil)
	descBytes    = prometheus.NewDesc("whippet_messages_bytes", "Bytes of messages on the server.", nil, nil)
	descUp       = prometheus.NewDesc("whippet_scrape_ok", "1 when the last scrape read the server.", nil, nil)
)

// scraper collects the server's state at scrape time.
type scraper struct {
	admin func(ctx context.Context) (*client.Client, error)
	mu    sync.Mutex // one scrape at a time on the admin session
}

func (s *scraper) Describe(ch chan<- *prometheus.Desc) {
	for _, desc := range []*prometheus.Desc{descPartitionMessages, descPartitionBytes, descPartitionOffset,
		descGroupLagMessages, descGroupLagSeconds, descClients, descEntities, descMessages, descBytes, descUp} {
		ch <- desc
	}
}

func (s *scraper) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), httpRequestTimeout)
	defer cancel()
	ok := 1.0
	if err := s.collect(ctx, ch); err != nil {
		ok = 0
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, ok)
}

func (s *scraper) collect(ctx context.Context, ch chan<- prometheus.Metric) error {
	c, err := s.admin(ctx)
	if err != nil {
		return err
	}
	stats, err := c.GetStats(ctx)
	if err != nil {
		return err
	}
	gauge := prometheus.GaugeValue
	ch <- prometheus.MustNewConstMetric(descClients, gauge, float64(stats.ClientsCount))
	ch <- prometheus.MustNewConstMetric(descMessages, gauge, float64(stats.MessagesCount))
	ch <- prometheus.MustNewConstMetric(descBytes, gauge, float64(stats.MessagesSizeBytes))
	for kind, count := range map[string]uint32{"streams": stats.StreamsCount, "topics": stats.TopicsCount,
		"partitions": stats.PartitionsCount, "segments": stats.SegmentsCount, "consumer_groups": stats.ConsumerGroupsCount} {
		ch <- prometheus.MustNewConstMetric(descEntities, gauge, float64(count), kind)
	}
	streams, err := c.GetStreams(ctx)
	if err != nil {
		return err
	}
	for _, stream := range streams {
		topics, err := c.GetTopics(ctx, wire.NumericID(stream.ID))
		if err != nil {
			return err
		}
		for _, topic := range topics {
			if err := s.collectTopic(ctx, c, ch, stream.Name, wire.NumericID(stream.ID), topic.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *scraper) collectTopic(ctx context.Context, c *client.Client, ch chan<- prometheus.Metric, streamName string,
	stream wire.Identifier, topicID uint32) error {
	details, err := c.GetTopic(ctx, stream, wire.NumericID(topicID))
	if err != nil {
		return err
	}
	for _, partition := range details.Partitions {
		labels := []string{streamName, details.Name, strconv.FormatUint(uint64(partition.ID), 10)}
		ch <- prometheus.MustNewConstMetric(descPartitionMessages, prometheus.GaugeValue, float64(partition.MessagesCount), labels...)
		ch <- prometheus.MustNewConstMetric(descPartitionBytes, prometheus.GaugeValue, float64(partition.SizeBytes), labels...)
		ch <- prometheus.MustNewConstMetric(descPartitionOffset, prometheus.GaugeValue, float64(partition.CurrentOffset), labels...)
	}
	groups, err := c.GetConsumerGroups(ctx, stream, wire.NumericID(topicID))
	if err != nil {
		return err
	}
	for _, group := range groups {
		for _, partition := range details.Partitions {
			if err := s.collectLag(ctx, c, ch, streamName, details, group, partition); err != nil {
				return err
			}
		}
	}
	return nil
}

// collectLag reports a group's lag in one partition: the messages after
// its stored offset (all of them when none is stored) and the age of the
// first of them, from its append timestamp.
func (s *scraper) collectLag(ctx context.Context, c *client.Client, ch chan<- prometheus.Metric, streamName string,
	topic *wire.TopicDetails, group wire.ConsumerGroupInfo, partition wire.PartitionInfo) error {
	stream := wire.NamedID(streamName)
	topicID := wire.NumericID(topic.ID)
	consumer := wire.Consumer{Kind: wire.ConsumerGroup, ID: wire.NumericID(group.ID)}
	info, found, err := c.GetConsumerOffset(ctx, wire.OffsetTarget{Consumer: consumer, Stream: stream, Topic: topicID,
		Partition: wire.PartitionOf(partition.ID)})
	if err != nil {
		return err
	}
	next := uint64(0)
	if found {
		next = info.StoredOffset + 1
	}
	lag := uint64(0)
	if partition.MessagesCount > 0 && partition.CurrentOffset+1 > next {
		lag = partition.CurrentOffset + 1 - next
	}
	seconds := 0.0
	if lag > 0 {
		polled, err := c.PollMessages(ctx, &wire.PollMessages{Consumer: wire.Consumer{Kind: wire.ConsumerSingle,
			ID: wire.NumericID(0)}, Stream: stream, Topic: topicID, Partition: wire.PartitionOf(partition.ID),
			Strategy: wire.Strategy{Kind: wire.StrategyOffset, Value: next}, Count: 1})
		if err != nil {
			return err
		}
		iterator := polled.Messages()
		if message, ok := iterator.Next(); ok {
			age := time.Since(time.UnixMicro(int64(message.Timestamp))).Seconds()
			seconds = max(age, 0)
		}
	}
	labels := []string{streamName, topic.Name, group.Name, strconv.FormatUint(uint64(partition.ID), 10)}
	ch <- prometheus.MustNewConstMetric(descGroupLagMessages, prometheus.GaugeValue, float64(lag), labels...)
	ch <- prometheus.MustNewConstMetric(descGroupLagSeconds, prometheus.GaugeValue, seconds, labels...)
	return nil
}
