/*
 * sim/sim.h - the simulator's internals, shared by sim/heap.c and sim/sim.c.
 */
#ifndef PFISIM_SIM_H
#define PFISIM_SIM_H

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

/* sim/queue.c: the scheduler's queue indexed for EASY backfill. Job j (of n) has the fixed
 * rank job_rank[j] in queue order (rank_job is its inverse), n_gpus[j] GPUs and the run time
 * dur[j]. pfs__queue_head is the queued job of lowest rank (SIZE_MAX: none);
 * pfs__queue_any_within says whether a queued job other than `except` (SIZE_MAX: none) has at
 * most max_gpus GPUs; pfs__queue_next is the queued job of lowest rank above `after`
 * (SIZE_MAX: from the start) with at most max_gpus GPUs and either at most any_gpus GPUs or a
 * run time of at most max_dur, SIZE_MAX if none; slot says which of two kept answers per
 * bucket a question may use and keep (0: a backfill pass's first, 1: its others), only a
 * matter of speed. The index (ranks, buckets, run times) does
 * not change during a run and is shared by the runs of the same inputs and queue order.
 * pfs__queue_index_alloc makes one for n jobs (n < UINT32_MAX; NULL: out of memory), ranked
 * or with queue order job order, its arrays in one block of pfs__queue_index_bytes (0: too
 * many jobs); pfs__queue_index_alloc_at makes it in a block the caller gives (malloc'd, at
 * least that long: the index's now, freed with it); the caller fills pfs__queue_index_dur (each
 * job's run time) and, ranked, pfs__queue_index_rank_job (the job of each rank; NULL unranked),
 * then pfs__queue_index_build sorts the jobs into buckets by their GPUs, job j's stride bytes after
 * job j - 1's (0 or PFS_ENOMEM). A queue (what is queued now) is a run's own and must not outlive
 * its index. */
struct pfs__queue_index;
struct pfs__queue;
struct pfs__queue_index *pfs__queue_index_alloc(size_t n, bool ranked);
size_t pfs__queue_index_bytes(size_t n, bool ranked);
struct pfs__queue_index *pfs__queue_index_alloc_at(void *block, size_t n, bool ranked);
double *pfs__queue_index_dur(struct pfs__queue_index *x);
uint32_t *pfs__queue_index_rank_job(struct pfs__queue_index *x);
int pfs__queue_index_build(struct pfs__queue_index *x, const int *n_gpus, size_t stride);
void pfs__queue_index_free(struct pfs__queue_index *x);
int pfs__queue_new(struct pfs__queue **out, const struct pfs__queue_index *x);
void pfs__queue_free(struct pfs__queue *q);
void pfs__queue_push(struct pfs__queue *q, size_t j);
void pfs__queue_remove(struct pfs__queue *q, size_t j);
size_t pfs__queue_len(const struct pfs__queue *q);
size_t pfs__queue_head(struct pfs__queue *q);
size_t pfs__queue_rank(const struct pfs__queue *q, size_t j);
bool pfs__queue_any_within(const struct pfs__queue *q, int max_gpus, size_t except);
size_t pfs__queue_next(struct pfs__queue *q, size_t after, int max_gpus, int any_gpus,
                       double max_dur, unsigned slot);

/* sim/order.c: the running jobs of each pool in order of (key, job index), key the
 * estimated time to finish. A job is inserted when it is not in the order and removed by
 * the key it was inserted with (the caller keeps it; remove it first to change its key).
 * pfs__order_reach is the first job in that order at which the GPUs of the jobs up to it
 * reach want (> 0), with its key and those GPUs (*freed), or SIZE_MAX if all of the pool's
 * together have fewer. Keys are not NaN. */
struct pfs__order;
int pfs__order_new(struct pfs__order **out);
void pfs__order_free(struct pfs__order *o);
int pfs__order_insert(struct pfs__order *o, int pool, size_t j, double key, int gpus);
void pfs__order_remove(struct pfs__order *o, int pool, size_t j, double key);
/* Gives every job of pool's order the key key_of(arg, job) and puts them in order again, in
 * place: for a change of most keys at once, where a removal and an insertion cost a search
 * and a move within a block each. Returns 0 or PFS_ENOMEM (the order as it was). */
int pfs__order_rekey(struct pfs__order *o, int pool, double (*key_of)(void *arg, uint32_t job),
                     void *arg);
int64_t pfs__order_total(const struct pfs__order *o, int pool);
size_t pfs__order_reach(const struct pfs__order *o, int pool, int64_t want, double *key,
                        int64_t *freed);
/* Whether the order's blocks hold together: entries in order within and across blocks,
 * first entries and sums as kept (tests). */
bool pfs__order_ok(const struct pfs__order *o);

#endif
