package shard

import (
	"errors"
	"fmt"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/metadata"
)

// errMetadataStalled: the portable storage ran out of work before the
// metadata store finished opening or closing (a bug in the store).
var errMetadataStalled = errors.New("shard: metadata store stalled")

// loadPartitions reads the partitions the metadata names, before the
// shards start, so that each owner recovers its own at start. It opens
// the store on the portable storage and closes it again; shard 0 then
// reopens it on its own backend.
func loadPartitions(options *ServerOptions) ([]PartitionSpec, error) {
	storage := engine.NewDirectStorage()
	var store *metadata.Store
	var openErr error
	opened := false
	metadata.OpenStore(storage, options.metadataPath(), options.Logger, func(s *metadata.Store, err error) {
		store, openErr, opened = s, err, true
	})
	if err := drive(storage, &opened); err != nil {
		return nil, err
	}
	if openErr != nil {
		return nil, fmt.Errorf("shard: open metadata: %w", openErr)
	}
	var specs []PartitionSpec
	for _, stream := range store.State().Streams {
		if stream == nil {
			continue
		}
		for _, topic := range stream.Topics {
			if topic == nil {
				continue
			}
			config := PartitionConfigOf(topic.Config, len(topic.Partitions))
			for _, partition := range topic.Partitions {
				key := PartitionKey{Stream: stream.ID, Topic: topic.ID, Partition: partition.ID}
				specs = append(specs, PartitionSpec{Key: key, Config: config})
			}
		}
	}
	closed := false
	var closeErr error
	store.Close(func(err error) { closeErr, closed = err, true })
	if err := drive(storage, &closed); err != nil {
		return nil, err
	}
	return specs, closeErr
}

// drive delivers the portable storage's completions until *done.
func drive(storage *engine.DirectStorage, done *bool) error {
	for !*done {
		if storage.Poll(64) == 0 && storage.Pending() == 0 && !*done {
			return errMetadataStalled
		}
	}
	return nil
}
