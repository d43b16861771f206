#!/usr/bin/env bash
# Scaling on hostile heap-trace shapes (issue 17): an HloProto with N memory
# spaces in one trace, a SHARE_WITH chain of N buffers, and the same chain
# closed into a cycle. N doubles 5 times; prints wall time, CPU time (user +
# system) and peak RSS of `xmem report --format json` per size (best of 3),
# cpu(2N)/cpu(N), and the exponent of the whole series,
# log(cpu_last/cpu_first) / log(N_last/N_first). CPU time is the figure
# compared: on a shared machine the wall time mostly measures the others.
# Usage: bench/scaling-heap-shapes.sh [OUTDIR] [XMEM]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/scaling-heap-shapes}
mkdir -p "$out"
cargo build --release --quiet --bin xmem --example synthesize_heap_shape
xmem=${2:-target/release/xmem}
synthesize=target/release/examples/synthesize_heap_shape

measure() {
    local best="" best_wall="" rss=0
    for _ in 1 2 3; do
        local wall user system m cpu
        read -r wall user system m < <( { /usr/bin/time -f "%e %U %S %M" "$xmem" report "$1" --format json -o /dev/null; } 2>&1 | tail -1)
        cpu=$(awk "BEGIN{print $user + $system}")
        if [[ -z $best ]] || awk "BEGIN{exit !($cpu < $best)}"; then best=$cpu; fi
        if [[ -z $best_wall ]] || awk "BEGIN{exit !($wall < $best_wall)}"; then best_wall=$wall; fi
        (( m > rss )) && rss=$m
    done
    echo "$best $best_wall $rss"
}

echo "| input | bytes | wall | CPU | peak RSS | ×prev (CPU) |"
echo "|---|---:|---:|---:|---:|---:|"
for spec in "colors 8000" "share-chain 25000" "share-cycle 25000"; do
    read -r shape first <<<"$spec"
    previous= first_time= n=$first
    for _ in 0 1 2 3 4 5; do
        file="$out/$shape-$n.hlo.pb"
        "$synthesize" "$shape" "$n" "$file"
        read -r t wall rss < <(measure "$file")
        ratio="-"
        [[ -n $previous ]] && ratio=$(awk "BEGIN{if ($previous > 0) printf \"%.2f\", $t / $previous; else print \"-\"}")
        printf "| %-24s | %10s | %6s s | %6s s | %6s MiB | %5s |\n" "$shape, N = $n" "$(stat -c %s "$file")" "$wall" "$t" "$((rss / 1024))" "$ratio"
        [[ -z $first_time ]] && first_time=$t
        previous=$t last=$n
        n=$((n * 2))
    done
    awk "BEGIN{if ($first_time > 0) printf \"| %s: exponent over 5 doublings | | | %.2f | | |\n\", \"$shape\", log($previous / $first_time) / log($last / $first)}"
done
