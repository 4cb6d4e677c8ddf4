package classic

import "math"

// Ping (1) has an empty body and is allowed before login.
type Ping struct{}

// GetStats (10) has an empty body; the reply is Stats.
type GetStats struct{}

// GetClusterMetadata (12) has an empty body; the reply is ClusterMetadata.
type GetClusterMetadata struct{}

// GetMe (20) has an empty body; the reply is the caller's ClientDetails.
type GetMe struct{}

// GetClients (22) has an empty body; the reply is a ClientList.
type GetClients struct{}

// Empty-body requests ignore trailing bytes like every request does.

func (Ping) Code() Code                                        { return CodePing }
func (*Ping) Decode([]byte) (int, error)                       { return 0, nil }
func (Ping) AppendBody(dst []byte) ([]byte, error)             { return dst, nil }
func (GetStats) Code() Code                                    { return CodeGetStats }
func (*GetStats) Decode([]byte) (int, error)                   { return 0, nil }
func (GetStats) AppendBody(dst []byte) ([]byte, error)         { return dst, nil }
func (GetClusterMetadata) Code() Code                          { return CodeGetClusterMetadata }
func (*GetClusterMetadata) Decode([]byte) (int, error)         { return 0, nil }
func (GetClusterMetadata) AppendBody(d []byte) ([]byte, error) { return d, nil }
func (GetMe) Code() Code                                       { return CodeGetMe }
func (*GetMe) Decode([]byte) (int, error)                      { return 0, nil }
func (GetMe) AppendBody(dst []byte) ([]byte, error)            { return dst, nil }
func (GetClients) Code() Code                                  { return CodeGetClients }
func (*GetClients) Decode([]byte) (int, error)                 { return 0, nil }
func (GetClients) AppendBody(dst []byte) ([]byte, error)       { return dst, nil }

// Snapshot compression values (code 11): 1 stored … 6 xz.
const (
	SnapshotCompressionStored = 1
	SnapshotCompressionMax    = 6
	// SnapshotTypeAll asks for every type and must be the only one listed.
	SnapshotTypeAll = 100
	SnapshotTypeMax = 6
)

// GetSnapshot (11): [compression u8][types_count u8][type u8 × n]. Types is
// a view into the body.
type GetSnapshot struct {
	Compression uint8
	Types       []byte
}

func (GetSnapshot) Code() Code { return CodeGetSnapshot }

// Decode checks the compression (1..6) and types (1..6, or 100 alone).
func (req *GetSnapshot) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.Compression = r.u8("snapshot compression")
	count := int(r.u8("snapshot types_count"))
	typesOffset := r.pos
	req.Types = r.take(count, "snapshot types")
	if r.err == nil {
		if req.Compression < SnapshotCompressionStored || req.Compression > SnapshotCompressionMax {
			r.invalid("snapshot compression", 0, uint64(req.Compression), StatusInvalidCommand)
		}
		if !snapshotTypesValid(req.Types) {
			r.invalid("snapshot types", typesOffset, uint64(count), StatusInvalidFormat)
		}
	}
	return r.pos, r.result()
}

func snapshotTypesValid(types []byte) bool {
	if len(types) == 0 {
		return false
	}
	for _, kind := range types {
		if kind == SnapshotTypeAll && len(types) != 1 {
			return false
		}
		if kind != SnapshotTypeAll && (kind < 1 || kind > SnapshotTypeMax) {
			return false
		}
	}
	return true
}

// AppendBody writes the request body.
func (req GetSnapshot) AppendBody(dst []byte) ([]byte, error) {
	if req.Compression < SnapshotCompressionStored || req.Compression > SnapshotCompressionMax ||
		!snapshotTypesValid(req.Types) {
		return dst, ErrFieldRange
	}
	dst = append(dst, req.Compression, uint8(len(req.Types)))
	return append(dst, req.Types...), nil
}

// GetClient (21): [client_id u32]. The reply is ClientDetails, or empty when
// the client is unknown.
type GetClient struct {
	ClientID uint32
}

func (GetClient) Code() Code { return CodeGetClient }

// Decode reads the body; trailing bytes are ignored.
func (req *GetClient) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.ClientID = r.u32("client_id")
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req GetClient) AppendBody(dst []byte) ([]byte, error) {
	return appendU32(dst, req.ClientID), nil
}

// Stats is the GetStats reply (§4.1). The semver is 0.8's decimal encoding
// (0.8.0 = 8000); see SemverDecimal.
type Stats struct {
	ProcessID           uint32
	CPUUsage            float32
	TotalCPUUsage       float32
	MemoryUsage         uint64
	TotalMemory         uint64
	AvailableMemory     uint64
	RunTime             uint64
	StartTime           uint64
	ReadBytes           uint64
	WrittenBytes        uint64
	MessagesSizeBytes   uint64
	StreamsCount        uint32
	TopicsCount         uint32
	PartitionsCount     uint32
	SegmentsCount       uint32
	MessagesCount       uint64
	ClientsCount        uint32
	ConsumerGroupsCount uint32
	Hostname            string
	OSName              string
	OSVersion           string
	KernelVersion       string
	ServerVersion       string
	ServerSemver        uint32
	CacheMetrics        []CacheMetric
	ThreadsCount        uint32
	FreeDiskSpace       uint64
	TotalDiskSpace      uint64
}

// CacheMetric is one 32-byte cache entry of Stats.
type CacheMetric struct {
	StreamID    uint32
	TopicID     uint32
	PartitionID uint32
	Hits        uint64
	Misses      uint64
	HitRatio    float32
}

// SemverDecimal encodes a version the 0.8 way: major‖minor(3)‖patch(3).
func SemverDecimal(major, minor, patch uint32) uint32 {
	return major*1_000_000 + minor*1_000 + patch
}

// AppendBody writes the reply body.
func (s *Stats) AppendBody(dst []byte) []byte {
	dst = appendU32(dst, s.ProcessID)
	dst = appendU32(dst, math.Float32bits(s.CPUUsage))
	dst = appendU32(dst, math.Float32bits(s.TotalCPUUsage))
	for _, value := range [8]uint64{s.MemoryUsage, s.TotalMemory, s.AvailableMemory, s.RunTime,
		s.StartTime, s.ReadBytes, s.WrittenBytes, s.MessagesSizeBytes} {
		dst = appendU64(dst, value)
	}
	for _, value := range [4]uint32{s.StreamsCount, s.TopicsCount, s.PartitionsCount, s.SegmentsCount} {
		dst = appendU32(dst, value)
	}
	dst = appendU64(dst, s.MessagesCount)
	dst = appendU32(dst, s.ClientsCount)
	dst = appendU32(dst, s.ConsumerGroupsCount)
	for _, text := range [5]string{s.Hostname, s.OSName, s.OSVersion, s.KernelVersion, s.ServerVersion} {
		dst = appendStr32(dst, text)
	}
	dst = appendU32(dst, s.ServerSemver)
	dst = appendU32(dst, uint32(len(s.CacheMetrics)))
	for _, metric := range s.CacheMetrics {
		dst = appendU32(dst, metric.StreamID)
		dst = appendU32(dst, metric.TopicID)
		dst = appendU32(dst, metric.PartitionID)
		dst = appendU64(dst, metric.Hits)
		dst = appendU64(dst, metric.Misses)
		dst = appendU32(dst, math.Float32bits(metric.HitRatio))
	}
	dst = appendU32(dst, s.ThreadsCount)
	dst = appendU64(dst, s.FreeDiskSpace)
	return appendU64(dst, s.TotalDiskSpace)
}

// Decode reads a Stats reply body, which must be consumed exactly.
func (s *Stats) Decode(body []byte) error {
	r := reader{buf: body}
	s.ProcessID = r.u32("stats")
	s.CPUUsage = math.Float32frombits(r.u32("stats"))
	s.TotalCPUUsage = math.Float32frombits(r.u32("stats"))
	for _, field := range [8]*uint64{&s.MemoryUsage, &s.TotalMemory, &s.AvailableMemory, &s.RunTime,
		&s.StartTime, &s.ReadBytes, &s.WrittenBytes, &s.MessagesSizeBytes} {
		*field = r.u64("stats")
	}
	for _, field := range [4]*uint32{&s.StreamsCount, &s.TopicsCount, &s.PartitionsCount, &s.SegmentsCount} {
		*field = r.u32("stats")
	}
	s.MessagesCount = r.u64("stats")
	s.ClientsCount = r.u32("stats")
	s.ConsumerGroupsCount = r.u32("stats")
	for _, field := range [5]*string{&s.Hostname, &s.OSName, &s.OSVersion, &s.KernelVersion, &s.ServerVersion} {
		*field = string(r.str32("stats string"))
	}
	s.ServerSemver = r.u32("stats semver")
	count := r.u32("stats cache_metrics_count")
	if r.err == nil && uint64(count)*32 > uint64(r.remaining()) {
		r.fail("stats cache metrics", int(uint64(count)*32))
	}
	s.CacheMetrics = nil
	for i := uint32(0); i < count && r.err == nil; i++ {
		s.CacheMetrics = append(s.CacheMetrics, CacheMetric{
			StreamID: r.u32("cache metric"), TopicID: r.u32("cache metric"), PartitionID: r.u32("cache metric"),
			Hits: r.u64("cache metric"), Misses: r.u64("cache metric"),
			HitRatio: math.Float32frombits(r.u32("cache metric")),
		})
	}
	s.ThreadsCount = r.u32("stats threads_count")
	s.FreeDiskSpace = r.u64("stats free_disk_space")
	s.TotalDiskSpace = r.u64("stats total_disk_space")
	return r.exact("stats")
}

// ClusterMetadata is the GetClusterMetadata reply (§4.2, as in 0.9).
type ClusterMetadata struct {
	Name  string
	Nodes []ClusterNode
}

// ClusterNode is one node of ClusterMetadata.
type ClusterNode struct {
	Name      string
	IP        string
	TCP       uint16
	QUIC      uint16
	HTTP      uint16
	WebSocket uint16
	Role      uint8
	Status    uint8
}

// Cluster node roles and the healthy status a single node reports.
const (
	NodeRoleLeader    = 0
	NodeRoleFollower  = 1
	NodeStatusHealthy = 0
)

// AppendBody writes the reply body.
func (m *ClusterMetadata) AppendBody(dst []byte) []byte {
	dst = appendStr32(dst, m.Name)
	dst = appendU32(dst, uint32(len(m.Nodes)))
	for _, node := range m.Nodes {
		dst = appendStr32(dst, node.Name)
		dst = appendStr32(dst, node.IP)
		for _, port := range [4]uint16{node.TCP, node.QUIC, node.HTTP, node.WebSocket} {
			dst = appendU16(dst, port)
		}
		dst = append(dst, node.Role, node.Status)
	}
	return dst
}

// Decode reads a ClusterMetadata reply body, which must be consumed exactly.
func (m *ClusterMetadata) Decode(body []byte) error {
	r := reader{buf: body}
	m.Name = string(r.str32("cluster name"))
	count := r.u32("cluster nodes_count")
	// A node takes at least 18 bytes, which bounds the loop by the body.
	if r.err == nil && uint64(count)*18 > uint64(r.remaining()) {
		r.fail("cluster nodes", int(uint64(count)*18))
	}
	m.Nodes = nil
	for i := uint32(0); i < count && r.err == nil; i++ {
		node := ClusterNode{Name: string(r.str32("node name")), IP: string(r.str32("node ip"))}
		node.TCP = r.u16("node port")
		node.QUIC = r.u16("node port")
		node.HTTP = r.u16("node port")
		node.WebSocket = r.u16("node port")
		node.Role = r.u8("node role")
		node.Status = r.u8("node status")
		m.Nodes = append(m.Nodes, node)
	}
	return r.exact("cluster metadata")
}

// SnapshotReply is the GetSnapshot reply: raw ZIP bytes (a view on decode).
type SnapshotReply struct {
	Data []byte
}

// AppendBody writes the reply body.
func (s SnapshotReply) AppendBody(dst []byte) []byte { return append(dst, s.Data...) }

// Decode keeps a view of the whole body.
func (s *SnapshotReply) Decode(body []byte) error {
	s.Data = body
	return nil
}
