package bench

import (
	"context"
	"time"
)

// produceAndConsume is a producing consumer: it sends a batch, then reads
// back (by offset, or through its group) until it has seen everything
// written to its stream so far, and records the end-to-end latency of each
// poll; sends count as traffic only. sendDone is called once when the
// actor will send no more.
func (a *actor) produceAndConsume(ctx context.Context, sendDone func()) error {
	sending := true
	finishSending := func() {
		if sending {
			sending = false
			sendDone()
		}
	}
	defer finishSending()
	a.reader.lastGrowth = time.Now()
	for {
		if sending {
			sent, err := a.sendOne(ctx, a.recordSentTraffic)
			if err != nil {
				return err
			}
			if !sent {
				finishSending()
			}
		}
		if err := a.catchUp(ctx, sending); err != nil || ctx.Err() != nil {
			return err
		}
		if !sending && a.finished() {
			return nil
		}
	}
}

// catchUp polls until the reader has read what its stream held after the
// actor's last send. Group readers poll once per send, since the group's
// other members share the work.
func (a *actor) catchUp(ctx context.Context, sending bool) error {
	if a.reader.group != nil {
		if a.finished() {
			return nil
		}
		return a.pollOne(ctx)
	}
	written := a.run.produced[a.reader.stream].Load()
	for a.reader.consumed < written {
		if err := a.pollOne(ctx); err != nil || ctx.Err() != nil {
			return err
		}
	}
	if !sending && !a.finished() {
		return a.pollOne(ctx)
	}
	return nil
}
