package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkHTTPSendMessages measures sends through the REST API of the
// real binary: 8 concurrent HTTP clients (one token session), each
// posting batches of 100 messages of 100 bytes, base64 in JSON.
func BenchmarkHTTPSendMessages(b *testing.B) {
	s := startServer(b, "WHIPPET_SYSTEM_TOPIC_DURABILITY=written")
	base := "http://" + logField(b, s, "http_address")
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	post := func(path string, body []byte) {
		request, _ := http.NewRequest("POST", base+path, bytes.NewReader(body))
		request.SetBasicAuth("iggy", "iggy")
		response, err := client.Do(request)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, response.Body) // drain for reuse
		_ = response.Body.Close()                 // drained
		if response.StatusCode/100 != 2 {
			b.Fatalf("POST %s: %s", path, response.Status)
		}
	}
	post("/streams", []byte(`{"name":"bench"}`))
	post("/streams/bench/topics", []byte(`{"name":"t","partitions_count":8}`))
	const producers, batchMessages, payloadBytes = 8, 100, 100
	messages := make([]map[string]string, batchMessages)
	for i := range messages {
		messages[i] = map[string]string{"payload": base64.StdEncoding.EncodeToString(make([]byte, payloadBytes))}
	}
	body, err := json.Marshal(map[string]any{"messages": messages})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(batchMessages * payloadBytes)
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				post("/streams/bench/topics/t/messages", body)
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N*batchMessages)/b.Elapsed().Seconds(), "msgs/s")
}
