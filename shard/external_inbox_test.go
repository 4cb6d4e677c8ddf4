package shard

import (
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAdoptSocketpair: a socketpair end handed over by a foreign
// goroutine (Runtime.Adopt) becomes a connection served like an accepted
// one, on both backends, for many concurrent producers, with frames up
// to 1 MiB echoed byte for byte.
func TestAdoptSocketpair(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		cpus, err := AllowedCPUs()
		if err != nil {
			t.Fatal(err)
		}
		server := startEcho(t, Options{CPUs: cpus[:min(2, len(cpus))], Backend: backend}, 0)
		const clients = 8
		done := make(chan net.Conn, clients)
		for range clients {
			go func() {
				conn, err := adoptPair(server.runtime)
				if err != nil {
					t.Error(err)
					done <- nil
					return
				}
				done <- conn
			}()
		}
		for range clients {
			conn := <-done
			if conn == nil {
				t.FailNow()
			}
			t.Cleanup(func() { _ = conn.Close() })
			roundTrips(t, conn, [][]byte{makeFrame(10, 1), makeFrame(1<<20, 2), makeFrame(0, 3)})
		}
		adopted := uint64(0)
		for _, sh := range server.runtime.Shards() {
			adopted += sh.Stats().ConnsAdopted
		}
		if adopted != clients {
			t.Fatalf("%d connections adopted, want %d", adopted, clients)
		}
	})
}

// adoptPair hands one end of a new socketpair to rt and returns the other.
func adoptPair(rt *Runtime) (net.Conn, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := rt.Adopt(fds[0]); err != nil {
		_ = unix.Close(fds[0]) // still ours on error
		_ = unix.Close(fds[1]) // see above
		return nil, err
	}
	file := os.NewFile(uintptr(fds[1]), "socketpair")
	defer file.Close() // FileConn dups the fd
	return net.FileConn(file)
}
