#!/usr/bin/env python3
"""Measures the mix of a realistic PostgreSQL stderr log from the real logs in fixtures/.

The generator of crates/parse/benches/realistic/mod.rs writes the mix printed here (its doc
comment and docs/performance.md quote this script's output). Run from the repository's top:

    python3 crates/parse/benches/realistic/measure_mix.py

Read: the English stderr logs of fixtures/formats/pglog (our captures, not the `edge-` ones),
of fixtures/formats/pglog/prefixes (one capture per log_line_prefix) and pgBadger's reference
logs of users' servers (fixtures/formats/pglog/pgbadger, stderr ones; rds.log is 114 604
lines of a busy server). A record is a line with a severity word (`LOG:  `, `ERROR:  `, ...)
and the TAB lines after it; DETAIL, HINT, STATEMENT and CONTEXT lines are counted as lines of
their own kind, since PostgreSQL writes each with the prefix.
"""
import bz2
import collections
import glob
import gzip
import os
import re
import statistics

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../..")
PG = os.path.join(TOP, "fixtures/formats/pglog")
SEVERITY = re.compile(
    rb"(LOG|ERROR|FATAL|PANIC|WARNING|NOTICE|INFO|DEBUG[1-5]?|DETAIL|HINT|STATEMENT|CONTEXT|QUERY|LOCATION):  "
)
SECONDARY = {b"DETAIL", b"HINT", b"STATEMENT", b"CONTEXT", b"QUERY", b"LOCATION"}


def read(path):
    if path.endswith(".bz2"):
        return bz2.open(path).read()
    if path.endswith(".gz"):
        return gzip.open(path).read()
    return open(path, "rb").read()


def groups():
    ours = [
        p
        for p in sorted(glob.glob(os.path.join(PG, "pg*.log")))
        if not re.search(r"journal|rds|-(de|es|fr|ja|ru|zh_CN)-|fr-c-ctype", p)
    ] + [os.path.join(PG, "pg15-rds-sigkill.log")]
    prefixes = sorted(glob.glob(os.path.join(PG, "prefixes/*.log")))
    badger = [
        os.path.join(PG, "pgbadger", n)
        for n in [
            "begin_end.log",
            "light.postgres.log.bz2",
            "multiline_param.log",
            "pg_rawcsv.log",
            "pg_vacuums.log.gz",
            "postgresql_param_range.log",
            "queryid.log.gz",
            "rds.log.bz2",
            "stmt_type.log",
            "tempfile_only.log.gz",
        ]
    ]
    return [("our captures", ours), ("prefix captures", prefixes), ("pgBadger's users' logs", badger)]


def kind(severity, message):
    if severity in SECONDARY:
        if severity == b"DETAIL" and message.startswith(b"parameters: "):
            return "DETAIL parameters"
        return severity.decode()
    if b"duration: " in message[:40] and b" ms  " in message[:60]:
        return "duration with statement" if b"statement: " in message or b"execute " in message else "duration"
    if message.startswith(b"statement: "):
        return "statement"
    if message.startswith(b"connection received") or message.startswith(b"connection authorized"):
        return "connection"
    if message.startswith(b"disconnection: "):
        return "disconnection"
    if message.startswith(b"checkpoint"):
        return "checkpoint"
    if message.startswith(b"automatic vacuum") or message.startswith(b"automatic analyze"):
        return "autovacuum"
    if message.startswith(b"temporary file: "):
        return "temporary file"
    if severity in (b"ERROR", b"FATAL", b"PANIC", b"WARNING"):
        return severity.decode()
    return "other " + severity.decode()


def measure(paths):
    counts = collections.Counter()
    lines = 0
    bytes_ = 0
    continued = collections.Counter()  # continuation lines per prefixed line
    statement_lengths = []
    error_with_statement = [0, 0]
    attached = collections.Counter()  # (primary kind, secondary kind)
    tab_kinds = collections.Counter()  # kind: how many were followed by TAB lines
    primary = None
    for path in paths:
        data = read(path)
        bytes_ += len(data)
        current = None  # [kind, continuation lines, statement length or None]
        previous_kind = None
        for line in data.split(b"\n"):
            if not line:
                continue
            lines += 1
            if line.startswith(b"\t") or line.startswith(b"        "):
                if current is not None:
                    current[1] += 1
                    if current[2] is not None:
                        current[2] += len(line) + 1
                continue
            m = SEVERITY.search(line)
            if m is None:
                continue
            if current is not None:
                continued[current[1]] += 1
                tab_kinds[current[0]] += current[1] > 0
                if current[2] is not None:
                    statement_lengths.append(current[2])
            severity, message = m.group(1), line[m.end():]
            k = kind(severity, message)
            counts[k] += 1
            if severity in SECONDARY:
                attached[(primary, k)] += 1
            else:
                primary = k
            if k == "ERROR":
                error_with_statement[1] += 1
            if k == "STATEMENT" and previous_kind == "ERROR":
                error_with_statement[0] += 1
            length = None
            if k in ("statement", "duration with statement", "STATEMENT"):
                at = message.find(b"statement: ")
                at = message.find(b": ", message.find(b"execute ")) if at < 0 and b"execute " in message else at
                length = len(message) - (at + 11 if k != "STATEMENT" and at >= 0 else 0)
            current = [k, 0, length]
            previous_kind = k if k not in ("DETAIL", "HINT", "CONTEXT", "DETAIL parameters") else previous_kind
        if current is not None:
            continued[current[1]] += 1
            if current[2] is not None:
                statement_lengths.append(current[2])
    measure.tab_kinds = tab_kinds
    return counts, lines, bytes_, continued, statement_lengths, error_with_statement, attached


def report(name, paths):
    counts, lines, bytes_, continued, lengths, err, attached = measure(paths)
    total = sum(counts.values())
    print(f"## {name}: {len(paths)} files, {bytes_} bytes, {lines} lines, {total} prefixed lines")
    for k, n in counts.most_common():
        print(f"  {k:26} {n:8} {100 * n / total:6.2f} %")
    with_tab = sum(n for c, n in continued.items() if c > 0)
    print(f"  prefixed lines followed by TAB lines: {with_tab} ({100 * with_tab / total:.2f} %)", end="")
    if with_tab:
        tabs = [c for c, n in continued.items() for _ in range(n) if c > 0]
        print(f"; TAB lines each: median {statistics.median(tabs)}, max {max(tabs)}", end="")
    print()
    if lengths:
        q = statistics.quantiles(lengths, n=1000)
        print(
            f"  statement text bytes: {len(lengths)} statements, median {statistics.median(lengths):.0f},"
            f" p90 {q[899]:.0f}, p99 {q[989]:.0f}, p99.9 {q[998]:.0f}, max {max(lengths)}"
        )
    if err[1]:
        print(f"  ERROR lines followed by a STATEMENT line: {err[0]} of {err[1]}")
    print(f"  mean line {bytes_ / lines:.0f} bytes")
    print("  followed by TAB lines:", ", ".join(f"{k} {n} of {counts[k]}" for k, n in measure.tab_kinds.most_common() if n))
    print("  lines of their own after a record:", ", ".join(f"{s} after {p} {n}" for (p, s), n in attached.most_common()))
    return counts, attached


def primary_fractions(counts):
    primary = {k: n for k, n in counts.items() if k.split()[0] not in {s.decode() for s in SECONDARY}}
    total = sum(primary.values())
    return {k: n / total for k, n in primary.items()}


every = []
measured = {}
for name, paths in groups():
    measured[name] = report(name, paths)
    every += paths
report("all", every)
events = measure([p for name, paths in groups()[:2] for p in paths])
busy = primary_fractions(measured["pgBadger's users' logs"][0])
sessions = primary_fractions(events[0])
print("## the generator's records per 10 000 (4/5 of the busy servers' mix, 1/5 of our captures')")
blend = {k: 0.8 * busy.get(k, 0) + 0.2 * sessions.get(k, 0) for k in set(busy) | set(sessions)}
for k, f in sorted(blend.items(), key=lambda kv: -kv[1]):
    print(f"  {k:26} {10000 * f:7.1f}")
