#!/bin/sh
# docs/sync-study.sh - the study of docs/results.md, "Study 4: synchronous jobs at scale"
# (issue 19): PFI by job size, and the equal / pfi / oracle / sync-shift gap at 32 and
# 4,096 GPUs per job under 10-50% cuts, with GPU efficiency spread at half, the calibrated
# and double its value, and with outliers. The H200 jobs of the shipped corpus (SYNTHETIC);
# every curve at scale is model-derived (pfisim scale). Deterministic: seed 1.
#   sh docs/sync-study.sh [PFISIM]      (default build/pfisim)
set -eu
P=${1:-build/pfisim}
C=traces/h200-h100
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -v '^h100-' "$C/curves.csv" > "$tmp/h200.csv"

echo "## PFI at a 30% cut by job size (H200 jobs; uniform caps [sync-shift])"
for sd in 0.0086 0.0172 0.0344; do
    echo
    "$P" scale "$tmp/h200.csv" --jobs "$C/jobs.csv" --pfi --eta-sd $sd | sed -n '1,3p'
done
echo
echo "with outliers (0.1% of GPUs at 0.667 of the median's efficiency):"
"$P" scale "$tmp/h200.csv" --jobs "$C/jobs.csv" --pfi --outliers 0.001:0.667 | sed -n '1,3p'
echo
echo "by family and phase, calibrated spread:"
"$P" scale "$tmp/h200.csv" --jobs "$C/jobs.csv" --pfi | sed -n '4,$p'

# One table: the throughput of each policy relative to equal with uniform caps, and the gap
# recovered against the exact optimum (the oracle with power shifting within jobs).
gap_table() { # how (--gpus N | --times K) sd label
    "$P" scale "$tmp/h200.csv" $1 --eta-sd "$2" -o "$tmp/u.csv"
    "$P" scale "$tmp/h200.csv" $1 --eta-sd "$2" --shift -o "$tmp/s.csv"
    echo
    echo "### $3"
    echo
    echo "| policy | 10% | 20% | 30% | 40% | 50% |"
    echo "|---|---|---|---|---|---|"
    for cut in 10 20 30 40 50; do
        "$P" alloc "$tmp/u.csv" --jobs "$C/jobs.csv" --cut $cut% --csv 2>/dev/null |
            awk -F, -v c=$cut '$1 == "equal" || $1 == "pfi" || $1 == "oracle" { print c, "u", $1, $2 }'
        "$P" alloc "$tmp/s.csv" --jobs "$C/jobs.csv" --cut $cut% --csv 2>/dev/null |
            awk -F, -v c=$cut '$1 == "equal" || $1 == "pfi" || $1 == "oracle" { print c, "s", $1, $2 }'
    done | awk '
        { v[$1, $2, $3] = $4; cuts[$1] = 1 }
        END {
            split("u equal|u pfi|u oracle|s equal|s pfi|s oracle", rows, "|")
            name["u equal"] = "equal"; name["u pfi"] = "pfi"
            name["u oracle"] = "oracle, uniform caps within jobs"
            name["s equal"] = "equal + sync-shift"; name["s pfi"] = "pfi + sync-shift"
            name["s oracle"] = "oracle with sync-shift (the exact optimum)"
            for (r = 1; r <= 6; r++) {
                split(rows[r], k, " ")
                line = "| " name[rows[r]]
                for (c = 10; c <= 50; c += 10) {
                    e = v[c, "u", "equal"]; o = v[c, "s", "oracle"]; x = v[c, k[1], k[2]]
                    if (o - e > 1e-9 * e)
                        line = line sprintf(" | %+.2f%% (%.2f)", 100 * (x / e - 1), (x - e) / (o - e))
                    else
                        line = line sprintf(" | %+.2f%% (-)", 100 * (x / e - 1))
                }
                print line " |"
            }
        }'
}

echo
echo "## The gap: throughput against equal with uniform caps (gap recovered, oracle with sync-shift = 1)"
gap_table "--gpus 32" 0.0172 "every job on 32 GPUs, calibrated spread (sd 0.0172)"
gap_table "--gpus 4096" 0.0172 "every job on 4,096 GPUs, calibrated spread (sd 0.0172)"
gap_table "--gpus 4096" 0.0086 "every job on 4,096 GPUs, half the spread (sd 0.0086)"
gap_table "--gpus 4096" 0.0344 "every job on 4,096 GPUs, double the spread (sd 0.0344)"
gap_table "--gpus 4096" 0 "every job on 4,096 identical GPUs (sd 0)"
gap_table "--times 128" 0.0172 "every job on 128 times its GPUs (128-4,096), calibrated spread"
