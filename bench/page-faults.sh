#!/bin/sh
# bench/page-faults.sh - what a page's first touch costs on this machine: 200 MB of fresh
# anonymous memory written one byte a 4 kB page, on small pages and then advised huge
# (MADV_HUGEPAGE, 2 MB), three times each; microseconds a 4 kB page and the faults taken.
# Why the engine maps its sparse arrays lazily, its big ones huge, and keeps what it frees
# for the next run (pfs__lazy_calloc in sim/diag.c; docs/benchmarks.md, "Page faults").
# Needs a C compiler.
#   sh bench/page-faults.sh [idle]     idle: also one huge page after 0, 5 and 20 s idle (1 min)
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/pf.c" <<'CEOF'
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

static void
touch(size_t pages, int huge)
{
    const size_t align = (size_t)2 << 20;
    struct timespec a, b;
    struct rusage r0, r1;
    char *raw = mmap(NULL, pages * 4096 + align, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p;
    double us;

    if (raw == MAP_FAILED) {
        perror("mmap");
        return;
    }
    p = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    if (huge && madvise(p, pages * 4096, MADV_HUGEPAGE) != 0)
        printf("(MADV_HUGEPAGE refused)\n");
    getrusage(RUSAGE_SELF, &r0);
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (size_t i = 0; i < pages; i++)
        p[i * 4096] = 1;
    clock_gettime(CLOCK_MONOTONIC, &b);
    getrusage(RUSAGE_SELF, &r1);
    us = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 1e3;
    printf("| %s | %.2f us | %ld |\n", huge ? "advised huge" : "small pages", us / (double)pages,
           r1.ru_minflt - r0.ru_minflt);
    munmap(raw, pages * 4096 + align);
}

int
main(int argc, char **argv)
{
    if (argc > 1) { /* one 2 MB page advised huge, for the idle series */
        touch(512, 1);
        return 0;
    }
    printf("| 200 MB, a byte a 4 kB page | per 4 kB page | faults |\n|---|---|---|\n");
    for (int k = 0; k < 3; k++)
        touch(51200, 0);
    for (int k = 0; k < 3; k++)
        touch(51200, 1);
    return 0;
}
CEOF
${CC:-cc} -O2 -o "$tmp/pf" "$tmp/pf.c"
if [ "${1:-}" = idle ]; then
    # A freed huge page is cheap to take again only for a while: one 2 MB page advised huge,
    # each time in a fresh process, back to back and then after 5 and 20 s idle (times 512
    # for the page).
    echo "one 2 MB page advised huge, a fresh process each: back to back, then after 5 and 20 s idle"
    for wait in 0 0 0 5 5 20 20; do
        sleep "$wait"
        "$tmp/pf" one | sed "s/^| advised huge/| after ${wait} s idle/"
    done
    echo
fi
"$tmp/pf"
echo
echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
