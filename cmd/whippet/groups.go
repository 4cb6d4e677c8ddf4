package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

type groupView struct {
	ID              uint32       `json:"id"`
	Name            string       `json:"name"`
	PartitionsCount uint32       `json:"partitions_count"`
	MembersCount    uint32       `json:"members_count"`
	Members         []memberView `json:"members,omitempty"`
}

type memberView struct {
	ID         uint32   `json:"id"`
	Partitions []uint32 `json:"partitions"`
}

var groupHeaders = []string{"ID", "NAME", "PARTITIONS", "MEMBERS"}

func newGroupView(g *wire.ConsumerGroupInfo) groupView {
	return groupView{ID: g.ID, Name: g.Name, PartitionsCount: g.PartitionsCount, MembersCount: g.MembersCount}
}

func groupRow(g groupView) []string {
	return []string{itoa(g.ID), g.Name, itoa(g.PartitionsCount), itoa(g.MembersCount)}
}

func (a *app) groupCommand() *cobra.Command {
	create := &cobra.Command{Use: "create <stream> <topic> <name>", Short: "create a consumer group",
		Args: exactArgs(3), RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			ids, err := identifiers(args, "stream", "topic")
			if err != nil {
				return err
			}
			info, err := c.CreateConsumerGroup(ctx, ids[0], ids[1], args[2])
			if err != nil {
				return err
			}
			view := newGroupView(info)
			return a.created(table{value: view, headers: groupHeaders, rows: [][]string{groupRow(view)}})
		})}
	remove := &cobra.Command{Use: "delete <stream> <topic> <group>", Short: "delete a consumer group",
		Args: exactArgs(3), RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			ids, err := identifiers(args, "stream", "topic", "consumer group")
			if err != nil {
				return err
			}
			if err := c.DeleteConsumerGroup(ctx, wire.GroupTarget{Stream: ids[0], Topic: ids[1], Group: ids[2]}); err != nil {
				return err
			}
			a.done("consumer group %s of %s/%s deleted", args[2], args[0], args[1])
			return nil
		})}
	get := &cobra.Command{Use: "get <stream> <topic> <group>", Short: "show a consumer group and its members",
		Args: exactArgs(3), RunE: a.action(a.groupGet)}
	list := &cobra.Command{Use: "list <stream> <topic>", Short: "list a topic's consumer groups",
		Aliases: []string{"ls"}, Args: exactArgs(2), RunE: a.action(a.groupList)}
	return group("consumer-group", "manage consumer groups", []string{"cg", "group"}, create, remove, get, list)
}

func (a *app) groupGet(ctx context.Context, c *client.Client, args []string) error {
	ids, err := identifiers(args, "stream", "topic", "consumer group")
	if err != nil {
		return err
	}
	details, err := c.GetConsumerGroup(ctx, wire.GroupTarget{Stream: ids[0], Topic: ids[1], Group: ids[2]})
	if err != nil {
		return err
	}
	view := newGroupView(&details.ConsumerGroupInfo)
	view.Members = []memberView{}
	t := table{headers: append(groupHeaders, "MEMBER", "MEMBER_PARTITIONS")}
	for _, member := range details.Members {
		view.Members = append(view.Members, memberView{ID: member.ID, Partitions: member.Partitions})
		partitions := make([]string, len(member.Partitions))
		for i, partition := range member.Partitions {
			partitions[i] = itoa(partition)
		}
		t.rows = append(t.rows, append(groupRow(view), itoa(member.ID), strings.Join(partitions, ",")))
	}
	if len(details.Members) == 0 {
		t.rows = append(t.rows, append(groupRow(view), "-", "-"))
	}
	t.value = view
	return a.emit(t)
}

func (a *app) groupList(ctx context.Context, c *client.Client, args []string) error {
	ids, err := identifiers(args, "stream", "topic")
	if err != nil {
		return err
	}
	groups, err := c.GetConsumerGroups(ctx, ids[0], ids[1])
	if err != nil {
		return err
	}
	views := make([]groupView, len(groups))
	t := table{headers: groupHeaders}
	for i := range groups {
		views[i] = newGroupView(&groups[i])
		t.rows = append(t.rows, groupRow(views[i]))
	}
	t.value = views
	return a.emit(t)
}

type offsetView struct {
	Consumer      string `json:"consumer"`
	Kind          string `json:"kind"`
	PartitionID   uint32 `json:"partition_id"`
	CurrentOffset uint64 `json:"current_offset"`
	StoredOffset  uint64 `json:"stored_offset"`
}

func (a *app) offsetCommand() *cobra.Command {
	var kind string
	get := &cobra.Command{Use: "get <consumer> <stream> <topic> <partition>",
		Short: "show a consumer's stored offset", Args: exactArgs(4),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			return a.offsetGet(ctx, c, args, kind)
		})}
	set := &cobra.Command{Use: "set <consumer> <stream> <topic> <partition> <offset>",
		Short: "store a consumer's offset", Args: exactArgs(5),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			target, err := offsetTarget(args, kind)
			if err != nil {
				return err
			}
			offset, err := strconv.ParseUint(args[4], 10, 64)
			if err != nil {
				return usagef("offset must be a non-negative integer, got %q", args[4])
			}
			if err := c.StoreConsumerOffset(ctx, target, offset); err != nil {
				return err
			}
			a.done("offset %d stored for %s %s on partition %s of %s/%s", offset, kind, args[0], args[3], args[1], args[2])
			return nil
		})}
	remove := &cobra.Command{Use: "delete <consumer> <stream> <topic> <partition>",
		Short: "delete a consumer's stored offset", Args: exactArgs(4),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			target, err := offsetTarget(args, kind)
			if err != nil {
				return err
			}
			if err := c.DeleteConsumerOffset(ctx, target); err != nil {
				return err
			}
			a.done("offset of %s %s on partition %s of %s/%s deleted", kind, args[0], args[3], args[1], args[2])
			return nil
		})}
	cmd := group("consumer-offset", "get, set and delete stored consumer offsets", []string{"offset", "co"},
		get, set, remove)
	cmd.PersistentFlags().StringVarP(&kind, "kind", "k", "consumer", "consumer kind: consumer or consumer-group")
	return cmd
}

func offsetTarget(args []string, kind string) (wire.OffsetTarget, error) {
	var consumerKind wire.ConsumerKind
	switch kind {
	case "consumer", "c":
		consumerKind = wire.ConsumerSingle
	case "consumer-group", "consumer_group", "group", "cg":
		consumerKind = wire.ConsumerGroup
	default:
		return wire.OffsetTarget{}, usagef("--kind must be consumer or consumer-group, not %q", kind)
	}
	ids, err := identifiers(args, "consumer", "stream", "topic")
	if err != nil {
		return wire.OffsetTarget{}, err
	}
	partition, err := parseUint32("partition id", args[3])
	if err != nil {
		return wire.OffsetTarget{}, err
	}
	return wire.OffsetTarget{Consumer: wire.Consumer{Kind: consumerKind, ID: ids[0]}, Stream: ids[1], Topic: ids[2],
		Partition: wire.PartitionOf(partition)}, nil
}

func (a *app) offsetGet(ctx context.Context, c *client.Client, args []string, kind string) error {
	target, err := offsetTarget(args, kind)
	if err != nil {
		return err
	}
	info, found, err := c.GetConsumerOffset(ctx, target)
	if err != nil {
		return err
	}
	if !found {
		return &noOffsetError{what: kind + " " + args[0] + " on partition " + args[3] + " of " + args[1] + "/" + args[2]}
	}
	view := offsetView{Consumer: args[0], Kind: kind, PartitionID: info.PartitionID,
		CurrentOffset: info.CurrentOffset, StoredOffset: info.StoredOffset}
	return a.emit(table{value: view, headers: []string{"CONSUMER", "KIND", "PARTITION", "CURRENT_OFFSET",
		"STORED_OFFSET"}, rows: [][]string{{view.Consumer, view.Kind, itoa(view.PartitionID),
		itoa(view.CurrentOffset), itoa(view.StoredOffset)}}})
}

// noOffsetError reports that no offset is stored: the protocol answers
// with an empty payload rather than a status, so the CLI names the
// resource-not-found status itself.
type noOffsetError struct{ what string }

func (e *noOffsetError) Error() string { return "no offset stored for " + e.what }
func (e *noOffsetError) Unwrap() error { return wire.StatusResourceNotFound }
