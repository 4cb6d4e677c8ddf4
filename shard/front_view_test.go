package shard

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/wire"
)

func apply(t *testing.T, state *metadata.State, command metadata.Command) metadata.Command {
	t.Helper()
	if err := state.Prepare(&command); err != nil {
		t.Fatalf("prepare %v: %v", command.Kind, err)
	}
	state.Apply(state.Index+1, &command)
	return command
}

// TestViewSharesUnchangedParts: a new view copies only what changed, the
// previous view keeps what it showed, and both resolve names.
func TestViewSharesUnchangedParts(t *testing.T) {
	state := &metadata.State{}
	apply(t, state, metadata.Command{Kind: metadata.CreateStream, Name: "a"})
	apply(t, state, metadata.Command{Kind: metadata.CreateStream, Name: "b"})
	apply(t, state, metadata.Command{Kind: metadata.CreateUser, Name: "root", Secret: "x", Status: 1})
	groups := newGroupTable(time.Second)
	first := buildView(nil, state, groups, viewChange{stream: -1})
	if first.streamOf(wire.NamedID("b")) == nil || first.userByName("root") == nil {
		t.Fatal("the first view misses what the state holds")
	}
	rename := apply(t, state, metadata.Command{Kind: metadata.UpdateStream, StreamID: 1, Name: "bee"})
	second := buildView(first, state, groups, changeOf(&rename))
	if second.streams[0] != first.streams[0] {
		t.Fatal("an unchanged stream was copied")
	}
	if second.streams[1] == first.streams[1] || second.streams[1].Name != "bee" || first.streams[1].Name != "b" {
		t.Fatal("the changed stream is shared, or the old view changed")
	}
	if second.users[0] != first.users[0] {
		t.Fatal("users were copied for a stream change")
	}
	user := apply(t, state, metadata.Command{Kind: metadata.CreateUser, Name: "other", Secret: "y", Status: 1})
	third := buildView(second, state, groups, changeOf(&user))
	if third.userByName("other") == nil || second.userByName("other") != nil || third.streams[1] != second.streams[1] {
		t.Fatal("a user change did not copy users alone")
	}
	apply(t, state, metadata.Command{Kind: metadata.DeleteStream, StreamID: 0})
	fourth := buildView(third, state, groups, viewChange{stream: 0})
	if fourth.stream(0) != nil || fourth.streamOf(wire.NamedID("bee")) == nil {
		t.Fatal("a deleted stream is still shown")
	}
}

// TestCPUSampler: the process's share agrees with getrusage over the
// same interval (within /proc's 10 ms tick), the host's is a percentage.
func TestCPUSampler(t *testing.T) {
	var sampler cpuSampler
	started := time.Now()
	rusage := func() time.Duration {
		var usage unix.Rusage
		if err := unix.Getrusage(unix.RUSAGE_SELF, &usage); err != nil {
			t.Fatal(err)
		}
		return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
	}
	begin := time.Now()
	sampler.usage(begin, started)
	cpuBefore := rusage()
	for time.Since(begin) < 200*time.Millisecond {
	}
	cpuAfter := rusage()
	end := time.Now()
	process, host := sampler.usage(end, started)
	want := float64(cpuAfter-cpuBefore) / float64(end.Sub(begin)) * 100
	slack := float64(3*time.Second/clockTicksPerSecond) / float64(end.Sub(begin)) * 100
	if float64(process) < want-slack || float64(process) > want+slack || host <= 0 || host > 100 {
		t.Fatalf("process %.1f%% (getrusage says %.1f%% ± %.1f), host %.1f%%", process, want, slack, host)
	}
}
