#!/bin/sh
# shellcheck disable=SC2016 # awk and sh -c programs are single-quoted on purpose
# pgmortem-collect.sh — collect a pgmortem support bundle on a PostgreSQL host.
#
# Usage:
#   sh pgmortem-collect.sh [-o OUTDIR|-] [-D PGDATA] [-h PGHOST] [-p PGPORT] [-U USER]
#                          [--pid PID] [--bindir DIR] [--log FILE] [--stderr FILE]
#                          [--log-bytes N] [--perf SECONDS] [--max-time SECONDS] [--dry-run]
#                          [--help]
#
#   -o OUTDIR       where the bundle is written (default: $TMPDIR or /tmp); `-o -` writes the
#                   archive to stdout (for `kubectl exec -i POD -- sh -s -- -o - < THIS > B.tgz`)
#   -D PGDATA       the data directory (default: the running postmaster's, else the one
#                   directory found under /var/lib/postgresql/*/* or /var/lib/pgsql)
#   -h PGHOST       host or socket directory for psql (default: from postmaster.pid)
#   -p PGPORT       port for psql (default: from postmaster.pid); without -D or --pid, among
#                   several postmasters the one listening on it
#   -U USER         database role for psql (default: as root, the data directory's owner
#                   through peer authentication; else psql's own default)
#   --pid PID       the postmaster to collect (default: the one -D's postmaster.pid names,
#                   else the one running in -D, else the only one running); other clusters'
#                   postmasters are named in the manifest, their processes never collected
#   --bindir DIR    the server's binaries, for `postgres -C` when the server cannot be asked
#                   (default: from postmaster.opts, else the packaging's usual places)
#   --log FILE      the server log (default: current_logfiles, log_directory, the
#                   postmaster's standard error, /var/log/postgresql, PGDATA/log, PGDATA/pg_log,
#                   the unit's journal); its earlier files are collected too
#   --stderr FILE   the postmaster's standard error (`pg_ctl -l FILE`) of a server that is
#                   down (default: a running postmaster's, the unit's, Debian's startup log)
#   --log-bytes N   bytes of the server log to keep, from its end, and again of its earlier
#                   files together (default 20 MiB)
#   --perf SECONDS  also record `perf record -F 99 -a -g` for SECONDS (default: off)
#   --max-time S    stop collecting after S seconds; what is left is recorded as skipped (600)
#   --dry-run       print what would be collected, collect nothing
#
# Prints progress on stderr and the bundle's path, last, on stdout:
#   OUTDIR/pgmortem-<host>-<utc>.tar.gz
#
# Order: kernel log, /proc and /sys state, the postmaster's processes, cgroup and mounts as it
# sees them (/proc/PID/root, /proc/PID/mountinfo: right from the host for a containerised
# server), the configuration files, the server log, and only then one psql session (read-only,
# statement and lock timeouts, a superuser's reserved slot when run as root): when every slot
# is taken, the log is already collected and at most one refused attempt is added to it. When
# the server cannot be asked, the key settings come from the server binary (`postgres -C` as
# the data directory's owner), and postgresql.conf is always collected with its includes and
# postgresql.auto.conf resolved.
# What it never reads: .pgpass, the environment of any process except PG_OOM_ADJUST_FILE and
# PG_OOM_ADJUST_VALUE of the postmaster, pg_hba.conf/pg_ident.conf contents (only a count of
# rules per method), keys, table data. Connection strings, commands and passwords in settings,
# configuration files and the server log are masked. Passwords are never passed on the command
# line; psql never prompts (-w): use peer auth or a .pgpass.
#
# Every step runs under timeout, its output capped in bytes, the collector and all it runs at
# the lowest CPU and I/O priority; a missing tool, a refusal or a failing step is recorded in
# manifest.json (exit status, duration, size, note), never fatal. Free space is checked before
# the steps (each one once the disk is short of room); the whole run is capped in time.
# POSIX sh: runs under dash, bash and busybox ash, also read from stdin (`sh -s`).

set -u
umask 077
LC_ALL=C
LANG=C
export LC_ALL LANG

COLLECTOR_VERSION=0.2.0
FORMAT_VERSION=1
CAP=$((8 * 1024 * 1024))        # default cap per item, bytes
KERNEL_LOG_BYTES=$((5 * 1024 * 1024))
PERF_SCRIPT_BYTES=$((200 * 1024 * 1024))
MAX_PROCS=10000                 # processes of the postmaster's tree whose /proc files are read
SMAPS_MAX=500                   # of which smaps_rollup (the postmaster and the largest)
MIN_FREE_KB=$((1024 * 1024))    # disk guard: at least 1 GiB and 5% free for heavy items
MIN_ITEM_FREE_KB=16             # below this, an item is not even tried

OUTDIR=${TMPDIR:-/tmp}
TO_STDOUT=0
PGDATA_DIR=
PG_HOST=
PG_PORT=
PG_USER=
PM_ARG=
BINDIR_ARG=
PERF_SECONDS=0
LOG_BYTES=$((20 * 1024 * 1024))
LOGFILE_ARG=
STDERR_ARG=
MAX_TIME=600
DRY_RUN=0
ARGUMENTS=$*

say() { printf 'pgmortem-collect: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }

usage() {
    { sed -n '3,/^$/s/^# \{0,1\}//p' "$0" 2>/dev/null | grep . ; } ||
        echo "usage: sh pgmortem-collect.sh [-o OUTDIR|-] [-D PGDATA] [-h PGHOST] [-p PGPORT] [-U USER] [--pid PID] [--bindir DIR] [--log FILE] [--stderr FILE] [--log-bytes N] [--perf SECONDS] [--max-time SECONDS] [--dry-run]"
}

is_number() {
    case $1 in '' | *[!0-9]*) return 1 ;; *) return 0 ;; esac
}

while [ $# -gt 0 ]; do
    case $1 in
    -o) [ $# -ge 2 ] || die "-o needs a directory"; OUTDIR=$2; shift 2 ;;
    -D) [ $# -ge 2 ] || die "-D needs a directory"; PGDATA_DIR=$2; shift 2 ;;
    -h) [ $# -ge 2 ] || die "-h needs a host"; PG_HOST=$2; shift 2 ;;
    -p) [ $# -ge 2 ] || die "-p needs a port"; PG_PORT=$2; shift 2 ;;
    -U) [ $# -ge 2 ] || die "-U needs a user"; PG_USER=$2; shift 2 ;;
    --pid) is_number "${2:-}" || die "--pid needs a process id"; PM_ARG=$2; shift 2 ;;
    --bindir) [ $# -ge 2 ] || die "--bindir needs a directory"; BINDIR_ARG=$2; shift 2 ;;
    --perf) is_number "${2:-}" || die "--perf needs seconds"; PERF_SECONDS=$2; shift 2 ;;
    --log-bytes) is_number "${2:-}" || die "--log-bytes needs a number"; LOG_BYTES=$2; shift 2 ;;
    --log) [ $# -ge 2 ] || die "--log needs a file"; LOGFILE_ARG=$2; shift 2 ;;
    --stderr) [ $# -ge 2 ] || die "--stderr needs a file"; STDERR_ARG=$2; shift 2 ;;
    --max-time)
        if ! is_number "${2:-}" || [ "$2" -lt 1 ]; then die "--max-time needs seconds (at least 1)"; fi
        MAX_TIME=$2
        shift 2
        ;;
    --dry-run) DRY_RUN=1; shift ;;
    --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[ -n "$PG_PORT" ] && ! is_number "$PG_PORT" && die "-p needs a number"
if [ "$OUTDIR" = - ]; then
    TO_STDOUT=1
    OUTDIR=${TMPDIR:-/tmp}
    [ -t 1 ] && [ "$DRY_RUN" = 0 ] && die "-o - writes the archive to stdout: redirect it to a file"
fi

have() { command -v "$1" >/dev/null 2>&1; }

# now_ms: NOW_MS, milliseconds since boot, read from /proc/uptime by the shell itself (no
# process: a step's entry and the time cap are checked thousands of times on a busy host), else
# from date.
now_ms() {
    n_up=
    { read -r n_up _ </proc/uptime; } 2>/dev/null
    case $n_up in
    *.[0-9][0-9]) NOW_MS=$((${n_up%.*} * 1000 + (1${n_up#*.} - 100) * 10)) ;;
    *)
        n_t=$(date -u +%s%N 2>/dev/null)
        case $n_t in
        *[!0-9]* | '') n_t=$(date -u +%s); NOW_MS=$((n_t * 1000)) ;;
        *) NOW_MS=$((n_t / 1000000)) ;;
        esac
        ;;
    esac
}

utc_now() {
    u_t=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ 2>/dev/null)
    case $u_t in
    *N*) date -u +%Y-%m-%dT%H:%M:%SZ ;;
    *) echo "$u_t" ;;
    esac
}

now_ms
DEADLINE_MS=$((NOW_MS + MAX_TIME * 1000))
MY_UID=$(id -u)

# ---------------------------------------------------------------------------------------------
# Output directory and disk guard

[ -d "$OUTDIR" ] || die "output directory $OUTDIR does not exist"
HOST=$(uname -n 2>/dev/null | tr -cd 'A-Za-z0-9.-' | cut -c1-63)
[ -n "$HOST" ] || HOST=host
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
NAME=pgmortem-$HOST-$STAMP
# Manifest entries are kept in memory: on a full disk they must survive to the end.
ENTRIES=
if [ "$DRY_RUN" = 1 ]; then
    WORK=
    D=/nonexistent
else
    WORK=$(mktemp -d "$OUTDIR/.pgmortem-collect.XXXXXX") || die "cannot create a directory in $OUTDIR"
    D=$WORK/$NAME
    mkdir "$D" || die "cannot create $D"
    trap 'rm -rf "$WORK"' EXIT
    trap 'rm -rf "$WORK"; exit 130' INT TERM
fi

# free_kb: the output file system's size and free space in KB ("SIZE AVAIL"), empty if unknown.
free_kb() {
    df -Pk "$OUTDIR" 2>/dev/null | awk 'NR == 2 { print $2, $4 }'
}

# free_ok: true when the output file system has at least max(1 GiB, 5%) free; sets AVAIL_KB.
AVAIL_KB=
free_ok() {
    f_line=$(free_kb)
    f_size=${f_line% *}
    f_avail=${f_line#* }
    is_number "$f_size" && is_number "$f_avail" || return 0
    AVAIL_KB=$f_avail
    f_need=$((f_size / 20))
    [ "$f_need" -lt "$MIN_FREE_KB" ] && f_need=$MIN_FREE_KB
    [ "$f_avail" -ge "$f_need" ]
}

# low_disk: heavy items are skipped from now on, and every item is capped to an eighth of what
# is free, so the small ones still fit.
LOW_DISK=0
low_disk() {
    if [ "$LOW_DISK" = 0 ]; then
        say "less than max(1 GiB, 5%) free in $OUTDIR: heavy items (perf, server log) are skipped"
    fi
    LOW_DISK=1
    if is_number "$AVAIL_KB"; then
        l_cap=$((AVAIL_KB * 1024 / 8))
        [ "$l_cap" -lt 4096 ] && l_cap=4096
        [ "$CAP" -gt "$l_cap" ] && CAP=$l_cap
        [ "$KERNEL_LOG_BYTES" -gt "$l_cap" ] && KERNEL_LOG_BYTES=$l_cap
    fi
}
[ "$DRY_RUN" = 1 ] || free_ok || low_disk

# disk_check: free_ok (and low_disk when it fails) before an item: every time once the disk is
# short of room, else after 64 MiB written or 8 s since the last look (df is two processes: on a
# disk with room, every item need not pay them).
WRITTEN=0
DF_AT_MS=$NOW_MS
disk_check() {
    if [ "$LOW_DISK" = 0 ] && [ "$WRITTEN" -lt $((64 * 1024 * 1024)) ] && [ $((NOW_MS - DF_AT_MS)) -lt 8000 ]; then
        return 0
    fi
    free_ok || low_disk
    WRITTEN=0
    DF_AT_MS=$NOW_MS
}

# ---------------------------------------------------------------------------------------------
# Running one item

json_escape() {
    printf '%s' "$1" | tr -d '\000-\037\200-\377' | sed 's/\\/\\\\/g; s/"/\\"/g'
}

# jesc VALUE: VALUE as a JSON string's contents, in J; without a process for the common case of
# nothing to escape (a step's entry is written with three of these: forks add up on a busy host).
jesc() {
    case $1 in
    *[\\\"]* | *[![:print:]]*) J=$(json_escape "$1") ;;
    *) J=$1 ;;
    esac
}

# record PATH KIND COMMAND STATUS DURATION_MS BYTES CAPPED NOTE
record() {
    if [ "$DRY_RUN" = 1 ]; then
        printf '%-44s %-20s %s%s\n' "$1" "$2" "$3" "${8:+  ($8)}"
        return 0
    fi
    jesc "$1"
    r_p=$J
    jesc "$3"
    r_c=$J
    jesc "$8"
    ENTRIES="$ENTRIES{\"path\":\"$r_p\",\"kind\":\"$2\",\"command\":\"$r_c\",\"status\":$4,\"duration_ms\":$5,\"bytes\":$6,\"capped\":$7,\"note\":\"$J\"}
"
}

# amend PATH NOTE: the entry of PATH says NOTE (first) and 0 bytes; its file is removed.
amend() {
    rm -f "$D/$1"
    ENTRIES="$(printf '%s' "$ENTRIES" | awk -v p="$1" -v n="$(json_escape "$2")" '
        index($0, "{\"path\":\"" p "\",") == 1 {
            sub(/"bytes":[0-9]*/, "\"bytes\":0"); sub(/"capped":true/, "\"capped\":false")
            if (!sub(/"note":""/, "\"note\":\"" n "\"")) sub(/"note":"/, "\"note\":\"" n "; ")
        }
        { print }')
"
}

# The collector and everything it runs at the lowest CPU and I/O priority (inherited by every
# process it starts: no nice or ionice per step): on a database host it yields to the server.
HAVE_TIMEOUT=0
have renice && renice -n 19 -p $$ >/dev/null 2>&1
have ionice && ionice -c3 -p $$ >/dev/null 2>&1
have timeout && HAVE_TIMEOUT=1
[ "$HAVE_TIMEOUT" = 1 ] || say "no timeout command: steps run without a time limit"

# wrap SECONDS CMD [ARGS...]: the command under timeout when it exists, its stdin closed (the
# script itself may be on stdin: `sh -s`).
wrap() {
    w_secs=$1
    shift
    [ "$HAVE_TIMEOUT" = 1 ] && set -- timeout -k 5 "$w_secs" "$@"
    "$@" </dev/null
}

# budget SECONDS: BUDGET, the seconds a step may take (SECONDS, or what is left of --max-time);
# false when the time is up.
budget() {
    now_ms
    BUDGET=$(((DEADLINE_MS - NOW_MS) / 1000))
    [ "$BUDGET" -gt 0 ] || return 1
    [ "$BUDGET" -lt "$1" ] || BUDGET=$1
}

# preflight PATH KIND COMMAND: false (and recorded) when the step must not run: out of time, or
# no room left on the output file system. Also lowers the caps when the disk is getting full.
preflight() {
    if ! budget 1; then
        record "$1" "$2" "$3" 1 0 0 false "skipped: the collector's time cap (--max-time $MAX_TIME s) was reached"
        return 1
    fi
    disk_check
    if is_number "$AVAIL_KB" && [ "$AVAIL_KB" -lt "$MIN_ITEM_FREE_KB" ]; then
        record "$1" "$2" "$3" 1 0 0 false "skipped: $AVAIL_KB KB free in $OUTDIR: no space left on device"
        return 1
    fi
    return 0
}

# run PATH KIND SECONDS CAP CMD [ARGS...]: CMD's stdout into the bundle at PATH, capped to CAP
# bytes (negative CAP keeps the last -CAP bytes instead of the first); stderr's first line
# goes to the manifest's note. The manifest shows DESCRIBE as the command when it is set (a
# program too long to be read there), and run clears it.
DESCRIBE=
run() {
    r_path=$1 r_kind=$2 r_secs=$3 r_cap=$4
    shift 4
    r_cmd=${DESCRIBE:-$*}
    DESCRIBE=
    if ! have "$1"; then
        record "$r_path" "$r_kind" "$r_cmd" 127 0 0 false "tool missing: $1"
        return 0
    fi
    if [ "$DRY_RUN" = 1 ]; then
        record "$r_path" "$r_kind" "$r_cmd" 0 0 0 false ""
        return 0
    fi
    preflight "$r_path" "$r_kind" "$r_cmd" || return 0
    budget "$r_secs" || BUDGET=1
    r_secs=$BUDGET
    r_out=$D/$r_path
    [ -d "${r_out%/*}" ] || mkdir -p "${r_out%/*}"
    now_ms; r_start=$NOW_MS
    case $r_cap in -*) r_keep="tail" ;; *) r_keep="head" ;; esac
    # The command's status and the writer's come back on fd 3 (one short write each, so they
    # never interleave), never through a file: on a full disk nothing more can be written, and
    # the manifest must still say what happened.
    r_st=$({
        {
            wrap "$r_secs" "$@" 2>"$WORK/err" 3>&-
            echo "rc=$?" >&3
        } | {
            "$r_keep" -c "${r_cap#-}" >"$r_out" 2>/dev/null
            echo "w=$?" >&3
        }
    } 3>&1)
    now_ms; r_end=$NOW_MS
    r_rc=''
    r_w=''
    for r_l in $r_st; do
        case $r_l in
        rc=*) [ -z "$r_rc" ] && r_rc=${r_l#rc=} ;;
        w=*) [ -z "$r_w" ] && r_w=${r_l#w=} ;;
        esac
    done
    is_number "$r_rc" || r_rc=255
    r_bytes=$(size_of "$r_out")
    WRITTEN=$((WRITTEN + r_bytes))
    r_capped=false
    [ "$r_bytes" -ge "${r_cap#-}" ] && r_capped=true
    r_note=
    [ -s "$WORK/err" ] && r_note=$(head -c 300 "$WORK/err" 2>/dev/null | head -n 1)
    [ "$r_rc" = 124 ] && r_note="timed out after ${r_secs}s; $r_note"
    [ "$r_rc" != 0 ] && [ -z "$r_note" ] && r_note="exited with status $r_rc, nothing on stderr"
    if [ "$r_w" != 0 ]; then
        # Why, from the free space left (the writer's own message could interleave with the
        # status lines, so it is not kept).
        r_werr="$r_keep exited with status $r_w"
        r_free=$(df -Pk "$OUTDIR" 2>/dev/null | awk 'NR == 2 { print $4 }')
        if is_number "$r_free"; then
            r_werr="$r_werr, $r_free KB free"
            [ "$r_free" -lt 16 ] && r_werr="$r_werr: no space left on device"
        fi
        rm -f "$r_out"
        r_note="not kept: writing it to $OUTDIR failed ($r_werr) after $r_bytes bytes${r_note:+; $r_note}"
        r_bytes=0
        r_capped=false
        say "$r_path: $r_werr"
    fi
    record "$r_path" "$r_kind" "$r_cmd" "$r_rc" $((r_end - r_start)) "$r_bytes" "$r_capped" "$r_note"
    if [ "$r_bytes" -eq 0 ] && [ "$r_rc" != 0 ]; then
        rm -f "$r_out"
    fi
    return 0
}

# size_of FILE: its size in bytes, 0 when it does not exist.
size_of() {
    s_n=$({ wc -c <"$1"; } 2>/dev/null)
    s_n=${s_n##* }
    is_number "$s_n" && echo "$s_n" || echo 0
}

# why_not PATH: why a file cannot be read by us: no such file, or permission denied.
why_not() {
    if [ -e "$1" ]; then
        echo "permission denied to uid $MY_UID"
    elif [ -d "${1%/*}" ] && [ ! -x "${1%/*}" ]; then
        echo "permission denied to uid $MY_UID: cannot enter ${1%/*}"
    elif [ -d "${1%/*}" ]; then
        echo "no such file"
    else
        echo "no such file, or a directory uid $MY_UID cannot enter"
    fi
}

# read_batch LIST NOTE: the files of LIST (`KIND<TAB>PATH<TAB>SOURCE` lines) copied into the
# bundle by one awk under one timeout, each with its manifest entry (NOTE and the pass's time in
# its note; a file's own time is not measured), in LIST's order. awk's getline fails softly, so a process gone
# meanwhile is one unreadable file, not a failed step; when the pass itself stops (timed out
# on a process stuck in the kernel, the disk full), the files it did not reach are named.
BATCH_AWK='
function esc(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return s }
BEGIN {
    while ((getline item < list) > 0) {
        split(item, f, "\t")
        out = dir "/" f[2]
        if (room >= 0 && written >= room) {
            printf "{\"path\":\"%s\",\"kind\":\"%s\",\"command\":\"cat %s\",\"status\":1,\"duration_ms\":0,\"bytes\":0,\"capped\":false,\"note\":\"skipped: low disk space\"}\n", esc(f[2]), f[1], esc(f[3])
            continue
        }
        n = 0; bytes = 0
        while ((r = (getline line < f[3])) > 0) { print line > out; bytes += length(line) + 1; n++ }
        written += bytes
        close(f[3])
        if (n == 0 && r == 0) printf "" > out
        if (n > 0 || r == 0) close(out)
        if (n > 0 || r == 0)
            printf "{\"path\":\"%s\",\"kind\":\"%s\",\"command\":\"cat %s\",\"status\":0,\"duration_ms\":0,\"bytes\":%d,\"capped\":false,\"note\":\"%s\"}\n", esc(f[2]), f[1], esc(f[3]), bytes, esc(note)
        else
            printf "{\"path\":\"%s\",\"kind\":\"%s\",\"command\":\"cat %s\",\"status\":1,\"duration_ms\":0,\"bytes\":0,\"capped\":false,\"note\":\"not readable: %s (%s)\"}\n", esc(f[2]), f[1], esc(f[3]), esc(f[3]), "gone, or permission denied to uid " uid
    }
}'
read_batch() {
    b_list=$1 b_note=$2
    [ -s "$b_list" ] || return 0
    preflight "$(head -n 1 "$b_list" | cut -f 2)" reference "awk over the files of $b_list" || return 0
    now_ms; b_start=$NOW_MS
    budget 60 || BUDGET=1
    b_secs=$BUDGET
    # On a disk short of room (low_disk), the pass writes at most an eighth of what is free, as
    # a single item may; the files past that are recorded as skipped.
    b_room=-1
    [ "$LOW_DISK" = 1 ] && is_number "$AVAIL_KB" && b_room=$((AVAIL_KB * 1024 / 8))
    wrap "$b_secs" awk -v list="$b_list" -v dir="$D" -v uid="$MY_UID" -v room="$b_room" -v note="@@NOTE@@" \
        "$BATCH_AWK" >"$WORK/batch-entries" 2>"$WORK/batch-err"
    b_rc=$?
    now_ms; b_end=$NOW_MS
    b_done=$(wc -l <"$WORK/batch-entries")
    b_done=${b_done##* }
    jesc "$b_note, $((b_end - b_start)) ms"
    [ "$b_done" -gt 0 ] && ENTRIES="$ENTRIES$(sed "s/@@NOTE@@/$J/" "$WORK/batch-entries")
"
    if [ "$b_rc" != 0 ]; then
        b_why=$(head -c 200 "$WORK/batch-err" | head -n 1)
        [ "$b_rc" = 124 ] && b_why="timed out after ${b_secs}s"
        say "reading $b_note stopped: ${b_why:-status $b_rc}"
        # The file it was writing is incomplete.
        b_cut=$(tail -n +"$((b_done + 1))" "$b_list" | head -n 1 | cut -f 2)
        [ -n "$b_cut" ] && rm -f "$D/$b_cut"
        jesc "${b_why:-exited with status $b_rc}"
        ENTRIES="$ENTRIES$(tail -n +"$((b_done + 1))" "$b_list" | awk -F'\t' -v why="$J" '
            { printf "{\"path\":\"%s\",\"kind\":\"%s\",\"command\":\"cat %s\",\"status\":1,\"duration_ms\":0,\"bytes\":0,\"capped\":false,\"note\":\"not read: the pass stopped (%s)\"}\n", $2, $1, $3, why }')
"
    fi
}

# copy PATH KIND SOURCE: one small file (a /proc, /sys or /etc file), queued for copy_flush's
# one pass (a file that cannot be read is recorded at once, with the reason).
copy() {
    if [ "$DRY_RUN" = 1 ]; then
        record "$1" "$2" "cat $3" 0 0 0 false ""
    elif [ -r "$3" ]; then
        [ -d "$D/${1%/*}" ] || mkdir -p "$D/${1%/*}"
        printf '%s\t%s\t%s\n' "$2" "$1" "$3" >>"$WORK/copy-list"
    else
        record "$1" "$2" "cat $3" 1 0 0 false "not readable: $3 ($(why_not "$3"))"
    fi
}

# copy_flush: the files copy queued, read in one pass.
copy_flush() {
    [ "$DRY_RUN" = 1 ] && return 0
    [ -s "$WORK/copy-list" ] || return 0
    c_n=$(wc -l <"$WORK/copy-list")
    read_batch "$WORK/copy-list" "one pass over ${c_n##* } small files"
    : >"$WORK/copy-list"
}

# as_owner USER CMD [ARGS...]: CMD as USER when root and USER is another user, else as is.
as_owner() {
    a_user=$1
    shift
    if [ "$MY_UID" = 0 ] && [ -n "$a_user" ] && [ "$a_user" != root ]; then
        if have runuser; then
            runuser -u "$a_user" -- "$@"
        elif have setpriv && a_uid=$(id -u "$a_user" 2>/dev/null) && a_gid=$(id -g "$a_user" 2>/dev/null); then
            setpriv --reuid="$a_uid" --regid="$a_gid" --init-groups -- "$@"
        else
            # su runs a shell: the command and its arguments are passed as positional parameters.
            su -s /bin/sh "$a_user" -c '"$0" "$@"' -- "$@"
        fi
    else
        "$@"
    fi
}

# owner_run USER SECONDS CMD [ARGS...]: CMD as USER (as_owner) under timeout, its stdin
# left to the caller.
owner_run() {
    o_user=$1 o_secs=$2
    shift 2
    [ "$HAVE_TIMEOUT" = 1 ] && set -- timeout -k 5 "$o_secs" "$@"
    as_owner "$o_user" "$@"
}

if [ "$DRY_RUN" = 1 ]; then say "dry run: what would be collected"; else say "collecting into $D"; fi
STARTED=$(utc_now)

# ---------------------------------------------------------------------------------------------
# Clock: the three readings back to back, so kernel monotonic times map to UTC.

[ "$DRY_RUN" = 1 ] || mkdir -p "$D/clock"
now_ms; c_start=$NOW_MS
c_up=$(cat /proc/uptime 2>/dev/null)
c_now=$(utc_now)
c_bt=$(grep '^btime ' /proc/stat 2>/dev/null)
now_ms; c_end=$NOW_MS
for c_item in uptime:/proc/uptime date:'date -u +%Y-%m-%dT%H:%M:%S.%NZ' btime:'grep btime /proc/stat'; do
    c_kind=${c_item%%:*}
    case $c_kind in uptime) c_val=$c_up ;; date) c_val=$c_now ;; *) c_val=$c_bt ;; esac
    c_note=
    if [ "$DRY_RUN" = 0 ] && ! printf '%s\n' "$c_val" >"$D/clock/$c_kind.txt" 2>/dev/null; then
        rm -f "$D/clock/$c_kind.txt"
        c_note="not kept: writing it to $OUTDIR failed; the reading was: $c_val"
    fi
    c_bytes=$(size_of "$D/clock/$c_kind.txt")
    record "clock/$c_kind.txt" "$c_kind" "${c_item#*:}" 0 $((c_end - c_start)) "$c_bytes" false "$c_note"
done

# ---------------------------------------------------------------------------------------------
# Identity

run identity/uname.txt uname 10 "$CAP" uname -a
copy identity/os-release.txt os_release /etc/os-release
copy identity/proc-version.txt reference /proc/version
copy identity/cmdline.txt reference /proc/cmdline
run identity/id.txt reference 10 "$CAP" id
run identity/virt.txt virtualization 10 "$CAP" systemd-detect-virt
run identity/dmi.txt reference 10 "$CAP" sh -c 'grep -H . /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name 2>/dev/null'

# ---------------------------------------------------------------------------------------------
# Kernel log: raw (monotonic stamps) and -T (wall clock); when dmesg is closed (not root and
# kernel.dmesg_restrict=1), the journal, then the syslog files. Each refusal is recorded.

# has_entries FILE: the file holds a line that is not one of journalctl's `-- ... --` notes.
has_entries() {
    [ -s "$1" ] && grep -qv '^-- ' "$1" 2>/dev/null
}

run kernel/dmesg.txt kernel_log 60 "-$KERNEL_LOG_BYTES" dmesg
run kernel/dmesg-T.txt kernel_log 60 "-$KERNEL_LOG_BYTES" dmesg -T
if [ "$DRY_RUN" = 1 ] || [ ! -s "$D/kernel/dmesg.txt" ]; then
    run kernel/journal-k.txt kernel_log 60 "-$KERNEL_LOG_BYTES" \
        journalctl -k -o short-precise --no-pager --since=-3d
    if [ "$DRY_RUN" = 0 ] && [ -e "$D/kernel/journal-k.txt" ] && ! has_entries "$D/kernel/journal-k.txt"; then
        amend kernel/journal-k.txt "no entries: uid $MY_UID sees no kernel messages in the journal (not root, not in the adm or systemd-journal group)"
    fi
    if [ "$DRY_RUN" = 1 ] || [ ! -s "$D/kernel/journal-k.txt" ]; then
        # Kernel lines only (`HOST kernel: ...`): the other programs' lines are not ours to take.
        for k_src in /var/log/kern.log /var/log/messages /var/log/syslog; do
            k_name=${k_src##*/}
            case $k_name in *.log) ;; *) k_name=$k_name.txt ;; esac
            if [ ! -e "$k_src" ]; then
                continue
            elif [ ! -r "$k_src" ]; then
                record "kernel/$k_name" kernel_log "grep ' kernel: ' $k_src" 1 0 0 false \
                    "not readable: $k_src (permission denied to uid $MY_UID; members of adm can read it)"
                continue
            fi
            run "kernel/$k_name" kernel_log 60 "-$KERNEL_LOG_BYTES" \
                sh -c 'tail -c 268435456 "$1" | grep -a " kernel: "' sh "$k_src"
            [ "$DRY_RUN" = 0 ] && [ -s "$D/kernel/$k_name" ] && break
        done
    fi
fi

# ---------------------------------------------------------------------------------------------
# Memory

copy memory/meminfo.txt meminfo /proc/meminfo
copy memory/vmstat.txt vmstat /proc/vmstat
copy memory/buddyinfo.txt reference /proc/buddyinfo
run memory/sysctl-vm.txt sysctl 20 "$CAP" sh -c 'grep -r . /proc/sys/vm/ 2>/dev/null'
for m_f in enabled defrag shmem_enabled khugepaged/defrag; do
    m_src=/sys/kernel/mm/transparent_hugepage/$m_f
    [ -e "$m_src" ] && copy "memory/thp-$(echo "$m_f" | tr / -).txt" thp_setting "$m_src"
done
run memory/hugepages.txt reference 10 "$CAP" sh -c 'grep -r . /sys/kernel/mm/hugepages/ 2>/dev/null'
run memory/free.txt free 10 "$CAP" free -k

# ---------------------------------------------------------------------------------------------
# CPU and audit

run cpu/vulnerabilities.txt cpu_vulnerabilities 10 "$CAP" sh -c 'grep -r . /sys/devices/system/cpu/vulnerabilities/ 2>/dev/null'
run cpu/flags.txt cpu_flags 10 "$CAP" sh -c "grep -m 1 '^flags' /proc/cpuinfo"
run cpu/clocksource.txt clocksource 10 "$CAP" cat /sys/devices/system/clocksource/clocksource0/current_clocksource
run audit/status.txt audit_status 10 "$CAP" auditctl -s
run audit/rules.txt audit_rules 10 "$CAP" auditctl -l

copy_flush

# ---------------------------------------------------------------------------------------------
# Processes: the postmaster and the processes below it, by comm (never another process's
# arguments); other clusters' postmasters are named in the manifest, their processes left alone.

run processes/ps.txt reference 20 "$CAP" ps -eo pid,ppid,user,comm,stat,ni,rss,vsz,pcpu,etimes,wchan:32

# note TEXT: a line for the manifest's `notes`.
NOTES=
note() {
    jesc "$1"
    NOTES="$NOTES${NOTES:+,
}    \"$J\""
    say "$1"
}

# Every postgres process, in one read of every /proc/PID/stat (`PID (COMM) STATE PPID …`; a
# name may hold spaces and parentheses, so it ends at the last `) `): one cat and one awk
# whatever the number of processes, never a command per process. One `PID PPID START RSS TOP`
# line each: START in clock ticks after boot (field 22), RSS in pages (field 24), TOP 1 when
# its parent is not a postgres process (a postmaster, or a child its postmaster left behind).
PS_ALL=$({ cd /proc && cat [0-9]*/stat; } 2>/dev/null | awk '
    {
        open = index($0, " (")
        last = 0
        while ((i = index(substr($0, last + 1), ") ")) > 0) last += i
        if (open == 0 || last <= open) next
        comm = substr($0, open + 2, last - open - 2)
        if (comm != "postgres" && comm != "postmaster") next
        split(substr($0, last + 2), f, " ")
        pid = substr($0, 1, open - 1)
        pg[pid] = 1; order[++n] = pid; line[pid] = pid " " f[2] " " f[20] " " f[22]; parent[pid] = f[2]
    }
    END { for (i = 1; i <= n; i++) print line[order[i]], (parent[order[i]] in pg) ? 0 : 1 }')
HZ=$(getconf CLK_TCK 2>/dev/null)
is_number "$HZ" || HZ=100
BTIME=${c_bt#btime }
is_number "$BTIME" || BTIME=

# The top processes' command lines, in one `head` (`==> PID/cmdline <==` headers say whose;
# /dev/null first, so a single one gets its header too), NUL separators read as spaces: a
# postmaster's is its command (`/usr/lib/postgresql/15/bin/postgres -D /var/lib/…`), a child's
# its title (`postgres: checkpointer`), which says it outlived its postmaster.
TOP_TITLES=
if [ -n "$PS_ALL" ]; then
    # shellcheck disable=SC2046 # one word per pid
    TOP_TITLES=$(cd /proc 2>/dev/null && head -c 4096 /dev/null $(printf '%s\n' "$PS_ALL" | awk '$5 == 1 { print $1 "/cmdline" }') 2>/dev/null |
        tr '\000' ' ' | awk '/^==> [0-9]+\/cmdline <==$/ { pid = substr($2, 1, index($2, "/") - 1); next }
            pid != "" && $0 != "" { print pid, $0; pid = "" }')
fi
PM_CANDIDATES=$(printf '%s\n' "$TOP_TITLES" | awk '$1 != "" && $2 != "postgres:" { printf " %s", $1 }')
ORPHANS=$(printf '%s\n' "$TOP_TITLES" | awk '$2 == "postgres:" { printf " %s", $1 }')

# phys_path PATH: PATH with its symbolic links resolved (its parent's, when PATH itself cannot
# be entered), to compare with a process's working directory.
phys_path() {
    p_r=$(cd "$1" 2>/dev/null && pwd -P) && { echo "$p_r"; return 0; }
    p_r=$(cd "${1%/*}" 2>/dev/null && pwd -P) && { echo "${p_r%/}/${1##*/}"; return 0; }
    echo "$1"
}

# pm_dir PID: the data directory of postmaster PID: its working directory (root or its owner
# may read it), else the -D of its command line.
pm_dir() {
    p_d=$(readlink "/proc/$1/cwd" 2>/dev/null)
    [ -n "$p_d" ] && { echo "$p_d"; return 0; }
    printf '%s\n' "$TOP_TITLES" | awk -v p="$1" '$1 == p { for (i = 2; i < NF; i++) if ($i == "-D") { print $(i + 1); exit } }'
}

# pm_start PID: when process PID started, in epoch seconds (boot time + its start in ticks).
pm_start() {
    [ -n "$BTIME" ] || return 0
    printf '%s\n' "$PS_ALL" | awk -v p="$1" -v bt="$BTIME" -v hz="$HZ" '$1 == p { printf "%d\n", bt + $3 / hz; exit }'
}

# pm_memcg PID: the memory cgroup of PID (v1's memory controller, else v2's), from /proc/PID/cgroup.
pm_memcg() {
    awk -F: '$2 ~ /(^|,)memory(,|$)/ { m = $3 } $1 == "0" && $2 == "" { u = $3 } END { print (m != "") ? m : u }' "/proc/$1/cgroup" 2>/dev/null
}

# read_pidfile DIR: postmaster.pid's lines into PF_PID, PF_START, PF_PORT, PF_SOCK,
# PF_STATUS; PF_STATE absent, unreadable or read.
read_pidfile() {
    PF_PID='' PF_START='' PF_PORT='' PF_SOCK='' PF_STATUS=''
    if [ ! -e "$1/postmaster.pid" ]; then
        PF_STATE=absent
        [ -x "$1" ] || PF_STATE=unreadable
        return 0
    fi
    PF_STATE=unreadable
    { {
        read -r PF_PID && read -r _ && read -r PF_START && read -r PF_PORT && read -r PF_SOCK &&
            read -r _ && read -r _ && read -r PF_STATUS
    } <"$1/postmaster.pid"; } 2>/dev/null
    is_number "$PF_PID" && PF_STATE="read"
    PF_STATUS=$(printf '%s' "$PF_STATUS" | tr -d ' ')
    return 0
}

# The postmaster: --pid; else the one that -D's postmaster.pid names, when that process is a
# running postmaster started when the file says (a stale file after a crash names a pid that is
# gone, or reused); else the one whose working directory or -D is -D's directory; without -D,
# the one listening on -p, or the only one running. Never another cluster's: when -D's cluster
# is down, the manifest says so and no process is collected.
PM='' PM_FROM='' PM_STATE=unknown
if [ -n "$PM_ARG" ]; then
    p_line=$(printf '%s\n' "$PS_ALL" | awk -v p="$PM_ARG" '$1 == p')
    [ -n "$p_line" ] || die "--pid $PM_ARG is not a running postgres process"
    # A child's pid: its postmaster.
    PM=$(printf '%s\n' "$PS_ALL" | awk -v p="$PM_ARG" '{ par[$1] = $2; top[$1] = $5 } END { while (p in par && !top[p]) p = par[p]; print p }')
    PM_FROM=--pid
    [ "$PM" = "$PM_ARG" ] || PM_FROM="--pid $PM_ARG (a child of it)"
    case " $ORPHANS " in *" $PM "*) die "--pid $PM_ARG is a postgres process whose postmaster is gone (its title: $(printf '%s\n' "$TOP_TITLES" | awk -v p="$PM" '$1 == p { $1 = ""; print; exit }'))" ;; esac
elif [ -n "$PGDATA_DIR" ]; then
    p_phys=$(phys_path "$PGDATA_DIR")
    read_pidfile "$PGDATA_DIR"
    if [ "$PF_STATE" = read ]; then
        case " $PM_CANDIDATES " in
        *" $PF_PID "*)
            p_started=$(pm_start "$PF_PID")
            p_cwd=$(readlink "/proc/$PF_PID/cwd" 2>/dev/null)
            if is_number "$PF_START" && is_number "$p_started" && { [ $((p_started - PF_START)) -gt 5 ] || [ $((PF_START - p_started)) -gt 5 ]; }; then
                note "$PGDATA_DIR/postmaster.pid names pid $PF_PID, started at $PF_START (epoch), but that postmaster started at $p_started: another server's, the file is stale"
            elif [ -n "$p_cwd" ] && [ "$p_cwd" != "$p_phys" ]; then
                note "$PGDATA_DIR/postmaster.pid names pid $PF_PID, a postmaster of $p_cwd: the file is stale"
            else
                PM=$PF_PID PM_FROM=postmaster.pid
            fi
            ;;
        *) ;;
        esac
    fi
    if [ -z "$PM" ]; then
        for p_pid in $PM_CANDIDATES; do
            p_d=$(pm_dir "$p_pid")
            [ -n "$p_d" ] || continue
            case $p_d in /*) ;; *) continue ;; esac
            if [ "$p_d" = "$PGDATA_DIR" ] || [ "$p_d" = "$p_phys" ] || [ "$(phys_path "$p_d")" = "$p_phys" ]; then
                PM=$p_pid PM_FROM="the postmaster's working directory or -D"
                break
            fi
        done
    fi
    if [ -z "$PM" ]; then
        case $PF_STATE in
        absent) PM_STATE=down; note "no postmaster runs for $PGDATA_DIR: it has no postmaster.pid" ;;
        read) PM_STATE=down; note "no postmaster runs for $PGDATA_DIR: its postmaster.pid names pid $PF_PID, which is not its postmaster (gone, or another process)" ;;
        *) note "no running postmaster names $PGDATA_DIR, and its postmaster.pid cannot be read by uid $MY_UID: whether it runs is unknown (run as root or as its owner)" ;;
        esac
    fi
else
    # shellcheck disable=SC2086 # one word per pid
    set -- $PM_CANDIDATES
    if [ $# = 1 ]; then
        PM=$1 PM_FROM="the only postmaster running"
    elif [ $# -gt 1 ] && [ -n "$PG_PORT" ]; then
        for p_pid in $PM_CANDIDATES; do
            p_d=$(pm_dir "$p_pid")
            read_pidfile "$p_d"
            if [ "$PF_PORT" = "$PG_PORT" ]; then
                PM=$p_pid PM_FROM="the postmaster listening on -p $PG_PORT"
                break
            fi
        done
    fi
    [ -z "$PM" ] && [ $# -gt 1 ] && note "several postmasters run ($PM_CANDIDATES ): give -D or --pid to choose one"
fi
[ -n "$PM" ] && PM_STATE=running

# The processes collected: the postmaster and every postgres process below it (children by
# PPID, theirs too), it first; with no postmaster for -D's directory, the children its dead
# postmaster left running (their working directory is that directory). The MAX_PROCS cap
# leaves out the newest past it (never the postmaster), and is named.
ROOTS=$PM
if [ -z "$PM" ] && [ -n "$PGDATA_DIR" ] && [ -n "$ORPHANS" ]; then
    p_phys=$(phys_path "$PGDATA_DIR")
    for p_pid in $ORPHANS; do
        p_d=$(readlink "/proc/$p_pid/cwd" 2>/dev/null)
        [ -n "$p_d" ] && [ "$p_d" = "$p_phys" ] && ROOTS="$ROOTS $p_pid"
    done
    # shellcheck disable=SC2086 # one word per pid
    [ -n "$ROOTS" ] && set -- $ROOTS && note "$# postgres processes of $PGDATA_DIR run without their postmaster (left by one that is gone):$ROOTS"
fi
TREE=
if [ -n "$ROOTS" ]; then
    TREE=$(printf '%s\n' "$PS_ALL" | awk -v roots="$ROOTS" -v max="$MAX_PROCS" '
        { kids[$2] = kids[$2] " " $1 }
        END {
            n = split(roots, q, " ")
            for (i = 1; i <= n; i++) seen[q[i]] = 1
            for (i = 1; i <= n; i++) {
                if (i <= max) print q[i]; else left++
                m = split(kids[q[i]], k, " ")
                for (j = 1; j <= m; j++) if (!(k[j] in seen)) { seen[k[j]] = 1; q[++n] = k[j] }
            }
            if (left) print "left", left
        }')
fi
PG_PIDS=$(printf '%s\n' "$TREE" | awk '$1 != "left" && $1 != "" { printf " %s", $1 }')
PROCS_LEFT_OUT=$(printf '%s\n' "$TREE" | awk '$1 == "left" { print $2 }')
# shellcheck disable=SC2086 # one word per pid
set -- $PG_PIDS
PROCS_TREE=$(($# + ${PROCS_LEFT_OUT:-0}))
[ -n "$PROCS_LEFT_OUT" ] && note "$PROCS_LEFT_OUT of the postmaster's $PROCS_TREE processes were left out (more than $MAX_PROCS)"

# Other clusters' postmasters: pid, data directory, port and memory cgroup, the number of
# processes below them; none of their processes' files.
OTHERS=
for p_pid in $PM_CANDIDATES; do
    [ "$p_pid" = "$PM" ] && continue
    p_d=$(pm_dir "$p_pid")
    PF_PORT=
    [ -n "$p_d" ] && read_pidfile "$p_d"
    p_port=$PF_PORT
    is_number "$p_port" || p_port=$(printf '%s\n' "$TOP_TITLES" | awk -v p="$p_pid" '$1 == p {
        for (i = 2; i <= NF; i++) { if ($i == "-p") { print $(i + 1); exit } if ($i ~ /^port=[0-9]+$/) { sub(/^port=/, "", $i); print $i; exit } } }')
    is_number "$p_port" || p_port=null
    p_n=$(printf '%s\n' "$PS_ALL" | awk -v r="$p_pid" '{ par[$1] = $2 } END { for (p in par) { q = p; while (q in par && q != r) q = par[q]; if (q == r) n++ } print n + 0 }')
    p_started=$(pm_start "$p_pid")
    p_started_utc=
    is_number "$p_started" && p_started_utc=$(date -u -d "@$p_started" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
    jesc "$p_d"
    p_dj=$J
    jesc "$(pm_memcg "$p_pid")"
    OTHERS="$OTHERS${OTHERS:+,
}    {\"pid\": $p_pid, \"data_directory\": \"$p_dj\", \"port\": $p_port, \"memory_cgroup\": \"$J\", \"started\": ${p_started_utc:+\"}${p_started_utc:-null}${p_started_utc:+\"}, \"processes\": $p_n}"
    say "another cluster's postmaster: pid $p_pid, ${p_d:-data directory unknown}, port $p_port (not collected)"
done

# The postmaster's own: when it started (postmaster.pid, else its process), its memory cgroup.
PM_START_UTC=
PM_MEMCG=
if [ -n "$PM" ]; then
    p_started=$(pm_start "$PM")
    is_number "$p_started" && PM_START_UTC=$(date -u -d "@$p_started" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
    PM_MEMCG=$(pm_memcg "$PM")
fi

# ROOTFS: the postmaster's view of the file system (/proc/PID/root) when it runs in another
# mount namespace (a container), so /dev/shm, cgroups, its data directory and log are read as
# it sees them; empty when it shares ours.
ROOTFS=
PM_NS_NOTE=
if [ -n "$PM" ]; then
    p_ns_self=$(readlink /proc/self/ns/mnt 2>/dev/null)
    p_ns_pm=$(readlink "/proc/$PM/ns/mnt" 2>/dev/null)
    if [ -z "$p_ns_pm" ]; then
        PM_NS_NOTE="its mount namespace is not visible to uid $MY_UID: files are read in the collector's own view"
    elif [ "$p_ns_self" != "$p_ns_pm" ]; then
        if [ -d "/proc/$PM/root/" ] && ls "/proc/$PM/root/" >/dev/null 2>&1; then
            ROOTFS=/proc/$PM/root
        else
            PM_NS_NOTE="it runs in another mount namespace that uid $MY_UID cannot enter (/proc/$PM/root)"
        fi
    fi
fi
say "postmaster: ${PM:-none found}${PM_FROM:+ (from $PM_FROM)}${ROOTS:+, $PROCS_TREE postgres processes collected}${ROOTFS:+, in another mount namespace}"
[ -n "$PM_NS_NOTE" ] && say "postmaster $PM: $PM_NS_NOTE"

# The titles: every cmdline in one `head` (as the top processes' above), NUL separators read
# as spaces.
if [ -n "$PG_PIDS" ]; then
    DESCRIBE="pid and title (/proc/PID/cmdline) of each postgres process of the postmaster"
    # shellcheck disable=SC2046,SC2086 # one word per pid
    run processes/postgres-titles.txt process_titles 20 "$CAP" sh -c '
        cd /proc && head -c 4096 /dev/null "$@" 2>/dev/null | tr "\000" " " |
            awk "/^==> [0-9]+\/cmdline <==\$/ { pid = substr(\$2, 1, index(\$2, \"/\") - 1); next }
                 pid != \"\" && \$0 != \"\" { print pid, \$0; pid = \"\" }"' sh $(printf '%s\n' $PG_PIDS | sed 's#$#/cmdline#')
fi

# Each process's status, oom_score_adj and cgroup, the postmaster's limits (its children inherit
# them) and smaps_rollup of the postmaster and of the SMAPS_MAX - 1 largest others by resident
# size (reading one walks the process's page tables: 2,000 of them take over a second), in one
# read_batch pass (2,000 backends took minutes when each file was a step of its own). A process
# that exits meanwhile is named in the manifest's notes and its entries say so.
PROCS_GONE=
if [ "$DRY_RUN" = 1 ]; then
    for p_pid in $PG_PIDS; do
        for p_item in status:proc_status smaps_rollup:smaps_rollup oom_score_adj:oom_score_adj cgroup:reference limits:proc_limits; do
            record "processes/$p_pid/${p_item%%:*}" "${p_item#*:}" "cat /proc/$p_pid/${p_item%%:*}" 0 0 0 false ""
        done
    done
elif [ -n "$PG_PIDS" ]; then
    # shellcheck disable=SC2086 # one word per pid
    (cd "$D" && mkdir -p processes && cd processes && mkdir -p $PG_PIDS)
    # The postmaster first, then the others by resident size, largest first.
    printf '%s\n' "$PS_ALL" | awk -v pids="$PG_PIDS" '
        BEGIN { n = split(pids, p, " "); for (i = 1; i <= n; i++) want[p[i]] = 1; first = p[1] }
        $1 in want { print (($1 == first) ? -1 : $4), $1 }' | sort -k1,1nr | awk -v max="$SMAPS_MAX" '
        $1 == -1 { first = $2; next }
        { order[++n] = $2 }
        END {
            if (first != "") { k = 1; list(first, 1) }
            for (i = 1; i <= n; i++) list(order[i], ++k <= max)
        }
        function list(q, smaps) {
            printf "proc_status\tprocesses/%s/status\t/proc/%s/status\n", q, q
            if (smaps) printf "smaps_rollup\tprocesses/%s/smaps_rollup\t/proc/%s/smaps_rollup\n", q, q
            printf "oom_score_adj\tprocesses/%s/oom_score_adj\t/proc/%s/oom_score_adj\n", q, q
            printf "reference\tprocesses/%s/cgroup\t/proc/%s/cgroup\n", q, q
            if (q == first) printf "proc_limits\tprocesses/%s/limits\t/proc/%s/limits\n", q, q
        }' >"$WORK/proc-list"
    # shellcheck disable=SC2086 # one word per pid
    set -- $PG_PIDS
    read_batch "$WORK/proc-list" "one pass over the files of $# processes"
    # Whose files could not be read because the process is gone.
    for p_pid in $(sed -n 's#^{"path":"processes/\([0-9]*\)/[^"]*","kind":"[^"]*","command":"[^"]*","status":1,.*#\1#p' "$WORK/batch-entries" | uniq); do
        [ -d "/proc/$p_pid" ] || PROCS_GONE="$PROCS_GONE $p_pid"
    done
    if [ -n "$PROCS_GONE" ]; then
        ENTRIES=$(printf '%s' "$ENTRIES" | awk -v gone="$PROCS_GONE" '
            BEGIN { n = split(gone, g, " "); for (i = 1; i <= n; i++) dead["processes/" g[i] "/"] = g[i] }
            /"status":1,/ && match($0, /^{"path":"processes\/[0-9]+\//) {
                k = substr($0, 10, RLENGTH - 9)
                if (k in dead) sub(/"note":"[^"]*"/, "\"note\":\"gone: process " dead[k] " exited during the collection\"")
            }
            { print }')
        ENTRIES="$ENTRIES
"
        # shellcheck disable=SC2086 # one word per pid
        set -- $PROCS_GONE
        note "$# processes exited during the collection, before their files were read:$PROCS_GONE"
    fi
fi

# The postmaster's OOM protection: the two variables that make its children reset their
# oom_score_adj (never anything else of its environment), and the service manager's setting.
PM_UNIT=
UNIT_SHOWN=0
if [ -n "$PM" ]; then
    DESCRIBE="PG_OOM_ADJUST_FILE and PG_OOM_ADJUST_VALUE of /proc/$PM/environ (nothing else)"
    run "processes/$PM/pg-oom-adjust.txt" pg_oom_adjust 10 "$CAP" sh -c '
        e=$(tr "\000" "\n" <"$1") || exit 1
        printf "%s\n" "$e" | awk -F= "
            \$1 == \"PG_OOM_ADJUST_FILE\" { f = \$0 }
            \$1 == \"PG_OOM_ADJUST_VALUE\" { v = \$0 }
            END {
                print (f != \"\" ? f : \"unset PG_OOM_ADJUST_FILE\")
                print (v != \"\" ? v : \"unset PG_OOM_ADJUST_VALUE\")
            }"' sh "/proc/$PM/environ"
    # The unit is the innermost `.service` of its cgroup path (systemd's own layout).
    PM_UNIT=$(sed -n 's#^[^:]*:[^:]*:.*/\([^/]*\.service\)\(/.*\)\{0,1\}$#\1#p' "/proc/$PM/cgroup" 2>/dev/null | head -n 1)
    if [ -n "$PM_UNIT" ] && [ -d /run/systemd/system ]; then
        run "processes/$PM/systemd-unit.txt" systemd_unit 10 "$CAP" systemctl show -p Id \
            -p OOMScoreAdjust -p MemoryMax -p MemoryHigh -p ActiveState -p SubState -p Result \
            -p ExecMainCode -p ExecMainStatus -p ExecMainStartTimestamp -p NRestarts "$PM_UNIT"
        UNIT_SHOWN=1
    fi
fi

# The postmaster's memory cgroup: v2 (0::/path) and v1 (N:memory:/path), found through its own
# mountinfo (mount point field 5, the mount's root field 4; after the "-" separator come
# fstype, source, options), read through its root.
MOUNTS_AWK='{ for (i = 7; i < NF; i++) if ($i == "-") break; t = $(i + 1); o = $(i + 3) }'
# cg_dir ROOT_OF_MOUNT MOUNT_POINT CGROUP_PATH: the cgroup's directory in our view.
cg_dir() {
    c_rel=$3
    case $1 in
    / | '') ;;
    *) case $3 in "$1" | "$1"/*) c_rel=${3#"$1"} ;; esac ;;
    esac
    printf '%s%s%s\n' "$ROOTFS" "$2" "$c_rel"
}
for p_pid in $PM; do
    [ -r "/proc/$p_pid/cgroup" ] || continue
    g_mi=/proc/$p_pid/mountinfo
    [ -r "$g_mi" ] || g_mi=/proc/self/mountinfo
    g_v1=$(awk "$MOUNTS_AWK"' t == "cgroup" && o ~ /(^|,)memory(,|$)/ { print $4, $5; exit }' "$g_mi" 2>/dev/null)
    g_v2=$(awk "$MOUNTS_AWK"' t == "cgroup2" { print $4, $5; exit }' "$g_mi" 2>/dev/null)
    g_p2=$(awk -F: '$1 == "0" && $2 == "" { print $3; exit }' "/proc/$p_pid/cgroup" 2>/dev/null)
    g_p1=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' "/proc/$p_pid/cgroup" 2>/dev/null)
    g_d2=
    [ -n "$g_v2" ] && [ -n "$g_p2" ] && g_d2=$(cg_dir "${g_v2% *}" "${g_v2#* }" "$g_p2")
    g_d1=
    [ -n "$g_v1" ] && [ -n "$g_p1" ] && g_d1=$(cg_dir "${g_v1% *}" "${g_v1#* }" "$g_p1")
    if [ -n "$g_d2" ] && [ -e "$g_d2/memory.max" ]; then
        for g_f in memory.max memory.high memory.current memory.peak memory.swap.max memory.swap.current; do
            [ -e "$g_d2/$g_f" ] && copy "cgroup/$p_pid/$g_f" cgroup_value "$g_d2/$g_f"
        done
        copy "cgroup/$p_pid/memory.events" cgroup_events "$g_d2/memory.events"
        copy "cgroup/$p_pid/memory.stat" cgroup_stat "$g_d2/memory.stat"
    fi
    if [ -n "$g_d1" ] && [ -d "$g_d1" ]; then
        for g_f in memory.limit_in_bytes memory.usage_in_bytes memory.max_usage_in_bytes \
            memory.failcnt memory.memsw.limit_in_bytes memory.memsw.usage_in_bytes; do
            [ -e "$g_d1/$g_f" ] && copy "cgroup/$p_pid/$g_f" cgroup_value "$g_d1/$g_f"
        done
        copy "cgroup/$p_pid/memory.oom_control" cgroup_events "$g_d1/memory.oom_control"
        copy "cgroup/$p_pid/memory.stat" cgroup_stat "$g_d1/memory.stat"
    fi
done

copy_flush

# ---------------------------------------------------------------------------------------------
# The data directory, its owner, the configuration file and the server binary, without asking
# the server: -D, else the postmaster's working directory (it runs in its data directory),
# else the only data directory where the packaging puts them.

PM_CMDLINE=
# (The redirection inside braces: a postmaster gone meanwhile is no error on the terminal.)
[ -n "$PM" ] && PM_CMDLINE=$({ tr '\000' '\n' <"/proc/$PM/cmdline"; } 2>/dev/null)
if [ -z "$PGDATA_DIR" ] && [ -n "$PM" ]; then
    PGDATA_DIR=$(readlink "/proc/$PM/cwd" 2>/dev/null)
    [ -z "$PGDATA_DIR" ] && PGDATA_DIR=$(printf '%s\n' "$PM_CMDLINE" | awk 'p { print; exit } $0 == "-D" { p = 1 }')
fi
if [ -z "$PGDATA_DIR" ] && [ -z "$PM" ]; then
    d_found=
    for d_try in /var/lib/postgresql/*/* /var/lib/pgsql/data /var/lib/pgsql/*/data /var/lib/postgres/data; do
        [ -f "$d_try/PG_VERSION" ] && d_found="$d_found $d_try"
    done
    # shellcheck disable=SC2086 # one word per directory
    set -- $d_found
    if [ $# = 1 ]; then
        PGDATA_DIR=$1
        say "data directory: $1 (the only one found; give -D to choose another)"
    elif [ $# -gt 1 ]; then
        say "several data directories ($d_found): give -D to choose one"
    fi
fi
# In the postmaster's view (its namespace), read through ROOTFS.
DATA=${PGDATA_DIR:+$ROOTFS$PGDATA_DIR}
PG_OWNER=
PG_MAJOR=
if [ -n "$DATA" ]; then
    PG_OWNER=$(stat -c %U "$DATA" 2>/dev/null)
    # shellcheck disable=SC2012 # busybox without stat: the owner column of ls -ld
    case $PG_OWNER in UNKNOWN | '') PG_OWNER=$(ls -ld "$DATA" 2>/dev/null | awk '{ print $3 }') ;; esac
    PG_MAJOR=$(cat "$DATA/PG_VERSION" 2>/dev/null)
fi

# postmaster.opts: how the server was last started (`BIN/postgres "-D" "DIR" "-c" "config_file=…"`).
OPTS=
[ -n "$DATA" ] && OPTS=$(cat "$DATA/postmaster.opts" 2>/dev/null)
opt_value() {
    printf '%s\n%s\n' "$PM_CMDLINE" "$OPTS" | tr ' ' '\n' | tr -d '"' | sed -n "s/^$1=//p" | head -n 1
}
CONF=$(opt_value config_file)
HBA=$(opt_value hba_file)
if [ -z "$CONF" ] && [ -n "$PGDATA_DIR" ]; then
    # Debian: /var/lib/postgresql/VERSION/CLUSTER is configured in /etc/postgresql/VERSION/CLUSTER.
    case $PGDATA_DIR in
    /var/lib/postgresql/*/*) d_c=/etc/postgresql/${PGDATA_DIR#/var/lib/postgresql/} ;;
    *) d_c= ;;
    esac
    if [ -n "$d_c" ] && [ -f "$ROOTFS$d_c/postgresql.conf" ]; then
        CONF=$d_c/postgresql.conf
    else
        CONF=$PGDATA_DIR/postgresql.conf
    fi
fi
[ -z "$HBA" ] && [ -n "$CONF" ] && HBA=${CONF%/*}/pg_hba.conf

# The server binary: --bindir, the one that started the server (postmaster.opts, the running
# postmaster's executable), else the packaging's places for the data directory's major version.
PG_SERVER=
if [ -n "$BINDIR_ARG" ]; then
    PG_SERVER=$BINDIR_ARG/postgres
else
    for b_try in "$(printf '%s\n' "$OPTS" | awk '{ gsub(/"/, "", $1); print $1; exit }')" \
        "${PM:+$(readlink "/proc/$PM/exe" 2>/dev/null)}" \
        "/usr/lib/postgresql/$PG_MAJOR/bin/postgres" "/usr/pgsql-$PG_MAJOR/bin/postgres" \
        "$(pg_config --bindir 2>/dev/null)/postgres" "$(command -v postgres 2>/dev/null)"; do
        if [ -z "$b_try" ] || [ ! -x "$ROOTFS$b_try" ]; then continue; fi
        # The right major version only: another one refuses the data directory anyway.
        # `postgres (PostgreSQL) 15.10 (Debian 15.10-0+deb12u1)`: 15; 9.6.24: 9.6.
        b_v=$("$ROOTFS$b_try" -V 2>/dev/null </dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]/) {
            split($i, a, /[^0-9]/); print (a[1] < 10 ? a[1] "." a[2] : a[1]); exit } }')
        if [ -z "$PG_MAJOR" ] || [ "$b_v" = "$PG_MAJOR" ]; then
            PG_SERVER=$ROOTFS$b_try
            break
        fi
    done
fi
say "data directory: ${PGDATA_DIR:-unknown}${PG_OWNER:+ (owner $PG_OWNER)}${PG_MAJOR:+, PostgreSQL $PG_MAJOR}; configuration: ${CONF:-unknown}; server binary: ${PG_SERVER:-not found}"

# ---------------------------------------------------------------------------------------------
# Configuration: postgresql.conf with its include, include_if_exists and include_dir directives
# followed where they point, then postgresql.auto.conf (what ALTER SYSTEM wrote), each file
# between `# pgmortem-collect: file PATH` and `# pgmortem-collect: end PATH` lines, in the order
# PostgreSQL reads them (the last assignment wins). Connection strings, commands and passwords
# are masked; a file that cannot be read is named with the reason.

# (awk -v q="'": the single quote, which the program itself cannot hold.)
CONF_AWK='
function quoted(p,   r) { r = p; gsub(q, q "\\" q q, r); return q r q }
function dir_of(p) { sub(/\/[^\/]*$/, "", p); return p == "" ? "/" : p }
function readable(p) { return system("test -r " quoted(root p)) == 0 }
function exists(p) { return system("test -e " quoted(root p)) == 0 }
function mask(line) {
    if (line ~ /^[ \t]*[A-Za-z_.]*(conninfo|command|password|passphrase)[ \t]*(=|[ \t])/) {
        sub(/(=|[ \t])[ \t]*.*/, " = " q "<redacted>" q, line)
    }
    return line
}
function unquote(v) {
    if (substr(v, 1, 1) == q) { v = substr(v, 2); sub(q ".*", "", v) } else sub(/[ \t#].*/, "", v)
    return v
}
function target(line,   v) {
    v = line
    sub(/^[ \t]*include(_if_exists|_dir)?[ \t]*=?[ \t]*/, "", v)
    return unquote(v)
}
function read_file(path, depth,   line, n, kind, t, full, cmd, f) {
    if (depth > 10) { print "# pgmortem-collect: not read " path ": includes nested deeper than 10"; return }
    if (!exists(path)) { print "# pgmortem-collect: not read " path ": no such file"; return }
    if (!readable(path)) { print "# pgmortem-collect: not read " path ": permission denied"; return }
    print "# pgmortem-collect: file " path
    n = 0
    while ((getline line < (root path)) > 0) {
        if (++n > 20000) { print "# pgmortem-collect: cut " path ": more than 20000 lines"; break }
        print mask(line)
        if (line !~ /^[ \t]*include(_if_exists|_dir)?([ \t]|=)/) continue
        kind = line; sub(/^[ \t]*/, "", kind); sub(/[ \t=].*/, "", kind)
        t = target(line)
        if (t == "") continue
        full = (t ~ /^\//) ? t : dir_of(path) "/" t
        if (kind == "include_dir") {
            if (!exists(full)) { print "# pgmortem-collect: not read " full ": no such directory"; continue }
            cmd = "ls -1 " quoted(root full) " 2>/dev/null | LC_ALL=C sort"
            while ((cmd | getline f) > 0) if (f ~ /\.conf$/ && f !~ /^\./) read_file(full "/" f, depth + 1)
            close(cmd)
        } else if (kind == "include_if_exists" && !exists(full)) {
            print "# pgmortem-collect: not read " full ": no such file (include_if_exists)"
        } else {
            read_file(full, depth + 1)
        }
    }
    close(root path)
    print "# pgmortem-collect: end " path
}
BEGIN {
    root = ENVIRON["ROOTFS"]
    read_file(ENVIRON["CONF"], 0)
    if (ENVIRON["AUTO"] != "" && exists(ENVIRON["AUTO"])) read_file(ENVIRON["AUTO"], 0)
}'
if [ -n "$CONF" ]; then
    AUTO=${PGDATA_DIR:+$PGDATA_DIR/postgresql.auto.conf}
    export ROOTFS CONF AUTO
    if [ -r "$ROOTFS$CONF" ]; then
        DESCRIBE="awk (includes followed, postgresql.auto.conf appended, secrets masked) $CONF"
        run postgres/postgresql.conf pg_conf 20 "$CAP" awk -v q="'" "$CONF_AWK"
    else
        record postgres/postgresql.conf pg_conf "awk (includes resolved) $CONF" 1 0 0 false \
            "not readable: $CONF ($(why_not "$ROOTFS$CONF"); run as root or as ${PG_OWNER:-the owner of the data directory})"
    fi
fi
# pg_hba.conf: rule count per method, and trust on non-local lines; never the rules.
if [ -n "$HBA" ] && [ -r "$ROOTFS$HBA" ]; then
    DESCRIBE="awk (rules per method, never the rules) $HBA"
    run postgres/hba-summary.txt reference 10 "$CAP" awk '
        /^[[:space:]]*(#|$)/ { next }
        { m = "other"
          for (i = 2; i <= NF; i++) if ($i ~ /^(trust|reject|md5|password|scram-sha-256|gss|sspi|ident|peer|ldap|radius|cert|pam|bsd)$/) { m = $i; break }
          n[m]++; if (m == "trust" && $1 != "local") t++ }
        END { for (k in n) print "method " k " " n[k]; print "trust_on_non_local " (t + 0) }' "$ROOTFS$HBA"
fi

# conf_value NAME: the last value the resolved configuration gives NAME (quotes removed).
conf_value() {
    [ -s "$D/postgres/postgresql.conf" ] || return 0
    awk -v n="$1" -v q="'" '
        { l = $0; sub(/^[ \t]*/, "", l) }
        tolower(l) ~ "^" n "[ \t=]" {
            v = l; sub("^[A-Za-z_]*[ \t]*=?[ \t]*", "", v)
            if (substr(v, 1, 1) == q) { v = substr(v, 2); sub(q ".*", "", v) } else sub(/[ \t#].*/, "", v)
            last = v
        }
        END { if (last != "") print last }' "$D/postgres/postgresql.conf"
}

# ---------------------------------------------------------------------------------------------
# Server logs, before any connection: when every slot is taken, a connection attempt only adds a
# FATAL line to them. The current file (postgres/server.log): --log; current_logfiles; the
# newest file of log_directory when logging_collector is on; the postmaster's standard error
# when it is a file (`pg_ctl -l FILE`, a supervisor's file: /proc/PID/fd/2); Debian's
# /var/log/postgresql/postgresql-VERSION-CLUSTER.log; the newest file of PGDATA/log or
# PGDATA/pg_log; after the session pg_current_logfile(); else the unit's journal. Then the
# earlier files of the same log (postgres/log/NAME), the postmaster's standard error when it is
# another file (postgres/stderr.log: what it printed before the logging collector ran, a start
# that failed), and the syslog lines when log_destination names syslog (postgres/syslog.txt).

# iso_awk: an awk function iso(EPOCH) printing RFC 3339 UTC (no strftime in POSIX awk).
ISO_AWK='
function iso(t,   d, s, z, era, doe, yoe, y, doy, mp, dd, m) {
    d = int(t / 86400); s = t - d * 86400
    z = d + 719468; era = int(z / 146097); doe = z - era * 146097
    yoe = int((doe - int(doe / 1460) + int(doe / 36524) - int(doe / 146096)) / 365)
    y = yoe + era * 400; doy = doe - (365 * yoe + int(yoe / 4) - int(yoe / 100))
    mp = int((5 * doy + 2) / 153); dd = doy - int((153 * mp + 2) / 5) + 1
    m = mp < 10 ? mp + 3 : mp - 9; if (m <= 2) y++
    return sprintf("%04d-%02d-%02dT%02d:%02d:%02dZ", y, m, dd, int(s / 3600), int(s % 3600 / 60), s % 60)
}'

newest_in() {
    # shellcheck disable=SC2012 # newest by mtime; PostgreSQL's file names have no newlines
    [ -d "$1" ] && ls -t "$1" 2>/dev/null | while IFS= read -r n_f; do
        case $n_f in *.log | *.csv | *.json | postgresql-*) [ -f "$1/$n_f" ] && { echo "$1/$n_f"; break; } ;; esac
    done
}

# same_file A B: A and B are one file (device and inode; `test -ef` is not POSIX).
same_file() {
    s_ids=$(stat -L -c %d:%i "$1" "$2" 2>/dev/null) || return 1
    [ "${s_ids%%
*}" = "${s_ids#*
}" ]
}

# fd_target N: where the postmaster's file descriptor N points, in our view: FD_FILE (a regular
# file, read through /proc/PID/fd/N when it was deleted), else FD_WHAT says what it is. With
# the logging collector on, the postmaster's points to the collector's pipe and the logger
# process keeps the original: the logger's is taken then.
fd_target() {
    FD_FILE='' FD_WHAT='' FD_PATH=''
    [ -n "$PM" ] || return 0
    f_pid=$PM
    f_t=$(readlink "/proc/$PM/fd/$1" 2>/dev/null)
    case $f_t in pipe:* | socket:*)
        f_logger=$(awk '/^[0-9]+ postgres: (.*: )?logger( process)? *$/ { print $1; exit }' "$D/processes/postgres-titles.txt" 2>/dev/null)
        if [ -n "$f_logger" ]; then
            f_l=$(readlink "/proc/$f_logger/fd/$1" 2>/dev/null)
            [ "$f_l" = "$f_t" ] || { f_t=$f_l; f_pid=$f_logger; }
        fi
        ;;
    esac
    FD_PATH=/proc/$f_pid/fd/$1
    case $f_t in
    '') [ -e "/proc/$PM" ] && FD_WHAT="not readable by uid $MY_UID (run as root or as ${PG_OWNER:-its owner})" ;;
    /dev/null) FD_WHAT=/dev/null ;;
    /dev/pts/* | /dev/tty* | /dev/console) FD_WHAT="a terminal ($f_t)" ;;
    pipe:* | socket:*) FD_WHAT="a pipe or socket ($f_t: a service manager's journal or a logging program)" ;;
    *' (deleted)') FD_FILE=$FD_PATH FD_WHAT="${f_t% (deleted)}, deleted since (read through $FD_PATH)" ;;
    /*) if [ -f "$ROOTFS$f_t" ]; then FD_FILE=$ROOTFS$f_t FD_WHAT=$f_t; else FD_WHAT=$f_t; fi ;;
    *) FD_WHAT=$f_t ;;
    esac
}

# The logging collector, as the configuration says (the server is asked later).
L_COLLECTOR=$(conf_value logging_collector)
case $L_COLLECTOR in on | true | yes | 1) L_COLLECTOR=on ;; *) L_COLLECTOR=off ;; esac
L_DIR=
if [ -n "$DATA" ]; then
    L_DIR=$(conf_value log_directory)
    [ -n "$L_DIR" ] || L_DIR=log
    case $L_DIR in /*) L_DIR=$ROOTFS$L_DIR ;; *) L_DIR=$DATA/$L_DIR ;; esac
fi
# Debian's cluster (pg_ctlcluster's startup log), from its data directory or configuration path.
DEB_VC=
case $PGDATA_DIR in /var/lib/postgresql/*/*) DEB_VC=${PGDATA_DIR#/var/lib/postgresql/} ;; esac
case $CONF in /etc/postgresql/*/*/postgresql.conf) DEB_VC=${CONF#/etc/postgresql/} DEB_VC=${DEB_VC%/postgresql.conf} ;; esac
case $DEB_VC in */*/*) DEB_VC= ;; esac
DEB_LOG=
[ -n "$DEB_VC" ] && DEB_LOG=$ROOTFS/var/log/postgresql/postgresql-${DEB_VC%%/*}-${DEB_VC#*/}.log

fd_target 2
PM_STDERR=$FD_FILE
PM_STDERR_WHAT=$FD_WHAT
PM_STDERR_PATH=$FD_PATH

LOGFILE=$LOGFILE_ARG
LOG_HOW=${LOGFILE:+--log}
if [ -z "$LOGFILE" ] && [ -n "$DATA" ] && [ -r "$DATA/current_logfiles" ]; then
    l_rel=$(awk '$1 == "stderr" { print $2; exit }' "$DATA/current_logfiles")
    [ -z "$l_rel" ] && l_rel=$(awk '{ print $2; exit }' "$DATA/current_logfiles")
    case $l_rel in /*) LOGFILE=$ROOTFS$l_rel ;; ?*) LOGFILE=$DATA/$l_rel ;; esac
    LOG_HOW=current_logfiles
fi
if [ -z "$LOGFILE" ] && [ "$L_COLLECTOR" = on ] && [ -n "$L_DIR" ]; then
    LOGFILE=$(newest_in "$L_DIR")
    LOG_HOW="log_directory, newest file"
fi
if [ -z "$LOGFILE" ] && [ -n "$PM_STDERR" ]; then
    LOGFILE=$PM_STDERR
    LOG_HOW="the postmaster's standard error, $PM_STDERR_PATH"
fi
if [ -z "$LOGFILE" ] && [ -n "$DEB_LOG" ] && [ -f "$DEB_LOG" ]; then
    LOGFILE=$DEB_LOG
    LOG_HOW=/var/log/postgresql
fi
# Without a cluster of its own, Debian's directory's newest file (it holds every cluster's).
case $PGDATA_DIR in '' | /var/lib/postgresql/*) l_debian=1 ;; *) l_debian=0 ;; esac
if [ -z "$LOGFILE" ] && [ -z "$DEB_VC" ] && [ "$l_debian" = 1 ] && [ -d "$ROOTFS/var/log/postgresql" ]; then
    LOGFILE=$(newest_in "$ROOTFS/var/log/postgresql")
    LOG_HOW=/var/log/postgresql
fi
if [ -z "$LOGFILE" ] && [ -n "$DATA" ]; then
    for l_dir in "$DATA/log" "$DATA/pg_log"; do
        LOGFILE=$(newest_in "$l_dir")
        LOG_HOW="$l_dir, newest file"
        [ -n "$LOGFILE" ] && break
    done
fi

LOG_SED=${WORK:-/nonexistent}/log.sed
[ "$DRY_RUN" = 1 ] || cat >"$LOG_SED" <<'EOS'
s/\([Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd][[:space:]]*\)'[^']*'/\1'<redacted>'/g
s/\([Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd][[:space:]]*=[[:space:]]*\)'[^']*'/\1'<redacted>'/g
s/\([Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd][[:space:]]*=[[:space:]]*\)[^[:space:]'"<][^[:space:]'"]*/\1<redacted>/g
s#\(postgres[a-z]*://[^:/@[:space:]]*:\)[^@[:space:]]*@#\1<redacted>@#g
EOS

# The manifest's server_logs (one JSON object a line) and log_files_left_out.
SERVER_LOGS=
LOGS_LEFT_OUT=
LOGS_LEFT_N=0
# server_log PATH ROLE SOURCE FOUND_FROM: a server_logs entry for the collected file PATH.
server_log() {
    [ -s "$D/$1" ] || return 0
    s_mod=$(stat -L -c %Y "$3" 2>/dev/null | awk "$ISO_AWK"' /^[0-9]+$/ { print iso($1) }')
    jesc "$3"
    s_src=$J
    jesc "$4"
    SERVER_LOGS="$SERVER_LOGS${SERVER_LOGS:+,
}    {\"path\": \"$1\", \"role\": \"$2\", \"source\": \"$s_src\", \"found_from\": \"$J\", \"modified\": ${s_mod:+\"}${s_mod:-null}${s_mod:+\"}}"
}
# left_out SOURCE BYTES MODIFIED WHY: a log_files_left_out entry (the first 50; all counted).
left_out() {
    LOGS_LEFT_N=$((LOGS_LEFT_N + 1))
    [ "$LOGS_LEFT_N" -le 50 ] || return 0
    jesc "$1"
    l_src=$J
    jesc "$4"
    LOGS_LEFT_OUT="$LOGS_LEFT_OUT${LOGS_LEFT_OUT:+,
}    {\"source\": \"$l_src\", \"bytes\": ${2:-null}, \"modified\": ${3:+\"}${3:-null}${3:+\"}, \"why\": \"$J\"}"
}

# copy_log PATH SOURCE BYTES HOW: the last BYTES of the log SOURCE (decompressed when it ends in
# .gz, .bz2, .xz or .zst), passwords masked, into PATH.
copy_log() {
    c_src=$2 c_unz=
    case $c_src in
    *.gz) c_unz=gzip ;; *.bz2) c_unz=bzip2 ;; *.xz) c_unz=xz ;; *.zst) c_unz=zstd ;;
    esac
    if [ -n "$c_unz" ]; then
        DESCRIBE="$c_unz -dc $c_src | tail -c $3 | sed (passwords masked)"
        run "$1" postgres_log 120 "-$3" sh -c '"$1" -dc <"$2" | tail -c "$3" | sed -f "$4"' sh "$c_unz" "$c_src" "$3" "$LOG_SED"
    else
        DESCRIBE="tail -c $3 $c_src | sed (passwords masked)"
        run "$1" postgres_log 120 "$3" sh -c 'tail -c "$1" "$2" | sed -f "$3"' sh "$3" "$c_src" "$LOG_SED"
    fi
    server_log "$1" "$4" "$c_src" "$5"
}

# The marks of a run's bounds in a log file: `CRASHES STARTS STOP` after reading it, from the
# CRASHES and STARTS seen in the newer files: its lines from the last back, a crash (a PANIC, a
# process killed by a signal, the restart after one, a start that failed for its shared
# memory) and a clean start (`database system was shut down at`). STOP: `crash` when this file
# holds the clean start of the run that ended in the newest crash, `starts` when it holds the
# start of the run before the current one and no crash came after it, else `-`. English
# messages only: translated ones find no mark, and the byte cap alone bounds the files.
RUN_MARKS_AWK='
/database system was shut down (in recovery )?at / { m[++n] = "S"; next }
/PANIC[:,"]|was terminated by signal|terminating any other active server processes|database system was interrupted|was not properly shut down|could not (map anonymous|create) shared memory/ { m[++n] = "C" }
END {
    stop = "-"
    for (j = n; j >= 1 && stop == "-"; j--) {
        if (m[j] == "C") crashes++
        else if (crashes) stop = "crash"
        else if (++starts == 2) stop = "starts"
    }
    print crashes + 0, starts + 0, stop
}'

EARLIER_MAX=30
# collect_logs: the current file, then its earlier files newest first (same directory: the
# same suffix in the logging collector's directory, NAME.* and NAME-* beside a single file such
# as logrotate leaves them), each whole or its last part, together at most --log-bytes, at
# most EARLIER_MAX files, back to the start of the run that ended in the newest crash they
# show, or without one to the start of the run before the current one; the rest is named in
# log_files_left_out.
LOG_DONE=0
UNIT_LOG=0
collect_logs() {
    LOG_DONE=1
    if [ "$LOW_DISK" = 1 ]; then
        record postgres/server.log postgres_log "tail -c $LOG_BYTES $LOGFILE" 1 0 0 false "skipped: low disk space"
        return 0
    elif [ ! -r "$LOGFILE" ]; then
        record postgres/server.log postgres_log "tail -c $LOG_BYTES $LOGFILE" 1 0 0 false \
            "not readable: $LOGFILE (found from $LOG_HOW; permission denied to uid $MY_UID: run as root or as ${PG_OWNER:-the owner of the data directory})"
        return 0
    fi
    say "server log: $LOGFILE (from $LOG_HOW)"
    copy_log postgres/server.log "$LOGFILE" "$LOG_BYTES" current "$LOG_HOW"
    [ "$DRY_RUN" = 1 ] && return 0
    set -- 0 0 -
    # shellcheck disable=SC2046 # three words
    [ -s "$D/postgres/server.log" ] && set -- $(awk "$RUN_MARKS_AWK" "$D/postgres/server.log")
    l_crashes=$1 l_starts=$2 l_stop=$3
    l_dir=${LOGFILE%/*}
    l_base=${LOGFILE##*/}
    l_mode=rotated
    case $LOG_HOW in current_logfiles | log_directory* | */log,* | */pg_log,*) l_mode=suffix ;; esac
    [ "$l_mode" = rotated ] && [ "$L_COLLECTOR" = on ] && same_file "$l_dir" "$L_DIR" && l_mode=suffix
    # The candidates, newest first: `EPOCH BYTES NAME` (one ls, one stat, whatever their number).
    # shellcheck disable=SC2012 # names by mtime; PostgreSQL's file names have no newlines
    (cd "$l_dir" 2>/dev/null && ls -t 2>/dev/null) | awk -v mode="$l_mode" -v base="$l_base" '
        BEGIN { sfx = base; if (!sub(/^.*\./, ".", sfx)) sfx = "" }
        $0 == base { next }
        mode == "suffix" && sfx != "" && (substr($0, length($0) - length(sfx) + 1) == sfx ||
            $0 ~ ("\\" sfx "\\.(gz|bz2|xz|zst)$")) { print; next }
        mode == "rotated" && (index($0, base ".") == 1 || index($0, base "-") == 1) { print }' |
        head -n 200 >"$WORK/log-names"
    : >"$WORK/log-list"
    if [ -s "$WORK/log-names" ]; then
        # shellcheck disable=SC2046 # one word per file name
        (cd "$l_dir" && stat -L -c '%Y %s %n' $(cat "$WORK/log-names") 2>/dev/null) |
            awk "$ISO_AWK"' $1 ~ /^[0-9]+$/ { print iso($1), $2, substr($0, length($1 $2) + 3) }' >"$WORK/log-list"
    fi
    l_left=$LOG_BYTES l_n=0 l_why=
    case $l_stop in crash) l_why="before the start of the run that ended in the newest crash (postgres/server.log)" ;;
    starts) l_why="before the start of the run before the current one (postgres/server.log)" ;; esac
    while read -r l_mod l_size l_name; do
        l_src=$l_dir/$l_name
        if [ -n "$l_why" ]; then
            left_out "$l_src" "$l_size" "$l_mod" "$l_why"
            continue
        fi
        if [ "$l_left" -le 0 ]; then
            left_out "$l_src" "$l_size" "$l_mod" "past --log-bytes ($LOG_BYTES bytes of the earlier files kept)"
            continue
        fi
        if [ "$l_n" -ge "$EARLIER_MAX" ]; then
            left_out "$l_src" "$l_size" "$l_mod" "past $EARLIER_MAX earlier files"
            continue
        fi
        if [ ! -r "$l_src" ]; then
            left_out "$l_src" "$l_size" "$l_mod" "not readable by uid $MY_UID"
            continue
        fi
        case $l_name in *.gz | *.bz2 | *.xz | *.zst) l_out=${l_name%.*} ;; *) l_out=$l_name ;; esac
        l_n=$((l_n + 1))
        copy_log "postgres/log/$l_out" "$l_src" "$l_left" earlier "the files beside $LOGFILE"
        l_got=$(size_of "$D/postgres/log/$l_out")
        l_left=$((l_left - l_got))
        [ "$l_got" -gt 0 ] || continue
        # shellcheck disable=SC2046 # three words
        set -- $(awk -v crashes="$l_crashes" -v starts="$l_starts" "$RUN_MARKS_AWK" "$D/postgres/log/$l_out")
        l_crashes=$1 l_starts=$2
        case $3 in
        crash) l_why="before the start of the run that ended in the newest crash (postgres/log/$l_out)" ;;
        starts) l_why="before the start of the run before the current one (postgres/log/$l_out)" ;;
        esac
    done <"$WORK/log-list"
    [ "$LOGS_LEFT_N" -gt 0 ] && say "earlier log files: $l_n collected, $LOGS_LEFT_N left out (named in the manifest)"
    return 0
}

# The unit: a running server's from its cgroup (above), else the packaging's names.
if [ -z "$PM_UNIT" ] && [ -d /run/systemd/system ] && have systemctl; then
    # A server that is down has no cgroup to name its unit: the packaging's unit names.
    case $PGDATA_DIR in
    /var/lib/postgresql/*/*) u_vc=${PGDATA_DIR#/var/lib/postgresql/}; u_try="postgresql@${u_vc%%/*}-${u_vc#*/}.service" ;;
    *) u_try="postgresql-$PG_MAJOR.service postgresql.service" ;;
    esac
    for u_name in $u_try; do
        if [ "$(systemctl show -p LoadState "$u_name" 2>/dev/null </dev/null)" = LoadState=loaded ]; then
            PM_UNIT=$u_name
            break
        fi
    done
fi
if [ -n "$LOGFILE" ]; then
    collect_logs
elif [ -n "$PM_UNIT" ] && have journalctl; then
    # A server started by systemd without a log file of its own logs to the journal.
    say "server log: the journal of $PM_UNIT"
    run postgres/server.log postgres_log 120 "-$LOG_BYTES" \
        journalctl -u "$PM_UNIT" -o short-precise --no-pager --since=-3d
    UNIT_LOG=1
    [ "$DRY_RUN" = 0 ] && [ -e "$D/postgres/server.log" ] && ! has_entries "$D/postgres/server.log" &&
        amend postgres/server.log "no entries: uid $MY_UID sees nothing of $PM_UNIT in the journal"
    [ "$DRY_RUN" = 0 ] && server_log postgres/server.log current "journalctl -u $PM_UNIT" "the unit's journal"
    LOG_DONE=1
fi

# The postmaster's standard error when it is a file other than the log: with the logging
# collector on, what the server printed before it ran (a start that failed:
# `FATAL:  could not map anonymous shared memory`). A running postmaster's /proc/PID/fd/2 (and
# fd/1 when another file); a server that is down: --stderr, the unit's `pg_ctl … -l FILE`
# (ExecStart), Debian's startup log. (postmaster.opts holds the server's own arguments, never
# pg_ctl's -l.)
STDERR_FILE='' STDERR_HOW=''
if [ -n "$STDERR_ARG" ]; then
    STDERR_FILE=$STDERR_ARG STDERR_HOW=--stderr
elif [ -n "$PM_STDERR" ]; then
    STDERR_FILE=$PM_STDERR STDERR_HOW=$PM_STDERR_PATH
elif [ -z "$PM" ]; then
    if [ -n "$PM_UNIT" ] && [ -d /run/systemd/system ] && have systemctl; then
        u_l=$(systemctl show -p ExecStart "$PM_UNIT" 2>/dev/null </dev/null | awk '
            { for (i = 1; i <= NF; i++) {
                if (($i == "-l" || $i == "--log") && i < NF) { print $(i + 1); exit }
                if ($i ~ /^--log=/) { sub(/^--log=/, "", $i); print $i; exit } } }')
        case $u_l in /*) STDERR_FILE=$ROOTFS$u_l STDERR_HOW="$PM_UNIT's ExecStart (pg_ctl -l)" ;; esac
    fi
    if [ -z "$STDERR_FILE" ] && [ -n "$DEB_LOG" ] && [ -f "$DEB_LOG" ]; then
        STDERR_FILE=$DEB_LOG STDERR_HOW="Debian's startup log (pg_ctlcluster)"
    fi
fi
if [ -n "$STDERR_FILE" ] && [ -n "$LOGFILE" ] && { [ "$STDERR_FILE" = "$LOGFILE" ] || same_file "$STDERR_FILE" "$LOGFILE"; }; then
    # It is the server log itself (no logging collector).
    STDERR_FILE=
elif [ -z "$STDERR_FILE" ] && [ -n "$PM" ] && [ -n "$PM_STDERR_WHAT" ] && [ "$DRY_RUN" = 0 ]; then
    note "the postmaster's standard error is $PM_STDERR_WHAT: not collected"
fi
if [ -n "$STDERR_FILE" ]; then
    if [ "$LOW_DISK" = 1 ]; then
        record postgres/stderr.log postgres_log "tail -c $LOG_BYTES $STDERR_FILE" 1 0 0 false "skipped: low disk space"
    elif [ -r "$STDERR_FILE" ]; then
        say "the postmaster's standard error: $STDERR_FILE (from $STDERR_HOW)"
        copy_log postgres/stderr.log "$STDERR_FILE" "$LOG_BYTES" stderr "$STDERR_HOW"
    else
        record postgres/stderr.log postgres_log "tail -c $LOG_BYTES $STDERR_FILE" 1 0 0 false \
            "not readable: $STDERR_FILE (found from $STDERR_HOW; $(why_not "$STDERR_FILE"))"
    fi
    # The other stream, when it goes to another file.
    fd_target 1
    if [ -n "$FD_FILE" ] && [ -n "$PM_STDERR" ] && ! same_file "$FD_FILE" "$PM_STDERR" && [ -r "$FD_FILE" ] && [ "$LOW_DISK" = 0 ] &&
        { [ -z "$LOGFILE" ] || ! same_file "$FD_FILE" "$LOGFILE"; }; then
        copy_log postgres/stdout.log "$FD_FILE" "$LOG_BYTES" stderr "$FD_PATH"
    fi
fi

# Syslog: where the settings send it (syslog_facility, syslog_ident) and the lines of that
# identity in the first syslog file that holds some (the destinations rsyslog's or syslogd's
# configuration names for the facility, then /var/log/syslog and /var/log/messages), else in
# the journal.
SYSLOG_JSON=
L_DEST=$(conf_value log_destination)
[ -n "$L_DEST" ] || L_DEST=$(opt_value log_destination)
case $L_DEST in
*syslog*)
    l_fac=$(conf_value syslog_facility)
    l_fac=$(printf '%s' "${l_fac:-LOCAL0}" | tr '[:upper:]' '[:lower:]')
    l_ident=$(conf_value syslog_ident)
    l_ident=${l_ident:-postgres}
    l_dests=$(cat "$ROOTFS/etc/rsyslog.conf" "$ROOTFS"/etc/rsyslog.d/*.conf "$ROOTFS/etc/syslog.conf" 2>/dev/null | awk -v fac="$l_fac" '
        /^[ \t]*(#|\$|$)/ { next }
        NF >= 2 && ($NF ~ /^-?\// ) {
            sel = $1; n = split(sel, parts, ";")
            for (i = 1; i <= n; i++) {
                split(parts[i], fp, "."); k = split(fp[1], facs, ",")
                for (j = 1; j <= k; j++) if ((facs[j] == fac || facs[j] == "*") && fp[2] != "none") { f = $NF; sub(/^-/, "", f); print f; next }
            }
        }' | awk '!seen[$0]++')
    l_from='' l_tried=''
    if [ "$LOW_DISK" = 0 ] && [ "$DRY_RUN" = 0 ]; then
        for l_f in $l_dests /var/log/syslog /var/log/messages; do
            case " $l_tried " in *" $l_f "*) continue ;; esac
            l_tried="$l_tried $l_f"
            [ -r "$ROOTFS$l_f" ] || continue
            DESCRIBE="the lines of ${l_ident}[PID] in $l_f (its last 256 MiB read), passwords masked"
            run postgres/syslog.txt postgres_log 60 "-$LOG_BYTES" sh -c 'tail -c 268435456 "$1" | grep -a "$2\[[0-9]*\]: " | sed -f "$3"' sh "$ROOTFS$l_f" " $l_ident" "$LOG_SED"
            if [ -s "$D/postgres/syslog.txt" ]; then
                l_from=$l_f
                server_log postgres/syslog.txt syslog "$l_f" "log_destination = syslog, facility $l_fac"
                break
            fi
            # Nothing of ours in that one: its entry goes, the next file is tried.
            ENTRIES=$(printf '%s' "$ENTRIES" | grep -v '^{"path":"postgres/syslog.txt",')
            ENTRIES="$ENTRIES
"
            rm -f "$D/postgres/syslog.txt"
        done
        if [ -z "$l_from" ] && have journalctl && [ -d "$ROOTFS/run/systemd/journal" ]; then
            run postgres/syslog.txt postgres_log 60 "-$LOG_BYTES" journalctl -t "$l_ident" -o short-precise --no-pager --since=-3d
            if has_entries "$D/postgres/syslog.txt"; then
                l_from=journal
                server_log postgres/syslog.txt syslog "journalctl -t $l_ident" "log_destination = syslog, the journal"
            else
                amend postgres/syslog.txt "no entries: uid $MY_UID sees nothing of $l_ident in the journal"
            fi
        fi
        [ -n "$l_from" ] || record postgres/syslog.txt postgres_log "grep '${l_ident}[PID]: '" 1 0 0 false \
            "log_destination is $L_DEST, facility $l_fac, ident $l_ident: no readable syslog file holds its lines (tried:${l_tried:- none}), and no journal"
    fi
    jesc "$l_fac"
    l_facj=$J
    jesc "$l_ident"
    l_identj=$J
    l_dj=$(printf '%s\n' "$l_dests" | awk 'NF { gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); printf "%s\"%s\"", (n++ ? ", " : ""), $0 }')
    jesc "$l_from"
    SYSLOG_JSON="{\"facility\": \"$l_facj\", \"ident\": \"$l_identj\", \"destinations\": [$l_dj], \"collected_from\": \"$J\"}"
    ;;
esac

# ---------------------------------------------------------------------------------------------
# Storage: where PostgreSQL's files are, as the postmaster sees them: the data directory, pg_wal
# (a symbolic link to another file system when initdb -X made it), each tablespace (the links
# in pg_tblspc: no server needed) and the log's directory, one `ROLE<TAB>PATH` line each; their
# file systems' sizes and inodes (df, /dev/shm first), the mount lines holding them (mount
# options: errors=remount-ro, ro after an error); pg_wal's segments counted without reading them.

# link_target PATH: where a symbolic link PATH (in the postmaster's view) points, else PATH.
link_target() {
    if [ -L "$ROOTFS$1" ]; then
        l_t=$(readlink "$ROOTFS$1" 2>/dev/null)
        case $l_t in /*) echo "$l_t" ;; '') echo "$1" ;; *) echo "${1%/*}/$l_t" ;; esac
    else
        echo "$1"
    fi
}
S_PATHS=${WORK:-/nonexistent}/storage-paths
if [ "$DRY_RUN" = 0 ]; then
    {
        if [ -n "$PGDATA_DIR" ]; then
            printf 'data_directory\t%s\n' "$PGDATA_DIR"
            [ -e "$DATA/pg_wal" ] && printf 'pg_wal\t%s\n' "$(link_target "$PGDATA_DIR/pg_wal")"
            for s_ts in "$DATA"/pg_tblspc/*; do
                [ -L "$s_ts" ] || continue
                printf 'tablespace %s\t%s\n' "${s_ts##*/}" "$(link_target "$PGDATA_DIR/pg_tblspc/${s_ts##*/}")"
            done
        fi
        if [ -n "$LOGFILE" ]; then
            s_log=${LOGFILE#"$ROOTFS"}
            printf 'log_directory\t%s\n' "${s_log%/*}"
        fi
    } >"$S_PATHS" 2>/dev/null
fi
DESCRIBE="ROLE<TAB>PATH of the data directory, pg_wal, each tablespace (pg_tblspc links) and the log directory"
run storage/paths.txt storage_paths 10 "$CAP" cat "$S_PATHS"

# df of /dev/shm and of each of those paths, in that order.
set -- /dev/shm
if [ -s "$S_PATHS" ]; then
    while IFS=$(printf '\t') read -r _ s_path; do
        [ -n "$s_path" ] && set -- "$@" "$s_path"
    done <"$S_PATHS"
fi
if [ -n "$ROOTFS" ]; then
    # df in our namespace would show our /dev/shm, not the container's: statfs through its root,
    # printed as df -Pk prints it.
    DESCRIBE="stat -f through $ROOTFS, as df -Pk: $*"
    run storage/df.txt df 20 "$CAP" sh -c '
        root=$1; shift
        echo "Filesystem 1024-blocks Used Available Capacity Mounted on"
        for p in "$@"; do
            s=$(stat -f -c "%T %S %b %f %a" "$root$p") || exit 1
            echo "$s $p" | awk "{ t = \$3 * \$2 / 1024; u = (\$3 - \$4) * \$2 / 1024; a = \$5 * \$2 / 1024
                c = (u + a > 0) ? int((u * 100 + u + a - 1) / (u + a)) : 0
                printf \"%s %d %d %d %d%% %s\\n\", \$1, t, u, a, c, \$6 }"
        done' sh "$ROOTFS" "$@"
    run storage/df-collector.txt reference 20 "$CAP" df -Pk "$@"
else
    run storage/df.txt df 20 "$CAP" df -Pk "$@"
    run storage/df-i.txt df 20 "$CAP" df -Pi "$@"
fi

# The mount lines (the postmaster's own mountinfo) of the file systems holding those paths: each
# path's mount is the longest mount point it sits under, the last such line when mounts stack.
S_MI=/proc/self/mountinfo
[ -n "$PM" ] && [ -r "/proc/$PM/mountinfo" ] && S_MI=/proc/$PM/mountinfo
DESCRIBE="the lines of $S_MI whose mount point holds a path of storage/paths.txt or /dev/shm"
run storage/mountinfo.txt mountinfo 10 "$CAP" awk -v list="$S_PATHS" '
    BEGIN { p[1] = "/dev/shm"; n = 1
            while ((getline l < list) > 0) { i = index(l, "\t"); if (i > 0) p[++n] = substr(l, i + 1) } }
    { m = $5; gsub(/\\040/, " ", m)
      for (i = 1; i <= n; i++) if (m == "/" || p[i] == m || index(p[i], m "/") == 1) { print; next } }' "$S_MI"

# pg_wal: its segments (24 hexadecimal digits) counted and summed from one `ls -ln`, the other
# files by type, the archiver's .ready and .done markers; no file is opened.
if [ -n "$DATA" ] && [ -d "$DATA/pg_wal" ]; then
    DESCRIBE="ls -ln $PGDATA_DIR/pg_wal/ and ls of its archive_status, counted (no file read)"
    run storage/pg_wal.txt wal_directory 20 "$CAP" sh -c '
        cd "$1" || exit 1
        ls -ln . | awk "
            \$1 !~ /^[-dl]/ { next }
            { name = \$NF; if (\$1 ~ /^l/ && NF > 2 && \$(NF - 1) == \"->\") name = \$(NF - 2) }
            \$1 ~ /^-/ && length(name) == 24 && name !~ /[^0-9A-F]/ {
                seg++; bytes += \$5; if (first == \"\") first = name; last = name; next }
            name ~ /\\.partial\$/ { partial++; next }
            name ~ /\\.history\$/ { history++; next }
            name ~ /\\.backup\$/ { backup++; next }
            name ~ /^xlogtemp\\./ { temp++; next }
            name == \"archive_status\" || name == \"summaries\" { next }
            { other++ }
            END {
                print \"segments\", seg + 0; print \"segment_bytes\", bytes + 0
                if (first != \"\") { print \"oldest_segment\", first; print \"newest_segment\", last }
                print \"partial\", partial + 0; print \"history\", history + 0; print \"backup\", backup + 0
                print \"xlogtemp\", temp + 0; print \"other\", other + 0 }"
        [ -d archive_status ] || exit 0
        ls archive_status | awk "/\\.ready\$/ { r++ } /\\.done\$/ { d++ } END { print \"archive_ready\", r + 0; print \"archive_done\", d + 0 }"' \
        sh "$DATA/pg_wal/"
fi
if [ -n "$DATA" ] && [ -d "$DATA" ]; then
    run storage/pg_subtrans-files.txt subtrans_files 20 "$CAP" sh -c 'ls "$1" | wc -l' sh "$DATA/pg_subtrans"
fi

# ---------------------------------------------------------------------------------------------
# The service manager's view of the server's unit (its cgroup's `.service`, else the
# packaging's name): how its main process last ended, how often systemd restarted it, and the
# unit's own journal lines (systemd's `Main process exited, code=killed`, `Failed with result`),
# the last 1000 lines, unless the server log above already is that journal. A running server's
# unit was shown with its processes (processes/PID/systemd-unit.txt).

if [ -n "$PM_UNIT" ] && [ -d /run/systemd/system ]; then
    # (A running postmaster's unit is in processes/PID/systemd-unit.txt already.)
    [ "$UNIT_SHOWN" = 1 ] || run systemd/unit.txt systemd_unit 10 "$CAP" systemctl show -p Id -p ActiveState -p SubState \
        -p Result -p ExecMainCode -p ExecMainStatus -p ExecMainStartTimestamp -p ExecMainExitTimestamp \
        -p NRestarts -p OOMScoreAdjust -p MemoryMax -p MemoryHigh "$PM_UNIT"
    if [ "$UNIT_LOG" = 0 ]; then
        run systemd/unit-journal.txt unit_journal 30 "-$((512 * 1024))" \
            journalctl -u "$PM_UNIT" -o short-precise --no-pager -n 1000
        [ "$DRY_RUN" = 0 ] && [ -e "$D/systemd/unit-journal.txt" ] && ! has_entries "$D/systemd/unit-journal.txt" &&
            amend systemd/unit-journal.txt "no entries: uid $MY_UID sees nothing of $PM_UNIT in the journal"
    fi
fi

# ---------------------------------------------------------------------------------------------
# PostgreSQL: one session for every query (one connection slot, at most one refused attempt
# in the log), read-only, short timeouts, never a password prompt. As root, psql runs as the
# data directory's owner: peer authentication as a superuser, whose reserved slots are left
# when every other one is taken.

PGAPPNAME=pgmortem-collect
PGCONNECT_TIMEOUT=5
PGOPTIONS='-c statement_timeout=5000 -c lock_timeout=50 -c default_transaction_read_only=on -c idle_in_transaction_session_timeout=10000'
export PGAPPNAME PGCONNECT_TIMEOUT PGOPTIONS
# postmaster.pid: line 4 the port, line 5 the first socket directory.
PM_PORT=
if [ -n "$DATA" ] && [ -n "$PM" ]; then
    read_pidfile "$DATA"
    is_number "$PF_PORT" && PM_PORT=$PF_PORT
    [ -z "$PG_PORT" ] && PG_PORT=$PM_PORT
    [ -z "$PG_HOST" ] && [ -n "$PF_SOCK" ] && PG_HOST=$ROOTFS$PF_SOCK
fi
PSQL_USER=
[ -z "$PG_USER" ] && [ "$MY_UID" = 0 ] && PSQL_USER=$PG_OWNER
set -- psql -X -w -q -P pager=off -v ON_ERROR_STOP=0 -d postgres
[ -n "$PG_HOST" ] && set -- "$@" -h "$PG_HOST"
[ -n "$PG_PORT" ] && set -- "$@" -p "$PG_PORT"
[ -n "$PG_USER" ] && set -- "$@" -U "$PG_USER"
PSQL_CMD="$*${PSQL_USER:+ (as OS user $PSQL_USER)}"

REDACT="name IN ('primary_conninfo', 'archive_command', 'restore_command', 'archive_cleanup_command', 'recovery_end_command', 'ssl_passphrase_command') OR setting ~* '(password|secret|key)[[:space:]]*='"
# The session's steps, one a line: PATH, KIND, FORMAT (`t` rows only, `h` header and footer)
# and SQL, separated by tabs.
T=$(printf '\t')
STEPS="postgres/version.txt${T}pg_version${T}t${T}SELECT version(), pg_postmaster_start_time(), pg_is_in_recovery(), now();
postgres/pg_settings.txt${T}pg_settings${T}h${T}SELECT name, CASE WHEN $REDACT AND setting <> '' THEN '<redacted>' ELSE setting END AS setting, unit, source, sourcefile, pending_restart FROM pg_settings ORDER BY name;
postgres/activity-summary.txt${T}pg_activity${T}h${T}SELECT state, wait_event_type, wait_event, backend_type, count(*) FROM pg_stat_activity GROUP BY 1, 2, 3, 4 ORDER BY 5 DESC;
postgres/activity.txt${T}reference${T}h${T}SELECT pid, backend_type, state, wait_event_type, wait_event, now() - xact_start AS xact_age, md5(coalesce(query, '')) AS query_md5, left(regexp_replace(query, '''[^'']*''', '''?''', 'g'), 200) AS query FROM pg_stat_activity ORDER BY pid;
postgres/database-ages.txt${T}reference${T}h${T}SELECT datname, age(datfrozenxid), pg_database_size(oid) FROM pg_database ORDER BY 1;
postgres/subtrans-sql.txt${T}reference${T}t${T}SELECT count(*) FROM pg_ls_dir('pg_subtrans');
postgres/replication-slots.txt${T}replication_slots${T}h${T}SELECT slot_name, slot_type, database, temporary, active, active_pid, restart_lsn, confirmed_flush_lsn, pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN coalesce(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()) ELSE pg_current_wal_lsn() END, restart_lsn)::bigint AS retained_bytes, to_jsonb(s) ->> 'wal_status' AS wal_status, to_jsonb(s) ->> 'safe_wal_size' AS safe_wal_size, age(xmin) AS xmin_age, age(catalog_xmin) AS catalog_xmin_age, to_jsonb(s) ->> 'inactive_since' AS inactive_since, to_jsonb(s) ->> 'invalidation_reason' AS invalidation_reason FROM pg_replication_slots s ORDER BY slot_name;
postgres/archiver.txt${T}archiver${T}h${T}SELECT archived_count, last_archived_wal, last_archived_time, failed_count, last_failed_wal, last_failed_time, stats_reset, now() AS collected_at FROM pg_stat_archiver;
postgres/database-xid-ages.txt${T}database_xid_ages${T}h${T}SELECT datname, datallowconn, age(datfrozenxid) AS datfrozenxid_age, mxid_age(datminmxid) AS datminmxid_age FROM pg_database ORDER BY datname;
postgres/checksum-failures.txt${T}checksum_failures${T}h${T}SELECT coalesce(datname, '') AS datname, to_jsonb(d) ->> 'checksum_failures' AS checksum_failures, to_jsonb(d) ->> 'checksum_last_failure' AS checksum_last_failure FROM pg_stat_database d ORDER BY datid;
postgres/tablespaces.txt${T}tablespaces${T}h${T}SELECT oid, spcname, pg_tablespace_location(oid) AS location FROM pg_tablespace ORDER BY oid;
-${T}paths${T}t${T}SELECT 'config_file=' || current_setting('config_file') UNION ALL SELECT 'hba_file=' || current_setting('hba_file') UNION ALL SELECT 'data_directory=' || current_setting('data_directory') UNION ALL SELECT 'logfile=' || coalesce(pg_current_logfile(), '');"

if [ "$DRY_RUN" = 1 ]; then
    printf '%s\n' "$STEPS" | while IFS=$T read -r s_path s_kind _ s_sql; do
        [ "$s_path" = - ] || record "$s_path" "$s_kind" "$PSQL_CMD -c ${s_sql%%,*} ..." 0 0 0 false "one session"
    done
elif ! have psql; then
    printf '%s\n' "$STEPS" | while IFS=$T read -r s_path s_kind _; do
        [ "$s_path" = - ] || echo "$s_path $s_kind"
    done >"$WORK/steps"
    while read -r s_path s_kind; do
        record "$s_path" "$s_kind" "psql -c ..." 127 0 0 false "tool missing: psql"
    done <"$WORK/steps"
elif preflight postgres/session pg_settings "$PSQL_CMD"; then
    # A marker no query result can forge (a query text is the client's to choose).
    MARK="@@pgmortem-$(od -An -N8 -tx1 /dev/urandom 2>/dev/null | tr -d ' \n')$$"
    printf '%s\n' "$STEPS" | awk -F'\t' -v mark="$MARK" '
        { path = $1; fmt = $3; sql = substr($0, length($1 $2 $3) + 4)
          print "\\echo " mark " " path
          print (fmt == "t" ? "\\pset tuples_only on" : "\\pset tuples_only off")
          print sql
          print "\\echo " mark " " path " lines " NR }' >"$WORK/session.sql"
    now_ms; s_start=$NOW_MS
    budget 90 || BUDGET=1
    s_secs=$BUDGET
    # psql reads the session from stdin, so it runs as another user without reading our files.
    s_rc=0
    owner_run "$PSQL_USER" "$s_secs" "$@" -A -F '|' -f - <"$WORK/session.sql" >"$WORK/session.out" 2>"$WORK/session.err" || s_rc=$?
    now_ms; s_end=$NOW_MS
    s_first_err=$(grep -v -e '^psql:<stdin>:[0-9]*: NOTICE' -e '^psql:<stdin>:[0-9]*: WARNING' "$WORK/session.err" | head -c 300 | head -n 1)
    [ "$s_rc" = 124 ] && s_first_err="timed out after ${s_secs}s; $s_first_err"
    # Split the output at the markers; a step's errors are psql's lines for its SQL line.
    mkdir -p "$D/postgres"
    awk -v mark="$MARK" -v dir="$D" -v work="$WORK" '
        $1 == mark && NF == 2 { out = ($2 == "-") ? work "/paths" : dir "/" $2; printf "" > out; next }
        $1 == mark && NF == 4 { close(out); out = ""; next }
        out != "" { print > out }' "$WORK/session.out"
    printf '%s\n' "$STEPS" | awk -F'\t' '{ print $1, $2, NR }' >"$WORK/steps"
    while read -r s_path s_kind s_n; do
        # The SQL of step N is line 4N - 1 of the session script.
        s_err=$(sed -n "s/^psql:<stdin>:$((4 * s_n - 1)): //p" "$WORK/session.err" | grep -v -e '^NOTICE' -e '^WARNING' | head -n 1)
        [ "$s_path" = - ] && continue
        s_bytes=$(size_of "$D/$s_path")
        s_capped=false
        if [ "$s_bytes" -gt "$CAP" ]; then
            head -c "$CAP" "$D/$s_path" >"$WORK/cut" && mv "$WORK/cut" "$D/$s_path"
            s_bytes=$CAP s_capped=true
        fi
        if [ "$s_bytes" -gt 0 ] && [ -z "$s_err" ]; then
            record "$s_path" "$s_kind" "$PSQL_CMD: ${s_path##*/} query" 0 $((s_end - s_start)) "$s_bytes" "$s_capped" "one session"
        else
            rm -f "$D/$s_path"
            s_st=$s_rc
            [ "$s_st" = 0 ] && s_st=1
            record "$s_path" "$s_kind" "$PSQL_CMD: ${s_path##*/} query" "$s_st" $((s_end - s_start)) 0 false "${s_err:-$s_first_err}"
        fi
    done <"$WORK/steps"
fi

# What the server told us, for what was not found without it.
if [ -s "${WORK:-/nonexistent}/paths" ]; then
    s_conf=$(sed -n 's/^config_file=//p' "$WORK/paths")
    s_data=$(sed -n 's/^data_directory=//p' "$WORK/paths")
    s_log=$(sed -n 's/^logfile=//p' "$WORK/paths")
    [ -z "$PGDATA_DIR" ] && [ -n "$s_data" ] && PGDATA_DIR=$s_data && DATA=$ROOTFS$s_data
    if [ -n "$s_conf" ] && [ ! -e "$D/postgres/postgresql.conf" ] && [ -r "$ROOTFS$s_conf" ]; then
        CONF=$s_conf
        AUTO=$PGDATA_DIR/postgresql.auto.conf
        export CONF AUTO
        DESCRIBE="awk (includes followed, postgresql.auto.conf appended, secrets masked) $CONF"
        run postgres/postgresql.conf pg_conf 20 "$CAP" awk -v q="'" "$CONF_AWK"
    fi
    if [ "$LOG_DONE" = 0 ] && [ -n "$s_log" ]; then
        case $s_log in /*) LOGFILE=$ROOTFS$s_log ;; *) LOGFILE=$DATA/$s_log ;; esac
        LOG_HOW="pg_current_logfile()"
        collect_logs
    fi
fi
if [ "$LOG_DONE" = 0 ]; then
    if [ -z "$PGDATA_DIR" ]; then
        l_why="no data directory known: give -D, or --log FILE"
    elif [ ! -x "$DATA" ] || [ ! -r "$DATA" ]; then
        l_why="the data directory $PGDATA_DIR cannot be read by uid $MY_UID: run as root or as ${PG_OWNER:-its owner}, or give --log FILE"
    else
        l_why="none in current_logfiles, log_directory or the packaging's places: give --log FILE"
    fi
    record postgres/server.log postgres_log "tail -c $LOG_BYTES" 1 0 0 false "no readable server log found ($l_why)"
fi

# ---------------------------------------------------------------------------------------------
# Settings from the server binary when the server could not be asked (down, every slot taken,
# no psql, a role refused): `postgres -C NAME` as the data directory's owner reads the same
# files the server reads. Printed in pg_settings' form with the unit of each value.

C_SETTINGS='server_version_num: shared_buffers:8kB huge_pages: huge_page_size:kB work_mem:kB
hash_mem_multiplier: maintenance_work_mem:kB autovacuum_work_mem:kB max_connections:
superuser_reserved_connections: reserved_connections: autovacuum_max_workers: max_worker_processes:
max_parallel_workers: max_parallel_workers_per_gather: shared_memory_size:MB
shared_memory_size_in_huge_pages: dynamic_shared_memory_type: min_dynamic_shared_memory:MB
temp_buffers:8kB wal_buffers:8kB max_wal_senders: max_locks_per_transaction:
max_prepared_transactions: log_line_prefix: log_timezone: lc_messages: logging_collector:
log_destination: log_directory: log_filename: log_temp_files:kB debug_parallel_query:
force_parallel_mode: debug_discard_caches: zero_damaged_pages: ignore_checksum_failure:
ignore_system_indexes: ignore_invalid_pages: fsync: full_page_writes: data_sync_retry:
allow_system_table_mods: pre_auth_delay:s post_auth_delay:s track_io_timing: max_wal_size:MB
min_wal_size:MB wal_keep_size:MB wal_keep_segments: max_slot_wal_keep_size:MB archive_mode:
archive_command: archive_library: archive_timeout:s checkpoint_timeout:s
autovacuum_freeze_max_age: autovacuum_multixact_freeze_max_age:'
if [ "$DRY_RUN" = 1 ]; then
    record postgres/pg_settings-postgres-C.txt pg_settings "${PG_SERVER:-postgres} -D ${PGDATA_DIR:-PGDATA} -C NAME, for $(echo "$C_SETTINGS" | wc -w | tr -d ' ') settings" 0 0 0 false \
        "only when the session gives no pg_settings"
elif [ ! -s "$D/postgres/pg_settings.txt" ]; then
    c_why=
    if [ -z "$PGDATA_DIR" ]; then
        c_why="no data directory known (give -D)"
    elif [ "$MY_UID" != 0 ] && [ "$(id -un)" != "$PG_OWNER" ]; then
        c_why="needs root or the data directory's owner ${PG_OWNER:-?}, not uid $MY_UID"
    elif [ -z "$PG_MAJOR" ]; then
        c_why="$PGDATA_DIR is not a data directory uid $MY_UID can read (no PG_VERSION)"
    elif [ "$PG_OWNER" = root ]; then
        c_why="$PGDATA_DIR belongs to root, and postgres refuses to run as root"
    elif [ -z "$PG_SERVER" ]; then
        c_why="no postgres binary of version ${PG_MAJOR:-?} found (give --bindir)"
    fi
    c_conf_arg=
    [ -n "$CONF" ] && [ "$CONF" != "$PGDATA_DIR/postgresql.conf" ] && c_conf_arg="config_file=$CONF"
    c_cmd="$PG_SERVER -D $PGDATA_DIR${c_conf_arg:+ -c $c_conf_arg} -C NAME${PG_OWNER:+ (as $PG_OWNER)}"
    if [ -n "$c_why" ]; then
        record postgres/pg_settings-postgres-C.txt pg_settings "$c_cmd" 1 0 0 false "not run: $c_why"
    elif preflight postgres/pg_settings-postgres-C.txt pg_settings "$c_cmd"; then
        now_ms; c_start=$NOW_MS
        {
            echo "name|setting|unit|source|sourcefile|pending_restart"
            c_n=0
            for c_item in $C_SETTINGS; do
                c_name=${c_item%%:*}
                set -- "$PG_SERVER" -D "$PGDATA_DIR"
                [ -n "$c_conf_arg" ] && set -- "$@" -c "$c_conf_arg"
                c_val=$(cd / && owner_run "$PG_OWNER" 10 "$@" -C "$c_name" </dev/null 2>>"$WORK/c.err") || continue
                case $c_val in *'
'*) continue ;; esac
                # A command can hold a password: whether one is set, never what it is.
                case $c_name in archive_command) [ -n "$c_val" ] && c_val='<redacted>' ;; esac
                printf '%s|%s|%s|postgres -C||f\n' "$c_name" "$c_val" "${c_item#*:}"
                c_n=$((c_n + 1))
            done
            echo "($c_n rows)"
        } >"$D/postgres/pg_settings-postgres-C.txt" 2>/dev/null
        now_ms; c_end=$NOW_MS
        c_bytes=$(size_of "$D/postgres/pg_settings-postgres-C.txt")
        c_note=$(grep -v 'unrecognized configuration parameter' "$WORK/c.err" 2>/dev/null | head -c 300 | head -n 1)
        if grep -q '^[a-z_]*|' "$D/postgres/pg_settings-postgres-C.txt" 2>/dev/null; then
            record postgres/pg_settings-postgres-C.txt pg_settings "$c_cmd" 0 $((c_end - c_start)) "$c_bytes" false \
                "the server could not be asked: its binary's own reading of its configuration${c_note:+; $c_note}"
        else
            rm -f "$D/postgres/pg_settings-postgres-C.txt"
            record postgres/pg_settings-postgres-C.txt pg_settings "$c_cmd" 1 $((c_end - c_start)) 0 false "${c_note:-postgres -C printed nothing}"
        fi
    fi
fi

# ---------------------------------------------------------------------------------------------
# perf (optional)

copy perf/perf_event_paranoid.txt reference /proc/sys/kernel/perf_event_paranoid
copy perf/kptr_restrict.txt reference /proc/sys/kernel/kptr_restrict
copy_flush
if [ "$PERF_SECONDS" -gt 0 ]; then
    paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)
    if ! have perf; then
        record perf/perf-script.txt perf_script "perf record" 127 0 0 false "tool missing: perf"
    elif [ "$MY_UID" != 0 ] && [ "$paranoid" -gt 1 ]; then
        record perf/perf-script.txt perf_script "perf record" 1 0 0 false "not root and perf_event_paranoid=$paranoid"
    elif [ "$DRY_RUN" = 1 ]; then
        record perf/perf-script.txt perf_script "perf record -e cpu-clock -e cpu-migrations -F 99 -a -g -- sleep $PERF_SECONDS; perf script --header" 0 0 0 false ""
    elif ! free_ok; then
        record perf/perf-script.txt perf_script "perf record" 1 0 0 false "skipped: low disk space"
    elif ! budget $((PERF_SECONDS + 60)) || [ "$BUDGET" -lt $((PERF_SECONDS + 60)) ]; then
        record perf/perf-script.txt perf_script "perf record" 1 0 0 false "skipped: less than $((PERF_SECONDS + 60)) s left of --max-time $MAX_TIME"
    else
        say "perf record for $PERF_SECONDS s"
        # Two events in one recording. cpu-clock: the same sampling clock on every host (virtual
        # machines often have no hardware cycles event), each sample weighing its period in ns.
        # cpu-migrations: each sample's period is the number of migrations since the one before
        # on that CPU, so the periods add up to the count per CPU and per second, with the
        # stacks of the tasks that moved; at most 99 samples a second per CPU, whatever the rate.
        run perf/perf-record.txt reference $((PERF_SECONDS + 30)) "$CAP" \
            perf record -e cpu-clock -e cpu-migrations -F 99 -a -g -o "$WORK/perf.data" -- sleep "$PERF_SECONDS"
        if [ ! -s "$WORK/perf.data" ]; then
            # perf could not open one of the events (it leaves an empty file): the profile alone.
            rm -f "$WORK/perf.data"
            run perf/perf-record-cpu-clock.txt reference $((PERF_SECONDS + 30)) "$CAP" \
                perf record -e cpu-clock -F 99 -a -g -o "$WORK/perf.data" -- sleep "$PERF_SECONDS"
        fi
        if [ -s "$WORK/perf.data" ]; then
            run perf/perf-script.txt perf_script 300 "$PERF_SCRIPT_BYTES" perf script --header -i "$WORK/perf.data"
            run perf/buildids.txt reference 60 "$CAP" perf buildid-list -i "$WORK/perf.data"
            rm -f "$WORK/perf.data"
        fi
    fi
fi

if [ "$DRY_RUN" = 1 ]; then
    say "dry run: nothing collected, nothing written"
    exit 0
fi

# ---------------------------------------------------------------------------------------------
# Manifest and archive

ENDED=$(utc_now)
OUT=$OUTDIR/$NAME.tar.gz
[ "$TO_STDOUT" = 1 ] && OUT=$WORK/$NAME.tar.gz
if [ -s "$D/postgres/pg_settings.txt" ]; then
    SETTINGS_FROM=pg_settings
elif [ -s "$D/postgres/pg_settings-postgres-C.txt" ]; then
    SETTINGS_FROM="postgres -C"
elif [ -s "$D/postgres/postgresql.conf" ]; then
    SETTINGS_FROM=postgresql.conf
else
    SETTINGS_FROM=none
fi

# write_manifest: manifest.json from the entries; false when it could not be written whole.
write_manifest() {
    {
        printf '{\n  "format": "pgmortem.bundle",\n  "format_version": %s,\n' "$FORMAT_VERSION"
        printf '  "collector": "pgmortem-collect.sh",\n  "collector_version": "%s",\n' "$COLLECTOR_VERSION"
        printf '  "arguments": "%s",\n  "uid": %s,\n' "$(json_escape "$ARGUMENTS")" "$MY_UID"
        printf '  "started": "%s",\n  "ended": "%s",\n' "$STARTED" "$ENDED"
        printf '  "postmaster_pid": %s,\n  "data_directory": "%s",\n  "settings_from": "%s",\n' \
            "${PM:-null}" "$(json_escape "$PGDATA_DIR")" "$SETTINGS_FROM"
        printf '  "postmaster_state": "%s",\n  "postmaster_found_from": "%s",\n' "$PM_STATE" "$(json_escape "$PM_FROM")"
        printf '  "postmaster_started": %s,\n  "port": %s,\n  "postmaster_memory_cgroup": "%s",\n' \
            "${PM_START_UTC:+\"}${PM_START_UTC:-null}${PM_START_UTC:+\"}" "${PM_PORT:-null}" "$(json_escape "$PM_MEMCG")"
        # shellcheck disable=SC2086 # one word per pid
        printf '  "processes": {"collected": %s, "left_out": %s, "gone": [%s]},\n' "$((PROCS_TREE - ${PROCS_LEFT_OUT:-0} - $(set -- $PROCS_GONE; echo $#)))" \
            "${PROCS_LEFT_OUT:-0}" "$(printf '%s\n' "$PROCS_GONE" | awk '{ for (i = 1; i <= NF; i++) printf "%s%s", (n++ ? ", " : ""), $i }')"
        printf '  "other_postmasters": [%s%s%s],\n' "${OTHERS:+
}" "$OTHERS" "${OTHERS:+
  }"
        printf '  "log_destination": "%s",\n  "syslog": %s,\n' "$(json_escape "${L_DEST:-}")" "${SYSLOG_JSON:-null}"
        printf '  "server_logs": [%s%s%s],\n' "${SERVER_LOGS:+
}" "$SERVER_LOGS" "${SERVER_LOGS:+
  }"
        printf '  "log_files_left_out": [%s%s%s],\n  "log_files_left_out_count": %s,\n' "${LOGS_LEFT_OUT:+
}" "$LOGS_LEFT_OUT" "${LOGS_LEFT_OUT:+
  }" "$LOGS_LEFT_N"
        printf '  "notes": [%s%s%s],\n' "${NOTES:+
}" "$NOTES" "${NOTES:+
  }"
        printf '  "files": [\n'
        printf '%s' "$ENTRIES" | sed -e 's/^/    /' -e '$!s/$/,/'
        printf '  ]\n}\n'
    } >"$D/manifest.json" 2>/dev/null && [ "$(tail -c 2 "$D/manifest.json")" = "}" ]
}

# drop_biggest: removes the largest collected file to make room for the archive (files of no
# kind pgmortem reads first, the clock readings last: a few bytes that put every kernel time on
# the wall clock), and says so in its manifest entry; false when none is left.
drop_biggest() {
    d_unknown=$(printf '%s' "$ENTRIES" | sed -n -e 's/^{"path":"\([^"]*\)","kind":"unknown".*/\1/p' \
        -e 's/^{"path":"\([^"]*\)","kind":"reference".*/\1/p')
    d_line=$(cd "$D" && find . -type f ! -path ./manifest.json -exec wc -c {} + 2>/dev/null |
        awk -v u="$d_unknown" 'BEGIN { n = split(u, l, "\n"); for (i = 1; i <= n; i++) unk["./" l[i]] = 1 }
            $2 != "total" { print ($2 in unk) ? 2 : (($2 ~ /^\.\/clock\//) ? 0 : 1), $1, substr($2, 3) }' |
        sort -n -k1,1 -k2,2 | tail -n 1 | cut -d ' ' -f 2-)
    d_file=$D/${d_line#* }
    [ -n "$d_line" ] && [ -f "$d_file" ] || return 1
    d_rel=${d_file#"$D"/}
    say "no room for the archive in $OUTDIR: dropped $d_rel (${d_line%% *} bytes)"
    amend "$d_rel" "not kept: no room for it in the archive in $OUTDIR (${d_line%% *} bytes)"
}

# The archive is written next to the collected files; on a full disk the largest files go
# first until the rest fits, each one named in the manifest.
while ! { write_manifest && tar -C "$WORK" -czf "$OUT" "$NAME" 2>/dev/null; }; do
    rm -f "$OUT"
    drop_biggest || die "could not write $OUT: no room left in $OUTDIR even for the manifest"
done
if [ "$TO_STDOUT" = 1 ]; then
    say "writing the archive to stdout ($(size_of "$OUT") bytes)"
    cat "$OUT"
    exit 0
fi
chmod 600 "$OUT" 2>/dev/null
say "wrote $OUT ($(size_of "$OUT") bytes)"
printf '%s\n' "$OUT"
