#!/usr/bin/env bash
# seed.sh — builds the seed corpora of the bundle and analyze targets from fixtures/: every
# incident bundle as it is (first byte 1: read as a .tar.gz), and each one's files as parts
# (first byte 2: tarred again at the paths of src/lib.rs, see `parts`), plus one part holding
# markup, which the analyze target checks never reaches the HTML page.
# The archives target gets each parts input under every choice that builds archives from parts
# (first bytes 3 to 7 and 9), and the archive fixtures of fixtures/formats/bundle as they are
# (0: the .xz log, 1: the .tar.bz2, 2 and 8: the zips).
# Usage: crates/pgmortem/fuzz/seed.sh   (writes corpus/bundle, corpus/analyze, corpus/archives)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
FIXTURES=$(cd "$HERE/../../../fixtures" && pwd)
mkdir -p "$HERE/corpus/bundle" "$HERE/corpus/analyze" "$HERE/corpus/archives"
PATHS=(kernel/dmesg.txt postgres/server.log memory/meminfo.txt postgres/pg_settings.txt
    clock/uptime.txt clock/date.txt memory/sysctl-vm.txt cgroup/1/memory.max processes/1/status
    storage/df.txt perf/perf-script.txt postgres/postgresql.conf manifest.json
    processes/1/pg-oom-adjust.txt kernel/dmesg-T.txt)
n=0
for bundle in "$FIXTURES"/incidents/*/*.tar.gz; do
    n=$((n + 1))
    { printf '\001'; cat "$bundle"; } >"$HERE/corpus/bundle/incident-$n"
    cp "$HERE/corpus/bundle/incident-$n" "$HERE/corpus/analyze/incident-$n"
    dir=$(mktemp -d)
    tar -xzf "$bundle" -C "$dir" --strip-components=1
    {
        printf '\002'
        first=1
        for p in "${PATHS[@]}"; do
            [ "$first" = 1 ] || printf '\n--\n'
            first=0
            # Each part small enough for the fuzzer to work on (its last 4 KiB).
            [ -f "$dir/$p" ] && tail -c 4096 "$dir/$p" | sed 's/^--$/- -/'
        done
        printf '\n<pgmortem-fuzz onload=x>\n'
    } >"$HERE/corpus/analyze/parts-$n"
    cp "$HERE/corpus/analyze/parts-$n" "$HERE/corpus/bundle/parts-$n"
    for choice in 3 4 5 6 7 9; do
        { printf "\\$(printf '%03o' "$choice")"; tail -c +2 "$HERE/corpus/bundle/parts-$n"; } \
            >"$HERE/corpus/archives/parts-$choice-$n"
    done
    rm -rf "$dir"
done
FORMS="$FIXTURES/formats/bundle"
{ printf '\000'; cat "$FORMS/pg15-events.log.xz"; } >"$HERE/corpus/archives/raw-xz"
{ printf '\001'; cat "$FORMS/pg15-memcg-oom-work-mem.tar.bz2"; } >"$HERE/corpus/archives/raw-tar-bz2"
{ printf '\002'; cat "$FORMS/pg15-memcg-oom-work-mem.zip"; } >"$HERE/corpus/archives/raw-zip"
{ printf '\002'; cat "$FORMS/edge-one-encrypted.zip"; } >"$HERE/corpus/archives/raw-zip-encrypted"
{ printf '\010'; cat "$FORMS/incident-attachment.zip"; } >"$HERE/corpus/archives/nested-zip"
echo "seeded corpus/bundle and corpus/analyze with $((n * 2)) inputs each, corpus/archives with $((n * 6 + 5))"
