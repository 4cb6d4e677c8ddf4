package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// durationUnits are the humantime units of a token lifetime, in µs.
var durationUnits = map[string]uint64{
	"us": 1, "ms": 1_000, "s": 1_000_000, "sec": 1_000_000, "secs": 1_000_000, "second": 1_000_000,
	"seconds": 1_000_000, "m": 60_000_000, "min": 60_000_000, "mins": 60_000_000, "minute": 60_000_000,
	"minutes": 60_000_000, "h": 3_600_000_000, "hour": 3_600_000_000, "hours": 3_600_000_000,
	"d": 86_400_000_000, "day": 86_400_000_000, "days": 86_400_000_000,
	"w": 604_800_000_000, "week": 604_800_000_000, "weeks": 604_800_000_000,
}

// parseLifetime reads "1day 12h", "30min", "never" or "server_default"
// (each number followed by its unit) as µs.
func parseLifetime(words []string) (uint64, error) {
	text := strings.ToLower(strings.Join(words, " "))
	switch text {
	case "", "server_default":
		return 0, nil
	case "never", "none", "unlimited":
		return wire.ExpiryNever, nil
	}
	total := uint64(0)
	rest := strings.TrimSpace(text)
	for rest != "" {
		digits := strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsDigit(r) })
		if digits <= 0 {
			return 0, usagef("expiry %q: want a number and a unit (1day 12h, 30min), never or server_default", text)
		}
		number, _ := strconv.ParseUint(rest[:digits], 10, 64) // digits only; overflow is caught below
		rest = strings.TrimLeft(rest[digits:], " ")
		end := strings.IndexFunc(rest, func(r rune) bool { return unicode.IsDigit(r) || r == ' ' })
		if end < 0 {
			end = len(rest)
		}
		scale, known := durationUnits[rest[:end]]
		if !known || number > (^uint64(0)-total)/scale {
			return 0, usagef("expiry %q: unknown unit %q or too long", text, rest[:end])
		}
		total += number * scale
		rest = strings.TrimLeft(rest[end:], " ")
	}
	return total, nil
}

type tokenView struct {
	Name     string `json:"name"`
	Token    string `json:"token,omitempty"`
	ExpiryAt uint64 `json:"expiry_at"`
}

func (a *app) tokenCommand() *cobra.Command {
	create := &cobra.Command{Use: "create <name> [expiry...]",
		Short: "mint a personal access token (shown once)", Args: rangeArgs(1, -1),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			lifetime, err := parseLifetime(args[1:])
			if err != nil {
				return err
			}
			token, err := c.CreatePersonalAccessToken(ctx, args[0], lifetime)
			if err != nil {
				return err
			}
			return a.emit(table{value: tokenView{Name: args[0], Token: token}, headers: []string{"NAME", "TOKEN"},
				rows: [][]string{{args[0], token}}})
		})}
	remove := &cobra.Command{Use: "delete <name>", Short: "delete a personal access token", Args: exactArgs(1),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			if err := c.DeletePersonalAccessToken(ctx, args[0]); err != nil {
				return err
			}
			a.done("personal access token %s deleted", args[0])
			return nil
		})}
	list := &cobra.Command{Use: "list", Short: "list your personal access tokens", Aliases: []string{"ls"},
		Args: exactArgs(0), RunE: a.action(func(ctx context.Context, c *client.Client, _ []string) error {
			tokens, err := c.GetPersonalAccessTokens(ctx)
			if err != nil {
				return err
			}
			views := make([]tokenView, len(tokens))
			t := table{headers: []string{"NAME", "EXPIRY_AT"}}
			for i, token := range tokens {
				views[i] = tokenView{Name: token.Name, ExpiryAt: token.ExpiryAt}
				expiryText := timestamp(token.ExpiryAt)
				if token.ExpiryAt == 0 {
					expiryText = "never"
				}
				t.rows = append(t.rows, []string{token.Name, expiryText})
			}
			t.value = views
			return a.emit(t)
		})}
	return group("pat", "manage personal access tokens", nil, create, remove, list)
}

type clientView struct {
	ClientID            uint32             `json:"client_id"`
	UserID              *uint32            `json:"user_id"`
	Transport           string             `json:"transport"`
	Address             string             `json:"address"`
	ConsumerGroupsCount uint32             `json:"consumer_groups_count"`
	ConsumerGroups      []wire.ClientGroup `json:"consumer_groups,omitempty"`
}

var clientHeaders = []string{"CLIENT_ID", "USER_ID", "TRANSPORT", "ADDRESS", "CONSUMER_GROUPS"}

func newClientView(info *wire.ClientInfo) clientView {
	view := clientView{ClientID: info.ClientID, Transport: transportName(info.Transport), Address: info.Address,
		ConsumerGroupsCount: info.ConsumerGroupsCount}
	if info.UserID != wire.ClientUserNone {
		user := info.UserID
		view.UserID = &user
	}
	return view
}

func clientRow(c clientView) []string {
	user := "-"
	if c.UserID != nil {
		user = itoa(*c.UserID)
	}
	return []string{itoa(c.ClientID), user, c.Transport, c.Address, itoa(c.ConsumerGroupsCount)}
}

func (a *app) emitClient(details *wire.ClientDetails) error {
	view := newClientView(&details.ClientInfo)
	view.ConsumerGroups = details.ConsumerGroups
	return a.emit(table{value: view, headers: clientHeaders, rows: [][]string{clientRow(view)}})
}

func (a *app) clientCommand() *cobra.Command {
	get := &cobra.Command{Use: "get <client_id>", Short: "show one connection", Args: exactArgs(1),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			id, err := parseUint32("client id", args[0])
			if err != nil {
				return err
			}
			details, err := c.GetClient(ctx, id)
			if err != nil {
				return err
			}
			return a.emitClient(details)
		})}
	list := &cobra.Command{Use: "list", Short: "list connections", Aliases: []string{"ls"}, Args: exactArgs(0),
		RunE: a.action(func(ctx context.Context, c *client.Client, _ []string) error {
			clients, err := c.GetClients(ctx)
			if err != nil {
				return err
			}
			views := make([]clientView, len(clients))
			t := table{headers: clientHeaders}
			for i := range clients {
				views[i] = newClientView(&clients[i])
				t.rows = append(t.rows, clientRow(views[i]))
			}
			t.value = views
			return a.emit(t)
		})}
	return group("client", "inspect connected clients", nil, get, list)
}

func (a *app) meCommand() *cobra.Command {
	return &cobra.Command{Use: "me", Short: "show this connection", Args: exactArgs(0),
		RunE: a.action(func(ctx context.Context, c *client.Client, _ []string) error {
			details, err := c.GetMe(ctx)
			if err != nil {
				return err
			}
			return a.emitClient(details)
		})}
}

func (a *app) statsCommand() *cobra.Command {
	return &cobra.Command{Use: "stats", Short: "show server statistics", Args: exactArgs(0),
		RunE: a.action(func(ctx context.Context, c *client.Client, _ []string) error {
			stats, err := c.GetStats(ctx)
			if err != nil {
				return err
			}
			return a.emit(statsTable(stats))
		})}
}

type statsView struct {
	ProcessID           uint32  `json:"process_id"`
	CPUUsage            float32 `json:"cpu_usage"`
	TotalCPUUsage       float32 `json:"total_cpu_usage"`
	MemoryUsage         uint64  `json:"memory_usage"`
	TotalMemory         uint64  `json:"total_memory"`
	AvailableMemory     uint64  `json:"available_memory"`
	RunTime             uint64  `json:"run_time"`
	StartTime           uint64  `json:"start_time"`
	ReadBytes           uint64  `json:"read_bytes"`
	WrittenBytes        uint64  `json:"written_bytes"`
	MessagesSizeBytes   uint64  `json:"messages_size_bytes"`
	StreamsCount        uint32  `json:"streams_count"`
	TopicsCount         uint32  `json:"topics_count"`
	PartitionsCount     uint32  `json:"partitions_count"`
	SegmentsCount       uint32  `json:"segments_count"`
	MessagesCount       uint64  `json:"messages_count"`
	ClientsCount        uint32  `json:"clients_count"`
	ConsumerGroupsCount uint32  `json:"consumer_groups_count"`
	ThreadsCount        uint32  `json:"threads_count"`
	FreeDiskSpace       uint64  `json:"free_disk_space"`
	TotalDiskSpace      uint64  `json:"total_disk_space"`
	Hostname            string  `json:"hostname"`
	OSName              string  `json:"os_name"`
	OSVersion           string  `json:"os_version"`
	KernelVersion       string  `json:"kernel_version"`
	ServerVersion       string  `json:"server_version"`
}

func statsTable(s *wire.Stats) table {
	view := statsView{ProcessID: s.ProcessID, CPUUsage: s.CPUUsage, TotalCPUUsage: s.TotalCPUUsage,
		MemoryUsage: s.MemoryUsage, TotalMemory: s.TotalMemory, AvailableMemory: s.AvailableMemory,
		RunTime: s.RunTime, StartTime: s.StartTime, ReadBytes: s.ReadBytes, WrittenBytes: s.WrittenBytes,
		MessagesSizeBytes: s.MessagesSizeBytes, StreamsCount: s.StreamsCount, TopicsCount: s.TopicsCount,
		PartitionsCount: s.PartitionsCount, SegmentsCount: s.SegmentsCount, MessagesCount: s.MessagesCount,
		ClientsCount: s.ClientsCount, ConsumerGroupsCount: s.ConsumerGroupsCount, ThreadsCount: s.ThreadsCount,
		FreeDiskSpace: s.FreeDiskSpace, TotalDiskSpace: s.TotalDiskSpace, Hostname: s.Hostname, OSName: s.OSName,
		OSVersion: s.OSVersion, KernelVersion: s.KernelVersion, ServerVersion: s.ServerVersion}
	return properties(view, "process_id", itoa(s.ProcessID),
		"cpu_usage", strconv.FormatFloat(float64(s.CPUUsage), 'f', 2, 32),
		"total_cpu_usage", strconv.FormatFloat(float64(s.TotalCPUUsage), 'f', 2, 32),
		"memory_usage", itoa(s.MemoryUsage), "total_memory", itoa(s.TotalMemory),
		"available_memory", itoa(s.AvailableMemory), "run_time", (time.Duration(s.RunTime) * time.Microsecond).String(),
		"start_time", timestamp(s.StartTime), "read_bytes", itoa(s.ReadBytes), "written_bytes", itoa(s.WrittenBytes),
		"messages_size_bytes", itoa(s.MessagesSizeBytes), "streams_count", itoa(s.StreamsCount),
		"topics_count", itoa(s.TopicsCount), "partitions_count", itoa(s.PartitionsCount),
		"segments_count", itoa(s.SegmentsCount), "messages_count", itoa(s.MessagesCount),
		"clients_count", itoa(s.ClientsCount), "consumer_groups_count", itoa(s.ConsumerGroupsCount),
		"threads_count", itoa(s.ThreadsCount), "free_disk_space", itoa(s.FreeDiskSpace),
		"total_disk_space", itoa(s.TotalDiskSpace), "hostname", s.Hostname, "os_name", s.OSName,
		"os_version", s.OSVersion, "kernel_version", s.KernelVersion, "server_version", s.ServerVersion)
}

type pingView struct {
	Sequence  int     `json:"sequence"`
	LatencyMs float64 `json:"latency_ms"`
}

func (a *app) pingCommand() *cobra.Command {
	var count int
	cmd := &cobra.Command{Use: "ping", Short: "measure the round trip to the server (no login needed)",
		Args: exactArgs(0), RunE: func(cmd *cobra.Command, _ []string) error {
			if count <= 0 {
				return usagef("--count must be above zero")
			}
			c, err := a.connect(false)
			if err != nil {
				return err
			}
			views := make([]pingView, 0, count)
			t := table{headers: []string{"SEQ", "LATENCY_MS"}}
			for i := range count {
				ctx, cancel := context.WithTimeout(cmd.Context(), a.timeout)
				start := time.Now()
				err := c.Ping(ctx)
				cancel()
				if err != nil {
					return a.failed(err)
				}
				latency := float64(time.Since(start).Microseconds()) / 1000
				views = append(views, pingView{Sequence: i + 1, LatencyMs: latency})
				t.rows = append(t.rows, []string{strconv.Itoa(i + 1), strconv.FormatFloat(latency, 'f', 3, 64)})
			}
			t.value = views
			return a.emit(t)
		}}
	cmd.Flags().IntVarP(&count, "count", "c", 1, "pings to send")
	return cmd
}

type contextView struct {
	Setting string `json:"setting"`
	Value   string `json:"value"`
	Source  string `json:"source"`
}

// contextCommand shows the connection settings this invocation resolved
// and where each came from, with secrets masked.
func (a *app) contextCommand() *cobra.Command {
	show := &cobra.Command{Use: "show", Short: "show the resolved connection settings and their sources",
		Args: exactArgs(0), RunE: func(cmd *cobra.Command, _ []string) error {
			values := map[string]string{"context": a.contextName, "tcp-server-address": a.address, "username": a.username,
				"password": mask(a.password), "token": mask(a.token), "output": a.output,
				"timeout": a.timeout.String(), "tcp-tls-enabled": strconv.FormatBool(a.tlsOn),
				"tcp-tls-ca-file": a.tlsCAFile, "tcp-tls-domain": a.tlsDomain, "quiet": strconv.FormatBool(a.quiet)}
			names := make([]string, 0, len(values))
			for name := range values {
				names = append(names, name)
			}
			sort.Strings(names)
			views := make([]contextView, len(names))
			t := table{headers: []string{"SETTING", "VALUE", "SOURCE"}}
			for i, name := range names {
				views[i] = contextView{Setting: name, Value: values[name], Source: a.sources[name]}
				t.rows = append(t.rows, []string{name, values[name], a.sources[name]})
			}
			t.value = views
			if err := a.emit(t); err != nil {
				return &runError{err: fmt.Errorf("write output: %w", err)}
			}
			return nil
		}}
	list := &cobra.Command{Use: "list", Short: "list the contexts of contexts.toml", Aliases: []string{"ls"},
		Args: exactArgs(0), RunE: a.contextList}
	use := &cobra.Command{Use: "use <name>", Short: "make a context the active one", Args: exactArgs(1),
		RunE: a.contextUse}
	return group("context", "connection contexts: contexts.toml, flags and WHIPPET_*/IGGY_* environment", nil,
		show, list, use)
}

func mask(secret string) string {
	if secret == "" {
		return ""
	}
	return "********"
}
