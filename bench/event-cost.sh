#!/bin/sh
# bench/event-cost.sh - what one DR event costs each policy, counted as work: the
# instructions of bench/cap-4k.cfg (4,096 GPUs, 5 MW cap) over a window of DAYS (default 91:
# five of its events) under valgrind's callgrind, one policy and one thread a run. A
# policy's run with the window's events holds the run without events that prices them; so
# an event costs (the run with events - the same run without them - one more simulation
# without events) / the events, that last measured as two policies' runs without events
# less one (the same for every policy: without events the 5 MW cap never binds). About two
# minutes. Results in docs/benchmarks.md ("sla's floors kept between decisions").
#   sh bench/event-cost.sh [DAYS [POLICY...]]     default: 91 equal sla pfi oracle
set -eu
dir=$(dirname "$0")
me=bench/event-cost.sh
. "$dir/callgrind.sh"
days=${1:-91}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- equal sla pfi oracle
without_events "$dir/cap-4k.cfg" "$tmp/none.cfg"

# work CFG POLICY...: prints "EVENTS INSTRUCTIONS" for one run of the window
work() {
    cfg=$1
    shift
    args=
    for p in "$@"; do args="$args --policy $p"; done
    # shellcheck disable=SC2086 # (the policies, one word each)
    counted "$cfg" --days "$days" $args
}

read -r _ one <<EOF2
$(work "$tmp/none.cfg" pfi)
EOF2
read -r _ two <<EOF2
$(work "$tmp/none.cfg" pfi pfi)
EOF2
echo "bench/cap-4k.cfg, $days days, one thread; a simulation without events: $(awk -v a="$one" -v b="$two" 'BEGIN { printf "%.3f G", (b - a) / 1e9 }')"
echo
echo "| policy | events | with them | without them | an event |"
echo "|---|---|---|---|---|"
for p in "$@"; do
    read -r k with <<EOF2
$(work "$dir/cap-4k.cfg" "$p")
EOF2
    read -r _ without <<EOF2
$(work "$tmp/none.cfg" "$p")
EOF2
    awk -v p="$p" -v k="$k" -v e="$with" -v n="$without" -v r="$((two - one))" 'BEGIN {
        printf "| %s | %d | %.3f G | %.3f G | %s |\n", p, k, e / 1e9, n / 1e9,
               (k > 0 ? sprintf("%.3f G", (e - n - r) / k / 1e9) : "-") }'
done
