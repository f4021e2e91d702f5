#!/bin/sh
# configs/run-default.sh - what `make run` runs: the built-in demonstration.
#
# Always: the DVFS model's curves for a compute-bound and a memory-bound job on the H100
# and H200 profiles, the synthetic corpus and a workload from the fitted Kalos arrivals. With the data directory ($PFISIM_DATA, default ../shared/data):
# the three real power-cap data sets imported into curves and fitted. Outputs go under
# results/ and their paths are printed at the end.
set -eu
bin=${1:-build/pfisim}
data=${PFISIM_DATA:-../shared/data}
out=results
mkdir -p "$out/curves" "$out/fits"
rm -f "$out/pfisim.db" "$out/pfisim.db-wal" "$out/pfisim.db-shm" "$out/phoenix.db" \
    "$out/phoenix.db-wal" "$out/phoenix.db-shm" # a fresh study each time

for gpu in h100-sxm h200-sxm; do
    echo "== model: $gpu, compute-bound dense pre-training (alpha 0.9, activity 0.95)"
    "$bin" model "$gpu" --alpha 0.9 --activity 0.95 --mem-w 60 --step 100
    echo "== model: $gpu, memory-bound job (alpha 0.35, activity 0.55)"
    "$bin" model "$gpu" --alpha 0.35 --activity 0.55 --mem-w 90 --step 100
done

echo "== the default scenario (configs/default.cfg): 1,024 H200s, 7 days, three 30% DR events"
"$bin" run --timeseries-csv "$out/timeseries.csv" --db="$out/pfisim.db" | tee "$out/run.txt"
"$bin" plot "$out/pfisim.db" -o "$out/plots"
"$bin" report "$out/pfisim.db" -o "$out/report.pdf"

echo "== synthetic H100/H200 corpus (seed 7) and a 7-day workload on 1,024 GPUs"
"$bin" synth --seed 7 -o "$out/corpus"
"$bin" workload --arrivals fitted:kalos --corpus "$out/corpus" --gpus 1024 --days 7 \
    -o "$out/workload.csv"
echo "   $(($(wc -l < "$out/workload.csv") - 1)) jobs in $out/workload.csv"

if [ -d "$data/power" ]; then
    "$bin" import perseus --gpu a100-pcie \
        "$data/power/perseus-sosp24/zeus_csv_A100_zeus_global.csv" -o "$out/curves/perseus.csv"
    "$bin" import zeus "$data/power/zeus-nsdi23/summary_power_a40.csv" -o "$out/curves/zeus-a40.csv"
    "$bin" import emerald --gpu a100-sxm "$data/emerald-phoenix/dvfs_sweep.csv" \
        -o "$out/curves/emerald.csv"
    echo "== the Phoenix replay (configs/phoenix-srp.cfg) against the measured DR event"
    "$bin" run configs/phoenix-srp.cfg --db="$out/phoenix.db"
    "$bin" plot "$out/phoenix.db" -o "$out/plots" --only phoenix
    "$bin" report "$out/phoenix.db" -o "$out/phoenix-report.pdf"
    for s in perseus emerald zeus-a40; do
        echo "== fit: real curves, $s"
        "$bin" fit "$out/curves/$s.csv" | tee "$out/fits/$s.txt"
        "$bin" fit --csv "$out/curves/$s.csv" > "$out/fits/$s.csv"
    done
    echo
    echo "outputs: $out/curves/{perseus,emerald,zeus-a40}.csv (real data, imported)"
    echo "         $out/fits/*.txt, $out/fits/*.csv (fits and PFI)"
    echo "         $out/corpus/ (synthetic corpus), $out/workload.csv"
    echo "         $out/run.txt (the default scenario), $out/timeseries.csv (per minute)"
    echo "         $out/pfisim.db (every run of the default scenario, docs/results.md)"
    echo "         $out/plots/{curves,pfi,power,throughput,comparison,outcomes,phoenix}.png (docs/plots.md)"
    echo "         $out/report.pdf, $out/phoenix-report.pdf (the PDF reports)"
else
    echo
    echo "no real data at $data (set PFISIM_DATA): model, synthetic corpus and workload only"
    echo "outputs: $out/corpus/ (synthetic corpus), $out/workload.csv"
    echo "         $out/run.txt (the default scenario), $out/timeseries.csv (per minute)"
    echo "         $out/pfisim.db (every run of the default scenario, docs/results.md)"
    echo "         $out/plots/{curves,pfi,power,throughput,comparison,outcomes}.png (docs/plots.md), $out/report.pdf"
fi
