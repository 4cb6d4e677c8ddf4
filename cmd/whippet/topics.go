package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

type topicView struct {
	ID              uint32            `json:"id"`
	Name            string            `json:"name"`
	CreatedAt       uint64            `json:"created_at"`
	PartitionsCount uint32            `json:"partitions_count"`
	MessageExpiry   uint64            `json:"message_expiry"`
	Compression     string            `json:"compression_algorithm"`
	MaxTopicSize    uint64            `json:"max_topic_size"`
	SizeBytes       uint64            `json:"size_bytes"`
	MessagesCount   uint64            `json:"messages_count"`
	Options         map[string]string `json:"options,omitempty"`
	DerivedOptions  map[string]string `json:"derived_options,omitempty"`
	Partitions      []partitionView   `json:"partitions,omitempty"`
}

type partitionView struct {
	ID            uint32 `json:"id"`
	CreatedAt     uint64 `json:"created_at"`
	SegmentsCount uint32 `json:"segments_count"`
	CurrentOffset uint64 `json:"current_offset"`
	SizeBytes     uint64 `json:"size_bytes"`
	MessagesCount uint64 `json:"messages_count"`
}

func newTopicView(t *wire.TopicInfo) topicView {
	view := topicView{ID: t.ID, Name: t.Name, CreatedAt: t.CreatedAt, PartitionsCount: t.PartitionsCount,
		MessageExpiry: t.MessageExpiry, Compression: t.Compression.String(), MaxTopicSize: t.MaxTopicSize,
		SizeBytes: t.SizeBytes, MessagesCount: t.MessagesCount}
	view.Options = optionMap(t.Options)
	view.DerivedOptions = optionMap(t.DerivedOptions)
	return view
}

// optionMap renders an option block; nil when it is empty.
func optionMap(block wire.Headers) map[string]string {
	if len(block) == 0 {
		return nil
	}
	options := make(map[string]string, len(block))
	for _, entry := range block {
		options[headerText(entry.Key)] = headerText(entry.Value)
	}
	return options
}

var topicHeaders = []string{"ID", "NAME", "CREATED", "PARTITIONS", "EXPIRY", "COMPRESSION", "MAX_SIZE",
	"SIZE_BYTES", "MESSAGES"}

func topicRow(t topicView) []string {
	return []string{itoa(t.ID), t.Name, timestamp(t.CreatedAt), itoa(t.PartitionsCount), expiry(t.MessageExpiry),
		t.Compression, size(t.MaxTopicSize), itoa(t.SizeBytes), itoa(t.MessagesCount)}
}

// topicFlags are the settings create and update share.
type topicFlags struct {
	maxTopicSize string
	options      []string
}

func (f *topicFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.maxTopicSize, "max-topic-size", "m", "",
		`size limit ("10GB", "unlimited", "server_default")`)
	cmd.Flags().StringArrayVar(&f.options, "option", nil,
		"topic option key=value from the server catalog (segment_size=1GiB, enforce_fsync=true, ...)")
}

// headers builds the option block: compression and expiry from the
// positional arguments, then the flags. Values travel as text, which the
// server parses against its catalog and refuses with InvalidOptionValue.
func (f *topicFlags) headers(compression string, expiryWords []string) (wire.Headers, error) {
	var options wire.Headers
	if compression != "" {
		options = append(options, wire.StringHeader(wire.OptionCompressionAlgorithm, compression))
	}
	if len(expiryWords) > 0 {
		options = append(options, wire.StringHeader(wire.OptionMessageExpiry, strings.Join(expiryWords, " ")))
	}
	if f.maxTopicSize != "" {
		options = append(options, wire.StringHeader(wire.OptionMaxTopicSize, f.maxTopicSize))
	}
	for _, option := range f.options {
		key, value, found := strings.Cut(option, "=")
		if !found || key == "" || value == "" {
			return nil, usagef("--option wants key=value, got %q", option)
		}
		options = append(options, wire.StringHeader(key, value))
	}
	return options, nil
}

func (a *app) topicCommand() *cobra.Command {
	var createFlags, updateFlags topicFlags
	create := &cobra.Command{Use: "create <stream> <name> <partitions> <compression> [message_expiry...]",
		Short: "create a topic",
		Long: "create a topic. compression is none or gzip; message_expiry is a duration\n" +
			"(\"1day 2h\", \"30min\"), \"never\" or \"server_default\".",
		Args: rangeArgs(4, -1), RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			return a.topicCreate(ctx, c, args, &createFlags)
		})}
	createFlags.register(create)
	update := &cobra.Command{Use: "update <stream> <topic> <name> [compression] [message_expiry...]",
		Short: "rename a topic and change its compression, expiry or size limit", Args: rangeArgs(3, -1),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			return a.topicUpdate(ctx, c, args, &updateFlags)
		})}
	updateFlags.register(update)
	list := &cobra.Command{Use: "list <stream>", Short: "list a stream's topics", Aliases: []string{"ls"},
		Args: exactArgs(1), RunE: a.action(a.topicList)}
	get := &cobra.Command{Use: "get <stream> <topic>", Short: "show a topic and its partitions",
		Args: exactArgs(2), RunE: a.action(a.topicGet)}
	return group("topic", "manage topics", []string{"t"}, create, update, list, get,
		a.topicSimple("delete", "delete a topic", (*client.Client).DeleteTopic),
		a.topicSimple("purge", "delete every message of a topic", (*client.Client).PurgeTopic))
}

func (a *app) topicCreate(ctx context.Context, c *client.Client, args []string, flags *topicFlags) error {
	stream, err := identifier("stream", args[0])
	if err != nil {
		return err
	}
	partitions, err := parseUint32("partitions count", args[2])
	if err != nil {
		return err
	}
	options, err := flags.headers(args[3], args[4:])
	if err != nil {
		return err
	}
	details, err := c.CreateTopic(ctx, &wire.CreateTopic{Stream: stream, PartitionsCount: partitions, Name: args[1],
		Options: options})
	if err != nil {
		return err
	}
	view := newTopicView(&details.TopicInfo)
	return a.created(table{value: view, headers: topicHeaders, rows: [][]string{topicRow(view)}})
}

func (a *app) topicUpdate(ctx context.Context, c *client.Client, args []string, flags *topicFlags) error {
	ids, err := identifiers(args, "stream", "topic")
	if err != nil {
		return err
	}
	compression := ""
	if len(args) > 3 {
		compression = args[3]
	}
	var expiryWords []string
	if len(args) > 4 {
		expiryWords = args[4:]
	}
	options, err := flags.headers(compression, expiryWords)
	if err != nil {
		return err
	}
	err = c.UpdateTopic(ctx, &wire.UpdateTopic{Stream: ids[0], Topic: ids[1], Name: args[2], Options: options})
	if err != nil {
		return err
	}
	a.done("topic %s/%s updated", args[0], args[1])
	return nil
}

func (a *app) topicList(ctx context.Context, c *client.Client, args []string) error {
	stream, err := identifier("stream", args[0])
	if err != nil {
		return err
	}
	topics, err := c.GetTopics(ctx, stream)
	if err != nil {
		return err
	}
	views := make([]topicView, len(topics))
	t := table{headers: topicHeaders}
	for i := range topics {
		views[i] = newTopicView(&topics[i])
		t.rows = append(t.rows, topicRow(views[i]))
	}
	t.value = views
	return a.emit(t)
}

func (a *app) topicGet(ctx context.Context, c *client.Client, args []string) error {
	ids, err := identifiers(args, "stream", "topic")
	if err != nil {
		return err
	}
	details, err := c.GetTopic(ctx, ids[0], ids[1])
	if err != nil {
		return err
	}
	view := newTopicView(&details.TopicInfo)
	view.Partitions = []partitionView{}
	t := table{headers: []string{"PARTITION", "CREATED", "SEGMENTS", "CURRENT_OFFSET", "SIZE_BYTES", "MESSAGES"}}
	for _, p := range details.Partitions {
		view.Partitions = append(view.Partitions, partitionView{ID: p.ID, CreatedAt: p.CreatedAt,
			SegmentsCount: p.SegmentsCount, CurrentOffset: p.CurrentOffset, SizeBytes: p.SizeBytes,
			MessagesCount: p.MessagesCount})
		t.rows = append(t.rows, []string{itoa(p.ID), timestamp(p.CreatedAt), itoa(p.SegmentsCount),
			itoa(p.CurrentOffset), itoa(p.SizeBytes), itoa(p.MessagesCount)})
	}
	t.value = view
	if a.output == "json" {
		return a.emit(t)
	}
	if err := a.emit(properties(nil, "id", itoa(view.ID), "name", view.Name, "created", timestamp(view.CreatedAt),
		"partitions", itoa(view.PartitionsCount), "message_expiry", expiry(view.MessageExpiry),
		"compression", view.Compression, "max_topic_size", size(view.MaxTopicSize),
		"size_bytes", itoa(view.SizeBytes), "messages", itoa(view.MessagesCount))); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout)
	return a.emit(t)
}

func (a *app) topicSimple(verb, short string,
	call func(*client.Client, context.Context, wire.Identifier, wire.Identifier) error) *cobra.Command {
	return &cobra.Command{Use: verb + " <stream> <topic>", Short: short, Args: exactArgs(2),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			ids, err := identifiers(args, "stream", "topic")
			if err != nil {
				return err
			}
			if err := call(c, ctx, ids[0], ids[1]); err != nil {
				return err
			}
			a.done("topic %s/%s: %s done", args[0], args[1], verb)
			return nil
		})}
}
