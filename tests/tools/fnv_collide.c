/*
 * tests/tools/fnv_collide.c - two names of 16 hex digits whose 64-bit FNV-1a hashes, taken on
 * from the hash of PREFIX, are the same: the pair test_sweep_hash_collision names, so that
 * two sweep points whose scenario texts differ share a hash (the texts begin with PREFIX and
 * the name, and the same bytes after equal states give equal hashes).
 *
 * Pollard's rho with distinguished points (van Oorschot and Wiener): walks of
 * x -> fnv1a(h(PREFIX), hex(x)), each ended at a point whose low DP_BITS bits are 0; two
 * walks that end at the same point have merged, and walking them again side by side finds
 * the step where they met: two different names, one hash. Some sqrt(pi 2^64 / 2) = 5.4e9
 * steps are expected, a minute or two on two cores. Not part of the build's outputs; made by
 * the tests' build so that it keeps compiling.
 *
 *   fnv-collide [PREFIX [THREADS]]   PREFIX with \n and \" as in C; default: the scenario
 *                                    text's start, 'scenario = {\n    name = "'
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h" /* pfs__fnv1a: the hash the sweep keys its points by */

#define DP_BITS  22
#define MAX_WALK (40ULL << DP_BITS) /* a walk this long has run into a loop: dropped */
#define MAX_ENDS 65536

static uint64_t h_prefix;

static void
hex16(uint64_t x, char out[16])
{
    for (int i = 15; i >= 0; i--, x >>= 4)
        out[i] = "0123456789abcdef"[x & 15];
}

static uint64_t
step(uint64_t x)
{
    char s[16];

    hex16(x, s);
    return pfs__fnv1a(h_prefix, s, sizeof s);
}

static uint64_t
splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The walks that ended so far, and the pair once found. */
static struct {
    pthread_mutex_t lock;
    uint64_t end[MAX_ENDS], start[MAX_ENDS], len[MAX_ENDS];
    size_t n;
    int found;
    uint64_t a, b;
    uint64_t steps;
} w = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Walks from a (a_len steps to the end) and b (b_len) side by side to where they meet:
 * 1 and *x != *y with step(*x) == step(*y), or 0 (one walk starts on the other). */
static int
meet(uint64_t a, uint64_t a_len, uint64_t b, uint64_t b_len, uint64_t *x, uint64_t *y)
{
    for (; a_len > b_len; a_len--)
        a = step(a);
    for (; b_len > a_len; b_len--)
        b = step(b);
    while (a != b) {
        uint64_t na = step(a), nb = step(b);

        if (na == nb) {
            *x = a;
            *y = b;
            return 1;
        }
        a = na;
        b = nb;
    }
    return 0;
}

static void *
walker(void *arg)
{
    uint64_t seed = (uint64_t)(uintptr_t)arg * 0x5851f42d4c957f2dULL;

    for (;;) {
        uint64_t start = splitmix(&seed), x = start, len = 0;
        size_t match = SIZE_MAX;

        while ((x & ((1ULL << DP_BITS) - 1)) != 0 && len < MAX_WALK) {
            x = step(x);
            len++;
        }
        pthread_mutex_lock(&w.lock);
        w.steps += len;
        if (w.found || w.n == MAX_ENDS) {
            pthread_mutex_unlock(&w.lock);
            return NULL;
        }
        if (len < MAX_WALK) {
            for (size_t i = 0; i < w.n && match == SIZE_MAX; i++)
                if (w.end[i] == x)
                    match = i;
            if (match == SIZE_MAX) {
                w.end[w.n] = x;
                w.start[w.n] = start;
                w.len[w.n++] = len;
            }
        }
        pthread_mutex_unlock(&w.lock);
        if (match != SIZE_MAX) {
            uint64_t a, b;

            if (meet(w.start[match], w.len[match], start, len, &a, &b)) {
                pthread_mutex_lock(&w.lock);
                if (!w.found) {
                    w.found = 1;
                    w.a = a;
                    w.b = b;
                }
                pthread_mutex_unlock(&w.lock);
                return NULL;
            }
        }
    }
}

int
main(int argc, char **argv)
{
    const char *arg = argc > 1 ? argv[1] : "scenario = {\\n    name = \\\"";
    long threads = argc > 2 ? strtol(argv[2], NULL, 10) : 2;
    pthread_t th[64];
    char a[17] = {0}, b[17] = {0};

    h_prefix = PFS__FNV_OFFSET;
    for (const char *p = arg; *p; p++) {
        char c = *p;

        if (c == '\\' && p[1] == 'n')
            c = '\n', p++;
        else if (c == '\\' && p[1] == '"')
            c = '"', p++;
        h_prefix = pfs__fnv1a(h_prefix, &c, 1);
    }
    if (threads < 1 || threads > 64)
        threads = 2;
    for (long i = 0; i < threads; i++)
        if (pthread_create(&th[i], NULL, walker, (void *)(uintptr_t)(i + 1)) != 0)
            return 1;
    for (long i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    if (!w.found) {
        fprintf(stderr, "fnv-collide: no pair in %zu walks\n", w.n);
        return 1;
    }
    hex16(w.a, a);
    hex16(w.b, b);
    printf("%s %s %016" PRIx64 " (%" PRIu64 " steps, %zu walks)\n", a, b, step(w.a), w.steps, w.n);
    return 0;
}
