package shard

import (
	"errors"
	"fmt"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
)

// Streamed appends on the data plane: a large SendMessages batch whose
// request is still arriving on a connection of the partition's owner is
// appended while it arrives (engine.Partition.StreamOpen, stream.go).
// The front opens and feeds it (front_stream.go); the request, once
// whole, runs as an append op carrying the stream's id (DataOp.Stream),
// which finishes it. Only a partition this shard owns, open, with no op
// parked, not replicated by a cluster, is streamed; the engine adds its
// own conditions (durability, dedup, an idle write pipeline).

// StreamOpen opens a streamed append of a batch of length bytes, whose
// first bytes head arrived, on partition key, and returns its id, unique
// on the shard; false when the partition cannot take one now (the
// request is then appended whole). The id names the stream, never a
// stream of a partition deleted and created again under key meanwhile.
func (ds *DataShard) StreamOpen(key PartitionKey, head []byte, length int) (uint64, bool) {
	// ds.partitions holds only partitions this shard owns (open), and
	// only in cluster mode is one replicated (openCluster).
	p := ds.partitions[key]
	if ds.stopping || ds.data.cluster != nil || p == nil || p.state != partitionOpen || p.parkedCount() > 0 {
		return 0, false
	}
	id, err := p.part.StreamOpen(head, length, uint64(ds.data.options.Now().UnixMicro()))
	if err != nil {
		return 0, false
	}
	ds.tickMark(p)
	ds.streamSerial++
	p.stream, p.streamEngine, p.streamOpened = ds.streamSerial, id, ds.shard.now()
	bump(&ds.shard.stats.streamsOpened, 1)
	return ds.streamSerial, true
}

// StreamFeed hands the stream more of its batch (arrived: its first
// bytes). An error ends the stream: engine.ErrInvalidBatch is the
// request's answer; after any other the request is appended whole.
func (ds *DataShard) StreamFeed(key PartitionKey, id uint64, arrived []byte) error {
	p := ds.partitions[key]
	if p == nil || p.state != partitionOpen {
		return ErrPartitionNotFound
	}
	if p.stream != id {
		return engine.ErrClosed // dropped, or a stream of another partition under key
	}
	err := p.part.StreamFeed(p.streamEngine, arrived)
	if err != nil {
		ds.streamDropped(p)
	}
	return err
}

// StreamRoom lends the stream's owner the journal's room for the
// batch's next bytes (engine.Partition.StreamRoom), or returns nil.
// origin is the owner's copy of the batch; cancel ends the owner's
// receive into the room soon. The owner reports the receive with
// StreamReceived, whatever happens to the stream meanwhile.
func (ds *DataShard) StreamRoom(key PartitionKey, id uint64, origin []byte, cancel func()) []byte {
	p := ds.partitions[key]
	if p == nil || p.state != partitionOpen || p.stream != id {
		return nil
	}
	invariant.Assert(p.room == 0, "one room lent per partition")
	room := p.part.StreamRoom(p.streamEngine, origin, cancel)
	if room != nil {
		p.room = id
	}
	return room
}

// StreamReceived ends the loan of StreamRoom: n bytes were received into
// the room. An error ends the stream, as StreamFeed's.
func (ds *DataShard) StreamReceived(key PartitionKey, id uint64, n int) error {
	// A partition closes only once its stream drained, which waits for
	// the room (engine stream.go), unless it failed (engine.IsFatal): it
	// then closes at once and may be deleted while the receive runs, and
	// its journal is never given back.
	p := ds.partitions[key]
	if p == nil || p.room != id {
		return ErrPartitionNotFound
	}
	p.room = 0
	err := p.part.StreamReceived(p.streamEngine, n)
	switch {
	case p.stream != id:
		return engine.ErrClosed // dropped while the receive ran
	case err != nil:
		ds.streamDropped(p)
	}
	return err
}

// StreamAbort drops a stream whose request will not finish it, for its
// owner: the batch's bytes are not wanted back.
func (ds *DataShard) StreamAbort(key PartitionKey, id uint64) {
	p := ds.partitions[key]
	if p == nil || p.state != partitionOpen || p.stream != id {
		return // closing or gone (the engine dropped the stream), or ended
	}
	invariant.Assert(p.room == 0, "an owner aborts no stream it receives into")
	p.part.StreamAbort(p.streamEngine)
	ds.streamEnded(p)
}

// streamDropped ends the partition's stream, which stored nothing, for
// its request to be appended whole or answered with the batch's fault:
// the engine's stream ends too, if a feed's error left it receiving (a
// partition that stopped answers p.fatal and drops nothing), handing the
// bytes received into its journal back to the request's frame. The
// journal may be a region the shard's cache lent.
func (ds *DataShard) streamDropped(p *dataPartition) {
	p.part.StreamDrop(p.streamEngine)
	ds.streamEnded(p)
}

func (ds *DataShard) streamEnded(p *dataPartition) {
	p.stream = 0
	bump(&ds.shard.stats.streamsAborted, 1)
	ds.schedule(p) // appends parked behind the stream may run
}

// streamHeld drops the partition's stream when an append found it busy
// and the stream has held it for streamHoldMax already.
func (ds *DataShard) streamHeld(p *dataPartition) {
	if p.stream == 0 || ds.shard.now().Sub(p.streamOpened) < streamHoldMax {
		return
	}
	ds.data.logger.Debug("shard: a streamed append held its partition too long; it is appended whole",
		"partition", p.key.String())
	ds.streamDropped(p)
}

// streamFinish runs a streamed append's op: it finishes the stream, or,
// when the stream ended without storing (a failed piece, a close), checks
// and appends the batch whole. An invalid batch answers with the
// admission status (dataStatus).
func (ds *DataShard) streamFinish(p *dataPartition, op *DataOp) error {
	invariant.Assert(op.kind == DataAppend, "a stream finishes with an append")
	id := op.Stream
	op.Stream = 0 // a retry after ErrBusy appends whole
	if p.stream == id {
		p.stream = 0
		err := p.part.StreamFinish(p.streamEngine, &op.appendOp)
		if err != nil {
			bump(&ds.shard.stats.streamsAborted, 1)
		}
		if err == nil || errors.Is(err, engine.ErrInvalidBatch) || engine.IsFatal(err) {
			return err
		}
	}
	if _, invalid := wire.ValidateBatch(op.Batch); invalid != nil {
		return fmt.Errorf("%w: %w", engine.ErrInvalidBatch, invalid)
	}
	return p.part.Append(&op.appendOp)
}
