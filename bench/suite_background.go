package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// BackgroundStreamName is the stream that holds a suite's idle partitions.
const BackgroundStreamName = "bench-background"

// background is what a suite holds open on the server while its
// workloads run (the lab's scale row): IdlePartitions partitions in topics
// of at most backgroundTopicPartitionsMax, and IdleConnections logged-in
// connections that only send heartbeats.
type background struct {
	admin *client.Client
	idle  []*client.Client
	// createTime and connectTime are how long the partitions and the
	// connections took to set up.
	createTime  time.Duration
	connectTime time.Duration
}

// startBackground creates the idle partitions and opens the idle
// connections, then waits for the server to settle (partitions open after
// CreateTopic answers); with neither asked it returns nil. It logs how
// long each part took, the server's RSS and its idle CPU once settled.
func startBackground(ctx context.Context, server *Server, options *SuiteOptions, logger *slog.Logger) (*background, error) {
	b, err := openBackground(ctx, server.Address, options)
	if b == nil || err != nil {
		return b, err
	}
	started := time.Now()
	if err := settle(ctx, server.PID); err != nil {
		return b, err
	}
	settled := time.Since(started)
	idleCPU, err := idleCPUMillisPerSecond(ctx, server.PID)
	if err != nil {
		return b, err
	}
	logger.Info("suite background", "partitions", options.IdlePartitions, "create_s", b.createTime.Seconds(),
		"connections", options.IdleConnections, "connect_s", b.connectTime.Seconds(), "settle_s", settled.Seconds(),
		"server_rss_mb", float64(processRSSBytes(server.PID))/(1<<20), "server_idle_cpu_ms_per_s", idleCPU)
	return b, nil
}

// idleCPUMillisPerSecond is the server's CPU over backgroundIdleWindow
// (-1 without its process id).
func idleCPUMillisPerSecond(ctx context.Context, pid int) (float64, error) {
	before, known := processCPUSeconds(pid)
	started := time.Now()
	if err := sleepUntil(ctx, started.Add(backgroundIdleWindow)); err != nil {
		return 0, err
	}
	after, ok := processCPUSeconds(pid)
	if !known || !ok {
		return -1, nil
	}
	return (after - before) * 1000 / time.Since(started).Seconds(), nil
}

// processRSSBytes reads VmRSS of pid from /proc (0 when unknown).
func processRSSBytes(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	text, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(text), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				kib, _ := strconv.ParseInt(fields[0], 10, 64) // 0 when malformed
				return kib << 10
			}
		}
	}
	return 0
}

// settle waits until the server process used less than
// backgroundSettleCPUShare of a core in each of backgroundSettleQuiet
// consecutive backgroundSettleWindows (one quiet window can fall in a
// lull of partitions still opening after CreateTopic answered), at most
// backgroundSettleMax; without its process id it waits one
// backgroundSettleMax.
func settle(ctx context.Context, pid int) error {
	deadline := time.Now().Add(backgroundSettleMax)
	before, known := processCPUSeconds(pid)
	quiet := 0
	for time.Now().Before(deadline) {
		if err := sleepUntil(ctx, time.Now().Add(backgroundSettleWindow)); err != nil {
			return err
		}
		after, ok := processCPUSeconds(pid)
		quiet++
		if !known || !ok || after-before >= backgroundSettleCPUShare*backgroundSettleWindow.Seconds() {
			quiet = 0
		}
		if quiet == backgroundSettleQuiet {
			return nil
		}
		before, known = after, ok
	}
	return nil
}

func openBackground(ctx context.Context, address string, options *SuiteOptions) (*background, error) {
	if options.IdlePartitions == 0 && options.IdleConnections == 0 {
		return nil, nil
	}
	b := &background{}
	var err error
	if b.admin, err = dialIdle(ctx, address); err != nil {
		return nil, err
	}
	started := time.Now()
	if err := b.createPartitions(ctx, options.IdlePartitions); err != nil {
		b.stop(ctx)
		return nil, err
	}
	b.createTime = time.Since(started)
	started = time.Now()
	defer func() { b.connectTime = time.Since(started) }()
	for len(b.idle) < options.IdleConnections {
		idle, err := dialIdle(ctx, address)
		if err != nil {
			b.stop(ctx)
			return nil, fmt.Errorf("bench: idle connection %d: %w", len(b.idle)+1, err)
		}
		b.idle = append(b.idle, idle)
	}
	return b, nil
}

func dialIdle(ctx context.Context, address string) (*client.Client, error) {
	defaults := DefaultConfig(KindPinnedProducer)
	return client.Dial(ctx, client.Options{Address: address, Username: defaults.Username, Password: defaults.Password,
		HeartbeatInterval: HeartbeatInterval})
}

// createPartitions makes a fresh background stream with count partitions.
func (b *background) createPartitions(ctx context.Context, count int) error {
	if count == 0 {
		return nil
	}
	stream, err := freshStream(ctx, b.admin, BackgroundStreamName)
	if err != nil {
		return err
	}
	for topic := 0; count > 0; topic++ {
		partitions := min(count, backgroundTopicPartitionsMax)
		_, err := b.admin.CreateTopic(ctx, &wire.CreateTopic{Stream: wire.NumericID(stream.ID),
			PartitionsCount: uint32(partitions), Name: fmt.Sprintf("idle-%d", topic)})
		if err != nil {
			return fmt.Errorf("bench: create background topic %d: %w", topic, err)
		}
		count -= partitions
	}
	return nil
}

// stop closes the idle connections and deletes the background stream.
func (b *background) stop(ctx context.Context) error {
	if b == nil {
		return nil
	}
	var errs []error
	for _, idle := range b.idle {
		errs = append(errs, idle.Close())
	}
	err := b.admin.DeleteStream(ctx, wire.NamedID(BackgroundStreamName))
	if err != nil && client.StatusOf(err) != wire.StatusStreamIDNotFound {
		errs = append(errs, err)
	}
	errs = append(errs, b.admin.Close())
	return errors.Join(errs...)
}
