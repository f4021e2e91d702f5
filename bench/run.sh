#!/bin/sh
# bench/run.sh - runs the benchmark drivers; results are recorded in docs/benchmarks.md.
set -eu
dir=$(dirname "$0")/../build
echo "== bench_model ($(uname -m), $(nproc) cores)"
"$dir/bench_model"
echo "== bench_alloc: allocation time per policy, 30% cut"
"$dir/bench_alloc"
echo "== pfisim fit on the real A40 sweep (53 jobs), if the data directory is there"
data=${PFISIM_DATA:-../shared/data}
if [ -f "$data/power/zeus-nsdi23/summary_power_a40.csv" ]; then
    tmp=$(mktemp -d)
    "$dir/pfisim" import zeus "$data/power/zeus-nsdi23/summary_power_a40.csv" -o "$tmp/a40.csv"
    start=$(date +%s.%N)
    "$dir/pfisim" fit --csv "$tmp/a40.csv" >/dev/null
    end=$(date +%s.%N)
    echo "fit 53 jobs: $(awk "BEGIN { print $end - $start }") s"
    rm -rf "$tmp"
fi
