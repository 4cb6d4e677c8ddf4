package wire

// NodeRole is a cluster node's role (§1.9).
type NodeRole uint8

// Node roles.
const (
	RoleLeader   NodeRole = 0
	RoleFollower NodeRole = 1
)

// NodeStatus is a cluster node's health (§1.9).
type NodeStatus uint8

// Node statuses.
const (
	NodeHealthy     NodeStatus = 0
	NodeStarting    NodeStatus = 1
	NodeStopping    NodeStatus = 2
	NodeUnreachable NodeStatus = 3
	NodeMaintenance NodeStatus = 4
	NodeUnknown     NodeStatus = 5
)

// String names the role as the cluster views print it.
func (r NodeRole) String() string {
	if r == RoleLeader {
		return "leader"
	}
	return "follower"
}

// String names the status as the cluster views print it; values outside
// the table are "unknown".
func (s NodeStatus) String() string {
	names := [...]string{NodeHealthy: "healthy", NodeStarting: "starting", NodeStopping: "stopping",
		NodeUnreachable: "unreachable", NodeMaintenance: "maintenance", NodeUnknown: "unknown"}
	if int(s) < len(names) {
		return names[s]
	}
	return "unknown"
}

// ClusterNode is one roster entry (§11).
type ClusterNode struct {
	Name          string
	IP            string
	TCPPort       uint16
	QUICPort      uint16
	HTTPPort      uint16
	WebSocketPort uint16
	Role          NodeRole
	Status        NodeStatus
}

// ClusterMetadata is a GetClusterMetadata reply (§11).
type ClusterMetadata struct {
	Name  string
	Nodes []ClusterNode
}

const clusterNodeBytesMin = 4 + 4 + 4*2 + 2

// EncodedSize returns the payload size.
func (m *ClusterMetadata) EncodedSize() int {
	size := 4 + len(m.Name) + 4
	for i := range m.Nodes {
		size += clusterNodeBytesMin + len(m.Nodes[i].Name) + len(m.Nodes[i].IP)
	}
	return size
}

// Encode writes the payload.
func (m *ClusterMetadata) Encode(dst []byte) int {
	size := m.EncodedSize()
	e := newEncoder(dst, size)
	e.str32(m.Name)
	e.u32(uint32(len(m.Nodes)))
	for i := range m.Nodes {
		node := &m.Nodes[i]
		e.str32(node.Name)
		e.str32(node.IP)
		e.u16(node.TCPPort)
		e.u16(node.QUICPort)
		e.u16(node.HTTPPort)
		e.u16(node.WebSocketPort)
		e.u8(uint8(node.Role))
		e.u8(uint8(node.Status))
	}
	return e.done(size)
}

// Decode reads the payload. Like the Go SDK it refuses more than
// ClusterNodesMax nodes and an unknown role or status.
func (m *ClusterMetadata) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	m.Name = string(d.str32("cluster name"))
	start := d.pos
	count := d.count32(clusterNodeBytesMin, "cluster nodes")
	if count > ClusterNodesMax {
		d.failAt(start, "more than 64 cluster nodes")
	}
	m.Nodes = m.Nodes[:0]
	for i := 0; d.err == nil && i < count; i++ {
		node := ClusterNode{Name: string(d.str32("node name")), IP: string(d.str32("node ip"))}
		node.TCPPort = d.u16("node tcp port")
		node.QUICPort = d.u16("node quic port")
		node.HTTPPort = d.u16("node http port")
		node.WebSocketPort = d.u16("node websocket port")
		node.Role = NodeRole(d.u8("node role"))
		node.Status = NodeStatus(d.u8("node status"))
		if node.Role > RoleFollower {
			d.fail("node role unknown")
		}
		if node.Status >= NodeUnknown {
			d.fail("node status unknown")
		}
		m.Nodes = append(m.Nodes, node)
	}
	return d.finish()
}

// Leader returns the first healthy leader of the roster (§11 step 4).
func (m *ClusterMetadata) Leader() (ClusterNode, bool) {
	for _, node := range m.Nodes {
		if node.Role == RoleLeader && node.Status == NodeHealthy {
			return node, true
		}
	}
	return ClusterNode{}, false
}
