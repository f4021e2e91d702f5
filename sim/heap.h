/*
 * sim/heap.h - the simulator's events and their two heaps (sim/heap.c): every event in
 * order of time and sequence number, and the running jobs' finish events.
 */
#ifndef PFISIM_HEAP_H
#define PFISIM_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

enum pfs__event_type {
    PFS__EV_ARRIVAL, /* job: a job is submitted */
    PFS__EV_FINISH,  /* job, version: a running job completes (version: its slot) */
    PFS__EV_CONTROL, /* the policy's cadence */
    PFS__EV_ACTUATE, /* version: decided caps take effect */
    PFS__EV_MINUTE,  /* a minute boundary: metrics and the budget's next step */
    PFS__EV_END,     /* the end of the simulated time */
};

/* The order of events, and of finish events among them: by time, then sequence number. */
static inline bool
pfs__event_before(int64_t t_a, uint64_t seq_a, int64_t t_b, uint64_t seq_b)
{
    return t_a < t_b || (t_a == t_b && seq_a < seq_b);
}

/* Events at equal times come out in the order they were pushed (seq). */
struct pfs__event {
    int64_t t_us;
    uint64_t seq;
    int type;
    uint32_t job;
    uint32_t version;
};

struct pfs__heap {
    struct pfs__event *v;
    size_t n, cap;
    uint64_t next_seq;
};

int pfs__heap_push(struct pfs__heap *h, int64_t t_us, int type, uint32_t job, uint32_t version);
/* With a given sequence number (next_seq untouched): an event of a stream known in advance,
 * pushed only when the one before it comes out, with the number it would have had if every
 * event of the stream had been pushed at the start (the same order, a smaller heap). */
int pfs__heap_push_seq(struct pfs__heap *h, int64_t t_us, int type, uint32_t job, uint32_t version,
                       uint64_t seq);
bool pfs__heap_pop(struct pfs__heap *h, struct pfs__event *out);
void pfs__heap_fini(struct pfs__heap *h);

/* The running jobs' finish events: at most one per live record rec (< the n_rec it was made
 * for), keyed (time, sequence number) as the events are; pos[rec] is its index + 1 (0:
 * none). set schedules rec's (job's) finish, or moves it; del drops it; the first is v[0]
 * when n > 0. */
struct pfs__fevent {
    int64_t t_us;
    uint64_t seq;
    uint32_t job, rec;
};
struct pfs__fheap {
    struct pfs__fevent *v;
    uint32_t *pos;
    size_t n;
    bool held; /* changes are written in place, the heap made whole at settle */
};
int pfs__fheap_init(struct pfs__fheap *h, size_t n_rec);
void pfs__fheap_sift_set(struct pfs__fheap *h, uint32_t rec, uint32_t job, int64_t t_us,
                         uint64_t seq);
/* Record rec's finish event: for job at t_us, sequence number seq (added, or moved). Held
 * (pfs__fheap_hold): written in place, inline (every running job's, at each decision of an
 * event under equal); else sifted into place. */
static inline void
pfs__fheap_set(struct pfs__fheap *h, uint32_t rec, uint32_t job, int64_t t_us, uint64_t seq)
{
    if (h->held) {
        size_t i = h->pos[rec] ? h->pos[rec] - 1 : h->n++;

        h->v[i] = (struct pfs__fevent){t_us, seq, job, rec};
        h->pos[rec] = (uint32_t)i + 1;
    } else
        pfs__fheap_sift_set(h, rec, job, t_us, seq);
}
void pfs__fheap_del(struct pfs__fheap *h, uint32_t rec);
/* Record from's finish event, if any, now record to's (to has none): its place unchanged. */
void pfs__fheap_move(struct pfs__fheap *h, uint32_t from, uint32_t to);
/* Between hold and settle, set and del only write their events in place (v[0] is not the
 * first); settle makes the heap whole again in O(n): for a change of most running jobs'
 * rates at once (a decision landed by a pass over the slots). */
void pfs__fheap_hold(struct pfs__fheap *h);
void pfs__fheap_settle(struct pfs__fheap *h);
void pfs__fheap_fini(struct pfs__fheap *h);

#endif
