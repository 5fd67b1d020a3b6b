"""The tables of a report, in plain Python: one column spec per table and the rows of a report
as columns (lists). ``pgmortem.to_pandas``, ``pgmortem.to_arrow`` and ``pgmortem.fleet`` build
their frames from these, so the three agree column for column. No third-party import here.

Times become integers (nanoseconds since the Unix epoch, UTC) so that pandas and Arrow both get
exact ``datetime64[ns, UTC]`` / ``timestamp[ns, UTC]`` values, nanoseconds included (kernel
times are printed to the nanosecond)."""

from __future__ import annotations

import calendar
import re
from typing import Literal, Optional, Union

from pgmortem.types import Report

Kind = Literal["str", "int", "float", "bool", "timestamp"]
"""A column's type: ``int`` columns hold ``None`` only when the column is declared nullable."""

Value = Union[str, int, float, bool, None]
Columns = dict[str, list[Value]]


class Column:
    """A column: its name, its kind, whether it may hold nulls, and what it means."""

    __slots__ = ("name", "kind", "nullable", "doc")

    def __init__(self, name: str, kind: Kind, nullable: bool, doc: str) -> None:
        self.name = name
        self.kind: Kind = kind
        self.nullable = nullable
        self.doc = doc


def _c(name: str, kind: Kind, doc: str, nullable: bool = True) -> Column:
    return Column(name, kind, nullable, doc)


FINDINGS = [
    _c("finding", "int", "position in report['findings'] (most severe first)", False),
    _c("id", "str", "rule id (docs/rules.md)", False),
    _c("severity", "str", "critical, warning or info", False),
    _c("title", "str", "one line for a person", False),
    _c("summary", "str", "the finding explained", False),
    _c("recommendation", "str", "what to change, or null"),
    _c("confidence", "float", "0-1", False),
    _c("incident", "int", "index into the incidents table, or null"),
    _c("at", "timestamp", "started_at of that incident, or null"),
    _c("evidence_path", "str", "file of the first evidence line, or null"),
    _c("evidence_line", "int", "line of the first evidence, or null"),
    _c("evidence_count", "int", "evidence lines the finding stands on", False),
]

INCIDENTS = [
    _c("incident", "int", "position in report['incidents'] (oldest first)", False),
    _c(
        "kind",
        "str",
        "oom_kill, crash_restart, postmaster_killed, unclean_restart, recovery_failed, startup_failed, kernel_oom",
        False,
    ),
    _c("cause", "str", "oom_killer, container_oom_killed, disk_full, storage_error, corruption, segfault, ...", False),
    _c("pid", "int", "the process that died: the kernel's victim, else the crash line's pid"),
    _c("process", "str", "the victim's comm, else the process as PostgreSQL named it"),
    _c("started_at", "timestamp", "kill time, else crash time, else restart time"),
    _c("killed_at", "timestamp", "the kernel OOM kill's time"),
    _c("crashed_at", "timestamp", "PostgreSQL's crash line's time"),
    _c("ready_at", "timestamp", "ready to accept connections again"),
    _c("outage_seconds", "float", "crash line to ready"),
    _c("redo_seconds", "float", "WAL redo"),
    _c("wal_replayed_bytes", "int", "redo end LSN minus redo start LSN"),
    _c("clock_skew_seconds", "float", "PostgreSQL crash time minus kernel kill time"),
    _c("signal", "int", "signal that ended the process"),
    _c("exit_code", "int", "exit code, when it exited"),
    _c("query", "str", "the query it ran"),
    _c("anon_rss_kb", "int", "the victim's anonymous RSS at the kill"),
    _c("oom_constraint", "str", "global, memcg, cpuset, memory_policy"),
    _c("memcg_limit_kb", "int", "the memory cgroup limit at the kill"),
    _c("connections_refused", "int", "connections refused while recovering", False),
    _c("sessions_lost", "int", "sessions the log shows were cut"),
    _c("confidence", "float", "0-1: how surely kill and crash are tied", False),
    _c("matched_by", "str", "pid_and_time, pid_only, time_signal_and_name, postmaster_pid"),
    _c("path", "str", "file of the kill line, else of the crash line"),
    _c("line", "int", "line of the kill, else of the crash"),
    _c("still_down", "bool", "no log shows the server ready again after it (outage_seconds is null)", False),
    _c("down_for_seconds", "float", "when still_down: started_at to the bundle's collection, the outage so far"),
]

TIMELINE = [
    _c("at", "timestamp", "UTC time, or null when it could not be placed"),
    _c("uncertainty_seconds", "float", "error bar of at"),
    _c("origin", "str", "kernel or postgres", False),
    _c("kind", "str", "the record's kind (oom_report, terminated_by_signal, ready, ...)", False),
    _c("summary", "str", "one line", False),
    _c("path", "str", "file", False),
    _c("line", "int", "line", False),
]

SOURCES = [
    _c("path", "str", "path relative to the bundle root", False),
    _c("kind", "str", "the source kind (docs/bundle-format.md), unknown or unreadable", False),
    _c("bytes", "int", "bytes read", False),
    _c("lines", "int", "lines read", False),
    _c("records", "int", "records produced", False),
    _c("unrecognized_lines", "int", "lines not understood", False),
    _c("note", "str", "why a file was not used, or only partly"),
    _c("log_line_prefix", "str", "PostgreSQL logs: the prefix the lines were read with"),
    _c("log_line_prefix_from", "str", "PostgreSQL logs: where that prefix came from"),
]

TABLES: dict[str, list[Column]] = {
    "findings": FINDINGS,
    "incidents": INCIDENTS,
    "timeline": TIMELINE,
    "sources": SOURCES,
}
"""Every table of a report, by name, in the order of :class:`pgmortem.Frames`."""

_RFC3339 = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9})\d*)?(?:([Zz])|([+-])(\d\d):(\d\d))\Z"
)


def nanoseconds(text: Optional[str]) -> Optional[int]:
    """Nanoseconds since the Unix epoch of an RFC 3339 time (``2026-11-24T05:29:29.924706954Z``),
    exact to the nanosecond; ``None`` for ``None``. Raises ``ValueError`` for anything else: the
    report's times are always RFC 3339 (docs/report-schema.md)."""
    if text is None:
        return None
    m = _RFC3339.match(text)
    if m is None:
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    if m.group(9):
        offset = int(m.group(10)) * 3600 + int(m.group(11)) * 60
        seconds -= offset if m.group(9) == "+" else -offset
    fraction = int((m.group(7) or "").ljust(9, "0"))
    return seconds * 1_000_000_000 + fraction


def empty(columns: list[Column]) -> Columns:
    """Columns with no rows."""
    return {c.name: [] for c in columns}


def findings(report: Report) -> Columns:
    """One row per finding."""
    out = empty(FINDINGS)
    starts = [nanoseconds(i["started_at"]) for i in report["incidents"]]
    for n, f in enumerate(report["findings"]):
        first = f["evidence"][0] if f["evidence"] else None
        incident = f["incident"]
        at = starts[incident] if incident is not None and 0 <= incident < len(starts) else None
        row: list[Value] = [
            n,
            f["id"],
            f["severity"],
            f["title"],
            f["summary"],
            f["recommendation"],
            f["confidence"],
            incident,
            at,
            first["path"] if first else None,
            first["line"] if first else None,
            len(f["evidence"]),
        ]
        _append(out, FINDINGS, row)
    return out


def incidents(report: Report) -> Columns:
    """One row per incident."""
    out = empty(INCIDENTS)
    for n, i in enumerate(report["incidents"]):
        kill = i["kernel_kill"]
        crash = i["postgres_crash"]
        recovery = i["recovery"]
        memcg = kill["memcg"] if kill else None
        row: list[Value] = [
            n,
            i["kind"],
            i["cause"],
            kill["pid"] if kill else crash["pid"] if crash else None,
            kill["comm"] if kill else crash["process"] if crash else None,
            nanoseconds(i["started_at"]),
            nanoseconds(kill["at"]) if kill else None,
            nanoseconds(crash["at"]) if crash else None,
            nanoseconds(recovery["ready_at"]) if recovery else None,
            i["outage_seconds"],
            i["redo_seconds"],
            i["wal_replayed_bytes"],
            i["clock_skew_seconds"],
            crash["signal"] if crash else None,
            crash["exit_code"] if crash else None,
            crash["query"] if crash else None,
            kill["anon_rss_kb"] if kill else None,
            kill["constraint"] if kill else None,
            memcg["limit_kb"] if memcg else None,
            i["connections_refused"],
            i["sessions_lost"],
            i["confidence"],
            i["matched_by"],
            kill["path"] if kill else crash["path"] if crash else None,
            kill["line"] if kill else crash["line"] if crash else None,
            i["still_down"],
            i["down_for_seconds"],
        ]
        _append(out, INCIDENTS, row)
    return out


def timeline(report: Report) -> Columns:
    """One row per timeline event, oldest first (events with no time last)."""
    out = empty(TIMELINE)
    for e in report["timeline"]:
        row: list[Value] = [
            nanoseconds(e["at"]),
            e["uncertainty_seconds"],
            e["origin"],
            e["kind"],
            e["summary"],
            e["path"],
            e["line"],
        ]
        _append(out, TIMELINE, row)
    return out


def sources(report: Report) -> Columns:
    """One row per file of the bundle."""
    out = empty(SOURCES)
    for s in report["sources"]:
        row: list[Value] = [
            s["path"],
            s["kind"],
            s["bytes"],
            s["lines"],
            s["records"],
            s["unrecognized_lines"],
            s["note"],
            s.get("log_line_prefix"),
            s.get("log_line_prefix_from"),
        ]
        _append(out, SOURCES, row)
    return out


BUILDERS = {"findings": findings, "incidents": incidents, "timeline": timeline, "sources": sources}


def _append(out: Columns, columns: list[Column], row: list[Value]) -> None:
    assert len(row) == len(columns)
    for column, value in zip(columns, row):
        out[column.name].append(value)
