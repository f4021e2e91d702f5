/*
 * policies/resize_fair.c - Emerald's "Job Pausing + Resource Allocation, Fair": fair headroom
 * while the tier floors fit; beyond that, interruptible jobs give up whole GPUs.
 *
 * While the floors fit the budget this is fair-headroom (every job at its floor plus one
 * fraction of its headroom). When they do not, every job runs at its floor and each Flex job
 * is resized to fewer GPUs, the ones it sets free idling: k of its n GPUs, k = ceil(n p) but
 * at most floor(n x its allowance), for the smallest common p whose savings
 * (sum k (floor - idle)) cover the deficit, found by bisection. Firm jobs keep every GPU.
 *
 * The scaling rule (docs/policies.md): throughput in proportion to the GPUs a job keeps, the
 * rule by which the corpus scales a curve out to a job's size; real data-parallel jobs lose
 * a little more (their communication does not shrink with them), so this is the optimistic
 * end. The simulator charges a restart (control.resume_s) for every resize, down and back up.
 */
#include <math.h>
#include <stdlib.h>

#include "policy.h"

/* GPUs job j gives up at the common fraction p. */
static int
freed(const struct pfs_alloc_job *j, double p)
{
    int most = (int)floor(j->n_gpus * j->max_loss + 1e-9), k = (int)ceil(j->n_gpus * p - 1e-9);

    if (j->tier == PFS_TIER_FIRM)
        return 0;
    return k < most ? (k > 0 ? k : 0) : most;
}

static double
saved(const struct pfs_alloc_view *v, const double *floor, double p)
{
    double s = 0;

    for (size_t i = 0; i < v->n_jobs; i++)
        s += freed(&v->jobs[i], p) * (floor[i] - v->jobs[i].idle_w);
    return s;
}

static int
resize_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
                struct pfs_diag *diag)
{
    double *floor = pfs__scratch(0, v->n_jobs * sizeof *floor), need = 0;
    int rc;

    (void)state;
    if (!floor)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if ((rc = pfs__fair_headroom(v, "resize-fair", floor, out, &need, diag)) != 0)
        return rc;
    if (need > v->budget_w) { /* else the floors fit: fair headroom, as written */
        double p;

        if ((rc = pfs__shed_fraction(v, floor, need, 1, saved, "resize-fair",
                                     "the tier floors with every Flex job resized to its allowance",
                                     &p, diag)) != 0)
            return rc;
        for (size_t i = 0; i < v->n_jobs; i++)
            out[i] = (struct pfs_alloc_decision){
                .cap_w = floor[i], .n_gpus = v->jobs[i].n_gpus - freed(&v->jobs[i], p)};
    }
    return 0;
}

const struct pfs_policy_ops pfs_policy_resize_fair = {
    .name = "resize-fair",
    .summary = "Emerald's Job Pausing + Resource Allocation, Fair: floors, then Flex jobs "
               "give up whole GPUs",
    .state_size = 0,
    .may_pause = true, /* sheds power beyond the minimum caps (by resizing) */
    .memoryless = true,
    .allocate = resize_allocate,
};
