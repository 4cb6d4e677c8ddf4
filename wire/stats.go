package wire

import "math"

// Stats is a GetStats reply (§7.8).
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

// CacheMetric is one per-partition cache entry of Stats.
type CacheMetric struct {
	StreamID    uint32
	TopicID     uint32
	PartitionID uint32
	Hits        uint64
	Misses      uint64
	HitRatio    float32
}

const (
	statsFixedBytes  = 108
	cacheMetricBytes = 32
)

// EncodedSize returns the payload size.
func (s *Stats) EncodedSize() int {
	strings := len(s.Hostname) + len(s.OSName) + len(s.OSVersion) + len(s.KernelVersion) + len(s.ServerVersion)
	return statsFixedBytes + 5*4 + strings + 4 + 4 + cacheMetricBytes*len(s.CacheMetrics) + 4 + 8 + 8
}

// Encode writes the payload.
func (s *Stats) Encode(dst []byte) int {
	size := s.EncodedSize()
	e := newEncoder(dst, size)
	e.u32(s.ProcessID)
	e.u32(math.Float32bits(s.CPUUsage))
	e.u32(math.Float32bits(s.TotalCPUUsage))
	for _, value := range [...]uint64{s.MemoryUsage, s.TotalMemory, s.AvailableMemory, s.RunTime,
		s.StartTime, s.ReadBytes, s.WrittenBytes, s.MessagesSizeBytes} {
		e.u64(value)
	}
	e.u32(s.StreamsCount)
	e.u32(s.TopicsCount)
	e.u32(s.PartitionsCount)
	e.u32(s.SegmentsCount)
	e.u64(s.MessagesCount)
	e.u32(s.ClientsCount)
	e.u32(s.ConsumerGroupsCount)
	for _, text := range [...]string{s.Hostname, s.OSName, s.OSVersion, s.KernelVersion, s.ServerVersion} {
		e.str32(text)
	}
	e.u32(s.ServerSemver)
	e.u32(uint32(len(s.CacheMetrics)))
	for _, metric := range s.CacheMetrics {
		e.u32(metric.StreamID)
		e.u32(metric.TopicID)
		e.u32(metric.PartitionID)
		e.u64(metric.Hits)
		e.u64(metric.Misses)
		e.u32(math.Float32bits(metric.HitRatio))
	}
	e.u32(s.ThreadsCount)
	e.u64(s.FreeDiskSpace)
	e.u64(s.TotalDiskSpace)
	return e.done(size)
}

// Decode reads the payload.
func (s *Stats) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	s.ProcessID = d.u32("process id")
	s.CPUUsage = math.Float32frombits(d.u32("cpu usage"))
	s.TotalCPUUsage = math.Float32frombits(d.u32("total cpu usage"))
	for _, field := range [...]*uint64{&s.MemoryUsage, &s.TotalMemory, &s.AvailableMemory, &s.RunTime,
		&s.StartTime, &s.ReadBytes, &s.WrittenBytes, &s.MessagesSizeBytes} {
		*field = d.u64("stats counter")
	}
	s.StreamsCount = d.u32("streams count")
	s.TopicsCount = d.u32("topics count")
	s.PartitionsCount = d.u32("partitions count")
	s.SegmentsCount = d.u32("segments count")
	s.MessagesCount = d.u64("messages count")
	s.ClientsCount = d.u32("clients count")
	s.ConsumerGroupsCount = d.u32("consumer groups count")
	for _, field := range [...]*string{&s.Hostname, &s.OSName, &s.OSVersion, &s.KernelVersion, &s.ServerVersion} {
		*field = string(d.str32("stats string"))
	}
	s.ServerSemver = d.u32("server semver")
	count := d.count32(cacheMetricBytes, "cache metrics")
	s.CacheMetrics = make([]CacheMetric, count)
	for i := range s.CacheMetrics {
		metric := &s.CacheMetrics[i]
		metric.StreamID = d.u32("metric stream id")
		metric.TopicID = d.u32("metric topic id")
		metric.PartitionID = d.u32("metric partition id")
		metric.Hits = d.u64("metric hits")
		metric.Misses = d.u64("metric misses")
		metric.HitRatio = math.Float32frombits(d.u32("metric hit ratio"))
	}
	s.ThreadsCount = d.u32("threads count")
	s.FreeDiskSpace = d.u64("free disk space")
	s.TotalDiskSpace = d.u64("total disk space")
	return d.finish()
}
