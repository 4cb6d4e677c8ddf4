package metadata

import (
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/whippetio/whippet/engine/metadata/fbs"
)

// encodeRecord returns the flatbuffers bytes of one log record.
func encodeRecord(builder *flatbuffers.Builder, index uint64, c *Command) []byte {
	builder.Reset()
	name := builder.CreateString(c.Name)
	secret := builder.CreateString(c.Secret)
	permissions := builder.CreateByteVector(c.Permissions)
	config := encodeConfig(builder, &c.Config)
	fbs.CommandStart(builder)
	fbs.CommandAddKind(builder, c.Kind)
	fbs.CommandAddStreamId(builder, c.StreamID)
	fbs.CommandAddTopicId(builder, c.TopicID)
	fbs.CommandAddGroupId(builder, c.GroupID)
	fbs.CommandAddUserId(builder, c.UserID)
	fbs.CommandAddCount(builder, c.Count)
	fbs.CommandAddName(builder, name)
	fbs.CommandAddSecret(builder, secret)
	fbs.CommandAddStatus(builder, c.Status)
	fbs.CommandAddHasPermissions(builder, c.HasPermissions)
	fbs.CommandAddPermissions(builder, permissions)
	fbs.CommandAddCreatedAt(builder, c.CreatedAt)
	fbs.CommandAddExpiryAt(builder, c.ExpiryAt)
	fbs.CommandAddConfig(builder, config)
	fbs.CommandAddHasName(builder, c.HasName)
	fbs.CommandAddHasStatus(builder, c.HasStatus)
	fbs.CommandAddOp(builder, c.Op)
	command := fbs.CommandEnd(builder)
	fbs.RecordStart(builder)
	fbs.RecordAddIndex(builder, index)
	fbs.RecordAddCommand(builder, command)
	builder.Finish(fbs.RecordEnd(builder))
	return builder.FinishedBytes()
}

func encodeConfig(builder *flatbuffers.Builder, config *TopicConfig) flatbuffers.UOffsetT {
	options := make([]flatbuffers.UOffsetT, len(config.Options))
	for index, option := range config.Options {
		key := builder.CreateString(option.Key)
		value := builder.CreateByteVector(option.Value)
		fbs.OptionStart(builder)
		fbs.OptionAddKey(builder, key)
		fbs.OptionAddKind(builder, option.Kind)
		fbs.OptionAddValue(builder, value)
		options[index] = fbs.OptionEnd(builder)
	}
	vector := offsetVector(builder, options, fbs.TopicConfigStartOptionsVector)
	fbs.TopicConfigStart(builder)
	fbs.TopicConfigAddMessageExpiry(builder, config.MessageExpiryMicros)
	fbs.TopicConfigAddMaxTopicSize(builder, config.MaxTopicSizeBytes)
	fbs.TopicConfigAddSegmentSize(builder, config.SegmentBytes)
	fbs.TopicConfigAddCompression(builder, config.Compression)
	fbs.TopicConfigAddDurability(builder, config.Durability)
	fbs.TopicConfigAddReplicationFactor(builder, config.ReplicationFactor)
	fbs.TopicConfigAddDedupCount(builder, config.DedupCount)
	fbs.TopicConfigAddDedupWindow(builder, config.DedupWindowMicros)
	fbs.TopicConfigAddOptions(builder, vector)
	return fbs.TopicConfigEnd(builder)
}

func offsetVector(builder *flatbuffers.Builder, offsets []flatbuffers.UOffsetT,
	start func(*flatbuffers.Builder, int) flatbuffers.UOffsetT) flatbuffers.UOffsetT {
	start(builder, len(offsets))
	for index := len(offsets) - 1; index >= 0; index-- {
		builder.PrependUOffsetT(offsets[index])
	}
	return builder.EndVector(len(offsets))
}

// decodeRecord reads a record whose checksum was verified.
func decodeRecord(raw []byte) (uint64, Command) {
	record := fbs.GetRootAsRecord(raw, 0)
	var table fbs.Command
	c := record.Command(&table)
	if c == nil {
		return record.Index(), Command{}
	}
	command := Command{
		Kind: c.Kind(), StreamID: c.StreamId(), TopicID: c.TopicId(), GroupID: c.GroupId(), UserID: c.UserId(),
		Count: c.Count(), Name: string(c.Name()), Secret: string(c.Secret()), Status: c.Status(),
		HasPermissions: c.HasPermissions(), Permissions: append([]byte(nil), c.PermissionsBytes()...),
		CreatedAt: c.CreatedAt(), ExpiryAt: c.ExpiryAt(), HasName: c.HasName(), HasStatus: c.HasStatus(),
		Op: c.Op(),
	}
	var config fbs.TopicConfig
	if c.Config(&config) != nil {
		command.Config = decodeConfig(&config)
	}
	return record.Index(), command
}

func decodeConfig(c *fbs.TopicConfig) TopicConfig {
	config := TopicConfig{
		MessageExpiryMicros: c.MessageExpiry(), MaxTopicSizeBytes: c.MaxTopicSize(), SegmentBytes: c.SegmentSize(),
		Compression: c.Compression(), Durability: c.Durability(), ReplicationFactor: c.ReplicationFactor(),
		DedupCount: c.DedupCount(), DedupWindowMicros: c.DedupWindow(),
	}
	var option fbs.Option
	for index := 0; index < c.OptionsLength(); index++ {
		if c.Options(&option, index) {
			config.Options = append(config.Options, Option{
				Key: string(option.Key()), Kind: option.Kind(), Value: append([]byte(nil), option.ValueBytes()...),
			})
		}
	}
	return config
}
