/*
 * policies/proportional.c - caps in proportion to each job's uncapped draw.
 *
 * cap_i = clamp(k d_i, min_i, max_i) with d_i the observed per-GPU draw at the default
 * limit (the reference power when unknown), k set by bisection so that the budget is met:
 * every job gives up the same share of what it actually draws, not of its limit.
 */
#include <math.h>

#include "policy.h"

static double
draw_of(const struct pfs_alloc_view *v, size_t i)
{
    double d = v->telemetry ? v->telemetry[i].power_w : (double)NAN;

    return d > 0 ? d : v->jobs[i].ref_w;
}

static double
total_at(const struct pfs_alloc_view *v, double k)
{
    double tot = 0;

    for (size_t i = 0; i < v->n_jobs; i++)
        tot +=
            v->jobs[i].n_gpus * fmin(fmax(k * draw_of(v, i), v->jobs[i].min_w), v->jobs[i].max_w);
    return tot;
}

static int
proportional_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
                      struct pfs_diag *diag)
{
    double a = 0, b = 1;

    (void)state;
    if (total_at(v, 0) > v->budget_w * (1 + 1e-12))
        return pfs__infeasible(diag, "proportional", v->budget_w, total_at(v, 0),
                               "the minimum caps");
    while (total_at(v, b) <= v->budget_w && b < 1e6)
        b *= 2;
    for (int it = 0; it < 200 && b - a > 1e-13 * b; it++) {
        double mid = 0.5 * (a + b);

        if (total_at(v, mid) <= v->budget_w)
            a = mid;
        else
            b = mid;
    }
    for (size_t i = 0; i < v->n_jobs; i++)
        out[i].cap_w = fmin(fmax(a * draw_of(v, i), v->jobs[i].min_w), v->jobs[i].max_w);
    return 0;
}

const struct pfs_policy_ops pfs_policy_proportional = {
    .name = "proportional",
    .summary = "caps in proportion to each job's uncapped draw",
    .state_size = 0,
    .may_pause = false,
    .memoryless = true,
    .allocate = proportional_allocate,
};
