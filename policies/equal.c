/*
 * policies/equal.c - the naive baseline: the same cap on every GPU.
 *
 * The level L with sum n_i clamp(L, min_i, max_i) = budget: every GPU gets L, or its own
 * limit where L is outside it. Knows nothing of the jobs but their GPU counts and limits.
 */
#include <stdlib.h>

#include "policy.h"

static int
equal_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
               struct pfs_diag *diag)
{
    double *lo = pfs__scratch(0, v->n_jobs * sizeof *lo),
           *hi = pfs__scratch(1, v->n_jobs * sizeof *hi);

    (void)state;
    if (!lo || !hi)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t i = 0; i < v->n_jobs; i++) {
        lo[i] = v->jobs[i].min_w;
        hi[i] = v->jobs[i].max_w;
    }
    return pfs__level("equal", v->jobs, v->n_jobs, lo, hi, v->budget_w, out, diag);
}

int
pfs__equal_tree(const struct pfs_alloc_view *v, const struct pfs_alloc_tree *t,
                struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    double *lo = pfs__scratch(0, v->n_jobs * sizeof *lo),
           *hi = pfs__scratch(1, v->n_jobs * sizeof *hi);

    if (!lo || !hi)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t i = 0; i < v->n_jobs; i++) {
        lo[i] = v->jobs[i].min_w;
        hi[i] = v->jobs[i].max_w;
    }
    return pfs__level_tree("equal", v->jobs, v->n_jobs, lo, hi, t, v->budget_w, out, diag);
}

static int
equal_allocate_tree(void *state, const struct pfs_alloc_view *v, const struct pfs_alloc_tree *t,
                    struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    (void)state;
    return pfs__equal_tree(v, t, out, diag);
}

const struct pfs_policy_ops pfs_policy_equal = {
    .name = "equal",
    .summary = "the same cap on every GPU (the naive baseline)",
    .state_size = 0,
    .may_pause = false,
    .memoryless = true,
    .allocate = equal_allocate,
    .allocate_tree = equal_allocate_tree,
};
