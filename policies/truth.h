/*
 * policies/truth.h - inside struct pfs_truth: the true curves. Only the core (sim/alloc.c)
 * and policies/oracle.c include this file; see policies/policy.h.
 */
#ifndef PFISIM_TRUTH_H
#define PFISIM_TRUTH_H

#include "policy.h"

/* hull[i] is job i's envelope over its average per-GPU power: the concave majorant of its
 * true curve on [min, max] together with the point (idle_w, 0), "paused". A power below the
 * job's minimum cap is then reached by pausing part of the time, which every policy may be
 * scored on and the oracle may choose. */
struct pfs_truth {
    size_t n_jobs;
    struct pfs_pwl *hull;  /* per job: the envelope, paused point first */
    struct pfs_pwl *power; /* per job: its true per-GPU draw (y) against the cap (x) */
    int *n_gpus;           /* per job: its GPUs, for scoring a resize (NULL: not known) */
    /* per job: its class, jobs whose envelopes and GPU counts are the same bits, numbered
     * below n_classes (NULL: every job its own); the oracle water-fills a class once */
    uint32_t *cls;
    uint32_t n_classes;
};

#endif
