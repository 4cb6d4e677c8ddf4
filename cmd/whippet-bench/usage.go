package main

const usageShort = `usage: whippet-bench [GLOBAL OPTS] <KIND> [KIND OPTS] [tcp [TCP OPTS]] [output [OUTPUT OPTS]]
       whippet-bench suite [OPTS] | examples | help
`

const usage = usageShort + `
Kinds (alias):
  pinned-producer (pp)                       N producers, each on its own stream
  pinned-consumer (pc)                       N consumers, each on its own stream, offset polling
  pinned-producer-and-consumer (ppc)         producers and consumers together, end-to-end latency
  balanced-producer (bp)                     N producers over streams × partitions
  balanced-consumer-group (bcg)              consumers in groups, Next + auto-commit
  balanced-producer-and-consumer-group (bpcg)
  end-to-end-producing-consumer (e2e)        each actor sends, then reads back its stream
  end-to-end-producing-consumer-group (e2ecg)

Global options (before the kind):
  -m, --message-size N|A..B       bytes per message (1000)
  -P, --messages-per-batch N|A..B messages per batch (1000)
  -b, --message-batches N         batches per actor (1000 when -T is not given)
  -T, --total-data SIZE           aggregate payload for all actors, e.g. 8GB
  -r, --rate-limit SIZE           aggregate bytes/s, closed loop (token bucket)
  -w, --warmup-time DURATION      send and poll unrecorded first (0s)
  -t, --sampling-time DURATION    time-series bucket width (10ms)
  -W, --moving-average-window N   SMA window of the throughput series (20)
  -u, --username, -p, --password  credentials (iggy / iggy)
      --pretty                    per-actor rows in the summary
      --reuse-streams             keep existing bench streams
      --enforce-fsync             topic option enforce_fsync
Kind options:
  -s, --streams  -a, --partitions  -p, --producers (--producing-consumers)  -c, --consumers
  -g, --consumer-groups  -T, --max-topic-size  -e, --message-expiry  -R, --read-amplification (1.05)
tcp options:
      --server-address HOST:PORT  target server; without it a local whippet-server is started on a
                                  free port with a temp data dir and stopped afterwards
      --nodelay                   disable Nagle's algorithm
output options:
  -o, --output-dir DIR (performance_results)  --identifier  --remark  --extra-info  --gitref
      --gitref-date  -c, --open-charts
Whippet options (any section):
      --rate N                    open loop: aggregate msg/s on a fixed schedule; latency from the
                                  scheduled start (coordinated omission corrected)
      --in-flight N               open loop: batches a producer may have outstanding (1)
      --durability memory|written|persisted   topic durability for the run
      --max-duration DURATION     stop starting batches after this long
      --seed N                    payload and batch-size seed
      --server-binary PATH        whippet-server to start (default: next to this binary, then PATH)
      --server-pid PID            a remote server's process on this machine, for its CPU share
      --profile cpu|mem|trace     profile the bench itself

Every run writes <output-dir>/<run name>/ with report.json, throughput.html, latency.html and
latency_distribution.html, and prints a summary table.

suite options (the lab's p1 p2 c1 pc1 e2e1 workloads, one table in the lab's columns):
  --workloads p1,p2,c1,pc1,e2e1  --repeats 3  --batches 2000  --duration 10s  --message-size 1000
  --messages-per-batch 1000  --durability D  --label whippet  --server-address A  --server-binary P
  --server-pid PID  --output-dir DIR
  --idle-partitions N  --idle-connections N   held open on the server while the workloads run
`

const examples = `Examples:

  # 8 pinned producers, defaults (1000 B × 1000 msgs × 1000 batches each) against a local server:
  whippet-bench pinned-producer

  # then read it back on the same server:
  whippet-bench pp tcp --server-address 127.0.0.1:8090
  whippet-bench pc tcp --server-address 127.0.0.1:8090

  # 4 producers into 1 stream × 24 partitions, 8 GB in total, fsync durability:
  whippet-bench -T 8GB --durability persisted bp -p 4

  # open loop at 500k msg/s, 250 messages per batch, latency from the scheduled send time:
  whippet-bench -P 250 --rate 500000 pp -p 4

  # closed loop capped at 800 MB/s, results under ./results with a remark:
  whippet-bench -r 800MB pp -p 20 output -o results --remark capped

  # producers and a consumer group together, end-to-end latency:
  whippet-bench bpcg -p 4 -c 4 -a 8

  # the lab's workload set, one table:
  whippet-bench suite --repeats 1
`
