#!/usr/bin/env bash
# Fills fuzz/corpus/ with seeds: the fixtures, and every hostile shape of
# benches/support/synthetic.rs (HOSTILE_SHAPES) at a small size, so the
# structure-aware mutator starts from the shapes that hurt a decoder.
# Usage: fuzz/seed.sh (from anywhere)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --example synthesize
synthesize=target/release/examples/synthesize
mkdir -p fuzz/corpus/decode_profile fuzz/corpus/decode_pprof fuzz/corpus/oom_log fuzz/corpus/render_charts
cp fixtures/profiles/*/xla_dump/*.hlo.pb fuzz/corpus/decode_profile/ 2>/dev/null || true
for xplane in fixtures/profiles/*/profile/plugins/profile/*/*.xplane.pb; do
    cp "$xplane" "fuzz/corpus/decode_profile/$(echo "$xplane" | cut -d/ -f3).xplane.pb"
done
for profile in fixtures/pprof/*/*.prof; do
    name=$(basename "$(dirname "$profile")")-$(basename "$profile")
    if [[ $(head -c 2 "$profile" | od -An -tx1 | tr -d ' ') == 1f8b ]]; then gunzip -c "$profile"; else cat "$profile"; fi \
        >"fuzz/corpus/decode_pprof/$name"
done
cp fixtures/oom-logs/*.txt fuzz/corpus/oom_log/ 2>/dev/null || true
while read -r name file_name _; do
    case $file_name in
        *.log) target=oom_log ;;
        *.prof) target=decode_pprof ;;
        *) target=decode_profile ;;
    esac
    for n in 4 64; do
        "$synthesize" shape "$name" "$n" "fuzz/corpus/$target/$n.$file_name" </dev/null
    done
done < <("$synthesize" shape)
# The charts and the page are drawn from what decodes: the same seeds.
cp fuzz/corpus/decode_profile/* fuzz/corpus/render_charts/
ls fuzz/corpus/* | wc -l
