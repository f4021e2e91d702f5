#!/bin/sh
# docs/blackwell-study.sh - the study of docs/results.md, "Study 5: does PFI-aware
# allocation still pay on B200?" (issue 21): the one-shot gap at a 30% cut, a simulated week,
# and the oversubscription optimum, on the H200 and on the EXTRAPOLATED Blackwell profiles,
# each Blackwell number as a range over draws of its profile (a centred Latin hypercube,
# seed 1). Every curve is SYNTHETIC (pfisim synth's configurations, seed 7, measured on each
# profile by the model). Deterministic.
#   sh docs/blackwell-study.sh [PFISIM] [DRAWS] [CAPACITY_DRAWS]   (build/pfisim, 50, 10)
set -eu
P=${1:-build/pfisim}
N=${2:-50}
NC=${3:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "## 1. One-shot allocation at a 30% cut (the corpus on each GPU)"
echo
echo "### H200 (measured-data profile: no ranges; the point)"
"$P" alloc synth:h200-sxm --cut 30% --csv 2>/dev/null
echo "with --given-pfi:"
"$P" alloc synth:h200-sxm --cut 30% --given-pfi --csv 2>/dev/null
mkdir -p results/plots
for g in b200 gb200 b100; do
    echo
    echo "### $g, $N draws (pfi: the H200-trained predictor; then --given-pfi: PFI measured on $g)"
    "$P" alloc "synth:$g" --cut 30% --uncertainty "$N" --csv \
        --plot "results/plots/blackwell-$g.png"
    "$P" alloc "synth:$g" --cut 30% --uncertainty "$N" --given-pfi --csv \
        --plot "results/plots/blackwell-$g-given-pfi.png" | grep -E '^(pfi|oracle|proportional),'
done

echo
echo "## 2. A simulated week: 1,024 GPUs, the default arrivals and DR events"
for g in h200-sxm b200; do
    cat > "$tmp/week-$g.cfg" <<EOF
scenario = { name = "week-$g"; duration_days = 7.0;
  facility = { gpus = 1024; gpu = "$g"; };
  workload = { corpus = "synth:$g"; };
  dr_events = ( { start_h = 42.0; end_h = 45.0; ramp_min = 15.0; cut = 0.3; },
                { start_h = 89.0; end_h = 92.0; ramp_min = 15.0; cut = 0.3; },
                { start_h = 137.0; end_h = 140.0; ramp_min = 15.0; cut = 0.3; } );
  policies = ["equal", "pfi", "oracle"]; };
EOF
done
echo
echo "### h200-sxm (the point)"
"$P" run "$tmp/week-h200-sxm.cfg" --csv | cut -d, -f1-5,10 
echo
echo "### b200, $N draws"
"$P" run "$tmp/week-b200.cfg" --uncertainty "$N" --csv

echo
echo "## 3. The oversubscription optimum behind a fixed cap (a year, 40 DR events, equal and pfi)"
# As configs/sweeps/oversub-base.cfg: the cap is what 1,024 GPUs draw at full power with
# their nodes (1.3 x (1,024 x TGP + 128 x 1,500 W)); 1.0x to 2.0x the GPUs behind it.
for g in h200-sxm b200; do
    case $g in
    h200-sxm) cap=1181440.0 ;;
    b200) cap=1581440.0 ;;
    esac
    sed -e "s/gpu = \"h200-sxm\";/gpu = \"$g\";/" -e "s/cap_w = 1181440.0;/cap_w = $cap;/" \
        -e "s#corpus = \"traces/h200-h100\";#corpus = \"synth:$g\";#" \
        -e "s/policies = .*/policies = [\"equal\", \"pfi\"];/" \
        configs/sweeps/oversub-base.cfg > "$tmp/oversub-$g.cfg"
done
echo
echo "### h200-sxm (the point)"
"$P" capacity "$tmp/oversub-h200-sxm.cfg" --gpus 1024,1280,1536,1792,2048 --dr-per-year 40 \
    -j 2 2>/dev/null | grep -E 'most tokens|DR events a year|without' || true
d=0
while [ "$d" -lt "$NC" ]; do
    sed "s/^};/    uncertainty = { draws = $NC; draw = $d; seed = 1; };\n};/" \
        "$tmp/oversub-b200.cfg" > "$tmp/oversub-b200-$d.cfg"
    echo
    echo "### b200, draw $((d + 1)) of $NC"
    "$P" capacity "$tmp/oversub-b200-$d.cfg" --gpus 1024,1280,1536,1792,2048 --dr-per-year 40 \
        -j 2 2>/dev/null | grep -E 'most tokens|DR events a year|without' || true
    d=$((d + 1))
done
