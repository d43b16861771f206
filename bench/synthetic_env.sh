# Sourced by the scaling scripts (`source "$(dirname "$0")/synthetic_env.sh" "$@"`):
# runs from the repository root with release builds of xmem and of the
# synthesize example, and writes inputs to OUTDIR (first argument,
# default target/scaling).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/scaling}
mkdir -p "$out"
cargo build --release --quiet --bin xmem --example synthesize
xmem=target/release/xmem
synthesize=target/release/examples/synthesize
