/*
 * sim/queue.c - the scheduler's queue, indexed for EASY backfill (issue 16, docs/simulator.md).
 *
 * Every job that can ever queue has a fixed rank, its place in queue order (arrival order, or
 * deadline then arrival order); the queue is the set of ranks queued now. Besides the head
 * (the lowest rank), backfill asks one question: the first queued job after a rank that has
 * at most F GPUs and either at most E GPUs or a run time of at most D. Jobs are bucketed by
 * their GPU count; each bucket keeps its jobs in rank order under a segment tree of their run
 * times (+inf while not queued), so the question costs O(log n) per bucket, not a scan of the
 * queue. Adding and removing a job, anywhere in the queue, is O(log n).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "queue.h"

/* What does not change while a run goes: the ranks, the buckets and their jobs, the run
 * times. Made once per inputs and queue order, and shared by every run of them. */
struct bucket_index {
    int n_gpus;
    size_t n;       /* its jobs */
    size_t size;    /* leaves of its tree: a power of two >= n */
    uint32_t *job;  /* [n] its jobs in rank order (in the index's bucket_job) */
    uint32_t *rank; /* [n] their ranks (in its bucket_rank) */
};

struct pfs__queue_index {
    /* per job, 4 bytes each where they can be (a year on 100,000 GPUs is 20 M jobs), all in
     * one block: they live and go together (a 28-day window's seven arrays were 446 page
     * faults, most of a huge page's worth) */
    size_t n_jobs;
    void *block;
    uint32_t *rank_job;    /* [n_jobs] the job of each rank (NULL with job_rank: job order) */
    uint32_t *job_rank;    /* [n_jobs] the rank of each job */
    uint32_t *job_bucket;  /* [n_jobs] its bucket */
    uint32_t *job_leaf;    /* [n_jobs] its index in its bucket */
    uint32_t *bucket_job;  /* [n_jobs] every bucket's jobs, bucket by bucket */
    uint32_t *bucket_rank; /* [n_jobs] their ranks */
    double *dur;           /* [n_jobs] its run time */
    struct bucket_index *b;
    size_t n_buckets;
};

/* One of pfs__queue_next's answers in a bucket, kept while it holds: the first leaf from lo
 * on (the first ranked after rank `after`, SIZE_MAX: from the first) with a run time of at
 * most bound is leaf (SIZE_MAX: none); gone: that leaf has left the queue since, and the
 * answer is the first such leaf after it. It holds for a later rank it is still after; under
 * a tighter bound, from it on (no leaf before it qualified under the looser one); under a
 * looser bound, from lo. */
struct answer {
    bool ok, gone;
    size_t after, lo, leaf;
    double bound;
};

/* A run's queue: which jobs are queued now. */
struct bucket {
    size_t queued;  /* its jobs queued now */
    uint64_t *tree; /* [2 size] the least run time over each node's queued jobs, as rank():
                     * the most rank (0: none) */
    uint64_t *seen; /* a bit for each page of tree: written in this run; the others are
                     * zeros never touched, read as 0 without reading them (node()); NULL
                     * for a tree on huge pages */
    size_t skew;    /* the nodes before tree[0] in its page */
    /* the last answers to a backfill pass's first question (after the head's rank) and to
     * its others: a pass asks again after every job it takes, and a bucket it did not take
     * from has not changed; the next pass asks after the same head with a bound tightened by
     * the time gone by (issue 16: a binary search and a descent in every bucket at every
     * question were 15% of a Poisson year) */
    struct answer c[2];
};

struct pfs__queue {
    const struct pfs__queue_index *x;
    size_t n_queued;
    uint64_t *word;    /* queued ranks, one bit each */
    uint64_t *summary; /* bit w: word w is not zero */
    size_t n_words, n_summary;
    size_t low;       /* no summary word below it is set: where the head's search starts (a year's
                       * 20 M ranks are 4,900 summary words, almost all behind the head) */
    struct bucket *b; /* [x->n_buckets] */
};

/* The trees' pages (4 kB, or a part of a larger page), each written for the first time by
 * a write: a read of a page never touched maps the kernel's zero page, and the write after
 * it faults again and flushes the other cores' TLBs (44-49 us a page against 12 us with a
 * second thread of the process running, bench/page-faults.sh; the trees were 264 of a
 * 28-day cap-4k window's 388 pages faulted twice, issue 16). */
#define PAGE_SHIFT 12
#define NODE_SHIFT (PAGE_SHIFT - 3) /* 512 nodes of 8 bytes a page */

/* Node i's page (from the tree's first) */
static inline size_t
node_page(const struct bucket *b, size_t i)
{
    return (i + b->skew) >> NODE_SHIFT;
}

static inline bool
node_seen(const struct bucket *b, size_t i)
{
    size_t u = node_page(b, i);

    return b->seen[u / 64] >> (u % 64) & 1;
}

/* Node i of b's tree: 0 on a page no write has reached this run (zeros: lazy_calloc). */
static inline uint64_t
node(const struct bucket *b, size_t i)
{
    return !b->seen || node_seen(b, i) ? b->tree[i] : 0;
}

static inline void
node_put(struct bucket *b, size_t i, uint64_t v)
{
    if (b->seen) {
        size_t u = node_page(b, i);

        b->seen[u / 64] |= (uint64_t)1 << (u % 64);
    }
    b->tree[i] = v;
}

/* Job j's rank, and the job of rank r: the arrays', or the job's own index where queue
 * order is job order (a FIFO queue over a workload in arrival order: two arrays of 4 bytes
 * a job and a cache miss at every push, removal and backfill question saved). */
static inline size_t
rank_of(const struct pfs__queue_index *x, size_t j)
{
    return x->job_rank ? x->job_rank[j] : j;
}

static inline size_t
job_at(const struct pfs__queue_index *x, size_t r)
{
    return x->rank_job ? x->rank_job[r] : r;
}

size_t
pfs__queue_index_bytes(size_t n, bool ranked)
{
    /* the run times, then the arrays of 4 bytes a job: job_bucket, job_leaf, the buckets'
     * jobs and ranks, and with ranks rank_job and job_rank (last) */
    size_t per = 8 + 4 * (ranked ? 6 : 4);

    return n < UINT32_MAX && n + 1 <= SIZE_MAX / per ? (n + 1) * per : 0;
}

struct pfs__queue_index *
pfs__queue_index_alloc(size_t n, bool ranked)
{
    size_t bytes = pfs__queue_index_bytes(n, ranked);
    void *block = bytes ? pfs__huge_malloc(bytes) : NULL;
    struct pfs__queue_index *q = block ? pfs__queue_index_alloc_at(block, n, ranked) : NULL;

    if (!q)
        free(block);
    return q;
}

struct pfs__queue_index *
pfs__queue_index_alloc_at(void *block, size_t n, bool ranked)
{
    struct pfs__queue_index *q = calloc(1, sizeof *q);

    if (!q)
        return NULL;
    q->block = block;
    q->n_jobs = n;
    q->dur = q->block; /* (the doubles first, on the block's alignment) */
    q->job_bucket = (uint32_t *)((char *)q->block + (n + 1) * sizeof *q->dur);
    q->job_leaf = q->job_bucket + n + 1;
    q->bucket_job = q->job_leaf + n + 1;
    q->bucket_rank = q->bucket_job + n + 1;
    if (ranked) {
        q->rank_job = q->bucket_rank + n + 1;
        q->job_rank = q->rank_job + n + 1;
    }
    return q;
}

double *
pfs__queue_index_dur(struct pfs__queue_index *q)
{
    return q->dur;
}

uint32_t *
pfs__queue_index_rank_job(struct pfs__queue_index *q)
{
    return q->rank_job;
}

/* job j's GPUs, stride bytes after job j - 1's */
static inline int
gpus_at(const int *n_gpus, size_t stride, size_t j)
{
    int g;

    memcpy(&g, (const char *)n_gpus + j * stride, sizeof g);
    return g;
}

int
pfs__queue_index_build(struct pfs__queue_index *q, const int *n_gpus, size_t stride)
{
    const size_t n = q->n_jobs;
    int *sizes = NULL, most = 0;
    size_t n_sizes = 0, at = 0;
    bool *seen = NULL;

    for (size_t r = 0; q->rank_job && r < n; r++)
        q->job_rank[q->rank_job[r]] = (uint32_t)r;
    /* The distinct sizes in increasing order, by marking them (sizes are GPU counts: a sort
     * of every job's size cost a run 2%). */
    for (size_t j = 0; j < n; j++)
        most = gpus_at(n_gpus, stride, j) > most ? gpus_at(n_gpus, stride, j) : most;
    if (!(seen = calloc((size_t)most + 1, sizeof *seen)) ||
        !(sizes = malloc(((size_t)most + 1) * sizeof *sizes)))
        goto fail;
    for (size_t j = 0; j < n; j++)
        seen[gpus_at(n_gpus, stride, j) > 0 ? gpus_at(n_gpus, stride, j) : 0] = true;
    for (int g = 0; g <= most; g++)
        if (seen[g])
            sizes[n_sizes++] = g;
    q->b = calloc(n_sizes + 1, sizeof *q->b);
    if (!q->b)
        goto fail;
    q->n_buckets = n_sizes;
    for (size_t k = 0; k < n_sizes; k++)
        q->b[k].n_gpus = sizes[k];
    /* Each job's bucket by binary search; the buckets filled in rank order. */
    for (size_t j = 0; j < n; j++) {
        size_t lo = 0, hi = n_sizes;
        int g = gpus_at(n_gpus, stride, j);

        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;

            if (q->b[mid].n_gpus <= g)
                lo = mid;
            else
                hi = mid;
        }
        q->job_bucket[j] = (uint32_t)lo;
        q->b[lo].n++;
    }
    for (size_t k = 0; k < n_sizes; k++) { /* each bucket's part of the shared arrays */
        struct bucket_index *b = &q->b[k];

        for (b->size = 1; b->size < b->n; b->size *= 2)
            ;
        b->job = q->bucket_job + at;
        b->rank = q->bucket_rank + at;
        at += b->n;
        b->n = 0;
    }
    for (size_t r = 0; r < n; r++) {
        size_t j = job_at(q, r);
        struct bucket_index *b = &q->b[q->job_bucket[j]];

        q->job_leaf[j] = (uint32_t)b->n;
        b->job[b->n] = (uint32_t)j;
        b->rank[b->n++] = (uint32_t)r;
    }
    free(sizes);
    free(seen);
    return 0;
fail:
    free(sizes);
    free(seen);
    return PFS_ENOMEM;
}

void
pfs__queue_index_free(struct pfs__queue_index *q)
{
    if (!q)
        return;
    free(q->b);
    free(q->block);
    free(q);
}

int
pfs__queue_new(struct pfs__queue **out, const struct pfs__queue_index *x)
{
    struct pfs__queue *q = calloc(1, sizeof *q);

    *out = NULL;
    if (!q)
        return PFS_ENOMEM;
    q->x = x;
    q->n_words = x->n_jobs / 64 + 1;
    q->n_summary = q->n_words / 64 + 1;
    q->word = calloc(q->n_words, sizeof *q->word);
    q->summary = calloc(q->n_summary, sizeof *q->summary);
    q->b = calloc(x->n_buckets + 1, sizeof *q->b);
    if (!q->word || !q->summary || !q->b)
        goto fail;
    for (size_t k = 0; k < x->n_buckets; k++) {
        struct bucket *b = &q->b[k];
        size_t leaves = 2 * x->b[k].size;

        /* (zeros, none queued: pages the queue never reaches are never touched) */
        if (!(b->tree = pfs__lazy_calloc(leaves, sizeof *b->tree)))
            goto fail;
        /* (on huge pages a read first costs one fault more in 2 MB: no bits, no test) */
        if (pfs__lazy_huge(leaves * sizeof *b->tree))
            continue;
        b->skew = ((uintptr_t)b->tree & (((uintptr_t)1 << PAGE_SHIFT) - 1)) / sizeof *b->tree;
        if (!(b->seen = calloc(((leaves + b->skew) >> NODE_SHIFT) / 64 + 1, sizeof *b->seen)))
            goto fail;
    }
    *out = q;
    return 0;
fail:
    pfs__queue_free(q);
    return PFS_ENOMEM;
}

void
pfs__queue_free(struct pfs__queue *q)
{
    if (!q)
        return;
    for (size_t k = 0; q->b && k < q->x->n_buckets; k++) {
        pfs__lazy_free(q->b[k].tree);
        free(q->b[k].seen);
    }
    free(q->b);
    free(q->word);
    free(q->summary);
    free(q);
}

/* A run time d in [0, +inf] as a rank that orders the other way: the bits of +inf less
 * d's (the bits of non-negative doubles order as their values), so +inf, no job, is 0 and
 * the trees start as zeroed memory the kernel hands out untouched (a tree of +inf written
 * out at the start of a run was every page of a tree made for all of a year's jobs, most
 * never queued on a facility that seldom queues: 8% of a year on 100,000 GPUs in page
 * clearing). Run times are never NaN (index_make). */
static inline uint64_t
rank(double d)
{
    uint64_t bits, inf_bits;
    double inf = HUGE_VAL;

    memcpy(&bits, &d, sizeof bits);
    memcpy(&inf_bits, &inf, sizeof inf_bits);
    return inf_bits - bits;
}

/* The least rank of a run time at most x (a bound: finite, not NaN); 0 where no
 * run time is (x < 0), which callers check before asking the tree. */
static inline uint64_t
rank_bound(double x)
{
    return x < 0 ? 0 : rank(x + 0.0); /* (+ 0.0: -0 as +0) */
}

/* Sets a leaf and the maxima above it, up to the first that does not change. */
static void
tree_set(struct bucket *b, size_t size, size_t leaf, double d)
{
    size_t i = size + leaf;
    uint64_t v = rank(d);

    if (v > node(b, i)) { /* higher: each maximum above is v or stays (one read a level) */
        for (node_put(b, i, v), i /= 2; i >= 1 && v > node(b, i); i /= 2)
            node_put(b, i, v);
        return;
    }
    /* Lower: a job leaves. Its leaf and every node above it held it (not 0), so a write
     * reached their pages: read and written as they are, and so are the siblings, which
     * share a page with them (a pair's first is even, and so is skew, the tree being
     * 16-byte aligned at least; were it not, a sibling's page read here first would only
     * cost a fault more, its value being right either way). */
    b->tree[i] = v;
    for (i /= 2; i >= 1; i /= 2) {
        uint64_t l = b->tree[2 * i], r = b->tree[2 * i + 1], m = l > r ? l : r;

        if (m == b->tree[i])
            break;
        b->tree[i] = m;
    }
}

static void
mark(struct pfs__queue *q, size_t r, bool on)
{
    size_t w = r / 64;

    if (on)
        q->word[w] |= (uint64_t)1 << (r % 64);
    else
        q->word[w] &= ~((uint64_t)1 << (r % 64));
    if (q->word[w]) {
        q->summary[w / 64] |= (uint64_t)1 << (w % 64);
        q->low = w / 64 < q->low ? w / 64 : q->low;
    } else
        q->summary[w / 64] &= ~((uint64_t)1 << (w % 64));
}

/* Ranks as the questions order them: "after SIZE_MAX" is before every rank. */
static size_t
after_key(size_t after)
{
    return after == SIZE_MAX ? 0 : after + 1;
}

void
pfs__queue_push(struct pfs__queue *q, size_t j)
{
    const struct pfs__queue_index *x = q->x;
    size_t k = x->job_bucket[j], leaf = x->job_leaf[j];
    struct bucket *c = &q->b[k];

    tree_set(c, x->b[k].size, leaf, x->dur[j]);
    /* The bucket's answers stay, or become this job: the first after their rank within
     * their bound is now it where it qualifies and comes before (an arrival, last in queue
     * order, seldom does; a reset at every arrival cost the next question a search). */
    for (int a = 0; a < 2; a++) {
        struct answer *e = &c->c[a];

        if (e->ok && x->dur[j] <= e->bound && x->b[k].rank[leaf] >= after_key(e->after) &&
            (e->leaf == SIZE_MAX || leaf < e->leaf || (e->gone && leaf == e->leaf))) {
            e->leaf = leaf;
            e->gone = false;
        }
    }
    c->queued++;
    q->n_queued++;
    mark(q, rank_of(x, j), true);
}

void
pfs__queue_remove(struct pfs__queue *q, size_t j)
{
    const struct pfs__queue_index *x = q->x;
    size_t k = x->job_bucket[j];

    tree_set(&q->b[k], x->b[k].size, x->job_leaf[j], HUGE_VAL);
    for (int a = 0; a < 2; a++) /* (any other answer stays the first) */
        if (q->b[k].c[a].leaf == x->job_leaf[j])
            q->b[k].c[a].gone = true;
    q->b[k].queued--;
    q->n_queued--;
    mark(q, rank_of(x, j), false);
}

size_t
pfs__queue_len(const struct pfs__queue *q)
{
    return q->n_queued;
}

size_t
pfs__queue_head(struct pfs__queue *q)
{
    size_t w;

    if (q->n_queued == 0) /* (not a walk to the last word: the queue is empty most of the time
                           * on a facility that seldom queues, and its next push moves low) */
        return SIZE_MAX;
    while (!q->summary[q->low])
        q->low++;
    w = 64 * q->low + (size_t)__builtin_ctzll(q->summary[q->low]);
    return job_at(q->x, 64 * w + (size_t)__builtin_ctzll(q->word[w]));
}

size_t
pfs__queue_rank(const struct pfs__queue *q, size_t j)
{
    return rank_of(q->x, j);
}

/* The first leaf >= lo of a tree of `size` leaves whose run time is <= x (whose rank is at
 * least rank_bound(x): x >= 0), or SIZE_MAX. From leaf
 * lo up to the first subtree to its right that holds such a value, then down its left-most
 * path to one: O(log d) steps up for an answer d leaves on, where a descent from the root,
 * left first, read the whole height and the subtrees left of lo that held one (issue 16: 9%
 * of a Poisson year's instructions, in a queue of a million jobs). */
static size_t
first_at_most(const struct bucket *b, size_t size, size_t lo, double x)
{
    size_t i = size + lo;
    uint64_t least = rank_bound(x);

    if (lo >= size || least == 0)
        return SIZE_MAX;
    if (node(b, i) >= least)
        return lo;
    for (;;) {
        for (; i & 1; i /= 2) /* a right child: its parent's right is next */
            if (i == 1)
                return SIZE_MAX;
        if (node(b, ++i) >= least)
            break;
    }
    /* down: the left child if it holds one, else the right, which does (below a node
     * that holds one, written: tree_set) */
    while (i < size)
        i = b->tree[2 * i] >= least ? 2 * i : 2 * i + 1;
    return i - size;
}

bool
pfs__queue_any_within(const struct pfs__queue *q, int max_gpus, size_t except)
{
    for (size_t k = 0; k < q->x->n_buckets && q->x->b[k].n_gpus <= max_gpus; k++) {
        size_t others = q->b[k].queued;

        if (except != SIZE_MAX && q->x->job_bucket[except] == k)
            others--;
        if (others > 0)
            return true;
    }
    return false;
}

/* The answer in bucket b (its run's c) after `after` within bound from the kept answer e,
 * into *leaf, and e made that answer's; false where e cannot tell it. */
static bool
reuse(const struct bucket_index *b, struct bucket *c, struct answer *e, size_t after, double bound,
      size_t *leaf)
{
    size_t key = after_key(after);

    if (!e->ok || key < after_key(e->after))
        return false;
    if (bound > e->bound) { /* looser: from lo, for the same rank only */
        if (after != e->after)
            return false;
        *leaf = first_at_most(c, b->size, e->lo, bound);
    } else if (e->leaf == SIZE_MAX) { /* none then, none now (a push would have said) */
        *leaf = SIZE_MAX;
        return true;
    } else if (!e->gone && b->rank[e->leaf] >= key) {
        if (bound >= 0 && node(c, b->size + e->leaf) >= rank_bound(bound))
            return *leaf = e->leaf, true; /* (its bound stays the looser one) */
        *leaf = first_at_most(c, b->size, e->leaf + 1, bound);
    } else if (e->gone && b->rank[e->leaf] + 1 >= key) { /* (after it, or its rank) */
        *leaf = first_at_most(c, b->size, e->leaf + 1, bound);
    } else {
        return false;
    }
    e->leaf = *leaf;
    e->gone = false;
    e->bound = bound;
    return true;
}

size_t
pfs__queue_next(struct pfs__queue *q, size_t after, int max_gpus, int any_gpus, double max_dur,
                unsigned slot)
{
    size_t best = SIZE_MAX, best_rank = SIZE_MAX;
    /* (a finite bound: a job not queued holds +inf; NaN is no bound, as fmin has it) */
    double dur_bound = max_dur < DBL_MAX ? max_dur : DBL_MAX;

    slot = slot > 0;
    for (size_t k = 0; k < q->x->n_buckets && q->x->b[k].n_gpus <= max_gpus; k++) {
        const struct bucket_index *b = &q->x->b[k];
        struct bucket *c = &q->b[k];
        struct answer *e = &c->c[slot];
        size_t lo = 0, hi = b->n, leaf = SIZE_MAX;
        double bound = b->n_gpus <= any_gpus ? DBL_MAX : dur_bound;

        if (c->queued == 0)
            continue;
        if (!reuse(b, c, e, after, bound, &leaf)) {
            /* The first of its jobs ranked after `after` (ranks ascend along the bucket). */
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;

                if (after != SIZE_MAX && b->rank[mid] <= after)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            leaf = first_at_most(c, b->size, lo, bound);
            *e = (struct answer){true, false, after, lo, leaf, bound};
        }
        if (leaf != SIZE_MAX && leaf < b->n && b->rank[leaf] < best_rank) {
            best_rank = b->rank[leaf];
            best = b->job[leaf];
        }
    }
    return best;
}
