#!/usr/bin/python3
"""The outbox-relay benchmark (DESIGN.md "Benchmarks"); run it through bench/run.sh, which installs and builds.

Same WAL for everyone: per workload, one logical slot per contender and repetition is created at the same point
(one statement, before the load), then the load is written once, then each slot is drained by its contender,
one contender at a time, alternating the order between repetitions. Contenders:
  limit       pg_recvlogical --start ... -f /dev/null --endpos=<end LSN> (the server's decode rate)
  discard     bench-drain (bench/tools/bench_drain.cc): streams the slot with pgoutput through libpq's buffered
              reads and throws every message away, confirming every 10 s and at the end: a client that costs nothing
  relay       outbox-relay into the real broker (done when outbox_relay_confirmed_lsn >= end LSN)
  relay-eo    the same with --set delivery.guarantee=exactly_once (a transactional producer: records and the
              checkpoint commit together every delivery.transaction_interval_ms); done likewise, then its topics are
              read back at isolation.level=read_committed: every event (distinct `id` header) exactly once
  relay-mock  outbox-relay into librdkafka's mock cluster, run in its own process (bench-kafka mock)
  relay-eager relay with source.read_batch_us=0: it reads each change as soon as it arrives (the relay before read
              batching)
  relay-linger  relay with kafka.linger.ms=5 set: records wait out the linger even when nothing more is coming (the
              relay's behaviour before it sent them as soon as the stream was drained; a user's linger.ms keeps it)
  relay-rabbitmq, relay-nats, relay-http
              outbox-relay into a RabbitMQ node (scripts/rabbitmq-temp.sh), a NATS JetStream server
              (scripts/nats-temp.sh) and an HTTP receiver (bench-http-receiver), checkpoints in a file; done as for
              relay, then the server's own count (queue depth, stream message count, requests answered) must
              reach the event count
  debezium    Debezium's Postgres connector + Outbox Event Router on Kafka Connect standalone, into the real
              broker (done when its slot's confirmed_flush_lsn reaches the LSN of the load's last transaction's
              first record: Debezium confirms the position of the last transaction's BEGIN, not the commit's end)
Then the latency runs: a steady rate of 1-event transactions for a while, read as they come by a consumer at
isolation.level=read_committed (bench-kafka visibility); commit-to-ack = the record's LogAppendTime minus the
event's ts_us (clock_timestamp() at the insert, committed right after), and visibility = the local wall-clock time
that consumer received the record minus ts_us (every server runs on this machine: one clock).
Then the knob runs (--knob-events): the relay into the mock cluster under each setting in KNOBS (read batching,
the socket's receive buffer, the status interval), for what each does to the walsender's CPU per event and its busy
share.
Last the scale runs (--pipelines): k pipelines in one relay process, each on its own database and slot with a backlog
of --pipeline-events, drained at once into the one broker.
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PG_BIN = os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin")
CLK_TCK = os.sysconf("SC_CLK_TCK")
TYPES = ["OrderCreated", "OrderPaid", "OrderShipped", "OrderDelivered"]
PARTITIONS = 3
# The relay's latency run warms up with this many events first (every topic, 32 keys per topic), left out of its figures.
LATENCY_WARM_EVENTS = 32 * len(TYPES)
# The broker's collector: Kafka's default KAFKA_JVM_PERFORMANCE_OPTS (OUTBOX_BENCH_KAFKA_GC overrides, to compare).
KAFKA_GC = "-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent"
CONTENDERS = ["limit", "discard", "relay", "relay-eager", "relay-linger", "relay-eo", "relay-mock", "relay-rabbitmq", "relay-nats", "relay-http", "debezium"]
SINKS = {"relay": "kafka", "relay-eager": "kafka-eager", "relay-linger": "kafka-linger", "relay-eo": "kafka-eo", "relay-mock": "mock", "relay-rabbitmq": "rabbitmq",
         "relay-nats": "nats", "relay-http": "http"}
LATENCY = ["relay", "relay-eager", "relay-linger", "relay-eo", "debezium"]  # the contenders with a latency run, in this order
RELAY_KAFKA = ("relay", "relay-eager", "relay-linger", "relay-eo")  # the relay into the real broker (latency runs)
# The knob runs (issue 22: "socket buffer sizes, read batching and status-update frequency"): the relay into the mock
# cluster at 1 event per transaction under each setting that changes how it reads the stream, one slot per setting
# and repetition from one load, in alternating order: (name, --set KEY=VALUE or None for the defaults).
KNOBS = [("defaults", None),
         ("read_batch_us=0", "source.read_batch_us=0"), ("read_batch_us=50", "source.read_batch_us=50"),
         ("read_batch_us=100", "source.read_batch_us=100"), ("read_batch_us=400", "source.read_batch_us=400"),
         ("receive_buffer_bytes=65536", "source.receive_buffer_bytes=65536"),
         ("receive_buffer_bytes=262144", "source.receive_buffer_bytes=262144"),
         ("receive_buffer_bytes=1048576", "source.receive_buffer_bytes=1048576"),
         ("status_interval_ms=10", "source.status_interval_ms=10")]
CHECKPOINT_TOPIC = "outbox_relay.checkpoints"  # the relay's default source.checkpoint_topic
QUANTILES = [i / 100 for i in range(101)]  # of the visibility latency, kept in results.json for the chart

START = time.time()


def log(msg):
    print(f"[bench {time.time() - START:7.1f}s] {msg}", flush=True)


def sh(cmd, env=None, check=True, timeout=None):
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({r.returncode}): {r.stderr.strip()[-2000:]}")
    return r.stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lsn_int(text):
    hi, lo = text.split("/")
    return (int(hi, 16) << 32) | int(lo, 16)


def lsn_str(v):
    return f"{v >> 32:X}/{v & 0xFFFFFFFF:X}"


def proc_cpu(pid):
    """user+sys seconds of a live process (all its threads), None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


def proc_status_kib(pid, field):
    """A kB field of /proc/PID/status (VmHWM: peak RSS, VmRSS: RSS now), None when the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def thread_switches(pid):
    """{thread name: [voluntary, involuntary] context switches} summed over a live process's threads of that name
    (/proc/PID/task/*/status), {} when gone. A voluntary switch is a thread going to sleep: each is one wake-up."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                st = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
        except OSError:
            continue
        # librdkafka names its threads rdk:main, rdk:broker<id>, rdk:broker-1 ...: one row per kind.
        name = re.sub(r"\d+$", "", st.get("Name", "?").strip()).replace("rdk:broker-", "rdk:broker")
        v = out.setdefault(name, [0, 0])
        v[0] += int(st.get("voluntary_ctxt_switches", 0))
        v[1] += int(st.get("nonvoluntary_ctxt_switches", 0))
    return out


def proc_hwm_kib(pid):
    return proc_status_kib(pid, "VmHWM")


def proc_rss_kib(pid):
    return proc_status_kib(pid, "VmRSS")


def log_seconds(ts):
    """A log line's UTC timestamp (the relay's `2026-12-04T07:43:25.123Z`, Connect's `2026-12-04 07:43:25,123`) as
    seconds since the epoch."""
    return datetime.datetime.fromisoformat(ts.replace("Z", "").replace(",", ".")).replace(
        tzinfo=datetime.timezone.utc).timestamp()


def alternating(items, rep):
    """The order of a repetition's drains: as given in odd repetitions, reversed in even ones."""
    items = list(items)
    return items if rep % 2 == 1 else items[::-1]


def busy_share(m0, m1):
    """The machine's busy share between two machine_cpu() readings."""
    return (m1[0] - m0[0]) / max(1, m1[1] - m0[1])


def machine_cpu():
    """(busy, total) jiffies of the whole machine (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def histogram_quantile(buckets, q):
    """The q-quantile of a cumulative histogram {upper bound: count} as Prometheus's histogram_quantile reads it:
    linear within the bucket that holds it (the lowest bucket from 0; the +Inf bucket gives the highest finite
    bound)."""
    bounds = sorted(buckets)
    total = buckets[bounds[-1]]
    rank = q * total
    lower, below = 0.0, 0.0
    for b in bounds:
        if buckets[b] >= rank:
            if b == float("inf"):
                return lower
            inside = buckets[b] - below
            return lower + (b - lower) * ((rank - below) / inside if inside else 0)
        lower, below = b, buckets[b]
    return lower


def percentile(sorted_values, q):
    if not sorted_values:
        return float("nan")
    k = max(0, math.ceil(q * len(sorted_values)) - 1)
    return sorted_values[k]


def stop_process(p, timeout=60):
    if p is None or p.poll() is not None:
        return
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def work_parent(choice):
    """Where the services' data go. "auto": /dev/shm when it is a tmpfs with room (8 GiB free, and 12 GiB of memory
    available), else /tmp. On this machine's disk (ext4 on a virtual disk) the kernel's writeback of the drain
    workloads' dirty pages stalled the broker's appends for up to 1.7 s when the latency load started (ProduceResponse
    round trips of 850 ms while the broker's threads sat idle; gone with the data in memory). The servers already
    run with fsync off: the benchmark measures the relays, not the disk."""
    if choice != "auto":
        return choice
    try:
        st = os.statvfs("/dev/shm")
        with open("/proc/meminfo") as f:
            avail_kib = next(int(line.split()[1]) for line in f if line.startswith("MemAvailable:"))
        with open("/proc/mounts") as f:
            tmpfs = any(line.split()[1] == "/dev/shm" and line.split()[2] == "tmpfs" for line in f)
        if tmpfs and st.f_bavail * st.f_frsize >= 8 << 30 and avail_kib >= 12 << 20:
            return "/dev/shm"
    except (OSError, StopIteration):
        pass
    return "/tmp"


class Bench:
    def __init__(self, args):
        self.args = args
        self.work = tempfile.mkdtemp(prefix="outbox-bench.", dir=work_parent(args.work_dir))
        os.chmod(self.work, 0o755)
        self.relay_bin = args.relay
        self.bk = args.bench_kafka
        self.procs = []  # processes to stop at exit
        self.results = {"drains": [], "latency": {}, "checks": {}, "meta": {}}
        self.pg_port = None
        self.bootstrap = None
        self.conn = {}
        self.rabbitmq_url = None
        self.nats_url = None
        self.last_quiet = None
        self.quiet_waited = 0.0

    # ---------------------------------------------------------------- services
    def start_services(self):
        # RabbitMQ (about 10 s) and NATS start while PostgreSQL and Kafka do.
        extra = {}
        for c, d in (("relay-rabbitmq", "rabbitmq"), ("relay-nats", "nats")):
            if c in self.args.contenders:
                extra[d] = subprocess.Popen(["bash", f"{ROOT}/scripts/{d}-temp.sh", "start", f"{self.work}/{d}"],
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        env = dict(os.environ)
        env["PG_TEMP_CONF"] = "max_replication_slots=64\nmax_wal_senders=64\nmax_connections=200"
        out = sh(["bash", f"{ROOT}/scripts/pg-temp.sh", "start", f"{self.work}/pg"], env=env)
        self.pg_port = int(re.search(r"PGPORT=(\d+)", out).group(1))
        env = dict(os.environ)
        env["KAFKA_TEMP_PROPERTIES"] = "log.message.timestamp.type=LogAppendTime"
        env["KAFKA_TEMP_HEAP_OPTS"] = "-Xms512m -Xmx1g"
        # Kafka's own JVM defaults (kafka-run-class.sh: G1, 20 ms pause target), not the tests' serial collector,
        # whose young collections stalled appends by tens of milliseconds; with a GC log for the latency runs.
        env["KAFKA_TEMP_GC_OPTS"] = (f"{os.environ.get('OUTBOX_BENCH_KAFKA_GC', KAFKA_GC)} "
                                     f"-Xlog:gc:file={self.work}/kafka/gc.log:time,uptime")
        out = sh(["bash", f"{ROOT}/scripts/kafka-temp.sh", "start", f"{self.work}/kafka"], env=env)
        self.bootstrap = re.search(r"KAFKA_BOOTSTRAP=(\S+)", out).group(1)
        with open(f"{self.work}/kafka/kafka.pid") as f:
            self.kafka_pid = int(f.read().strip())
        log(f"PostgreSQL on {self.pg_port}, Kafka on {self.bootstrap}")
        for d, p in extra.items():
            out, err = p.communicate(timeout=180)
            if p.returncode != 0:
                raise RuntimeError(f"scripts/{d}-temp.sh start failed ({p.returncode}): {err.strip()[-2000:]}")
            with open(f"{self.work}/{d}/{'node' if d == 'rabbitmq' else 'nats'}.pid") as f:
                pid = int(f.read().strip())
            if d == "rabbitmq":
                self.rabbitmq_url, self.rabbitmq_pid = re.search(r"RABBITMQ_URL=(\S+)", out).group(1), pid
                log(f"RabbitMQ on {self.rabbitmq_url}")
            else:
                self.nats_url, self.nats_pid = re.search(r"NATS_URL=(\S+)", out).group(1), pid
                log(f"NATS JetStream on {self.nats_url}")
        self.outbox_rel = {}
        for name in ("bench", "bench_warm"):
            self.create_database(name)

    def create_database(self, name):
        """A benchmark database: the project's own outbox table (what `outbox-relay init --create-table` makes), then
        the benchmark's publication and load generators; remembers the table's relfilenode for pg_waldump."""
        with self.db("postgres").cursor() as c:
            c.execute("CREATE DATABASE " + name)
        # Through psql, statement by statement: sql/outbox_table.sql ends with a BEGIN ... ROLLBACK example, which in
        # one multi-statement query would roll the table back too.
        for script in (f"{HERE}/../sql/outbox_table.sql", f"{HERE}/bench.sql"):
            sh(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(self.pg_port),
                "-U", "postgres", "-d", name, "-f", script])
        with self.db(name).cursor() as c:
            c.execute("SELECT oid FROM pg_database WHERE datname = current_database()")
            dboid = c.fetchone()[0]
            c.execute("SELECT pg_relation_filenode('public.outbox')")
            self.outbox_rel[name] = f"rel 1663/{dboid}/{c.fetchone()[0]}"

    def stop_services(self):
        for p in self.procs:
            stop_process(p, timeout=30)
        for c in self.conn.values():
            try:
                c.close()
            except Exception:
                pass
        # The brokers stop together (each waits for its own clean shutdown), then PostgreSQL.
        stops = [subprocess.Popen(["bash", f"{ROOT}/scripts/{d}-temp.sh", "stop", f"{self.work}/{d}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for d in ("kafka", "rabbitmq", "nats") if os.path.isdir(f"{self.work}/{d}")]
        for p in stops:
            p.wait()
        subprocess.run(["bash", f"{ROOT}/scripts/pg-temp.sh", "stop", f"{self.work}/pg"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not self.args.keep:
            shutil.rmtree(self.work, ignore_errors=True)
        else:
            log(f"kept {self.work}")

    def db(self, name):
        if name not in self.conn or self.conn[name].closed:
            c = psycopg2.connect(host="127.0.0.1", port=self.pg_port, user="postgres", dbname=name)
            c.autocommit = True
            self.conn[name] = c
        return self.conn[name]

    def q1(self, sql, params=None, dbname="bench"):
        with self.db(dbname).cursor() as c:
            c.execute(sql, params)
            return c.fetchone()

    def create_slots(self, names, dbname="bench"):
        with self.db(dbname).cursor() as c:
            c.execute("SELECT s, (pg_create_logical_replication_slot(s, 'pgoutput')).lsn::text "
                      "FROM unnest(%s::text[]) s", (names,))
            return dict(c.fetchall())

    def drop_slots(self, names, dbname="bench"):
        with self.db(dbname).cursor() as c:
            for n in names:
                c.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                          "WHERE slot_name = %s AND NOT active", (n,))

    def slot_state(self, slot):
        return self.q1("SELECT active_pid, pg_wal_lsn_diff(confirmed_flush_lsn, '0/0')::bigint "
                       "FROM pg_replication_slots WHERE slot_name = %s", (slot,))

    def load(self, n, per_tx, dbname="bench"):
        """Writes the load; returns (end LSN = the last commit's end, LSN of the last transaction's first record)."""
        t = time.time()
        with self.db(dbname).cursor() as c:
            c.execute("CALL bench_load(%s, %s)", (n, per_tx))
            c.execute("SELECT pg_current_wal_insert_lsn()::text")
            insert_pos = c.fetchone()[0]
        log(f"loaded {n} events ({per_tx}/tx) into {dbname} in {time.time() - t:.1f}s, WAL at {insert_pos}")
        return self.wal_end(lsn_int(insert_pos), dbname)

    def wal_end(self, insert_pos, dbname):
        """The end LSN of the last commit that inserted into dbname's outbox, and the LSN of that transaction's first
        record (pg_waldump)."""
        oldest = self.q1("SELECT pg_wal_lsn_diff(min(restart_lsn), '0/0')::bigint FROM pg_replication_slots")[0]
        start = max(insert_pos - 1024 * 1024, oldest or 0)
        out = subprocess.run([f"{PG_BIN}/pg_waldump", "-p", f"{self.work}/pg/data/pg_wal", "-s", lsn_str(start),
                              "-e", lsn_str(insert_pos)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True).stdout
        last_ins = last_xid = None
        commits, first_of = {}, {}
        for line in out.splitlines():
            m = re.search(r"rmgr: (\S+)\s+len \(rec/tot\):\s*\d+/\s*(\d+), tx:\s*(\d+), lsn: ([0-9A-F]+/[0-9A-F]+)",
                          line)
            if not m:
                continue
            rmgr, tot, xid, lsn = m.group(1), int(m.group(2)), m.group(3), lsn_int(m.group(4))
            first_of.setdefault(xid, lsn)
            if rmgr.startswith("Heap") and ("desc: INSERT" in line or "MULTI_INSERT" in line) and \
                    self.outbox_rel[dbname] + " " in line:
                last_ins, last_xid = lsn, xid
            elif rmgr == "Transaction" and "desc: COMMIT" in line:
                commits[xid] = lsn + ((tot + 7) & ~7)
        if last_ins is None or last_xid not in commits:
            raise RuntimeError("pg_waldump: could not find the load's last INSERT and COMMIT")
        end = commits[last_xid]
        if end != insert_pos and dbname == "bench":
            log(f"note: WAL insert position {lsn_str(insert_pos)} is past the last commit's end {lsn_str(end)}")
        # Debezium confirms the position of the last transaction's BEGIN message: its first record.
        return end, first_of[last_xid]

    # ---------------------------------------------------------------- kafka helpers
    def topics(self, prefix):
        return [f"{prefix}.{t}" for t in TYPES]

    def create_topics(self, prefix):
        sh([self.bk, "create-topics", "--bootstrap", self.bootstrap, "--partitions", str(PARTITIONS),
            "--config", "message.timestamp.type=LogAppendTime"] + self.topics(prefix))

    def wait_count(self, prefix, target, timeout_ms):
        return subprocess.Popen([self.bk, "wait-count", "--bootstrap", self.bootstrap, "--target", str(target),
                                 "--timeout-ms", str(timeout_ms), "--interval-ms", "50"] + self.topics(prefix),
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    @staticmethod
    def reached_at(p, timeout):
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
        m = re.search(r"REACHED (\d+) (\d+)", out or "")
        return (int(m.group(1)) / 1000.0, int(m.group(2))) if m else (None, out.strip() if out else None)

    def dump(self, prefix, count, timeout_ms=120000, bootstrap=None):
        out = subprocess.run([self.bk, "dump", "--bootstrap", bootstrap or self.bootstrap, "--count", str(count),
                              "--timeout-ms", str(timeout_ms)] + self.topics(prefix),
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        return [json.loads(line) for line in out.splitlines() if line.startswith("{")]

    # ---------------------------------------------------------------- monitoring
    def watch(self, slot, until, timeout, extra=None):
        """Polls every 50 ms until until(state) is true. Tracks the slot's walsender CPU (last value seen) and
        the broker's CPU. Returns (elapsed-at-done, info)."""
        info = {"walsender_cpu": 0.0}
        ws_pid = None
        deadline = time.time() + timeout
        while True:
            now = time.time()
            st = self.slot_state(slot)
            if st and st[0]:
                if ws_pid != st[0]:
                    ws_pid = st[0]
                cpu = proc_cpu(ws_pid)
                if cpu is not None:
                    info["walsender_cpu"] = cpu
            state = {"now": now, "confirmed": st[1] if st else 0}
            if extra:
                state.update(extra())
            if until(state):
                return now, info
            if now > deadline:
                raise RuntimeError(f"slot {slot}: not drained in {timeout}s (state {state})")
            time.sleep(0.05)

    def wait_quiet(self):
        """Waits (at most --quiet-wait s) until the machine is mostly idle over a 2 s window: other work on a
        2-core machine (builds, test suites) distorts every figure. Records the busy share last seen."""
        if self.args.quiet_wait <= 0:
            return
        started = time.time()
        budget_left = max(0.0, self.args.quiet_budget - self.quiet_waited)
        deadline = started + min(self.args.quiet_wait, budget_left)
        waited = False
        while True:
            a = machine_cpu()
            time.sleep(2)
            b = machine_cpu()
            busy = (b[0] - a[0]) / max(1, b[1] - a[1])
            self.last_quiet = busy
            if busy <= self.args.quiet_busy or time.time() >= deadline:
                if waited:
                    self.quiet_waited += time.time() - started - 2
                if waited or busy > self.args.quiet_busy:
                    log(f"  machine {100 * busy:.0f}% busy" + (" (gave up waiting)" if busy > self.args.quiet_busy
                                                                else ""))
                return
            if not waited:
                log(f"  machine {100 * busy:.0f}% busy: waiting for it to calm down (at most {self.args.quiet_wait}s)")
                waited = True

    # ---------------------------------------------------------------- contenders
    def drain_limit(self, slot, end, n, **_):
        cmd = [f"{PG_BIN}/pg_recvlogical", "-h", "127.0.0.1", "-p", str(self.pg_port), "-U", "postgres",
               "-d", "bench", "--start", "-S", slot, "-o", "proto_version=1", "-o", "publication_names=bench_pub",
               "-P", "pgoutput", "-f", "/dev/null", f"--endpos={lsn_str(end)}", "--no-loop"]
        self.results["meta"]["limit_command"] = " ".join(cmd[:1] + ["..."] + cmd[9:])
        return self.drain_client("pg_recvlogical", cmd, slot, end)

    def drain_discard(self, slot, end, n, **_):
        cmd = [self.args.bench_drain, "--conninfo", f"host=127.0.0.1 port={self.pg_port} dbname=bench user=postgres",
               "--slot", slot, "--publication", "bench_pub", "--endpos", lsn_str(end)]
        return self.drain_client("bench-drain", cmd, slot, end)

    def drain_client(self, name, cmd, slot, end):
        """A client that exits once it has received the WAL up to end: pg_recvlogical, or bench-drain."""
        b0 = proc_cpu(self.kafka_pid)
        m0 = machine_cpu()
        t0 = time.time()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # Reaped with wait4 for its rusage (user+sys, max RSS); the walsender's CPU is the last value seen.
        ws_pid, ws_cpu, hwm = None, 0.0, 0
        deadline = t0 + 600
        while True:
            # VmHWM of the exec'ed image (rusage's max RSS would count the forking Python's pages).
            hwm = max(hwm, proc_hwm_kib(p.pid) or 0)
            st = self.slot_state(slot)
            if st and st[0]:
                ws_pid = st[0]
                c = proc_cpu(ws_pid)
                if c is not None:
                    ws_cpu = c
            pid_done, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid_done == p.pid:
                t1 = time.time()
                m1 = machine_cpu()
                break
            if time.time() > deadline:
                p.kill()
                raise RuntimeError(f"{name} did not reach --endpos")
            time.sleep(0.02)
        p.returncode = os.waitstatus_to_exitcode(status)
        err = p.stderr.read().decode() if p.stderr else ""
        if p.returncode != 0:
            raise RuntimeError(f"{name} exited {p.returncode}: {err}")
        # It exited 0 at --endpos: it received the WAL up to the end. Its last feedback may reach the walsender just
        # after it exits, and when --endpos is reached by the last record rather than a keepalive it confirms that
        # record's start (the slot is not this contender's done-condition).
        confirm_deadline = time.time() + 5
        st = self.slot_state(slot)
        while st[1] < end and time.time() < confirm_deadline:
            time.sleep(0.05)
            st = self.slot_state(slot)
        if st[1] < end:
            log(f"note: {name} reached --endpos {lsn_str(end)} but its slot confirms {lsn_str(st[1])}")
        return {"seconds": t1 - t0, "cpu": ru.ru_utime + ru.ru_stime, "rss_kib": hwm,
                "walsender_cpu": ws_cpu, "broker_cpu": proc_cpu(self.kafka_pid) - b0, "machine": (m0, m1)}

    def relay_config(self, path, slot, prefix, sink_yaml, http_port, dbname="bench", checkpoint_file=None):
        checkpoint = f"\n  checkpoint: file\n  checkpoint_file: {checkpoint_file}" if checkpoint_file else ""
        with open(path, "w") as f:
            f.write(f"""source:
  conninfo: "host=127.0.0.1 port={self.pg_port} dbname={dbname} user=postgres"
  slot: {slot}
  publication: bench_pub{checkpoint}
outbox:
  table: public.outbox
  route:
    topic: "{prefix}.${{routedByValue}}"
{sink_yaml}http:
  listen: "127.0.0.1:{http_port}"
""")

    def metrics(self, port):
        """The relay's confirmed LSN and published events (of its only pipeline, named or not)."""
        by = self.pipelines_metrics(port)
        return next(iter(by.values())) if by else {}

    @staticmethod
    def metrics_text(port):
        """One relay's /metrics text ("" when it does not answer)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                return r.read().decode()
        except (urllib.error.URLError, OSError, ConnectionError):
            return ""

    def pipelines_metrics(self, port):
        """{pipeline name ("" when unnamed): {"confirmed": LSN, "published": events}} from one relay's /metrics."""
        text = self.metrics_text(port)
        if not text:
            return {}
        m = {}
        for line in text.splitlines():
            # Samples carry sink="..." (and pipeline="..." when named) before their own labels.
            name, _, value = line.rpartition(" ")
            who = re.search(r'pipeline="([^"]+)"', name)
            who = who.group(1) if who else ""
            if name == "outbox_relay_confirmed_lsn" or name.startswith("outbox_relay_confirmed_lsn{"):
                m.setdefault(who, {})["confirmed"] = int(float(value))
            elif name.startswith("outbox_relay_events_total{") and 'result="published"' in name:
                m.setdefault(who, {})["published"] = int(float(value))
        return m

    def broker_gc_pauses(self, start, end):
        """The broker's stop-the-world GC pauses that began between two wall-clock times (its GC log, -Xlog:gc with
        time decorations): {"pauses", "total_ms", "max_ms"}, or None without a log."""
        path = f"{self.work}/kafka/gc.log"
        if not os.path.exists(path):
            return None
        pauses = []
        with open(path) as f:
            for line in f:
                m = re.match(r"\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)([+-]\d{4})\].*\bPause\b.* ([\d.]+)ms$",
                             line.strip())
                if not m:
                    continue
                when = datetime.datetime.strptime(m.group(1) + m.group(2), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
                if start <= when <= end:
                    pauses.append(float(m.group(3)))
        return {"pauses": len(pauses), "total_ms": sum(pauses), "max_ms": max(pauses, default=0.0)}

    @staticmethod
    def ack_histogram(port):
        """The relay's outbox_relay_commit_to_ack_seconds buckets: {upper bound in seconds: cumulative count}."""
        buckets = {}
        for line in Bench.metrics_text(port).splitlines():
            m = re.match(r'outbox_relay_commit_to_ack_seconds_bucket\{.*le="([^"]+)"\} (\S+)$', line)
            if m:
                buckets[float("inf") if m.group(1) == "+Inf" else float(m.group(1))] = float(m.group(2))
        return buckets

    def start_relay(self, name, slot, prefix, sink, dbname="bench", relay_bin=None):
        """sink: what prepare_sink returns (the relay's sink configuration, where its checkpoint goes, and the
        command line's --set options: "args"). relay_bin: another build of the relay (the knob runs' baseline)."""
        port = free_port()
        cfg = f"{self.work}/{name}.yaml"
        self.relay_config(cfg, slot, prefix, sink["yaml"], port, dbname, sink.get("checkpoint_file"))
        p, t0 = self.run_relay(name, cfg, sink.get("args", []), relay_bin)
        return p, port, t0

    def run_relay(self, name, cfg, sets=(), relay_bin=None):
        """`outbox-relay init`, then `run` in the background with its log in the work directory: (process, start)."""
        relay_bin = relay_bin or self.relay_bin
        sh([relay_bin, "init", "-c", cfg] + list(sets))
        logf = open(f"{self.work}/{name}.log", "w")
        t0 = time.time()
        sets = list(sets) + [a for kv in self.args.relay_set for a in ("--set", kv)]
        p = subprocess.Popen([relay_bin, "run", "-c", cfg] + sets, stdout=logf, stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p, t0

    @staticmethod
    def kafka_sink(bootstrap):
        return {"yaml": f'kafka:\n  bootstrap.servers: "{bootstrap}"\n'}

    @staticmethod
    def linger_sink(bootstrap):
        """relay-linger: linger.ms set by the user, so the relay keeps it (no early send when the stream is drained)."""
        return {"yaml": f'kafka:\n  bootstrap.servers: "{bootstrap}"\n  linger.ms: "5"\n'}

    def eager_sink(self, bootstrap):
        """relay-eager: no pause after a round that read the stream dry (source.read_batch_us=0)."""
        return dict(self.kafka_sink(bootstrap), args=["--set", "source.read_batch_us=0"])

    def relay_kafka_sink(self, sink):
        """The relay's configuration into the real broker, by SINKS' name: kafka, kafka-eager, kafka-linger, kafka-eo."""
        return {"kafka": self.kafka_sink, "kafka-eager": self.eager_sink, "kafka-linger": self.linger_sink,
                "kafka-eo": self.eo_sink}[sink](self.bootstrap)

    def eo_args(self):
        """relay-eo's command line: exactly_once, and the transaction interval when --transaction-interval-ms
        sets one (the relay's default otherwise)."""
        args = ["--set", "delivery.guarantee=exactly_once"]
        if self.args.transaction_interval_ms:
            args += ["--set", f"delivery.transaction_interval_ms={self.args.transaction_interval_ms}"]
        return args

    def eo_sink(self, bootstrap):
        return dict(self.kafka_sink(bootstrap), args=self.eo_args())

    def tool(self, python, script, *args):
        """tests/nats/nats_tool.py or tests/rabbitmq/rmq_tool.py (nats-py, pika: clients that share no code with the
        relay's) under the venv python that has the client."""
        return sh([python, f"{ROOT}/tests/{script}"] + [str(a) for a in args], timeout=120).strip()

    def prepare_sink(self, sink, prefix, slot, n_expected=0):
        """The server side of one drain, made before the relay starts: returns {"yaml": the relay's sink
        configuration, "checkpoint_file" (sinks other than Kafka), "pid": the server's process (its CPU is the
        "broker" figure), "count": a function reading back how many events the server holds, "cleanup"}."""
        if sink in ("kafka", "kafka-eager", "kafka-linger"):
            self.create_topics(prefix)
            return dict(self.relay_kafka_sink(sink), pid=self.kafka_pid,
                        count=lambda: self.topic_count(self.bootstrap, prefix), cleanup=lambda: None)
        if sink == "kafka-eo":
            # The high watermarks count commit markers too (one per partition and transaction): the read-back is a
            # read_committed consumer, which must see every event (distinct `id` header) and none twice.
            self.create_topics(prefix)
            return dict(self.eo_sink(self.bootstrap), pid=self.kafka_pid,
                        count=lambda: self.committed_count(prefix, n_expected), cleanup=lambda: None)
        if sink == "mock":
            mock_p = subprocess.Popen([self.bk, "mock", "--topic", "outbox_relay.checkpoints:1"] +
                                      [f"{t}:{PARTITIONS}" for t in self.topics(prefix)],
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.procs.append(mock_p)
            bootstrap = re.search(r"BOOTSTRAP=(\S+)", mock_p.stdout.readline()).group(1)
            return dict(self.kafka_sink(bootstrap), pid=mock_p.pid,
                        count=lambda: self.topic_count(bootstrap, prefix), cleanup=lambda: stop_process(mock_p))
        cp = {"checkpoint_file": f"{self.work}/{slot}.checkpoint.json"}
        if sink == "rabbitmq":
            # A topic exchange per drain and one queue bound to every routing key (the relay's topics).
            py = self.args.pika_py
            self.tool(py, "rabbitmq/rmq_tool.py", self.rabbitmq_url, "setup", prefix, prefix, "#")
            return dict(cp, yaml=f'sink:\n  type: rabbitmq\nrabbitmq:\n  url: "{self.rabbitmq_url}"\n'
                                 f'  exchange: "{prefix}"\n', pid=self.rabbitmq_pid,
                        count=lambda: int(self.tool(py, "rabbitmq/rmq_tool.py", self.rabbitmq_url, "count", prefix)),
                        cleanup=lambda: self.tool(py, "rabbitmq/rmq_tool.py", self.rabbitmq_url, "delete", prefix,
                                                  prefix))
        if sink == "nats":
            # A stream per drain (file storage, the server's defaults) binding the drain's subjects.
            py, stream = self.args.nats_py, "B_" + slot
            self.tool(py, "nats/nats_tool.py", self.nats_url, "add-stream", stream, prefix + ".>")
            return dict(cp, yaml=f'sink:\n  type: nats\nnats:\n  url: "{self.nats_url}"\n  stream: {stream}\n',
                        pid=self.nats_pid,
                        count=lambda: int(self.tool(py, "nats/nats_tool.py", self.nats_url, "count", stream)),
                        cleanup=lambda: self.tool(py, "nats/nats_tool.py", self.nats_url, "delete-stream", stream))
        if sink == "http":
            # A receiver per drain: it answers 200 and counts (GET /count: "<requests> <events>").
            rp = subprocess.Popen([self.args.http_receiver], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True)
            self.procs.append(rp)
            port = int(re.search(r"PORT=(\d+)", rp.stdout.readline()).group(1))

            def count():
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/count", timeout=10) as r:
                    return int(r.read().decode().split()[1])
            return dict(cp, yaml=f'sink:\n  type: http\nhttp_sink:\n'
                                 f'  url: "http://127.0.0.1:{port}/{prefix}/${{routedByValue}}"\n',
                        pid=rp.pid, count=count, cleanup=lambda: stop_process(rp))
        raise ValueError(f"unknown sink {sink}")

    def topic_count(self, bootstrap, prefix):
        out = sh([self.bk, "counts", "--bootstrap", bootstrap] + self.topics(prefix))
        return sum(int(line.split()[2]) for line in out.splitlines() if line.strip())

    def offsets(self, topics):
        """The sum of the topics' high watermarks on the real broker (0 for a topic that does not exist)."""
        out = sh([self.bk, "counts", "--bootstrap", self.bootstrap] + topics)
        return sum(max(0, int(line.split()[2])) for line in out.splitlines() if line.strip())

    def committed_count(self, prefix, n):
        """relay-eo's read-back: what a read_committed consumer sees. Fails on a duplicate (an event twice) or a
        record without an `id` header; returns the distinct events seen (the caller fails below n)."""
        r = subprocess.run([self.bk, "count-committed", "--bootstrap", self.bootstrap, "--target", str(n),
                            "--timeout-ms", "120000"] + self.topics(prefix),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=180)
        m = re.search(r"COUNT (\d+) (\d+) (\d+)", r.stdout)
        if not m:
            raise RuntimeError(f"bench-kafka count-committed failed ({r.returncode}): {r.stderr.strip()[-2000:]}")
        records, distinct, without_id = (int(x) for x in m.groups())
        if without_id or records != distinct:
            raise RuntimeError(f"read_committed read-back of {prefix}: {records} records, {distinct} distinct ids, "
                               f"{without_id} without an id header: not exactly once")
        return distinct

    def drain_relay(self, slot, end, n, prefix, sink="kafka", sets=(), relay_bin=None, **_):
        """sets: more of the relay's --set options (the knob runs); relay_bin: another build (their baseline)."""
        target = self.prepare_sink(sink, prefix, slot, n)
        if sets:
            target = dict(target, args=list(target.get("args", [])) + [a for kv in sets for a in ("--set", kv)])
        # Into the real broker: the checkpoint topic's offsets written during the drain (relay-eo: one checkpoint
        # record and one commit marker per Kafka transaction, so about half of them is the number of commits).
        k0 = self.offsets([CHECKPOINT_TOPIC]) if sink in ("kafka", "kafka-eager", "kafka-linger", "kafka-eo") else None
        b0 = proc_cpu(target["pid"])
        m0 = machine_cpu()
        p, port, t0 = self.start_relay(slot, slot, prefix, target, relay_bin=relay_bin)
        acked = {}

        def extra():
            m = self.metrics(port)
            if "published" in m and m["published"] >= n and "t" not in acked:
                acked["t"] = time.time()
            if p.poll() is not None:
                raise RuntimeError(f"the relay exited {p.returncode} (log {self.work}/{slot}.log)")
            return m

        t1, info = self.watch(slot, lambda s: s.get("confirmed", 0) >= end, 600, extra)
        cpu, hwm = proc_cpu(p.pid), proc_hwm_kib(p.pid)
        b1 = proc_cpu(target["pid"])
        m1 = machine_cpu()
        published = self.metrics(port).get("published")
        stop_process(p)
        startup = self.log_time(f"{self.work}/{slot}.log", r"^(\S+Z) info \[relay\] streaming slot", t0)
        if p.returncode != 0:
            raise RuntimeError(f"the relay exited {p.returncode} on SIGTERM (log {self.work}/{slot}.log)")
        checkpoint_offsets = self.offsets([CHECKPOINT_TOPIC]) - k0 if k0 is not None else None
        # Read back from the server, not only the relay's own metric: it holds every event.
        held = target["count"]()
        target["cleanup"]()
        if published != n:
            raise RuntimeError(f"relay published {published} events, expected {n}")
        if held < n:
            raise RuntimeError(f"the {sink} server holds {held} of the relay's events (read back), expected {n}")
        res = {"seconds": t1 - t0, "acked_seconds": acked.get("t", t1) - t0, "cpu": cpu, "rss_kib": hwm,
               "walsender_cpu": info["walsender_cpu"], "broker_cpu": b1 - b0, "held": held,
               "startup_seconds": startup, "machine": (m0, m1)}
        if checkpoint_offsets is not None:
            res["checkpoint_offsets"] = checkpoint_offsets
        if sink == "kafka-eo":
            res["read_committed"] = True
        return res

    @staticmethod
    def log_time(path, pattern, t0):
        """Seconds from t0 to the first log line after t0 matching pattern (its first group: a UTC timestamp)."""
        try:
            with open(path) as f:
                for line in f:
                    m = re.search(pattern, line)
                    if m:
                        at = log_seconds(m.group(1))
                        if at >= t0 - 0.01:
                            return at - t0
        except (OSError, ValueError):
            pass
        return None

    # ---------------------------------------------------------------- Debezium / Kafka Connect
    def connect_start(self, name):
        d = f"{self.work}/{name}"
        os.makedirs(d)
        rest = free_port()
        with open(f"{d}/worker.properties", "w") as f:
            f.write(f"""bootstrap.servers={self.bootstrap}
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.storage.file.filename={d}/offsets.dat
offset.flush.interval.ms=1000
plugin.path={os.path.dirname(self.args.debezium_plugin_dir)}
listeners=http://127.0.0.1:{rest}
connector.client.config.override.policy=All
""")
        with open(f"{d}/log4j2.properties", "w") as f:
            f.write(f"""status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {d}/connect.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.plugins.name = org.apache.kafka.connect.runtime.isolation
logger.plugins.level = WARN
logger.measure.name = io.debezium.metrics.stats
logger.measure.level = ERROR
""")
        java = f"{self.args.connect_java_home}/bin/java"
        # The JVM options of Kafka's connect-standalone.sh (kafka-run-class.sh defaults).
        cmd = [java, "-Xms256M", "-Xmx2G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
               "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15",
               "-Djava.awt.headless=true", f"-Dlog4j2.configurationFile={d}/log4j2.properties",
               "-cp", f"{self.args.kafka_lib}/*", "org.apache.kafka.connect.cli.ConnectStandalone",
               f"{d}/worker.properties"]
        self.results["meta"]["connect_command"] = " ".join(cmd[:10]) + " ... ConnectStandalone worker.properties"
        out = open(f"{d}/connect.out", "w")
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(p)
        url = f"http://127.0.0.1:{rest}"
        deadline = time.time() + 180
        while True:
            if p.poll() is not None:
                raise RuntimeError(f"Kafka Connect exited {p.returncode} (log {d})")
            try:
                with urllib.request.urlopen(url + "/connectors", timeout=2):
                    break
            except (urllib.error.URLError, OSError, ConnectionError):
                if time.time() > deadline:
                    raise RuntimeError("Kafka Connect did not start")
                time.sleep(0.25)
        return p, url

    @staticmethod
    def rest(url, method="GET", body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            text = r.read().decode()
            return json.loads(text) if text else None

    def dbz_config(self, name, dbname, slot, prefix):
        return {"name": name, "config": {
            "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "tasks.max": "1",
            "database.hostname": "127.0.0.1", "database.port": str(self.pg_port), "database.user": "postgres",
            "database.password": "", "database.dbname": dbname, "topic.prefix": name,
            "plugin.name": "pgoutput", "slot.name": slot, "publication.name": "bench_pub",
            "publication.autocreate.mode": "disabled", "snapshot.mode": "no_data",
            "table.include.list": "public.outbox", "tombstones.on.delete": "false",
            # Throughput tuning as Debezium's docs advise: bigger batches and queue, a short poll interval,
            # and the producer batching like the relay's (linger 5 ms, lz4, idempotent, 5 requests in flight).
            "max.batch.size": "8192", "max.queue.size": "32768", "poll.interval.ms": "100",
            # A heartbeat every second, as its docs advise so that the slot advances when nothing new comes: without
            # it Debezium sometimes left its last confirmation short of the last transaction (0/ABD0000 for a last
            # BEGIN at 0/ABD0290 in one run) and never confirmed further on the idle server.
            "heartbeat.interval.ms": "1000",
            "producer.override.linger.ms": "5", "producer.override.batch.size": "262144",
            "producer.override.compression.type": "lz4", "producer.override.enable.idempotence": "true",
            "producer.override.acks": "all", "producer.override.max.in.flight.requests.per.connection": "5",
            "transforms": "outbox", "transforms.outbox.type": "io.debezium.transforms.outbox.EventRouter",
            "transforms.outbox.route.by.field": "type",
            "transforms.outbox.route.topic.replacement": prefix + ".${routedByValue}",
            "transforms.outbox.table.field.event.key": "aggregateid",
        }}

    def dbz_run_connector(self, url, name, dbname, slot, prefix, until, timeout, cpu_pid):
        """Creates the connector and waits; returns (t0, t1, cpu delta, info)."""
        c0 = proc_cpu(cpu_pid)
        b0 = proc_cpu(self.kafka_pid)
        m0 = machine_cpu()
        t0 = time.time()
        self.rest(url + "/connectors", "POST", self.dbz_config(name, dbname, slot, prefix))
        t1, info = self.watch(slot, until, 900)
        info["broker_cpu"] = proc_cpu(self.kafka_pid) - b0
        info["machine"] = (m0, machine_cpu())
        return t0, t1, proc_cpu(cpu_pid) - c0, info

    def dbz_delete(self, url, name, slot, dbname):
        self.rest(f"{url}/connectors/{name}", "DELETE")
        deadline = time.time() + 60
        while True:
            with self.db(dbname).cursor() as c:
                c.execute("SELECT active FROM pg_replication_slots WHERE slot_name = %s", (slot,))
                row = c.fetchone()
            if not row or not row[0]:
                return
            if time.time() > deadline:
                raise RuntimeError(f"slot {slot} still active after deleting connector {name}")
            time.sleep(0.1)

    def dbz_warm(self, url, jpid, warm):
        """Outside the timed part: a connector drains a small load of another database, so the JVM has loaded
        and compiled Debezium's code before the measured connector starts."""
        name = "warm-" + warm["slot"].replace("_", "-")
        self.create_topics(name)
        self.dbz_run_connector(url, name, "bench_warm", warm["slot"], name,
                               lambda s: s["confirmed"] >= warm["last_begin"], 300, jpid)
        self.dbz_delete(url, name, warm["slot"], "bench_warm")

    def drain_debezium(self, slot, end, n, prefix, last_begin, warm, **_):
        p, url = self.connect_start("connect-" + slot)
        if warm:
            self.dbz_warm(url, p.pid, warm)
        self.create_topics(prefix)
        self.wait_quiet()
        wc = self.wait_count(prefix, n, 900000)
        name = "dbz-" + slot.replace("_", "-")
        t0, t1, cpu, info = self.dbz_run_connector(url, name, "bench", slot, prefix,
                                                   lambda s: s["confirmed"] >= last_begin, 900, p.pid)
        hwm = proc_hwm_kib(p.pid)
        t_rec, count = self.reached_at(wc, 60)
        startup = self.log_time(f"{self.work}/connect-{slot}/connect.log",
                                r"^\[(\S+ \S+)\] INFO Processing messages", t0)
        self.dbz_delete(url, name, slot, "bench")
        stop_process(p)
        if t_rec is None:
            raise RuntimeError(f"Debezium's topics did not reach {n} records: {count}")
        return {"seconds": t1 - t0, "acked_seconds": t_rec - t0, "cpu": cpu, "rss_kib": hwm,
                "walsender_cpu": info["walsender_cpu"], "broker_cpu": info["broker_cpu"], "startup_seconds": startup,
                "machine": info["machine"]}

    # ---------------------------------------------------------------- workloads
    def workload(self, wname, n, per_tx, reps, contenders):
        log(f"workload {wname}: {n} events, {per_tx} per transaction, {reps} repetitions: {', '.join(contenders)}")
        warm = {}
        if "debezium" in contenders:
            # Debezium's warm-up slots (in another database) come before the measured slots: their WAL range
            # holds the warm-up load, the measured slots' does not.
            warm_slots = [f"dbzwarm_{wname}_r{r}" for r in range(1, reps + 1)]
            self.create_slots(warm_slots, "bench_warm")
            _, warm_last = self.load(self.args.warm_events, per_tx, "bench_warm")
            for r, s in zip(range(1, reps + 1), warm_slots):
                warm[r] = {"slot": s, "last_begin": warm_last}
        slots = {(c, r): f"{c.replace('-', '_')}_{wname}_r{r}" for r in range(1, reps + 1) for c in contenders}
        created = self.create_slots(list(slots.values()))
        starts = sorted(set(created.values()), key=lsn_int)
        log(f"created {len(created)} slots at {starts[0]}..{starts[-1]}")
        end, last_begin = self.load(n, per_tx)
        wal_bytes = end - lsn_int(starts[-1])
        self.results["meta"].setdefault("wal_bytes", {})[wname] = wal_bytes
        for r in range(1, reps + 1):
            order = alternating(contenders, r)
            for c in order:
                slot = slots[(c, r)]
                prefix = f"b.{wname}.r{r}.{c}"
                self.wait_quiet()
                log(f"  rep {r}: {c} draining {slot} to {lsn_str(end)}")
                if c == "limit":
                    res = self.drain_limit(slot, end, n)
                elif c == "discard":
                    res = self.drain_discard(slot, end, n)
                elif c in SINKS:
                    res = self.drain_relay(slot, end, n, prefix, SINKS[c])
                else:
                    res = self.drain_debezium(slot, end, n, prefix, last_begin, warm.get(r))
                self.account_machine(res)
                res.update({"workload": wname, "per_tx": per_tx, "events": n, "rep": r, "contender": c,
                            "rate": n / res["seconds"], "position": order.index(c) + 1})
                self.results["drains"].append(res)
                log(f"  rep {r}: {c}: {res['seconds']:.2f}s = {res['rate']:,.0f} ev/s, cpu {res['cpu']:.2f}s, "
                    f"rss {res['rss_kib'] / 1024:.1f} MiB, walsender cpu {res['walsender_cpu']:.2f}s")
                self.drop_slots([slot])
                time.sleep(self.args.settle_seconds)
        if "debezium" in contenders and "relay" in contenders and wname == "w1":
            self.compare_records(f"b.{wname}.r1.relay", f"b.{wname}.r1.debezium")
        self.drop_slots(list(slots.values()))
        if warm:
            self.drop_slots([w["slot"] for w in warm.values()], "bench_warm")

    def account_machine(self, res):
        """A drain's machine figures from its (before, after) readings: the machine's busy share during the timed part
        (with everything else running on it), and the CPU seconds of the processes outside the benchmark: machine busy
        minus contender, walsender, broker."""
        m0, m1 = res.pop("machine")
        busy_s = (m1[0] - m0[0]) / CLK_TCK
        res["machine_busy"] = busy_share(m0, m1)
        res["other_cpu"] = max(0.0, busy_s - res["cpu"] - res["walsender_cpu"] - (res["broker_cpu"] or 0))
        res["busy_before"] = self.last_quiet

    def knobs(self, n, reps, per_tx=1):
        """The knob runs: one load of n events in transactions of per_tx, drained by the relay into the mock cluster
        once per KNOBS setting (--knobs picks some) and repetition (its own slot each), the order alternating between
        repetitions; with --baseline-relay, once more per repetition by that build under its defaults."""
        knobs = [(k, kv, None) for k, kv in KNOBS if not self.args.knobs or k in self.args.knobs.split(",")]
        if self.args.baseline_relay:
            knobs.append(("baseline build", None, self.args.baseline_relay))
        names = [k for k, _, _ in knobs]
        if len(knobs) * reps > 60:
            raise RuntimeError(f"the knob runs need {len(knobs) * reps} slots at once, more than the 64 the server has "
                               f"(max_replication_slots): use --reps {60 // len(knobs)} or fewer")
        log(f"knob runs: {n} events, {per_tx} per transaction, {reps} repetitions: {', '.join(names)}")
        slots = {(i, r): f"knob{i}_r{r}" for r in range(1, reps + 1) for i in range(len(knobs))}
        self.create_slots(list(slots.values()))
        end, _ = self.load(n, per_tx)
        for r in range(1, reps + 1):
            for i in alternating(range(len(knobs)), r):
                name, kv, relay_bin = knobs[i]
                slot = slots[(i, r)]
                self.wait_quiet()
                res = self.drain_relay(slot, end, n, f"b.knob.r{r}.k{i}", "mock", sets=[kv] if kv else [],
                                       relay_bin=relay_bin)
                self.account_machine(res)
                res.update({"knob": name, "events": n, "per_tx": per_tx, "rep": r, "rate": n / res["seconds"]})
                self.results.setdefault("knobs", []).append(res)
                log(f"  rep {r}: {name}: {res['seconds']:.2f}s = {res['rate']:,.0f} ev/s, cpu {res['cpu']:.2f}s, "
                    f"walsender cpu {res['walsender_cpu']:.2f}s")
                self.drop_slots([slot])
                time.sleep(self.args.settle_seconds)

    def compare_records(self, ours, theirs):
        """A sample of Debezium's records against ours: same topic (after the per-run prefix), partition, key,
        value and `id` header."""
        sample = self.args.sample
        a = {self.header(r, "id"): r for r in self.dump(ours, sample)}
        b = {self.header(r, "id"): r for r in self.dump(theirs, sample)}
        common = [i for i in a if i in b]
        mismatches = []
        for i in common:
            x, y = a[i], b[i]
            if (x["topic"].split(".")[-1], x["partition"], x["key"], x["value"]) != \
                    (y["topic"].split(".")[-1], y["partition"], y["key"], y["value"]):
                mismatches.append(i)
        counts = []
        for prefix in (ours, theirs):
            out = sh([self.bk, "counts", "--bootstrap", self.bootstrap] + self.topics(prefix))
            counts.append([(line.split()[0].split(".")[-1], line.split()[1], line.split()[2])
                           for line in out.splitlines() if line.strip()])
        example = None
        if common:
            example = {"relay": a[common[0]], "debezium": b[common[0]]}
        self.results["checks"]["records"] = {"compared": len(common), "mismatches": len(mismatches),
                                             "example": example, "partition_counts_equal": counts[0] == counts[1],
                                             "partition_counts": counts[0]}
        log(f"records: {len(common)} compared with Debezium's (same id), {len(mismatches)} differ; "
            f"per-partition counts {'equal' if counts[0] == counts[1] else 'DIFFER'}")

    @staticmethod
    def header(rec, name):
        for k, v in rec["headers"]:
            if k == name:
                return v
        return None

    # ---------------------------------------------------------------- latency
    def wait_ready(self, p, port, slot):
        """Until the relay `p` (its HTTP port `port`, its log named after `slot`) answers /readyz with 200."""
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError, ConnectionError):
                pass
            if p.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"the relay did not become ready (log {self.work}/{slot}.log)")
            time.sleep(0.1)

    def wait_published(self, p, port, n, timeout, what):
        """Until the relay `p` (its HTTP port `port`) has published `n` events; RuntimeError naming `what` if it
        exits or `timeout` seconds pass first."""
        deadline = time.time() + timeout
        while self.metrics(port).get("published", 0) < n:
            if p.poll() is not None or time.time() > deadline:
                raise RuntimeError(what)
            time.sleep(0.05)

    def latency(self, who, rate, seconds, extra=False):
        """One latency run; `extra`: at another rate than --latency-rate (kept in results["latency_rates"])."""
        n = rate * seconds
        slot = f"lat_{who.replace('-', '_')}" + (f"_{rate}" if extra else "")
        prefix = f"b.lat.{who}" + (f".{rate}" if extra else "")
        self.create_topics(prefix)
        warm = None
        if who == "debezium":
            ws = "dbzwarm_lat"
            self.create_slots([ws], "bench_warm")
            _, warm_last = self.load(self.args.broker_warm_events, 1, "bench_warm")
            warm = {"slot": ws, "last_begin": warm_last}
        self.create_slots([slot])
        log(f"latency: {who}, {rate} events/s for {seconds}s")
        if who in RELAY_KAFKA:
            sink = self.relay_kafka_sink(SINKS[who])
            p, port, _ = self.start_relay(slot, slot, prefix, sink)
            self.wait_ready(p, port, slot)
            # Warm-up, as Debezium's connector is warmed up: events to every topic and (32 keys each) every
            # partition, delivered (exactly_once: committed) before the load. The relay's first record to a topic
            # waits once for the topic's configuration (its message size and timestamp limits). The visibility
            # consumer reads them too (it reads from the beginning); they are left out of the figures.
            with self.db("bench").cursor() as c:
                c.execute("INSERT INTO public.outbox (id, aggregatetype, aggregateid, type, payload, created_at) "
                          "SELECT gen_random_uuid(), 'order', 'warm-' || g, bench_type(g), "
                          "bench_event(g, clock_timestamp()), clock_timestamp() FROM generate_series(1, %s) g",
                          (LATENCY_WARM_EVENTS,))
            self.wait_published(p, port, LATENCY_WARM_EVENTS, 60,
                                f"the relay did not deliver the warm-up events (log {self.work}/{slot}.log)")
            url = None
        else:
            p, url = self.connect_start("connect-" + slot)
            self.dbz_warm(url, p.pid, warm)
            cfg = self.dbz_config("dbz-lat", "bench", slot, prefix)
            # For latency, Debezium's best: wait at most 10 ms for more changes before handing a batch over.
            cfg["config"]["poll.interval.ms"] = "10"
            self.rest(url + "/connectors", "POST", cfg)
            deadline = time.time() + 120
            while True:
                st = self.slot_state(slot)
                status = self.rest(url + "/connectors/dbz-lat/status")
                if st and st[0] and status["tasks"] and status["tasks"][0]["state"] == "RUNNING":
                    break
                if time.time() > deadline:
                    raise RuntimeError("Debezium did not start streaming")
                time.sleep(0.2)
        time.sleep(2 * self.args.settle_seconds)
        # The consumer that measures visibility: read_committed, fetching (every partition read to its end) before
        # the load starts; it notes when each record arrives and prints them all once it has n.
        vis_err = open(f"{self.work}/visibility-{who}.err", "w")
        warm_events = LATENCY_WARM_EVENTS if who in RELAY_KAFKA else 0
        vis = subprocess.Popen([self.bk, "visibility", "--bootstrap", self.bootstrap, "--count", str(n + warm_events),
                                "--timeout-ms", str((seconds + max(0, self.args.quiet_wait) + 150) * 1000)]
                               + self.topics(prefix),
                               stdout=subprocess.PIPE, stderr=vis_err, text=True)
        self.procs.append(vis)
        ready = vis.stdout.readline()
        if not ready.startswith("READY"):
            raise RuntimeError(f"bench-kafka visibility did not start (log {self.work}/visibility-{who}.err)")
        self.wait_quiet()
        hist0 = self.ack_histogram(port) if url is None else {}
        m0 = machine_cpu()
        c0 = proc_cpu(p.pid), proc_cpu(self.kafka_pid)
        t0 = time.time()
        with self.db("bench").cursor() as c:
            c.execute("CALL bench_steady(%s, %s)", (rate, seconds))
        m1 = machine_cpu()
        c1 = proc_cpu(p.pid), proc_cpu(self.kafka_pid)
        load_s = time.time() - t0
        gc = self.broker_gc_pauses(t0, t0 + load_s)
        try:
            out, _ = vis.communicate(timeout=seconds + 150)
        except subprocess.TimeoutExpired:
            vis.kill()
            out, _ = vis.communicate()
        with open(f"{self.work}/visibility-{who}.txt", "w") as f:  # every record's times (--keep keeps them)
            f.write(out)
        recs = [line.split() for line in out.splitlines() if line and line[0].isdigit()]
        # The warm-up's records are the earliest inserted.
        recs = sorted(recs, key=lambda r: int(r[3]))[warm_events:]
        if vis.returncode != 0 or len(recs) < n:
            raise RuntimeError(f"latency run {who}: {len(recs)} of {n} records read at read_committed")
        relay_hist = None
        if url is None:
            # The relay's own histogram over the load: its delivery reports may come just after the consumer's
            # last record.
            deadline = time.time() + 10
            hist1 = self.ack_histogram(port)
            while hist1.get(float("inf"), 0) - hist0.get(float("inf"), 0) < n and time.time() < deadline:
                time.sleep(0.05)
                hist1 = self.ack_histogram(port)
            relay_hist = {le: hist1[le] - hist0.get(le, 0) for le in hist1}
        if url:
            self.dbz_delete(url, "dbz-lat", slot, "bench")
        stop_process(p)
        if any(r[2] != "a" for r in recs):
            raise RuntimeError("records without LogAppendTime")
        if any(int(r[3]) < 0 for r in recs):
            raise RuntimeError("records without ts_us in the payload")
        # commit-to-ack: LogAppendTime (ms) - ts_us; visibility: received (us, this machine's clock) - ts_us.
        lat = sorted(int(r[1]) - int(r[3]) / 1000.0 for r in recs)
        vis_lat = sorted((int(r[0]) - int(r[3])) / 1000.0 for r in recs)
        # The same past the load's first 2 s (on disk, both modes had a start-of-load transient there: see the report).
        first_us = min(int(r[3]) for r in recs)
        vis_steady = sorted((int(r[0]) - int(r[3])) / 1000.0 for r in recs if int(r[3]) - first_us >= 2_000_000)
        res = {"events": len(recs), "rate_target": rate, "rate_achieved": n / load_s, "seconds": seconds,
               "p50_ms": percentile(lat, 0.50), "p99_ms": percentile(lat, 0.99), "max_ms": lat[-1],
               "min_ms": lat[0], "mean_ms": statistics.fmean(lat),
               "visible": {"isolation": "read_committed", "p50_ms": percentile(vis_lat, 0.50),
                           "p90_ms": percentile(vis_lat, 0.90), "p99_ms": percentile(vis_lat, 0.99),
                           "p999_ms": percentile(vis_lat, 0.999), "max_ms": vis_lat[-1], "min_ms": vis_lat[0],
                           "p99_after_2s_ms": percentile(vis_steady, 0.99) if vis_steady else None,
                           "max_after_2s_ms": vis_steady[-1] if vis_steady else None,
                           "mean_ms": statistics.fmean(vis_lat),
                           "quantiles": [round(percentile(vis_lat, q) if q > 0 else vis_lat[0], 2)
                                         for q in QUANTILES]},
               "machine_busy": busy_share(m0, m1), "busy_before": self.last_quiet,
               # CPU seconds per second of load: the client's (relay or Connect) and the broker's.
               "client_cpu_share": (c1[0] - c0[0]) / load_s, "broker_cpu_share": (c1[1] - c0[1]) / load_s,
               "broker_gc": gc}
        if relay_hist and relay_hist.get(float("inf"), 0) > 0:
            # From PostgreSQL's commit time (microseconds) to the delivery report, as the relay counts it: quantiles
            # interpolated within the buckets, as Prometheus's histogram_quantile does.
            res["relay_histogram"] = {"events": int(relay_hist[float("inf")]),
                                      "p50_ms": histogram_quantile(relay_hist, 0.50) * 1000,
                                      "p99_ms": histogram_quantile(relay_hist, 0.99) * 1000,
                                      "buckets": {("+Inf" if le == float("inf") else f"{le:g}"): int(c)
                                                  for le, c in sorted(relay_hist.items())}}
        if who == "relay-eo":
            res["transaction_interval_ms"] = self.args.transaction_interval_ms or 100
        if extra:
            self.results.setdefault("latency_rates", {}).setdefault(who, {})[str(rate)] = res
        else:
            self.results["latency"][who] = res
        v = res["visible"]
        if res.get("relay_histogram"):
            h = res["relay_histogram"]
            log(f"latency {who}: the relay's histogram (commit time to delivery report, {h['events']:,} events): "
                f"p50 {h['p50_ms']:.2f} ms, p99 {h['p99_ms']:.2f} ms")
        log(f"latency {who}: commit-to-ack p50 {res['p50_ms']:.1f} ms, p99 {res['p99_ms']:.1f} ms, max "
            f"{res['max_ms']:.1f} ms; visible at read_committed p50 {v['p50_ms']:.1f} ms, p99 {v['p99_ms']:.1f} ms, "
            f"max {v['max_ms']:.1f} ms ({res['rate_achieved']:.0f} ev/s achieved; CPU per second of load: client "
            f"{res['client_cpu_share']:.2f}, broker {res['broker_cpu_share']:.2f}, machine {res['machine_busy']:.2f})")
        self.drop_slots([slot])
        if warm:
            self.drop_slots([warm["slot"]], "bench_warm")

    # ---------------------------------------------------------------- a backlog
    def backlog(self, n, per_tx):
        """n events written while no relay runs (one slot, its own database), then one relay catches up into Kafka:
        the catch-up rate over time (sampled every 0.25 s), RSS, and the relay's progress lines against the real
        finish."""
        log(f"backlog: {n} events ({per_tx} per transaction) written with the relay stopped")
        db, slot, prefix = "bench_backlog", "backlog", "b.backlog"
        if db not in self.outbox_rel:
            self.create_database(db)
        self.create_slots([slot], db)
        end, _ = self.load(n, per_tx, db)
        self.create_topics(prefix)
        self.wait_quiet()
        p, port, t0 = self.start_relay(slot, slot, prefix, self.kafka_sink(self.bootstrap), db)
        samples = []  # every 0.25 s: (seconds since start, published, confirmed, rss_kib)
        deadline = t0 + 1800
        next_sample = t0
        while True:
            now = time.time()
            if p.poll() is not None:
                raise RuntimeError(f"the backlog relay exited {p.returncode} (log {self.work}/{slot}.log)")
            if now > deadline:
                raise RuntimeError("backlog: not caught up in 1800 s")
            if now >= next_sample:
                m = self.metrics(port)
                samples.append((now - t0, m.get("published", 0), m.get("confirmed", 0), proc_rss_kib(p.pid) or 0))
                next_sample += 0.25
                if m.get("confirmed", 0) >= end:
                    break
            time.sleep(0.05)
        finish = samples[-1][0]
        cpu, hwm = proc_cpu(p.pid), proc_hwm_kib(p.pid) or 0  # VmHWM: the peak so far
        stop_process(p)
        held = self.topic_count(self.bootstrap, prefix)
        self.drop_slots([slot], db)
        if held < n:
            raise RuntimeError(f"backlog: the broker holds {held} events, expected {n}")
        # The relay's progress lines: "catching up: X MB behind LSN, R MB/s, ETA S s", each against the real finish.
        progress = []
        pat = re.compile(r"^(\S+Z) info \[relay\] catching up: ([0-9.]+) MB behind \S+, ([0-9.]+) MB/s, ETA (\d+) s")
        with open(f"{self.work}/{slot}.log") as f:
            for line in f:
                m = pat.search(line)
                if not m:
                    continue
                at = log_seconds(m.group(1)) - t0
                progress.append({"at": at, "behind_mb": float(m.group(2)), "mb_s": float(m.group(3)),
                                 "eta_s": int(m.group(4)), "left_s": finish - at})
        res = {"events": n, "per_tx": per_tx, "seconds": finish, "rate": n / finish, "cpu": cpu, "rss_kib": hwm,
               "samples": samples, "progress": progress}
        self.results["backlog"] = res
        log(f"backlog: caught up with {n} events in {finish:.1f}s = {n / finish:,.0f} ev/s, peak rss "
            f"{hwm / 1024:.1f} MiB, {len(progress)} progress lines")

    # ---------------------------------------------------------------- pipelines in one process
    def scale_databases(self, k):
        """Databases bench_p1..bench_pk, each with the outbox table and the benchmark's publication."""
        for i in range(1, k + 1):
            if f"bench_p{i}" not in self.outbox_rel:
                self.create_database(f"bench_p{i}")

    def scale(self, k, n, per_tx):
        """k pipelines in one relay process (one database and slot each, one broker), each with n events of per_tx
        per transaction written before the relay starts, drained at once. Aggregate and per-pipeline drain rates,
        the relay's CPU and RSS, the walsenders' and the broker's CPU."""
        log(f"scale: {k} pipeline(s) in one process, {n} events each, {per_tx} per transaction")
        self.scale_databases(k)
        names = [f"p{i}" for i in range(1, k + 1)]
        # Slot names are the cluster's: one per pipeline.
        slots = {p: f"scale{k}_{p}" for p in names}
        ends = {}
        for p in names:
            self.create_slots([slots[p]], f"bench_{p}")
        for p in names:
            ends[p], _ = self.load(n, per_tx, f"bench_{p}")
        prefixes = {p: f"b.scale{k}.{p}" for p in names}
        for p in names:
            self.create_topics(prefixes[p])
        port = free_port()
        cfg = f"{self.work}/scale{k}.yaml"
        with open(cfg, "w") as f:
            f.write(f"""source:
  publication: bench_pub
kafka:
  bootstrap.servers: "{self.bootstrap}"
http:
  listen: "127.0.0.1:{port}"
pipelines:
""")
            for p in names:
                f.write(f"""  {p}:
    source:
      conninfo: "host=127.0.0.1 port={self.pg_port} dbname=bench_{p} user=postgres"
      slot: {slots[p]}
    outbox:
      table: public.outbox
      route:
        topic: "{prefixes[p]}.${{routedByValue}}"
""")
        self.wait_quiet()
        b0 = proc_cpu(self.kafka_pid)
        m0 = machine_cpu()
        proc, t0 = self.run_relay(f"scale{k}", cfg)
        done, ws_cpu = {}, {}
        deadline = t0 + 900
        while len(done) < k:
            now = time.time()
            if proc.poll() is not None:
                raise RuntimeError(f"the relay exited {proc.returncode} (log {self.work}/scale{k}.log)")
            if now > deadline:
                raise RuntimeError(f"scale {k}: not drained in 900 s ({sorted(done)} done)")
            for p in names:
                st = self.slot_state(slots[p])
                if st and st[0]:
                    c = proc_cpu(st[0])
                    if c is not None:
                        ws_cpu[p] = c
                if p not in done and st and st[1] >= ends[p]:
                    done[p] = now - t0
            time.sleep(0.05)
        cpu, hwm = proc_cpu(proc.pid), proc_hwm_kib(proc.pid) or 0  # VmHWM: the peak so far
        switches = thread_switches(proc.pid)
        b1 = proc_cpu(self.kafka_pid)
        m1 = machine_cpu()
        published = self.pipelines_metrics(port)
        stop_process(proc)
        if proc.returncode != 0:
            raise RuntimeError(f"the relay exited {proc.returncode} on SIGTERM (log {self.work}/scale{k}.log)")
        for p in names:
            got = published.get(p, {}).get("published")
            if got != n:
                raise RuntimeError(f"scale {k}: pipeline {p} published {got} events, expected {n}")
            held = self.topic_count(self.bootstrap, prefixes[p])
            if held < n:
                raise RuntimeError(f"scale {k}: the broker holds {held} of pipeline {p}'s events, expected {n}")
        for p in names:
            self.drop_slots([slots[p]], f"bench_{p}")
        wall = max(done.values())
        busy_s = (m1[0] - m0[0]) / CLK_TCK
        res = {"pipelines": k, "events_each": n, "per_tx": per_tx, "seconds": wall,
               "rate": k * n / wall, "per_pipeline_rates": sorted(n / done[p] for p in names),
               "cpu": cpu, "rss_kib": hwm, "walsender_cpu": sum(ws_cpu.values()), "broker_cpu": b1 - b0,
               "machine_busy": busy_share(m0, m1), "busy_before": self.last_quiet,
               "relay_switches": switches}
        res["other_cpu"] = max(0.0, busy_s - res["cpu"] - res["walsender_cpu"] - res["broker_cpu"])
        self.results.setdefault("scale", []).append(res)
        log(f"scale {k}: {wall:.2f}s = {res['rate']:,.0f} ev/s in all "
            f"({min(res['per_pipeline_rates']):,.0f}-{max(res['per_pipeline_rates']):,.0f} per pipeline), "
            f"relay cpu {cpu:.2f}s, rss {hwm / 1024:.1f} MiB, walsenders {res['walsender_cpu']:.2f}s, "
            f"broker {res['broker_cpu']:.2f}s, relay threads' wake-ups per 1,000 events "
            f"{sum(v[0] for v in switches.values()) * 1000 / (k * n):.0f} "
            f"({', '.join(f'{t} {v[0]}' for t, v in sorted(switches.items()))})")

    # ---------------------------------------------------------------- warm-up and versions
    def warm_broker(self):
        """A first idempotent producer waits for the broker's coordinators to load, and a first transactional one
        for the transaction coordinator (the __transaction_state topic is created then): not in a timed run."""
        warm = [("relay_warm", "b.warm.relay", self.kafka_sink(self.bootstrap))]
        if "relay-eo" in self.args.contenders:
            warm.append(("relay_eo_warm", "b.warm.relay-eo", self.eo_sink(self.bootstrap)))
        self.create_slots([w[0] for w in warm], "bench_warm")
        # Enough events that the broker's JIT has compiled its produce path before the first timed drain: with 2,000
        # the first relay repetition into Kafka found the broker spending 4.7 CPU s (0.8-1.3 in the later ones) and
        # drained at half the rate of the last (issue 22, point 5).
        end, _ = self.load(self.args.broker_warm_events, 1, "bench_warm")
        running = []  # together: nothing of this is timed
        for slot, prefix, sink in warm:
            self.create_topics(prefix)
            p, port, _ = self.start_relay(slot, slot, prefix, sink, "bench_warm")
            running.append((slot, p, port))
        deadline = time.time() + 300
        for slot, p, port in running:
            while self.metrics(port).get("confirmed", 0) < end:
                if p.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"warm-up relay failed (log {self.work}/{slot}.log)")
                time.sleep(0.1)
        for _, p, _ in running:
            stop_process(p)
        self.drop_slots([w[0] for w in warm], "bench_warm")

    def warm_broker_steady(self, rate, seconds):
        """The latency loads' pattern once, unmeasured: 1-event transactions at `rate` for `seconds` through a relay
        into the broker. The bulk warm-up (warm_broker) leaves the broker's path for a sparse stream cold: the first
        latency load after it had the worse tail whichever contender it was (relay-eager alone p99 8.7 ms, relay
        alone 5.2; relay 4.3 then relay-eager 1.1), the broker spending 0.36-0.40 CPU s per s of load first and
        0.25 second."""
        slot, prefix = "relay_steady_warm", "b.warm.steady"
        self.create_slots([slot], "bench_warm")
        self.create_topics(prefix)
        p, port, _ = self.start_relay(slot, slot, prefix, self.kafka_sink(self.bootstrap), "bench_warm")
        log(f"broker warm-up: {rate} events/s for {seconds}s through a relay (not measured)")
        self.wait_ready(p, port, slot)
        with self.db("bench_warm").cursor() as c:
            c.execute("CALL bench_steady(%s, %s)", (rate, seconds))
        self.wait_published(p, port, rate * seconds, 120,
                            f"the warm-up relay did not deliver the steady load (log {self.work}/{slot}.log)")
        stop_process(p)
        self.drop_slots([slot], "bench_warm")

    def versions(self):
        v = {}
        # `version` prints the allocator on a second line: one table cell.
        v["outbox-relay"] = " · ".join(line for line in sh([self.relay_bin, "version"]).splitlines() if line.strip())
        try:
            rev = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).strip()
            dirty = sh(["git", "-C", ROOT, "status", "--porcelain", "--", "src", "CMakeLists.txt"]).strip()
            v["git"] = rev + (" + uncommitted changes in src/" if dirty else "")
        except Exception:
            v["git"] = "unknown"
        v["librdkafka"] = sh([self.bk, "version"]).strip()
        v["PostgreSQL"] = self.q1("SHOW server_version")[0]
        v["pg_recvlogical"] = sh([f"{PG_BIN}/pg_recvlogical", "--version"]).strip()
        v["Kafka broker"] = self.args.kafka_version + " (KRaft, single node)"
        deb = {"relay-rabbitmq": ("RabbitMQ", "rabbitmq-server", " (scripts/rabbitmq-temp.sh: one node, no plugins)"),
               "relay-nats": ("NATS server", "nats-server", " (scripts/nats-temp.sh: -js, file store)"),
               "relay-http": ("cpp-httplib (bench-http-receiver)", "libcpp-httplib-dev", "")}
        for c, (name, package, how) in deb.items():
            if c in self.args.contenders:
                v[name] = sh(["dpkg-query", "-W", "-f", "${Version}", package]).strip() + how
        if "debezium" in self.args.contenders:
            v["Debezium"] = self.args.debezium_version + " (debezium-connector-postgres; EventRouter from " \
                                                         "debezium-connect-plugins)"
            v["Kafka Connect"] = f"connect-runtime {self.args.connect_version} (standalone)"
            jv = subprocess.run([f"{self.args.connect_java_home}/bin/java", "-version"], stderr=subprocess.PIPE,
                                text=True).stderr.splitlines()
            v["Java (Connect)"] = jv[1] if len(jv) > 1 else jv[0]
        cpu = "unknown"
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) // 1024
        v["machine"] = f"{os.cpu_count()} cores ({cpu}), {mem // 1024} GiB, Linux {platform.release()}"
        self.results["meta"]["versions"] = v

    def run(self):
        a = self.args
        self.start_services()
        self.versions()
        self.warm_broker()
        if a.events_1 > 0:
            self.workload("w1", a.events_1, 1, a.reps, a.contenders)
        if a.events_100 > 0:
            self.workload("w100", a.events_100, 100, a.reps, a.contenders)
        if a.latency_seconds > 0 and a.latency_warm_seconds > 0 and any(w in a.contenders for w in LATENCY):
            self.warm_broker_steady(a.latency_rate, a.latency_warm_seconds)
        for who in LATENCY:
            if who in a.contenders and a.latency_seconds > 0:
                self.latency(who, a.latency_rate, a.latency_seconds)
        # The same at other rates (issue 22: 200 and 20,000 events/s), for the relay with and without early sending.
        for rate in a.latency_rates:
            for who in ("relay", "relay-linger"):
                if who in a.contenders and a.latency_extra_seconds > 0:
                    self.latency(who, rate, a.latency_extra_seconds, extra=True)
        if "relay-mock" in a.contenders and a.knob_events > 0:
            self.knobs(a.knob_events, a.reps, a.knob_per_tx)
        if "relay" in a.contenders and a.backlog_events > 0:
            self.backlog(a.backlog_events, a.backlog_per_tx)
        if "relay" in a.contenders and a.pipeline_events > 0:
            for k in a.pipelines:
                self.scale(k, a.pipeline_events, a.pipeline_per_tx)
        self.results["meta"]["transaction_interval_ms"] = a.transaction_interval_ms or 100
        self.results["meta"]["harness_seconds"] = time.time() - START
        self.results["meta"]["quiet_busy"] = a.quiet_busy
        self.results["meta"]["work_dir"] = os.path.dirname(self.work)
        self.results["meta"]["quiet_waited_seconds"] = self.quiet_waited
        self.results["meta"]["payload_bytes"] = self.q1("SELECT avg(length(payload::text))::int FROM outbox")[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relay", required=True)
    ap.add_argument("--bench-kafka", required=True)
    ap.add_argument("--kafka-lib", required=True)
    ap.add_argument("--kafka-version", required=True)
    ap.add_argument("--connect-version", required=True, help="Kafka Connect's version (its jars are --kafka-lib)")
    ap.add_argument("--debezium-plugin-dir", default="")
    ap.add_argument("--debezium-version", default="")
    ap.add_argument("--connect-java-home", default="/usr/lib/jvm/java-17-openjdk-amd64")
    ap.add_argument("--pika-py", default="", help="python of the pika venv (relay-rabbitmq's read-back)")
    ap.add_argument("--nats-py", default="", help="python of the nats-py venv (relay-nats's read-back)")
    ap.add_argument("--http-receiver", default="", help="bench-http-receiver (relay-http's receiver)")
    ap.add_argument("--bench-drain", default="", help="bench-drain (the discard contender)")
    ap.add_argument("--events-1", type=int, default=200000, help="events of the 1-event-per-transaction workload")
    ap.add_argument("--events-100", type=int, default=200000, help="events of the 100-per-transaction workload")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--broker-warm-events", type=int, default=200000,
                    help="events (1 per transaction) each warm-up relay sends to the broker before anything is timed")
    ap.add_argument("--contenders", default=",".join(CONTENDERS))
    ap.add_argument("--latency-rate", type=int, default=2000)
    ap.add_argument("--latency-seconds", type=int, default=60)
    ap.add_argument("--latency-warm-seconds", type=int, default=30,
                    help="an unmeasured steady load at --latency-rate into the broker before the latency runs")
    ap.add_argument("--latency-rates", default="200,20000",
                    help="other rates of relay's and relay-linger's latency runs (comma-separated; empty: none)")
    ap.add_argument("--latency-extra-seconds", type=int, default=20, help="the length of each of those runs")
    ap.add_argument("--settle-seconds", type=float, default=1.0,
                    help="pause after each drain (twice that between a latency run's start and its load)")
    ap.add_argument("--transaction-interval-ms", type=int, default=0,
                    help="relay-eo's delivery.transaction_interval_ms (0: the relay's default, 100)")
    ap.add_argument("--warm-events", type=int, default=20000, help="Debezium's warm-up load (another database)")
    ap.add_argument("--sample", type=int, default=4000, help="records compared with Debezium's")
    ap.add_argument("--quiet-busy", type=float, default=0.25,
                    help="before each timed run, wait until the machine is at most this busy (share of all cores)")
    ap.add_argument("--quiet-wait", type=int, default=120, help="... but at most this many seconds each time")
    ap.add_argument("--quiet-budget", type=int, default=900, help="... and this many seconds in all")
    ap.add_argument("--pipelines", default="1,2,4,8",
                    help="the scale runs: this many pipelines in one relay process, one database and slot each")
    ap.add_argument("--pipeline-events", type=int, default=100000, help="events per pipeline of the scale runs "
                                                                        "(0: no scale runs)")
    ap.add_argument("--pipeline-per-tx", type=int, default=1, help="events per transaction of the scale runs")
    ap.add_argument("--knob-events", type=int, default=200000,
                    help="events of the knob runs (relay-mock under each KNOBS setting; 0: none)")
    ap.add_argument("--knob-per-tx", type=int, default=1, help="events per transaction of the knob runs")
    ap.add_argument("--knobs", default="", help="the KNOBS settings to run, by name (comma-separated; empty: all)")
    ap.add_argument("--baseline-relay", default="",
                    help="another build of the relay, run in the knob runs under its defaults (\"baseline build\"): "
                         "a code change measured against the build before it, in the same run")
    ap.add_argument("--backlog-events", type=int, default=5000000,
                    help="the backlog run: events written while no relay runs, then caught up (0: none)")
    ap.add_argument("--backlog-per-tx", type=int, default=100, help="events per transaction of the backlog")
    ap.add_argument("--relay-set", action="append", default=[], metavar="KEY=VALUE",
                    help="a --set option for every relay run (repeatable), to try a setting on every relay contender")
    ap.add_argument("--out", required=True, help="directory for REPORT.md, chart.png, results.json")
    ap.add_argument("--command", default="bench/run.sh")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs)")
    ap.add_argument("--work-dir", default="auto",
                    help="where the work directory (the servers' data) goes: auto = /dev/shm when it has room, else /tmp")
    args = ap.parse_args()
    args.contenders = [c for c in args.contenders.split(",") if c]
    args.pipelines = [int(k) for k in args.pipelines.split(",") if k]
    args.latency_rates = [int(r) for r in args.latency_rates.split(",") if r]
    for c in args.contenders:
        if c not in CONTENDERS:
            ap.error(f"unknown contender {c}")
    for c, opt in (("relay-rabbitmq", "pika_py"), ("relay-nats", "nats_py"), ("relay-http", "http_receiver"),
                   ("discard", "bench_drain")):
        if c in args.contenders and not getattr(args, opt):
            ap.error(f"{c} needs --{opt.replace('_', '-')}")
    b = Bench(args)
    ok = False
    try:
        b.run()
        ok = True
    finally:
        b.stop_services()
        os.makedirs(args.out, exist_ok=True)
        b.results["meta"]["command"] = args.command
        b.results["meta"]["complete"] = ok
        b.results["meta"]["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(START))
        with open(f"{args.out}/results.json", "w") as f:
            json.dump(b.results, f, indent=1)
    import report
    report.write(b.results, args.out)
    log(f"wrote {args.out}/REPORT.md and {args.out}/chart.png")


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
