#!/bin/sh
# bench/run.sh - runs the benchmark drivers; results are recorded in docs/benchmarks.md.
set -eu
dir=$(dirname "$0")/../build
echo "== bench_model ($(uname -m), $(nproc) cores)"
"$dir/bench_model"
echo "== bench_alloc: allocation time per policy, 30% cut; equal as a plugin, equal as a Python"
echo "   program, and a Python program that decides nothing (the protocol's own cost)"
if command -v python3 >/dev/null 2>&1; then
    "$dir/bench_alloc" --policy-lib "$dir/plugins/equal-plugin.so" \
        --policy-exec "python3 policies/examples/equal.py" --policy-exec "python3 bench/policy_echo.py"
else
    "$dir/bench_alloc" --policy-lib "$dir/plugins/equal-plugin.so"
fi
echo "== a year with equal built in and equal as a Python program (the same results): the"
echo "   default scenario over 365 days (3 DR events), and bench/year.cfg (50 events)"
# year CONFIG-ARGS... -- POLICY-ARGS...: one timed run, its first result row and its time.
year() {
    args=""
    while [ "$1" != -- ]; do args="$args $1"; shift; done
    shift
    /usr/bin/time -f "%e s, %M KB peak" -o "$tmp/time" "$dir/pfisim" run $args "$@" --csv \
        >"$tmp/out"
    echo "  $args, $(sed -n 2p "$tmp/out" | cut -d, -f1-2): $(cat "$tmp/time")"
}
if command -v python3 >/dev/null 2>&1; then
    tmp=$(mktemp -d)
    for cfg in "--days 365" "$(dirname "$0")/year.cfg"; do
        year $cfg -- --policy equal
        year $cfg -- --policy-exec "python3 policies/examples/equal.py" --policy equal-py
    done
    rm -rf "$tmp"
fi
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
echo "== a year under 50 DR events (bench/year.cfg), policy pfi: GPUs, arrivals, GPU scale"
tmp=$(mktemp -d)
for row in "1000 fitted:itp:cluster04 2" "10000 fitted:itp:cluster04 20" \
    "100000 fitted:itp:cluster04 200" "1000 fitted:itp:cluster04 1" "10000 fitted:kalos 1" \
    "100000 fitted:kalos 1" "10000 fitted:itp:cluster04 1"; do
    set -- $row
    sed "s/gpus = 10000;/gpus = $1;/; s/\"fitted:itp:cluster04\"/\"$2\"/; s/gpu_scale = 20;/gpu_scale = $3;/" \
        "$(dirname "$0")/year.cfg" > "$tmp/year.cfg"
    /usr/bin/time -f "%e s, %M KB peak" -o "$tmp/time" "$dir/pfisim" run "$tmp/year.cfg" |
        sed -n 1p
    echo "   $1 GPUs, $2 x$3: $(cat "$tmp/time")"
done
rm -rf "$tmp"
echo "== a 64-run sweep (bench/sweep64.cfg) with -j 1 and -j 2: wall time, same database?"
tmp=$(mktemp -d)
for j in 1 2; do
    mkdir -p "$tmp/j$j"
    /usr/bin/time -f "%e" -o "$tmp/time$j" "$dir/pfisim" sweep "$(dirname "$0")/sweep64.cfg" \
        -j $j --db "$tmp/j$j/sweep.db" >/dev/null
    echo "   -j $j: $(cat "$tmp/time$j") s"
done
echo "   speed-up: $(awk "BEGIN { printf \"%.2f\", $(cat "$tmp/time1") / $(cat "$tmp/time2") }")"
if cmp -s "$tmp/j1/sweep.db" "$tmp/j2/sweep.db"; then
    echo "   databases: identical bytes"
else
    echo "   databases: DIFFER"
fi
rm -rf "$tmp"
