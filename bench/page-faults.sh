#!/bin/sh
# bench/page-faults.sh - what a page's first touch costs on this machine: 200 MB of fresh
# anonymous memory written one byte a 4 kB page, on small pages and then advised huge
# (MADV_HUGEPAGE, 2 MB), three times each; then read before written (the kernel's zero page
# mapped, then replaced), alone and with a second thread of the process busy on another
# core; microseconds a 4 kB page and the faults taken. Why the engine maps its sparse arrays
# lazily, its big ones huge, keeps what it frees for the next run (pfs__lazy_calloc in
# sim/diag.c) and writes a page before it reads it (the queue's trees, sim/queue.c;
# docs/benchmarks.md, "Page faults", "Pages read before they are written").
# Needs a C compiler.
#   sh bench/page-faults.sh [idle]     idle: also one huge page after 0, 5 and 20 s idle (1 min)
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/pf.c" <<'CEOF'
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

/* how the pages are touched first: a write; or a read (which maps the kernel's zero page)
 * and then a write (which faults again for a page of its own) */
enum { WRITE, READ_THEN_WRITE };

static volatile int spin_stop;

static void *
spin(void *arg)
{
    (void)arg;
    while (!spin_stop)
        ;
    return NULL;
}

static void
touch(size_t pages, int huge, int how, const char *label)
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
    if (how == READ_THEN_WRITE) {
        volatile char sink = 0;

        for (size_t i = 0; i < pages; i++)
            sink += ((volatile char *)p)[i * 4096];
    }
    for (size_t i = 0; i < pages; i++)
        p[i * 4096] = 1;
    clock_gettime(CLOCK_MONOTONIC, &b);
    getrusage(RUSAGE_SELF, &r1);
    us = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 1e3;
    printf("| %s | %.2f us | %ld |\n", label, us / (double)pages, r1.ru_minflt - r0.ru_minflt);
    munmap(raw, pages * 4096 + align);
}

int
main(int argc, char **argv)
{
    pthread_t th;

    if (argc > 1) { /* one 2 MB page advised huge, for the idle series */
        touch(512, 1, WRITE, "advised huge");
        return 0;
    }
    printf("| 200 MB, a byte a 4 kB page | per 4 kB page | faults |\n|---|---|---|\n");
    for (int k = 0; k < 3; k++)
        touch(51200, 0, WRITE, "small pages");
    for (int k = 0; k < 3; k++)
        touch(51200, 1, WRITE, "advised huge");
    /* Read first: the write then replaces the zero page, and the kernel flushes that mapping
     * from the TLB of every core the process runs on; with a second thread of it busy on
     * another core, that is an interrupt there (a virtual machine's costs most). */
    for (int k = 0; k < 2; k++)
        touch(51200, 0, READ_THEN_WRITE, "small pages, read first");
    if (pthread_create(&th, NULL, spin, NULL) == 0) {
        for (int k = 0; k < 2; k++)
            touch(51200, 0, WRITE, "small pages, a second thread busy");
        for (int k = 0; k < 2; k++)
            touch(51200, 0, READ_THEN_WRITE, "small pages, read first, a second thread busy");
        spin_stop = 1;
        pthread_join(th, NULL);
    }
    return 0;
}
CEOF
${CC:-cc} -O2 -pthread -o "$tmp/pf" "$tmp/pf.c"
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
