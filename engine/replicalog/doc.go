// Package replicalog is the durable state of one replication group: its
// journal slots, its hard state and an application record, in one
// directory, through engine.Storage. It stores opaque bytes: it knows
// nothing of vsr (the shard's group host maps vsr's Ready onto Persist)
// and imports engine and internal/ only. Like engine.Partition it is a
// state machine driven by Storage completions on the owning shard's
// thread: no goroutines, no blocking, no locks.
//
// # Using a log (the group host)
//
//	Open(storage, directory, slotCount, done)   done(log, loaded, err)
//	log.Persist(&Persist{HardState, App, Writes, Sync, Done})
//	log.Close(done)
//	Remove(storage, directory, done)            after Close: delete the directory
//
// One Persist runs at a time, in submission order (PersistQueueMax may
// wait behind it). Done runs once every journal write and the superblock
// write completed, and, when Sync, once the journal was fdatasynced. A
// failed write or fdatasync stops the log: Done gets a *engine.FatalError,
// and so does every later Persist (never retry a failed fdatasync).
//
// # Directory layout
//
//	{group}/
//	  journal           header, two superblock copies, then slot records
//	  journal.compact   a compaction in progress (removed at open)
//
// The superblock lives in the journal file's head, so one fdatasync makes
// a Persist's records and its superblock copy durable together (a separate
// file cost a second fdatasync per Persist: 4.1 ms instead of 2.6 ms per
// synced 1 MiB Persist on the development VM).
//
// # journal head (little-endian)
//
//	0      64          4096                    135168                  266240
//	+------+- - - - - -+-----------------------+-----------------------+----------------
//	|header| (zeros)   | superblock copy 0     | superblock copy 1     | records ...
//	+------+- - - - - -+-----------------------+-----------------------+----------------
//
// header:
//
//	0          8        12        16         20         24          32           40
//	+----------+--------+---------+----------+----------+-----------+------------+-------------+
//	| xxh3 of  | magic  | version | slot     | reserved | generation| base_bytes | reserved    |
//	| 8..64    | "WRLJ" | u32 = 1 | count u32|          | u64       | u64        | to 64       |
//	+----------+--------+---------+----------+----------+-----------+------------+-------------+
//
// base_bytes is the file's length when it was created or compacted
// (fdatasynced before it got its name, so durable).
//
// superblock copy (a 128 KiB region each, written up to its end):
//
//	0          8        12        16         24           32             40             48        52       56      64
//	+----------+--------+---------+----------+------------+--------------+--------------+---------+--------+-------+-----------+-----+
//	| xxh3 of  | magic  | version | sequence | generation | journal_bytes| synced_bytes | hard    | app    | flags | reserved  | hard|app
//	| 8..end   | "WRLS" | u32 = 1 | u64      | u64        | u64          | u64          | len u32 | len u32| u32   |           |     |
//	+----------+--------+---------+----------+------------+--------------+--------------+---------+--------+-------+-----------+-----+
//
// Copy sequence s lives in region s mod 2, so a write never overwrites
// the newest copy: a torn superblock write loses only itself. flags bit 0
// says a hard state is present, bit 1 an app record (nil is not empty).
// journal_bytes is the journal length the copy's Persist wrote up to;
// synced_bytes the length the journal's last completed fdatasync covered
// when the copy was written.
//
// record:
//
//	0        4                   12       16       24
//	+--------+-------------------+--------+--------+-----------------+
//	| length | checksum u64      | slot   | op     | message         |
//	| u32    | xxh3(slot,op,msg) | u32    | u64    | length bytes    |
//	+--------+-------------------+--------+--------+-----------------+
//
// The checksum is xxh3 of the message seeded with xxh3 of slot and op,
// itself seeded with the length. A record with length 0 erases its slot.
// A slot's content is its last record.
//
// # Persist and the crash argument
//
// A Persist appends its records after the journal's end (small messages
// gathered into one write, large ones written from the caller's buffer)
// and, when the hard state or app record changes, writes the next
// superblock copy, all concurrently; when Sync, one fdatasync follows. A
// crash (before that fdatasync completed) can leave the copy without all
// of its records: page writeback has no order. Open therefore trusts the
// newest valid copy only when the journal's valid prefix reaches its
// journal_bytes (or it names an older generation, which compaction made
// durable), and else the previous copy, whose Persist completed. The hard
// state a restart sees is thus never ahead of the journal: a view change's
// truncations and writes land with the log view that depends on them.
//
// Open scans the records and stops at the first one that is partial or
// fails its checks. Below the durable mark (base_bytes, or the largest
// synced_bytes of a valid copy of this generation) that is corruption:
// open fails with an *engine.CorruptError naming the file and position
// (errors.Is(err, engine.ErrCorrupt)), never silently dropping acknowledged
// data. Past the mark it is a torn tail: truncated, counted in
// Loaded.TornBytes and logged. The truncation is fdatasynced before open
// returns, and a copy that outran the journal is overwritten with the one
// chosen, so later appends reaching its length cannot resurrect it. The
// mark trails the durable end by one Persist (a copy records the sync
// before its own): damage inside the last synced Persist's records cannot
// be told from a torn write and is truncated like one (logged, counted);
// vsr repairs the slot from its peers. Engine segments have the same
// window (doc.go of engine, invariant 4).
// Persists with Sync false give no durability across a power loss: then
// open may find every copy ahead of the journal and refuse (ErrCorrupt);
// the group recovers by state transfer from its peers. A missing journal
// is a fresh log (a wiped directory), as is a torn creation.
//
// # Compaction
//
// After a Persist, when the journal exceeds compactRatio times its live
// bytes (head plus each slot's latest non-erase record) and
// compactBytesMin, the live records are copied (verified) into
// journal.compact with the next generation and the current superblock
// copy, which is fdatasynced, renamed over journal, and the directory
// fsynced. Persists wait meanwhile.
//
// # Invariants
//
//  1. A slot's content is its last valid record in the journal's valid
//     prefix; every record the log acknowledged lies in that prefix.
//  2. The superblock copy open returns depends only on journal records in
//     the valid prefix (or on an older, compacted generation).
//  3. The newest superblock copy is never overwritten: copy s goes to
//     region s mod 2.
//  4. Nothing past the journal's end is ever trusted: torn tails are cut
//     and synced before the next append.
//  5. One Persist runs at a time; a failed write or fdatasync is fatal.
//  6. Open returns nothing that is not durable: it fdatasyncs the journal
//     (and the directory) before calling done.
package replicalog
