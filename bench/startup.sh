#!/bin/sh
# bench/startup.sh - what a process of pfisim costs before it simulates anything: the
# executable with its dependencies' static archives (the default, LINK_DEPS=static) against
# the same objects linked to the shared libraries (LINK_DEPS=shared, linked here into
# build/pfisim-shared), each run N times in turn: `pfisim --version`, and a 0.01-day window
# of bench/cap-4k.cfg with four policies on one thread. The least and the median of
# perf's task-clock (of the CPU time from getrusage where perf is not there), in ms, and
# the shared objects each loads. Results in docs/benchmarks.md ("Start-up").
#   sh bench/startup.sh [N]     default: 15
set -eu
dir=$(dirname "$0")
root=$dir/..
n=${1:-15}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s -C "$root" build/pfisim
make -s -C "$root" LINK_DEPS=shared BIN=build/pfisim-shared build/pfisim-shared
perf=0
command -v perf > /dev/null 2>&1 && perf stat -x, -e task-clock true > /dev/null 2>&1 && perf=1

# cpu_ms CMD...: one run's CPU time in ms
cpu_ms() {
    if [ $perf = 1 ]; then
        perf stat -x, -e task-clock "$@" 2>&1 > /dev/null | awk -F, '/task-clock/ { print $1 }'
    else
        python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print((r.ru_utime + r.ru_stime) * 1000)' "$@"
    fi
}

for _ in $(seq "$n"); do
    for b in pfisim pfisim-shared; do
        bin=$root/build/$b
        echo "$b version $(cpu_ms "$bin" --version)" >> "$tmp/t"
        echo "$b window $(cpu_ms "$bin" run "$dir/cap-4k.cfg" --days 0.01 --policy equal \
            --policy sla --policy pfi --policy oracle --threads 1 --csv)" >> "$tmp/t"
    done
done
echo "pfisim start-up, $n runs each ($( [ $perf = 1 ] && echo "perf task-clock" || echo "getrusage"))"
echo
echo "| executable | shared objects | --version, least | median | 0.01-day cap-4k, least | median |"
echo "|---|---|---|---|---|---|"
for b in pfisim pfisim-shared; do
    libs=$(ldd "$root/build/$b" | grep -c '=>')
    for what in version window; do
        awk -v b="$b" -v w="$what" '$1 == b && $2 == w { print $3 }' "$tmp/t" | sort -n |
            awk '{ v[NR] = $1 } END { printf "%.2f %.2f\n", v[1], v[int((NR + 1) / 2)] }'
    done | paste -s -d' ' | awk -v b="$b" -v l="$libs" \
        '{ printf "| build/%s | %d | %.2f ms | %.2f ms | %.2f ms | %.2f ms |\n", b, l, $1, $2, $3, $4 }'
done
