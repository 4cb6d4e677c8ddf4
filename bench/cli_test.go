package bench

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestParseArgsKindDefaults pins iggy-bench's per-kind defaults (BENCH-NOTES
// §2, §3) for a bare "whippet-bench <kind>".
func TestParseArgsKindDefaults(t *testing.T) {
	rows := []struct {
		kind                                           string
		producers, consumers, streams, partitions, cgs int
	}{
		{"pinned-producer", 8, 0, 8, 1, 0},
		{"pc", 0, 8, 8, 1, 0},
		{"ppc", 8, 8, 8, 1, 0},
		{"balanced-producer", 8, 0, 1, 24, 0},
		{"bcg", 0, 8, 1, 24, 1},
		{"bpcg", 8, 8, 1, 24, 1},
		{"e2e", 8, 8, 8, 1, 0},
		{"e2ecg", 8, 8, 1, 24, 1},
	}
	for _, row := range rows {
		command, err := ParseArgs([]string{row.kind})
		if err != nil {
			t.Fatalf("%s: %v", row.kind, err)
		}
		c := command.Config
		if c.Producers != row.producers || c.Consumers != row.consumers || c.Streams != row.streams ||
			c.Partitions != row.partitions || c.ConsumerGroups != row.cgs {
			t.Errorf("%s: producers %d consumers %d streams %d partitions %d groups %d; want %+v", row.kind,
				c.Producers, c.Consumers, c.Streams, c.Partitions, c.ConsumerGroups, row)
		}
		checkGlobalDefaults(t, row.kind, &c)
	}
}

// checkGlobalDefaults pins the global option defaults of BENCH-NOTES §3.
func checkGlobalDefaults(t *testing.T, kind string, c *Config) {
	t.Helper()
	switch {
	case c.MessageSize != Fixed(1000) || c.MessagesPerBatch != Fixed(1000) || c.MessageBatches != 1000:
		t.Errorf("%s: sizes %v × %v × %d", kind, c.MessageSize, c.MessagesPerBatch, c.MessageBatches)
	case c.SamplingTime != 10*time.Millisecond || c.MovingAverageWindow != 20 || c.Warmup != 0:
		t.Errorf("%s: sampling %v window %d warmup %v", kind, c.SamplingTime, c.MovingAverageWindow, c.Warmup)
	case c.Username != "iggy" || c.Password != "iggy" || c.Transport != "tcp" || c.NoDelay:
		t.Errorf("%s: credentials %s/%s transport %s nodelay %v", kind, c.Username, c.Password, c.Transport, c.NoDelay)
	case c.RateLimit != 0 || c.Rate != 0 || c.TotalData != 0 || c.ReadAmplification != 1.05:
		t.Errorf("%s: rate-limit %d rate %d total %d amplification %v", kind, c.RateLimit, c.Rate, c.TotalData,
			c.ReadAmplification)
	case c.ServerAddress != "" || c.Durability != "" || c.InFlight != 1:
		t.Errorf("%s: address %q durability %q in-flight %d", kind, c.ServerAddress, c.Durability, c.InFlight)
	}
}

// TestParseArgsSections checks that each section owns its short flags:
// -p is the password before the kind and the producers after it, -T the
// total data before and the max topic size after.
func TestParseArgsSections(t *testing.T) {
	args := strings.Fields("-p secret -T 2GB -m 200..500 -P 100 -w 1s -t 5ms -W 7 --rate 50000 " +
		"bp -p 3 -a 6 -T 1GiB -e 5min --durability written " +
		"tcp --server-address 10.0.0.1:8090 --nodelay output -o out --remark r1 --gitref abc --identifier box")
	command, err := ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	c := command.Config
	if c.Password != "secret" || c.TotalData != 2_000_000_000 || c.MaxTopicSize != 1<<30 || c.Producers != 3 {
		t.Errorf("password %q total %d max topic %d producers %d", c.Password, c.TotalData, c.MaxTopicSize, c.Producers)
	}
	if c.MessageSize != (Range{200, 500}) || c.MessagesPerBatch != Fixed(100) || c.MessageBatches != 0 {
		t.Errorf("size %v per batch %v batches %d", c.MessageSize, c.MessagesPerBatch, c.MessageBatches)
	}
	if c.Warmup != time.Second || c.SamplingTime != 5*time.Millisecond || c.MovingAverageWindow != 7 {
		t.Errorf("warmup %v sampling %v window %d", c.Warmup, c.SamplingTime, c.MovingAverageWindow)
	}
	if c.Rate != 50000 || c.Durability != "written" || c.MessageExpiry != 5*time.Minute || c.Partitions != 6 {
		t.Errorf("rate %d durability %q expiry %v partitions %d", c.Rate, c.Durability, c.MessageExpiry, c.Partitions)
	}
	if c.ServerAddress != "10.0.0.1:8090" || !c.NoDelay || c.OutputDir != "out" || c.Remark != "r1" ||
		c.GitRef != "abc" || c.Identifier != "box" {
		t.Errorf("address %q nodelay %v dir %q remark %q gitref %q id %q", c.ServerAddress, c.NoDelay, c.OutputDir,
			c.Remark, c.GitRef, c.Identifier)
	}
}

// TestParseArgsRejects lists command lines that must fail, and why.
func TestParseArgsRejects(t *testing.T) {
	rows := []struct{ args, why string }{
		{"", "no kind"},
		{"flying-producer", "unknown kind"},
		{"-b 10 -T 1GB pp", "batches and total data together"},
		{"pp -p 4 -s 2", "pinned producer streams differ from producers"},
		{"pc -c 2 -s 3", "more streams than pinned consumers"},
		{"ppc -a 2", "pinned producer and consumer with 2 partitions"},
		{"bp -a 1", "balanced producer with one partition"},
		{"bcg -s 2 -g 1", "fewer groups than streams"},
		{"bpcg -a 4 -c 8", "fewer partitions than group consumers"},
		{"e2e -p 2 -s 3", "more streams than producing consumers"},
		{"e2ecg -p 2 -s 3 -g 3", "more streams than producers"},
		{"pp quic", "a transport other than tcp"},
		{"pp tcp --tls", "TLS"},
		{"-m 0 pp", "zero message size"},
		{"-m 2000000 pp", "message size above the cap"},
		{"--rate 100 -r 1MB pp", "open and closed loop together"},
		{"--durability fast pp", "unknown durability"},
		{"--in-flight 65 pp", "in-flight above the cap"},
		{"pp tcp extra", "a stray word"},
		{"-H pp", "the high-level API, which our client lacks"},
	}
	for _, row := range rows {
		if _, err := ParseArgs(strings.Fields(row.args)); err == nil || !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%q (%s): err = %v, want ErrInvalidConfig", row.args, row.why, err)
		}
	}
}

func TestParseArgsCommands(t *testing.T) {
	if command, err := ParseArgs([]string{"examples"}); err != nil || command.Name != "examples" {
		t.Errorf("examples: %+v %v", command, err)
	}
	if _, err := ParseArgs([]string{"--help"}); !errors.Is(err, ErrHelp) {
		t.Errorf("--help: %v", err)
	}
	command, err := ParseArgs(strings.Fields("suite --repeats 1 --workloads p1,e2e1 --duration 2s --profile cpu"))
	if err != nil || command.Name != "suite" || command.Suite.Repeats != 1 || len(command.Suite.Workloads) != 2 ||
		command.Suite.Duration != 2*time.Second || command.Profile != "cpu" {
		t.Errorf("suite: %+v %v", command, err)
	}
	if _, err := ParseArgs(strings.Fields("suite --workloads p9")); err == nil {
		t.Error("suite accepted an unknown workload")
	}
	command, err = ParseArgs(strings.Fields("e2e --producing-consumers 3 --max-duration 2s --seed 7 --server-pid 42"))
	if err != nil || command.Config.ServerPID != 42 || command.Config.Producers != 3 || command.Config.Consumers != 3 || command.Config.Streams != 3 ||
		command.Config.MaxDuration != 2*time.Second || command.Config.Seed != 7 {
		t.Errorf("e2e: %+v %v", command.Config, err)
	}
	if _, err := ParseArgs(strings.Fields("pp --remark x")); err == nil {
		t.Error("--remark accepted outside the output section")
	}
}

func TestKinds(t *testing.T) {
	if len(Kinds()) != 8 {
		t.Fatalf("%d kinds, iggy-bench has 8", len(Kinds()))
	}
	for _, kind := range Kinds() {
		for _, name := range []string{kind.String(), kind.Alias(), kind.Enum()} {
			if parsed, ok := ParseKind(name); !ok || parsed != kind {
				t.Errorf("ParseKind(%q) = %v, %v", name, parsed, ok)
			}
		}
		if kind.HasProducers() == kind.ConsumerOnly() {
			t.Errorf("%s: a kind either produces or only consumes", kind)
		}
		if kind.EndToEnd() && !(kind.HasProducers() && kind.HasConsumers()) {
			t.Errorf("%s: end-to-end latency needs both sides", kind)
		}
	}
	if KindBalancedProducerAndConsumerGroup.Token() != "balanced_producer_and_consumer" {
		t.Error("bpcg's run name token is iggy-bench's (sic)")
	}
	if Kind(0).Valid() || Kind(99).String() != "unknown" {
		t.Error("invalid kinds must not pass")
	}
}
