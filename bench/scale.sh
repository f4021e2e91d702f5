#!/bin/sh
# bench/scale.sh - issue 16's scaling benchmark (results in docs/benchmarks.md): years of
# 1k-100k GPUs with unscaled arrivals (the fitted ITP cluster 04 model, and Poisson), with
# jobs, events, wall time, events per second and peak RSS; time against simulated days on
# 4,096 GPUs under a 5 MW cap (bench/cap-4k.cfg) with a fitted exponent; a fitted exponent
# of time against events over the ITP years; and the Python reference (bench/pyref.py) side
# by side with pfisim on the same facility and window.
#   sh bench/scale.sh [quick]     quick: the 100k-GPU row 3 days, not a year (5 minutes on
#                                 2 cores), and no 8-day Python row
set -eu
dir=$(dirname "$0")
bin=$dir/../build/pfisim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
quick=${1:-}

row() { # label cfg [fit]: fit: the row's events and time go into the exponent's fit
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" run "$2" > "$tmp/out"
    fit=${3:-}
    set -- "$1" $(sed -n 1p "$tmp/out" | sed 's/.*, \([0-9]*\) jobs, .*DR events, \([0-9]*\) events simulated.*/\1 \2/') \
        $(cat "$tmp/time")
    [ -n "$fit" ] && echo "$3 $4" >> "$tmp/efit"
    awk -v l="$1" -v j="$2" -v e="$3" -v s="$4" -v k="$5" 'BEGIN {
        printf "| %s | %d | %d | %.2f | %.2g | %.0f |\n", l, j, e, s, e / (s > 0 ? s : 1e-3), k / 1024 }'
}

echo "| run | jobs | events | wall s | events/s | peak RSS MiB |"
echo "|---|---|---|---|---|---|"
: > "$tmp/efit"
for g in 1000 4096 10000 100000; do
    days=365
    [ "$quick" = quick ] && [ "$g" = 100000 ] && days=3
    sed "s/gpus = 10000;/gpus = $g;/; s/gpu_scale = 20;/gpu_scale = 1;/; s/duration_days = 365.0;/duration_days = $days.0;/" \
        "$dir/year.cfg" > "$tmp/itp.cfg"
    fit=fit
    [ "$days" = 365 ] || fit= # (the exponent is over years alone)
    row "$g GPUs, $days days, fitted ITP 04 unscaled, pfi" "$tmp/itp.cfg" $fit
done
awk '{ x = log($1); y = log($2 > 0 ? $2 : 1e-3); n++; sx += x; sy += y; sxx += x * x; sxy += x * y }
     END { if (n > 1) printf "\nfitted exponent over the ITP rows (time ~ events^b): b = %.2f\n\n", (n * sxy - sx * sy) / (n * sxx - sx * sx) }' "$tmp/efit"
row "10000 GPUs, 365 days, Poisson 317/h, oracle (bench/poisson-10k.cfg)" "$dir/poisson-10k.cfg"
echo
echo "time against simulated days, bench/cap-4k.cfg (4,096 GPUs, 5 MW cap, 10 events, 4 policies;"
echo "each the best of three runs, the days in turn: this machine's speed moves by a third;"
echo "wall time on every core, and CPU time (user + system), the work, which the wall time"
echo "hides: 5 runs on 2 cores where the window holds an event, 4 where it holds none):"
: > "$tmp/fit"
: > "$tmp/cfit"
for d in 7 28 91 182 365; do
    echo "$d 1e9 0 1e9" > "$tmp/best.$d"
done
for round in 1 2 3; do
    for d in 7 28 91 182 365; do
        sed "s/duration_days = 365.0;/duration_days = $d.0;/" "$dir/cap-4k.cfg" > "$tmp/cap.cfg"
        /usr/bin/time -f "%e %M %U %S" -o "$tmp/time" "$bin" run "$tmp/cap.cfg" > /dev/null
        set -- $(cat "$tmp/time") $(cat "$tmp/best.$d")
        awk -v s="$1" -v k="$2" -v c="$(echo "$3 $4" | awk '{ print $1 + $2 }')" -v d="$5" \
            -v b="$6" -v bk="$7" -v bc="$8" \
            'BEGIN { if (s < b) { b = s; bk = k }; if (c < bc) bc = c; print d, b, bk, bc }' > "$tmp/best.$d"
    done
done
for d in 7 28 91 182 365; do
    set -- $(cat "$tmp/best.$d")
    echo "$1 $2" >> "$tmp/fit"
    echo "$1 $4" >> "$tmp/cfit"
    awk -v d="$1" -v s="$2" -v k="$3" -v c="$4" 'BEGIN {
        printf "   %3d days: %6.2f s (%.4f s a day), CPU %6.2f s (%.4f s a day), %.0f MiB\n", d, s, s / d, c, c / d, k / 1024 }'
done
for f in fit cfit; do
    awk -v what="$([ $f = fit ] && echo "wall" || echo "CPU ")" '
        { x = log($1); y = log($2 > 0 ? $2 : 1e-3); n++; sx += x; sy += y; sxx += x * x; sxy += x * y
          t[n] = $2; day[n] = $1; st += $1 * $2; dd += $1 * $1 }
        END { b = st / dd; worst = 0
              for (i = 1; i <= n; i++) { dev = t[i] / (b * day[i]) - 1; if ((dev < 0 ? -dev : dev) > worst) { worst = dev < 0 ? -dev : dev; at = day[i] } }
              printf "   %s: fitted exponent (time ~ days^b, 7-365 days) b = %.2f; against the line\n", what, (n * sxy - sx * sy) / (n * sxx - sx * sx)
              printf "         through 0 fitted by least squares (%.4f s a day), at most %.0f%% off (at %d days)\n", b, 100 * worst, at }' "$tmp/$f"
done
echo
echo "pfisim against the Python reference (bench/pyref.py), 10,000 GPUs, Poisson 317/h, 50 events:"
for days in 2 8; do
    [ "$quick" = quick ] && [ "$days" = 8 ] && continue
    sed "s/duration_days = 365.0;/duration_days = $days.0;/" "$dir/poisson-10k.cfg" > "$tmp/p.cfg"
    /usr/bin/time -f "%e" -o "$tmp/tc" "$bin" run "$tmp/p.cfg" > /dev/null
    /usr/bin/time -f "%e" -o "$tmp/tp" python3 "$dir/pyref.py" --days "$days" > "$tmp/py"
    awk -v d="$days" -v c="$(cat "$tmp/tc")" -v p="$(cat "$tmp/tp")" 'BEGIN {
        printf "   %d days: pfisim %.2f s, Python %.1f s: %.0fx\n", d, c, p, p / (c > 0 ? c : 1e-3) }'
done
