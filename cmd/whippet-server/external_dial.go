package main

import (
	"context"
	"net"
	"os"
	"syscall"

	"github.com/whippetio/whippet/shard"
)

// shardsAddress is the address the in-process clients (HTTP sessions,
// the metrics session) name; their Dial never resolves it.
const shardsAddress = "shards.internal:0"

// dialShards connects to the shards without a listener: one end of a
// socketpair goes to the least-loaded shard (Runtime.Adopt), which serves
// it like an accepted TCP client; the other end is returned.
func dialShards(runtime *shard.Runtime) (net.Conn, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := runtime.Adopt(fds[0]); err != nil {
		_ = syscall.Close(fds[0]) // still ours: Adopt refused it
		_ = syscall.Close(fds[1]) // its peer, unused
		return nil, err
	}
	file := os.NewFile(uintptr(fds[1]), "shards")
	defer file.Close() // FileConn holds its own duplicate
	return net.FileConn(file)
}

// shardsDialer is a client.Options.Dial reaching the shards in process.
func shardsDialer(runtime *shard.Runtime) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(context.Context, string, string) (net.Conn, error) { return dialShards(runtime) }
}
