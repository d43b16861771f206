#!/usr/bin/env bash
# Scaling: xmem report on synthetic profiles that double one dimension at a
# time (heap events with buffers live at the peak, modules, host events).
# Prints wall time and peak RSS per size and the ratio time(2N)/time(N),
# best of 3 runs. Usage: bench/scaling.sh [OUTDIR]
source "$(dirname "$0")/synthetic_env.sh" "$@"

# Best-of-3 wall seconds and max RSS (KiB) of one report.
measure() {
    local best="" rss=0
    for _ in 1 2 3; do
        local line
        line=$( { /usr/bin/time -f "%e %M" "$xmem" report "$1" --format json -o /dev/null; } 2>&1 | tail -1)
        local t=${line% *} m=${line#* }
        if [[ -z $best ]] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
        (( m > rss )) && rss=$m
    done
    echo "$best $rss"
}

row() { # label modules live transient host_events
    local file="$out/$1.xplane.pb"
    "$synthesize" "$file" "$2" "$3" "$4" "$5"
    read -r t rss < <(measure "$file")
    local ratio="-"
    [[ -n ${previous:-} ]] && ratio=$(awk "BEGIN{if ($previous > 0.05) printf \"%.2f\", $t / $previous; else print \"-\"}")
    printf "| %-34s | %10s | %8s s | %8s MiB | %5s |\n" "$1" "$(stat -c %s "$file")" "$t" "$((rss / 1024))" "$ratio"
    previous=$t
}

echo "| input | bytes | time | peak RSS | ×prev |"
echo "|---|---:|---:|---:|---:|"
previous=
for live in 50000 100000 200000 400000; do
    row "1 module, ${live} live, $((2 * live)) transient" 1 "$live" "$((2 * live))" 0
done
previous=
for modules in 100 200 400 800; do
    row "${modules} modules of 1000 buffers" "$modules" 500 500 0
done
previous=
for events in 1000000 2000000 4000000 8000000; do
    row "${events} host events to skip" 1 1000 1000 "$events"
done
