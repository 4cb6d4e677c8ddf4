package main

import (
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/whippetio/whippet/wire"
)

// TestMetricsScrape parses /metrics with Prometheus' text parser and
// checks that partition counters move with sends, that the request
// histogram counts the calls, and that a consumer group's lag is right
// in messages and in seconds: it stores the group's offset over TCP and
// bounds the lag's age by the wall time around the send.
func TestMetricsScrape(t *testing.T) {
	s := startServer(t)
	a := newAPI(t, s)
	root := a.basic("iggy", "iggy")
	root.want(http.StatusCreated, "POST", "/streams", map[string]string{"name": "s"})
	root.want(http.StatusCreated, "POST", "/streams/s/topics", map[string]any{"name": "t", "partitions_count": 1})
	root.want(http.StatusCreated, "POST", "/streams/s/topics/t/consumer-groups", map[string]string{"name": "g"})
	partition := map[string]string{"stream": "s", "topic": "t", "partition": "0"}
	lagLabels := map[string]string{"stream": "s", "topic": "t", "group": "g", "partition": "0"}
	families := scrape(t, a)
	if got := value(t, families, "whippet_partition_messages", partition); got != 0 {
		t.Fatalf("messages before sending: %v", got)
	}
	if got := value(t, families, "whippet_consumer_group_lag_seconds", lagLabels); got != 0 {
		t.Fatalf("lag seconds of an empty partition: %v", got)
	}

	writesBefore := fileOps(families, "write")
	fsyncsBefore := fileOps(families, "fsync")
	appendsBefore, appendSecondsBefore := histogramTotals(families, "whippet_append_duration_seconds")
	before := time.Now()
	var batch []map[string]string
	for range 5 {
		batch = append(batch, map[string]string{"payload": b64("0123456789")})
	}
	root.want(http.StatusNoContent, "POST", "/streams/s/topics/t/messages", map[string]any{"messages": batch})
	sent := time.Now()

	c := s.dial(t)
	ctx := ctxTimeout(t)
	group := wire.GroupTarget{Stream: wire.NamedID("s"), Topic: wire.NamedID("t"), Group: wire.NamedID("g")}
	check(t, "join", c.JoinConsumerGroup(ctx, group))
	must[*wire.GroupAssignment](t, "sync")(c.SyncConsumerGroup(ctx, group))
	target := wire.OffsetTarget{Consumer: wire.Consumer{Kind: wire.ConsumerGroup, ID: wire.NamedID("g")},
		Stream: group.Stream, Topic: group.Topic, Partition: wire.PartitionOf(0)}
	check(t, "store offset 1", c.StoreConsumerOffset(ctx, target, 1))

	families = scrape(t, a)
	scraped := time.Now()
	if got := value(t, families, "whippet_partition_messages", partition); got != 5 {
		t.Fatalf("partition messages after 5 sent: %v", got)
	}
	if got := value(t, families, "whippet_partition_bytes", partition); got < 50 {
		t.Fatalf("partition bytes after 50 payload bytes: %v", got)
	}
	if got := value(t, families, "whippet_consumer_group_lag_messages", lagLabels); got != 3 {
		t.Fatalf("lag with offsets 0..4 and 1 stored: %v messages, want 3", got)
	}
	age := value(t, families, "whippet_consumer_group_lag_seconds", lagLabels)
	if age < scraped.Sub(sent).Seconds()-0.05 || age > scraped.Sub(before).Seconds()+0.05 {
		t.Fatalf("lag %.3fs outside [%.3f, %.3f]", age, scraped.Sub(sent).Seconds(), scraped.Sub(before).Seconds())
	}
	if got := value(t, families, "whippet_http_request_duration_seconds",
		map[string]string{"route": "POST /streams/{stream_id}/topics/{topic_id}/messages", "outcome": "ok"}); got != 1 {
		t.Fatalf("send requests counted: %v", got)
	}

	// system.topic.durability defaults to persisted: a send writes and
	// fsyncs its segment before it is acknowledged.
	if writes, fsyncs := fileOps(families, "write"), fileOps(families, "fsync"); writes <= writesBefore || fsyncs <= fsyncsBefore {
		t.Fatalf("file ops after a send: writes %v→%v, fsyncs %v→%v", writesBefore, writes, fsyncsBefore, fsyncs)
	}
	// The end-to-end append histogram counts the one send, and its time
	// covers at least the send's own fdatasync.
	appends, appendSeconds := histogramTotals(families, "whippet_append_duration_seconds")
	if appends != appendsBefore+1 || appendSeconds <= appendSecondsBefore {
		t.Fatalf("append histogram after one send: count %v→%v, sum %v→%v", appendsBefore, appends, appendSecondsBefore, appendSeconds)
	}
	if got := value(t, families, "whippet_request_duration_seconds", map[string]string{"command": "SendMessages"}); got != 1 {
		t.Fatalf("SendMessages requests timed by the shards: %v", got)
	}
	if got := value(t, families, "whippet_request_duration_seconds", map[string]string{"command": "StoreConsumerOffset"}); got != 1 {
		t.Fatalf("StoreConsumerOffset requests timed by the shards: %v", got)
	}
	check(t, "store offset 4", c.StoreConsumerOffset(ctx, target, 4))
	families = scrape(t, a)
	if got := value(t, families, "whippet_consumer_group_lag_messages", lagLabels); got != 0 {
		t.Fatalf("lag when caught up: %v", got)
	}
	if got := value(t, families, "whippet_consumer_group_lag_seconds", lagLabels); got != 0 {
		t.Fatalf("lag seconds when caught up: %v", got)
	}
	if got := value(t, families, "whippet_clients", nil); got < 2 {
		t.Fatalf("clients: %v", got)
	}
	connections, requests, received := 0.0, 0.0, 0.0
	for id := range shardCount(t) {
		label := map[string]string{"shard": strconv.Itoa(id)}
		connections += value(t, families, "whippet_shard_connections", label)
		received += value(t, families, "whippet_shard_received_bytes_total", label)
		requests += value(t, families, "whippet_shard_requests_total", label)
		if depth := value(t, families, "whippet_shard_queue_depth", label); depth < 0 {
			t.Fatalf("shard %d queue depth %v", id, depth)
		}
	}
	// The TCP client, the HTTP session and the metrics session at least;
	// and every request of this test passed through a shard.
	if connections < 3 || requests < 10 || received < 500 {
		t.Fatalf("shard connections %v, requests %v, bytes %v\n%s", connections, requests, received, dump(t, a))
	}
}

func scrape(t *testing.T, a *api) map[string]*dto.MetricFamily {
	t.Helper()
	response, err := a.client.Get(a.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	if response.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", response.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(response.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	if got := value(t, families, "whippet_scrape_ok", nil); got != 1 {
		t.Fatal("the scrape could not read the server")
	}
	return families
}

// value returns the sample of name whose labels include want: a gauge's
// or a counter's value, or a histogram's count.
func value(t *testing.T, families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	family := families[name]
	if family == nil {
		t.Fatalf("no %s in /metrics", name)
	}
	for _, metric := range family.GetMetric() {
		labels := map[string]string{}
		for _, pair := range metric.GetLabel() {
			labels[pair.GetName()] = pair.GetValue()
		}
		matches := true
		for key, wanted := range want {
			matches = matches && labels[key] == wanted
		}
		if !matches {
			continue
		}
		if histogram := metric.GetHistogram(); histogram != nil {
			return float64(histogram.GetSampleCount())
		}
		if counter := metric.GetCounter(); counter != nil {
			return counter.GetValue()
		}
		return metric.GetGauge().GetValue()
	}
	t.Fatalf("no %s with labels %v", name, want)
	return 0
}

// dump is the raw exposition, for failure messages.
func dump(t *testing.T, a *api) string {
	t.Helper()
	response, err := a.client.Get(a.base + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer response.Body.Close()
	raw, err := io.ReadAll(response.Body)
	if err != nil {
		return err.Error()
	}
	return string(raw)
}

// histogramTotals sums a histogram family's counts and sums over its series.
func histogramTotals(families map[string]*dto.MetricFamily, name string) (count uint64, sum float64) {
	for _, metric := range families[name].GetMetric() {
		count += metric.GetHistogram().GetSampleCount()
		sum += metric.GetHistogram().GetSampleSum()
	}
	return count, sum
}

// fileOps sums the file op histogram counts of kind over the shards.
func fileOps(families map[string]*dto.MetricFamily, kind string) uint64 {
	total := uint64(0)
	for _, metric := range families["whippet_file_op_duration_seconds"].GetMetric() {
		for _, pair := range metric.GetLabel() {
			if pair.GetName() == "op" && pair.GetValue() == kind {
				total += metric.GetHistogram().GetSampleCount()
			}
		}
	}
	return total
}
