#!/usr/bin/python3
"""Writes REPORT.md and chart.png from the harness's results.json (bench/bench.py calls write(); it can also be
re-run by hand: bench/report.py bench/results)."""
import json
import os
import statistics
import sys
import textwrap

LABELS = {
    "limit": "pg_recvlogical (the limit)",
    "discard": "bench-drain (streams, discards)",
    "relay": "outbox-relay → Kafka",
    "relay-eager": "outbox-relay → Kafka, read_batch_us=0",
    "relay-linger": "outbox-relay → Kafka, linger.ms=5 set",
    "relay-eo": "outbox-relay → Kafka, exactly_once",
    "relay-mock": "outbox-relay → mock cluster",
    "relay-rabbitmq": "outbox-relay → RabbitMQ",
    "relay-nats": "outbox-relay → NATS JetStream",
    "relay-http": "outbox-relay → HTTP receiver",
    "debezium": "Debezium 3.6 + Connect → Kafka",
}
SHORT = {"limit": "pg_recvlogical", "discard": "bench-drain", "relay": "relay→Kafka", "relay-eager": "relay-eager→Kafka", "relay-linger": "relay-linger→Kafka", "relay-eo": "relay-eo→Kafka", "relay-mock": "relay→mock",
         "relay-rabbitmq": "relay→RabbitMQ", "relay-nats": "relay→NATS", "relay-http": "relay→HTTP",
         "debezium": "Debezium"}
ORDER = ["limit", "discard", "relay", "relay-eager", "relay-linger", "relay-eo", "relay-mock", "relay-rabbitmq", "relay-nats", "relay-http", "debezium"]
OTHER_SINKS = ["relay-rabbitmq", "relay-nats", "relay-http"]
# The relay into the real broker under its variants' settings (the walsender comparison leaves them out).
RELAY_FAMILY = ["relay", "relay-eager", "relay-linger", "relay-eo", "relay-mock", *OTHER_SINKS]
WORKLOADS = {"w1": "1 event per transaction", "w100": "100 events per transaction"}
TARGETS = {"relay_vs_limit": 0.7, "mock_vs_limit": 0.95, "vs_debezium": 3.0, "limit_fraction": 0.9,
           "cpu_vs_debezium": 1 / 3, "p99_ms": 25.0, "rss_mib": 64.0,
           "eo_vs_relay": 0.8, "eo_visible_slack_ms": 50.0}  # issue 15: drain ≥ 0.8 × relay; p99 ≤ interval + 50
COLORS = {"limit": "#7f7f7f", "discard": "#c7c7c7", "relay": "#1f77b4", "relay-eager": "#6baed6", "relay-linger": "#aec7e8", "relay-eo": "#17becf", "relay-mock": "#9ecae1",
          "relay-rabbitmq": "#ff7f0e", "relay-nats": "#2ca02c", "relay-http": "#9467bd", "debezium": "#d62728"}


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(results):
    """{workload: {contender: {rate, rate_min, rate_max, seconds, acked_seconds, cpu100k, ws100k, broker100k,
    rss_mib, runs}}}"""
    out = {}
    for d in results["drains"]:
        out.setdefault(d["workload"], {}).setdefault(d["contender"], []).append(d)
    summary = {}
    for w, by in out.items():
        summary[w] = {}
        for c, runs in by.items():
            n = runs[0]["events"]
            per100k = 100000.0 / n
            summary[w][c] = {
                "events": n,
                "per_tx": runs[0]["per_tx"],
                "runs": len(runs),
                "rate": med([r["rate"] for r in runs]),
                "rate_min": min(r["rate"] for r in runs),
                "rate_max": max(r["rate"] for r in runs),
                "seconds": med([r["seconds"] for r in runs]),
                "acked_seconds": med([r.get("acked_seconds") for r in runs]),
                "startup_seconds": med([r.get("startup_seconds") for r in runs]),
                "stream_rate": med([n / (r["acked_seconds"] - r["startup_seconds"])
                                    if r.get("acked_seconds") and r.get("startup_seconds") is not None and
                                    r["acked_seconds"] > r["startup_seconds"] else None for r in runs]),
                "tail_seconds": med([r["seconds"] - r["acked_seconds"] if r.get("acked_seconds") else None
                                     for r in runs]),
                "cpu100k": med([r["cpu"] * per100k for r in runs]),
                "ws100k": med([r["walsender_cpu"] * per100k for r in runs]),
                "broker100k": med([r["broker_cpu"] * per100k if r.get("broker_cpu") is not None else None
                                   for r in runs]),
                "rss_mib": max(r["rss_kib"] for r in runs) / 1024.0,
                "checkpoint_offsets": med([r.get("checkpoint_offsets") for r in runs]),
                "cpu_share": med([r["cpu"] / r["seconds"] for r in runs]),
                # The walsender's side: its busy share of the drain, and its own rate (events per CPU second).
                "ws_busy": med([r["walsender_cpu"] / r["seconds"] for r in runs]),
                "ws_rate": med([n / r["walsender_cpu"] if r["walsender_cpu"] > 0 else None for r in runs]),
                "other_s": med([r.get("other_cpu") for r in runs]),
            }
    return summary


def gc_text(gc):
    """The broker GC pauses of a latency run: "n (max ms)", or – without a GC log."""
    return "–" if not gc else f"{gc['pauses']} ({gc['max_ms']:.1f})"


def fmt(v, spec=",.0f", none="–"):
    return none if v is None else format(v, spec)


def is_noisy(d, meta):
    other_cores = (d.get("other_cpu") or 0) / max(d["seconds"], 1e-9)
    return (d.get("busy_before") or 0) > meta.get("quiet_busy", 0.25) or other_cores > 0.25


def table(header, rows):
    """A markdown table, the first column left-aligned and the others right-aligned, then a blank line."""
    lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
    return lines + ["| " + " | ".join(r) + " |" for r in rows] + [""]


def pct(v):
    return "–" if v is None else f"{100 * v:.0f}%"


def targets(summary, latency):
    rows = []
    for w, s in summary.items():
        lim, rel, mock, dbz = (s.get(k) for k in ("limit", "relay", "relay-mock", "debezium"))
        wl = WORKLOADS.get(w, w)
        if lim and rel:
            r = rel["rate"] / lim["rate"]
            rows.append((f"{wl}: relay→Kafka drain rate ≥ 0.7 × pg_recvlogical", f"{r:.2f} ×", r >= 0.7))
        if lim and mock:
            r = mock["rate"] / lim["rate"]
            rows.append((f"{wl}: relay→mock drain rate ≥ 0.95 × pg_recvlogical", f"{r:.2f} ×", r >= 0.95))
        if rel and dbz:
            need = 3.0 * dbz["rate"]
            note = "3 × Debezium"
            if lim and 0.9 * lim["rate"] < need:
                need, note = 0.9 * lim["rate"], "0.9 × the limit (lower than 3 × Debezium)"
            rows.append((f"{wl}: relay→Kafka drain rate ≥ {note} = {need:,.0f} ev/s",
                         f"{rel['rate']:,.0f} ev/s ({rel['rate'] / dbz['rate']:.1f} × Debezium)",
                         rel["rate"] >= need))
            r = rel["cpu100k"] / dbz["cpu100k"]
            rows.append((f"{wl}: relay CPU per event ≤ ⅓ of Debezium's", f"{r:.2f} × Debezium's", r <= 1 / 3))
        for k in ("relay", "relay-eo", "relay-mock", *OTHER_SINKS):
            if s.get(k):
                rows.append((f"{wl}: {SHORT[k]} peak RSS ≤ 64 MiB (default delivery bounds)",
                             f"{s[k]['rss_mib']:.1f} MiB", s[k]["rss_mib"] <= 64))
    lat = latency.get("relay")
    if lat:
        rows.append((f"relay p99 commit-to-ack ≤ 25 ms at {lat['rate_target']:,} ev/s",
                     f"{lat['p99_ms']:.1f} ms", lat["p99_ms"] <= 25))
    return rows


def issue22_targets(summary, latency, results):
    """Issue 22's targets: (target, measured, met) rows, for what this run measured."""
    rows = []
    lat = latency.get("relay")
    if lat:
        rate = lat["rate_target"]
        rows.append((f"relay→Kafka commit-to-ack p50 ≤ 1.5 ms at {rate:,} ev/s", f"{lat['p50_ms']:.1f} ms",
                     lat["p50_ms"] <= 1.5))
        rows.append((f"relay→Kafka commit-to-ack p99 ≤ 3 ms at {rate:,} ev/s", f"{lat['p99_ms']:.1f} ms",
                     lat["p99_ms"] <= 3.0))
        h = lat.get("relay_histogram")
        if h:
            rows.append((f"relay→Kafka commit-to-ack p50 ≤ 1.5 ms at {rate:,} ev/s, the relay's histogram",
                         f"{h['p50_ms']:.2f} ms", h["p50_ms"] <= 1.5))
            rows.append((f"relay→Kafka commit-to-ack p99 ≤ 3 ms at {rate:,} ev/s, the relay's histogram",
                         f"{h['p99_ms']:.2f} ms", h["p99_ms"] <= 3.0))
    for w, s in summary.items():
        wl = WORKLOADS.get(w, w)
        rel, lin, mock = s.get("relay"), s.get("relay-linger"), s.get("relay-mock")
        if rel and lin and w == "w100":
            r = rel["rate"] / lin["rate"]
            rows.append((f"{wl}: relay drain rate ≥ 0.95 × relay-linger's (the cost of sending early)",
                         f"{r:.2f} × ({rel['rate']:,.0f} / {lin['rate']:,.0f} ev/s)", r >= 0.95))
        if mock:
            rows.append((f"{wl}: relay→mock's walsender ≥ 90% busy during the drain", pct(mock["ws_busy"]),
                         mock["ws_busy"] >= 0.9))
        if rel and w == "w1":
            rows.append((f"{wl}: relay→Kafka CPU ≤ 0.25 s per 100,000 events", f"{rel['cpu100k']:.2f} s",
                         rel["cpu100k"] <= 0.25))
        if rel:
            others = {c: v["ws100k"] for c, v in s.items() if c not in RELAY_FAMILY and v.get("ws100k")}
            if others:
                least = min(others, key=others.get)
                rows.append((f"{wl}: relay→Kafka's walsender CPU per event ≤ every other contender's",
                             f"{rel['ws100k']:.2f} s/100k (least: {SHORT[least]}, {others[least]:.2f})",
                             rel["ws100k"] <= others[least]))
        dis = s.get("discard")
        if rel and dis and rel["runs"] > 1 and dis["runs"] > 1:
            spread, ref = rel["rate_max"] / rel["rate_min"], dis["rate_max"] / dis["rate_min"]
            rows.append((f"{wl}: relay→Kafka max/min over {rel['runs']} repetitions ≤ bench-drain's + 0.1",
                         f"{spread:.2f} (bench-drain {ref:.2f})", spread <= ref + 0.1))
    starts = [d["startup_seconds"] for d in results["drains"]
              if d["contender"] in RELAY_FAMILY and d.get("startup_seconds") is not None]
    if starts:
        rows.append(("every relay start: `starting` to streaming ≤ 100 ms",
                     f"{1000 * min(starts):.0f}–{1000 * max(starts):.0f} ms over {len(starts)} starts",
                     max(starts) <= 0.1))
    return rows


def latency_rates_table(latency, rates):
    """Commit-to-ack and visibility of relay and relay-linger at every rate measured."""
    rows = []
    for c in ("relay", "relay-linger"):
        runs = dict(rates.get(c, {}))
        if latency.get(c):
            runs[str(latency[c]["rate_target"])] = latency[c]
        for rate in sorted(runs, key=int):
            x = runs[rate]
            v = x.get("visible") or {}
            h = x.get("relay_histogram") or {}
            rows.append([LABELS[c], f"{int(rate):,} / {x['rate_achieved']:,.0f}", f"{x['p50_ms']:.1f}",
                         f"{x['p99_ms']:.1f}", f"{x['max_ms']:.1f}", fmt(h.get("p50_ms"), ".2f"),
                         fmt(h.get("p99_ms"), ".2f"), fmt(v.get("p50_ms"), ".1f"),
                         fmt(v.get("p99_ms"), ".1f"), fmt(x.get("client_cpu_share"), ".2f"),
                         fmt(x.get("broker_cpu_share"), ".2f")])
    if not rows:
        return []
    return table(["contender", "ev/s (target / achieved)", "p50 ms", "p99 ms", "max ms", "relay's p50 ms",
                  "relay's p99 ms", "visible p50 ms", "visible p99 ms", "relay CPU / s", "broker CPU / s"], rows)


def eo_targets(summary, latency, meta):
    """Issue 15's targets of exactly_once: (target, measured, met) rows."""
    rows = []
    for w, s in summary.items():
        rel, eo = s.get("relay"), s.get("relay-eo")
        if rel and eo:
            r = eo["rate"] / rel["rate"]
            rows.append((f"{WORKLOADS.get(w, w)}: relay-eo drain rate ≥ 0.8 × relay→Kafka (at-least-once)",
                         f"{r:.2f} × ({eo['rate']:,.0f} / {rel['rate']:,.0f} ev/s)", r >= TARGETS["eo_vs_relay"]))
    lat = latency.get("relay-eo")
    if lat and lat.get("visible"):
        interval = lat.get("transaction_interval_ms") or meta.get("transaction_interval_ms") or 100
        need = interval + TARGETS["eo_visible_slack_ms"]
        rows.append((f"relay-eo p99 visibility at read_committed ≤ transaction interval + 50 ms = {need:.0f} ms "
                     f"at {lat['rate_target']:,} ev/s", f"{lat['visible']['p99_ms']:.1f} ms",
                     lat["visible"]["p99_ms"] <= need))
    return rows


def work_dir_text(meta):
    where = meta.get("work_dir", "/tmp")
    if where == "/dev/shm":
        return ("memory (`/dev/shm`, `--work-dir auto`: on this machine's disk the kernel's writeback of the drain "
                "workloads' dirty pages stalled the broker's appends for up to 1.7 s when the latency load started)")
    return f"`{where}`"


def eo_section(summary, latency, results, meta):
    """The "Exactly once" section (issue 15 item 7): relay-eo against relay in the same run."""
    has_drain = any(s.get("relay-eo") for s in summary.values())
    lat_eo = latency.get("relay-eo")
    if not has_drain and not lat_eo:
        return []
    interval = (lat_eo or {}).get("transaction_interval_ms") or meta.get("transaction_interval_ms") or 100
    L = ["## Exactly once", ""]
    L.append(f"relay-eo is the relay into the same broker with `--set delivery.guarantee=exactly_once` "
             f"(`delivery.transaction_interval_ms` {interval}): a transactional producer; the records and a "
             f"checkpoint record commit together in one Kafka transaction every {interval} ms (or sooner at the "
             f"delivery bounds), the relay stops reading the slot while a commit is in flight, and the slot is "
             f"confirmed after the commit. It drains its own slot of the same WAL as the others; its topics are "
             f"then read back at `isolation.level=read_committed` (`bench-kafka count-committed`), and the run "
             f"fails unless every event is there exactly once (distinct `id` headers = records = events). "
             f"relay is the default, at-least-once, in the same run.")
    L.append("")
    rows = []
    for w in ("w1", "w100"):
        s = summary.get(w) or {}
        rel, eo = s.get("relay"), s.get("relay-eo")
        if not eo:
            continue
        pair = []
        if rel:
            by_rep = {}
            for d in results["drains"]:
                if d["workload"] == w and d["contender"] in ("relay", "relay-eo"):
                    by_rep.setdefault(d["rep"], {})[d["contender"]] = d["rate"]
            pair = [v["relay-eo"] / v["relay"] for v in by_rep.values() if len(v) == 2]
        ratio = eo["rate"] / rel["rate"] if rel else None
        commits = eo["checkpoint_offsets"] / 2 if eo.get("checkpoint_offsets") else None
        rows.append([WORKLOADS[w],
                     f"{rel['rate']:,.0f} [{rel['rate_min']:,.0f}–{rel['rate_max']:,.0f}]" if rel else "–",
                     f"{eo['rate']:,.0f} [{eo['rate_min']:,.0f}–{eo['rate_max']:,.0f}]",
                     (f"**{ratio:.2f}**" + (f" [{min(pair):.2f}–{max(pair):.2f}]" if len(pair) > 1 else ""))
                     if ratio else "–",
                     ("yes" if ratio >= TARGETS["eo_vs_relay"] else "**no**") if ratio else "–",
                     f"{rel['cpu100k']:.2f}" if rel else "–", f"{eo['cpu100k']:.2f}",
                     f"{rel['cpu_share']:.2f}" if rel else "–", f"{eo['cpu_share']:.2f}",
                     fmt(commits), fmt(eo["events"] / commits if commits else None)])
    if rows:
        L.append("Drain rate (medians of the repetitions [min–max]; the ratio of the medians [min–max of the "
                 "per-repetition ratios]), the relay's CPU seconds per 100k events and per second of drain "
                 "(*busy share*: 1.0 = one core all the time), and the Kafka transactions of relay-eo's drain "
                 "(about half the offsets its drain added to the checkpoint topic: one checkpoint record and one "
                 "commit marker per transaction, `init` and the stop included).")
        L.append("")
        L += table(["workload", "relay ev/s", "relay-eo ev/s", "relay-eo / relay", "≥ 0.8", "relay CPU s/100k",
                    "relay-eo CPU s/100k", "relay busy share", "relay-eo busy share", "relay-eo transactions (≈)",
                    "events per transaction (≈)"], rows)
    if lat_eo and lat_eo.get("visible"):
        need = interval + TARGETS["eo_visible_slack_ms"]
        L.append(f"Visibility at {lat_eo['rate_target']:,} ev/s (1-event transactions for {lat_eo['seconds']} s): "
                 f"the local wall-clock time at which a consumer at `isolation.level=read_committed` "
                 f"(`bench-kafka visibility`, fetching with `fetch.wait.max.ms=10` before the load starts) received "
                 f"each record, minus the `ts_us` that `clock_timestamp()` put into its payload at the insert. "
                 f"Target: p99 ≤ the transaction interval + 50 ms = {need:.0f} ms.")
        L.append("")
        vrows = []
        for c in ("relay", "relay-eo"):
            x = latency.get(c)
            if not x or not x.get("visible"):
                continue
            v = x["visible"]
            met = ("yes" if v["p99_ms"] <= need else "**no**") if c == "relay-eo" else "(at-least-once: reference)"
            steady = v.get("p99_after_2s_ms")
            steady_max = v.get("max_after_2s_ms")
            vrows.append([LABELS[c], f"{x['rate_achieved']:,.0f}", f"{x['events']:,}", f"{v['p50_ms']:.1f}",
                          f"{v.get('p90_ms', float('nan')):.1f}", f"{v['p99_ms']:.1f}", f"{v['max_ms']:.1f}",
                          "–" if steady is None else f"{steady:.1f}", "–" if steady_max is None else f"{steady_max:.1f}",
                          f"{x['p99_ms']:.1f}", met])
        L += table(["contender", "ev/s achieved", "events", "visible p50 ms", "p90 ms", "p99 ms", "max ms",
                    "p99 ms past the first 2 s", "max ms past the first 2 s",
                    "commit-to-ack (LogAppendTime) p99 ms", f"p99 ≤ {need:.0f} ms"], vrows)
        L.append("The target is judged on the whole run's p99. *Past the first 2 s* leaves out the records inserted "
                 "in the load's first 2 s. With the servers' data on this machine's disk (`--work-dir /tmp`) both "
                 "modes had a start-of-load transient there: the kernel's writeback of the drain workloads' dirty "
                 "pages stalled the broker's appends (ProduceResponse round trips of up to 850 ms while its threads "
                 "sat idle), and records were appended up to 1.7 s late; with the data in memory (`--work-dir auto` "
                 "picks `/dev/shm`) it is gone and the two p99s agree.")
        L.append("")
        L.append(f"An exactly_once record becomes visible when its transaction commits: it waits for the next "
                 f"commit (due {interval} ms after the previous one began, so up to {interval} ms), then for that `commit_transaction` (librdkafka flushes the transaction's records, "
                 f"which wait for their partitions' AddPartitionsToTxn, then EndTxn; the broker writes the commit "
                 f"markers and the last stable offset moves). "
                 f"Its LogAppendTime is when it was appended, uncommitted: its commit-to-ack figure is not its "
                 f"visibility.")
        L.append("")
    rows = eo_targets(summary, latency, meta)
    if rows:
        L.append("| target (issue 15) | measured | met |")
        L.append("| --- | --- | --- |")
        for t, m, ok in rows:
            L.append(f"| {t} | {m} | {'yes' if ok else '**no**'} |")
        L.append("")
    return L


def other_sinks_method(present):
    """The method bullet of the RabbitMQ, NATS and HTTP contenders, when the run had any."""
    if not any(c in present for c in OTHER_SINKS):
        return ""
    return """
  - relay→RabbitMQ, relay→NATS, relay→HTTP: the same binary with `sink.type` `rabbitmq`, `nats` or `http`,
    `source.checkpoint: file`, everything else at its defaults; done as for the relay (the confirmed LSN). Then the
    harness reads back what the server holds and fails the run below the event count: RabbitMQ (one node of
    `scripts/rabbitmq-temp.sh`, no plugins) through a durable topic exchange per drain bound by `#` to one
    durable queue, its depth read with a passive `queue.declare` (pika); NATS (`scripts/nats-temp.sh`,
    `nats-server -js`) into a stream per drain (file storage, the server's defaults) binding the drain's
    subjects, its message count read with nats-py; HTTP into `bench-http-receiver` (bench/tools, cpp-httplib,
    64 threads for the relay's 16 connections), started per drain, which answers every POST 200 and counts
    them. Their "broker" CPU is the RabbitMQ node's Erlang VM, the nats-server, the receiver."""


def write(results, out_dir):
    meta = results["meta"]
    summary = summarize(results)
    latency = results.get("latency", {})
    L = []
    L.append("# outbox-relay benchmark")
    L.append("")
    if not meta.get("complete", True):
        L.append("**The run did not complete: the figures below are partial.**")
        L.append("")
    L.append(f"Run {meta.get('date', '?')} with `{meta.get('command', 'bench/run.sh')}`; the harness took "
             f"{meta.get('harness_seconds', 0) / 60:.1f} min (plus install and build), of which "
             f"{meta.get('quiet_waited_seconds', 0) / 60:.1f} min waiting for other work on the machine to calm down "
             f"before timed runs. Raw figures: "
             f"[results.json](results.json). Chart: [chart.png](chart.png).")
    L.append("")
    noisy = [d for d in results["drains"] if is_noisy(d, meta)]
    noisy += [x for x in latency.values() if (x.get("busy_before") or 0) > meta.get("quiet_busy", 0.25)]
    if noisy:
        L.append(f"**Noise warning:** in {len(noisy)} of {len(results['drains']) + len(latency)} timed runs other "
                 f"work on this 2-core machine (other sessions' builds and tests) was busy before the run or took "
                 f"more than a quarter of a core during it (marked *noisy* in the last table, with the CPU seconds "
                 f"it took): those figures are pessimistic, whichever the contender.")
        L.append("")
    L.append("| component | version |")
    L.append("| --- | --- |")
    for k, v in meta.get("versions", {}).items():
        L.append(f"| {k} | {v} |")
    L.append("")
    L.append("## Method")
    L.append("")
    pb = meta.get("payload_bytes")
    present = [c for c in ORDER if any(d["contender"] == c for d in results["drains"])]
    order = ", ".join(present)
    L.append(f"""- A throwaway PostgreSQL 15 (`scripts/pg-temp.sh`: fsync off, synchronous_commit on) and a single-node
  Kafka broker (`scripts/kafka-temp.sh`, topics with `message.timestamp.type=LogAppendTime`, 3 partitions each,
  4 event types so 4 topics per run), all on this machine, their data in {work_dir_text(meta)}. Payloads: jsonb of {pb or '~300'} bytes as PostgreSQL
  prints it, key `aggregateid` (20,000 aggregates), routed by `type`.
- Same WAL for everyone: per workload, one logical slot per contender and repetition is created in one statement
  before the load (`pg_create_logical_replication_slot`), then the load is written once, then each slot is drained
  by its contender, started fresh against its slot. One contender at a time; the order alternates between
  repetitions (1: {order}; 2: reversed; 3: as 1). Figures are medians of the
  repetitions (min–max in brackets).
- Drain time, from the contender's start:
  - pg_recvlogical: `{meta.get('limit_command', 'pg_recvlogical --start ... --endpos=<end LSN>')}`, until it exits at
    `--endpos` = the end LSN of the load's last commit (read with pg_waldump).
  - outbox-relay: until `outbox_relay_confirmed_lsn` on `/metrics` ≥ that end LSN (polled every 50 ms); the
    confirmation waits for the checkpoint record and the next status update (`source.status_interval_ms`, 1 s by
    default). "acked" is when `outbox_relay_events_total{{result="published"}}` reached the event count.
    Default configuration (checkpoints in Kafka, default delivery bounds) but for the slot and the topic template.
  - relay-eo: the same with `--set delivery.guarantee=exactly_once` (see "Exactly once"); its read-back is a
    read_committed consumer (the high watermarks count commit markers too) that must see every event once.
  - relay→mock: the same binary against librdkafka's mock cluster (`bench-kafka mock`, its own process, topics
    and the checkpoint topic pre-created there).{other_sinks_method(present)}
  - Debezium: Kafka Connect standalone (connect-runtime from the broker's own jars, the JVM options of
    `connect-standalone.sh`) is started and warmed up *outside* the timed part: a connector drains a
    warm-up load from another database's slot and is deleted, so class loading and JIT are done. The timed part
    starts when the measured connector is created over REST and ends when its slot's `confirmed_flush_lsn`
    reaches the LSN of the first record of the load's last transaction (read with pg_waldump): Debezium confirms
    the position of the last transaction's BEGIN (its `lsn_commit` offset), not the commit's end, on each
    offset flush (`offset.flush.interval.ms=1000`; `heartbeat.interval.ms=1000` so that the last confirmation
    does not wait for more WAL). "acked" is when its topics held all
    records (sum of the high watermarks, polled every 50 ms). Connector: `plugin.name=pgoutput`,
    `snapshot.mode=no_data`, `publication.autocreate.mode=disabled`, EventRouter with `route.by.field=type`,
    `table.field.event.key=aggregateid`, StringConverter for keys and values; tuned as its docs advise:
    `max.batch.size=8192`, `max.queue.size=32768`, `poll.interval.ms=100`, `heartbeat.interval.ms=1000`, producer `linger.ms=5`,
    `batch.size=262144`, `compression.type=lz4`, idempotent with 5 requests in flight.
- CPU: user+sys seconds of the contender's process (all threads) during the drain, per 100,000 events:
  pg_recvlogical from its rusage, the relay from `/proc/<pid>/stat` at the end of the drain (from its start),
  the Connect JVM as the difference between the connector's creation and the end. The walsender serving the slot
  (server-side decoding, the same work for everyone) and the broker (the mock cluster's process for relay→mock)
  are shown apart: on 2 cores, walsender + contender + broker share the machine, so the broker's CPU bounds
  what any contender can reach into the real broker.
- Peak RSS: VmHWM of the process. For the JVM it is the whole life of the process (start, warm-up and drain),
  with Connect's default `-Xmx2G`.
- The limit is approximate: pg_recvlogical writes every message with its own write() call, and its walsender
  spends more CPU per event than the relay's; the relay's streaming phase alone can outrun it (see "where the
  drain time goes").
- Latency: before the first latency run the broker is warmed up with the same pattern, unmeasured (1-event
  transactions at the latency rate through a relay, `--latency-warm-seconds`, 30 s by default: the bulk warm-up
  left its path for a sparse stream cold, and the first latency run after it had the worse tail). Each run: a
  fresh slot; the contender is started and streaming, and warmed up (the relay: one event per topic
  delivered first, since its first record to a topic waits once for the topic's configuration; Debezium: a
  warm-up load on another slot); then 1-event transactions at a steady rate
  (`bench_steady` in bench/bench.sql: clock_timestamp() into the payload's `ts_us` at the insert, committed
  right after), and commit-to-ack = the record's LogAppendTime (the broker's append, ms) − `ts_us`. A consumer at
  `isolation.level=read_committed` (`bench-kafka visibility`) reads the records as they come: *visible* = the
  local wall-clock time it received a record − `ts_us` (PostgreSQL, the broker and the consumer share this
  machine's clock).""")
    L.append("")

    L.append("## Drain rate, CPU and memory")
    L.append("")
    for w in ("w1", "w100"):
        s = summary.get(w)
        if not s:
            continue
        any_c = next(iter(s.values()))
        wal = meta.get("wal_bytes", {}).get(w)
        L.append(f"### {WORKLOADS[w]}: {any_c['events']:,} events"
                 + (f", {wal / 1048576:.0f} MiB of WAL" if wal else "") + f", {any_c['runs']} repetitions")
        L.append("")
        L.append("| contender | events/s (median [min–max]) | drain s | start s | acked s | × limit | "
                 "CPU s / 100k ev | walsender CPU s / 100k | broker (mock, node, receiver) CPU s / 100k | "
                 "peak RSS MiB |")
        L.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        lim = s.get("limit")
        for c in ORDER:
            x = s.get(c)
            if not x:
                continue
            ratio = f"{x['rate'] / lim['rate']:.2f}" if lim else "–"
            L.append(f"| {LABELS[c]} | {x['rate']:,.0f} [{x['rate_min']:,.0f}–{x['rate_max']:,.0f}] | "
                     f"{x['seconds']:.2f} | {fmt(x['startup_seconds'], '.2f')} | {fmt(x['acked_seconds'], '.2f')} | {ratio} | {x['cpu100k']:.2f} | "
                     f"{x['ws100k']:.2f} | {fmt(x['broker100k'], '.2f')} | {x['rss_mib']:.1f} |")
        L.append("")
        L += walsender_table(s)
        rel, mock, dbz = s.get("relay"), s.get("relay-mock"), s.get("debezium")
        split = [c for c in ORDER if c != "limit" and s.get(c) and s[c].get("stream_rate")]
        if split:
            L.append("Where the drain time goes (medians): *start* is from the process start (Debezium: the "
                     "connector's creation) to streaming; *streaming* until every record was acknowledged; *tail* "
                     "from there to the confirmed position. *Streaming rate* = events / streaming time, to compare "
                     "with the limit's events/s.")
            L.append("")
            L += table(["contender", "start s", "streaming s", "tail s", "streaming rate ev/s", "× limit"],
                       [[LABELS[c], f"{s[c]['startup_seconds']:.2f}", f"{s[c]['events'] / s[c]['stream_rate']:.2f}",
                         f"{max(0.0, s[c]['tail_seconds']):.2f}", f"{s[c]['stream_rate']:,.0f}",
                         f"{s[c]['stream_rate'] / lim['rate']:.2f}" if lim else "–"] for c in split])
        ratios = []
        if lim and rel:
            ratios.append(f"relay/limit **{rel['rate'] / lim['rate']:.2f}**")
        if lim and mock:
            ratios.append(f"relay→mock/limit **{mock['rate'] / lim['rate']:.2f}**")
        if rel and dbz:
            ratios.append(f"relay/Debezium **{rel['rate'] / dbz['rate']:.2f}** (drain rate), CPU per event "
                          f"relay/Debezium **{rel['cpu100k'] / dbz['cpu100k']:.2f}**")
        if ratios:
            L.append("Ratios: " + "; ".join(ratios) + ".")
            L.append("")
        others = [c for c in ORDER if c != "limit" and s.get(c)]
        if lim and others:
            L.append("Against pg_recvlogical (the limit) of this run: drain rate, CPU per 100k events and peak RSS "
                     "as ratios (contender / limit; the limit's own CPU and RSS, without its walsender's).")
            L.append("")
            L += table(["contender", "rate × limit", "CPU × limit", "peak RSS × limit"],
                       [[LABELS[c], f"{s[c]['rate'] / lim['rate']:.2f}", f"{s[c]['cpu100k'] / lim['cpu100k']:.2f}",
                         f"{s[c]['rss_mib'] / lim['rss_mib']:.1f}"] for c in others])

    if latency:
        L.append("## Commit-to-ack latency")
        L.append("")
        L.append("| contender | rate (target / achieved) | events | p50 ms | p99 ms | max ms | relay's p50 ms | "
                 "relay's p99 ms | visible p50 ms | visible p99 ms | visible max ms | broker GC pauses (max ms) | "
                 "busy before |")
        L.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for c in ORDER:
            x = latency.get(c)
            if not x:
                continue
            v = x.get("visible") or {}
            h = x.get("relay_histogram") or {}
            L.append(f"| {LABELS[c]} | {x['rate_target']:,} / {x['rate_achieved']:,.0f} ev/s for {x['seconds']} s | "
                     f"{x['events']:,} | {x['p50_ms']:.1f} | {x['p99_ms']:.1f} | {x['max_ms']:.1f} | "
                     f"{fmt(h.get('p50_ms'), '.2f')} | {fmt(h.get('p99_ms'), '.2f')} | "
                     f"{fmt(v.get('p50_ms'), '.1f')} | {fmt(v.get('p99_ms'), '.1f')} | {fmt(v.get('max_ms'), '.1f')} | "
                     f"{gc_text(x.get('broker_gc'))} | {pct(x.get('busy_before'))} |")
        L.append("")
        L.append("*broker GC pauses*: the broker's stop-the-world collections during the load, from its GC log "
                 "(the broker runs with Kafka's own JVM defaults: G1, `MaxGCPauseMillis=20`), and the longest.")
        L.append("")
        L.append("p50/p99/max: commit-to-ack (LogAppendTime − `ts_us`); *relay's*: the relay's own "
                 "`outbox_relay_commit_to_ack_seconds` over the load (PostgreSQL's commit time, to the microsecond, "
                 "to the delivery report; quantiles interpolated within its buckets, as Prometheus's "
                 "`histogram_quantile` reads them: 0.25 ms wide up to 1 ms, 0.5 ms up to 2 ms, 1 ms up to 5 ms, then 7.5, 10, "
                 "15 and 20 ms); "
                 "*visible*: received by the read_committed consumer − `ts_us`.")
        L.append("")
        L.append("LogAppendTime has millisecond resolution; `ts_us` is taken at the insert, just before the COMMIT, "
                 "so the figures include the commit itself. The relay runs with its defaults; Debezium's latency run "
                 "uses `poll.interval.ms=10` (its best case; the drains use 100, the default is 500).")
        L.append("")
        by_rate = latency_rates_table(latency, results.get("latency_rates", {}))
        if by_rate:
            L.append("By rate: the relay (its default: what lingers is sent as soon as a sparse stream is read dry) "
                     "against relay-linger (`linger.ms: 5` set, kept as set: every record waits out the linger), "
                     "with the CPU each took per second of load (the broker's includes the visibility consumer's "
                     "fetches).")
            L.append("")
            L += by_rate
            L.append("")

    L += eo_section(summary, latency, results, meta)

    rows = targets(summary, latency)
    if rows:
        L.append("## Targets (issue #5)")
        L.append("")
        L.append("| target | measured | met |")
        L.append("| --- | --- | --- |")
        for t, m, ok in rows:
            L.append(f"| {t} | {m} | {'yes' if ok else '**no**'} |")
        L.append("")

    rows = issue22_targets(summary, latency, results)
    if rows:
        L.append("## Targets (issue 22)")
        L.append("")
        L += table(["target", "measured", "met"], [[t, m, "yes" if ok else "**no**"] for t, m, ok in rows])
        L.append("")

    chk = results.get("checks", {}).get("records")
    if chk:
        L.append("## Same records as Debezium")
        L.append("")
        L.append(f"Sampled {chk['compared']:,} records present in both outputs of the first repetition (matched on the "
                 f"`id` header): {chk['mismatches']} differ in topic (after the per-run prefix), partition, key or "
                 f"value. Per-partition record counts of the two runs are "
                 f"{'identical' if chk.get('partition_counts_equal') else '**different**'}. Headers: the relay adds "
                 f"`source_lsn`; Debezium adds its `__debezium.context.*` headers.")
        ex = chk.get("example")
        if ex:
            L.append("")
            L.append("```")
            for k in ("relay", "debezium"):
                r = ex[k]
                L.append(f"{k}: topic={r['topic']} partition={r['partition']} key={r['key']} headers={r['headers']}")
            L.append(f"value (both): {ex['relay']['value']}")
            L.append("```")
        L.append("")

    prof = os.path.join(out_dir, "PROFILE.md")
    if os.path.exists(prof):
        L.append("## Where the relay's time goes")
        L.append("")
        L.append("See [PROFILE.md](PROFILE.md).")
        L.append("")

    if results.get("knobs"):
        L.extend(knobs_section(results["knobs"]))
    if results.get("backlog"):
        L.extend(backlog_section(results["backlog"]))
    scale = results.get("scale", [])
    if scale:
        L.extend(scale_section(scale))

    L.append("## Every run")
    L.append("")
    L.append("\"read back\" is what the server held after the drain (the relays' topics, queue, stream or receiver; "
             "the run fails below the event count). "
             "\"busy before\" is the share of all cores busy in the 2 s before the run (the harness waits, up to a "
             "limit, for the machine to calm down); \"machine busy\" the share during the run; \"other CPU\" the CPU "
             "seconds used during the run by processes that are neither the contender, its walsender nor the "
             "broker (the harness's polling, PostgreSQL's other processes, and anything else on the machine).")
    L.append("")
    L.append("| workload | rep | position | contender | s | events/s | CPU s | walsender CPU s | RSS MiB | "
             "read back | busy before | machine busy | other CPU s |")
    L.append("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for d in results["drains"]:
        L.append(f"| {d['workload']} | {d['rep']} | {d['position']} | {SHORT[d['contender']]} | {d['seconds']:.2f} | "
                 f"{d['rate']:,.0f} | {d['cpu']:.2f} | {d['walsender_cpu']:.2f} | {d['rss_kib'] / 1024:.1f} | "
                 f"{fmt(d.get('held'))} | {pct(d.get('busy_before'))} | {pct(d.get('machine_busy'))} | "
                 f"{d.get('other_cpu', 0):.2f}"
                 f"{' *noisy*' if is_noisy(d, meta) else ''} |")
    L.append("")
    with open(os.path.join(out_dir, "REPORT.md"), "w") as f:
        f.write("\n".join(L))
    chart(summary, latency, os.path.join(out_dir, "chart.png"), meta, scale)


def walsender_table(s):
    """Issue 22 point 1: what each contender costs its walsender, and the machine's CPU split during its drain."""
    rows = []
    base = s.get("discard")
    for c in ORDER:
        x = s.get(c)
        if not x or x.get("ws_rate") is None:
            continue
        seconds = x["events"] / 100000.0  # the per-100k medians back to the drain's seconds
        rows.append([LABELS[c], f"{x['ws100k'] * seconds:.2f}", pct(x["ws_busy"]), f"{x['ws_rate']:,.0f}",
                     f"{x['ws100k'] / base['ws100k']:.2f}" if base and base["ws100k"] else "–",
                     f"{x['cpu100k'] * seconds:.2f}",
                     fmt(x["broker100k"] * seconds if x["broker100k"] is not None else None, ".2f"),
                     fmt(x["other_s"], ".2f")])
    if not rows:
        return []
    L = ["The walsender's side (medians): its CPU during the drain; its busy share (walsender CPU / drain time, which "
         "is also the drain rate as a share of the walsender's own rate); its own rate (events per walsender CPU "
         "second: the slot's limit when the walsender is busy all the time); its CPU per event against the "
         "do-nothing client's "
         "(bench-drain), and the rest of the machine's CPU split: the contender, the broker (the mock cluster, "
         "node or receiver for those sinks) and everything else.", ""]
    L += table(["contender", "walsender CPU s", "walsender busy = drain / walsender rate", "walsender's own rate ev/s",
                "walsender CPU per event × bench-drain", "contender CPU s", "broker CPU s", "other CPU s"], rows)
    return L


def knobs_section(runs):
    """The knob runs: what each read setting does to the walsender's CPU per event, its busy share and the drain.
    Each setting's ratios to the defaults are taken within a repetition (the defaults' run of the same round, a minute
    apart at most), then their median: a machine whose speed drifts between rounds moves both alike."""
    by = {}
    for r in runs:
        by.setdefault(r["knob"], {})[r["rep"]] = r
    base = by.get("defaults", {})

    def ratio(rs, f):
        return med([f(r) / f(base[rep]) for rep, r in rs.items() if rep in base and f(base[rep])])

    rows = []
    for name, rs in by.items():
        n = next(iter(rs.values()))["events"]
        per100k = 100000.0 / n
        rate = med([r["rate"] for r in rs.values()])
        rows.append([f"`{name}`" if name != "defaults" else
                     "the relay's defaults" + (" (this build)" if "baseline build" in by else ""),
                     f"{rate:,.0f} [{min(r['rate'] for r in rs.values()):,.0f}–"
                     f"{max(r['rate'] for r in rs.values()):,.0f}]",
                     fmt(ratio(rs, lambda r: r["rate"]), ".2f"),
                     f"{med([r['cpu'] * per100k for r in rs.values()]):.2f}",
                     fmt(ratio(rs, lambda r: r["cpu"]), ".2f"),
                     f"{med([r['walsender_cpu'] * per100k for r in rs.values()]):.2f}",
                     fmt(ratio(rs, lambda r: r["walsender_cpu"]), ".2f"),
                     pct(med([r["walsender_cpu"] / r["seconds"] for r in rs.values()])),
                     fmt(med([r["broker_cpu"] * per100k if r.get("broker_cpu") is not None else None
                              for r in rs.values()]), ".2f"),
                     pct(med([r.get("machine_busy") for r in rs.values()]))])
    n = runs[0]["events"]
    L = ["## What the walsender's cost per event depends on", "",
         f"The relay into the mock cluster (its own process) draining {n:,} events at {runs[0].get('per_tx', 1)} per "
         "transaction under one changed setting each (\"baseline build\": another build of the relay, under its "
         "defaults), every setting on its own slot of one load, "
         f"{max(r['rep'] for r in runs)} repetitions in alternating order: read batching "
         "(`source.read_batch_us`, the pause after a round that read the stream dry), the replication socket's "
         "receive buffer (`source.receive_buffer_bytes`, `SO_RCVBUF`) and the standby status interval "
         "(`source.status_interval_ms`). The walsender sends each change as soon as its socket has room, so the "
         "sooner the relay reads, the smaller and the more of its writes, each waking the reader; its busy share "
         "(walsender CPU / drain time) and its CPU per event move together. Figures are medians over the "
         "repetitions; each \"×\" column is the median of the ratios to the defaults' run of the same repetition.",
         ""]
    L += table(["setting", "events/s [min–max]", "drain rate × defaults", "relay CPU s / 100k",
                "relay CPU × defaults", "walsender CPU s / 100k", "walsender CPU per event × defaults",
                "walsender busy", "mock CPU s / 100k", "machine busy"], rows)
    return L


def backlog_section(b):
    """Issue 22 point 4: a backlog written while no relay ran, caught up into Kafka."""
    L = ["## Catching up a backlog", ""]
    mib = b["rss_kib"] / 1024
    L.append(f"{b['events']:,} events ({b['per_tx']} per transaction) written into one database while no relay ran, "
             f"then one relay with the default configuration caught up into Kafka: {b['seconds']:.1f} s, "
             f"{b['rate']:,.0f} events/s, {b['cpu']:.1f} CPU s, peak RSS {mib:.1f} MiB (the default delivery bounds "
             f"aim at 64 MiB: {'within' if mib <= 64 else '**above**'}). Sampled every 0.25 s from the relay's "
             f"metrics.")
    L.append("")
    samples = b["samples"]
    # The catch-up rate in tenths of the events, from the last sample before the first event was published (start-up
    # excluded).
    first = next((i for i, x in enumerate(samples) if x[1] > 0), None)
    rows = []
    if first is not None:
        marks = [b["events"] * k / 10 for k in range(11)]
        at = [samples[max(0, first - 1)][0]]  # the last sample before the first event was published
        for mark in marks[1:]:
            # Linear between the two samples around the mark.
            i = next((i for i, x in enumerate(samples) if x[1] >= mark), len(samples) - 1)
            (t0, p0), (t1, p1) = samples[max(0, i - 1)][:2], samples[i][:2]
            at.append(t1 if p1 <= p0 else t0 + (mark - p0) / (p1 - p0) * (t1 - t0))
        rates = []
        for k in range(10):
            span = at[k + 1] - at[k]
            rates.append(b["events"] / 10 / span if span > 0 else None)
            # The samples inside the tenth, or the first after it when the tenth was shorter than a sample period (not
            # the one taken as the process starts, before its image is loaded).
            inside = [x[3] for x in samples if at[k] <= x[0] <= at[k + 1] and x[3] >= 1024] or \
                [next((x[3] for x in samples if x[0] >= at[k + 1] and x[3] >= 1024), samples[-1][3])]
            rss = max(inside) / 1024
            rows.append([f"{10 * k}–{10 * (k + 1)} %", f"{at[k]:.1f}–{at[k + 1]:.1f}",
                         f"{rates[-1]:,.0f}" if rates[-1] else "–", f"{rss:.1f}"])
        valid = [r for r in rates if r]
        if valid:
            L.append(f"The rate by tenth of the events (the time at which the relay's published count passed each "
                     f"tenth, interpolated between samples): the slowest tenth ran at {min(valid) / max(valid):.2f} × the fastest, the last at "
                     f"{valid[-1] / valid[0]:.2f} × the first.")
            L.append("")
        L += table(["events", "s since start", "events/s", "RSS MiB (max)"], rows)
    prog = b.get("progress", [])
    if prog:
        errs = [p["eta_s"] - p["left_s"] for p in prog]
        gaps = [b2["at"] - a["at"] for a, b2 in zip(prog, prog[1:])]
        L.append(f"The relay's progress lines (`catching up: … MB behind …, … MB/s, ETA … s`): {len(prog)}, every "
                 f"{statistics.median(gaps) if gaps else 0:.1f} s (median); each ETA against the time the relay "
                 f"really took from that line to the end (the confirmed position reaching the backlog's end):")
        L.append("")
        L += table(["line at s", "MB behind", "MB/s", "ETA s", "really left s", "ETA error s"],
                   [[f"{p['at']:.1f}", f"{p['behind_mb']:.1f}", f"{p['mb_s']:.1f}", f"{p['eta_s']}",
                     f"{p['left_s']:.1f}", f"{e:+.1f}"] for p, e in zip(prog, errs)])
    else:
        L.append("The relay logged no progress line (it logs one every 5 s while 16 MB or more behind).")
        L.append("")
    return L


def wakeups(r, events):
    """The relay threads' voluntary context switches per 1,000 events of a scale run ("" for older results)."""
    sw = r.get("relay_switches")
    return f"{sum(v[0] for v in sw.values()) * 1000 / events:.0f}" if sw else ""


def scale_section(scale):
    """Issue 22 point 3: k pipelines in one process, each with its own database, slot and backlog, drained at once."""
    L = ["## Pipelines in one process", ""]
    first = scale[0]
    L.append(f"One relay process with k pipelines (`pipelines:`), each on its own database and slot of the one "
             f"PostgreSQL server, all into the one broker. Each database holds {first['events_each']:,} events "
             f"({first['per_tx']} per transaction) written before the relay starts, so every pipeline drains a "
             f"backlog at once. \"in all\" is k x events over the time until the last slot confirmed its end; "
             f"\"per pipeline\" each pipeline's events over its own time. Walsender CPU is the sum over the k "
             f"walsenders. Every pipeline's events are read back from the broker.")
    L.append("")
    rows = []
    for r in scale:
        per = r["per_pipeline_rates"]
        events = r["pipelines"] * r["events_each"]
        rows.append([str(r["pipelines"]), f"{r['rate']:,.0f}", f"{min(per):,.0f}–{max(per):,.0f}", f"{r['cpu']:.2f}",
                     f"{r['cpu'] * 100000 / events:.2f}", f"{r['rss_kib'] / 1024:.1f}", f"{r['walsender_cpu']:.2f}",
                     f"{r['broker_cpu']:.2f}", f"{r['other_cpu']:.2f}", pct(r["machine_busy"]), wakeups(r, events)])
    L += table(["pipelines", "in all, events/s", "per pipeline, events/s (min–max)", "relay CPU s",
                "relay CPU s per 100k events", "relay RSS MiB", "walsenders CPU s", "broker CPU s", "other CPU s",
                "machine busy", "relay wake-ups per 1,000 events"], rows)
    if any(r.get("relay_switches") for r in scale):
        L.append("Wake-ups are the relay's threads' voluntary context switches (each a thread going to sleep and "
                 "being woken) over the run, from /proc; by thread, per 1,000 events:")
        L.append("")
        names = sorted({t for r in scale for t in r.get("relay_switches", {})})
        L += table(["pipelines"] + [f"`{t}`" for t in names],
                   [[str(r["pipelines"])] + [f"{r.get('relay_switches', {}).get(t, [0])[0] * 1000 / (r['pipelines'] * r['events_each']):.1f}"
                                             for t in names] for r in scale])
    # Where the curve bends: the first k whose aggregate rate gains less than 10% on the one before.
    bend = next((b for a, b in zip(scale, scale[1:]) if b["rate"] < 1.1 * a["rate"]), None)
    if bend:
        L.append(f"The aggregate rate stops growing at {bend['pipelines']} pipelines (less than 10% more than "
                 f"with {scale[scale.index(bend) - 1]['pipelines']}); the machine was {pct(bend['machine_busy'])} "
                 f"busy then, the walsenders taking {bend['walsender_cpu']:.1f} CPU s, the relay "
                 f"{bend['cpu']:.1f} and the broker {bend['broker_cpu']:.1f}. Each walsender decodes the whole WAL of "
                 f"the server (the other databases' loads too, skipped after decoding their headers), so on a server "
                 f"with many busy databases the walsenders' share grows with k.")
    else:
        L.append("The aggregate rate grows by 10% or more at every step measured.")
    L.append("")
    return L


def chart(summary, latency, path, meta, scale=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ws = [w for w in ("w1", "w100") if w in summary]
    if not ws and not scale:
        return
    contenders = [c for c in ORDER if any(c in summary[w] for w in ws)]
    colors = COLORS
    visible = [c for c in ORDER if latency.get(c, {}).get("visible", {}).get("quantiles")]
    base = 2 if ws else 0  # the drain-rate and CPU panels
    ncols = base + (1 if latency else 0) + (1 if visible else 0) + (1 if scale else 0)
    fig, axes = plt.subplots(1, ncols, figsize=(5.2 * ncols, 4.6), squeeze=False)
    axes = axes[0]
    width = 0.8 / max(1, len(contenders))
    for panel, (key, title, unit) in enumerate([("rate", "Drain rate (median, min–max)", "events/s"),
                                                 ("cpu100k", "CPU per 100k events (contender only)", "CPU s")][:base]):
        ax = axes[panel]
        for i, c in enumerate(contenders):
            xs, ys, lo, hi = [], [], [], []
            for j, w in enumerate(ws):
                x = summary[w].get(c)
                if not x:
                    continue
                xs.append(j + (i - (len(contenders) - 1) / 2) * width)
                ys.append(x[key])
                if key == "rate":
                    lo.append(x[key] - x["rate_min"])
                    hi.append(x["rate_max"] - x[key])
            bars = ax.bar(xs, ys, width, label=SHORT[c], color=colors[c],
                          yerr=[lo, hi] if key == "rate" else None, capsize=3)
            for k, (b, y) in enumerate(zip(bars, ys)):
                top = y + (hi[k] if key == "rate" else 0)
                ax.annotate(f"{y:,.0f}" if key == "rate" else f"{y:.2f}", (b.get_x() + b.get_width() / 2, top),
                            ha="center", va="bottom", fontsize=7, rotation=90 if key == "rate" else 0,
                            xytext=(0, 3), textcoords="offset points")
        ax.set_xticks(range(len(ws)))
        ax.set_xticklabels([WORKLOADS[w] for w in ws], fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel(unit)
        ax.margins(y=0.25)
        if panel == 0:
            ax.legend(fontsize=8, loc="upper left")
    if latency:
        ax = axes[base]
        who = [c for c in ORDER if c in latency]
        stats = [("p50_ms", "p50"), ("p99_ms", "p99"), ("max_ms", "max")]
        w2 = 0.8 / len(who)
        for i, c in enumerate(who):
            xs = [k + (i - (len(who) - 1) / 2) * w2 for k in range(len(stats))]
            ys = [latency[c][s] for s, _ in stats]
            bars = ax.bar(xs, ys, w2, label=SHORT[c], color=colors[c])
            for b, y in zip(bars, ys):
                ax.annotate(f"{y:.0f}", (b.get_x() + b.get_width() / 2, y), ha="center", va="bottom", fontsize=7,
                            xytext=(0, 2), textcoords="offset points")
        ax.set_yscale("log")
        ax.set_xticks(range(len(stats)))
        ax.set_xticklabels([l for _, l in stats])
        rate = latency[who[0]]["rate_target"]
        ax.set_title(f"Commit-to-ack latency at {rate:,} ev/s", fontsize=10)
        ax.set_ylabel("ms (log scale)")
        ax.axhline(25, color="#2ca02c", linestyle="--", linewidth=1)
        ax.annotate("25 ms (p99 target)", (-0.45, 24), fontsize=7, color="#2ca02c", ha="left", va="top")
        ax.set_ylim(top=ax.get_ylim()[1] * 3)
        ax.legend(fontsize=8, loc="upper left")
    if visible:
        # The distribution of the visibility latency (read_committed consumer): percentile against ms.
        ax = axes[base + (1 if latency else 0)]
        for c in visible:
            v = latency[c]["visible"]
            qs = v["quantiles"]
            xs = list(qs) + [v["max_ms"]]
            ys = [100 * i / (len(qs) - 1) for i in range(len(qs))] + [100]
            ax.plot(xs, ys, color=colors[c], label=f"{SHORT[c]} (p99 {v['p99_ms']:.0f} ms)", linewidth=1.5)
        lat_eo = latency.get("relay-eo")
        if lat_eo:
            interval = lat_eo.get("transaction_interval_ms") or meta.get("transaction_interval_ms") or 100
            need = interval + TARGETS["eo_visible_slack_ms"]
            ax.axvline(need, color="#2ca02c", linestyle="--", linewidth=1)
            ax.annotate(f"{need:.0f} ms (relay-eo p99 target)", (need, 50), fontsize=7, color="#2ca02c",
                        rotation=90, ha="right", va="center")
        ax.axhline(99, color="#7f7f7f", linestyle=":", linewidth=1)
        # Linear, up to twice the target (or past the highest p99): the tail beyond is in the legend's p99s.
        right = max([latency[c]["visible"]["p99_ms"] * 1.3 for c in visible] +
                    [2 * (need if lat_eo else 100)])
        ax.set_xlim(0, right)
        ax.set_ylim(0, 101)
        ax.set_xlabel("ms from the insert to the read_committed consumer")
        ax.set_ylabel("percentile")
        ax.set_title(f"Visible at read_committed, {latency[visible[0]]['rate_target']:,} ev/s", fontsize=10)
        ax.legend(fontsize=8, loc="lower right")
    if scale:
        ax = axes[-1]
        ks = [r["pipelines"] for r in scale]
        ax.plot(ks, [r["rate"] for r in scale], marker="o", color=COLORS["relay"], label="in all")
        mid = [statistics.median(r["per_pipeline_rates"]) for r in scale]
        ax.errorbar(ks, mid, yerr=[[m - min(r["per_pipeline_rates"]) for m, r in zip(mid, scale)],
                                   [max(r["per_pipeline_rates"]) - m for m, r in zip(mid, scale)]],
                    marker="s", linestyle="--", color="#7f7f7f", capsize=3, label="per pipeline (median, min–max)")
        for r in scale:
            ax.annotate(f"{r['rate']:,.0f}", (r["pipelines"], r["rate"]), fontsize=7, ha="center", va="bottom",
                        xytext=(0, 4), textcoords="offset points")
        ax.set_xscale("log", base=2)
        ax.set_xticks(ks)
        ax.set_xticklabels([str(k) for k in ks])
        ax.set_xlabel("pipelines in one process")
        ax.set_ylabel("events/s")
        ax.set_ylim(bottom=0)
        ax.margins(y=0.2)
        ax.set_title("Pipelines in one process (into Kafka)", fontsize=10)
        ax.legend(fontsize=8, loc="lower left")
    # Wrapped: a run with many options has a command longer than the figure is wide.
    fig.suptitle(textwrap.fill(f"outbox-relay benchmark, {meta.get('date', '')}  ({meta.get('command', '')})",
                               55 * ncols, break_on_hyphens=False), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    with open(os.path.join(d, "results.json")) as f:
        write(json.load(f), d)
