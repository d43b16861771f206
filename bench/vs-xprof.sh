#!/usr/bin/env bash
# xmem against XProf 2.24.2's own converters on the same profile, in one run:
# checks that both compute the same peak for the largest module, then prints
# wall times (best of 3), peak RSS and the ratios.
#   bench/vs-xprof.sh [PROFILE.xplane.pb[.gz]]   (default: the shared large profile)
# XPROF_VENV=DIR reuses a virtualenv that has xprof==2.24.2.
set -euo pipefail
cd "$(dirname "$0")/.."
input=${1:-../shared/corpus/large/vm.xplane.pb.gz}
work=target/vs-xprof
venv=${XPROF_VENV:-$work/venv}
mkdir -p "$work/run"
if [[ ! -x $venv/bin/python ]]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet xprof==2.24.2
fi
cargo build --release --quiet --bin xmem
xmem=target/release/xmem

plain="$work/run/$(basename "${input%.gz}")"
if [[ $input == *.gz ]]; then gunzip -c "$input" > "$plain"; else cp "$input" "$plain"; fi
size=$(stat -c %s "$plain")

best_of_3() { # prints "seconds max_rss_kib" of the fastest of three runs of "$@"
    local best="" rss=0
    for _ in 1 2 3; do
        rm -f "$work"/run/*.hlo_proto.pb
        local line
        line=$( { /usr/bin/time -f "%e %M" "$@" > "$work/last.out"; } 2>&1 | tail -1)
        local t=${line% *} m=${line#* }
        if [[ -z $best ]] || awk "BEGIN{exit !($t < $best)}"; then best=$t; cp "$work/last.out" "$work/best.out"; fi
        (( m > rss )) && rss=$m
    done
    echo "$best $rss"
}

read -r xprof_s xprof_rss < <(best_of_3 "$venv/bin/python" bench/xprof_converters.py "$plain")
xprof_json=$(tail -1 "$work/best.out")
read -r xmem_s xmem_rss < <(best_of_3 "$xmem" report "$plain" --format json -o "$work/xmem.json")
read -r gz_s gz_rss < <(best_of_3 "$xmem" report "$input" --format json -o /dev/null)

python3 - "$xprof_json" "$work/xmem.json" <<'PY'
import json, sys
xprof = json.loads(sys.argv[1])
report = json.load(open(sys.argv[2]))
name, _, pid = xprof["module"].rstrip(")").rpartition("(")
module = next(m for m in report["modules"] if m["name"] == name and str(m["program_id"]) == pid)
space = next(s for s in module["memory_spaces"] if s["color"] == 0)
assert space["peak_bytes"] == xprof["peak_bytes"], (space["peak_bytes"], xprof["peak_bytes"])
assert space["peak_position"] == xprof["peak_position"], (space["peak_position"], xprof["peak_position"])
print(f"same numbers: {xprof['module']} peak {space['peak_bytes']} bytes at event {space['peak_position']} "
      f"(XProf steps: tool_names {xprof['tool_names_s']} s, memory_viewer {xprof['memory_viewer_s']} s, "
      f"memory_profile {xprof['memory_profile_s']} s)")
PY
echo "input: $input ($size bytes uncompressed) on $(nproc) cores, $(date -u +%F)"
echo "| tool | wall (best of 3) | peak RSS | RSS / file size | XProf time / this |"
echo "|---|---:|---:|---:|---:|"
ratio() { awk "BEGIN{printf \"%.1f\", $1 / $2}"; }
printf "| XProf 2.24.2 converters | %s s | %d MiB | %s | 1.0x |\n" "$xprof_s" $((xprof_rss / 1024)) "$(ratio $((xprof_rss * 1024)) "$size")"
printf "| xmem report (plain) | %s s | %d MiB | %s | %sx |\n" "$xmem_s" $((xmem_rss / 1024)) "$(ratio $((xmem_rss * 1024)) "$size")" "$(ratio "$xprof_s" "$xmem_s")"
printf "| xmem report (.gz) | %s s | %d MiB | %s | %sx |\n" "$gz_s" $((gz_rss / 1024)) "$(ratio $((gz_rss * 1024)) "$size")" "$(ratio "$xprof_s" "$gz_s")"
