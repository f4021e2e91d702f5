/*
 * models/predict.c - predicting a job's PFI from the telemetry an operator has.
 *
 * Features (pfs_predict_features) come from the telemetry columns of jobs.csv at the job's
 * uncapped operating point, plus its GPU count, family and phase; never a label and never a
 * hidden parameter of the generator (a test checks the list). The predictor reads a
 * struct pfs_telemetry, which has no label fields, so it cannot reach one by mistake. They are
 * standardised with the training jobs' means and deviations.
 *
 * Two methods:
 * - ridge: one ridge regression per cut, telemetry -> PFI(c). The regularisation lambda is
 *   chosen per target by k-fold cross-validation over a fixed grid, folds drawn from a
 *   seeded shuffle, so training is deterministic.
 * - physics: ridge regressions telemetry -> the DVFS job parameters (logit of alpha,
 *   activity, clock-independent draw, cap_fill) that pfs_fit_job finds on each training
 *   job's measured curve, then PFI through the model of docs/model.md on the job's GPU.
 *   It carries the physics (concavity, the knee, "a job under the cap loses nothing") into
 *   the prediction, and the cut-to-cut consistency that separate regressions lack.
 *
 * Ridge is solved with GSL's SVD-based Tikhonov solver (gsl_multifit_linear_solve), which
 * minimises |y - X b|^2 + lambda^2 |b|^2; the intercept is the mean of y and is not
 * penalised, since X is centred.
 */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <libconfig.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_FEATURES 16
#define MAX_TARGETS  5
#define N_LAMBDAS    13

/* ----- features ----- */

static double
f_power_w(const struct pfs_telemetry *j)
{
    return j->power_w;
}
static double
f_power_frac(const struct pfs_telemetry *j)
{
    return j->power_frac;
}
static double
f_clock(const struct pfs_telemetry *j)
{
    return j->sm_clock_mhz;
}
static double
f_sm(const struct pfs_telemetry *j)
{
    return j->sm_active;
}
static double
f_tensor(const struct pfs_telemetry *j)
{
    return j->tensor_active;
}
static double
f_dram(const struct pfs_telemetry *j)
{
    return j->dram_active;
}
static double
f_nvlink(const struct pfs_telemetry *j)
{
    return log1p(j->nvlink_gbps);
}
static double
f_net(const struct pfs_telemetry *j)
{
    return log1p(j->net_gbps);
}
static double
f_gpus(const struct pfs_telemetry *j)
{
    return log2((double)j->n_gpus);
}
static double
f_moe(const struct pfs_telemetry *j)
{
    return j->family[0] ? (strcmp(j->family, "moe") == 0 ? 1.0 : 0.0) : (double)NAN;
}
static double
f_finetune(const struct pfs_telemetry *j)
{
    return j->phase[0] ? (strcmp(j->phase, "finetune") == 0 ? 1.0 : 0.0) : (double)NAN;
}
static double
f_lora(const struct pfs_telemetry *j)
{
    return j->phase[0] ? (strcmp(j->phase, "lora") == 0 ? 1.0 : 0.0) : (double)NAN;
}
static double
f_tensor_per_sm(const struct pfs_telemetry *j)
{
    /* An SM counter reading 0 saw no busy time, so no tensor work in it either. */
    if (isnan(j->sm_active))
        return NAN;
    return j->sm_active > 0 ? j->tensor_active / j->sm_active : 0.0;
}
static double
f_tensor_x_power(const struct pfs_telemetry *j)
{
    return j->tensor_active * j->power_frac;
}

struct feature {
    struct pfs_feature_info info;
    double (*get)(const struct pfs_telemetry *j);
};

static const struct feature features[] = {
    {{"power_w", "power_w"}, f_power_w},
    {{"power_frac", "power_frac"}, f_power_frac},
    {{"sm_clock_mhz", "sm_clock_mhz"}, f_clock},
    {{"sm_active", "sm_active"}, f_sm},
    {{"tensor_active", "tensor_active"}, f_tensor},
    {{"dram_active", "dram_active"}, f_dram},
    {{"log1p_nvlink_gbps", "nvlink_gbps"}, f_nvlink},
    {{"log1p_net_gbps", "net_gbps"}, f_net},
    {{"log2_n_gpus", "n_gpus"}, f_gpus},
    {{"moe", "family"}, f_moe},
    {{"finetune", "phase"}, f_finetune},
    {{"lora", "phase"}, f_lora},
    {{"tensor_per_sm", "tensor_active,sm_active"}, f_tensor_per_sm},
    {{"tensor_x_power_frac", "tensor_active,power_frac"}, f_tensor_x_power},
};
#define N_ALL_FEATURES (sizeof features / sizeof features[0])

const struct pfs_feature_info *
pfs_predict_features(size_t *n)
{
    static struct pfs_feature_info info[N_ALL_FEATURES];

    for (size_t i = 0; i < N_ALL_FEATURES; i++)
        info[i] = features[i].info;
    *n = N_ALL_FEATURES;
    return info;
}

/* ----- the predictor ----- */

struct target {
    char name[32];
    double lambda, intercept, cv_rmse, train_r2;
    double coef[MAX_FEATURES];
};

struct pfs_predictor {
    enum pfs_predict_method method;
    size_t n_features;
    int feat[MAX_FEATURES]; /* indices into features[] */
    double mean[MAX_FEATURES], sd[MAX_FEATURES];
    size_t n_targets;
    struct target t[MAX_TARGETS];
    size_t n_train;
    unsigned long seed;
    int folds;
};

static const char *const ridge_targets[] = {"pfi_10", "pfi_20", "pfi_30", "pfi_40", "pfi_50"};
static const char *const physics_targets[] = {"logit_alpha", "activity", "mem_w", "cap_fill"};

void
pfs_predict_defaults(struct pfs_predict_options *o)
{
    o->method = PFS_PREDICT_RIDGE;
    o->seed = 1;
    o->folds = 5;
    o->drop = NULL;
}

/* The raw (unstandardised) features of j; the first missing one's name in *missing. */
static int
raw_features(const struct pfs_predictor *p, const struct pfs_telemetry *j, double *x,
             const char **missing)
{
    for (size_t i = 0; i < p->n_features; i++) {
        x[i] = features[p->feat[i]].get(j);
        if (!isfinite(x[i])) {
            *missing = features[p->feat[i]].info.name;
            return PFS_EINVAL;
        }
    }
    return 0;
}

int
pfs_ridge(const double *X, const double *y, size_t n, size_t p, double lambda, double *b,
          double *intercept)
{
    gsl_multifit_linear_workspace *w;
    gsl_matrix *A;
    gsl_vector *yc, *c;
    double my = 0, rnorm, snorm;
    int rc = 0;

    if (n < 2 || p == 0)
        return PFS_EINVAL;
    for (size_t i = 0; i < n; i++)
        my += y[i] / (double)n;
    w = gsl_multifit_linear_alloc(n, p);
    A = gsl_matrix_alloc(n, p);
    yc = gsl_vector_alloc(n);
    c = gsl_vector_alloc(p);
    if (!w || !A || !yc || !c) {
        rc = PFS_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < p; k++)
            gsl_matrix_set(A, i, k, X[i * p + k]);
        gsl_vector_set(yc, i, y[i] - my);
    }
    if (gsl_multifit_linear_svd(A, w) != GSL_SUCCESS ||
        gsl_multifit_linear_solve(lambda, A, yc, c, &rnorm, &snorm, w) != GSL_SUCCESS) {
        rc = PFS_ENUMERIC;
        goto out;
    }
    for (size_t k = 0; k < p; k++)
        b[k] = gsl_vector_get(c, k);
    *intercept = my;
out:
    if (c)
        gsl_vector_free(c);
    if (yc)
        gsl_vector_free(yc);
    if (A)
        gsl_matrix_free(A);
    if (w)
        gsl_multifit_linear_free(w);
    return rc;
}

/* Standardises rows of raw features in place with mean/sd computed over rows[mask]. */
static void
scaling(const double *raw, size_t n, size_t p, const bool *use, double *mean, double *sd)
{
    for (size_t k = 0; k < p; k++) {
        double s = 0, s2 = 0;
        size_t m = 0;

        for (size_t i = 0; i < n; i++) {
            if (use && !use[i])
                continue;
            s += raw[i * p + k];
            m++;
        }
        mean[k] = m ? s / (double)m : 0;
        for (size_t i = 0; i < n; i++) {
            if (use && !use[i])
                continue;
            s2 += pow(raw[i * p + k] - mean[k], 2);
        }
        sd[k] = m > 1 ? sqrt(s2 / (double)(m - 1)) : 1;
        if (!(sd[k] > 1e-12))
            sd[k] = 1; /* a constant feature: centred to 0, contributes nothing */
    }
}

/* Fits ridge on rows use[] of raw (standardising with their own statistics) and returns the
 * squared error summed over rows !use[] (the held-out fold). */
static int
fold_sse(const double *raw, const double *y, size_t n, size_t p, const bool *use, double lambda,
         double *sse)
{
    double mean[MAX_FEATURES], sd[MAX_FEATURES], b[MAX_FEATURES], icpt;
    double *X = calloc(n * p, sizeof *X), *yy = calloc(n, sizeof *yy);
    size_t m = 0;
    int rc;

    if (!X || !yy) {
        free(X);
        free(yy);
        return PFS_ENOMEM;
    }
    scaling(raw, n, p, use, mean, sd);
    for (size_t i = 0; i < n; i++) {
        if (!use[i])
            continue;
        for (size_t k = 0; k < p; k++)
            X[m * p + k] = (raw[i * p + k] - mean[k]) / sd[k];
        yy[m++] = y[i];
    }
    rc = pfs_ridge(X, yy, m, p, lambda, b, &icpt);
    *sse = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        double pred = icpt;

        if (use[i])
            continue;
        for (size_t k = 0; k < p; k++)
            pred += b[k] * (raw[i * p + k] - mean[k]) / sd[k];
        *sse += pow(pred - y[i], 2);
    }
    free(X);
    free(yy);
    return rc;
}

/* Chooses lambda by k-fold CV, then fits on all rows. */
static int
fit_target(const double *raw, const double *y, size_t n, size_t p, const int *fold, int folds,
           const double *mean, const double *sd, struct target *t)
{
    bool *use = malloc(n * sizeof *use);
    double *X = malloc(n * p * sizeof *X), best = HUGE_VAL;
    int rc = 0;

    if (!use || !X) {
        free(use);
        free(X);
        return PFS_ENOMEM;
    }
    for (int l = 0; l < N_LAMBDAS && rc == 0; l++) {
        /* 0, then 10^-3 .. 10^2.5 in half decades: the grid is part of the method. */
        double lambda = l == 0 ? 0 : pow(10, -3.5 + 0.5 * l), sse = 0;

        for (int f = 0; f < folds && rc == 0; f++) {
            double s;

            for (size_t i = 0; i < n; i++)
                use[i] = fold[i] != f;
            rc = fold_sse(raw, y, n, p, use, lambda, &s);
            sse += s;
        }
        if (rc == 0 && sse < best) {
            best = sse;
            t->lambda = lambda;
            t->cv_rmse = sqrt(sse / (double)n);
        }
    }
    if (rc == 0) {
        double *pred = malloc(n * sizeof *pred);

        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < p; k++)
                X[i * p + k] = (raw[i * p + k] - mean[k]) / sd[k];
        rc = pred ? pfs_ridge(X, y, n, p, t->lambda, t->coef, &t->intercept) : PFS_ENOMEM;
        for (size_t i = 0; rc == 0 && i < n; i++) {
            pred[i] = t->intercept;
            for (size_t k = 0; k < p; k++)
                pred[i] += t->coef[k] * X[i * p + k];
        }
        if (rc == 0)
            t->train_r2 = pfs_stat_r2(y, pred, n);
        free(pred);
    }
    free(use);
    free(X);
    return rc;
}

static double
logistic(double z)
{
    return 1.0 / (1.0 + exp(-z));
}

/* (here, beside the features it feeds, rather than with the corpus reader: the models do not
 * call up into traces/) */
void
pfs_telemetry_of(const struct pfs_corpus_job *j, struct pfs_telemetry *t)
{
    memset(t, 0, sizeof *t);
    pfs__strlcpy(t->job_id, j->job_id, sizeof t->job_id);
    pfs__strlcpy(t->gpu, j->gpu, sizeof t->gpu);
    pfs__strlcpy(t->family, j->family, sizeof t->family);
    pfs__strlcpy(t->phase, j->phase, sizeof t->phase);
    t->n_gpus = j->n_gpus;
    t->power_w = j->power_w;
    t->power_frac = j->power_frac;
    t->sm_clock_mhz = j->sm_clock_mhz;
    t->sm_active = j->sm_active;
    t->tensor_active = j->tensor_active;
    t->dram_active = j->dram_active;
    t->nvlink_gbps = j->nvlink_gbps;
    t->net_gbps = j->net_gbps;
    t->tokens_per_s = j->tokens_per_s;
    for (size_t k = 0; k < PFS_N_CUTS; k++)
        t->pfi_given[k] = NAN;
}

/* The training targets of job j: its labels (ridge) or its fitted DVFS parameters
 * (physics). */
static int
targets_of(const struct pfs_predictor *p, const struct pfs_corpus_job *j,
           const struct pfs_curveset *cs, double *y, struct pfs_diag *diag)
{
    if (p->method == PFS_PREDICT_RIDGE) {
        for (size_t k = 0; k < PFS_N_CUTS; k++) {
            y[k] = j->pfi[k];
            if (!isfinite(y[k]))
                return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, ridge_targets[k],
                                     "training job '%s' has no %s label", j->job_id,
                                     ridge_targets[k]);
        }
        return 0;
    }
    {
        const struct pfs_job_curve *jc = cs ? pfs_curveset_find(cs, j->job_id) : NULL;
        struct pfs_gpu g;
        struct pfs_fit f;
        int rc;

        if (!jc)
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, NULL,
                                 "training job '%s' has no curve to fit", j->job_id);
        if ((rc = pfs_gpu_find(j->gpu, &g, diag)) || (rc = pfs_fit_job(&g, jc, &f, diag)))
            return rc;
        y[0] = log(fmax(f.job.alpha, 1e-4) / fmax(1 - f.job.alpha, 1e-4));
        y[1] = f.job.activity;
        y[2] = f.job.mem_w;
        y[3] = f.job.cap_fill;
        return 0;
    }
}

int
pfs_predictor_train(const struct pfs_jobset *js, const struct pfs_curveset *cs,
                    const struct pfs_predict_options *o, struct pfs_predictor **out,
                    struct pfs_diag *diag)
{
    struct pfs_predictor *p = calloc(1, sizeof *p);
    double *raw = NULL, *y = NULL, *yk = NULL;
    int *fold = NULL;
    size_t n = 0, *order = NULL;
    gsl_rng *r = NULL;
    int rc = 0;

    *out = NULL;
    if (!p)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    p->method = o->method;
    p->seed = o->seed;
    p->folds = o->folds < 2 ? 2 : o->folds;
    for (size_t i = 0; i < N_ALL_FEATURES; i++)
        if (!o->drop || strcmp(o->drop, features[i].info.name) != 0)
            p->feat[p->n_features++] = (int)i;
    if (o->drop && p->n_features == N_ALL_FEATURES) {
        rc = pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "drop", "unknown feature '%s'", o->drop);
        goto out;
    }
    p->n_targets = o->method == PFS_PREDICT_RIDGE ? PFS_N_CUTS : 4;
    for (size_t k = 0; k < p->n_targets; k++)
        pfs__strlcpy(p->t[k].name,
                     o->method == PFS_PREDICT_RIDGE ? ridge_targets[k] : physics_targets[k],
                     sizeof p->t[k].name);
    raw = malloc(js->n_jobs * MAX_FEATURES * sizeof *raw);
    y = malloc(js->n_jobs * MAX_TARGETS * sizeof *y);
    yk = malloc(js->n_jobs * sizeof *yk);
    fold = malloc(js->n_jobs * sizeof *fold);
    order = malloc(js->n_jobs * sizeof *order);
    r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!raw || !y || !yk || !fold || !order || !r) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < js->n_jobs; i++) {
        const struct pfs_corpus_job *j = &js->jobs[i];
        const char *missing = NULL;
        struct pfs_telemetry tel;

        if (strcmp(j->split, "train") != 0)
            continue;
        pfs_telemetry_of(j, &tel);
        if (raw_features(p, &tel, raw + n * p->n_features, &missing) != 0) {
            rc = pfs__diag_set(diag, PFS_EINVAL, js->path, 0, 0, missing,
                               "training job '%s' lacks feature '%s'", j->job_id, missing);
            goto out;
        }
        if ((rc = targets_of(p, j, cs, y + n * MAX_TARGETS, diag)) != 0)
            goto out;
        n++;
    }
    p->n_train = n;
    if (n < (size_t)p->folds * 2) {
        rc = pfs__diag_set(diag, PFS_EINVAL, js->path, 0, 0, "split",
                           "%zu jobs in split 'train'; need at least %d", n, p->folds * 2);
        goto out;
    }
    /* Folds: a seeded shuffle dealt round-robin. */
    gsl_rng_set(r, o->seed);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    gsl_ran_shuffle(r, order, n, sizeof *order);
    for (size_t i = 0; i < n; i++)
        fold[order[i]] = (int)(i % (size_t)p->folds);
    scaling(raw, n, p->n_features, NULL, p->mean, p->sd);
    for (size_t k = 0; k < p->n_targets && rc == 0; k++) {
        for (size_t i = 0; i < n; i++)
            yk[i] = y[i * MAX_TARGETS + k];
        rc = fit_target(raw, yk, n, p->n_features, fold, p->folds, p->mean, p->sd, &p->t[k]);
        if (rc)
            pfs__diag_set(diag, rc, NULL, 0, 0, NULL, "ridge regression failed for %s",
                          p->t[k].name);
    }
out:
    if (r)
        gsl_rng_free(r);
    free(raw);
    free(y);
    free(yk);
    free(fold);
    free(order);
    if (rc)
        pfs_predictor_free(p);
    else
        *out = p;
    return rc;
}

int
pfs_predictor_pfi(const struct pfs_predictor *p, const struct pfs_telemetry *j,
                  double pfi[PFS_N_CUTS], struct pfs_diag *diag)
{
    double x[MAX_FEATURES], v[MAX_TARGETS];
    const char *missing = NULL;

    if (raw_features(p, j, x, &missing) != 0)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, missing,
                             "job '%s' lacks feature '%s' that the model uses", j->job_id, missing);
    for (size_t k = 0; k < p->n_targets; k++) {
        v[k] = p->t[k].intercept;
        for (size_t i = 0; i < p->n_features; i++)
            v[k] += p->t[k].coef[i] * (x[i] - p->mean[i]) / p->sd[i];
    }
    if (p->method == PFS_PREDICT_RIDGE) {
        for (size_t k = 0; k < PFS_N_CUTS; k++)
            pfi[k] = v[k];
        return 0;
    }
    {
        struct pfs_dvfs_job dj = {
            .t_max = 1.0,
            .alpha = logistic(v[0]),
            .activity = fmin(fmax(v[1], 0.02), PFS_DVFS_ACTIVITY_MAX),
            .mem_w = fmax(v[2], 0),
            .cap_fill = fmin(fmax(v[3], PFS_DVFS_FILL_MIN), 1.0),
        };
        struct pfs_curve *c = NULL;
        struct pfs_gpu g;
        int rc;

        if ((rc = pfs_gpu_find(j->gpu, &g, diag)) || (rc = pfs_curve_model_new(&g, &dj, &c, diag)))
            return rc;
        for (size_t k = 0; k < PFS_N_CUTS; k++)
            if (pfs_pfi(c, g.default_limit_w, pfs_cut(k), &pfi[k]) != 0)
                pfi[k] = NAN;
        pfs_curve_free(c);
        return 0;
    }
}

int
pfs_predictor_crossfit(const struct pfs_jobset *js, const struct pfs_curveset *cs,
                       const struct pfs_predict_options *o, int folds, double (*pred)[PFS_N_CUTS],
                       struct pfs_diag *diag)
{
    struct pfs_jobset mine = *js;
    size_t *order = NULL, n = 0;
    int *fold = NULL, rc = 0;
    gsl_rng *r = NULL;

    mine.index = NULL; /* the copy is searched, not indexed */
    mine.jobs = malloc((js->n_jobs + 1) * sizeof *mine.jobs);
    order = malloc((js->n_jobs + 1) * sizeof *order);
    fold = malloc((js->n_jobs + 1) * sizeof *fold);
    r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!mine.jobs || !order || !fold || !r) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    if (folds < 2)
        folds = 2;
    /* The outer folds: a seeded shuffle of the training jobs dealt round-robin (a stream
     * apart from the inner folds' that choose each model's regularisation). */
    for (size_t i = 0; i < js->n_jobs; i++) {
        fold[i] = -1;
        for (size_t k = 0; k < PFS_N_CUTS; k++)
            pred[i][k] = NAN;
        if (strcmp(js->jobs[i].split, "train") == 0)
            order[n++] = i;
    }
    gsl_rng_set(r, pfs__fnv1a_str(o->seed, "outer folds"));
    gsl_ran_shuffle(r, order, n, sizeof *order);
    for (size_t i = 0; i < n; i++)
        fold[order[i]] = (int)(i % (size_t)folds);
    for (int f = 0; f < folds && rc == 0; f++) {
        struct pfs_predictor *p = NULL;

        /* Fold f held out: its jobs out of split train, the other training jobs in. */
        for (size_t i = 0; i < js->n_jobs; i++) {
            mine.jobs[i] = js->jobs[i];
            if (fold[i] >= 0)
                pfs__strlcpy(mine.jobs[i].split, fold[i] == f ? "heldout" : "train",
                             sizeof mine.jobs[i].split);
        }
        if ((rc = pfs_predictor_train(&mine, cs, o, &p, diag)) != 0)
            break;
        for (size_t i = 0; i < js->n_jobs && rc == 0; i++) {
            struct pfs_telemetry tel;

            if (fold[i] != f)
                continue;
            pfs_telemetry_of(&js->jobs[i], &tel);
            rc = pfs_predictor_pfi(p, &tel, pred[i], diag);
        }
        pfs_predictor_free(p);
    }
out:
    if (r)
        gsl_rng_free(r);
    free(mine.jobs);
    free(order);
    free(fold);
    return rc;
}

/* ----- statistics ----- */

double
pfs_stat_r2(const double *truth, const double *pred, size_t n)
{
    double m = 0, ss_res = 0, ss_tot = 0;

    for (size_t i = 0; i < n; i++)
        m += truth[i] / (double)n;
    for (size_t i = 0; i < n; i++) {
        ss_res += pow(truth[i] - pred[i], 2);
        ss_tot += pow(truth[i] - m, 2);
    }
    return ss_tot > 0 ? 1 - ss_res / ss_tot : (double)NAN;
}

double
pfs_stat_mae(const double *truth, const double *pred, size_t n)
{
    double s = 0;

    for (size_t i = 0; i < n; i++)
        s += fabs(truth[i] - pred[i]);
    return n ? s / (double)n : (double)NAN;
}

/* Ranks with ties given their average rank (1-based). */
static void
ranks(const double *v, size_t n, double *rank)
{
    size_t *perm = malloc(n * sizeof *perm);

    if (!perm)
        return;
    gsl_sort_index(perm, v, 1, n);
    for (size_t i = 0; i < n;) {
        size_t k = i;

        while (k + 1 < n && !(v[perm[k + 1]] > v[perm[i]]))
            k++;
        for (size_t m = i; m <= k; m++)
            rank[perm[m]] = 0.5 * (double)(i + k) + 1;
        i = k + 1;
    }
    free(perm);
}

double
pfs_stat_spearman(const double *a, const double *b, size_t n)
{
    double *ra = malloc(n * sizeof *ra), *rb = malloc(n * sizeof *rb), rho = NAN;

    if (ra && rb && n > 1) {
        ranks(a, n, ra);
        ranks(b, n, rb);
        rho = gsl_stats_correlation(ra, 1, rb, 1, n);
    }
    free(ra);
    free(rb);
    return rho;
}

/* ----- files ----- */

int
pfs_predictor_save(const struct pfs_predictor *p, FILE *fp, struct pfs_diag *diag)
{
    fprintf(fp,
            "# pfisim predictor (models/predict.c, docs/predictor.md): telemetry -> %s.\n"
            "# Trained by `pfisim predict train` on %zu jobs of split train.\n"
            "predictor = {\n"
            "    version = 1;\n"
            "    method = \"%s\";\n"
            "    n_train = %zu;\n"
            "    folds = %d;\n"
            "    seed = %lu;\n"
            "    features = [",
            p->method == PFS_PREDICT_RIDGE ? "PFI at 10-50% cuts" : "DVFS job parameters",
            p->n_train, p->method == PFS_PREDICT_RIDGE ? "ridge" : "physics", p->n_train, p->folds,
            p->seed);
    for (size_t i = 0; i < p->n_features; i++)
        fprintf(fp, "%s\"%s\"", i ? ", " : "", features[p->feat[i]].info.name);
    fprintf(fp, "];\n");
    pfs__cfg_write_floats(fp, "    ", "mean", p->mean, p->n_features);
    pfs__cfg_write_floats(fp, "    ", "sd", p->sd, p->n_features);
    fprintf(fp, "    targets = (\n");
    for (size_t k = 0; k < p->n_targets; k++) {
        const struct target *t = &p->t[k];

        fprintf(fp,
                "        {\n"
                "            name = \"%s\";\n"
                "            lambda = %.17e;\n"
                "            intercept = %.17e;\n"
                "            cv_rmse = %.17e;\n"
                "            train_r2 = %.17e;\n",
                t->name, t->lambda, t->intercept, t->cv_rmse, t->train_r2);
        pfs__cfg_write_floats(fp, "            ", "coef", t->coef, p->n_features);
        fprintf(fp, "        }%s\n", k + 1 < p->n_targets ? "," : "");
    }
    fprintf(fp, "    );\n};\n");
    if (fflush(fp) != 0 || ferror(fp))
        return pfs__diag_set(diag, PFS_EIO, NULL, 0, 0, NULL, "write error");
    return 0;
}

int
pfs_predictor_load(const char *path, struct pfs_predictor **out, struct pfs_diag *diag)
{
    struct pfs_predictor *p = calloc(1, sizeof *p);
    config_setting_t *root, *f, *ts;
    config_t cfg;
    const char *method = NULL;
    int rc = 0, ival;

    *out = NULL;
    if (!p)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if ((rc = pfs__config_read(&cfg, path, diag)) != 0)
        goto out;
    if (!(root = config_lookup(&cfg, "predictor"))) {
        rc = pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, "predictor",
                           "predictor: missing group (not a pfisim model file?)");
        goto out;
    }
    if (!config_setting_lookup_int(root, "version", &ival) || ival != 1) {
        rc = pfs__diag_set(diag, PFS_EINVAL, path, config_setting_source_line(root), 0,
                           "predictor.version", "predictor.version: expected 1");
        goto out;
    }
    if (!config_setting_lookup_string(root, "method", &method) ||
        (strcmp(method, "ridge") != 0 && strcmp(method, "physics") != 0)) {
        rc = pfs__diag_set(diag, PFS_EINVAL, path, config_setting_source_line(root), 0,
                           "predictor.method", "predictor.method: expected ridge or physics");
        goto out;
    }
    p->method = strcmp(method, "ridge") == 0 ? PFS_PREDICT_RIDGE : PFS_PREDICT_PHYSICS;
    if (config_setting_lookup_int(root, "n_train", &ival))
        p->n_train = (size_t)ival;
    if (config_setting_lookup_int(root, "folds", &ival))
        p->folds = ival;
    f = config_setting_get_member(root, "features");
    if (!f || !config_setting_is_array(f) || config_setting_length(f) < 1 ||
        config_setting_length(f) > MAX_FEATURES) {
        rc = pfs__diag_set(diag, PFS_EINVAL, path, config_setting_source_line(root), 0,
                           "predictor.features", "predictor.features: expected 1 to %d names",
                           MAX_FEATURES);
        goto out;
    }
    p->n_features = (size_t)config_setting_length(f);
    for (size_t i = 0; i < p->n_features; i++) {
        const char *name = config_setting_get_string_elem(f, (int)i);
        size_t k;

        for (k = 0; name && k < N_ALL_FEATURES && strcmp(name, features[k].info.name); k++)
            ;
        if (!name || k == N_ALL_FEATURES) {
            rc = pfs__diag_set(diag, PFS_EINVAL, path, config_setting_source_line(f), 0,
                               "predictor.features", "predictor.features: unknown feature '%s'",
                               name ? name : "(not a string)");
            goto out;
        }
        p->feat[i] = (int)k;
    }
    if ((rc = pfs__cfg_read_floats(root, "mean", "predictor", p->mean, p->n_features, p->n_features,
                                   "per feature", NULL, path, diag)) ||
        (rc = pfs__cfg_read_floats(root, "sd", "predictor", p->sd, p->n_features, p->n_features,
                                   "per feature", NULL, path, diag)))
        goto out;
    /* Every feature is divided by its sd: training writes 1 for a constant one, never 0
     * (issue 17: an sd of 0 gave infinite predictions). */
    for (size_t i = 0; i < p->n_features; i++)
        if (!(p->sd[i] > 0) || !isfinite(p->sd[i]) || !isfinite(p->mean[i])) {
            rc = pfs__diag_set(diag, PFS_EINVAL, path,
                               config_setting_source_line(config_setting_get_member(root, "sd")), 0,
                               "predictor.sd",
                               "predictor.sd.[%zu]: %g (mean %g); each feature's sd must be "
                               "positive and finite",
                               i, p->sd[i], p->mean[i]);
            goto out;
        }
    ts = config_setting_get_member(root, "targets");
    p->n_targets = p->method == PFS_PREDICT_RIDGE ? PFS_N_CUTS : 4;
    if (!ts || !config_setting_is_list(ts) || (size_t)config_setting_length(ts) != p->n_targets) {
        rc = pfs__diag_set(diag, PFS_EINVAL, path, config_setting_source_line(root), 0,
                           "predictor.targets", "predictor.targets: expected a list of %zu",
                           p->n_targets);
        goto out;
    }
    for (size_t k = 0; k < p->n_targets; k++) {
        config_setting_t *t = config_setting_get_elem(ts, (unsigned)k);
        const char *name;
        char where[48];

        snprintf(where, sizeof where, "predictor.targets.[%zu]", k);
        if (!config_setting_lookup_string(t, "name", &name) ||
            !config_setting_lookup_float(t, "lambda", &p->t[k].lambda) ||
            !config_setting_lookup_float(t, "intercept", &p->t[k].intercept)) {
            rc = pfs__diag_set(diag, PFS_EINVAL, path, config_setting_source_line(t), 0, where,
                               "%s: needs name, lambda and intercept", where);
            goto out;
        }
        pfs__strlcpy(p->t[k].name, name, sizeof p->t[k].name);
        config_setting_lookup_float(t, "cv_rmse", &p->t[k].cv_rmse);
        config_setting_lookup_float(t, "train_r2", &p->t[k].train_r2);
        if (!isfinite(p->t[k].lambda) || !isfinite(p->t[k].intercept) ||
            !isfinite(p->t[k].cv_rmse) || !isfinite(p->t[k].train_r2)) {
            rc = pfs__diag_set(diag, PFS_EINVAL, path, config_setting_source_line(t), 0, where,
                               "%s: lambda, intercept, cv_rmse and train_r2 must be finite "
                               "numbers",
                               where);
            goto out;
        }
        if ((rc = pfs__cfg_read_floats(t, "coef", where, p->t[k].coef, p->n_features, p->n_features,
                                       "per feature", NULL, path, diag)))
            goto out;
    }
out:
    config_destroy(&cfg);
    if (rc)
        pfs_predictor_free(p);
    else
        *out = p;
    return rc;
}

/* ----- accessors ----- */

enum pfs_predict_method
pfs_predictor_method(const struct pfs_predictor *p)
{
    return p->method;
}

size_t
pfs_predictor_n_features(const struct pfs_predictor *p)
{
    return p->n_features;
}

const char *
pfs_predictor_feature(const struct pfs_predictor *p, size_t i)
{
    return i < p->n_features ? features[p->feat[i]].info.name : NULL;
}

size_t
pfs_predictor_n_targets(const struct pfs_predictor *p)
{
    return p->n_targets;
}

const char *
pfs_predictor_target(const struct pfs_predictor *p, size_t k)
{
    return k < p->n_targets ? p->t[k].name : NULL;
}

double
pfs_predictor_coef(const struct pfs_predictor *p, size_t k, size_t i)
{
    return k < p->n_targets && i < p->n_features ? p->t[k].coef[i] : (double)NAN;
}

double
pfs_predictor_lambda(const struct pfs_predictor *p, size_t k)
{
    return k < p->n_targets ? p->t[k].lambda : (double)NAN;
}

double
pfs_predictor_cv_rmse(const struct pfs_predictor *p, size_t k)
{
    return k < p->n_targets ? p->t[k].cv_rmse : (double)NAN;
}

void
pfs_predictor_free(struct pfs_predictor *p)
{
    free(p);
}
