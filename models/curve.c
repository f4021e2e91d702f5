/*
 * models/curve.c - job power-throughput curves behind one interface.
 *
 * Two kinds, one descriptor each:
 * - sampled: measured points, interpolated with GSL's Steffen method, which is monotone
 *   between points when the data are and never overshoots a point (Steffen, A&A 239, 1990);
 *   two points fall back to a straight line. A sampled curve answers only inside its
 *   measured range: outside it pfs_curve_eval returns PFS_ERANGE instead of extrapolating.
 * - model: the DVFS model of models/dvfs.c for one profile and one job, defined over the
 *   profile's settable limits.
 *
 * Evaluation is const and uses no interpolation accelerator, so one curve may be shared by
 * threads (sweeps run policies in parallel over the same curves).
 */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct curve_ops {
    const char *name;
    int (*eval)(const struct pfs_curve *c, double cap_w, struct pfs_curve_point *out);
    void (*fini)(struct pfs_curve *c);
};

struct pfs_curve {
    const struct curve_ops *ops;
    double lo_w, hi_w; /* domain, W */
    /* sampled */
    size_t n;
    double *cap_w, *throughput, *power_w;
    gsl_interp *it_throughput, *it_power;
    /* model */
    struct pfs_gpu gpu;
    struct pfs_dvfs_job job;
};

static int
sampled_eval(const struct pfs_curve *c, double cap_w, struct pfs_curve_point *out)
{
    double t, p, dt, dp;

    if (gsl_interp_eval_e(c->it_throughput, c->cap_w, c->throughput, cap_w, NULL, &t) ||
        gsl_interp_eval_e(c->it_power, c->cap_w, c->power_w, cap_w, NULL, &p) ||
        gsl_interp_eval_deriv_e(c->it_throughput, c->cap_w, c->throughput, cap_w, NULL, &dt) ||
        gsl_interp_eval_deriv_e(c->it_power, c->cap_w, c->power_w, cap_w, NULL, &dp))
        return PFS_ENUMERIC;
    out->throughput = t;
    out->power_w = p;
    out->dthroughput_dcap = dt;
    out->dpower_dcap = dp;
    return 0;
}

static void
sampled_fini(struct pfs_curve *c)
{
    if (c->it_throughput)
        gsl_interp_free(c->it_throughput);
    if (c->it_power)
        gsl_interp_free(c->it_power);
    free(c->cap_w);
    free(c->throughput);
    free(c->power_w);
}

static const struct curve_ops sampled_ops = {
    .name = "sampled",
    .eval = sampled_eval,
    .fini = sampled_fini,
};

static int
model_eval(const struct pfs_curve *c, double cap_w, struct pfs_curve_point *out)
{
    struct pfs_dvfs_point pt;

    pfs_dvfs_eval(&c->gpu, &c->job, cap_w, &pt);
    out->throughput = pt.throughput;
    out->power_w = pt.power_w;
    out->dthroughput_dcap = pt.dthroughput_dcap;
    out->dpower_dcap = pt.dpower_dcap;
    return 0;
}

static const struct curve_ops model_ops = {
    .name = "model",
    .eval = model_eval,
    .fini = NULL,
};

/* Sorts the points by cap (insertion sort: curves have tens of points). */
static void
sort_points(double *cap, double *t, double *p, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        double c0 = cap[i], t0 = t[i], p0 = p[i];
        size_t k = i;

        for (; k > 0 && cap[k - 1] > c0; k--) {
            cap[k] = cap[k - 1];
            t[k] = t[k - 1];
            p[k] = p[k - 1];
        }
        cap[k] = c0;
        t[k] = t0;
        p[k] = p0;
    }
}

int
pfs_curve_sampled_new(const double *cap_w, const double *throughput, const double *power_w,
                      size_t n, struct pfs_curve **out, struct pfs_diag *diag)
{
    struct pfs_curve *c;
    const gsl_interp_type *type = n >= 3 ? gsl_interp_steffen : gsl_interp_linear;

    *out = NULL;
    if (n < 2)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, NULL,
                             "a sampled curve needs at least 2 points, got %zu", n);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(cap_w[i]) || !isfinite(throughput[i]) || !isfinite(power_w[i]))
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, NULL,
                                 "point %zu of a sampled curve is not finite", i + 1);
    c = calloc(1, sizeof *c);
    if (!c)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    c->ops = &sampled_ops;
    c->n = n;
    c->cap_w = malloc(n * sizeof(double));
    c->throughput = malloc(n * sizeof(double));
    c->power_w = malloc(n * sizeof(double));
    if (!c->cap_w || !c->throughput || !c->power_w) {
        pfs_curve_free(c);
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    memcpy(c->cap_w, cap_w, n * sizeof(double));
    memcpy(c->throughput, throughput, n * sizeof(double));
    memcpy(c->power_w, power_w, n * sizeof(double));
    sort_points(c->cap_w, c->throughput, c->power_w, n);
    for (size_t i = 1; i < n; i++) {
        if (!(c->cap_w[i] > c->cap_w[i - 1])) {
            double dup = c->cap_w[i];

            pfs_curve_free(c);
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "cap_w",
                                 "two points of a sampled curve share the cap %g W", dup);
        }
    }
    c->lo_w = c->cap_w[0];
    c->hi_w = c->cap_w[n - 1];
    c->it_throughput = gsl_interp_alloc(type, n);
    c->it_power = gsl_interp_alloc(type, n);
    if (!c->it_throughput || !c->it_power ||
        gsl_interp_init(c->it_throughput, c->cap_w, c->throughput, n) != GSL_SUCCESS ||
        gsl_interp_init(c->it_power, c->cap_w, c->power_w, n) != GSL_SUCCESS) {
        pfs_curve_free(c);
        return pfs__diag_set(diag, PFS_ENUMERIC, NULL, 0, 0, NULL,
                             "cannot set up the interpolation");
    }
    *out = c;
    return 0;
}

int
pfs_curve_model_new(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, struct pfs_curve **out,
                    struct pfs_diag *diag)
{
    struct pfs_curve *c;

    *out = NULL;
    if (!(j->t_max >= 0 && j->alpha >= 0 && j->alpha <= 1 && j->activity >= 0 && j->mem_w >= 0 &&
          j->cap_fill >= 0 && j->cap_fill <= 1))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, NULL,
                             "model job parameters out of range (t_max >= 0, 0 <= alpha <= 1, "
                             "activity >= 0, mem_w >= 0, 0 <= cap_fill <= 1)");
    c = calloc(1, sizeof *c);
    if (!c)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    c->ops = &model_ops;
    c->gpu = *g;
    c->job = *j;
    c->lo_w = g->min_limit_w;
    c->hi_w = g->max_limit_w;
    *out = c;
    return 0;
}

void
pfs_curve_free(struct pfs_curve *c)
{
    if (!c)
        return;
    if (c->ops->fini)
        c->ops->fini(c);
    free(c);
}

int
pfs_curve_eval(const struct pfs_curve *c, double cap_w, struct pfs_curve_point *out)
{
    if (!(cap_w >= c->lo_w && cap_w <= c->hi_w))
        return PFS_ERANGE;
    return c->ops->eval(c, cap_w, out);
}

void
pfs_curve_domain(const struct pfs_curve *c, double *lo_w, double *hi_w)
{
    *lo_w = c->lo_w;
    *hi_w = c->hi_w;
}

const char *
pfs_curve_kind(const struct pfs_curve *c)
{
    return c->ops->name;
}

/* A curve set's jobs by id (the set is traces/curves.c's; the lookup lies here, low, since the
 * models look jobs up too). */
const char *
pfs__curveset_key(const void *base, size_t i)
{
    return ((const struct pfs_curveset *)base)->jobs[i].job_id;
}

/* Job job_id's number in cs, SIZE_MAX if none: through the index while it covers every job. */
size_t
pfs__curveset_find_at(const struct pfs_curveset *cs, const char *job_id)
{
    if (cs->index && cs->index->n == cs->n_jobs)
        return pfs__strindex_find(cs->index, job_id, pfs__curveset_key, cs);
    for (size_t i = 0; i < cs->n_jobs; i++)
        if (strcmp(cs->jobs[i].job_id, job_id) == 0)
            return i;
    return SIZE_MAX;
}

const struct pfs_job_curve *
pfs_curveset_find(const struct pfs_curveset *cs, const char *job_id)
{
    size_t i = pfs__curveset_find_at(cs, job_id);

    return i == SIZE_MAX ? NULL : &cs->jobs[i];
}
