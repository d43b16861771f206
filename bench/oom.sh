#!/usr/bin/env bash
# xmem oom on hostile shapes and on a long stream. Prints, per size, wall
# time (best of 3) and peak RSS, the ratio time(2N)/time(N), and the fitted
# exponent over the doublings; then `xmem oom -` on a 1 GiB log through a pipe.
# Usage: bench/oom.sh [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/oom-bench}
mkdir -p "$out"
cargo build --release --quiet --bin xmem
xmem=$PWD/target/release/xmem

measure() { # file -> "seconds rss_kib"
    local best="" rss=0
    for _ in 1 2 3; do
        local line
        # xmem oom exits 1 when it finds a memory error: that is its answer, not a failure.
        line=$( { /usr/bin/time -f "%e %M" "$xmem" oom --format json "$1" > /dev/null || true; } 2>&1 | tail -1)
        local t=${line% *} m=${line#* }
        if [[ -z $best ]] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
        (( m > rss )) && rss=$m
    done
    echo "$best $rss"
}

# Files of each shape, written by Python from the same recipes as benches/support/synthetic.rs.
python3 - "$out" <<'PY'
import sys
out = sys.argv[1]
head = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. "
        "Ran out of memory in memory space hbm. Used 20.00G of 16.00G hbm. Exceeded hbm capacity by 4.00G.\n\n")
for sections in (5000, 10000, 20000, 40000, 80000, 160000):
    with open(f"{out}/sections-{sections}.log", "w") as f:
        f.write(head)
        for i in range(sections):
            f.write(f"Total hbm{i} usage >= 1.00G:\n    reserved        530.00M\n")
filler = 'op_name="jit(train_step)/dot_general" (shape=[1024, 4096])     CUDA out of memory. '
for shift in range(15, 21):
    size = 1 << shift
    line = "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1024 bytes. "
    line += filler * (size // len(filler) + 1)
    with open(f"{out}/line-{size}.log", "w") as f:
        # 64 such lines, so the time is the line's cost and not the start-up's.
        for _ in range(64):
            f.write(line[:size] + "\n")
PY

series() { # title, files...
    echo "| $1 | time | peak RSS | ×prev |"
    echo "|---|---:|---:|---:|"
    local prev="" times=()
    shift
    for file in "$@"; do
        read -r t rss < <(measure "$file")
        local ratio="-"
        [[ -n $prev ]] && ratio=$(awk "BEGIN{printf \"%.2f\", $t/$prev}")
        printf "| %s | %s s | %d MiB | %s |\n" "$(basename "$file" .log)" "$t" $((rss / 1024)) "$ratio"
        prev=$t
        times+=("$t")
    done
    python3 -c 'import math,sys; t=[float(x) for x in sys.argv[1:]]; n=len(t)-1; print(f"\nexponent over {n} doublings: {math.log2(t[-1]/t[0])/n:.2f}\n")' "${times[@]}"
}

series "TPU report with N distinct sections" "$out"/sections-{5000,10000,20000,40000,80000,160000}.log
series "64 log lines of N bytes" "$out"/line-{32768,65536,131072,262144,524288,1048576}.log

# A 1 GiB log through a pipe: ordinary training output with a real OOM report every ~100 MiB.
python3 - "$out/stream.log" <<'PY'
import sys
oom = open("fixtures/oom-logs/A-09.txt").read() + open("fixtures/oom-logs/G-01.txt").read()
noise = "".join(f"2024-03-14 09:21:{i % 60:02d}.123456: I trainer.py:42] step {i}: loss 0.{i % 997:03d}, grad norm 1.{i % 89:02d}\n" for i in range(10000))
target, written = 1 << 30, 0
with open(sys.argv[1], "w") as f:
    while written < target:
        for _ in range(100):
            f.write(noise); written += len(noise)
        f.write(oom); written += len(oom)
PY
ls -l "$out/stream.log" | awk '{print "stream.log: " $5 " bytes"}'
{ /usr/bin/time -f "xmem oom - on the 1 GiB log: %e s, peak RSS %M KiB" "$xmem" oom - < "$out/stream.log" > "$out/stream.txt"; } 2>&1 | tail -1 || true
grep -c '^Incident' "$out/stream.txt" | awk '{print $1 " incidents printed"}'

# The same 1 GiB printed by a job under `xmem run`: passed through to stdout
# (checked byte for byte) while it is scanned. GNU time's peak RSS is the
# largest of xmem and of the job it waits for (cat, under 4 MiB).
/usr/bin/time -o "$out/run.time" -f "xmem run -- cat (1 GiB of output): %e s, peak RSS %M KiB" \
    "$xmem" run -- cat "$out/stream.log" > "$out/run.out" 2> "$out/run.err" || true
cat "$out/run.time"
cmp -s "$out/run.out" "$out/stream.log" && echo "the job's output came through byte for byte"
grep -c '^Incident' "$out/run.err" | awk '{print $1 " incidents in the post-mortem"}'
rm -f "$out/run.out"
