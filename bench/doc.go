// Package bench is Whippet's load generator: iggy-bench's benchmark kinds,
// options and report (../shared/reference/BENCH-NOTES.md) over our client,
// plus what iggy-bench lacks: an open loop whose latency is corrected for
// coordinated omission, a topic durability per run, a local server started
// for the run, HdrHistogram tails next to iggy-bench's figures, and the
// peer lab's fixed workload set (../shared/lab/README.md) in the lab's
// table. It imports client and wire of ours and nothing else; cmd/whippet-bench
// is its command line.
//
// # A run
//
// Run normalizes and validates a Config, targets the given server or starts
// one (StartLocalServer: a free loopback port, a temp data dir, WHIPPET_*
// variables), prefills what a consumer-only kind reads when the server is
// fresh, and then executes one phase: set up streams (bench-stream-1..N,
// topic topic-1, groups cg-1..G), connect one client per actor, join groups,
// release every actor at once, wait. Report turns the per-actor Recorders
// into report.json; WriteRun writes it with the go-echarts charts.
//
// # Closed and open loop
//
// Closed loop (default): one batch in flight per actor; a producer's latency
// is the send's round trip, a consumer's the poll's; --rate-limit paces with
// a pre-filled token bucket of bytes. Open loop (--rate): batch k of an actor
// is due when the messages before it would have gone out at the actor's
// share of the rate; a late batch keeps its due time, and latency runs from
// the due time, so a stall is charged to every batch it delayed. End-to-end
// latency (ppc, bpcg, e2e, e2ecg consumers) runs from the batch's origin
// timestamp, which producers stamp with the same intended start.
//
// # Figures
//
// Per actor: iggy-bench's (throughput = mean of the SMA-smoothed bucket
// series; linear-interpolated percentiles; min, max and std dev over the
// bucket latency series) and ours (HdrHistogram over every sample: p50 to
// p99.99, min, max, mean, std dev; payload over wall time). Per role: sums,
// means of actor percentiles, a pooled HdrHistogram, averaged series and a
// pooled distribution.
//
// # Where it differs from iggy-bench
//
//   - Every run writes its directory (under performance_results unless the
//     output section names another); iggy-bench writes one only with output.
//   - Without --server-address a local whippet-server is started; iggy-bench
//     never starts one. Consumer-only kinds prefill a fresh local server.
//   - Only tcp: quic, http, websocket and TLS are refused, and so is
//     --high-level-api (our client has no background-batching producer).
//   - In the kinds that produce and consume, consumers read every message
//     their stream received, whatever the batch budget says, so that the
//     ledger can be checked; iggy-bench stops them at their budget.
//     Consumer-only kinds read their budget, or what the stream holds if less.
//   - report.json keeps iggy-bench's fields and adds schema_version, config,
//     run, accounting, cpu, the HdrHistogram latency block of every summary,
//     wall-time throughput and the io_uring probe.
//
// # The suite
//
// RunSuite runs the lab's p1, p2, c1, pc1 and e2e1 (pinned, 1000 B × 1000
// per batch, at most Batches per producer and Duration of producing, NoDelay
// as the lab's Go clients) on one server and prints the lab's table: payload
// over wall time, pooled HdrHistogram percentiles, server and client CPU as a
// share of one core, and steal.
//
// Invariants:
//  1. bench imports client and wire of ours, nothing else.
//  2. A message acknowledged to a producer is counted once in produced, in
//     the stream it was sent to, warmup included.
//  3. An offset consumer's cursor advances exactly by what a poll returned,
//     and a poll must start at the cursor; a group's partitions must serve
//     offsets contiguously from the group's resume point. Either violation
//     (a duplicate or a gap) fails the run.
//  4. A run's Accounting is exact when every reader read each message of its
//     stream once: consumed equals expected for every offset consumer and
//     every group.
//  5. Latency samples are never dropped from the HdrHistogram: values out of
//     its range are clamped to its edges; only the raw samples kept for
//     interpolation and the series are capped (LatencySamplesMax,
//     SeriesBucketsMax).
//  6. Map iteration never reaches an output: series and tables are ordered by
//     time, role or first appearance.
package bench
