#!/bin/sh
# bench/work.sh - issue 16's time against simulated days, counted as work: the instructions
# of bench/cap-4k.cfg (4,096 GPUs, 5 MW cap, 10 events, four policies) over windows of 7 to
# 365 days, under valgrind's callgrind with one thread (the four policies and the run
# without events one after another). This machine's speed moves by a third within minutes;
# an instruction count does not. Results in docs/benchmarks.md ("What an event costs equal
# and sla"); about 10 minutes on 2 cores.
#   sh bench/work.sh [DAYS...]     default: 7 13 28 91 182 365
set -eu
dir=$(dirname "$0")
bin=$dir/../build/pfisim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v valgrind > /dev/null || { echo "bench/work.sh: needs valgrind (Debian: valgrind)" >&2; exit 1; }
[ $# -gt 0 ] || set -- 7 13 28 91 182 365
echo "| days | events in the window | instructions | per day |"
echo "|---|---|---|---|"
: > "$tmp/fit"
for d in "$@"; do
    sed "s/duration_days = 365.0;/duration_days = $d.0;/" "$dir/cap-4k.cfg" > "$tmp/cap.cfg"
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$bin" run "$tmp/cap.cfg" \
        --threads 1 > "$tmp/out" 2> "$tmp/err"
    ev=$(sed -n 1p "$tmp/out" | sed 's/.*, \([0-9]*\) DR events,.*/\1/')
    ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/err")
    echo "$d $ir" >> "$tmp/fit"
    awk -v d="$d" -v e="$ev" -v i="$ir" 'BEGIN { printf "| %d | %d | %.3f G | %.4f G |\n", d, e, i / 1e9, i / 1e9 / d }'
done
awk '{ x = log($1); y = log($2); n++; sx += x; sy += y; sxx += x * x; sxy += x * y
       t[n] = $2; day[n] = $1; st += $1 * $2; dd += $1 * $1 }
     END { if (n < 2) exit
           b = st / dd; worst = 0
           for (i = 1; i <= n; i++) { dev = t[i] / (b * day[i]) - 1; if ((dev < 0 ? -dev : dev) > worst) { worst = dev < 0 ? -dev : dev; at = day[i] } }
           printf "\nfitted exponent (instructions ~ days^b): b = %.2f; against the line through 0 fitted\n", (n * sxy - sx * sy) / (n * sxx - sx * sx)
           printf "by least squares (%.4f G a day): at most %.0f%% off (at %d days)\n", b / 1e9, 100 * worst, at }' "$tmp/fit"
