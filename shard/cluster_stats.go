package shard

import (
	"cmp"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/vsr"
)

// ClusterStats makes the replication groups of a node visible from outside
// the shards: every clusterStatsPeriod each shard samples the groups it
// hosts (status, view, primary, op, commit) into a snapshot that any thread
// reads (Groups), and logs when a group's primary changed since its last
// sample, at most clusterPrimaryLogsMax lines per shard per period, the rest
// counted in one summary line. It reads the groups only on their shard.
//
// It chains into the runtime through the cluster's transport slot: Wrap
// returns a ClusterTransport that installs the transport and the sampler.
type ClusterStats struct {
	cluster *Cluster
	logger  *slog.Logger
	mu      sync.Mutex
	shards  [][]ClusterGroupStats // by shard id, each sorted by group id
	// primaryChanges counts primary changes seen by this node's samples.
	primaryChanges uint64
}

// ClusterGroupStats is one group as its shard last sampled it.
type ClusterGroupStats struct {
	Group uint64
	// Partition names a partition group's partition (zero for group 0).
	Partition PartitionKey
	Shard     int
	Status    vsr.Status
	View      uint32
	// Primary is the replica this node believes leads the group in View;
	// meaningful only when Status is normal.
	Primary   int
	Op        uint64
	CommitMin uint64 // applied here
	CommitMax uint64 // known committed
}

// Limits of the sampler.
const (
	// clusterStatsPeriod is how stale a sample may be: a scrape or a
	// test looking for a partition's primary sees a change this late.
	clusterStatsPeriod = 200 * time.Millisecond
	// clusterPrimaryLogsMax bounds primary-change lines per shard per
	// period: a node that loses every link changes thousands of groups at
	// once, and one summary line says how many were not logged.
	clusterPrimaryLogsMax = 8
)

// NewClusterStats returns the sampler of cluster's groups.
func NewClusterStats(cluster *Cluster, logger *slog.Logger) *ClusterStats {
	invariant.Assert(cluster != nil, "cluster stats sample a cluster")
	if logger == nil {
		logger = slog.Default()
	}
	return &ClusterStats{cluster: cluster, logger: logger}
}

// Wrap returns transport with the sampler chained into its Install; pass
// it to Cluster.SetTransport.
func (s *ClusterStats) Wrap(transport ClusterTransport) ClusterTransport {
	return statsTransport{ClusterTransport: transport, stats: s}
}

type statsTransport struct {
	ClusterTransport
	stats *ClusterStats
}

func (t statsTransport) Install(options Options) Options {
	options = t.ClusterTransport.Install(options)
	onStart := options.OnStart
	options.OnStart = func(sh *Shard) {
		if onStart != nil {
			onStart(sh)
		}
		t.stats.start(sh)
	}
	return options
}

// start arms sh's sampler; on sh's thread, after the cluster's OnStart.
func (s *ClusterStats) start(sh *Shard) {
	s.mu.Lock()
	if len(s.shards) < len(sh.runtime.shards) {
		s.shards = append(s.shards, make([][]ClusterGroupStats, len(sh.runtime.shards)-len(s.shards))...)
	}
	s.mu.Unlock()
	sampler := &shardSampler{stats: s, shard: sh, primaries: make(map[uint64]seenPrimary)}
	if _, err := sh.Every(clusterStatsPeriod, func(time.Time) { sampler.sample() }); err != nil {
		sh.fail(err)
	}
}

// Groups returns every group of this node as last sampled, sorted by
// group id; any thread. The slice is the caller's.
func (s *ClusterStats) Groups() []ClusterGroupStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []ClusterGroupStats
	for _, groups := range s.shards {
		all = append(all, groups...)
	}
	slices.SortFunc(all, byGroup)
	return all
}

// byGroup orders group samples by group id.
func byGroup(a, b ClusterGroupStats) int { return cmp.Compare(a.Group, b.Group) }

// PrimaryChanges counts the primary changes the samples saw; any thread.
func (s *ClusterStats) PrimaryChanges() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.primaryChanges
}

// Replica is this node's replica id.
func (s *ClusterStats) Replica() int { return s.cluster.options.Replica }

// shardSampler is one shard's sampler; only that shard touches it.
type shardSampler struct {
	stats     *ClusterStats
	shard     *Shard
	primaries map[uint64]seenPrimary // by group, as of the sample that last saw it
	samples   uint64                 // samples taken
	spare     []ClusterGroupStats
}

// seenPrimary is a group's primary (-1: none) at the sample-th sample.
type seenPrimary struct {
	primary int
	sample  uint64
}

func (ss *shardSampler) sample() {
	cs := ss.stats.cluster.shards[ss.shard.ID()]
	if cs == nil {
		return
	}
	groups := ss.spare[:0]
	for id, g := range cs.groups {
		if g.state != vsrGroupOpen || g.replica == nil {
			continue
		}
		groups = append(groups, groupStats(id, ss.shard.ID(), g.replica))
	}
	slices.SortFunc(groups, byGroup)
	changes := ss.logChanges(groups)
	ss.stats.mu.Lock()
	ss.spare = ss.stats.shards[ss.shard.ID()]
	ss.stats.shards[ss.shard.ID()] = groups
	ss.stats.primaryChanges += changes
	ss.stats.mu.Unlock()
}

func groupStats(id uint64, shardID int, replica *vsr.Replica) ClusterGroupStats {
	stats := ClusterGroupStats{Group: id, Shard: shardID, Status: replica.Status(), View: replica.View(),
		Primary: replica.PrimaryIndex(), Op: replica.Op(), CommitMin: replica.CommitMin(), CommitMax: replica.CommitMax()}
	if id&clusterPartitionGroupBit != 0 {
		stats.Partition = partitionKeyOf(id &^ clusterPartitionGroupBit)
	}
	return stats
}

// partitionKeyOf unpacks PartitionKey.Namespace.
func partitionKeyOf(namespace uint64) PartitionKey {
	return PartitionKey{Stream: uint32(namespace >> 32), Topic: uint32(namespace>>20) & NamespaceTopicMax,
		Partition: uint32(namespace & (1<<20 - 1))}
}

// logChanges logs the groups whose primary changed since the last sample
// (a group first seen is not a change) and returns how many changed.
func (ss *shardSampler) logChanges(groups []ClusterGroupStats) uint64 {
	changed, logged := uint64(0), 0
	ss.samples++
	for i := range groups {
		g := &groups[i]
		primary := -1
		if g.Status == vsr.StatusNormal {
			primary = g.Primary
		}
		seen, known := ss.primaries[g.Group]
		before := seen.primary
		if primary < 0 && known {
			primary = before // a group in a view change logs when its new primary is known
		}
		ss.primaries[g.Group] = seenPrimary{primary: primary, sample: ss.samples}
		if !known || before == primary || before < 0 {
			continue
		}
		changed++
		if logged < clusterPrimaryLogsMax {
			logged++
			ss.stats.logger.Info("cluster group primary changed", "group", g.Group, "partition", groupName(g),
				"primary", primary, "previous", before, "view", g.View, "this_replica", ss.stats.Replica())
		}
	}
	if skipped := changed - uint64(logged); skipped > 0 {
		ss.stats.logger.Info("cluster group primaries changed (not logged one by one)", "groups", skipped,
			"shard", ss.shard.ID())
	}
	for group, seen := range ss.primaries {
		if seen.sample != ss.samples {
			delete(ss.primaries, group) // closed groups leave the map
		}
	}
	return changed
}

// groupName is "metadata" or the partition's stream/topic/partition.
func groupName(g *ClusterGroupStats) string {
	if g.Group == MetaGroup {
		return "metadata"
	}
	return g.Partition.String()
}
