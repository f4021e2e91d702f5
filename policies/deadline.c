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
 * 2. If the floors do not fit the budget: first the jobs that lose nothing by a pause are
 *    paused (no deadline, or one kept even if the job waits until the limit lifts and pays
 *    its restart; firm jobs are never paused), the most power saved first; then deadlines are given
 * up (PFS_DEADLINE_BUDGET): the least valuable tier first (Flex 3, 2, 1, firm last), within a tier
 * the job whose floor frees the most power first (fewest deadlines lost); and if even the minimum
 * caps do not fit, interruptible jobs are paused, Flex 3 first, their deadlines given up. Otherwise
 * every job runs.
 * 3. Above the floors the budget is water-filled over the predicted curves: the jobs with
 *    the most slack per watt, those whose floors lie far below full power on flat curves,
 *    are cut first, because a watt taken from them costs the least predicted throughput.
 * The floors are recomputed at every decision from the work left, so a job that falls
 * behind (the prediction was optimistic, or it waited) gets a higher floor the next time.
 * Cost: O(n log n) for the sorts of step 2 and the water-filling.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* Takes jobs from the list g (sorted) out of the budget until need fits, saving each
 * g[].freed_w: by pausing it, or else by dropping its floor to the minimum cap. Either way
 * its deadline is given up, unless keep (the job loses no deadline by a pause). */
static void
shed(const struct pfs_alloc_view *v, const struct giveup *g, size_t m, bool pause, bool keep,
     double *need, double *floor, int *lost, bool *paused)
{
    for (size_t q = 0; q<m && * need> v->budget_w * (1 + 1e-12); q++) {
        size_t i = g[q].i;

        *need -= g[q].freed_w;
        if (pause)
            paused[i] = true;
        else
            floor[i] = v->jobs[i].min_w;
        if (!keep && lost[i] == PFS_DEADLINE_KEPT)
            lost[i] = PFS_DEADLINE_BUDGET;
    }
}

static int
deadline_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
                  struct pfs_diag *diag)
{
    size_t n = v->n_jobs, m_spare = 0, m_floor = 0, m_lost = 0;
    const struct pfs_pwl *c = NULL;
    /* (the working arrays kept per thread: pfs__scratch) */
    double *floor = pfs__scratch(0, n * sizeof *floor), need = 0;
    int *lost = pfs__scratch(1, n * sizeof *lost);
    bool *paused = pfs__scratch(2, n * sizeof *paused), *spare = pfs__scratch(3, n * sizeof *spare);
    struct giveup *g = pfs__scratch(4, n * sizeof *g), *g_floor = pfs__scratch(5, n * sizeof *g),
                  *g_lost = pfs__scratch(6, n * sizeof *g);
    int rc;

    (void)state;
    if (!floor || !lost || !paused || !spare || !g || !g_floor || !g_lost)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    memset(lost, 0, n * sizeof *lost);
    memset(paused, 0, n * sizeof *paused);
    memset(spare, 0, n * sizeof *spare);
    if ((rc = pfs__predicted_readonly(v, "deadline", true, &c, diag)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        const struct pfs_alloc_job *j = &v->jobs[i];
        double top = c[i].y[c[i].n - 1], left = j->deadline_s - j->now_s;

        floor[i] = j->min_w;
        spare[i] = true; /* no deadline to keep, or kept even if paused until the limit lifts */
        if (isfinite(j->deadline_s) && j->remaining_tokens > 0 && top > 0) {
            double rate = left > 0 ? j->remaining_tokens / left : HUGE_VAL;
            double until = j->limit_until_s;

            spare[i] = false;
            /* A limit announced to lift before the deadline: after it the job runs at full
             * power, so only the work that time cannot do must be done under the limit. */
            if (until > j->now_s && isfinite(until) && j->deadline_s > until) {
                rate = fmax(0, j->remaining_tokens - top * (j->deadline_s - until)) /
                       (until - j->now_s);
                spare[i] = j->remaining_tokens <= top * (j->deadline_s - until - j->restart_s);
            }
            if (!(left > 0))
                lost[i] = PFS_DEADLINE_PAST;
            else if (rate > top * (1 + 1e-12))
                lost[i] = PFS_DEADLINE_TOO_SLOW;
            else
                floor[i] = fmin(fmax(pfs__floor_cap(&c[i], 1 - rate / top), j->min_w), j->max_w);
            if (lost[i] != PFS_DEADLINE_KEPT)
                spare[i] = false;
        }
        need += j->n_gpus * floor[i];
    }
    /* 1. The floors must fit. First pause the jobs that lose no deadline by it (the most
     *    power saved first), then give up deadlines by tier, then pause the jobs whose
     *    deadlines are lost anyway, Flex 3 first. */
    for (size_t i = 0; i < n; i++) {
        const struct pfs_alloc_job *j = &v->jobs[i];

        if (spare[i] && j->tier != PFS_TIER_FIRM)
            g[m_spare++] = (struct giveup){0, j->n_gpus * (floor[i] - j->idle_w), i};
        else if (floor[i] > j->min_w)
            g_floor[m_floor++] = (struct giveup){j->tier, j->n_gpus * (floor[i] - j->min_w), i};
    }
    qsort(g, m_spare, sizeof *g, cmp_giveup);
    qsort(g_floor, m_floor, sizeof *g_floor, cmp_giveup);
    shed(v, g, m_spare, true, true, &need, floor, lost, paused);
    shed(v, g_floor, m_floor, false, false, &need, floor, lost, paused);
    for (size_t i = 0; i < n; i++) {
        const struct pfs_alloc_job *j = &v->jobs[i];

        if (!paused[i] && j->tier != PFS_TIER_FIRM &&
            (lost[i] == PFS_DEADLINE_PAST || lost[i] == PFS_DEADLINE_TOO_SLOW))
            g_lost[m_lost++] = (struct giveup){j->tier, j->n_gpus * (floor[i] - j->idle_w), i};
    }
    qsort(g_lost, m_lost, sizeof *g_lost, cmp_giveup);
    shed(v, g_lost, m_lost, true, true, &need, floor, lost, paused);
    if (need > v->budget_w * (1 + 1e-12))
        return pfs__infeasible(diag, "deadline", v->budget_w, need, "every job paused but those");
    /* 2. Above the floors, PFI-aware. */
    for (size_t i = 0; i < n; i++) {
        out[i] = (struct pfs_alloc_decision){.cap_w = paused[i] ? v->jobs[i].min_w : floor[i],
                                             .pause_frac = paused[i] ? 1 : 0};
    }
    rc = pfs__waterfill_from("deadline", c, floor, v->jobs, n, v->budget_w, paused, out, diag);
    for (size_t i = 0; i < n && rc == 0; i++)
        out[i].deadline = lost[i];
    return rc;
}

const struct pfs_policy_ops pfs_policy_deadline = {
    .name = "deadline",
    .summary = "each job's deadline floor from its work left and predicted curve, PFI-aware "
               "above; gives up deadlines by tier when the floors do not fit",
    .state_size = 0,
    .may_pause = true,
    .allocate = deadline_allocate,
};
