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
 *
 * The nodes are a pool as large as the jobs that can run at once, not one per job of the
 * workload: a job takes a node when it enters and gives it back when it leaves. A year on
 * 10,000 GPUs has 2.8 M jobs and never more than 10,000 running; nodes indexed by job spread
 * each walk down the tree over seven arrays of 2.8 M entries, a cache miss at every level,
 * where the pool's 10,000 nodes of 40 bytes stay in the cache.
 */
#include <stdlib.h>

#include "sim.h"

#define NIL UINT32_MAX

struct node {
    double key;
    int64_t sum; /* the GPUs of its subtree */
    uint32_t left, right, prio, job;
    int64_t gpus;
};

struct pfs__order {
    size_t n;          /* jobs */
    uint32_t *node_of; /* per job: its node, NIL when not in the order */
    struct node *v;    /* cap nodes */
    uint32_t *free_v;  /* the nodes not in use, a stack */
    size_t cap, n_free;
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
pfs__order_new(struct pfs__order **out, size_t n, size_t live)
{
    struct pfs__order *o = calloc(1, sizeof *o);

    *out = NULL;
    if (!o || n >= NIL || live >= NIL) {
        free(o);
        return PFS_ENOMEM;
    }
    o->n = n;
    o->cap = live;
    o->node_of = malloc((n + 1) * sizeof *o->node_of);
    o->v = malloc((live + 1) * sizeof *o->v);
    o->free_v = malloc((live + 1) * sizeof *o->free_v);
    pfs__huge(o->node_of, n * sizeof *o->node_of);
    if (!o->node_of || !o->v || !o->free_v) {
        pfs__order_free(o);
        return PFS_ENOMEM;
    }
    for (size_t j = 0; j < n; j++)
        o->node_of[j] = NIL;
    for (size_t k = 0; k < live; k++) /* the lowest node on top */
        o->free_v[k] = (uint32_t)(live - 1 - k);
    o->n_free = live;
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
    free(o->node_of);
    free(o->v);
    free(o->free_v);
    free(o);
}

static int64_t
sum_of(const struct pfs__order *o, uint32_t t)
{
    return t == NIL ? 0 : o->v[t].sum;
}

static void
pull(struct pfs__order *o, uint32_t t)
{
    struct node *x = &o->v[t];

    x->sum = x->gpus + sum_of(o, x->left) + sum_of(o, x->right);
}

/* Whether node a comes before node b: by key, then by job index. */
static bool
before(const struct pfs__order *o, uint32_t a, uint32_t b)
{
    const struct node *x = &o->v[a], *y = &o->v[b];

    return x->key < y->key || (!(x->key > y->key) && x->job < y->job);
}

/* Splits t into the nodes before node j (*l) and the rest (*r). */
static void
split(struct pfs__order *o, uint32_t t, uint32_t j, uint32_t *l, uint32_t *r)
{
    if (t == NIL) {
        *l = *r = NIL;
        return;
    }
    if (before(o, t, j)) {
        split(o, o->v[t].right, j, &o->v[t].right, r);
        *l = t;
    } else {
        split(o, o->v[t].left, j, l, &o->v[t].left);
        *r = t;
    }
    pull(o, t);
}

/* Joins a and b, every node of a before every node of b. */
static uint32_t
merge(struct pfs__order *o, uint32_t a, uint32_t b)
{
    if (a == NIL)
        return b;
    if (b == NIL)
        return a;
    if (o->v[a].prio > o->v[b].prio) {
        o->v[a].right = merge(o, o->v[a].right, b);
        pull(o, a);
        return a;
    }
    o->v[b].left = merge(o, a, o->v[b].left);
    pull(o, b);
    return b;
}

int
pfs__order_insert(struct pfs__order *o, int pool, size_t j, double key, int gpus)
{
    uint32_t l, r, t, *at;

    if (o->n_free == 0)
        return PFS_ENOMEM; /* more jobs in than the pool was made for */
    t = o->free_v[--o->n_free];
    o->node_of[j] = t;
    o->v[t] = (struct node){key, gpus, NIL, NIL, hash32(j), (uint32_t)j, gpus};
    /* Down past the nodes that stay above it (higher priority), each gaining its GPUs, to
     * where it goes; the subtree there split around it becomes its children. (Splitting the
     * whole tree and merging it back walked the full depth three times.) */
    at = &o->roots[pool];
    while (*at != NIL && o->v[*at].prio > o->v[t].prio) {
        o->v[*at].sum += gpus;
        at = before(o, t, *at) ? &o->v[*at].left : &o->v[*at].right;
    }
    split(o, *at, t, &l, &r);
    o->v[t].left = l;
    o->v[t].right = r;
    pull(o, t);
    *at = t;
    return 0;
}

void
pfs__order_remove(struct pfs__order *o, int pool, size_t j)
{
    uint32_t *at = &o->roots[pool], t = o->node_of[j];

    if (t == NIL)
        return;
    /* Down to the node (its ancestors compare as it does), each ancestor losing its GPUs;
     * then its place taken by its two subtrees joined. */
    while (*at != NIL && *at != t) {
        o->v[*at].sum -= o->v[t].gpus;
        at = before(o, t, *at) ? &o->v[*at].left : &o->v[*at].right;
    }
    if (*at == t)
        *at = merge(o, o->v[t].left, o->v[t].right);
    o->node_of[j] = NIL;
    o->free_v[o->n_free++] = t;
}

bool
pfs__order_has(const struct pfs__order *o, size_t j)
{
    return o->node_of[j] != NIL;
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
        const struct node *x = &o->v[t];
        int64_t left = sum_of(o, x->left);

        if (before_t + left >= want)
            t = x->left;
        else if (before_t + left + x->gpus >= want) {
            *key = x->key;
            *freed = before_t + left + x->gpus;
            return x->job;
        } else {
            before_t += left + x->gpus;
            t = x->right;
        }
    }
    return SIZE_MAX; /* not reached: the total covers want */
}
