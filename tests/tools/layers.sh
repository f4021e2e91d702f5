#!/bin/sh
# tests/tools/layers.sh [BUILD] - the layering check of `make lint` (docs/simulator.md,
# "Layers"): no file calls a function that a file of a higher layer defines, and no file
# includes another layer's private header.
#
# The layers, bottom up (../shared/STYLE.md): 1 diagnostics and I/O helpers, 2 models, 3 traces,
# 4 policies, 5 the engine, 6 scenarios, 7 the store and studies, 8 plots, 9 the command line.
# Between the policies and the engine lies sim/alloc.c (the true curves a one-shot allocation
# and the simulator hand the oracle). Within the engine its files are ordered too
# (sim/engine.h): setup, nodes, power, dr, record, classes, schedule, pausing, control, sim. The calls are read from the objects the build
# made (nm: each object's undefined symbols against the object that defines them), so a call
# through a macro or an inline helper counts as what it compiles to. Exit 1 with the calls
# that run up, 0 when none does.
set -eu
build=${1:-build}

# layer FILE: the layer of a source file (a number; within the engine, 5.1 to 5.9).
layer() {
    case $1 in
    sim/diag.c | sim/outfile.c | sim/cfgio.c | sim/json.c | sim/heap.c | sim/order.c | \
        sim/queue.c | sim/strindex.c | sim/storecheck.c) echo 1 ;;
    models/*) echo 2 ;;
    traces/*) echo 3 ;;
    policies/*) echo 4 ;;
    sim/alloc.c) echo 4.5 ;;
    sim/setup.c) echo 5.1 ;;
    sim/tree.c) echo 5.12 ;;
    sim/inputs.c) echo 5.15 ;;
    sim/nodes.c) echo 5.17 ;;
    sim/power.c) echo 5.2 ;;
    sim/dr.c) echo 5.3 ;;
    sim/record.c) echo 5.4 ;;
    sim/classes.c) echo 5.5 ;;
    sim/schedule.c) echo 5.6 ;;
    sim/pausing.c) echo 5.7 ;;
    sim/control.c) echo 5.8 ;;
    sim/sim.c | sim/conformance.c) echo 5.9 ;;
    sim/scenario.c) echo 6 ;;
    sim/store.c | sim/sweep.c | sim/price.c) echo 7 ;;
    plots/*) echo 8 ;;
    sim/cli/*) echo 9 ;;
    *) echo "layers.sh: no layer for $1 (add it)" >&2; echo 0 ;;
    esac
}

# The private headers of a layer are included by that layer's files alone: the engine's
# (sim/engine.h) by the engine's, the command line's (sim/cli/cli.h) by the command line's.
bad_inc=0
for src in sim/*.c sim/cli/*.c models/*.c traces/*.c policies/*.c plots/*.c; do
    l=$(layer "$src")
    case $l in 5.*) ;; *)
        if grep -q '^#include "engine.h"' "$src"; then
            echo "$src (layer $l) includes sim/engine.h, the engine's private header"
            bad_inc=1
        fi ;;
    esac
    if [ "$l" != 9 ] && grep -q '^#include "cli.h"' "$src"; then
        echo "$src (layer $l) includes sim/cli/cli.h, the command line's header"
        bad_inc=1
    fi
done
[ "$bad_inc" = 0 ] || { echo "layers.sh: a file includes another layer's private header"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for src in sim/*.c sim/cli/*.c models/*.c traces/*.c policies/*.c plots/*.c; do
    obj=$build/${src%.c}.o
    [ -f "$obj" ] || { echo "layers.sh: $obj not built (make first)" >&2; exit 2; }
    l=$(layer "$src")
    nm --defined-only -g "$obj" 2>/dev/null | awk -v s="$src" -v l="$l" \
        '$2 ~ /^[TDBRC]$/ {print $3, s, l}' >>"$tmp/defs"
    nm -u "$obj" 2>/dev/null | awk -v s="$src" -v l="$l" '{print $2, s, l}' >>"$tmp/uses"
done
# each use of a pfisim symbol against its definition
awk 'NR == FNR { file[$1] = $2; lay[$1] = $3; next }
     ($1 in file) && file[$1] != $2 && lay[$1] + 0 > $3 + 0 {
         printf "%s (layer %s) calls %s of %s (layer %s)\n", $2, $3, $1, file[$1], lay[$1]; bad++ }
     END { exit bad > 0 }' "$tmp/defs" "$tmp/uses" >"$tmp/out" || {
    sort -u "$tmp/out"
    echo "layers.sh: a lower layer calls a higher one (docs/simulator.md, \"Layers\")"
    exit 1
}
echo "layers.sh: every call runs down or across"
