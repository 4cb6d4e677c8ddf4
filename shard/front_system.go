package shard

import (
	"bytes"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/wire"
)

// clientRegistry lists every connection of every shard for GetClients,
// GetClient and stats. Connections come and go rarely next to requests,
// so one mutex serves; no request's hot path takes it.
type clientRegistry struct {
	mu      sync.Mutex
	next    uint32
	entries map[uint32]*clientEntry
}

type clientEntry struct {
	userID  uint32
	address string
	groups  []wire.ClientGroup
}

func (r *clientRegistry) add(address string) uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	for r.next == 0 || r.entries[r.next] != nil {
		r.next++
	}
	r.entries[r.next] = &clientEntry{userID: wire.ClientUserNone, address: address}
	return r.next
}

func (r *clientRegistry) remove(id uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.entries, id)
}

func (r *clientRegistry) login(id, userID uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if entry := r.entries[id]; entry != nil {
		entry.userID = userID
		if userID == wire.ClientUserNone {
			entry.groups = nil
		}
	}
}

// setGroup records (joined) or forgets a client's group membership.
func (r *clientRegistry) setGroup(id uint32, group wire.ClientGroup, joined bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	entry := r.entries[id]
	if entry == nil {
		return
	}
	entry.groups = slices.DeleteFunc(entry.groups, func(g wire.ClientGroup) bool { return g == group })
	if joined {
		entry.groups = append(entry.groups, group)
	}
}

func (r *clientRegistry) details(id uint32) (wire.ClientDetails, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	entry := r.entries[id]
	if entry == nil {
		return wire.ClientDetails{}, false
	}
	return wire.ClientDetails{ClientInfo: entry.info(id), ConsumerGroups: slices.Clone(entry.groups)}, true
}

func (e *clientEntry) info(id uint32) wire.ClientInfo {
	return wire.ClientInfo{ClientID: id, UserID: e.userID, Transport: wire.TransportTCP, Address: e.address,
		ConsumerGroupsCount: uint32(len(e.groups))}
}

func (r *clientRegistry) list() wire.ClientList {
	r.mu.Lock()
	defer r.mu.Unlock()
	list := make(wire.ClientList, 0, len(r.entries))
	for id, entry := range r.entries {
		list = append(list, entry.info(id))
	}
	slices.SortFunc(list, func(a, b wire.ClientInfo) int { return int(a.ClientID) - int(b.ClientID) })
	return list
}

func (r *clientRegistry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.entries)
}

func (f *front) getMe(c *call, _ *frontView) {
	if details, ok := f.server.clients.details(c.session.id); ok {
		c.payload = &details
	}
}

func (f *front) getClient(c *call, view *frontView) {
	if !view.access(c.userID).readServers() {
		c.status = wire.StatusUnauthorized
		return
	}
	request := c.body.(*wire.GetClient)
	details, ok := f.server.clients.details(request.ClientID)
	if !ok {
		c.status = wire.StatusClientNotFound // §12 #21: an empty body would crash the Go SDK
		return
	}
	c.payload = &details
}

func (f *front) getClients(c *call, view *frontView) {
	if !view.access(c.userID).readServers() {
		c.status = wire.StatusUnauthorized
		return
	}
	list := f.server.clients.list()
	c.payload = &list
}

// getClusterMetadata reports the roster at the address the client reached
// this node on (§11): a single node reports itself as the healthy leader,
// so that no SDK redirects; a clustered node reports every node, with the
// metadata group's primary as leader.
func (f *front) getClusterMetadata(c *call, _ *frontView) {
	ip, port := "127.0.0.1", 0
	if addr := f.shard.Runtime().Addr(); addr != nil {
		if tcp, ok := addr.(*net.TCPAddr); ok {
			port = tcp.Port
		}
	}
	if local, err := unix.Getsockname(c.session.conn.fd); err == nil {
		if host, _, splitErr := net.SplitHostPort(sockaddrString(local)); splitErr == nil {
			ip = host
		}
	}
	options := &f.server.options
	if options.Roster.Enabled {
		c.payload = &wire.ClusterMetadata{Name: options.ClusterName,
			Nodes: clusterRoster(&options.Roster, f.server.loadClusterView(), ip, port)}
		return
	}
	hostname, _ := os.Hostname() // a name is informational; empty is fine
	if hostname == "" {
		hostname = "whippet"
	}
	c.payload = &wire.ClusterMetadata{Name: options.ClusterName, Nodes: []wire.ClusterNode{{
		Name: hostname, IP: ip, TCPPort: uint16(port), Role: wire.RoleLeader, Status: wire.NodeHealthy}}}
}

func (f *front) getStats(c *call, view *frontView) {
	if !view.access(c.userID).readServers() {
		c.status = wire.StatusUnauthorized
		return
	}
	stats := &wire.Stats{ProcessID: uint32(os.Getpid()), StartTime: uint64(f.server.startedAt.UnixMicro()),
		RunTime:       uint64(time.Since(f.server.startedAt).Microseconds()),
		ClientsCount:  uint32(f.server.clients.count()),
		ServerVersion: ServerRelease, OSName: runtime.GOOS}
	f.statsCounts(stats, view)
	statsHost(stats, f.server.options.DataPath)
	stats.CPUUsage, stats.TotalCPUUsage = f.server.cpu.usage(time.Now(), f.server.startedAt)
	c.payload = stats
}

func (f *front) statsCounts(stats *wire.Stats, view *frontView) {
	for _, stream := range view.streams {
		if stream == nil {
			continue
		}
		stats.StreamsCount++
		for _, topic := range stream.Topics {
			if topic == nil {
				continue
			}
			stats.TopicsCount++
			stats.PartitionsCount += uint32(len(topic.Partitions))
			for _, group := range topic.Groups {
				if group != nil {
					stats.ConsumerGroupsCount++
				}
			}
			for _, partition := range topic.Partitions {
				info := f.partitionInfo(stream.ID, topic.ID, partition)
				stats.SegmentsCount += info.SegmentsCount
				stats.MessagesCount += info.MessagesCount
				stats.MessagesSizeBytes += info.SizeBytes
			}
		}
	}
}

// statsHost fills what the host reports: memory, kernel, disk.
func statsHost(stats *wire.Stats, dataPath string) {
	var memory runtime.MemStats
	runtime.ReadMemStats(&memory)
	stats.MemoryUsage = memory.Sys
	var info unix.Sysinfo_t
	if unix.Sysinfo(&info) == nil {
		unit := uint64(info.Unit)
		stats.TotalMemory = uint64(info.Totalram) * unit
		stats.AvailableMemory = uint64(info.Freeram) * unit
	}
	var name unix.Utsname
	if unix.Uname(&name) == nil {
		stats.Hostname = cString(name.Nodename[:])
		stats.OSName = cString(name.Sysname[:])
		stats.KernelVersion = cString(name.Release[:])
		stats.OSVersion = cString(name.Version[:])
	}
	var disk unix.Statfs_t
	if unix.Statfs(dataPath, &disk) == nil {
		stats.FreeDiskSpace = disk.Bavail * uint64(disk.Bsize)
		stats.TotalDiskSpace = disk.Blocks * uint64(disk.Bsize)
	}
	procStats(stats)
	major, minor, patch := releaseNumbers(ServerRelease)
	stats.ServerSemver = wire.PackVersion(major, minor, patch)
}

// procStats reads the process's I/O and thread counters from /proc.
func procStats(stats *wire.Stats) {
	if io, err := os.ReadFile("/proc/self/io"); err == nil {
		stats.ReadBytes = procField(string(io), "read_bytes:")
		stats.WrittenBytes = procField(string(io), "write_bytes:")
	}
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		stats.ThreadsCount = uint32(procField(string(status), "Threads:"))
	}
}

// procField returns the number after name in a /proc "name value" file.
func procField(text, name string) uint64 {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			value, _ := strconv.ParseUint(strings.TrimSpace(rest), 10, 64) // a malformed line counts as 0
			return value
		}
	}
	return 0
}

func cString(raw []byte) string {
	if end := bytes.IndexByte(raw, 0); end >= 0 {
		raw = raw[:end]
	}
	return string(raw)
}

// releaseNumbers reads "major.minor.patch" from the front of a release.
func releaseNumbers(release string) (uint32, uint32, uint32) {
	var numbers [3]uint32
	part := 0
	start := 0
	for i := 0; i <= len(release) && part < 3; i++ {
		if i == len(release) || release[i] < '0' || release[i] > '9' {
			value, _ := strconv.ParseUint(release[start:i], 10, 10) // non-numbers count as 0
			numbers[part] = uint32(value)
			part++
			start = i + 1
			if i < len(release) && release[i] != '.' {
				break
			}
		}
	}
	return numbers[0], numbers[1], numbers[2]
}
