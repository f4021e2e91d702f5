/*
 * policies/pfi_number.c - PFI as the source study describes it: one number per job, read at
 * the operating cut, a control primitive a scheduler ranks or weighs jobs by (issue 57).
 *
 * Beside pfi (policies/pfi.c), which predicts each job's whole curve and water-fills it,
 * these two read a single PFI per job: the predicted (or measured) PFI at the cut the budget
 * asks of the facility, c = 1 - budget / sum(n_i ref_i), clamped into the cuts PFI is known at
 * (10% to 50%) and read between them linearly. PFI is the throughput lost per power removed,
 * both as shares: the lowest PFI loses the least throughput for each watt it gives up.
 *
 *   pfi-rank   every job from its top cap; power is taken first from the job with the lowest
 *              PFI, down to its lowest limit, then from the next (ties: the lower index).
 *   pfi-share  the power to take, D = sum(n_i max_i) - budget, taken from each job's GPUs in
 *              inverse proportion to its PFI: job i gives up k / PFI_i per GPU (PFI at least
 *              0.01), at most down to its lowest limit, k set so that they give up D.
 *
 * Both read only what a scheduler has (the view's predictor, telemetry, given PFI, limits),
 * through the plugin ABI's helpers (pfs_policy_pfi_at): a plugin could be either.
 */
#include <math.h>
#include <stdlib.h>

#include "policy.h"

#define PFI_LEAST 0.01 /* pfi-share's smallest PFI: a job that loses nothing gives at most 100x */

/* Every job's PFI at the budget's cut into pfi[] (n_jobs). Returns 0 or PFS_EINVAL (a job
 * with no PFI to go by). */
static int
pfi_numbers(const struct pfs_alloc_view *v, const char *who, double *pfi, struct pfs_diag *diag)
{
    double ref = 0, cut;

    for (size_t i = 0; i < v->n_jobs; i++)
        ref += v->jobs[i].n_gpus * v->jobs[i].ref_w;
    cut = ref > 0 ? 1 - v->budget_w / ref : 0;
    for (size_t i = 0; i < v->n_jobs; i++) {
        pfi[i] = pfs_policy_pfi_at(v, i, cut);
        if (isnan(pfi[i]))
            return pfs_policy_fail(diag, PFS_EINVAL,
                                   "%s: job '%s': no PFI to go by (no predictor features and no "
                                   "given PFI)",
                                   who, v->jobs[i].job_id);
    }
    return 0;
}

/* Every job at its top cap in out; the power to take from there into *d; where there is some
 * (d > 0), every job's PFI at the budget's cut into *pfi (malloc'd: the caller frees it; NULL
 * where there is none to take or on failure). Returns 0, PFS_EINVAL (a budget below the
 * minimum caps, said; a job with no PFI) or PFS_ENOMEM. */
static int
begin(const struct pfs_alloc_view *v, const char *who, struct pfs_alloc_decision *out, double *d,
      double **pfi, struct pfs_diag *diag)
{
    double top = 0, bottom = 0;
    int rc;

    *pfi = NULL;
    for (size_t i = 0; i < v->n_jobs; i++) {
        out[i].cap_w = v->jobs[i].max_w;
        top += v->jobs[i].n_gpus * v->jobs[i].max_w;
        bottom += v->jobs[i].n_gpus * v->jobs[i].min_w;
    }
    if (bottom > v->budget_w * (1 + 1e-12))
        return pfs_policy_infeasible(diag, who, v->budget_w, bottom, "the minimum caps");
    if (!((*d = top - v->budget_w) > 0))
        return 0;
    if (!(*pfi = malloc((v->n_jobs + 1) * sizeof **pfi)))
        return pfs_policy_fail(diag, PFS_ENOMEM, "out of memory");
    if ((rc = pfi_numbers(v, who, *pfi, diag))) {
        free(*pfi);
        *pfi = NULL;
    }
    return rc;
}

struct ranked {
    double pfi;
    size_t i;
};

static int
cmp_rank(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;

    if (x->pfi < y->pfi || x->pfi > y->pfi)
        return x->pfi < y->pfi ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static int
rank_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
              struct pfs_diag *diag)
{
    struct ranked *order;
    double *pfi, d;
    int rc;

    (void)state;
    if ((rc = begin(v, "pfi-rank", out, &d, &pfi, diag)) || !pfi)
        return rc;
    if (!(order = malloc((v->n_jobs + 1) * sizeof *order))) {
        free(pfi);
        return pfs_policy_fail(diag, PFS_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < v->n_jobs; i++)
        order[i] = (struct ranked){pfi[i], i};
    qsort(order, v->n_jobs, sizeof *order, cmp_rank);
    for (size_t q = 0; q < v->n_jobs && d > 0; q++) {
        const struct pfs_alloc_job *j = &v->jobs[order[q].i];
        double room = j->n_gpus * (j->max_w - j->min_w), take = fmin(d, room);

        out[order[q].i].cap_w = take >= room ? j->min_w : j->max_w - take / j->n_gpus;
        d -= take;
    }
    free(pfi);
    free(order);
    return 0;
}

/* What pfi-share's jobs give up at k: each n_i min(k / PFI_i, max_i - min_i). */
static double
given_up(const struct pfs_alloc_view *v, const double *pfi, double k)
{
    double g = 0;

    for (size_t i = 0; i < v->n_jobs; i++)
        g += v->jobs[i].n_gpus * fmin(k / pfi[i], v->jobs[i].max_w - v->jobs[i].min_w);
    return g;
}

static int
share_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
               struct pfs_diag *diag)
{
    double *pfi, d, a = 0, b = 1;
    int rc;

    (void)state;
    if ((rc = begin(v, "pfi-share", out, &d, &pfi, diag)) || !pfi)
        return rc;
    for (size_t i = 0; i < v->n_jobs; i++)
        pfi[i] = fmax(pfi[i], PFI_LEAST);
    /* k by bisection: given_up is continuous and non-decreasing in k */
    while (given_up(v, pfi, b) < d && b < 1e12)
        b *= 2;
    for (int it = 0; it < 200 && b - a > 1e-15 * b; it++) {
        double mid = 0.5 * (a + b);

        if (given_up(v, pfi, mid) < d)
            a = mid;
        else
            b = mid;
    }
    /* b gives up at least d: the budget is kept */
    for (size_t i = 0; i < v->n_jobs; i++)
        out[i].cap_w =
            fmax(v->jobs[i].min_w,
                 v->jobs[i].max_w - fmin(b / pfi[i], v->jobs[i].max_w - v->jobs[i].min_w));
    free(pfi);
    return 0;
}

const struct pfs_policy_ops pfs_policy_pfi_rank = {
    .name = "pfi-rank",
    .summary = "one PFI per job at the cut: power taken from the lowest PFI first, to its floor",
    .memoryless = true,
    .allocate = rank_allocate,
};

const struct pfs_policy_ops pfs_policy_pfi_share = {
    .name = "pfi-share",
    .summary = "one PFI per job at the cut: the cut shared in inverse proportion to PFI",
    .memoryless = true,
    .allocate = share_allocate,
};
