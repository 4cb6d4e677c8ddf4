package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"time"

	"github.com/spf13/cobra"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// sendFlags choose the partition and the user headers of message send.
type sendFlags struct {
	partitionID        string
	messageKey         string
	balanced           bool
	headers            []string
	clientPartitioning bool
}

type confirmationView struct {
	StreamID    uint32 `json:"stream_id"`
	TopicID     uint32 `json:"topic_id"`
	PartitionID uint32 `json:"partition_id"`
	BaseOffset  uint64 `json:"base_offset"`
}

type sendView struct {
	MessagesCount int                `json:"messages_count"`
	Confirmations []confirmationView `json:"confirmations"`
}

func (a *app) messageCommand() *cobra.Command {
	var send sendFlags
	sendCommand := &cobra.Command{Use: "send <stream> <topic> [message...]",
		Short: "send messages (one per argument, or one per line of stdin)",
		Long: "send messages as one batch. Without message arguments every non-empty line of stdin\n" +
			"is a message. The partition is chosen by the server's round robin (--balanced, the default), by\n" +
			"--partition-id, or by hashing --message-key. --header key:kind:value adds a user\n" +
			"header to every message (kinds: string, bool, int8..int64, uint8..uint64, float32,\n" +
			"float64, raw as hex); key:value is a string header.",
		Args: rangeArgs(2, -1), RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			return a.messageSend(ctx, c, args, &send)
		})}
	flags := sendCommand.Flags()
	flags.StringVar(&send.partitionID, "partition-id", "", "send to this partition")
	flags.StringVar(&send.messageKey, "message-key", "", "send to the partition this key hashes to")
	flags.BoolVar(&send.balanced, "balanced", false, "round robin over the partitions (the default)")
	flags.StringArrayVarP(&send.headers, "header", "H", nil, "user header key:kind:value (repeatable)")
	flags.BoolVar(&send.clientPartitioning, "client-partitioning", false,
		"resolve --balanced and --message-key in this client (as the Go SDK does), not on the server")
	sendCommand.MarkFlagsMutuallyExclusive("partition-id", "message-key", "balanced")
	return group("message", "send, poll and flush messages", []string{"m"}, sendCommand, a.pollCommand(),
		a.flushCommand())
}

func (a *app) messageSend(ctx context.Context, c *client.Client, args []string, flags *sendFlags) error {
	ids, err := identifiers(args, "stream", "topic")
	if err != nil {
		return err
	}
	partitioning, err := flags.partitioning()
	if err != nil {
		return err
	}
	block, err := flags.headerBlock()
	if err != nil {
		return err
	}
	payloads := args[2:]
	if len(payloads) == 0 {
		if payloads, err = a.readLines(); err != nil {
			return err
		}
	}
	if len(payloads) == 0 {
		return usagef("no messages: pass them as arguments or on stdin")
	}
	now := uint64(time.Now().UnixMicro())
	messages := make([]wire.OutgoingMessage, len(payloads))
	for i, payload := range payloads {
		messages[i] = wire.OutgoingMessage{ID: messageID(), OriginTimestamp: now, Payload: []byte(payload),
			UserHeaders: block}
	}
	// Each run is a new client, so only the server's round robin spreads
	// successive runs over the partitions.
	c.ServerPartitioning(!flags.clientPartitioning)
	confirmations, err := c.SendMessages(ctx, ids[0], ids[1], partitioning, messages)
	if err != nil {
		return err
	}
	view := sendView{MessagesCount: len(messages), Confirmations: []confirmationView{}}
	t := table{headers: []string{"STREAM", "TOPIC", "PARTITION", "BASE_OFFSET", "MESSAGES"}}
	for _, confirmation := range confirmations {
		view.Confirmations = append(view.Confirmations, confirmationView{StreamID: confirmation.StreamID,
			TopicID: confirmation.TopicID, PartitionID: confirmation.PartitionID, BaseOffset: confirmation.BaseOffset})
		t.rows = append(t.rows, []string{itoa(confirmation.StreamID), itoa(confirmation.TopicID),
			itoa(confirmation.PartitionID), itoa(confirmation.BaseOffset), itoa(len(messages))})
	}
	t.value = view
	return a.created(t)
}

// messageID draws a random version-4 UUID, the id Iggy's server assigns
// to a message sent with id 0, so every message is unique to deduplication.
func messageID() wire.Uint128 {
	var id [16]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails on Linux
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return wire.Uint128{Lo: binary.LittleEndian.Uint64(id[:8]), Hi: binary.LittleEndian.Uint64(id[8:])}
}

func (f *sendFlags) partitioning() (wire.Partitioning, error) {
	switch {
	case f.partitionID != "":
		id, err := parseUint32("--partition-id", f.partitionID)
		return wire.PartitionID(id), err
	case f.messageKey != "":
		if len(f.messageKey) > 255 {
			return wire.Partitioning{}, usagef("--message-key must be 1..255 bytes")
		}
		return wire.MessagesKey([]byte(f.messageKey)), nil
	}
	return wire.Balanced(), nil
}

// headerBlock encodes the --header flags once; every message shares it.
func (f *sendFlags) headerBlock() ([]byte, error) {
	if len(f.headers) == 0 {
		return nil, nil
	}
	headers := make(wire.Headers, 0, len(f.headers))
	for _, text := range f.headers {
		entry, err := parseHeader(text)
		if err != nil {
			return nil, err
		}
		headers = append(headers, entry)
	}
	block := make([]byte, headers.EncodedSize())
	headers.Encode(block)
	return block, nil
}

func (a *app) readLines() ([]string, error) {
	var lines []string
	scanner := bufio.NewScanner(a.stdin)
	scanner.Buffer(make([]byte, 64*1024), 64*1024*1024)
	for scanner.Scan() {
		if line := scanner.Text(); line != "" {
			lines = append(lines, line)
		}
	}
	return lines, scanner.Err()
}

func (a *app) flushCommand() *cobra.Command {
	var fsync bool
	cmd := &cobra.Command{Use: "flush <stream> <topic> <partition>", Short: "flush a partition's unsaved buffer",
		Args: exactArgs(3), RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			ids, err := identifiers(args, "stream", "topic")
			if err != nil {
				return err
			}
			partition, err := parseUint32("partition id", args[2])
			if err != nil {
				return err
			}
			err = c.FlushUnsavedBuffer(ctx, &wire.FlushUnsavedBuffer{Stream: ids[0], Topic: ids[1],
				PartitionID: partition, Fsync: fsync})
			if err != nil {
				return err
			}
			a.done("partition %d of %s/%s flushed", partition, args[0], args[1])
			return nil
		})}
	cmd.Flags().BoolVarP(&fsync, "fsync", "f", false, "also fsync the segment")
	return cmd
}
