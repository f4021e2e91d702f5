# bench/callgrind.sh - sourced by bench/work.sh and bench/event-cost.sh: one pfisim run
# counted by valgrind's callgrind, and a scenario without its DR events. Needs dir (the
# bench folder) and me (the script's name, for messages); sets bin, and tmp (removed at
# exit).
bin=$dir/../build/pfisim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v valgrind > /dev/null || { echo "$me: needs valgrind (Debian: valgrind)" >&2; exit 1; }

# without_events IN OUT: scenario IN with its events' list, up to its closing line, made
# empty (`dr_events = ();`)
without_events() {
    awk '/dr_events = \(/ { print "    dr_events = ();"; skip = 1; next }
         skip && /^    \);/ { skip = 0; next } !skip' "$1" > "$2"
}

# counted CFG ARG...: prints "EVENTS INSTRUCTIONS" of `pfisim run CFG ARG... --threads 1`
counted() {
    cfg=$1
    shift
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$bin" run "$cfg" "$@" \
        --threads 1 > "$tmp/out" 2> "$tmp/err"
    ev=$(sed -n 1p "$tmp/out" | sed 's/.*, \([0-9]*\) DR events,.*/\1/')
    ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/err")
    echo "$ev $ir"
}
