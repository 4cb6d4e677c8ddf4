package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/shard"
	"github.com/whippetio/whippet/wire"
)

// The cluster tests run three real whippet-server processes on loopback
// ports, each with its own data directory, sharing one generated
// configuration file and told apart by --replica-id, and drive them
// through our client: kills are SIGKILL, partitions are SIGSTOP.

// Timing of the test clusters: a backup that hears nothing from its
// primary for clusterHeartbeat starts a view change, so a failover takes
// about that long plus an election.
const (
	clusterTick      = "10 ms"
	clusterHeartbeat = "300 ms"
	clusterSecret    = "whippet-cluster-test-secret-0123456789"
	clusterStartMax  = 60 * time.Second
	// clusterPortTries bounds restarts after a reserved port was taken by
	// another process between reserving and binding it.
	clusterPortTries = 3
	// followingReplyTimeout is the producers' reply timeout: how long they
	// wait on a paused node before they redial another.
	followingReplyTimeout = 3 * time.Second
	// restartPortWaitMax bounds the wait for a killed node's ports.
	restartPortWaitMax = 10 * time.Second
)

// testCluster is a running cluster of whippet-server processes.
type testCluster struct {
	t      *testing.T
	config string
	nodes  []*server
	// clientAddresses and replicaAddresses are by replica id.
	clientAddresses  []string
	replicaAddresses []string
	paused           map[int]bool // nodes stopped with SIGSTOP
}

// startCluster starts size nodes and waits until every node reports every
// node healthy and the same leader. It skips the test when the server
// refuses to run clustered (a build without replication).
func startCluster(t *testing.T, size int) *testCluster {
	t.Helper()
	for try := 1; ; try++ {
		c := &testCluster{t: t}
		err := c.launchAll(size)
		if err == nil {
			c.awaitStable(clusterStartMax)
			return c
		}
		c.stopAll()
		var refused *startError
		if errors.As(err, &refused) && refusesCluster(refused.log) {
			t.Skipf("cluster mode is not available in this build: whippet-server refuses cluster.enabled:\n%s",
				firstLine(refused.log, "cluster"))
		}
		if try >= clusterPortTries || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("start a %d-node cluster: %v", size, err)
		}
		t.Logf("a reserved port was taken meanwhile; starting again: %v", err)
	}
}

// refusesCluster reports whether a server's start log says it cannot run
// clustered, as opposed to failing to start for another reason.
func refusesCluster(log string) bool {
	return strings.Contains(log, "cluster.enabled") && strings.Contains(log, "invalid configuration")
}

func firstLine(text, containing string) string {
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, containing) {
			return line
		}
	}
	return text
}

// launchAll reserves the ports, writes the shared configuration and
// starts every node at once (a node waits for its peers, not they for
// it).
func (c *testCluster) launchAll(size int) error {
	ports, err := reservePorts(2 * size)
	if err != nil {
		return err
	}
	c.clientAddresses, c.replicaAddresses = ports[:size], ports[size:]
	c.config = filepath.Join(c.t.TempDir(), "cluster.toml")
	if err := os.WriteFile(c.config, []byte(clusterConfig(c.t.Name(), c.clientAddresses, c.replicaAddresses)), 0o600); err != nil {
		return err
	}
	c.nodes = make([]*server, size)
	for replica := range size {
		c.nodes[replica] = c.newNode(replica)
	}
	errs := make([]error, size)
	var wg sync.WaitGroup
	for replica, node := range c.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[replica] = node.launch(clusterStartMax)
		}()
	}
	wg.Wait()
	c.t.Cleanup(c.stopAll)
	return errors.Join(errs...)
}

// newNode is replica's process: one shard, on the allowed CPUs in turn so
// that the nodes do not all pin the same core.
func (c *testCluster) newNode(replica int) *server {
	cpus, err := shard.AllowedCPUs()
	if err != nil {
		c.t.Fatal(err)
	}
	node := &server{t: c.t, dataDir: c.t.TempDir(),
		args: []string{"--config", c.config, "--replica-id", strconv.Itoa(replica)}}
	node.env = []string{"WHIPPET_SYSTEM_PATH=" + node.dataDir, "WHIPPET_TCP_ADDRESS=" + c.clientAddresses[replica],
		"WHIPPET_HTTP_ADDRESS=127.0.0.1:0", "WHIPPET_SYSTEM_SHARDING_CPU_ALLOCATION=" + cpuRange(cpus[replica%len(cpus)]),
		"WHIPPET_SYSTEM_SHARDING_SPIN=0 us", "WHIPPET_SYSTEM_CACHE_SIZE=32 MiB",
		"WHIPPET_SYSTEM_TOPIC_DURABILITY=persisted"}
	if backend := os.Getenv("WHIPPET_SYSTEM_SHARDING_BACKEND"); backend != "" {
		node.env = append(node.env, "WHIPPET_SYSTEM_SHARDING_BACKEND="+backend)
	}
	return node
}

// cpuRange names one CPU in the CPU-list syntax ("3-3"): a bare number
// would be a count of CPUs.
func cpuRange(cpu int) string { return strconv.Itoa(cpu) + "-" + strconv.Itoa(cpu) }

// clusterConfig is the configuration file every node shares.
func clusterConfig(name string, clientAddresses, replicaAddresses []string) string {
	var text strings.Builder
	fmt.Fprintf(&text, "[cluster]\nenabled = true\nname = %q\nheartbeat_timeout = %q\ntick = %q\n",
		"test-"+name, clusterHeartbeat, clusterTick)
	fmt.Fprintf(&text, "[cluster.auth]\nshared_secret = %q\n", clusterSecret)
	for replica := range clientAddresses {
		fmt.Fprintf(&text, "[[cluster.nodes]]\nname = \"node-%d\"\naddress = %q\nreplica_address = %q\n",
			replica, clientAddresses[replica], replicaAddresses[replica])
	}
	return text.String()
}

// reservePorts returns count distinct free loopback addresses. The nodes
// must know each other's ports before any starts, so the ports are
// reserved and released; startCluster retries if one was taken meanwhile.
func reservePorts(count int) ([]string, error) {
	listeners := make([]net.Listener, 0, count)
	defer func() {
		for _, listener := range listeners {
			_ = listener.Close() // released for the servers to bind
		}
	}()
	addresses := make([]string, 0, count)
	for range count {
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, listener)
		addresses = append(addresses, listener.Addr().String())
	}
	return addresses, nil
}

func (c *testCluster) stopAll() {
	for _, node := range c.nodes {
		if node != nil && node.command != nil {
			_ = node.command.Process.Signal(syscall.SIGCONT) // a paused node cannot stop
			node.stop()
		}
	}
}

// kill ends a node with SIGKILL and returns when it is gone.
func (c *testCluster) kill(replica int) time.Time {
	c.t.Helper()
	node := c.nodes[replica]
	if err := node.command.Process.Kill(); err != nil {
		c.t.Fatal(err)
	}
	killed := time.Now()
	<-node.exited
	c.t.Logf("node %d killed: its process was gone %v after SIGKILL", replica, time.Since(killed))
	node.command = nil
	return killed
}

// restart starts a stopped node again on its data directory. Its ports
// can stay bound for a moment after a kill (the kernel tears an io_uring
// instance, and the sockets its requests hold, down asynchronously), so
// a start refused with "address already in use" is tried again.
func (c *testCluster) restart(replica int) {
	c.t.Helper()
	deadline := time.Now().Add(restartPortWaitMax)
	for {
		err := c.nodes[replica].launch(clusterStartMax)
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "address already in use") || time.Now().After(deadline) {
			c.t.Fatalf("restart node %d: %v", replica, err)
		}
		time.Sleep(100 * time.Millisecond) // the kernel releases the port on its own schedule
	}
}

// wipe empties a stopped node's data directory.
func (c *testCluster) wipe(replica int) {
	c.t.Helper()
	node := c.nodes[replica]
	if node.command != nil {
		c.t.Fatal("wipe of a running node")
	}
	if err := os.RemoveAll(node.dataDir); err != nil {
		c.t.Fatal(err)
	}
	if err := os.MkdirAll(node.dataDir, 0o755); err != nil {
		c.t.Fatal(err)
	}
}

// signal sends SIGSTOP or SIGCONT to a node.
func (c *testCluster) signal(replica int, signal syscall.Signal) time.Time {
	c.t.Helper()
	if err := c.nodes[replica].command.Process.Signal(signal); err != nil {
		c.t.Fatal(err)
	}
	if c.paused == nil {
		c.paused = map[int]bool{}
	}
	c.paused[replica] = signal == syscall.SIGSTOP
	return time.Now()
}

// pinned is a client that only ever talks to one node: its dialler
// ignores the address it is given, so a leader redirection lands on the
// same node. Reads through it show what that node holds.
func (c *testCluster) pinned(replica int) (*client.Client, error) {
	address := c.clientAddresses[replica]
	dialer := &net.Dialer{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pinned, err := client.Dial(ctx, client.Options{Address: address, Username: "iggy", Password: "iggy",
		ReconnectAttempts: -1, ReplyTimeout: 10 * time.Second, DialTimeout: 2 * time.Second,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, address)
		}})
	if err != nil {
		return nil, err
	}
	c.t.Cleanup(func() { _ = pinned.Close() })
	return pinned, nil
}

// following is a client that starts at node replica and follows the
// leader, redialling the other nodes when its node dies, as an
// application would.
func (c *testCluster) following(replica int) *client.Client {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	following, err := client.Dial(ctx, client.Options{Address: c.clientAddresses[replica], Username: "iggy",
		Password: "iggy", ReconnectAttempts: 30, ReplyTimeout: followingReplyTimeout, DialTimeout: time.Second})
	if err != nil {
		c.t.Fatalf("dial node %d: %v", replica, err)
	}
	c.t.Cleanup(func() { _ = following.Close() })
	return following
}

// roster reads node replica's cluster metadata.
func (c *testCluster) roster(replica int) (*wire.ClusterMetadata, error) {
	pinned, err := c.pinned(replica)
	if err != nil {
		return nil, err
	}
	defer func() { _ = pinned.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return pinned.GetClusterMetadata(ctx)
}

// agreement returns the leader every live node names, when they all name
// the same one and see every live node healthy.
func (c *testCluster) agreement(live []int) (int, string) {
	leader := -1
	for _, replica := range live {
		metadata, err := c.roster(replica)
		if err != nil {
			return -1, fmt.Sprintf("node %d: %v", replica, err)
		}
		if len(metadata.Nodes) != len(c.nodes) {
			return -1, fmt.Sprintf("node %d lists %d nodes", replica, len(metadata.Nodes))
		}
		named, found := metadata.Leader()
		if !found {
			return -1, fmt.Sprintf("node %d names no leader", replica)
		}
		index := c.replicaOf(named)
		if leader >= 0 && index != leader {
			return -1, fmt.Sprintf("node %d names leader %d, another names %d", replica, index, leader)
		}
		leader = index
		for _, peer := range live {
			if metadata.Nodes[peer].Status != wire.NodeHealthy {
				return -1, fmt.Sprintf("node %d sees node %d as %d", replica, peer, metadata.Nodes[peer].Status)
			}
		}
	}
	return leader, ""
}

func (c *testCluster) replicaOf(node wire.ClusterNode) int {
	for replica, address := range c.clientAddresses {
		if sameHostPort(address, net.JoinHostPort(node.IP, strconv.Itoa(int(node.TCPPort)))) {
			return replica
		}
	}
	c.t.Fatalf("roster node %+v is no node of the cluster %v", node, c.clientAddresses)
	return -1
}

func sameHostPort(first, second string) bool {
	firstAddr, errFirst := net.ResolveTCPAddr("tcp", first)
	secondAddr, errSecond := net.ResolveTCPAddr("tcp", second)
	return errFirst == nil && errSecond == nil && firstAddr.String() == secondAddr.String()
}

// awaitStable waits until every running node agrees on a healthy leader
// and returns it.
func (c *testCluster) awaitStable(timeout time.Duration) int {
	c.t.Helper()
	var live []int
	for replica, node := range c.nodes {
		if node.command != nil {
			live = append(live, replica)
		}
	}
	deadline := time.Now().Add(timeout)
	for {
		leader, why := c.agreement(live)
		if why == "" {
			return leader
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("nodes %v not stable after %v: %s\n%s", live, timeout, why, c.logs())
		}
		time.Sleep(50 * time.Millisecond) // real processes: there is no clock to drive
	}
}

func (c *testCluster) logs() string {
	var text strings.Builder
	for replica, node := range c.nodes {
		if node != nil && node.logs != nil {
			fmt.Fprintf(&text, "--- node %d log ---\n%s", replica, node.logs)
		}
	}
	return text.String()
}

// partitionPrimary is the replica that leads a partition's group in view
// 0, as the cluster assigns primaries: group 1<<63 | the partition's
// namespace, primary of view v in group g is (v+g) mod N.
func partitionPrimary(stream, topic, partition uint32, size int) int {
	group := uint64(1)<<63 | shard.PartitionKey{Stream: stream, Topic: topic, Partition: partition}.Namespace()
	return int(group % uint64(size))
}
