#!/bin/sh
# configs/run-default.sh - what `make run` runs: the built-in demonstration, in a dozen lines.
#
# Always: the DVFS model's curves for a compute-bound and a memory-bound job on the H100 and
# H200 profiles, the default scenario (with its figures and report), the synthetic corpus and
# a workload from the fitted Kalos arrivals. With the data directory ($PFISIM_DATA, default
# ../shared/data): the three real power-cap data sets imported and fitted, and the Phoenix
# replay. Every command's output goes to a file under results/ (results/log/ for the text);
# what is printed is what ran, where it went, and the headline per policy.
set -eu
bin=${1:-build/pfisim}
data=${PFISIM_DATA:-../shared/data}
out=results
log=$out/log
mkdir -p "$out/curves" "$out/fits" "$log"
rm -f "$out/pfisim.db" "$out/pfisim.db-wal" "$out/pfisim.db-shm" "$out/phoenix.db" \
    "$out/phoenix.db-wal" "$out/phoenix.db-shm" # a fresh study each time

# step NAME COMMAND...: runs it with its output in results/log/NAME.txt; on failure shows it.
step() {
    name=$1
    shift
    if ! "$@" > "$log/$name.txt" 2>&1; then
        echo "make run: '$*' failed:" >&2
        tail -n 20 "$log/$name.txt" >&2
        exit 1
    fi
}

for gpu in h100-sxm h200-sxm; do
    step "model-$gpu-compute" "$bin" model "$gpu" --alpha 0.9 --activity 0.95 --mem-w 60 --step 100
    step "model-$gpu-memory" "$bin" model "$gpu" --alpha 0.35 --activity 0.55 --mem-w 90 --step 100
done
echo "model: the H100 and H200 curves of a compute- and a memory-bound job ($log/model-*.txt)"

step run "$bin" run --timeseries-csv "$out/timeseries.csv" --db="$out/pfisim.db"
cp "$log/run.txt" "$out/run.txt"
step plot "$bin" plot "$out/pfisim.db" -o "$out/plots"
step report "$bin" report "$out/pfisim.db" -o "$out/report.pdf"
sed -n 1p "$out/run.txt" | sed 's/^scenario default:/the default scenario:/'
# the headline: tokens and the gap recovered per policy, against equal (the table's columns)
awk 'NR == 2 { for (i = 1; i <= NF; i++) col[$i] = i; next }
     NR > 2 && NF == 0 { exit }
     NR > 2 { tok[NR] = $col["tokens"]; pol[NR] = $1; gap[NR] = $col["gap_recovered"];
              if ($1 == "equal") eq = $col["tokens"]; last = NR }
     END { for (r = 3; r <= last; r++)
             printf "  %-7s %.4g tokens, %+.2f%% against equal, gap recovered %s\n",
                    pol[r], tok[r], (eq > 0 ? 100 * (tok[r] - eq) / eq : 0), gap[r] }' "$out/run.txt"
echo "  in $out/run.txt (every column), $out/pfisim.db, $out/timeseries.csv, $out/plots/, $out/report.pdf"

step synth "$bin" synth --seed 7 -o "$out/corpus"
step workload "$bin" workload --arrivals fitted:kalos --corpus "$out/corpus" --gpus 1024 --days 7 \
    -o "$out/workload.csv"
echo "SYNTHETIC corpus (seed 7) in $out/corpus/; a 7-day workload of" \
    "$(($(wc -l < "$out/workload.csv") - 1)) jobs in $out/workload.csv"

if [ -d "$data/power" ]; then
    step import-perseus "$bin" import perseus --gpu a100-pcie \
        "$data/power/perseus-sosp24/zeus_csv_A100_zeus_global.csv" -o "$out/curves/perseus.csv"
    step import-zeus "$bin" import zeus "$data/power/zeus-nsdi23/summary_power_a40.csv" \
        -o "$out/curves/zeus-a40.csv"
    step import-emerald "$bin" import emerald --gpu a100-sxm \
        "$data/emerald-phoenix/dvfs_sweep.csv" -o "$out/curves/emerald.csv"
    for s in perseus emerald zeus-a40; do
        step "fit-$s" "$bin" fit "$out/curves/$s.csv"
        cp "$log/fit-$s.txt" "$out/fits/$s.txt"
        "$bin" fit --csv "$out/curves/$s.csv" > "$out/fits/$s.csv"
    done
    echo "REAL data: Perseus, Zeus A40 and Emerald imported to $out/curves/, fitted in $out/fits/"
    step phoenix "$bin" run configs/phoenix-srp.cfg --db="$out/phoenix.db"
    step phoenix-plot "$bin" plot "$out/phoenix.db" -o "$out/plots" --only phoenix
    step phoenix-report "$bin" report "$out/phoenix.db" -o "$out/phoenix-report.pdf"
    echo "REAL event: the Phoenix replay in $log/phoenix.txt, $out/phoenix-report.pdf" \
        "(docs/validation.md)"
else
    echo "no real data at $data (set PFISIM_DATA): the model, the default scenario and the" \
        "synthetic corpus only"
fi
