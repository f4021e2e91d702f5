/*
 * policies/pause-greedy - Emerald's "Job Pausing, Greedy": no DVFS; pause the most
 * flexible jobs for their allowance.
 *
 * Every running job keeps its full power (the default limit). To meet the budget, jobs are
 * paused, the most tolerant tier first (Flex 3, 2, 1; within a tier the largest first),
 * each for up to its allowance: the fraction of time its tier tolerates losing (10/25/50%).
 * In a one-shot allocation that is the steady state, a duty cycle (pause_frac); the
 * simulator staggers the pauses over the event. Firm jobs are never paused; when the
 * allowances do not cover the cut, the budget is infeasible for this policy.
 */
#include <math.h>
#include <stdlib.h>

#include "policy.h"

struct order {
    int tier;
    double saving;
    size_t i;
};

static int
cmp_order(const void *a, const void *b)
{
    const struct order *x = a, *y = b;

    if (x->tier != y->tier)
        return y->tier - x->tier;
    if (x->saving > y->saving || x->saving < y->saving)
        return x->saving > y->saving ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static int
pause_greedy_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
                      struct pfs_diag *diag)
{
    struct order *o = pfs__scratch(0, v->n_jobs * sizeof *o);
    double total = 0, deficit;
    size_t m = 0;

    (void)state;
    if (!o)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t i = 0; i < v->n_jobs; i++) {
        const struct pfs_alloc_job *j = &v->jobs[i];
        double cap = fmin(fmax(j->ref_w, j->min_w), j->max_w);

        out[i] = (struct pfs_alloc_decision){.cap_w = cap, .pause_frac = 0};
        total += j->n_gpus * cap;
        if (j->tier != PFS_TIER_FIRM)
            o[m++] = (struct order){j->tier, j->n_gpus * (cap - j->idle_w), i};
    }
    qsort(o, m, sizeof *o, cmp_order);
    deficit = total - v->budget_w;
    for (size_t q = 0; q < m && deficit > 0; q++) {
        double allowance = v->jobs[o[q].i].max_loss, p;

        if (!(o[q].saving > 0))
            continue;
        p = fmin(allowance, deficit / o[q].saving);
        out[o[q].i].pause_frac = p;
        deficit -= p * o[q].saving;
    }
    if (deficit > v->budget_w * 1e-12)
        return pfs__infeasible(diag, "pause-greedy", v->budget_w, v->budget_w + deficit,
                               "full-power jobs with every Flex job paused for its allowance");
    return 0;
}

const struct pfs_policy_ops pfs_policy_pause_greedy = {
    .name = "pause-greedy",
    .summary = "Emerald's Job Pausing, Greedy: full power, pause the most flexible jobs",
    .state_size = 0,
    .may_pause = true,
    .memoryless = true,
    .allocate = pause_greedy_allocate,
};
