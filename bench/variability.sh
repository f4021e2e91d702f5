#!/bin/sh
# bench/variability.sh - the cost of per-GPU state (issue 19, docs/benchmarks.md): the same
# runs with identical GPUs and with facility.variability on (the calibrated spread), and with
# power shifted within jobs, on 100,000 GPUs for 3 days (unscaled fitted ITP arrivals) and on
# bench/year.cfg (10,000 GPUs, a year, jobs 20 times as wide). Wall time and peak RSS.
#   sh bench/variability.sh
set -eu
dir=$(dirname "$0")
bin=$dir/../build/pfisim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

row() { # label cfg policy
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" run "$2" --policy "$3" > "$tmp/out"
    set -- "$1" "$3" $(sed -n 3p "$tmp/out" | awk '{ print $2, $4 }') $(cat "$tmp/time")
    awk -v l="$1" -v p="$2" -v tok="$3" -v e="$4" -v s="$5" -v k="$6" 'BEGIN {
        printf "| %s | %s | %s | %s | %.2f | %.0f |\n", l, p, tok, e, s, k / 1024 }'
}

sed "s/gpus = 10000;/gpus = 100000;/; s/gpu_scale = 20;/gpu_scale = 1;/; s/duration_days = 365.0;/duration_days = 3.0;/" \
    "$dir/year.cfg" > "$tmp/k100.cfg"
sed 's/facility = { gpus = 100000; };/facility = { gpus = 100000; variability = { eta_sd = 0.0172; }; };/' \
    "$tmp/k100.cfg" > "$tmp/k100v.cfg"
sed 's/facility = { gpus = 10000; };/facility = { gpus = 10000; variability = { eta_sd = 0.0172; }; };/' \
    "$dir/year.cfg" > "$tmp/yearv.cfg"
echo "| run | policy | tokens | energy J | wall s | peak RSS MiB |"
echo "|---|---|---|---|---|---|"
row "100,000 GPUs, 3 days, identical GPUs" "$tmp/k100.cfg" pfi
row "100,000 GPUs, 3 days, variability" "$tmp/k100v.cfg" pfi
row "100,000 GPUs, 3 days, variability" "$tmp/k100v.cfg" pfi+sync-shift
row "bench/year.cfg (10,000 GPUs, 365 days), identical GPUs" "$dir/year.cfg" pfi
row "bench/year.cfg, variability" "$tmp/yearv.cfg" pfi
row "bench/year.cfg, variability" "$tmp/yearv.cfg" pfi+sync-shift
