package client

import "time"

// Named limits and defaults of the client. TestLimits asserts how they
// relate.
const (
	// PipelineDepthDefault bounds requests in flight on one connection
	// when Options.PipelineDepth is zero.
	PipelineDepthDefault = 64
	// PipelineDepthMax bounds Options.PipelineDepth.
	PipelineDepthMax = 4096
	// RedirectsMax bounds leader redirections after one login (§11).
	RedirectsMax = 3
	// ClusterNodesMax mirrors the roster limit of the wire package.
	ClusterNodesMax = 64

	// ReplyTimeoutDefault is how long a request waits for its reply
	// before the connection is treated as desynchronised (§5.6).
	ReplyTimeoutDefault = 30 * time.Second
	// DialTimeoutDefault bounds one TCP (and TLS) connect.
	DialTimeoutDefault = 10 * time.Second
	// TransientReplayInterval and TransientReplayDuration pace replays
	// after status 57/58 (§5.2).
	TransientReplayInterval = 50 * time.Millisecond
	TransientReplayDuration = 30 * time.Second
	// ReconnectBackoffMin and ReconnectBackoffMax bound the exponential
	// backoff between redials; ReconnectAttemptsDefault bounds the tries.
	ReconnectBackoffMin      = 100 * time.Millisecond
	ReconnectBackoffMax      = 5 * time.Second
	ReconnectAttemptsDefault = 10
	// LeaderWaitInterval and LeaderWaitDuration pace re-reading the roster
	// while no node is a healthy leader (§11 step 4).
	LeaderWaitInterval = 250 * time.Millisecond
	LeaderWaitDuration = 5 * time.Second
	// LeaderRecheckInterval spaces the leader checks that 58
	// TransientNotAccepted triggers (§11): a burst of refusals during a
	// view change runs one check, not one per request.
	LeaderRecheckInterval = 2 * time.Second

	// VectoredSendBytesMin and VectoredMessageBytesMin bound the
	// SendMessages requests written with writev from a head and the
	// caller's own payloads: the frame and the mean frame bytes per
	// message. Below them the request is copied into one frame and written
	// whole, which measured as fast or faster (BenchmarkSendPaths, loopback:
	// 10 x 100 B flat 14 us vs vector 16 us; 1000 x 1000 B 265-326 us vs
	// 288-307 us, a tie; 10000 x 100 B 0.7 ms vs 1.4 ms; 100 x 10 kB 240 us
	// vs 215 us; 1 x 1 MiB 430 us vs 262 us): per iovec the kernel spends
	// about what copying a 1 kB payload costs. Against a real server the
	// vector buys client CPU, not throughput (whippet-bench suite p1,
	// written, 9 alternating rounds: 100 kB x 10 and 1 MB x 1 within 2% of
	// the copied frame's MB/s, client CPU 23-24% vs 26-27%).
	VectoredSendBytesMin    = 64 << 10
	VectoredMessageBytesMin = 8 << 10
	// writeCutBytesMin is the smallest request write that a caller's
	// context can cut short (conn.write).
	writeCutBytesMin = 64 << 10

	// SDKName and SDKVersion identify this client in the login body.
	SDKName    = "whippet-go"
	SDKVersion = "0.1.0"
)
