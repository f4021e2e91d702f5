/*
 * policies/fair-headroom - Emerald's "DVFS, Fair" (shared/data/emerald-phoenix, the
 * artifact's pseudocode): every job keeps its flexibility floor, and the budget above the
 * floors is shared as equal fractions of each job's remaining headroom.
 *
 * The floor is the lowest cap at which the job's predicted throughput keeps 1 - L of its
 * full-power throughput, L the tolerated loss of its tier (firm 0, Flex 1/2/3 10/25/50%);
 * then cap_i = floor_i + f (max_i - floor_i) with one f in [0, 1] for all jobs, the largest
 * that fits: f = (budget - sum n_i floor_i) / sum n_i (max_i - floor_i). Below the floors it
 * is infeasible: this policy never pauses.
 */
#include <math.h>
#include <stdlib.h>

#include "policy.h"

int
pfs__tier_floors(const struct pfs_alloc_view *v, const char *policy, double *floor,
                 struct pfs_diag *diag)
{
    const struct pfs_pwl *c = NULL;
    int rc = pfs__predicted_readonly(v, policy, true, &c, diag);

    for (size_t i = 0; rc == 0 && i < v->n_jobs; i++)
        floor[i] = fmin(fmax(pfs__floor_cap(&c[i], v->jobs[i].max_loss), v->jobs[i].min_w),
                        v->jobs[i].max_w);
    return rc;
}

int
pfs__fair_headroom(const struct pfs_alloc_view *v, const char *policy, double *floor,
                   struct pfs_alloc_decision *out, double *need, struct pfs_diag *diag)
{
    double room = 0, f;
    int rc;

    *need = 0;
    if ((rc = pfs__tier_floors(v, policy, floor, diag)) != 0)
        return rc;
    for (size_t i = 0; i < v->n_jobs; i++) {
        *need += v->jobs[i].n_gpus * floor[i];
        room += v->jobs[i].n_gpus * (v->jobs[i].max_w - floor[i]);
    }
    f = room > 0 ? fmin(1, fmax(0, (v->budget_w - *need) / room)) : 1;
    for (size_t i = 0; i < v->n_jobs; i++)
        out[i] = (struct pfs_alloc_decision){
            .cap_w = fmin(floor[i] + f * (v->jobs[i].max_w - floor[i]), v->jobs[i].max_w)};
    return 0;
}

int
pfs__shed_fraction(const struct pfs_alloc_view *v, const double *floor, double need, double hi,
                   pfs__saved_fn saved, const char *policy, const char *what, double *p,
                   struct pfs_diag *diag)
{
    double deficit = need - v->budget_w, a = 0, b = hi;

    if (saved(v, floor, b) < deficit * (1 - 1e-12))
        return pfs__infeasible(diag, policy, v->budget_w, need - saved(v, floor, b), what);
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (a + b);

        if (saved(v, floor, mid) >= deficit)
            b = mid;
        else
            a = mid;
    }
    *p = b;
    return 0;
}

static int
fair_headroom_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
                       struct pfs_diag *diag)
{
    double *floor = pfs__scratch(0, v->n_jobs * sizeof *floor), need;
    int rc;

    (void)state;
    if (!floor)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    rc = pfs__fair_headroom(v, "fair-headroom", floor, out, &need, diag);
    if (rc == 0 && need > v->budget_w * (1 + 1e-12))
        rc = pfs__infeasible(diag, "fair-headroom", v->budget_w, need, "the jobs' tier floors");
    return rc;
}

const struct pfs_policy_ops pfs_policy_fair_headroom = {
    .name = "fair-headroom",
    .summary = "Emerald's DVFS, Fair: equal fractions of headroom above each tier floor",
    .state_size = 0,
    .may_pause = false,
    .memoryless = true,
    .allocate = fair_headroom_allocate,
};
