#!/bin/sh
# bench/days.sh - issue 16's bar in time: bench/cap-4k.cfg (4,096 GPUs, 5 MW cap, 10 events,
# four policies) over windows of 7 to 365 days, each run N times with the windows in turn
# (this machine's speed moves by a third within minutes): the least and the median of
# one thread's CPU time (task-clock, where perf is there; --threads 1) and of the wall
# time with pfisim's default threads, in ms; how far each window is from the line through
# 0 fitted by least squares; the line through 0 nearest the worst window (its time a day
# halfway between the windows' least and most), and whether every window is within 20% of
# it: issue 16's bar, "time against simulated days linear within 20%", on the wall time
# (the user's time; the CPU time is the work beside it), read on the least of the N (the
# run's cost under the least of the machine's noise) and on the medians
# (docs/benchmarks.md, "The linearity bar read against its own tolerance"); and, apart
# from the bar, the least less
# the 0.01-day window's (the start-up every window pays) against the line through 0 fitted
# to those: the days' own cost. The wall time is perf's, from the fork
# to the exit; without perf it is taken around the command with date(1), whose own two
# starts add some 7 ms here. The work, which does not move, is bench/work.sh's. About a
# minute at N = 7. Results in docs/benchmarks.md ("Page faults, and the linearity bar
# taken apart"; "Start-up").
#   sh bench/days.sh [N [DAYS...]]     default: 5 and 7 13 28 91 182 365
set -eu
dir=$(dirname "$0")
bin=$dir/../build/pfisim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=${1:-5}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- 7 13 28 91 182 365
days="$*"
perf=0
command -v perf > /dev/null 2>&1 && perf stat -x, -e task-clock true > /dev/null 2>&1 && perf=1

now_ns() { date +%s%N; }

for _ in $(seq "$n"); do
    for d in 0.01 $days; do
        args="run $dir/cap-4k.cfg --days $d --policy equal --policy sla --policy pfi --policy oracle --csv"
        if [ $perf = 1 ]; then
            # shellcheck disable=SC2086 # (the arguments, one word each)
            perf stat -x, -e task-clock "$bin" $args --threads 1 2> "$tmp/stat" > /dev/null
            awk -F, -v d="$d" '/task-clock/ { print d, $1 }' "$tmp/stat" >> "$tmp/cpu"
        fi
        if [ $perf = 1 ]; then
            # shellcheck disable=SC2086
            perf stat -e task-clock "$bin" $args 2> "$tmp/stat" > /dev/null
            awk -v d="$d" '/seconds time elapsed/ { print d, $1 * 1000 }' "$tmp/stat" >> "$tmp/wall"
        else
            t0=$(now_ns)
            # shellcheck disable=SC2086
            "$bin" $args > /dev/null
            t1=$(now_ns)
            echo "$d $(( (t1 - t0) / 1000 ))" | awk '{ print $1, $2 / 1000 }' >> "$tmp/wall"
        fi
    done
done

# The 0.01-day window apart: the start-up every window pays (start, reading, set-up, exit).
for f in cpu wall; do
    [ -f "$tmp/$f" ] || continue
    awk '$1 == 0.01 { print $2 }' "$tmp/$f" | sort -n | head -1 > "$tmp/$f.start"
    awk '$1 != 0.01' "$tmp/$f" > "$tmp/$f.days"
    mv "$tmp/$f.days" "$tmp/$f"
done

# table FILE LABEL WHAT: the least and the median per window, and each one's miss from the
# line through 0 fitted to the least and to the medians; the nearest lines through 0, and
# whether WHAT (the bar, or the work beside it) is within 20% of them; then the least less
# the 0.01-day window's least (F) against the line through 0 fitted to those
table() {
    sort -k1,1n -k2,2n "$1" | awk -v label="$2" -v what="$3" -v f="$(cat "$1.start")" '
        { if ($1 != d) { if (d != "") keep(); d = $1; m = 0 } v[++m] = $2 }
        function keep() { n++; day[n] = d; lo[n] = v[1]; med[n] = v[int((m + 1) / 2)] }
        END { keep()
              for (i = 1; i <= n; i++) { sl += lo[i] * day[i]; sm += med[i] * day[i]; dd += day[i] * day[i] }
              bl = sl / dd; bm = sm / dd
              printf "\n%s\n\n| days | least | off the line | median | off the line |\n|---|---|---|---|---|\n", label
              for (i = 1; i <= n; i++)
                  printf "| %d | %.1f ms | %+.0f%% | %.1f ms | %+.0f%% |\n", day[i], lo[i], 100 * (lo[i] / (bl * day[i]) - 1), med[i], 100 * (med[i] / (bm * day[i]) - 1)
              printf "\nthe least-squares lines through 0: %.3f ms a day (the least), %.3f ms a day (the medians)\n", bl, bm
              # how far the worst window is from the least-squares line, and from the line
              # through 0 nearest to it (the minimax line: its time a day halfway between the
              # least and the most of the windows, every one within (most - least) / (most + least))
              for (i = 1; i <= n; i++) {
                  x = lo[i] / (bl * day[i]) - 1; if (x < 0) x = -x; if (x > wl) wl = x
                  x = med[i] / (bm * day[i]) - 1; if (x < 0) x = -x; if (x > wm) wm = x
                  r = lo[i] / day[i]; if (i == 1 || r < rl) rl = r; if (i == 1 || r > rh) rh = r
                  r = med[i] / day[i]; if (i == 1 || r < ml) ml = r; if (i == 1 || r > mh) mh = r }
              nl = (rh - rl) / (rh + rl); nm = (mh - ml) / (mh + ml)
              printf "the nearest lines through 0: %.3f ms a day (the least), every window within %.1f%%; %.3f ms a day (the medians), within %.1f%%\n", (rl + rh) / 2, 100 * nl, (ml + mh) / 2, 100 * nm
              printf "%s, every window within 20%% of the nearest line through 0: the least %s, the medians %s\n", what, nl <= 0.2 ? "met" : "NOT met", nm <= 0.2 ? "met" : "NOT met"
              printf "(of the least-squares line: the least at most %.1f%% off, %s; the medians %.1f%%, %s)\n", 100 * wl, wl <= 0.2 ? "within 20%" : "NOT within 20%", 100 * wm, wm <= 0.2 ? "within 20%" : "NOT within 20%"
              # the cost of the days alone: the least less F, against the line through 0 fitted to it
              sf = 0
              for (i = 1; i <= n; i++) sf += (lo[i] - f) * day[i]
              bf = sf / dd
              printf "less the 0.01-day window (%.1f ms, the least):", f
              for (i = 1; i <= n; i++) printf " %d days %+.0f%%", day[i], 100 * ((lo[i] - f) / (bf * day[i]) - 1)
              printf " (%.3f ms a day)\n", bf }'
}
echo "bench/cap-4k.cfg, four policies, $n runs a window"
[ $perf = 1 ] && table "$tmp/cpu" "one thread's CPU time (perf stat task-clock, --threads 1):" "the work (beside the bar)"
[ $perf = 1 ] || echo "(no perf here: no CPU time)"
table "$tmp/wall" "wall time, default threads:" "the bar (the wall time)"
