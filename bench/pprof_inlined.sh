#!/usr/bin/env bash
# Scaling of a device memory profile whose one location has N inlined lines,
# with N samples allocated from it (issue 17: a Frame was cloned and hashed per
# stack entry, N² work). Doubles N five times and prints, per size, the CPU
# time (user + system, best of 3: steadier than wall time on a shared machine)
# and peak RSS of one `xmem report`, and the ratio time(2N)/time(N); the
# exponent is log2 of the last size's time over the first's, / 5.
# Usage: bench/pprof_inlined.sh [OUTDIR]
source "$(dirname "$0")/synthetic_env.sh" "$@"

echo "| inlined lines (= samples) | bytes | CPU time | peak RSS | ×prev |"
echo "|---:|---:|---:|---:|---:|"
first= previous=
for lines in 16000 32000 64000 128000 256000 512000; do
    file="$out/pprof_inlined_$lines.prof"
    "$synthesize" "$file" pprof-inlined "$lines"
    best= rss=0
    for _ in 1 2 3; do
        line=$( { /usr/bin/time -f "%U %S %M" "$xmem" report "$file" --format json -o /dev/null; } 2>&1 | tail -1)
        read -r user system kib <<<"$line"
        t=$(awk "BEGIN{printf \"%.2f\", $user + $system}")
        if [[ -z $best ]] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
        (( kib > rss )) && rss=$kib
    done
    ratio="-"
    [[ -n $previous ]] && ratio=$(awk "BEGIN{printf \"%.2f\", $best / $previous}")
    printf "| %d | %d | %s s | %d MiB | %s |\n" "$lines" "$(stat -c %s "$file")" "$best" "$((rss / 1024))" "$ratio"
    [[ -z $first ]] && first=$best
    previous=$best
done
awk "BEGIN{printf \"exponent over 5 doublings: %.2f\n\", log($previous / $first) / log(2) / 5}"
