/*
 * sim/order.c - the running jobs of each pool in order of their estimated finish (issue 16).
 *
 * EASY backfill's shadow time is the finish of the running job that, taking them in order of
 * finish, frees enough GPUs for the head of the queue. A job's estimate is now + key, its
 * key (tokens left at its last progress update / its rate) fixed until its rate changes, so
 * the order is kept as the jobs start, change rate and finish: a treap per pool keyed by
 * (key, job index), each node holding the GPUs of its subtree, answers "the first job at
 * which the GPUs freed reach W" in O(log n) instead of sorting every running job at every
 * scheduling pass. The treap's priorities are a hash of the job index: its shape, never its
 * answers, depends on them.
 */
#include <stdlib.h>

#include "sim.h"

#define NIL UINT32_MAX

struct pfs__order {
    size_t n;
    double *key;
    uint32_t *left, *right, *prio;
    int64_t *gpus, *sum; /* the job's GPUs; its subtree's */
    bool *in;
    uint32_t roots[PFS_MAX_POOLS];
};

static uint32_t
hash32(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL; /* splitmix64's finaliser */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return (uint32_t)(x ^ (x >> 31));
}

int
pfs__order_new(struct pfs__order **out, size_t n)
{
    struct pfs__order *o = calloc(1, sizeof *o);

    *out = NULL;
    if (!o || n >= NIL) {
        free(o);
        return PFS_ENOMEM;
    }
    o->n = n;
    o->key = malloc((n + 1) * sizeof *o->key);
    o->left = malloc((n + 1) * sizeof *o->left);
    o->right = malloc((n + 1) * sizeof *o->right);
    o->prio = malloc((n + 1) * sizeof *o->prio);
    o->gpus = malloc((n + 1) * sizeof *o->gpus);
    o->sum = malloc((n + 1) * sizeof *o->sum);
    o->in = calloc(n + 1, sizeof *o->in);
    if (!o->key || !o->left || !o->right || !o->prio || !o->gpus || !o->sum || !o->in) {
        pfs__order_free(o);
        return PFS_ENOMEM;
    }
    for (size_t j = 0; j < n; j++)
        o->prio[j] = hash32(j);
    for (size_t p = 0; p < PFS_MAX_POOLS; p++)
        o->roots[p] = NIL;
    *out = o;
    return 0;
}

void
pfs__order_free(struct pfs__order *o)
{
    if (!o)
        return;
    free(o->key);
    free(o->left);
    free(o->right);
    free(o->prio);
    free(o->gpus);
    free(o->sum);
    free(o->in);
    free(o);
}

static int64_t
sum_of(const struct pfs__order *o, uint32_t t)
{
    return t == NIL ? 0 : o->sum[t];
}

static void
pull(struct pfs__order *o, uint32_t t)
{
    o->sum[t] = o->gpus[t] + sum_of(o, o->left[t]) + sum_of(o, o->right[t]);
}

/* Whether job a comes before job b: by key, then by index. */
static bool
before(const struct pfs__order *o, uint32_t a, uint32_t b)
{
    return o->key[a] < o->key[b] || (!(o->key[a] > o->key[b]) && a < b);
}

/* Splits t into the jobs before j (*l) and the rest (*r). */
static void
split(struct pfs__order *o, uint32_t t, uint32_t j, uint32_t *l, uint32_t *r)
{
    if (t == NIL) {
        *l = *r = NIL;
        return;
    }
    if (before(o, t, j)) {
        split(o, o->right[t], j, &o->right[t], r);
        *l = t;
    } else {
        split(o, o->left[t], j, l, &o->left[t]);
        *r = t;
    }
    pull(o, t);
}

/* Joins a and b, every job of a before every job of b. */
static uint32_t
merge(struct pfs__order *o, uint32_t a, uint32_t b)
{
    if (a == NIL)
        return b;
    if (b == NIL)
        return a;
    if (o->prio[a] > o->prio[b]) {
        o->right[a] = merge(o, o->right[a], b);
        pull(o, a);
        return a;
    }
    o->left[b] = merge(o, a, o->left[b]);
    pull(o, b);
    return b;
}

void
pfs__order_insert(struct pfs__order *o, int pool, size_t j, double key, int gpus)
{
    uint32_t l, r, t = (uint32_t)j;

    o->key[t] = key;
    o->gpus[t] = gpus;
    o->left[t] = o->right[t] = NIL;
    o->sum[t] = gpus;
    o->in[t] = true;
    split(o, o->roots[pool], t, &l, &r);
    o->roots[pool] = merge(o, merge(o, l, t), r);
}

void
pfs__order_remove(struct pfs__order *o, int pool, size_t j)
{
    uint32_t *at = &o->roots[pool], t = (uint32_t)j;

    if (!o->in[t])
        return;
    /* Down to the job (its ancestors compare as it does), each ancestor losing its GPUs;
     * then its place taken by its two subtrees joined. */
    while (*at != NIL && *at != t) {
        o->sum[*at] -= o->gpus[t];
        at = before(o, t, *at) ? &o->left[*at] : &o->right[*at];
    }
    if (*at == t)
        *at = merge(o, o->left[t], o->right[t]);
    o->in[t] = false;
}

bool
pfs__order_has(const struct pfs__order *o, size_t j)
{
    return o->in[j];
}

int64_t
pfs__order_total(const struct pfs__order *o, int pool)
{
    return sum_of(o, o->roots[pool]);
}

size_t
pfs__order_reach(const struct pfs__order *o, int pool, int64_t want, double *key, int64_t *freed)
{
    uint32_t t = o->roots[pool];
    int64_t before_t = 0;

    if (want <= 0 || sum_of(o, t) < want)
        return SIZE_MAX;
    while (t != NIL) {
        int64_t left = sum_of(o, o->left[t]);

        if (before_t + left >= want)
            t = o->left[t];
        else if (before_t + left + o->gpus[t] >= want) {
            *key = o->key[t];
            *freed = before_t + left + o->gpus[t];
            return t;
        } else {
            before_t += left + o->gpus[t];
            t = o->right[t];
        }
    }
    return SIZE_MAX; /* not reached: the total covers want */
}
