#!/bin/sh
# bench/tree.sh - issue 58's bar: a year of the 10,000-GPU hall under its power tree (1,250
# nodes, 160 racks, 16 rows; bench/hall-10k.cfg) against the same hall as one node under the
# feed's limit alone (bench/hall-10k-one.cfg), the oracle, one thread each, side by side on
# two cores (about four minutes). Results in docs/benchmarks.md.
set -eu
bin=$(dirname "$0")/../build/pfisim
cfg=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for c in hall-10k-one hall-10k; do
    /usr/bin/time -f "%e %M" -o "$tmp/$c.time" "$bin" run "$cfg/$c.cfg" --policy oracle \
        --threads 1 --csv >"$tmp/$c.out" 2>/dev/null &
done
wait
for c in hall-10k-one hall-10k; do
    echo "$c: $(cut -d' ' -f1 "$tmp/$c.time") s, $(cut -d' ' -f2 "$tmp/$c.time") KB peak," \
        "tokens $(sed -n 2p "$tmp/$c.out" | cut -d, -f2)"
done
awk '{ t[NR] = $1 } END { printf "the tree over the one node: %.2fx (the bar: 1.5x)\n", t[2] / t[1] }' \
    "$tmp/hall-10k-one.time" "$tmp/hall-10k.time"
