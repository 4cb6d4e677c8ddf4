package bench

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progressBar redraws one status line on a terminal while a phase runs.
type progressBar struct {
	out      io.Writer
	measured *phase
	expected float64 // messages the run should move, estimated
	done     chan struct{}
	group    sync.WaitGroup
}

// startProgress draws until stop.
func startProgress(out io.Writer, measured *phase) *progressBar {
	bar := &progressBar{out: out, measured: measured, expected: expectedMessages(measured), done: make(chan struct{})}
	bar.group.Add(1)
	go bar.loop()
	return bar
}

// expectedMessages estimates what the producers (or, with none, the
// consumers) will move.
func expectedMessages(measured *phase) float64 {
	config := measured.state.config
	var total float64
	counted := map[*groupState]bool{} // a group's target is shared by its members
	for _, actor := range measured.actors {
		if !actor.plan.Produces && config.Kind.HasProducers() {
			continue
		}
		if config.Kind.ConsumerOnly() {
			if group := actor.reader.group; group == nil || !counted[group] {
				total += float64(actor.readTarget())
				counted[group] = group != nil
			}
			continue
		}
		if config.TotalData != 0 {
			return float64(config.TotalData) / config.MessageSize.Mean()
		}
		moved := float64(config.MessageBatches) * config.MessagesPerBatch.Mean()
		if actor.plan.Consumes {
			moved *= 2 // a producing consumer's totals count what it sent and what it read
		}
		total += moved
	}
	return total
}

func (b *progressBar) loop() {
	defer b.group.Done()
	ticker := time.NewTicker(ProgressInterval)
	defer ticker.Stop()
	for {
		select {
		case <-b.done:
			fmt.Fprintf(b.out, "\r%s\r", strings.Repeat(" ", 100))
			return
		case <-ticker.C:
			b.draw()
		}
	}
}

// draw prints the share done, the messages moved and the payload rate.
func (b *progressBar) draw() {
	var messages, bytes uint64
	config := b.measured.state.config
	for _, actor := range b.measured.actors {
		if actor.plan.Produces || config.Kind.ConsumerOnly() {
			totals := actor.recorder.Totals()
			messages += totals.Messages
			bytes += totals.UserDataBytes
		}
	}
	elapsed := time.Since(b.measured.state.released)
	share := 0.0
	if b.expected > 0 {
		share = min(float64(messages)/b.expected, 1)
	}
	const width = 30
	filled := int(share * width)
	rate := float64(bytes) / 1e6 / max(elapsed.Seconds(), 1e-9)
	fmt.Fprintf(b.out, "\r[%s%s] %5.1f%% %12d msgs %9.1f MB/s %8.1fs", strings.Repeat("#", filled),
		strings.Repeat(" ", width-filled), share*100, messages, rate, elapsed.Seconds())
}

// stop clears the line; a nil bar is a no-op.
func (b *progressBar) stop() {
	if b == nil {
		return
	}
	close(b.done)
	b.group.Wait()
}
