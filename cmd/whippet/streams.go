package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// identifier reads a stream, topic, group or user argument: a number is
// a numeric id, anything else a name.
func identifier(what, text string) (wire.Identifier, error) {
	if id, err := strconv.ParseUint(text, 10, 32); err == nil {
		return wire.NumericID(uint32(id)), nil
	}
	if len(text) == 0 || len(text) > 255 {
		return wire.Identifier{}, usagef("%s name must be 1..255 bytes, got %d", what, len(text))
	}
	return wire.NamedID(text), nil
}

// identifiers reads the leading arguments as named identifiers.
func identifiers(args []string, what ...string) ([]wire.Identifier, error) {
	out := make([]wire.Identifier, len(what))
	for i, name := range what {
		id, err := identifier(name, args[i])
		if err != nil {
			return nil, err
		}
		out[i] = id
	}
	return out, nil
}

func parseUint32(what, text string) (uint32, error) {
	value, err := strconv.ParseUint(text, 10, 32)
	if err != nil {
		return 0, usagef("%s must be a non-negative integer, got %q", what, text)
	}
	return uint32(value), nil
}

type streamView struct {
	ID            uint32      `json:"id"`
	Name          string      `json:"name"`
	CreatedAt     uint64      `json:"created_at"`
	TopicsCount   uint32      `json:"topics_count"`
	SizeBytes     uint64      `json:"size_bytes"`
	MessagesCount uint64      `json:"messages_count"`
	Topics        []topicView `json:"topics,omitempty"`
}

func newStreamView(s *wire.StreamInfo) streamView {
	return streamView{ID: s.ID, Name: s.Name, CreatedAt: s.CreatedAt, TopicsCount: s.TopicsCount,
		SizeBytes: s.SizeBytes, MessagesCount: s.MessagesCount}
}

func streamRow(s streamView) []string {
	return []string{itoa(s.ID), s.Name, timestamp(s.CreatedAt), itoa(s.TopicsCount), itoa(s.SizeBytes),
		itoa(s.MessagesCount)}
}

var streamHeaders = []string{"ID", "NAME", "CREATED", "TOPICS", "SIZE_BYTES", "MESSAGES"}

func (a *app) streamCommand() *cobra.Command {
	create := &cobra.Command{Use: "create <name>", Short: "create a stream", Args: exactArgs(1),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			info, err := c.CreateStream(ctx, args[0], nil)
			if err != nil {
				return err
			}
			return a.created(table{value: newStreamView(info), headers: streamHeaders,
				rows: [][]string{streamRow(newStreamView(info))}})
		})}
	list := &cobra.Command{Use: "list", Short: "list streams", Aliases: []string{"ls"}, Args: exactArgs(0),
		RunE: a.action(func(ctx context.Context, c *client.Client, _ []string) error {
			streams, err := c.GetStreams(ctx)
			if err != nil {
				return err
			}
			views := make([]streamView, len(streams))
			t := table{headers: streamHeaders}
			for i := range streams {
				views[i] = newStreamView(&streams[i])
				t.rows = append(t.rows, streamRow(views[i]))
			}
			t.value = views
			return a.emit(t)
		})}
	get := &cobra.Command{Use: "get <stream>", Short: "show a stream and its topics", Args: exactArgs(1),
		RunE: a.action(a.streamGet)}
	return group("stream", "manage streams", []string{"s"}, create, list, get, a.streamUpdate(),
		a.streamSimple("delete", "delete a stream and everything in it", (*client.Client).DeleteStream),
		a.streamSimple("purge", "delete every message of a stream", (*client.Client).PurgeStream))
}

func (a *app) streamGet(ctx context.Context, c *client.Client, args []string) error {
	stream, err := identifier("stream", args[0])
	if err != nil {
		return err
	}
	details, err := c.GetStream(ctx, stream)
	if err != nil {
		return err
	}
	view := newStreamView(&details.StreamInfo)
	view.Topics = []topicView{}
	t := table{headers: topicHeaders}
	for i := range details.Topics {
		topic := newTopicView(&details.Topics[i])
		view.Topics = append(view.Topics, topic)
		t.rows = append(t.rows, topicRow(topic))
	}
	t.value = view
	if a.output == "json" {
		return a.emit(t)
	}
	if err := a.emit(properties(nil, "id", itoa(view.ID), "name", view.Name, "created", timestamp(view.CreatedAt),
		"topics", itoa(view.TopicsCount), "size_bytes", itoa(view.SizeBytes),
		"messages", itoa(view.MessagesCount))); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout)
	return a.emit(t)
}

func (a *app) streamUpdate() *cobra.Command {
	return &cobra.Command{Use: "update <stream> <name>", Short: "rename a stream", Args: exactArgs(2),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			stream, err := identifier("stream", args[0])
			if err != nil {
				return err
			}
			if err := c.UpdateStream(ctx, stream, args[1], nil); err != nil {
				return err
			}
			a.done("stream %s renamed to %s", args[0], args[1])
			return nil
		})}
}

func (a *app) streamSimple(verb, short string,
	call func(*client.Client, context.Context, wire.Identifier) error) *cobra.Command {
	return &cobra.Command{Use: verb + " <stream>", Short: short, Args: exactArgs(1),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			stream, err := identifier("stream", args[0])
			if err != nil {
				return err
			}
			if err := call(c, ctx, stream); err != nil {
				return err
			}
			a.done("stream %s: %s done", args[0], verb)
			return nil
		})}
}

func (a *app) partitionCommand() *cobra.Command {
	change := func(verb, short string,
		call func(*client.Client, context.Context, wire.Identifier, wire.Identifier, uint32) error) *cobra.Command {
		return &cobra.Command{Use: verb + " <stream> <topic> <count>", Short: short, Args: exactArgs(3),
			RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
				ids, err := identifiers(args, "stream", "topic")
				if err != nil {
					return err
				}
				count, err := parseUint32("partitions count", args[2])
				if err != nil {
					return err
				}
				if err := call(c, ctx, ids[0], ids[1], count); err != nil {
					return err
				}
				a.done("topic %s/%s: %s %d partition(s) done", args[0], args[1], verb, count)
				return nil
			})}
	}
	return group("partition", "add or remove a topic's partitions", []string{"p"},
		change("create", "append partitions to a topic", (*client.Client).CreatePartitions),
		change("delete", "remove a topic's last partitions", (*client.Client).DeletePartitions))
}

func (a *app) segmentCommand() *cobra.Command {
	remove := &cobra.Command{Use: "delete <stream> <topic> <partition> <count>",
		Short: "delete a partition's oldest sealed segments", Args: exactArgs(4),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			ids, err := identifiers(args, "stream", "topic")
			if err != nil {
				return err
			}
			partition, err := parseUint32("partition id", args[2])
			if err != nil {
				return err
			}
			count, err := parseUint32("segments count", args[3])
			if err != nil {
				return err
			}
			err = c.DeleteSegments(ctx, &wire.DeleteSegments{Stream: ids[0], Topic: ids[1], PartitionID: partition,
				SegmentsCount: count})
			if err != nil {
				return err
			}
			a.done("partition %d of %s/%s: deleted up to %d segment(s)", partition, args[0], args[1], count)
			return nil
		})}
	return group("segment", "manage a partition's segments", []string{"seg"}, remove)
}
