/*
 * policies/deadline.c - deadline-aware: every running job keeps the power its deadline
 * needs, the rest is divided PFI-aware, and deadlines that cannot all be kept are given up
 * by tier, each decision saying so.
 *
 * The rule (docs/policies.md has it with its information needs and cost):
 * 1. A job with a deadline and work left needs the rate remaining / (deadline - now); when
 *    the limit is announced to lift before the deadline (a DR event's end), only the work
 *    that full power after the lift cannot do must be done before it: (remaining - full
 *    rate x (deadline - lift)) / (lift - now), none if that is negative. Its
 *    floor is the lowest per-GPU cap whose *predicted* throughput reaches that rate (its
 *    predicted curve, as pfi has it, extrapolated to the minimum cap). A job without a
 *    deadline, or whose deadline has passed (PFS_DEADLINE_PAST), or that would miss it even
 *    at full power (PFS_DEADLINE_TOO_SLOW), has the minimum cap as its floor.
 * 2. If the floors do not fit the budget, deadlines are given up (PFS_DEADLINE_BUDGET): the
 *    least valuable tier first (Flex 3, 2, 1, firm last), within a tier the job whose floor
 *    frees the most power first (fewest deadlines lost), until the rest fit.
 * 3. Above the floors the budget is water-filled over the predicted curves: the jobs with
 *    the most slack per watt, those whose floors lie far below full power on flat curves,
 *    are cut first, because a watt taken from them costs the least predicted throughput.
 * The floors are recomputed at every decision from the work left, so a job that falls
 * behind (the prediction was optimistic, or it waited) gets a higher floor the next time.
 * It never pauses. Cost: O(n log n) for the sort of step 2 and the water-filling.
 */
#include <math.h>
#include <stdlib.h>

#include "policy.h"

struct giveup {
    int tier;
    double freed_w; /* n_gpus x (floor - minimum cap) */
    size_t i;
};

/* Flex 3 first, then the most power freed, then the lower index (deterministic). */
static int
cmp_giveup(const void *a, const void *b)
{
    const struct giveup *x = a, *y = b;

    if (x->tier != y->tier)
        return y->tier - x->tier;
    if (x->freed_w > y->freed_w || x->freed_w < y->freed_w)
        return x->freed_w > y->freed_w ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static int
deadline_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
                  struct pfs_diag *diag)
{
    size_t n = v->n_jobs, m = 0;
    struct pfs_pwl *c = NULL;
    double *floor = malloc((n + 1) * sizeof *floor), need = 0;
    int *lost = calloc(n + 1, sizeof *lost);
    struct giveup *g = malloc((n + 1) * sizeof *g);
    int rc;

    (void)state;
    if (!floor || !lost || !g) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    if ((rc = pfs__predicted_curves(v, "deadline", true, &c, diag)) != 0)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const struct pfs_alloc_job *j = &v->jobs[i];
        double top = c[i].y[c[i].n - 1], left = j->deadline_s - j->now_s;

        floor[i] = j->min_w;
        if (isfinite(j->deadline_s) && j->remaining_tokens > 0 && top > 0) {
            double rate = left > 0 ? j->remaining_tokens / left : HUGE_VAL;
            double until = j->limit_until_s;

            /* A limit announced to lift before the deadline: after it the job runs at full
             * power, so only the work that time cannot do must be done under the limit. */
            if (until > j->now_s && isfinite(until) && j->deadline_s > until)
                rate = fmax(0, j->remaining_tokens - top * (j->deadline_s - until)) /
                       (until - j->now_s);
            if (!(left > 0))
                lost[i] = PFS_DEADLINE_PAST;
            else if (rate > top * (1 + 1e-12))
                lost[i] = PFS_DEADLINE_TOO_SLOW;
            else
                floor[i] = fmin(fmax(pfs__floor_cap(&c[i], 1 - rate / top), j->min_w), j->max_w);
        }
        need += j->n_gpus * floor[i];
        if (floor[i] > j->min_w)
            g[m++] = (struct giveup){j->tier, j->n_gpus * (floor[i] - j->min_w), i};
    }
    qsort(g, m, sizeof *g, cmp_giveup);
    for (size_t q = 0; q < m && need > v->budget_w * (1 + 1e-12); q++) {
        const struct pfs_alloc_job *j = &v->jobs[g[q].i];

        need -= g[q].freed_w;
        floor[g[q].i] = j->min_w;
        lost[g[q].i] = PFS_DEADLINE_BUDGET;
    }
    if (need > v->budget_w * (1 + 1e-12)) {
        rc = pfs__infeasible(diag, "deadline", v->budget_w, need, "the minimum caps");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        pfs__pwl_clip(&c[i], floor[i]);
        out[i] = (struct pfs_alloc_decision){.cap_w = floor[i]};
    }
    rc = pfs__waterfill("deadline", c, v->jobs, n, v->budget_w, NULL, out, diag);
    for (size_t i = 0; i < n && rc == 0; i++)
        out[i].deadline = lost[i];
out:
    free(c);
    free(floor);
    free(lost);
    free(g);
    return rc;
}

const struct pfs_policy_ops pfs_policy_deadline = {
    .name = "deadline",
    .summary = "each job's deadline floor from its work left and predicted curve, PFI-aware "
               "above; gives up deadlines by tier when the floors do not fit",
    .state_size = 0,
    .may_pause = false,
    .allocate = deadline_allocate,
};
