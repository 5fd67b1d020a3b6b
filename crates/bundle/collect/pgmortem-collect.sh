#!/bin/sh
# shellcheck disable=SC2016 # awk and sh -c programs are single-quoted on purpose
# pgmortem-collect.sh — collect a pgmortem support bundle on a PostgreSQL host.
#
# Usage:
#   sh pgmortem-collect.sh [-o OUTDIR] [-D PGDATA] [-h PGHOST] [-p PGPORT] [-U USER]
#                          [--perf SECONDS] [--log-bytes N] [--log FILE] [--help]
#
#   -o OUTDIR       where the bundle is written (default: $TMPDIR or /tmp)
#   -D PGDATA       the data directory (finds the postmaster, the current log file, pg_subtrans)
#   -h PGHOST       host or socket directory for psql (default: psql's own default)
#   -p PGPORT       port for psql
#   -U USER         database role for psql; needs pg_monitor (or superuser) for everything
#   --perf SECONDS  also record `perf record -F 99 -a -g` for SECONDS (default: off)
#   --log-bytes N   bytes of the server log to keep, from its end (default 20 MiB)
#   --log FILE      the server log (default: from PGDATA/current_logfiles, pg_current_logfile(),
#                   else the newest /var/log/postgresql/*.log)
#
# Prints progress on stderr and the bundle's path, last, on stdout:
#   OUTDIR/pgmortem-<host>-<utc>.tar.gz
#
# What it reads: kernel log, /proc and /sys memory and CPU state, the postgres processes'
# /proc files and memory cgroup, df, psql queries (read-only, with statement and lock
# timeouts), the last bytes of the server log with password literals redacted.
# What it never reads: .pgpass, /proc/*/environ, pg_hba.conf/pg_ident.conf contents (only a
# count of rules per method), postgresql.auto.conf, keys, table data. Passwords are never
# passed on the command line; psql never prompts (-w): use peer auth or a .pgpass.
#
# Every step runs under timeout, nice and ionice, its output capped in bytes; a missing tool or
# a failing step is recorded in manifest.json (exit status, duration, size), never fatal.
# POSIX sh: runs under dash, bash and busybox ash.

set -u
umask 077
LC_ALL=C
LANG=C
export LC_ALL LANG

COLLECTOR_VERSION=0.1.0
FORMAT_VERSION=1
CAP=$((8 * 1024 * 1024))        # default cap per item, bytes
KERNEL_LOG_BYTES=$((5 * 1024 * 1024))
PERF_SCRIPT_BYTES=$((200 * 1024 * 1024))
MAX_PROCS=500                   # postgres processes whose /proc files are read
MIN_FREE_KB=$((1024 * 1024))    # disk guard: at least 1 GiB and 5% free for heavy items

OUTDIR=${TMPDIR:-/tmp}
PGDATA_DIR=
PG_HOST=
PG_PORT=
PG_USER=
PERF_SECONDS=0
LOG_BYTES=$((20 * 1024 * 1024))
LOGFILE_ARG=
ARGUMENTS=$*

say() { printf 'pgmortem-collect: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }

usage() {
    sed -n '3,/^$/s/^# \{0,1\}//p' "$0" 2>/dev/null ||
        echo "usage: sh pgmortem-collect.sh [-o OUTDIR] [-D PGDATA] [-h PGHOST] [-p PGPORT] [-U USER] [--perf SECONDS] [--log-bytes N]"
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
    --perf) is_number "${2:-}" || die "--perf needs seconds"; PERF_SECONDS=$2; shift 2 ;;
    --log-bytes) is_number "${2:-}" || die "--log-bytes needs a number"; LOG_BYTES=$2; shift 2 ;;
    --log) [ $# -ge 2 ] || die "--log needs a file"; LOGFILE_ARG=$2; shift 2 ;;
    --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[ -n "$PG_PORT" ] && ! is_number "$PG_PORT" && die "-p needs a number"

have() { command -v "$1" >/dev/null 2>&1; }

now_ms() {
    n_t=$(date -u +%s%N 2>/dev/null)
    case $n_t in
    *[!0-9]* | '') n_t=$(date -u +%s); echo $((n_t * 1000)) ;;
    *) echo $((n_t / 1000000)) ;;
    esac
}

utc_now() {
    u_t=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ 2>/dev/null)
    case $u_t in
    *N*) date -u +%Y-%m-%dT%H:%M:%SZ ;;
    *) echo "$u_t" ;;
    esac
}

# ---------------------------------------------------------------------------------------------
# Output directory and disk guard

[ -d "$OUTDIR" ] || die "output directory $OUTDIR does not exist"
HOST=$(uname -n 2>/dev/null | tr -cd 'A-Za-z0-9.-' | cut -c1-63)
[ -n "$HOST" ] || HOST=host
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
NAME=pgmortem-$HOST-$STAMP
WORK=$(mktemp -d "$OUTDIR/.pgmortem-collect.XXXXXX") || die "cannot create a directory in $OUTDIR"
D=$WORK/$NAME
mkdir "$D" || die "cannot create $D"
# Manifest entries are kept in memory: on a full disk they must survive to the end.
ENTRIES=
trap 'rm -rf "$WORK"' EXIT
trap 'rm -rf "$WORK"; exit 130' INT TERM

# free_ok: true when the output file system has at least max(1 GiB, 5%) free; sets AVAIL_KB.
AVAIL_KB=
free_ok() {
    f_line=$(df -Pk "$OUTDIR" 2>/dev/null | awk 'NR == 2 { print $2, $4 }')
    f_size=${f_line% *}
    f_avail=${f_line#* }
    is_number "$f_size" && is_number "$f_avail" || return 0
    AVAIL_KB=$f_avail
    f_need=$((f_size / 20))
    [ "$f_need" -lt "$MIN_FREE_KB" ] && f_need=$MIN_FREE_KB
    [ "$f_avail" -ge "$f_need" ]
}

LOW_DISK=0
if ! free_ok; then
    LOW_DISK=1
    say "less than max(1 GiB, 5%) free in $OUTDIR: heavy items (perf, server log) are skipped"
    # Every item is capped to an eighth of what is free, so the small ones still fit.
    if is_number "$AVAIL_KB"; then
        l_cap=$((AVAIL_KB * 1024 / 8))
        [ "$l_cap" -lt 4096 ] && l_cap=4096
        [ "$CAP" -gt "$l_cap" ] && CAP=$l_cap
        [ "$KERNEL_LOG_BYTES" -gt "$l_cap" ] && KERNEL_LOG_BYTES=$l_cap
    fi
fi

# ---------------------------------------------------------------------------------------------
# Running one item

json_escape() {
    printf '%s' "$1" | tr -d '\000-\037\200-\377' | sed 's/\\/\\\\/g; s/"/\\"/g'
}

# record PATH KIND COMMAND STATUS DURATION_MS BYTES CAPPED NOTE
record() {
    r_entry=$(printf '{"path":"%s","kind":"%s","command":"%s","status":%s,"duration_ms":%s,"bytes":%s,"capped":%s,"note":"%s"}' \
        "$(json_escape "$1")" "$2" "$(json_escape "$3")" "$4" "$5" "$6" "$7" "$(json_escape "$8")")
    ENTRIES="$ENTRIES$r_entry
"
}

# wrap SECONDS CMD [ARGS...]: the command under timeout, nice and ionice when they exist.
HAVE_NICE=0 HAVE_IONICE=0 HAVE_TIMEOUT=0
have nice && HAVE_NICE=1
have ionice && ionice -c3 true 2>/dev/null && HAVE_IONICE=1
have timeout && HAVE_TIMEOUT=1
[ "$HAVE_TIMEOUT" = 1 ] || say "no timeout command: steps run without a time limit"
wrap() {
    w_secs=$1
    shift
    [ "$HAVE_NICE" = 1 ] && set -- nice -n 19 "$@"
    [ "$HAVE_IONICE" = 1 ] && set -- ionice -c3 "$@"
    [ "$HAVE_TIMEOUT" = 1 ] && set -- timeout -k 5 "$w_secs" "$@"
    "$@"
}

# run PATH KIND SECONDS CAP CMD [ARGS...]: CMD's stdout into the bundle at PATH, capped to CAP
# bytes (negative CAP keeps the last -CAP bytes instead of the first); stderr's first line
# goes to the manifest's note.
run() {
    r_path=$1 r_kind=$2 r_secs=$3 r_cap=$4
    shift 4
    r_out=$D/$r_path
    mkdir -p "${r_out%/*}"
    r_cmd=$*
    if ! have "$1"; then
        record "$r_path" "$r_kind" "$r_cmd" 127 0 0 false "tool missing: $1"
        return 0
    fi
    r_start=$(now_ms)
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
    r_end=$(now_ms)
    r_rc=$(printf '%s\n' "$r_st" | sed -n 's/^rc=//p' | head -n 1)
    is_number "$r_rc" || r_rc=255
    r_w=$(printf '%s\n' "$r_st" | sed -n 's/^w=//p' | head -n 1)
    r_bytes=$(wc -c <"$r_out" 2>/dev/null | tr -d ' ')
    is_number "$r_bytes" || r_bytes=0
    r_capped=false
    [ "$r_bytes" -ge "${r_cap#-}" ] && r_capped=true
    r_note=$(head -c 300 "$WORK/err" 2>/dev/null | head -n 1)
    [ "$r_rc" = 124 ] && r_note="timed out after ${r_secs}s; $r_note"
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

# copy PATH KIND SOURCE: one small file (a /proc or /sys file) through run.
copy() {
    if [ -r "$3" ]; then
        run "$1" "$2" 10 "$CAP" cat "$3"
    else
        record "$1" "$2" "cat $3" 1 0 0 false "not readable: $3"
    fi
}

say "collecting into $D"
STARTED=$(utc_now)

# ---------------------------------------------------------------------------------------------
# Clock: the three readings back to back, so kernel monotonic times map to UTC.

mkdir -p "$D/clock"
c_start=$(now_ms)
c_up=$(cat /proc/uptime 2>/dev/null)
c_now=$(utc_now)
c_bt=$(grep '^btime ' /proc/stat 2>/dev/null)
c_end=$(now_ms)
for c_item in uptime:/proc/uptime date:'date -u +%Y-%m-%dT%H:%M:%S.%NZ' btime:'grep btime /proc/stat'; do
    c_kind=${c_item%%:*}
    case $c_kind in uptime) c_val=$c_up ;; date) c_val=$c_now ;; *) c_val=$c_bt ;; esac
    c_note=
    if ! printf '%s\n' "$c_val" >"$D/clock/$c_kind.txt" 2>/dev/null; then
        rm -f "$D/clock/$c_kind.txt"
        c_note="not kept: writing it to $OUTDIR failed; the reading was: $c_val"
    fi
    c_bytes=$(wc -c <"$D/clock/$c_kind.txt" 2>/dev/null | tr -d ' ')
    is_number "$c_bytes" || c_bytes=0
    record "clock/$c_kind.txt" "$c_kind" "${c_item#*:}" 0 $((c_end - c_start)) "$c_bytes" false "$c_note"
done

# ---------------------------------------------------------------------------------------------
# Identity

run identity/uname.txt reference 10 "$CAP" uname -a
copy identity/os-release.txt reference /etc/os-release
copy identity/proc-version.txt reference /proc/version
copy identity/cmdline.txt reference /proc/cmdline
run identity/id.txt reference 10 "$CAP" id
run identity/virt.txt reference 10 "$CAP" systemd-detect-virt
run identity/dmi.txt reference 10 "$CAP" sh -c 'grep -H . /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name 2>/dev/null'

# ---------------------------------------------------------------------------------------------
# Kernel log: raw (monotonic stamps) and -T (wall clock), or the journal when dmesg is closed.

run kernel/dmesg.txt kernel_log 60 "-$KERNEL_LOG_BYTES" dmesg
run kernel/dmesg-T.txt kernel_log 60 "-$KERNEL_LOG_BYTES" dmesg -T
if [ ! -s "$D/kernel/dmesg.txt" ]; then
    run kernel/journal-k.txt kernel_log 60 "-$KERNEL_LOG_BYTES" \
        journalctl -k -o short-precise --no-pager --since=-3d
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

# ---------------------------------------------------------------------------------------------
# Processes: every postgres process by comm (never another process's arguments)

run processes/ps.txt reference 20 "$CAP" ps -eo pid,ppid,user,comm,stat,ni,rss,vsz,pcpu,etimes,wchan:32

PG_PIDS=
PM_PIDS=
p_count=0
for p_dir in /proc/[0-9]*; do
    p_pid=${p_dir#/proc/}
    p_comm=$(cat "$p_dir/comm" 2>/dev/null) || continue
    case $p_comm in postgres | postmaster) ;; *) continue ;; esac
    p_count=$((p_count + 1))
    [ "$p_count" -gt "$MAX_PROCS" ] && break
    PG_PIDS="$PG_PIDS $p_pid"
    p_ppid=$(awk '/^PPid:/ { print $2 }' "$p_dir/status" 2>/dev/null)
    p_pcomm=$(cat "/proc/$p_ppid/comm" 2>/dev/null)
    case $p_pcomm in postgres | postmaster) ;; *) PM_PIDS="$PM_PIDS $p_pid" ;; esac
done
if [ -n "$PGDATA_DIR" ] && [ -r "$PGDATA_DIR/postmaster.pid" ]; then
    p_pm=$(head -n 1 "$PGDATA_DIR/postmaster.pid")
    is_number "$p_pm" && [ -d "/proc/$p_pm" ] && PM_PIDS=" $p_pm"
fi
say "postgres processes:$PG_PIDS (postmaster:$PM_PIDS)"

: >"$WORK/titles"
for p_pid in $PG_PIDS; do
    # A process that exited since it was listed (or a zombie) has no command line left.
    p_title=$(tr '\000' ' ' <"/proc/$p_pid/cmdline" 2>/dev/null)
    [ -n "$p_title" ] && printf '%s %s\n' "$p_pid" "$p_title" >>"$WORK/titles"
done
run processes/postgres-titles.txt process_titles 10 "$CAP" cat "$WORK/titles"

for p_pid in $PG_PIDS; do
    copy "processes/$p_pid/status" proc_status "/proc/$p_pid/status"
    copy "processes/$p_pid/smaps_rollup" smaps_rollup "/proc/$p_pid/smaps_rollup"
    copy "processes/$p_pid/oom_score_adj" oom_score_adj "/proc/$p_pid/oom_score_adj"
    copy "processes/$p_pid/cgroup" reference "/proc/$p_pid/cgroup"
    copy "processes/$p_pid/limits" proc_limits "/proc/$p_pid/limits"
done

# The postmaster's memory cgroup: v2 (0::/path) and v1 (N:memory:/path).
# mountinfo: mount point is field 5; after the "-" separator come fstype, source, options.
MOUNTS_AWK='{ for (i = 7; i < NF; i++) if ($i == "-") break; t = $(i + 1); o = $(i + 3) }'
v1_root=$(awk "$MOUNTS_AWK"' t == "cgroup" && o ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo 2>/dev/null)
v2_root=$(awk "$MOUNTS_AWK"' t == "cgroup2" { print $5; exit }' /proc/self/mountinfo 2>/dev/null)
for p_pid in $PM_PIDS; do
    [ -r "/proc/$p_pid/cgroup" ] || continue
    g_v2=$(awk -F: '$1 == "0" && $2 == "" { print $3; exit }' "/proc/$p_pid/cgroup")
    g_v1=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' "/proc/$p_pid/cgroup")
    if [ -n "$g_v2" ] && [ -n "$v2_root" ] && [ -e "$v2_root$g_v2/memory.max" ]; then
        for g_f in memory.max memory.current memory.peak memory.swap.max memory.swap.current; do
            [ -e "$v2_root$g_v2/$g_f" ] && copy "cgroup/$p_pid/$g_f" cgroup_value "$v2_root$g_v2/$g_f"
        done
        copy "cgroup/$p_pid/memory.events" cgroup_events "$v2_root$g_v2/memory.events"
        copy "cgroup/$p_pid/memory.stat" cgroup_stat "$v2_root$g_v2/memory.stat"
    fi
    if [ -n "$g_v1" ] && [ -n "$v1_root" ] && [ -d "$v1_root$g_v1" ]; then
        for g_f in memory.limit_in_bytes memory.usage_in_bytes memory.max_usage_in_bytes \
            memory.failcnt memory.memsw.limit_in_bytes memory.memsw.usage_in_bytes; do
            [ -e "$v1_root$g_v1/$g_f" ] && copy "cgroup/$p_pid/$g_f" cgroup_value "$v1_root$g_v1/$g_f"
        done
        copy "cgroup/$p_pid/memory.oom_control" cgroup_events "$v1_root$g_v1/memory.oom_control"
        copy "cgroup/$p_pid/memory.stat" cgroup_stat "$v1_root$g_v1/memory.stat"
    fi
done

# ---------------------------------------------------------------------------------------------
# PostgreSQL (read-only session, short timeouts, never a password prompt)

PGAPPNAME=pgmortem-collect
PGCONNECT_TIMEOUT=5
PGOPTIONS='-c statement_timeout=5000 -c lock_timeout=50 -c default_transaction_read_only=on -c idle_in_transaction_session_timeout=10000'
export PGAPPNAME PGCONNECT_TIMEOUT PGOPTIONS
set -- psql -X -w -v ON_ERROR_STOP=0 -d postgres
[ -n "$PG_HOST" ] && set -- "$@" -h "$PG_HOST"
[ -n "$PG_PORT" ] && set -- "$@" -p "$PG_PORT"
[ -n "$PG_USER" ] && set -- "$@" -U "$PG_USER"

# sql PATH KIND SQL [PSQL OPTIONS...]
sql() {
    s_path=$1 s_kind=$2 s_sql=$3
    shift 3
    run "$s_path" "$s_kind" 30 "$CAP" "$@" -c "$s_sql"
}

REDACT="name IN ('primary_conninfo', 'archive_command', 'restore_command', 'archive_cleanup_command',
    'recovery_end_command', 'ssl_passphrase_command') OR setting ~* '(password|secret|key)[[:space:]]*='"
sql postgres/version.txt pg_version "SELECT version(), pg_postmaster_start_time(), pg_is_in_recovery(), now()" "$@" -At
sql postgres/pg_settings.txt pg_settings "SELECT name, CASE WHEN $REDACT THEN '<redacted>' ELSE setting END AS setting, unit, source, sourcefile, pending_restart FROM pg_settings ORDER BY name" "$@" -A -F '|'
sql postgres/activity-summary.txt pg_activity "SELECT state, wait_event_type, wait_event, backend_type, count(*) FROM pg_stat_activity GROUP BY 1, 2, 3, 4 ORDER BY 5 DESC" "$@" -A -F '|'
sql postgres/activity.txt reference "SELECT pid, backend_type, state, wait_event_type, wait_event, now() - xact_start AS xact_age, md5(coalesce(query, '')) AS query_md5, left(regexp_replace(query, '''[^'']*''', '''?''', 'g'), 200) AS query FROM pg_stat_activity ORDER BY pid" "$@" -A -F '|'
sql postgres/database-ages.txt reference "SELECT datname, age(datfrozenxid), pg_database_size(oid) FROM pg_database ORDER BY 1" "$@" -A -F '|'
sql postgres/subtrans-sql.txt reference "SELECT count(*) FROM pg_ls_dir('pg_subtrans')" "$@" -At

# Data directory: -D, else what the server says.
if [ -z "$PGDATA_DIR" ]; then
    PGDATA_DIR=$(wrap 10 "$@" -At -c "SHOW data_directory" 2>/dev/null | head -n 1)
fi
if [ -n "$PGDATA_DIR" ] && [ -d "$PGDATA_DIR" ]; then
    run storage/pg_subtrans-files.txt subtrans_files 20 "$CAP" sh -c 'ls "$1" | wc -l' sh "$PGDATA_DIR/pg_subtrans"
fi
CONF=$(wrap 10 "$@" -At -c "SHOW config_file" 2>/dev/null | head -n 1)
HBA=$(wrap 10 "$@" -At -c "SHOW hba_file" 2>/dev/null | head -n 1)
if [ -n "$PGDATA_DIR" ]; then
    [ -n "$CONF" ] || CONF=$PGDATA_DIR/postgresql.conf
    [ -n "$HBA" ] || HBA=$PGDATA_DIR/pg_hba.conf
fi
# postgresql.conf with connection strings, commands and passwords masked; includes are listed
# by the parser, not read here.
cat >"$WORK/conf.sed" <<'EOF'
s/^\([[:space:]]*[a-z_]*conninfo[[:space:]=]*\).*/\1'<redacted>'/
s/^\([[:space:]]*[a-z_]*command[[:space:]=]*\).*/\1'<redacted>'/
s/^\([[:space:]]*[a-z_.]*password[[:space:]=]*\).*/\1'<redacted>'/
EOF
if [ -n "$CONF" ] && [ -r "$CONF" ]; then
    run postgres/postgresql.conf pg_conf 10 "$CAP" sed -f "$WORK/conf.sed" "$CONF"
fi
# pg_hba.conf: rule count per method, and trust on non-local lines; never the rules.
if [ -n "$HBA" ] && [ -r "$HBA" ]; then
    run postgres/hba-summary.txt reference 10 "$CAP" awk '
        /^[[:space:]]*(#|$)/ { next }
        { m = "other"
          for (i = 2; i <= NF; i++) if ($i ~ /^(trust|reject|md5|password|scram-sha-256|gss|sspi|ident|peer|ldap|radius|cert|pam|bsd)$/) { m = $i; break }
          n[m]++; if (m == "trust" && $1 != "local") t++ }
        END { for (k in n) print "method " k " " n[k]; print "trust_on_non_local " (t + 0) }' "$HBA"
fi

DF_ARGS=/dev/shm
[ -n "$PGDATA_DIR" ] && [ -d "$PGDATA_DIR" ] && DF_ARGS="/dev/shm $PGDATA_DIR"
# shellcheck disable=SC2086 # two paths, split on purpose
run storage/df.txt df 20 "$CAP" df -Pk $DF_ARGS
# shellcheck disable=SC2086
run storage/df-i.txt df 20 "$CAP" df -Pi $DF_ARGS

# ---------------------------------------------------------------------------------------------
# Server log: the current file, its last LOG_BYTES, password literals redacted.

LOGFILE=$LOGFILE_ARG
if [ -z "$LOGFILE" ] && [ -n "$PGDATA_DIR" ] && [ -r "$PGDATA_DIR/current_logfiles" ]; then
    l_rel=$(awk '$1 == "stderr" { print $2; exit }' "$PGDATA_DIR/current_logfiles")
    [ -z "$l_rel" ] && l_rel=$(awk '{ print $2; exit }' "$PGDATA_DIR/current_logfiles")
    case $l_rel in /*) LOGFILE=$l_rel ;; ?*) LOGFILE=$PGDATA_DIR/$l_rel ;; esac
fi
if [ -z "$LOGFILE" ]; then
    l_sql=$(wrap 10 "$@" -At -c "SELECT pg_current_logfile()" 2>/dev/null | head -n 1)
    case $l_sql in /*) LOGFILE=$l_sql ;; ?*) [ -n "$PGDATA_DIR" ] && LOGFILE=$PGDATA_DIR/$l_sql ;; esac
fi
if [ -z "$LOGFILE" ] && [ -d /var/log/postgresql ]; then
    # shellcheck disable=SC2012 # newest copy by mtime; names are Debian's, no newlines
    LOGFILE=$(ls -t /var/log/postgresql/*.log 2>/dev/null | head -n 1)
fi
if [ "$LOW_DISK" = 1 ]; then
    record postgres/server.log postgres_log "tail -c $LOG_BYTES $LOGFILE" 1 0 0 false "skipped: low disk space"
elif [ -n "$LOGFILE" ] && [ -r "$LOGFILE" ]; then
    cat >"$WORK/log.sed" <<'EOF'
s/\([Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd][[:space:]]*\)'[^']*'/\1'<redacted>'/g
s/\([Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd][[:space:]]*=[[:space:]]*\)'[^']*'/\1'<redacted>'/g
s/\([Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd][[:space:]]*=[[:space:]]*\)[^[:space:]'"<][^[:space:]'"]*/\1<redacted>/g
s#\(postgres[a-z]*://[^:/@[:space:]]*:\)[^@[:space:]]*@#\1<redacted>@#g
EOF
    run postgres/server.log postgres_log 120 "$LOG_BYTES" sh -c 'tail -c "$1" "$2" | sed -f "$3"' \
        sh "$LOG_BYTES" "$LOGFILE" "$WORK/log.sed"
else
    record postgres/server.log postgres_log "tail -c $LOG_BYTES" 1 0 0 false "no readable server log found (give -D, or run as the postgres OS user)"
fi

# ---------------------------------------------------------------------------------------------
# perf (optional)

copy perf/perf_event_paranoid.txt reference /proc/sys/kernel/perf_event_paranoid
copy perf/kptr_restrict.txt reference /proc/sys/kernel/kptr_restrict
if [ "$PERF_SECONDS" -gt 0 ]; then
    paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)
    if ! have perf; then
        record perf/perf-script.txt perf_script "perf record" 127 0 0 false "tool missing: perf"
    elif [ "$(id -u)" != 0 ] && [ "$paranoid" -gt 1 ]; then
        record perf/perf-script.txt perf_script "perf record" 1 0 0 false "not root and perf_event_paranoid=$paranoid"
    elif ! free_ok; then
        record perf/perf-script.txt perf_script "perf record" 1 0 0 false "skipped: low disk space"
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

# ---------------------------------------------------------------------------------------------
# Manifest and archive

ENDED=$(utc_now)
OUT=$OUTDIR/$NAME.tar.gz

# write_manifest: manifest.json from the entries; false when it could not be written whole.
write_manifest() {
    {
        printf '{\n  "format": "pgmortem.bundle",\n  "format_version": %s,\n' "$FORMAT_VERSION"
        printf '  "collector": "pgmortem-collect.sh",\n  "collector_version": "%s",\n' "$COLLECTOR_VERSION"
        printf '  "arguments": "%s",\n  "uid": %s,\n' "$(json_escape "$ARGUMENTS")" "$(id -u)"
        printf '  "started": "%s",\n  "ended": "%s",\n  "files": [\n' "$STARTED" "$ENDED"
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
    rm -f "$d_file"
    say "no room for the archive in $OUTDIR: dropped $d_rel (${d_line%% *} bytes)"
    d_note="not kept: no room for it in the archive in $OUTDIR (${d_line%% *} bytes)"
    ENTRIES="$(printf '%s' "$ENTRIES" | awk -v p="$d_rel" -v n="$d_note" '
        index($0, "{\"path\":\"" p "\",") == 1 {
            sub(/"bytes":[0-9]*/, "\"bytes\":0"); sub(/"capped":true/, "\"capped\":false")
            if (!sub(/"note":""/, "\"note\":\"" n "\"")) sub(/"note":"/, "\"note\":\"" n "; ")
        }
        { print }')
"
}

# The archive is written next to the collected files; on a full disk the largest files go
# first until the rest fits, each one named in the manifest.
while ! { write_manifest && tar -C "$WORK" -czf "$OUT" "$NAME" 2>/dev/null; }; do
    rm -f "$OUT"
    drop_biggest || die "could not write $OUT"
done
chmod 600 "$OUT" 2>/dev/null
say "wrote $OUT ($(wc -c <"$OUT" | tr -d ' ') bytes)"
printf '%s\n' "$OUT"
