/*
 * policies/oracle.c - the exact optimum of total throughput on the true curves.
 *
 * The only policy that includes policies/truth.h. It water-fills the budget over each job's
 * true envelope (its curve made concave, down to the paused point: sim/alloc.c says why that
 * is the yardstick), an exact algorithm for a separable concave program: O(S) expected for S
 * curve segments (policies/solver.c). It is the ceiling for every policy, pausing ones
 * included, so it pauses too where pausing part of the time beats running at the minimum
 * cap. Tests check it against exhaustive search on a 5 W grid and dynamic programming.
 */
#include <math.h>

#include "truth.h"

/* Turns an average per-GPU power x on job i's envelope into a decision: on the segment from
 * the paused point (idle, 0) to the envelope's next vertex b, run at b for the fraction
 * (x - idle) / (b - idle) of the time and pause for the rest; elsewhere, cap at x. */
static struct pfs_alloc_decision
decode(const struct pfs_pwl *h, const struct pfs_alloc_job *j, double x)
{
    if (h->n >= 2 && !(h->y[0] > 0) && x < h->x[1]) {
        double b = h->x[1];

        return (struct pfs_alloc_decision){.cap_w = b, .pause_frac = (b - x) / (b - h->x[0])};
    }
    return (struct pfs_alloc_decision){.cap_w = fmin(fmax(x, j->min_w), j->max_w)};
}

static int
oracle_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
                struct pfs_diag *diag)
{
    int rc;

    (void)state;
    if (!v->truth || v->truth->n_jobs != v->n_jobs)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, NULL,
                             "the oracle needs the jobs' true curves");
    if (v->truth->cls)
        rc = pfs__waterfill_classes("oracle", v->truth->hull, v->jobs, v->n_jobs, v->truth->cls,
                                    v->truth->n_classes, v->budget_w, out, diag);
    else
        rc = pfs__waterfill("oracle", v->truth->hull, v->jobs, v->n_jobs, v->budget_w, NULL, out,
                            diag);
    for (size_t i = 0; rc == 0 && i < v->n_jobs; i++)
        out[i] = decode(&v->truth->hull[i], &v->jobs[i], out[i].cap_w);
    return rc;
}

int
pfs__oracle_classes(const struct pfs_alloc_view *v, const struct pfs__class_set *cs,
                    struct pfs__class_answer *a, struct pfs_diag *diag)
{
    if (!v->truth || v->truth->n_jobs != v->n_jobs || !v->truth->cls)
        return 1;
    a->curves = v->truth->hull;
    a->decision = decode;
    return pfs__waterfill_counted("oracle", v->truth->hull, v->jobs, cs, cs->cache[0], v->budget_w,
                                  a->cap, a->tied, &a->left_w, diag);
}

int
pfs__oracle_tree(const struct pfs_alloc_view *v, const struct pfs_alloc_tree *t,
                 struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    int rc;

    if (!v->truth || v->truth->n_jobs != v->n_jobs)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, NULL,
                             "the oracle needs the jobs' true curves");
    rc = pfs__waterfill_tree("oracle", v->truth->hull, v->jobs, v->n_jobs, t, v->budget_w, out,
                             diag);
    for (size_t i = 0; rc == 0 && i < v->n_jobs; i++)
        out[i] = decode(&v->truth->hull[i], &v->jobs[i], out[i].cap_w);
    return rc;
}

static int
oracle_allocate_tree(void *state, const struct pfs_alloc_view *v, const struct pfs_alloc_tree *t,
                     struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    (void)state;
    return pfs__oracle_tree(v, t, out, diag);
}

const struct pfs_policy_ops pfs_policy_oracle = {
    .name = "oracle",
    .summary = "the exact optimum of total throughput on the true curves",
    .state_size = 0,
    .may_pause = true,
    .memoryless = true,
    .allocate = oracle_allocate,
    .allocate_tree = oracle_allocate_tree,
};
