package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/whippetio/whippet/wire"
)

// The edges of a cluster seen from outside: the HTTP roster, the durability
// a send reports, the groups' metrics, and root credentials that must
// agree.

// durabilityTopics creates one topic per durability option in a new
// stream through c and returns the stream id and the topic ids by option.
func durabilityTopics(t *testing.T, create func(stream wire.Identifier, name, durability string) uint32,
	stream uint32, durabilities []string) map[string]uint32 {
	t.Helper()
	topics := make(map[string]uint32)
	for _, durability := range durabilities {
		topics[durability] = create(id(stream), "t-"+durability, durability)
	}
	return topics
}

// httpSend posts one message to the topic over the REST API as iggy/iggy
// and returns the status and the Iggy-Durability header.
func httpSend(t *testing.T, base string, stream, topic uint32) (int, string) {
	t.Helper()
	body := []byte(`{"partitioning":{"kind":"partition_id","value":"AAAAAA=="},"messages":[{"payload":"aGVsbG8="}]}`)
	request, err := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/streams/%d/topics/%d/messages", base, stream, topic),
		bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	request.SetBasicAuth("iggy", "iggy")
	request.Header.Set("Content-Type", "application/json")
	response, err := (&http.Client{Timeout: 20 * time.Second}).Do(request)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	_, _ = io.Copy(io.Discard, response.Body) // only the status and header matter
	return response.StatusCode, response.Header.Get("Iggy-Durability")
}

// TestHTTPSendDurability: on a single node an acknowledged HTTP send says
// the topic's durability reached: memory, written or persisted; a
// replicated topic (a quorum of one wrote it) reaches written.
func TestHTTPSendDurability(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	ctx := ctxTimeout(t)
	stream := must[*wire.StreamInfo](t, "create stream")(c.CreateStream(ctx, "durable", nil))
	create := func(stream wire.Identifier, name, durability string) uint32 {
		return must[*wire.TopicDetails](t, "create topic")(c.CreateTopic(ctx, &wire.CreateTopic{Stream: stream,
			PartitionsCount: 1, Name: name, Options: wire.Headers{wire.StringHeader(wire.OptionDurability, durability)}})).ID
	}
	topics := durabilityTopics(t, create, stream.ID, []string{"memory", "written", "replicated", "persisted"})
	want := map[string]string{"memory": "memory", "written": "written", "replicated": "written", "persisted": "persisted"}
	base := "http://" + logField(t, s, "http_address")
	for durability, topic := range topics {
		status, reached := httpSend(t, base, stream.ID, topic)
		if status/100 != 2 || reached != want[durability] {
			t.Fatalf("send to a %s topic: status %d, Iggy-Durability %q", durability, status, reached)
		}
	}
}

// TestClusterOneNodeSendDurability: a one-node cluster acknowledges a send
// once its group committed it: persisted for a persisted topic, replicated
// for a memory or written one, as the HTTP reply says.
func TestClusterOneNodeSendDurability(t *testing.T) {
	c := startCluster(t, 1)
	c.checkSendDurability([]int{0})
}

// checkSendDurability creates topics of every durability through live[0]
// and sends to each over HTTP on every live node.
func (c *testCluster) checkSendDurability(live []int) {
	t := c.t
	ctx := ctxTimeout(t)
	leader := c.following(live[0])
	stream := must[*wire.StreamInfo](t, "create stream")(leader.CreateStream(ctx, "durable", nil))
	create := func(stream wire.Identifier, name, durability string) uint32 {
		return must[*wire.TopicDetails](t, "create topic")(leader.CreateTopic(ctx, &wire.CreateTopic{Stream: stream,
			PartitionsCount: 1, Name: name, Options: wire.Headers{wire.StringHeader(wire.OptionDurability, durability)}})).ID
	}
	topics := durabilityTopics(t, create, stream.ID, []string{"memory", "written", "replicated", "persisted"})
	want := map[string]string{"memory": "replicated", "written": "replicated", "replicated": "replicated",
		"persisted": "persisted"}
	for _, replica := range live {
		base := "http://" + logField(t, c.nodes[replica], "http_address")
		for durability, topic := range topics {
			c.eventually(20*time.Second, fmt.Sprintf("node %d acknowledges a send to the %s topic", replica, durability),
				func() string {
					status, reached := httpSend(t, base, stream.ID, topic)
					if status/100 != 2 || reached != want[durability] {
						return fmt.Sprintf("status %d, Iggy-Durability %q, want %q", status, reached, want[durability])
					}
					return ""
				})
		}
	}
}

// TestClusterEdges: on three nodes, every node's GET /cluster/metadata
// lists the three nodes healthy with the leader the TCP roster names; HTTP
// sends report replicated or persisted; /metrics shows each partition's
// primary (the same on every node, view 0's as assigned), the groups each
// node leads, and the transport's counters. Beyond -short, the primary of
// a partition is killed and a survivor logs and reports its new primary.
func TestClusterEdges(t *testing.T) {
	c := startCluster(t, clusterSize)
	leader := c.awaitStable(clusterStartMax)
	for replica := range clusterSize {
		c.checkHTTPRoster(replica, leader)
	}
	c.checkSendDurability(survivors(clusterSize))
	target := c.createTopic(clusterSize, survivors(clusterSize))
	for replica := range clusterSize {
		c.eventually(20*time.Second, fmt.Sprintf("node %d's metrics name every primary", replica), func() string {
			return c.checkGroupMetrics(replica, target, -1)
		})
	}
	if testing.Short() {
		return
	}
	victim := partitionPrimary(target.stream, target.topic, 0, clusterSize)
	c.kill(victim)
	witness := (victim + 1) % clusterSize
	c.eventually(20*time.Second, fmt.Sprintf("node %d reports a new primary of partition 0", witness), func() string {
		return c.checkGroupMetrics(witness, target, victim)
	})
	key := fmt.Sprintf("partition=%d/%d/%d", target.stream, target.topic, 0)
	c.eventually(5*time.Second, "the witness logs the change", func() string {
		for _, line := range strings.Split(c.nodes[witness].logs.String(), "\n") {
			if strings.Contains(line, "cluster group primary changed") && strings.Contains(line, key) &&
				strings.Contains(line, "previous="+strconv.Itoa(victim)) {
				return ""
			}
		}
		return "no primary change logged for " + key
	})
}

// checkHTTPRoster compares node replica's HTTP roster with the cluster.
func (c *testCluster) checkHTTPRoster(replica, leader int) {
	t := c.t
	c.eventually(20*time.Second, fmt.Sprintf("node %d's /cluster/metadata", replica), func() string {
		api := newAPI(t, c.nodes[replica]).basic("iggy", "iggy")
		status, body := api.do(http.MethodGet, "/cluster/metadata", nil)
		if status != http.StatusOK {
			return fmt.Sprintf("status %d: %v", status, body)
		}
		nodes, _ := field(t, body, "nodes").([]any)
		if len(nodes) != clusterSize {
			return fmt.Sprintf("nodes %v", body)
		}
		for index, node := range nodes {
			role := field(t, node, "role")
			wantRole := "follower"
			if index == leader {
				wantRole = "leader"
			}
			if field(t, node, "status") != "healthy" || role != wantRole || field(t, node, "name") != fmt.Sprintf("node-%d", index) {
				return fmt.Sprintf("node %d is %v, want %s and healthy", index, node, wantRole)
			}
			port := int(field(t, node, "endpoints", "tcp").(float64))
			if !strings.HasSuffix(c.clientAddresses[index], ":"+strconv.Itoa(port)) {
				return fmt.Sprintf("node %d tcp port %d, want %s", index, port, c.clientAddresses[index])
			}
		}
		return ""
	})
}

// checkGroupMetrics scrapes node replica's /metrics and checks every
// partition of target has a primary in it other than down (-1: none is
// down, then it must be view 0's primary), that the per node counts of
// groups led add up, and that the transport carried messages.
func (c *testCluster) checkGroupMetrics(replica int, target clusterTopic, down int) string {
	metrics, err := scrapeSeries("http://" + logField(c.t, c.nodes[replica], "http_address") + "/metrics")
	if err != nil {
		return err.Error()
	}
	led := 0.0
	for node := range clusterSize {
		led += metrics[fmt.Sprintf(`whippet_cluster_groups_led{node="node-%d"}`, node)]
	}
	if normal := metrics[`whippet_cluster_groups{status="normal"}`]; led != normal || normal < float64(target.partitions)+1 {
		return fmt.Sprintf("groups led %v, normal groups %v", led, normal)
	}
	for partition := range target.partitions {
		name := fmt.Sprintf(`whippet_cluster_group_primary{group="partition",partition="%d",stream="%d",topic="%d"}`,
			partition, target.stream, target.topic)
		primary, ok := metrics[name]
		want := partitionPrimary(target.stream, target.topic, partition, clusterSize)
		switch {
		case !ok:
			return "no " + name
		case down < 0 && int(primary) != want:
			return fmt.Sprintf("%s = %v, want %d", name, primary, want)
		case down >= 0 && (primary < 0 || int(primary) == down):
			return fmt.Sprintf("%s = %v with node %d down", name, primary, down)
		}
	}
	if metrics["whippet_cluster_net_messages_sent_total"] == 0 || metrics["whippet_cluster_net_messages_received_total"] == 0 {
		return "the transport counters read zero"
	}
	if metrics[`whippet_cluster_replica{node="node-`+strconv.Itoa(replica)+`"}`] != float64(replica) {
		return "whippet_cluster_replica does not name this node"
	}
	return ""
}

// scrapeSeries reads a Prometheus text page into series → value.
func scrapeSeries(url string) (map[string]float64, error) {
	response, err := (&http.Client{Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		return nil, err
	}
	defer response.Body.Close()
	metrics := make(map[string]float64)
	scanner := bufio.NewScanner(response.Body)
	for scanner.Scan() {
		line := scanner.Text()
		cut := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || cut < 0 {
			continue
		}
		value, err := strconv.ParseFloat(line[cut+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %w", line, err)
		}
		metrics[line[:cut]] = value
	}
	return metrics, scanner.Err()
}

// TestClusterRootCredentialsMustAgree: three fresh nodes of which one is
// started with another root password (a backup, then the metadata
// group's first primary). The root user is created once, through the
// metadata group, by whichever node's proposal commits first; every node
// whose credentials differ from it refuses to run (exit 2, naming the
// settings), and the nodes that agree serve logins with it.
func TestClusterRootCredentialsMustAgree(t *testing.T) {
	t.Run("backup differs", func(t *testing.T) {
		checkRootCredentials(t, []string{"iggy", "iggy", "another-password"})
	})
	t.Run("primary differs", func(t *testing.T) {
		checkRootCredentials(t, []string{"another-password", "iggy", "iggy"})
	})
}

func checkRootCredentials(t *testing.T, passwords []string) {
	ports, err := reservePorts(2 * clusterSize)
	if err != nil {
		t.Fatal(err)
	}
	c := &testCluster{t: t, clientAddresses: ports[:clusterSize], replicaAddresses: ports[clusterSize:]}
	c.config = t.TempDir() + "/cluster.toml"
	name := strings.ReplaceAll(t.Name(), "/", "-")
	if err := os.WriteFile(c.config, []byte(clusterConfig(name, c.clientAddresses, c.replicaAddresses)), 0o600); err != nil {
		t.Fatal(err)
	}
	c.nodes = make([]*server, clusterSize)
	for replica := range clusterSize {
		c.nodes[replica] = c.newNode(replica)
		c.nodes[replica].env = append(c.nodes[replica].env, "WHIPPET_ROOT_PASSWORD="+passwords[replica])
	}
	t.Cleanup(c.stopAll)
	exits := c.launchExpectingExits()
	refused := map[string]bool{}
	for replica, exit := range exits {
		if exit == "" {
			continue
		}
		if !strings.Contains(exit, "WHIPPET_ROOT_PASSWORD") || !strings.Contains(exit, "exit status 2") {
			t.Fatalf("node %d stopped, but not for its root credentials: %s\n%s", replica, exit, c.logs())
		}
		refused[passwords[replica]] = true
	}
	if len(refused) != 1 {
		t.Fatalf("refused passwords %v: want exactly the one that lost\n%s", refused, c.logs())
	}
	for replica, exit := range exits {
		if exit != "" {
			continue
		}
		if refused[passwords[replica]] {
			t.Fatalf("node %d runs with a refused password\n%s", replica, c.logs())
		}
		node := c.nodes[replica]
		logged := node.dialAs(t, "iggy", passwords[replica])
		_ = logged.Close() // the login was the check
	}
	t.Logf("refused: %v", refused)
}

// launchExpectingExits starts every node and returns, by replica, why it
// exited ("" for a node still running) once every node whose password
// lost has exited: a node with the losing password stops soon after the
// root user committed; the test waits until the set of exits is stable.
func (c *testCluster) launchExpectingExits() []string {
	exits := make([]string, len(c.nodes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for replica, node := range c.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := node.launch(clusterStartMax)
			var early *startError
			if errors.As(err, &early) {
				mu.Lock()
				exits[replica] = fmt.Sprint(early.exit) + ": " + early.log
				mu.Unlock()
				return
			}
			if err != nil {
				c.t.Errorf("node %d: %v", replica, err)
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(clusterStartMax)
	for time.Now().Before(deadline) {
		for replica, node := range c.nodes {
			if exits[replica] != "" || node.command == nil {
				continue
			}
			select {
			case err := <-node.exited:
				exits[replica] = fmt.Sprint(err) + ": " + node.logs.String()
				node.command = nil
			default:
			}
		}
		if c.rootSettled(exits) {
			return exits
		}
		time.Sleep(100 * time.Millisecond) // real processes: there is no clock to drive
	}
	c.t.Fatalf("the root user was not settled after %v\n%s", clusterStartMax, c.logs())
	return nil
}

// rootSettled reports whether every running node logged the root user's
// creation, or at least one node already refused and the rest created it.
func (c *testCluster) rootSettled(exits []string) bool {
	for replica, node := range c.nodes {
		if exits[replica] != "" {
			continue
		}
		if !strings.Contains(node.logs.String(), "created the root user through the metadata group") {
			return false
		}
	}
	return true
}
