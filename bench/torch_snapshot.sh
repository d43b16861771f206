#!/usr/bin/env bash
# PyTorch memory snapshots: xmem report on synthetic snapshots whose trace
# doubles from 125,000 to 2,000,000 entries (examples/synthesize torch:
# protocol 4, frames memoized, a frame list per allocation and per free
# request, as torch.cuda.memory._dump_snapshot writes them). Prints the file
# size, best-of-3 wall time and CPU time (user + system: on a shared
# machine the wall time is mostly waiting), peak RSS, and the ratio
# cpu(2N)/cpu(N).
# Usage: bench/torch_snapshot.sh [OUTDIR]
source "$(dirname "$0")/synthetic_env.sh" "$@"

echo "| trace entries | bytes | wall | CPU | peak RSS | RSS − file | ×prev |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
previous=
for entries in 125000 250000 500000 1000000 2000000; do
    file="$out/torch_$entries.pickle"
    "$synthesize" torch "$entries" "$file"
    best="" cpu="" rss=0
    for _ in 1 2 3; do
        read -r t u s m < <( { /usr/bin/time -f "%e %U %S %M" "$xmem" report "$file" --format json -o /dev/null; } 2>&1 | tail -1)
        c=$(awk "BEGIN{print $u + $s}")
        if [[ -z $best ]] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
        if [[ -z $cpu ]] || awk "BEGIN{exit !($c < $cpu)}"; then cpu=$c; fi
        (( m > rss )) && rss=$m
    done
    bytes=$(stat -c %s "$file")
    ratio="-"
    [[ -n $previous ]] && ratio=$(awk "BEGIN{printf \"%.2f\", $cpu / $previous}")
    printf "| %s | %s | %s s | %s s | %s MiB | %s MiB | %s |\n" "$entries" "$bytes" "$best" "$cpu" "$((rss / 1024))" "$(( (rss * 1024 - bytes) / 1048576 ))" "$ratio"
    previous=$cpu
    rm -f "$file"
done
