#!/bin/sh
# bench/work.sh - issue 16's time against simulated days, counted as work: the instructions
# of bench/cap-4k.cfg (4,096 GPUs, 5 MW cap, 10 events, four policies) over windows of 7 to
# 365 days, under valgrind's callgrind with one thread (the four policies and the run
# without events one after another). This machine's speed moves by a third within minutes;
# an instruction count does not. Results in docs/benchmarks.md ("What an event costs equal
# and sla", "The cap-4k series without its events", "An event's passes, fewer and
# shorter"); some 5-10 minutes on 2 cores, twice that with --without-events. Fits: the
# exponent in days, the line through 0 and a + b days (the bar: linear in days), a + b
# days + e events (linear in the work), and a + b run-days + e events with the cost of an
# event at which the bar would be met.
#   sh bench/work.sh [--without-events] [DAYS...]     default: 7 13 28 91 182 365
# --without-events: the same windows with `dr_events = ();` as well, and what the events
# add: the run without events that prices them (a quarter of the four runs' own work) and
# the rest, per event.
set -eu
dir=$(dirname "$0")
me=bench/work.sh
. "$dir/callgrind.sh"
both=0
if [ "${1:-}" = "--without-events" ]; then
    both=1
    shift
fi
[ $# -gt 0 ] || set -- 7 13 28 91 182 365

# instructions DAYS EVENTS?: prints "EVENTS INSTRUCTIONS" for the window, with or without
# its events (1 or 0)
instructions() {
    sed "s/duration_days = 365.0;/duration_days = $1.0;/" "$dir/cap-4k.cfg" > "$tmp/cap.cfg"
    if [ "$2" = 0 ]; then
        without_events "$tmp/cap.cfg" "$tmp/capn.cfg"
        mv "$tmp/capn.cfg" "$tmp/cap.cfg"
    fi
    counted "$tmp/cap.cfg"
}

if [ $both = 1 ]; then
    echo "| days | events in the window | instructions | without the events | per day, without | the run without events | the rest, per event |"
    echo "|---|---|---|---|---|---|---|"
else
    echo "| days | events in the window | instructions | per day |"
    echo "|---|---|---|---|"
fi
: > "$tmp/fit"
: > "$tmp/fit0"
for d in "$@"; do
    read -r ev ir <<EOF
$(instructions "$d" 1)
EOF
    echo "$d $ir $ev" >> "$tmp/fit"
    if [ $both = 1 ]; then
        read -r _ ir0 <<EOF
$(instructions "$d" 0)
EOF
        echo "$d $ir0" >> "$tmp/fit0"
        awk -v d="$d" -v e="$ev" -v i="$ir" -v z="$ir0" 'BEGIN {
            nodr = e > 0 ? z / 4 : 0
            printf "| %d | %d | %.3f G | %.3f G | %.4f G | %.3f G | %s |\n", d, e, i / 1e9, z / 1e9,
                   z / 1e9 / d, nodr / 1e9, (e > 0 ? sprintf("%.3f G", (i - z - nodr) / e / 1e9) : "-") }'
    else
        awk -v d="$d" -v e="$ev" -v i="$ir" 'BEGIN { printf "| %d | %d | %.3f G | %.4f G |\n", d, e, i / 1e9, i / 1e9 / d }'
    fi
done

# fit LABEL FILE: the exponent, the line through 0 by least squares and the line a + b d,
# each with its worst relative miss
fit() {
    awk -v label="$1" '{ x = log($1); y = log($2); n++; sx += x; sy += y; sxx += x * x; sxy += x * y
           t[n] = $2; day[n] = $1; st += $1 * $2; dd += $1 * $1; sd += $1; si += $2 }
         END { if (n < 2) exit
               b = st / dd; worst = 0; at = at1 = day[1]
               for (i = 1; i <= n; i++) { dev = t[i] / (b * day[i]) - 1; if ((dev < 0 ? -dev : dev) > worst) { worst = dev < 0 ? -dev : dev; at = day[i] } }
               b1 = (n * st - sd * si) / (n * dd - sd * sd); a1 = (si - b1 * sd) / n; worst1 = 0
               for (i = 1; i <= n; i++) { dev = t[i] / (a1 + b1 * day[i]) - 1; if ((dev < 0 ? -dev : dev) > worst1) { worst1 = dev < 0 ? -dev : dev; at1 = day[i] } }
               printf "\n%s: fitted exponent (instructions ~ days^b): b = %.2f; against the line through 0 fitted\n", label, (n * sxy - sx * sy) / (n * sxx - sx * sx)
               printf "by least squares (%.4f G a day): at most %.0f%% off (at %d days); against a + b days\n", b / 1e9, 100 * worst, at
               printf "(a = %.3f G, b = %.4f G a day): at most %.0f%% off (at %d days)\n", a1 / 1e9, b1 / 1e9, 100 * worst1, at1 }' "$2"
}
# fit_events FILE: the work as a + b days + e events by least squares (Cramer's rule on the
# normal equations), with each window's relative miss: linear in the work, which days alone
# cannot show while the short windows hold no event
fit_events() {
    awk 'function det3(M) {
             return M[1,1] * (M[2,2] * M[3,3] - M[2,3] * M[3,2]) - M[1,2] * (M[2,1] * M[3,3] - M[2,3] * M[3,1]) + M[1,3] * (M[2,1] * M[3,2] - M[2,2] * M[3,1]) }
         { n++; d[n] = $1; t[n] = $2; k[n] = $3 }
         END { if (n < 4) exit
               for (i = 1; i <= n; i++) { x[1] = 1; x[2] = d[i]; x[3] = k[i]
                   for (r = 1; r <= 3; r++) { v[r] += x[r] * t[i]; for (c = 1; c <= 3; c++) A[r, c] += x[r] * x[c] } }
               if ((det = det3(A)) == 0) { print "\nno fit in days and events: the windows\047 events do not vary apart from their days"; exit }
               for (c = 1; c <= 3; c++) {
                   for (r = 1; r <= 3; r++) for (q = 1; q <= 3; q++) B[r, q] = (q == c) ? v[r] : A[r, q]
                   p[c] = det3(B) / det }
               printf "\nagainst a + b days + e events (a = %.3f G, b = %.4f G a day, e = %.3f G an event):", p[1] / 1e9, p[2] / 1e9, p[3] / 1e9
               for (i = 1; i <= n; i++) printf " %+.1f%%", 100 * ((p[1] + p[2] * d[i] + p[3] * k[i]) / t[i] - 1)
               printf " (the windows in order)\n" }' "$1"
}
# fit_priced FILE: the work as a + b run-days + e events, a window with an event holding
# five runs (pfisim run's four policies and the run without events that prices the events)
# and one without, four; then, from the measured windows less only their events' share,
# the cost of an event at which the line through 0 passes every window within 20%: what
# the bar needs of the events, with the step of the run without events kept apart
fit_priced() {
    awk 'function det3(M) {
             return M[1,1] * (M[2,2] * M[3,3] - M[2,3] * M[3,2]) - M[1,2] * (M[2,1] * M[3,3] - M[2,3] * M[3,1]) + M[1,3] * (M[2,1] * M[3,2] - M[2,2] * M[3,1]) }
         function worst(e,   i, s, dd, w, dev, m) {
             s = 0; dd = 0; w = 0
             for (i = 1; i <= n; i++) { m[i] = t[i] - (p[3] - e) * k[i]; s += m[i] * d[i]; dd += d[i] * d[i] }
             s /= dd
             for (i = 1; i <= n; i++) { dev = m[i] / (s * d[i]) - 1; if ((dev < 0 ? -dev : dev) > w) w = dev < 0 ? -dev : dev }
             return w }
         { n++; d[n] = $1; t[n] = $2; k[n] = $3 }
         END { if (n < 4) exit
               for (i = 1; i <= n; i++) { x[1] = 1; x[2] = d[i] * (k[i] > 0 ? 5 : 4); x[3] = k[i]
                   for (r = 1; r <= 3; r++) { v[r] += x[r] * t[i]; for (c = 1; c <= 3; c++) A[r, c] += x[r] * x[c] } }
               if ((det = det3(A)) == 0) exit
               for (c = 1; c <= 3; c++) {
                   for (r = 1; r <= 3; r++) for (q = 1; q <= 3; q++) B[r, q] = (q == c) ? v[r] : A[r, q]
                   p[c] = det3(B) / det }
               printf "\nagainst a + b run-days + e events (a = %.3f G, b = %.5f G a run-day, e = %.3f G an event):", p[1] / 1e9, p[2] / 1e9, p[3] / 1e9
               for (i = 1; i <= n; i++) printf " %+.1f%%", 100 * ((p[1] + p[2] * d[i] * (k[i] > 0 ? 5 : 4) + p[3] * k[i]) / t[i] - 1)
               printf " (the windows in order)\n"
               if (worst(p[3]) <= 0.2) { printf "within 20%% of the line through 0 at this cost of an event\n"; exit }
               for (e = p[3]; e > 0 && worst(e) > 0.2; e -= 1e6) ;
               if (e > 0) printf "within 20%% of the line through 0: at %.3f G an event or less (the events alone)\n", e / 1e9
               else printf "not within 20%% of the line through 0 at any cost of an event: the run without events\047 step alone\n" }' "$1"
}
fit "with its events" "$tmp/fit"
fit_events "$tmp/fit"
fit_priced "$tmp/fit"
[ $both = 0 ] || fit "without them" "$tmp/fit0"
