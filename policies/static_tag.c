/*
 * policies/static-tag - two elasticity classes, the crude first product.
 *
 * Jobs are tagged high or low elasticity by their predicted PFI at a 30% cut against the
 * median of the jobs present. The cut comes out of the low class first, at a common level
 * down to its minimum caps, while the high class stays at full power; only then is the high
 * class cut, at a common level too. No curves are optimised: a tag is all it knows.
 */
#include <math.h>
#include <stdlib.h>

#include "policy.h"

static int
static_tag_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
                    struct pfs_diag *diag)
{
    size_t n = v->n_jobs;
    const struct pfs_pwl *c = NULL;
    double *p30 = NULL, *sorted = NULL, *lo = NULL, *hi = NULL, median;
    struct pfs_diag phase1 = {0};
    int rc;

    (void)state;
    if ((rc = pfs__predicted_readonly(v, "static-tag", true, &c, diag)) != 0)
        return rc;
    p30 = pfs__scratch(0, n * sizeof *p30);
    sorted = pfs__scratch(1, n * sizeof *sorted);
    lo = pfs__scratch(2, n * sizeof *lo);
    hi = pfs__scratch(3, n * sizeof *hi);
    if (!p30 || !sorted || !lo || !hi)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        double t0 = pfs_pwl_eval(&c[i], v->jobs[i].ref_w);

        p30[i] = t0 > 0 ? (1 - pfs_pwl_eval(&c[i], 0.7 * v->jobs[i].ref_w) / t0) / 0.3 : 0;
        sorted[i] = p30[i];
    }
    qsort(sorted, n, sizeof *sorted, pfs__cmp_double);
    median = n ? sorted[n / 2] : 0;
    /* Phase 1: high class at full power, low class at a common level. */
    for (size_t i = 0; i < n; i++) {
        bool high = p30[i] >= median;

        lo[i] = high ? v->jobs[i].max_w : v->jobs[i].min_w;
        hi[i] = v->jobs[i].max_w;
    }
    rc = pfs__level("static-tag", v->jobs, n, lo, hi, v->budget_w, out, &phase1);
    if (rc == PFS_EINVAL) {
        /* Phase 2: the low class at its minimum, the high class at a common level. */
        for (size_t i = 0; i < n; i++) {
            bool high = p30[i] >= median;

            lo[i] = v->jobs[i].min_w;
            hi[i] = high ? v->jobs[i].max_w : v->jobs[i].min_w;
        }
        rc = pfs__level("static-tag", v->jobs, n, lo, hi, v->budget_w, out, diag);
    }
    return rc;
}

const struct pfs_policy_ops pfs_policy_static_tag = {
    .name = "static-tag",
    .summary = "two classes by predicted PFI: cut the low-elasticity half first",
    .state_size = 0,
    .may_pause = false,
    .memoryless = true,
    .allocate = static_tag_allocate,
};
