/*
 * sim/queue.h - the scheduler's queue indexed for EASY backfill (sim/queue.c).
 */
#ifndef PFISIM_QUEUE_H
#define PFISIM_QUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "internal.h"

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

#endif
