/*
 * sim/heap.c - the event queue: a binary min-heap keyed by (time, sequence number).
 *
 * Time is integer microseconds and every push takes the next sequence number, so two events
 * at the same time come out in the order they were scheduled: the simulation never depends
 * on how a heap happens to break ties (DESIGN.md section 5). Events that a later decision
 * made obsolete are not removed; they carry the version they were scheduled with, and the
 * engine drops them when it pops them.
 *
 * The running jobs' finish events are kept apart (pfs__fheap): one per job, moved in place
 * when its rate changes. In the one heap every change of rate left its old finish behind:
 * during a DR event on 100,000 GPUs some 300,000 an hour, a heap of hundreds of thousands of
 * dead events that every pop went down through. The engine takes the earlier of the two
 * heaps' first events; the order is (time, sequence number) all the same, so the same.
 */
#include <stdlib.h>

#include "heap.h"

static bool
before(const struct pfs__event *a, const struct pfs__event *b)
{
    return pfs__event_before(a->t_us, a->seq, b->t_us, b->seq);
}

int
pfs__heap_push(struct pfs__heap *h, int64_t t_us, int type, uint32_t job, uint32_t version)
{
    return pfs__heap_push_seq(h, t_us, type, job, version, h->next_seq++);
}

int
pfs__heap_push_seq(struct pfs__heap *h, int64_t t_us, int type, uint32_t job, uint32_t version,
                   uint64_t seq)
{
    size_t i;

    void *grown = pfs__grow(h->v, &h->cap, h->n, sizeof *h->v, 1024);

    if (!grown)
        return PFS_ENOMEM;
    h->v = grown;
    i = h->n++;
    h->v[i] = (struct pfs__event){t_us, seq, type, job, version};
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        struct pfs__event tmp;

        if (!before(&h->v[i], &h->v[parent]))
            break;
        tmp = h->v[i];
        h->v[i] = h->v[parent];
        h->v[parent] = tmp;
        i = parent;
    }
    return 0;
}

bool
pfs__heap_pop(struct pfs__heap *h, struct pfs__event *out)
{
    size_t i = 0;

    if (h->n == 0)
        return false;
    *out = h->v[0];
    h->v[0] = h->v[--h->n];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        struct pfs__event tmp;

        if (l < h->n && before(&h->v[l], &h->v[m]))
            m = l;
        if (r < h->n && before(&h->v[r], &h->v[m]))
            m = r;
        if (m == i)
            break;
        tmp = h->v[i];
        h->v[i] = h->v[m];
        h->v[m] = tmp;
        i = m;
    }
    return true;
}

void
pfs__heap_fini(struct pfs__heap *h)
{
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}

/* ----- the finish events: one per running job, changed in place ----- */

static bool
fbefore(const struct pfs__fevent *a, const struct pfs__fevent *b)
{
    return pfs__event_before(a->t_us, a->seq, b->t_us, b->seq);
}

/* Puts e at index i and records it there. */
static void
fplace(struct pfs__fheap *h, size_t i, struct pfs__fevent e)
{
    h->v[i] = e;
    h->pos[e.rec] = (uint32_t)i + 1;
}

/* Moves the event at index i down to where its children come after it. */
static inline void
fdown(struct pfs__fheap *h, size_t i)
{
    struct pfs__fevent e = h->v[i];

    for (;;) {
        size_t l = 2 * i + 1, m = l;

        if (l >= h->n)
            break;
        if (l + 1 < h->n && fbefore(&h->v[l + 1], &h->v[l]))
            m = l + 1;
        if (!fbefore(&h->v[m], &e))
            break;
        fplace(h, i, h->v[m]);
        i = m;
    }
    fplace(h, i, e);
}

/* Moves the event at index i up or down to its place. */
static void
fsift(struct pfs__fheap *h, size_t i)
{
    struct pfs__fevent e = h->v[i];

    if (i > 0 && fbefore(&e, &h->v[(i - 1) / 2])) {
        do { /* up: then it is before both its children */
            fplace(h, i, h->v[(i - 1) / 2]);
            i = (i - 1) / 2;
        } while (i > 0 && fbefore(&e, &h->v[(i - 1) / 2]));
        fplace(h, i, e);
    } else
        fdown(h, i);
}

int
pfs__fheap_init(struct pfs__fheap *h, size_t n_rec)
{
    h->n = 0;
    h->held = false;
    h->v = malloc((n_rec + 1) * sizeof *h->v);
    h->pos = calloc(n_rec + 1, sizeof *h->pos);
    if (!h->v || !h->pos) {
        pfs__fheap_fini(h);
        return PFS_ENOMEM;
    }
    return 0;
}

void
pfs__fheap_sift_set(struct pfs__fheap *h, uint32_t rec, uint32_t job, int64_t t_us, uint64_t seq)
{
    size_t i = h->pos[rec] ? h->pos[rec] - 1 : h->n++;

    h->v[i] = (struct pfs__fevent){t_us, seq, job, rec};
    fsift(h, i);
}

void
pfs__fheap_del(struct pfs__fheap *h, uint32_t rec)
{
    size_t i;

    if (!h->pos[rec])
        return;
    i = h->pos[rec] - 1;
    h->pos[rec] = 0;
    if (i == --h->n)
        return;
    if (h->held)
        fplace(h, i, h->v[h->n]);
    else {
        h->v[i] = h->v[h->n];
        fsift(h, i);
    }
}

void
pfs__fheap_hold(struct pfs__fheap *h)
{
    h->held = true;
}

/* Floyd's construction: each parent, the last first, moved down below its children's
 * smaller, about two comparisons an event, where a sift at every change was some 70
 * instructions. The order of the events out of it is the (time, sequence number) order,
 * which does not depend on the heap's shape. */
void
pfs__fheap_settle(struct pfs__fheap *h)
{
    if (!h->held)
        return;
    h->held = false;
    for (size_t i = h->n / 2; i-- > 0;)
        fdown(h, i);
}

void
pfs__fheap_move(struct pfs__fheap *h, uint32_t from, uint32_t to)
{
    uint32_t at = h->pos[from];

    h->pos[from] = 0;
    h->pos[to] = at;
    if (at)
        h->v[at - 1].rec = to;
}

void
pfs__fheap_fini(struct pfs__fheap *h)
{
    free(h->v);
    free(h->pos);
    h->v = NULL;
    h->pos = NULL;
    h->n = 0;
}
