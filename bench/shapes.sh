#!/usr/bin/env bash
# Hostile input shapes (benches/support/synthetic.rs, HOSTILE_SHAPES): each
# is generated at 6 sizes, n to 32n, and run through one xmem command.
# Prints the CPU time of one run (user + system: wall time on a shared
# machine measures the other jobs), averaged over at least 3 runs and
# 1 s of CPU so that the 10 ms clock is 1% of it, peak RSS and
# time(2N)/time(N) per size, then the fitted exponent of time over n, and
# fails (exit 1) when a doubling costs more than 2.2x, the exponent exceeds
# 1.2, or peak RSS exceeds the shape's bound: 2x the input + 100 MB, or for
# a shape that truly needs more (BENCHMARKS.md), the input + its bytes per
# item x n + 100 MB. Ratios and the exponent are taken from runs of 20 ms or
# more: process start-up dominates shorter ones. A shape whose command writes
# charts or a page (OUT in its arguments) also gets the bytes written, and
# fails when they pass design.md's output bound (`synthesize bound BYTES`).
#
# Usage: bench/shapes.sh [OUTDIR]
#   XMEM=path/to/xmem   measure another build (e.g. an older one)
#   CHECK=0             print only, do not fail (for a build known to be slow)
#   ONLY=NAME           run one shape
#   TIMEOUT=SECONDS     give up on one run after this long (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/shapes}
mkdir -p "$out"
cargo build --release --quiet --bin xmem --example synthesize
xmem=${XMEM:-target/release/xmem}
synthesize=target/release/examples/synthesize
check=${CHECK:-1}
timeout_s=${TIMEOUT:-60}
failed=0

# CPU seconds (user + system) of one run, averaged over at least 3 runs
# and 1 s, and their max RSS (KiB); "timeout" past TIMEOUT.
measure() {
    local total=0 rss=0 runs=0
    while (( runs < 3 )) || { (( runs < 100 )) && awk "BEGIN{exit !($total < 1)}"; }; do
        /usr/bin/time -f "%U %S %M %x" -o "$out/time" timeout "$timeout_s" "$xmem" "$@" </dev/null >/dev/null 2>&1 || true
        local user sys m code
        read -r user sys m code < <(tail -1 "$out/time")
        if [[ $code == 124 ]]; then echo "timeout $m"; return; fi
        total=$(awk "BEGIN{print $total + $user + $sys}")
        runs=$((runs + 1))
        (( m > rss )) && rss=$m
        # A run over 10 s is measured once.
        if awk "BEGIN{exit !($user + $sys > 10)}"; then break; fi
    done
    echo "$(awk "BEGIN{printf \"%.4f\", $total / $runs}") $rss"
}

fail() { echo "FAIL: $*"; failed=1; }

# shape NAME FILE_NAME N PER_ITEM XMEM_ARGS...: the input file goes last;
# PER_ITEM is the shape's memory bound in bytes per item (0: twice the input).
shape() {
    local name=$1 file_name=$2 n=$3 per_item=$4
    shift 4
    [[ -z ${ONLY:-} || $ONLY == "$name" ]] || return 0
    local written_to="$out/$name.out" args=() arg
    for arg in "$@"; do
        if [[ $arg == OUT ]]; then args+=("$written_to"); else args+=("$arg"); fi
    done
    echo
    echo "### $name: xmem $* FILE"
    echo
    echo "| n | bytes | CPU time a run | peak RSS | ×prev | written |"
    echo "|---:|---:|---:|---:|---:|---:|"
    local previous="" points=""
    for step in 0 1 2 3 4 5; do
        local size=$(( n << step )) file="$out/$name.$((n << step)).$file_name"
        "$synthesize" shape "$name" "$size" "$file" </dev/null
        local bytes t rss ratio="-"
        bytes=$(stat -c %s "$file")
        read -r t rss < <(measure "${args[@]}" "$file")
        if [[ $t == timeout ]]; then
            printf "| %s | %s | > %s s | - | - | - |\n" "$size" "$bytes" "$timeout_s"
            rm -rf "$written_to"
            rm -f "$file"
            [[ $check == 1 ]] && fail "$name: n=$size took more than ${timeout_s} s"
            break
        fi
        if [[ -n $previous ]] && awk "BEGIN{exit !($previous >= 0.02)}"; then
            ratio=$(awk "BEGIN{printf \"%.2f\", $t / $previous}")
            [[ $check == 1 ]] && awk "BEGIN{exit !($ratio > 2.2)}" && fail "$name: n=$size took ${ratio}x the time of n/2"
        fi
        awk "BEGIN{exit !($t >= 0.02)}" && points="$points $size $t"
        local allowed=$(( per_item == 0 ? 2 * bytes : bytes + per_item * size ))
        local limit_kib=$(( (allowed + 100 * 1024 * 1024) / 1024 ))
        [[ $check == 1 ]] && (( rss > limit_kib )) && fail "$name: n=$size peak RSS $((rss / 1024)) MiB > its bound, $((limit_kib / 1024)) MiB"
        local written="-"
        if [[ -e $written_to ]]; then
            written=$(du -sb --apparent-size "$written_to" | cut -f1)
            local bound
            bound=$("$synthesize" bound "$bytes")
            [[ $check == 1 ]] && (( written > bound )) && fail "$name: n=$size wrote $written bytes > the bound $bound"
            rm -rf "$written_to"
        fi
        printf "| %s | %s | %s s | %s MiB | %s | %s |\n" "$size" "$bytes" "$t" "$((rss / 1024))" "$ratio" "$written"
        previous=$t
        rm -f "$file"
    done
    # Least-squares slope of log(time) over log(n), from the points above the noise floor.
    local exponent
    exponent=$(echo "$points" | awk '{
        k = 0; for (i = 1; i < NF; i += 2) { x[k] = log($i); y[k] = log($(i + 1)); k++ }
        if (k < 3) { print "-"; exit }
        for (i = 0; i < k; i++) { sx += x[i]; sy += y[i] }
        mx = sx / k; my = sy / k
        for (i = 0; i < k; i++) { sxy += (x[i] - mx) * (y[i] - my); sxx += (x[i] - mx) ^ 2 }
        printf "%.2f", sxy / sxx }')
    echo
    echo "exponent: $exponent"
    [[ $check == 1 && $exponent != - ]] && awk "BEGIN{exit !($exponent > 1.2)}" && fail "$name: exponent $exponent > 1.2"
    return 0
}

# Every shape of HOSTILE_SHAPES (benches/support/synthetic.rs).
while read -r name file_name n per_item args; do
    # shellcheck disable=SC2086 # the command's words are split on purpose
    shape "$name" "$file_name" "$n" "$per_item" $args
done < <("$synthesize" shape)

exit $failed
