/*
 * sim/alloc.c - the true curves behind an allocation, and how an allocation is scored.
 *
 * Every policy is scored the same way: a job's throughput under a decision is
 * (1 - pause) x its true curve's concave envelope at its cap. The envelope, not the curve,
 * because a cap controller reaches any point of it by alternating between two caps within a
 * control interval (time-sharing), and between running and paused; that makes the oracle's
 * optimum a concave program, exact by water-filling, and never beaten by any policy,
 * pausing or not, under the same yardstick. For the DVFS model's curves and nearly all
 * measured ones the envelope is the curve itself above the minimum cap; below it the
 * envelope runs to (idle power, 0), the job paused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../policies/truth.h"

/* Tabulates curve c for job j into thr (throughput) and pw (power) between its limits. */
static int
tabulate(const struct pfs_curve *c, const struct pfs_alloc_job *j, struct pfs_pwl *thr,
         struct pfs_pwl *pw, struct pfs_diag *diag)
{
    double lo, hi, from, to, step;
    size_t n;

    pfs_curve_domain(c, &from, &to);
    lo = fmax(from, j->min_w);
    hi = fmin(to, j->max_w);
    if (!(hi >= lo))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, NULL,
                             "job '%s': its curve [%g, %g] W does not meet its limits [%g, %g] W",
                             j->job_id, from, to, j->min_w, j->max_w);
    /* 10 W steps, or fewer points when the range is wide; a measured curve's own points
     * fall on its interpolant either way. */
    n = (size_t)floor((hi - lo) / 10.0) + 1;
    if (n > PFS_PWL_MAX - 1)
        n = PFS_PWL_MAX - 1; /* room for the paused point */
    if (n < 2)
        n = 2;
    step = (hi - lo) / (double)(n - 1);
    for (size_t k = 0; k < n; k++) {
        struct pfs_curve_point pt;
        double x = k + 1 == n ? hi : lo + step * (double)k;

        if (hi - lo < 1e-9)
            x = lo;
        if (pfs_curve_eval(c, x, &pt) != 0)
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, NULL,
                                 "job '%s': its curve has no value at %g W", j->job_id, x);
        thr->x[k] = pw->x[k] = x;
        thr->y[k] = pt.throughput;
        pw->y[k] = pt.power_w;
    }
    thr->n = pw->n = hi - lo < 1e-9 ? 1 : n;
    /* The paused point, (idle, 0), then the envelope. */
    if (j->idle_w < thr->x[0] && thr->n < PFS_PWL_MAX) {
        memmove(thr->x + 1, thr->x, thr->n * sizeof *thr->x);
        memmove(thr->y + 1, thr->y, thr->n * sizeof *thr->y);
        thr->x[0] = j->idle_w;
        thr->y[0] = 0;
        thr->n++;
    }
    pfs_pwl_hull(thr);
    return 0;
}

int
pfs_truth_new(const struct pfs_curve *const *curves, const struct pfs_alloc_job *jobs,
              size_t n_jobs, struct pfs_truth **out, struct pfs_diag *diag)
{
    struct pfs_truth *t = calloc(1, sizeof *t);
    int rc = 0;

    *out = NULL;
    if (!t || !(t->hull = calloc(n_jobs + 1, sizeof *t->hull)) ||
        !(t->power = calloc(n_jobs + 1, sizeof *t->power)) ||
        !(t->n_gpus = calloc(n_jobs + 1, sizeof *t->n_gpus))) {
        pfs_truth_free(t);
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    t->n_jobs = n_jobs;
    for (size_t i = 0; i < n_jobs && rc == 0; i++) {
        rc = tabulate(curves[i], &jobs[i], &t->hull[i], &t->power[i], diag);
        t->n_gpus[i] = jobs[i].n_gpus;
    }
    if (rc) {
        pfs_truth_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void
pfs_truth_free(struct pfs_truth *t)
{
    if (!t)
        return;
    free(t->hull);
    free(t->power);
    free(t->n_gpus);
    free(t);
}

double
pfs_truth_throughput(const struct pfs_truth *t, size_t i, const struct pfs_alloc_decision *d)
{
    double share = 1;

    if (t->n_gpus && d->n_gpus > 0 && d->n_gpus < t->n_gpus[i])
        share = (double)d->n_gpus / t->n_gpus[i]; /* resized: in proportion to its GPUs */
    return share * (1 - d->pause_frac) * pfs_pwl_eval(&t->hull[i], d->cap_w);
}

double
pfs_truth_envelope(const struct pfs_truth *t, size_t i, double avg_w)
{
    return pfs_pwl_eval(&t->hull[i], avg_w);
}

double
pfs_truth_power_w(const struct pfs_truth *t, size_t i, double cap_w)
{
    return pfs_pwl_eval(&t->power[i], cap_w);
}
