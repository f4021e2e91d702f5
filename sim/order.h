/*
 * sim/order.h - the running jobs of each pool in order of their estimated time to finish
 * (sim/order.c).
 */
#ifndef PFISIM_ORDER_H
#define PFISIM_ORDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "internal.h"

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
