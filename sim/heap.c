/*
 * sim/heap.c - the event queue: a binary min-heap keyed by (time, sequence number).
 *
 * Time is integer microseconds and every push takes the next sequence number, so two events
 * at the same time come out in the order they were scheduled: the simulation never depends
 * on how a heap happens to break ties (DESIGN.md section 5). Events that a later decision
 * made obsolete (a finish time after the job's rate changed) are not removed; they carry the
 * job's version at scheduling, and the engine drops them when it pops them.
 */
#include <stdlib.h>

#include "sim.h"

static bool
before(const struct pfs__event *a, const struct pfs__event *b)
{
    return a->t_us < b->t_us || (a->t_us == b->t_us && a->seq < b->seq);
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
