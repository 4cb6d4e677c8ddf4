package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// pollFlags are the strategy, consumer and display flags of message poll.
type pollFlags struct {
	offset      uint64
	timestamp   uint64
	first       bool
	last        bool
	next        bool
	count       uint32
	consumer    string
	group       string
	autoCommit  bool
	showHeaders bool
}

type messageView struct {
	Offset          uint64                `json:"offset"`
	Timestamp       uint64                `json:"timestamp"`
	OriginTimestamp uint64                `json:"origin_timestamp"`
	ID              string                `json:"id"`
	Checksum        uint64                `json:"checksum"`
	Payload         []byte                `json:"payload"`
	Headers         map[string]headerView `json:"headers,omitempty"`
}

type pollView struct {
	PartitionID   uint32        `json:"partition_id"`
	CurrentOffset uint64        `json:"current_offset"`
	Count         uint32        `json:"count"`
	Messages      []messageView `json:"messages"`
}

func (a *app) pollCommand() *cobra.Command {
	var flags pollFlags
	cmd := &cobra.Command{Use: "poll <stream> <topic> [partition]",
		Short: "poll messages from a partition",
		Long: "poll up to --message-count messages. The start is one of --offset N (the default,\n" +
			"from 0), --timestamp µs, --first, --last or --next (after the consumer's stored offset).\n" +
			"--consumer names the consumer (id or name) whose offset --next reads and\n" +
			"--auto-commit stores. --group polls as a member of a consumer group instead: the\n" +
			"server assigns the partition, so none is given.",
		Args: rangeArgs(2, 3), RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			return a.messagePoll(ctx, c, args, &flags)
		})}
	f := cmd.Flags()
	f.Uint64Var(&flags.offset, "offset", 0, "poll from this offset")
	f.Uint64Var(&flags.timestamp, "timestamp", 0, "poll from this append time (µs since the epoch)")
	f.BoolVarP(&flags.first, "first", "f", false, "poll from the first message")
	f.BoolVarP(&flags.last, "last", "l", false, "poll the last messages")
	f.BoolVarP(&flags.next, "next", "n", false, "poll after the consumer's stored offset")
	f.Uint32VarP(&flags.count, "message-count", "m", 1, "poll at most this many messages")
	f.StringVarP(&flags.consumer, "consumer", "c", "1", "consumer id or name")
	f.StringVarP(&flags.group, "group", "g", "", "poll as a member of this consumer group")
	f.BoolVarP(&flags.autoCommit, "auto-commit", "a", false, "store the consumer's offset after the poll")
	f.BoolVarP(&flags.showHeaders, "show-headers", "s", false, "show user headers in the table")
	cmd.MarkFlagsMutuallyExclusive("offset", "timestamp", "first", "last", "next")
	cmd.MarkFlagsMutuallyExclusive("consumer", "group")
	return cmd
}

func (f *pollFlags) strategy() wire.Strategy {
	switch {
	case f.first:
		return wire.Strategy{Kind: wire.StrategyFirst}
	case f.last:
		return wire.Strategy{Kind: wire.StrategyLast}
	case f.next:
		return wire.Strategy{Kind: wire.StrategyNext}
	case f.timestamp != 0:
		return wire.Strategy{Kind: wire.StrategyTimestamp, Value: f.timestamp}
	}
	return wire.Strategy{Kind: wire.StrategyOffset, Value: f.offset}
}

func (a *app) messagePoll(ctx context.Context, c *client.Client, args []string, flags *pollFlags) error {
	ids, err := identifiers(args, "stream", "topic")
	if err != nil {
		return err
	}
	if flags.count == 0 {
		return usagef("--message-count must be above zero")
	}
	var polled *wire.PolledMessages
	if flags.group != "" {
		if len(args) == 3 {
			return usagef("a group member polls the partitions the server assigns: drop the partition")
		}
		if polled, err = a.pollGroup(ctx, c, ids, flags); err != nil {
			return err
		}
	} else {
		if len(args) != 3 {
			return usagef("message poll needs a partition id (or --group)")
		}
		if polled, err = a.pollConsumer(ctx, c, ids, args[2], flags); err != nil {
			return err
		}
	}
	return a.emit(pollTable(polled, flags.showHeaders))
}

func (a *app) pollConsumer(ctx context.Context, c *client.Client, ids []wire.Identifier, partitionText string,
	flags *pollFlags) (*wire.PolledMessages, error) {
	partition, err := parseUint32("partition id", partitionText)
	if err != nil {
		return nil, err
	}
	consumer, err := identifier("consumer", flags.consumer)
	if err != nil {
		return nil, err
	}
	return c.PollMessages(ctx, &wire.PollMessages{Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: consumer},
		Stream: ids[0], Topic: ids[1], Partition: wire.PartitionOf(partition), Strategy: flags.strategy(),
		Count: flags.count, AutoCommit: flags.autoCommit})
}

func (a *app) pollGroup(ctx context.Context, c *client.Client, ids []wire.Identifier,
	flags *pollFlags) (*wire.PolledMessages, error) {
	group, err := identifier("consumer group", flags.group)
	if err != nil {
		return nil, err
	}
	member := c.GroupConsumer(wire.GroupTarget{Stream: ids[0], Topic: ids[1], Group: group})
	polled, err := member.Poll(ctx, flags.strategy(), flags.count, flags.autoCommit)
	if err != nil {
		return nil, err
	}
	if err := member.Leave(ctx); err != nil {
		return nil, err
	}
	return polled, nil
}

func pollTable(polled *wire.PolledMessages, showHeaders bool) table {
	view := pollView{PartitionID: polled.PartitionID, CurrentOffset: polled.CurrentOffset,
		Count: polled.MessagesCount, Messages: []messageView{}}
	t := table{headers: []string{"OFFSET", "TIMESTAMP", "ID", "SIZE", "PAYLOAD"}}
	if showHeaders {
		t.headers = append(t.headers, "HEADERS")
	}
	iterator := polled.Messages()
	for {
		message, ok := iterator.Next()
		if !ok {
			break
		}
		headers, headerLine := decodeHeaders(message.UserHeaders)
		view.Messages = append(view.Messages, messageView{Offset: message.Offset, Timestamp: message.Timestamp,
			OriginTimestamp: message.OriginTimestamp, ID: uint128(message.Header.ID), Checksum: message.Header.Checksum,
			Payload: append([]byte(nil), message.Payload...), Headers: headers})
		row := []string{itoa(message.Offset), timestamp(message.Timestamp), uint128(message.Header.ID),
			itoa(len(message.Payload)), printable(message.Payload)}
		if showHeaders {
			if headerLine == "" {
				headerLine = "-"
			}
			row = append(row, headerLine)
		}
		t.rows = append(t.rows, row)
	}
	t.value = view
	return t
}
