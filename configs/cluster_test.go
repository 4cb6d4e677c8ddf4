package configs

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/whippetio/whippet/shard"
)

const testSecret = "0123456789abcdef0123456789abcdef"

// clusterFile is a valid three-node cluster configuration for replica.
func clusterFile(replica string) string {
	return "[cluster]\nenabled = true\nname = \"orders\"\nreplica_id = " + replica + "\n" +
		"heartbeat_timeout = \"500 ms\"\ntick = \"5 ms\"\n" +
		"[cluster.auth]\nshared_secret = \"" + testSecret + "\"\n" +
		"[[cluster.nodes]]\nname = \"a\"\naddress = \"127.0.0.1:8090\"\nreplica_address = \"127.0.0.1:9090\"\n" +
		"[[cluster.nodes]]\nname = \"b\"\naddress = \"127.0.0.1:8091\"\nreplica_address = \"127.0.0.1:9091\"\n" +
		"[[cluster.nodes]]\nname = \"c\"\naddress = \"127.0.0.1:8092\"\nreplica_address = \"127.0.0.1:9092\"\n"
}

// TestClusterID pins the derivation: the first 8 bytes of SHA-256 of the
// name, little endian (golden values computed outside Go), so that nodes
// built from different releases agree on the id.
func TestClusterID(t *testing.T) {
	for name, want := range map[string]uint64{"whippet-cluster": 11502547181445077088, "": 1449310910991872227} {
		if got := ClusterID(name); got != want {
			t.Errorf("ClusterID(%q) = %d, want %d", name, got, want)
		}
	}
	if ClusterID("orders") == ClusterID("orders2") {
		t.Fatal("two names share an id")
	}
}

// TestClusterOptions: every [cluster] key reaches the replication layer's
// options, and the replica id comes from the flag over the environment
// over the file.
func TestClusterOptions(t *testing.T) {
	path := writeFile(t, clusterFile("0"))
	environ := WithReplicaID([]string{"WHIPPET_CLUSTER_REPLICA_ID=1"}, 2)
	loaded, err := Load(path, environ)
	if err != nil {
		t.Fatal(err)
	}
	options := loaded.Config.ClusterConfig()
	want := []shard.ClusterNode{{Name: "a", Address: "127.0.0.1:8090", ReplicaAddress: "127.0.0.1:9090"},
		{Name: "b", Address: "127.0.0.1:8091", ReplicaAddress: "127.0.0.1:9091"},
		{Name: "c", Address: "127.0.0.1:8092", ReplicaAddress: "127.0.0.1:9092"}}
	if !options.Enabled || options.ID != ClusterID("orders") || options.Replica != 2 || !slices.Equal(options.Nodes, want) {
		t.Fatalf("cluster options %+v", options)
	}
	if string(options.Secret) != testSecret || options.Tick != 5*time.Millisecond || options.HeartbeatTimeout != 500*time.Millisecond {
		t.Fatalf("cluster timing/secret %+v", options)
	}
	net := options.NetOptions()
	if net.Cluster != options.ID || net.Replica != 2 || string(net.Secret) != testSecret ||
		!slices.Equal(net.ReplicaAddresses, []string{"127.0.0.1:9090", "127.0.0.1:9091", "127.0.0.1:9092"}) {
		t.Fatalf("transport options %+v", net)
	}
	server, err := loaded.Config.ServerOptions(Credentials{}, []int{0}, nil)
	if err == nil && !slices.Equal(server.Roster.Nodes, want) {
		t.Fatalf("server options carry roster %+v", server.Roster)
	}
	loaded, err = Load(path, []string{"WHIPPET_CLUSTER_REPLICA_ID=1"})
	if err != nil || loaded.Config.ClusterConfig().Replica != 1 {
		t.Fatalf("environment replica id: %v %+v", err, loaded.Config.Cluster)
	}
	loaded, err = Load("", nil)
	if err != nil || loaded.Config.ClusterConfig().Enabled {
		t.Fatalf("default config clusters: %v %+v", err, loaded.Config.ClusterConfig())
	}
}

// TestWithReplicaID: the flag's value replaces every earlier setting and
// leaves the other variables alone.
func TestWithReplicaID(t *testing.T) {
	got := WithReplicaID([]string{"A=1", EnvReplicaID + "=4", "B=2", EnvReplicaID + "=5"}, 0)
	want := []string{"A=1", "B=2", EnvReplicaID + "=0"}
	if !slices.Equal(got, want) {
		t.Fatalf("WithReplicaID = %q, want %q", got, want)
	}
}

// TestClusterErrorsNameTheKey: each bad [cluster] setting stops the
// server with a message naming the key (and node) to fix.
func TestClusterErrorsNameTheKey(t *testing.T) {
	base := clusterFile("0")
	for _, row := range []struct {
		name, from, to, key string
		environ             []string
	}{
		{"empty name", "name = \"orders\"", "name = \" \"", "cluster.name", nil},
		{"replica id past nodes", "replica_id = 0", "replica_id = 3", "cluster.replica_id", nil},
		{"flag replica id", "", "", "cluster.replica_id", WithReplicaID(nil, -1)},
		{"short secret", testSecret, "short", "cluster.auth.shared_secret", nil},
		{"tick too short", "tick = \"5 ms\"", "tick = \"100 us\"", "cluster.tick", nil},
		{"heartbeat too short", "heartbeat_timeout = \"500 ms\"", "heartbeat_timeout = \"10 ms\"", "cluster.heartbeat_timeout", nil},
		{"node without name", "name = \"b\"", "name = \"\"", "cluster.nodes[1].name", nil},
		{"duplicate name", "name = \"c\"", "name = \"a\"", "cluster.nodes[2].name", nil},
		{"bad address", "address = \"127.0.0.1:8091\"", "address = \"8091\"", "cluster.nodes[1].address", nil},
		{"port zero", "replica_address = \"127.0.0.1:9092\"", "replica_address = \"127.0.0.1:0\"",
			"cluster.nodes[2].replica_address", nil},
		{"shared address", "replica_address = \"127.0.0.1:9091\"", "replica_address = \"127.0.0.1:8090\"",
			"cluster.nodes[1].replica_address", nil},
		{"env node address", "", "", "cluster.nodes[0].address", []string{"WHIPPET_CLUSTER_NODES_0_ADDRESS=nowhere"}},
	} {
		t.Run(row.name, func(t *testing.T) {
			text := base
			if row.from != "" {
				if !strings.Contains(text, row.from) {
					t.Fatalf("base file lacks %q", row.from)
				}
				text = strings.Replace(text, row.from, row.to, 1)
			}
			_, err := Load(writeFile(t, text), row.environ)
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), row.key) {
				t.Fatalf("error %q does not name %q", err, row.key)
			}
		})
	}
}
