// Package sim is the deterministic simulator for vsr: one seed drives a
// cluster of replicas (several replication groups per node), a packet
// network that drops, duplicates, delays, reorders and partitions, storage
// that keeps only what was persisted and can tear a write, corrupt a
// sector or be wiped (a lost data directory: the node restarts with
// nothing), node crashes and restarts, and clients that retry. Damage
// (torn or corrupt slots, wipes, and a restart on empty storage, which
// looks the same as a wipe) stays within f = (n-1)/2 replicas at a time.
// Most seeds start formatted (vsr.New); some start every replica on empty
// storage (Open), and faults begin once the fresh bootstrap formed every
// group.
//
// Every source of randomness is a math/rand/v2 PCG stream derived from the
// seed and a salt, one per concern (network, faults, workload, each
// replica), so adding a draw to one concern does not shift the others. Time
// is a tick counter. Map iteration never decides an order.
//
// Invariants, checked after every tick, read only and drawing no randomness:
//
//  1. No two replicas commit different ops at the same op number of a group.
//  2. Each replica commits ops in order with no gaps (a state transfer jumps
//     to a committed op), and its application state after op k equals every
//     other replica's after op k.
//  3. A client request is committed at most once.
//  4. A client's reply names the op its request committed at; with 5, an
//     acknowledged (replied) op is never lost: a reply whose op never
//     commits, or commits another request, fails 4 or 8.
//  5. A committed op is never lost: a normal primary with a complete log
//     holds every op committed so far, with the committed checksum.
//  6. At most one replica acts as primary of a view of a group.
//  7. A running replica's commit point never moves back, and a restarted one
//     starts at least at its durable commit point.
//  8. Liveness: once faults heal, every client request then pending commits
//     and every replica catches up within HealTicksMax ticks (10,000 for
//     seeded runs: enough for a view change whose timeout backed off).
//
// A failing run reports the seed and the command that replays it.
package sim
