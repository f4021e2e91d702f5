/*
 * sim/order.c - the running jobs of each pool in order of their estimated finish (issue 16).
 *
 * EASY backfill's shadow time is the finish of the running job that, taking them in order of
 * finish, frees enough GPUs for the head of the queue. A job's estimate is now + key, its
 * key (tokens left at its last progress update / its rate) fixed until its rate changes, so
 * the order is kept as the jobs start, change rate and finish, instead of sorting every
 * running job at every scheduling pass.
 *
 * Each pool's order is a list of sorted blocks of at most BLOCK entries (key, job, GPUs),
 * each block's GPUs summed, the list an array of the blocks with their first entries. An
 * insertion or removal is a binary search over the first entries, one within the block and
 * a move of at most BLOCK entries; "the first job at which the GPUs freed reach W" adds up
 * block sums and then scans one block (W is one queued job's GPUs: nearly always inside the
 * first block). The treap this replaced answered the same in O(log n), but its walks of 20
 * to 30 nodes, each a branch on a comparison of keys, were 20% of the cycles of a Poisson
 * year; a block's entries are contiguous and its searches short.
 *
 * The caller keeps each job's key in the order (it removes a job by its key): the order
 * holds nothing per job of the workload, so its memory is what is running.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"

#define BLOCK 64

struct block {
    size_t n;
    int64_t sum; /* the GPUs of its entries */
    double key[BLOCK];
    uint32_t job[BLOCK];
    int32_t gpus[BLOCK];
};

/* A block in its pool's list, with its first entry (kept as entries come and go at its
 * front: the search for a block needs the first entries in order, and a stale one is not). */
struct place {
    struct block *b;
    double key;
    uint32_t job;
};

/* One pool's order: its blocks in order. */
struct list {
    struct place *v;
    size_t n, cap;
    int64_t total;
};

/* An entry taken out of its block, for pfs__order_rekey. */
struct entry {
    double key;
    uint32_t job;
    int32_t gpus;
};

struct pfs__order {
    struct list l[PFS_MAX_POOLS];
    struct entry *tmp; /* (pfs__order_rekey's) */
    size_t tmp_cap;
    struct block **spare;            /* emptied blocks, for the next split */
    size_t n_spare, spare_cap, made; /* (room for every block made: list_drop) */
};

int
pfs__order_new(struct pfs__order **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : PFS_ENOMEM;
}

void
pfs__order_free(struct pfs__order *o)
{
    if (!o)
        return;
    for (size_t p = 0; p < PFS_MAX_POOLS; p++) {
        for (size_t b = 0; b < o->l[p].n; b++)
            free(o->l[p].v[b].b);
        free(o->l[p].v);
    }
    for (size_t k = 0; k < o->n_spare; k++)
        free(o->spare[k]);
    free(o->spare);
    free(o->tmp);
    free(o);
}

/* Whether (ka, ja) comes before (kb, jb): by key, then by job index. */
static inline bool
before(double ka, uint32_t ja, double kb, uint32_t jb)
{
    return ka < kb || (!(ka > kb) && ja < jb);
}

/* The block where (key, j) is or goes: the last whose first entry is not after it (the
 * first block where none is). (A search without branches, the step taken or not by
 * arithmetic, was measured and left: no faster on the Poisson year.) */
static size_t
block_of(const struct list *l, double key, uint32_t j)
{
    size_t lo = 0, hi = l->n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;

        if (before(key, j, l->v[mid].key, l->v[mid].job))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo > 0 ? lo - 1 : 0;
}

/* The first entry of block x not before (key, j). */
static size_t
place_in(const struct block *x, double key, uint32_t j)
{
    size_t lo = 0, hi = x->n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;

        if (before(x->key[mid], x->job[mid], key, j))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void
set_first(struct list *l, size_t b)
{
    l->v[b].key = l->v[b].b->key[0];
    l->v[b].job = l->v[b].b->job[0];
}

/* Puts block x into the list at b (the list has room). */
static void
list_put(struct list *l, size_t b, struct block *x)
{
    memmove(&l->v[b + 1], &l->v[b], (l->n - b) * sizeof *l->v);
    l->v[b].b = x;
    l->n++;
    set_first(l, b);
}

/* Takes block b out of the list, to the spares (which have room: every block made is
 * counted there). */
static void
list_drop(struct pfs__order *o, struct list *l, size_t b)
{
    o->spare[o->n_spare++] = l->v[b].b;
    l->n--;
    memmove(&l->v[b], &l->v[b + 1], (l->n - b) * sizeof *l->v);
}

/* Room for one more block in pool l's list, and a block to put there (a spare or a new
 * one); NULL when out of memory. */
static struct block *
block_new(struct pfs__order *o, struct list *l)
{
    struct place *v = pfs__grow(l->v, &l->cap, l->n, sizeof *v, 8);
    struct block **s, *x;

    if (!v)
        return NULL;
    l->v = v;
    if (o->n_spare > 0)
        return o->spare[--o->n_spare];
    /* a new one, and a place for it among the spares for when it is one */
    if (!(s = pfs__grow(o->spare, &o->spare_cap, o->made, sizeof *s, 16)))
        return NULL;
    o->spare = s;
    if (!(x = malloc(sizeof *x)))
        return NULL;
    o->made++;
    return x;
}

int
pfs__order_insert(struct pfs__order *o, int pool, size_t j, double key, int gpus)
{
    struct list *l = &o->l[pool];
    struct block *x;
    size_t b, at;

    assert(!isnan(key) && j < UINT32_MAX);
    if (l->n == 0) {
        if (!(x = block_new(o, l)))
            return PFS_ENOMEM;
        x->n = 0;
        x->sum = 0;
        x->key[0] = key; /* (its first entry: the one about to go in) */
        x->job[0] = (uint32_t)j;
        list_put(l, 0, x);
    }
    b = block_of(l, key, (uint32_t)j);
    x = l->v[b].b;
    if (x->n == BLOCK) { /* full: its upper half to a new block after it */
        struct block *y = block_new(o, l);

        if (!y)
            return PFS_ENOMEM;
        y->n = BLOCK / 2;
        memcpy(y->key, &x->key[BLOCK / 2], BLOCK / 2 * sizeof *y->key);
        memcpy(y->job, &x->job[BLOCK / 2], BLOCK / 2 * sizeof *y->job);
        memcpy(y->gpus, &x->gpus[BLOCK / 2], BLOCK / 2 * sizeof *y->gpus);
        y->sum = 0;
        for (size_t i = 0; i < y->n; i++)
            y->sum += y->gpus[i];
        x->n = BLOCK / 2;
        x->sum -= y->sum;
        list_put(l, b + 1, y);
        if (!before(key, (uint32_t)j, y->key[0], y->job[0]))
            x = l->v[++b].b;
    }
    at = place_in(x, key, (uint32_t)j);
    memmove(&x->key[at + 1], &x->key[at], (x->n - at) * sizeof *x->key);
    memmove(&x->job[at + 1], &x->job[at], (x->n - at) * sizeof *x->job);
    memmove(&x->gpus[at + 1], &x->gpus[at], (x->n - at) * sizeof *x->gpus);
    x->key[at] = key;
    x->job[at] = (uint32_t)j;
    x->gpus[at] = gpus;
    x->n++;
    x->sum += gpus;
    l->total += gpus;
    if (at == 0)
        set_first(l, b);
    return 0;
}

void
pfs__order_remove(struct pfs__order *o, int pool, size_t j, double key)
{
    struct list *l = &o->l[pool];
    size_t b = block_of(l, key, (uint32_t)j), at;
    struct block *x = l->v[b].b;

    at = place_in(x, key, (uint32_t)j);
    assert(at < x->n && x->job[at] == j);
    x->sum -= x->gpus[at];
    l->total -= x->gpus[at];
    x->n--;
    memmove(&x->key[at], &x->key[at + 1], (x->n - at) * sizeof *x->key);
    memmove(&x->job[at], &x->job[at + 1], (x->n - at) * sizeof *x->job);
    memmove(&x->gpus[at], &x->gpus[at + 1], (x->n - at) * sizeof *x->gpus);
    if (x->n == 0) {
        list_drop(o, l, b);
        return;
    }
    if (at == 0)
        set_first(l, b);
    /* A block under a quarter full joins the next (the one before, for the last) where the
     * two fill at most three quarters of one, so that the blocks do not thin out. */
    if (x->n < BLOCK / 4 && l->n > 1) {
        size_t a = b + 1 < l->n ? b : b - 1; /* the earlier of the two */
        struct block *u = l->v[a].b, *v = l->v[a + 1].b;

        if (u->n + v->n <= 3 * BLOCK / 4) {
            memcpy(&u->key[u->n], v->key, v->n * sizeof *v->key);
            memcpy(&u->job[u->n], v->job, v->n * sizeof *v->job);
            memcpy(&u->gpus[u->n], v->gpus, v->n * sizeof *v->gpus);
            u->n += v->n;
            u->sum += v->sum;
            list_drop(o, l, a + 1);
        }
    }
}

static int
cmp_entry(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;

    return before(x->key, x->job, y->key, y->job) ? -1 : before(y->key, y->job, x->key, x->job);
}

int
pfs__order_rekey(struct pfs__order *o, int pool, double (*key_of)(void *arg, uint32_t job),
                 void *arg)
{
    struct list *l = &o->l[pool];
    struct entry *e;
    size_t n = 0, moves = 0, k = 0;

    for (size_t b = 0; b < l->n; b++)
        n += l->v[b].b->n;
    if (!(e = pfs__grow(o->tmp, &o->tmp_cap, n, sizeof *e, 256)))
        return PFS_ENOMEM;
    o->tmp = e;
    for (size_t b = 0; b < l->n; b++) { /* out, in the old order, with the new keys */
        const struct block *x = l->v[b].b;

        for (size_t i = 0; i < x->n; i++, k++) {
            e[k] = (struct entry){key_of(arg, x->job[i]), x->job[i], x->gpus[i]};
            assert(!isnan(e[k].key));
        }
    }
    /* The old order is nearly the new one where the keys moved together (a level that
     * moved every rate the same way): by insertion, unless that takes more than a few
     * moves an entry. */
    for (size_t i = 1; i < n && moves <= 8 * n; i++) {
        struct entry v = e[i];
        size_t at = i;

        for (; at > 0 && before(v.key, v.job, e[at - 1].key, e[at - 1].job); at--)
            e[at] = e[at - 1];
        e[at] = v;
        moves += i - at;
    }
    if (moves > 8 * n)
        qsort(e, n, sizeof *e, cmp_entry);
    k = 0;
    for (size_t b = 0; b < l->n; b++) { /* back, the blocks as large as they were */
        struct block *x = l->v[b].b;

        x->sum = 0;
        for (size_t i = 0; i < x->n; i++, k++) {
            x->key[i] = e[k].key;
            x->job[i] = e[k].job;
            x->gpus[i] = e[k].gpus;
            x->sum += e[k].gpus;
        }
        set_first(l, b);
    }
    return 0;
}

int64_t
pfs__order_total(const struct pfs__order *o, int pool)
{
    return o->l[pool].total;
}

size_t
pfs__order_reach(const struct pfs__order *o, int pool, int64_t want, double *key, int64_t *freed)
{
    const struct list *l = &o->l[pool];
    int64_t before_b = 0;

    if (want <= 0 || l->total < want)
        return SIZE_MAX;
    for (size_t b = 0; b < l->n; b++) {
        const struct block *x = l->v[b].b;

        if (before_b + x->sum < want) {
            before_b += x->sum;
            continue;
        }
        for (size_t i = 0; i < x->n; i++)
            if ((before_b += x->gpus[i]) >= want) {
                *key = x->key[i];
                *freed = before_b;
                return x->job[i];
            }
    }
    return SIZE_MAX; /* not reached: the total covers want */
}

bool
pfs__order_ok(const struct pfs__order *o)
{
    for (size_t p = 0; p < PFS_MAX_POOLS; p++) {
        const struct list *l = &o->l[p];
        int64_t total = 0;

        for (size_t b = 0; b < l->n; b++) {
            const struct block *x = l->v[b].b, *w = b > 0 ? l->v[b - 1].b : NULL;
            int64_t sum = 0;

            if (x->n == 0 || x->n > BLOCK || isnan(x->key[0]) ||
                memcmp(&l->v[b].key, &x->key[0], sizeof x->key[0]) != 0 || l->v[b].job != x->job[0])
                return false;
            if (w && !before(w->key[w->n - 1], w->job[w->n - 1], x->key[0], x->job[0]))
                return false; /* (blocks in order) */
            for (size_t i = 0; i < x->n; i++) {
                if (i > 0 && !before(x->key[i - 1], x->job[i - 1], x->key[i], x->job[i]))
                    return false;
                sum += x->gpus[i];
            }
            if (sum != x->sum)
                return false;
            total += sum;
        }
        if (total != l->total)
            return false;
    }
    return true;
}
