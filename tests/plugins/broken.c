/*
 * tests/plugins/broken.c - two policies that break the rules, for pfisim policy-check and
 * the run's own checks (tests/test_plugins.c): over-budget gives every job its top cap
 * whatever the budget; sneaky-pause pauses every job half the time though it says it may not;
 * truth-seeker fails if its view holds the true curves (it must never: the information
 * boundary), and otherwise decides as equal.
 */
#include <pfisim/policy.h>

static int
top_caps(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
         struct pfs_diag *diag)
{
    (void)state;
    (void)diag;
    for (size_t i = 0; i < v->n_jobs; i++)
        out[i].cap_w = v->jobs[i].max_w;
    return 0;
}

static int
half_paused(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
            struct pfs_diag *diag)
{
    (void)state;
    (void)diag;
    for (size_t i = 0; i < v->n_jobs; i++) {
        out[i].cap_w = v->jobs[i].min_w;
        out[i].pause_frac = 0.5;
    }
    return 0;
}

static int
no_truth(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
         struct pfs_diag *diag)
{
    double lo[4096], hi[4096];

    (void)state;
    if (v->truth)
        return pfs_policy_fail(diag, PFS_EPOLICY, "truth-seeker: the view holds the truth");
    if (v->n_jobs > 4096)
        return pfs_policy_fail(diag, PFS_ENOMEM, "truth-seeker: more than 4096 jobs");
    for (size_t i = 0; i < v->n_jobs; i++) {
        lo[i] = v->jobs[i].min_w;
        hi[i] = v->jobs[i].max_w;
    }
    return pfs_policy_level("truth-seeker", v->jobs, v->n_jobs, lo, hi, v->budget_w, out, diag);
}

static const struct pfs_policy_ops truth_seeker = {
    .name = "truth-seeker",
    .summary = "fails if it is shown the true curves",
    .memoryless = true,
    .allocate = no_truth,
};

static const struct pfs_policy_ops over_budget = {
    .name = "over-budget",
    .summary = "every job at its top cap, whatever the budget (broken on purpose)",
    .memoryless = true,
    .allocate = top_caps,
};

static const struct pfs_policy_ops sneaky_pause = {
    .name = "sneaky-pause",
    .summary = "pauses though it says it may not (broken on purpose)",
    .memoryless = true,
    .allocate = half_paused,
};

PFS_POLICY_PLUGIN(&over_budget, &sneaky_pause, &truth_seeker)
