#!/usr/bin/env bash
# Compares builds of xmem on one log: each build runs `xmem oom --format json FILE`
# in turn, seven rounds, and the least user time of each is printed. Interleaving
# the builds spreads the machine's load over all of them alike.
# Usage: bench/ab.sh FILE XMEM...   (e.g. a copy of target/release/xmem per commit)
set -euo pipefail
file=$1
shift
declare -A best
for _ in 1 2 3 4 5 6 7; do
    for xmem in "$@"; do
        # xmem oom exits 1 when it finds a memory error: that is its answer, not a failure.
        t=$( { /usr/bin/time -f "%U" "$xmem" oom --format json "$file" > /dev/null || true; } 2>&1 | tail -1)
        if [[ -z ${best[$xmem]:-} ]] || awk "BEGIN{exit !($t < ${best[$xmem]})}"; then best[$xmem]=$t; fi
    done
done
for xmem in "$@"; do echo "$xmem ${best[$xmem]} s user"; done
