/*
 * models/fit.c - fitting the DVFS model to measured power-cap curves.
 *
 * Job fit. The four job parameters of models/dvfs.c are fitted by nonlinear least squares
 * (GSL multifit_nlinear, trust region with Levenberg-Marquardt steps, finite-difference
 * Jacobian) to both measured series at once:
 *
 *   r_i       = (T_model(cap_i) - T_i) / t0           relative throughput, t0 = T at top cap
 *   r_{n + i} = (P_model(cap_i) - P_i) / P_default    power as a fraction of the limit
 *
 * Bounds keep the parameters physical without a constrained solver: the solver works on
 * unbounded theta and the model sees
 *
 *   t_max = t0 exp(theta0),  alpha = s(theta1),  activity = A_MAX s(theta2),
 *   mem_w = (max limit - idle) s(theta3),
 *   cap_fill = FILL_MIN + (1 - FILL_MIN) s(theta4),  s the logistic function,
 *
 * so alpha stays in (0, 1), activity in (0, PFS_DVFS_ACTIVITY_MAX), the clock-independent
 * draw between zero and the whole budget, and the mean draw under a binding cap between
 * 70% and 100% of the cap (the A40 ResNet-50 of Zeus averages 88% of a 200 W cap). The model has
 * kinks (where the cap crosses the uncapped draw, and at the voltage knee), and least squares on it
 * has local minima, so the fit runs from a small fixed grid of starts and keeps the best:
 * deterministic, and the same answer for the same data.
 *
 * Profile fit. The voltage shape (v_min, f_knee) is a property of the GPU, not of a job;
 * where several jobs were measured on one GPU it is fitted by a grid search over the two
 * profile parameters, re-fitting every job at each grid point and summing the squared
 * residuals. The job and profile parameters are otherwise degenerate (dyn_w only appears
 * times activity, idle_w only plus mem_w), so dyn_w and idle_w stay as the profile says.
 */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <string.h>

#include "internal.h"

#define N_PARAMS 5

struct fit_data {
    const struct pfs_gpu *g;
    const struct pfs_job_curve *jc;
    double t0; /* throughput normaliser */
};

static double
logistic(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

static double
logit(double p)
{
    return log(p / (1.0 - p));
}

static void
theta_to_job(const struct fit_data *d, const double *theta, struct pfs_dvfs_job *j)
{
    j->t_max = d->t0 * exp(theta[0]);
    j->alpha = logistic(theta[1]);
    j->activity = PFS_DVFS_ACTIVITY_MAX * logistic(theta[2]);
    j->mem_w = (d->g->max_limit_w - d->g->idle_w) * logistic(theta[3]);
    j->cap_fill = PFS_DVFS_FILL_MIN + (1.0 - PFS_DVFS_FILL_MIN) * logistic(theta[4]);
}

static int
residuals(const gsl_vector *theta, void *params, gsl_vector *f)
{
    const struct fit_data *d = params;
    const struct pfs_job_curve *jc = d->jc;
    double th[N_PARAMS];
    struct pfs_dvfs_job j;

    for (size_t i = 0; i < N_PARAMS; i++)
        th[i] = gsl_vector_get(theta, i);
    theta_to_job(d, th, &j);
    for (size_t i = 0; i < jc->n_points; i++) {
        struct pfs_dvfs_point pt;

        pfs_dvfs_eval(d->g, &j, jc->cap_w[i], &pt);
        gsl_vector_set(f, i, (pt.throughput - jc->throughput[i]) / d->t0);
        gsl_vector_set(f, jc->n_points + i, (pt.power_w - jc->power_w[i]) / d->g->default_limit_w);
    }
    return GSL_SUCCESS;
}

/* One solve from theta_start. Returns 0 with the solution, its cost (half the sum of
 * squared residuals) and iterations, or PFS_ENUMERIC. */
static int
fit_from(struct fit_data *d, const double *theta_start, double *theta_out, double *cost,
         size_t *n_iter)
{
    const size_t n = 2 * d->jc->n_points;
    gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_fdf fdf;
    gsl_multifit_nlinear_workspace *w;
    double start[N_PARAMS];
    gsl_vector_view x0;
    int info, status, rc = PFS_ENUMERIC;

    memcpy(start, theta_start, sizeof start);
    memset(&fdf, 0, sizeof fdf);
    fdf.f = residuals;
    fdf.n = n;
    fdf.p = N_PARAMS;
    fdf.params = d;
    w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, n, N_PARAMS);
    if (!w)
        return PFS_ENOMEM;
    x0 = gsl_vector_view_array(start, N_PARAMS);
    if (gsl_multifit_nlinear_init(&x0.vector, &fdf, w) == GSL_SUCCESS) {
        /* A stop for lack of progress or at the iteration limit still leaves the best
         * point found, which is what we want at a boundary of the logistic box. */
        status = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-12, NULL, NULL, &info, w);
        (void)status;
        {
            const gsl_vector *x = gsl_multifit_nlinear_position(w);
            const gsl_vector *f = gsl_multifit_nlinear_residual(w);
            double norm = gsl_blas_dnrm2(f);
            bool finite = isfinite(norm);

            for (size_t i = 0; i < N_PARAMS; i++) {
                theta_out[i] = gsl_vector_get(x, i);
                finite = finite && isfinite(theta_out[i]);
            }
            if (finite) {
                *cost = 0.5 * norm * norm;
                *n_iter = gsl_multifit_nlinear_niter(w);
                rc = 0;
            }
        }
    }
    gsl_multifit_nlinear_free(w);
    return rc;
}

/* Fits one job on g; fills out (parameters, RMSEs) and *cost. */
static int
fit_job(const struct pfs_gpu *g, const struct pfs_job_curve *jc, struct pfs_fit *out,
        double *cost_out)
{
    static const double alpha0[] = {0.2, 0.5, 0.8, 0.95};
    static const double mem_frac0[] = {0.05, 0.3};
    static const double fill0[] = {0.9, 0.995};
    const size_t top = jc->n_points - 1;
    struct fit_data d = {g, jc, jc->throughput[top]};
    double best[N_PARAMS], best_cost = HUGE_VAL;
    size_t best_iter = 0;
    int rc = PFS_ENUMERIC;

    for (size_t a = 0; a < sizeof alpha0 / sizeof alpha0[0]; a++) {
        for (size_t m = 0; m < 2 * sizeof mem_frac0 / sizeof mem_frac0[0]; m++) {
            /* Start where the top measured point says: its draw split into a
             * clock-independent part and dynamic power at f_max. */
            double budget = g->max_limit_w - g->idle_w;
            double above_idle = fmax(jc->power_w[top] - g->idle_w, 0.02 * budget);
            double mem = mem_frac0[m / 2] * above_idle;
            double act = (above_idle - mem) / g->dyn_w;
            double th[N_PARAMS], sol[N_PARAMS], cost;
            size_t it;

            act = fmin(fmax(act, 0.02), 0.98 * PFS_DVFS_ACTIVITY_MAX);
            th[0] = 0.0;
            th[1] = logit(alpha0[a]);
            th[2] = logit(act / PFS_DVFS_ACTIVITY_MAX);
            th[3] = logit(fmin(fmax(mem / budget, 1e-3), 0.999));
            th[4] = logit((fill0[m % 2] - PFS_DVFS_FILL_MIN) / (1.0 - PFS_DVFS_FILL_MIN));
            if (fit_from(&d, th, sol, &cost, &it) == 0 && cost < best_cost) {
                best_cost = cost;
                memcpy(best, sol, sizeof best);
                best_iter = it;
                rc = 0;
            }
        }
    }
    if (rc)
        return rc;

    memset(out, 0, sizeof *out);
    theta_to_job(&d, best, &out->job);
    out->t0 = d.t0;
    out->n_points = jc->n_points;
    out->n_iter = best_iter;
    {
        double st = 0, sp = 0;
        struct pfs_dvfs_point pt;

        for (size_t i = 0; i < jc->n_points; i++) {
            pfs_dvfs_eval(g, &out->job, jc->cap_w[i], &pt);
            st += pow((pt.throughput - jc->throughput[i]) / d.t0, 2);
            sp += pow((pt.power_w - jc->power_w[i]) / g->default_limit_w, 2);
        }
        out->rmse_throughput = sqrt(st / (double)jc->n_points);
        out->rmse_power = sqrt(sp / (double)jc->n_points);
    }
    out->uncapped_w = pfs_dvfs_power_w(g, &out->job, g->f_max_mhz);
    *cost_out = best_cost;
    return 0;
}

static int
check_job(const struct pfs_job_curve *jc, struct pfs_diag *diag)
{
    if (jc->n_points < PFS_FIT_MIN_POINTS)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, jc->line, 0, "job_id",
                             "job '%s': %zu measured point%s, a fit needs at least %d", jc->job_id,
                             jc->n_points, jc->n_points == 1 ? "" : "s", PFS_FIT_MIN_POINTS);
    if (!(jc->throughput[jc->n_points - 1] > 0))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, jc->line, 0, "throughput",
                             "job '%s': zero throughput at the highest cap, nothing to fit",
                             jc->job_id);
    return 0;
}

int
pfs_fit_job(const struct pfs_gpu *g, const struct pfs_job_curve *jc, struct pfs_fit *out,
            struct pfs_diag *diag)
{
    double cost;
    int rc = check_job(jc, diag);

    if (rc)
        return rc;
    rc = fit_job(g, jc, out, &cost);
    if (rc)
        return pfs__diag_set(diag, rc, NULL, jc->line, 0, NULL,
                             "job '%s': the fit did not converge from any start", jc->job_id);
    return 0;
}

int
pfs_fit_profile(struct pfs_gpu *g, const struct pfs_job_curve *const *jobs, size_t n_jobs,
                struct pfs_profile_fit *out, struct pfs_diag *diag)
{
    /* v_min 0.50..1.00 and knee 0.30..0.80 of f_max, steps of 0.025: 21 x 21 points. */
    const int steps = 21;
    double best = HUGE_VAL;
    struct pfs_gpu trial = *g;
    int rc;

    if (n_jobs == 0)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, NULL,
                             "a profile fit needs at least one job");
    for (size_t i = 0; i < n_jobs; i++)
        if ((rc = check_job(jobs[i], diag)) != 0)
            return rc;
    for (int a = 0; a < steps; a++) {
        for (int b = 0; b < steps; b++) {
            double sum = 0, st = 0, sp = 0;
            size_t n_pts = 0;

            trial.v_min = 0.50 + 0.025 * a;
            trial.f_knee_mhz = (0.30 + 0.025 * b) * g->f_max_mhz;
            if (!(trial.f_knee_mhz > trial.f_min_mhz))
                continue;
            for (size_t i = 0; i < n_jobs; i++) {
                struct pfs_fit f;
                double cost;

                if (fit_job(&trial, jobs[i], &f, &cost) != 0) {
                    sum = HUGE_VAL;
                    break;
                }
                sum += cost;
                st += f.rmse_throughput * f.rmse_throughput * (double)f.n_points;
                sp += f.rmse_power * f.rmse_power * (double)f.n_points;
                n_pts += f.n_points;
            }
            if (sum < best) {
                best = sum;
                out->v_min = trial.v_min;
                out->f_knee_mhz = trial.f_knee_mhz;
                out->rmse_throughput = sqrt(st / (double)n_pts);
                out->rmse_power = sqrt(sp / (double)n_pts);
            }
        }
    }
    if (!isfinite(best))
        return pfs__diag_set(diag, PFS_ENUMERIC, NULL, 0, 0, NULL,
                             "profile fit: no grid point fitted every job");
    g->v_min = out->v_min;
    g->f_knee_mhz = out->f_knee_mhz;
    return 0;
}

/* ----- shared GPU physics, two parameters per job (issue 15) ----- */

/* The shared fit: the GPU's voltage shape (v_min, f_knee), one clock-independent draw and one
 * cap fill for every job of the GPU, and per job only alpha and activity; each job's
 * throughput scale t_max is not a parameter but the least-squares scale of its shape
 * (variable projection: t_max = sum r T / sum r^2 over its points, r the model's throughput
 * at t_max = 1), its unit of work. Parameters: 4 shared + 2 per job, on the logistic box of
 * the single-job fit. Only points with cap >= min_cap_w count (0: all). */
#define N_SHARED 4

struct shared_data {
    const struct pfs_gpu *g;
    const struct pfs_job_curve *const *jobs;
    size_t n_jobs, n_res;
    size_t *row;  /* job k's residuals are rows row[k] .. row[k + 1] - 1 (shared_solve's) */
    bool central; /* shared_jacobian by central differences (shared_se's), else forward */
    double min_cap_w;
    bool errors; /* the standard errors worked out (the Jacobian's factors) */
    /* pfs_fit_shared_job: the shared parameters given (g's voltage shape, mem_w, fill), not
     * fitted; theta holds the job parameters only; prior (or NULL): one more residual,
     * sigma (alpha - mean) / sd, after the job's own */
    bool fixed;
    double mem_w, fill;
    const struct pfs_alpha_prior *prior;
};

static size_t
job_base(const struct shared_data *d)
{
    return d->fixed ? 0 : N_SHARED;
}

static void
theta_to_shared(const struct shared_data *d, const double *th, struct pfs_gpu *g, double *mem_w,
                double *fill)
{
    *g = *d->g;
    if (d->fixed) {
        *mem_w = d->mem_w;
        *fill = d->fill;
        return;
    }
    g->v_min = 0.4 + 0.6 * logistic(th[0]);
    g->f_knee_mhz = d->g->f_min_mhz + (d->g->f_max_mhz - d->g->f_min_mhz) * logistic(th[1]);
    *mem_w = (d->g->max_limit_w - d->g->idle_w) * logistic(th[2]);
    *fill = PFS_DVFS_FILL_MIN + (1.0 - PFS_DVFS_FILL_MIN) * logistic(th[3]);
}

static bool
shared_uses(const struct shared_data *d, double cap_w)
{
    return cap_w >= d->min_cap_w * (1 - 1e-12);
}

/* Job k's parameters from theta, its scale projected onto its points. */
static void
shared_job(const struct shared_data *d, const double *th, const struct pfs_gpu *g, double mem_w,
           double fill, size_t k, struct pfs_dvfs_job *j)
{
    const struct pfs_job_curve *jc = d->jobs[k];
    const double *tj = th + job_base(d) + 2 * k;
    double num = 0, den = 0;

    *j = (struct pfs_dvfs_job){.t_max = 1,
                               .alpha = logistic(tj[0]),
                               .activity = PFS_DVFS_ACTIVITY_MAX * logistic(tj[1]),
                               .mem_w = mem_w,
                               .cap_fill = fill};
    for (size_t i = 0; i < jc->n_points; i++) {
        struct pfs_dvfs_point pt;

        if (!shared_uses(d, jc->cap_w[i]))
            continue;
        pfs_dvfs_eval(g, j, jc->cap_w[i], &pt);
        num += pt.throughput * jc->throughput[i];
        den += pt.throughput * pt.throughput;
    }
    j->t_max = den > 0 ? num / den : 1;
}

static int
shared_residuals(const gsl_vector *theta, void *params, gsl_vector *f)
{
    const struct shared_data *d = params;
    const double *th = gsl_vector_const_ptr(theta, 0);
    double mem_w, fill;
    struct pfs_gpu g;
    size_t r = 0;

    theta_to_shared(d, th, &g, &mem_w, &fill);
    for (size_t k = 0; k < d->n_jobs; k++) {
        const struct pfs_job_curve *jc = d->jobs[k];
        double t0 = jc->throughput[jc->n_points - 1];
        struct pfs_dvfs_job j;

        shared_job(d, th, &g, mem_w, fill, k, &j);
        for (size_t i = 0; i < jc->n_points; i++) {
            struct pfs_dvfs_point pt;

            if (!shared_uses(d, jc->cap_w[i]))
                continue;
            pfs_dvfs_eval(&g, &j, jc->cap_w[i], &pt);
            gsl_vector_set(f, r++, (pt.throughput - jc->throughput[i]) / t0);
            gsl_vector_set(f, r++, (pt.power_w - jc->power_w[i]) / g.default_limit_w);
        }
        if (d->prior) /* fixed mode: one job */
            gsl_vector_set(f, r++, d->prior->sigma * (j.alpha - d->prior->mean) / d->prior->sd);
    }
    return GSL_SUCCESS;
}

/* The Jacobian by forward differences, as GSL's own (step h |x_j|, or h where x_j = 0, h the
 * solver's h_df; (f(x + step) - f(x)) * (1 / step)) but with the columns grouped: job k's
 * parameters move only job k's residuals, so one evaluation with every job's alpha stepped
 * gives all the alpha columns, and one more all the activity columns. 4 + 2 + 1 evaluations
 * in place of p + 1, and every entry is bit for bit the one GSL's column-by-column loop makes
 * (the rows of other jobs come out exactly 0 in both). With d->central, by central
 * differences (step eps^(1/3) |x_j|; (f(x + step) - f(x - step)) * (1 / (2 step))), 12
 * evaluations. */
static int
shared_jacobian(const gsl_vector *x, void *params, gsl_matrix *J)
{
    const struct shared_data *d = params;
    const double h = d->central ? GSL_ROOT3_DBL_EPSILON : GSL_SQRT_DBL_EPSILON;
    const size_t *row = d->row;
    size_t p = x->size, base = job_base(d);
    gsl_vector *xs = gsl_vector_alloc(p), *f0 = gsl_vector_alloc(d->n_res),
               *f1 = gsl_vector_alloc(d->n_res);
    int rc = GSL_ENOMEM;

    if (!xs || !f0 || !f1)
        goto out;
    if (!d->central) {
        gsl_vector_memcpy(xs, x);
        shared_residuals(xs, params, f0);
    }
    gsl_matrix_set_zero(J);
    for (size_t g = 0; g < base + 2; g++) { /* the shared columns, then alpha, then activity */
        for (int side = d->central ? -1 : 1; side <= 1; side += 2) {
            gsl_vector_memcpy(xs, x);
            for (size_t j = g < base ? g : base + (g - base); j < p; j += g < base ? p : 2) {
                double xj = gsl_vector_get(x, j), step = h * fabs(xj);

                gsl_vector_set(xs, j, xj + side * (step > 0 ? step : h));
            }
            shared_residuals(xs, params, side < 0 ? f0 : f1);
        }
        for (size_t j = g < base ? g : base + (g - base); j < p; j += g < base ? p : 2) {
            double xj = gsl_vector_get(x, j), step = h * fabs(xj), inv;
            size_t lo = 0, hi = d->n_res;

            inv = 1.0 / ((d->central ? 2 : 1) * (step > 0 ? step : h));
            if (j >= base) { /* a job's parameter: only its own rows */
                lo = row[(j - base) / 2];
                hi = row[(j - base) / 2 + 1];
            }
            for (size_t i = lo; i < hi; i++)
                gsl_matrix_set(J, i, j, (gsl_vector_get(f1, i) - gsl_vector_get(f0, i)) * inv);
        }
    }
    rc = GSL_SUCCESS;
out:
    gsl_vector_free(xs);
    gsl_vector_free(f0);
    gsl_vector_free(f1);
    return rc;
}

/* The trust region's linear solver for the shared fit, in place of GSL's QR of the whole
 * Jacobian (94% of `fit --shared` on the corpus's 189 jobs: O(n p^2) a step, n residuals and
 * p = 4 + 2 x jobs parameters). A job's two parameters move only its own residuals, so J'J
 * is an arrow: the shared block C, per job a 2 x 2 block A_k and its coupling B_k to the
 * shared parameters, zero between jobs. The step solves (J'J + mu D'D) x = -J'f, as GSL's
 * Cholesky solver does (`gsl_multifit_nlinear_solver_cholesky`), by eliminating the jobs'
 * blocks: S = C + mu D_s^2 - sum B_k A_k'^-1 B_k' (the Schur complement), S x_s = r_s - sum
 * B_k A_k'^-1 r_k, x_k = A_k'^-1 (r_k - B_k' x_s), with r = -J'f and A_k' = A_k + mu D_k^2.
 * Each block is factored by GSL's modified Cholesky, which, like its Cholesky solver's,
 * perturbs a block that rounding left indefinite. O(n + jobs) a step. */
struct arrow {
    size_t base, n_jobs;
    const size_t *row;
    double C[N_SHARED * N_SHARED]; /* J_s'J_s, row-major */
    double S[N_SHARED * N_SHARED]; /* the Schur complement's LDL' (mcholesky) */
    double *B;                     /* per job, base x 2: J_s'J_k */
    double *A;                     /* per job, 2 x 2: J_k'J_k */
    double *Ai;                    /* per job, 2 x 2: A_k'^-1 */
    double *r;                     /* per job, 2: A_k'^-1 r_k (solve's) */
    gsl_permutation *perm_s, *perm_2;
};

static void arrow_free(void *vstate);

static void *
arrow_alloc(const size_t n, const size_t p)
{
    struct arrow *a = calloc(1, sizeof *a);
    size_t jobs = p / 2 + 1; /* (at most; base and the jobs are known at init) */

    (void)n;
    if (!a)
        return NULL;
    a->B = malloc(jobs * 2 * N_SHARED * sizeof *a->B);
    a->A = malloc(jobs * 4 * sizeof *a->A);
    a->Ai = malloc(jobs * 4 * sizeof *a->Ai);
    a->r = malloc(jobs * 2 * sizeof *a->r);
    a->perm_s = gsl_permutation_alloc(N_SHARED);
    a->perm_2 = gsl_permutation_alloc(2);
    if (!a->B || !a->A || !a->Ai || !a->r || !a->perm_s || !a->perm_2) {
        arrow_free(a);
        return NULL;
    }
    return a;
}

static void
arrow_free(void *vstate)
{
    struct arrow *a = vstate;

    if (!a)
        return;
    free(a->B);
    free(a->A);
    free(a->Ai);
    free(a->r);
    if (a->perm_s)
        gsl_permutation_free(a->perm_s);
    if (a->perm_2)
        gsl_permutation_free(a->perm_2);
    free(a);
}

/* J'J's blocks, once per Jacobian. */
static int
arrow_init(const void *vtrust_state, void *vstate)
{
    const gsl_multifit_nlinear_trust_state *ts = vtrust_state;
    const struct shared_data *d = ts->fdf->params;
    struct arrow *a = vstate;
    size_t base = job_base(d);

    a->base = base;
    a->n_jobs = d->n_jobs;
    a->row = d->row;
    memset(a->C, 0, sizeof a->C);
    for (size_t k = 0; k < d->n_jobs; k++) {
        double *B = a->B + 2 * N_SHARED * k, *A = a->A + 4 * k;

        memset(B, 0, 2 * N_SHARED * sizeof *B);
        memset(A, 0, 4 * sizeof *A);
        for (size_t i = d->row[k]; i < d->row[k + 1]; i++) {
            const double *js = gsl_matrix_const_ptr(ts->J, i, 0), *jk = js + base + 2 * k;

            for (size_t u = 0; u < base; u++) {
                for (size_t v = u; v < base; v++)
                    a->C[u * N_SHARED + v] += js[u] * js[v];
                B[2 * u] += js[u] * jk[0];
                B[2 * u + 1] += js[u] * jk[1];
            }
            A[0] += jk[0] * jk[0];
            A[1] += jk[0] * jk[1];
            A[3] += jk[1] * jk[1];
        }
    }
    return GSL_SUCCESS;
}

/* The blocks with mu D'D added, factored: each job's inverse and the Schur complement. */
static int
arrow_presolve(const double mu, const void *vtrust_state, void *vstate)
{
    const gsl_multifit_nlinear_trust_state *ts = vtrust_state;
    struct arrow *a = vstate;
    const size_t base = a->base;
    double M[4];
    gsl_matrix_view m2 = gsl_matrix_view_array(M, 2, 2),
                    s = gsl_matrix_view_array(a->S, base ? base : 1, base ? base : 1);
    int rc;

    for (size_t u = 0; u < base; u++) {
        double du = gsl_vector_get(ts->diag, u);

        for (size_t v = 0; v <= u; v++) /* (the lower triangle, as mcholesky reads it) */
            a->S[u * base + v] = a->C[v * N_SHARED + u] + (u == v ? mu * du * du : 0);
    }
    for (size_t k = 0; k < a->n_jobs; k++) {
        const double *A = a->A + 4 * k, *B = a->B + 2 * N_SHARED * k;
        double *Ai = a->Ai + 4 * k, d0 = gsl_vector_get(ts->diag, base + 2 * k),
               d1 = gsl_vector_get(ts->diag, base + 2 * k + 1);
        gsl_matrix_view inv = gsl_matrix_view_array(Ai, 2, 2);

        M[0] = A[0] + mu * d0 * d0;
        M[1] = M[2] = A[1];
        M[3] = A[3] + mu * d1 * d1;
        if ((rc = gsl_linalg_mcholesky_decomp(&m2.matrix, a->perm_2, NULL)) != 0 ||
            (rc = gsl_linalg_mcholesky_invert(&m2.matrix, a->perm_2, &inv.matrix)) != 0)
            return rc;
        for (size_t u = 0; u < base; u++) { /* S -= B_k Ai_k B_k' (lower) */
            double w0 = B[2 * u] * Ai[0] + B[2 * u + 1] * Ai[2],
                   w1 = B[2 * u] * Ai[1] + B[2 * u + 1] * Ai[3];

            for (size_t v = 0; v <= u; v++)
                a->S[u * base + v] -= w0 * B[2 * v] + w1 * B[2 * v + 1];
        }
    }
    if (base > 0 && (rc = gsl_linalg_mcholesky_decomp(&s.matrix, a->perm_s, NULL)) != 0)
        return rc;
    return GSL_SUCCESS;
}

/* x = -(J'J + mu D'D)^-1 J'f, by the blocks. */
static int
arrow_solve(const gsl_vector *f, gsl_vector *x, const void *vtrust_state, void *vstate)
{
    const gsl_multifit_nlinear_trust_state *ts = vtrust_state;
    struct arrow *a = vstate;
    const size_t base = a->base;
    double rs[N_SHARED] = {0}, xs[N_SHARED] = {0};
    gsl_matrix_view s = gsl_matrix_view_array(a->S, base ? base : 1, base ? base : 1);
    gsl_vector_view vr = gsl_vector_view_array(rs, base ? base : 1),
                    vx = gsl_vector_view_array(xs, base ? base : 1);
    int rc;

    for (size_t k = 0; k < a->n_jobs; k++) {
        const double *B = a->B + 2 * N_SHARED * k, *Ai = a->Ai + 4 * k;
        double rk[2] = {0, 0}, *yk = a->r + 2 * k;

        for (size_t i = a->row[k]; i < a->row[k + 1]; i++) {
            const double *js = gsl_matrix_const_ptr(ts->J, i, 0), *jk = js + base + 2 * k;
            double fi = gsl_vector_get(f, i);

            for (size_t u = 0; u < base; u++)
                rs[u] -= js[u] * fi;
            rk[0] -= jk[0] * fi;
            rk[1] -= jk[1] * fi;
        }
        yk[0] = Ai[0] * rk[0] + Ai[1] * rk[1]; /* A_k'^-1 r_k */
        yk[1] = Ai[2] * rk[0] + Ai[3] * rk[1];
        gsl_vector_set(x, base + 2 * k, rk[0]); /* (r_k, kept for the back-substitution) */
        gsl_vector_set(x, base + 2 * k + 1, rk[1]);
        for (size_t u = 0; u < base; u++)
            rs[u] -= B[2 * u] * yk[0] + B[2 * u + 1] * yk[1];
    }
    if (base > 0 &&
        (rc = gsl_linalg_mcholesky_solve(&s.matrix, a->perm_s, &vr.vector, &vx.vector)) != 0)
        return rc;
    for (size_t u = 0; u < base; u++)
        gsl_vector_set(x, u, xs[u]);
    for (size_t k = 0; k < a->n_jobs; k++) {
        const double *B = a->B + 2 * N_SHARED * k, *Ai = a->Ai + 4 * k;
        double r0 = gsl_vector_get(x, base + 2 * k), r1 = gsl_vector_get(x, base + 2 * k + 1);

        for (size_t u = 0; u < base; u++) {
            r0 -= B[2 * u] * xs[u];
            r1 -= B[2 * u + 1] * xs[u];
        }
        gsl_vector_set(x, base + 2 * k, Ai[0] * r0 + Ai[1] * r1);
        gsl_vector_set(x, base + 2 * k + 1, Ai[2] * r0 + Ai[3] * r1);
    }
    return GSL_SUCCESS;
}

/* (GSL asks it only through gsl_multifit_nlinear_rcond, which the fit does not call) */
static int
arrow_rcond(double *rcond, void *vstate)
{
    (void)vstate;
    *rcond = NAN;
    return GSL_EUNIMPL;
}

static const gsl_multifit_nlinear_solver arrow_solver = {
    "arrow", arrow_alloc, arrow_init, arrow_presolve, arrow_solve, arrow_rcond, arrow_free};

int
pfs__fit_arrow_step(const double *J, const double *f, const double *diag, double mu, size_t base,
                    size_t n_jobs, const size_t *row, double *x)
{
    size_t n = row[n_jobs], p = base + 2 * n_jobs;
    struct pfs_job_curve none = {0};
    const struct pfs_job_curve *jobs[1] = {&none};
    struct shared_data d = {.jobs = jobs, .n_jobs = n_jobs, .n_res = n, .fixed = base == 0};
    gsl_multifit_nlinear_fdf fdf = {.n = n, .p = p, .params = &d};
    gsl_matrix_const_view vj = gsl_matrix_const_view_array(J, n, p);
    gsl_vector_const_view vf = gsl_vector_const_view_array(f, n),
                          vd = gsl_vector_const_view_array(diag, p);
    gsl_vector_view vx = gsl_vector_view_array(x, p);
    gsl_multifit_nlinear_trust_state ts = {
        .f = &vf.vector, .J = &vj.matrix, .diag = &vd.vector, .mu = &mu, .fdf = &fdf};
    void *a;
    int rc;

    if (base != 0 && base != N_SHARED)
        return GSL_EINVAL;
    if (!(d.row = malloc((n_jobs + 1) * sizeof *d.row)))
        return GSL_ENOMEM;
    memcpy(d.row, row, (n_jobs + 1) * sizeof *d.row);
    if (!(a = arrow_alloc(n, p))) {
        free(d.row);
        return GSL_ENOMEM;
    }
    if ((rc = arrow_init(&ts, a)) == 0 && (rc = arrow_presolve(mu, &ts, a)) == 0)
        rc = arrow_solve(&vf.vector, &vx.vector, &ts, a);
    arrow_free(a);
    free(d.row);
    return rc;
}

/* More's scaling, GSL's "more" (D_j the largest |J_j| so far, 1 for a column of zeros), with
 * the column norms summed in one pass along J's rows: GSL's takes dnrm2 down each column,
 * a stride of p apart (a third of the shared fit's time once the arrow solver took the QR's
 * place). */
static int
more_rows_update(const gsl_matrix *J, gsl_vector *diag)
{
    size_t p = J->size2;
    double *ss = calloc(p, sizeof *ss);

    if (!ss)
        return GSL_ENOMEM;
    for (size_t i = 0; i < J->size1; i++) {
        const double *r = gsl_matrix_const_ptr(J, i, 0);

        for (size_t j = 0; j < p; j++)
            ss[j] += r[j] * r[j];
    }
    for (size_t j = 0; j < p; j++) {
        double norm = ss[j] > 0 ? sqrt(ss[j]) : 1.0;

        gsl_vector_set(diag, j, fmax(gsl_vector_get(diag, j), norm));
    }
    free(ss);
    return GSL_SUCCESS;
}

static int
more_rows_init(const gsl_matrix *J, gsl_vector *diag)
{
    gsl_vector_set_zero(diag);
    return more_rows_update(J, diag);
}

static const gsl_multifit_nlinear_scale more_rows = {"more", more_rows_init, more_rows_update};

/* Standard errors at the solution th (pfs_shared_se): the Jacobian of the residuals by central
 * differences (the solver's forward ones err by some sqrt(eps) of an entry, which (J'J)^-1
 * multiplies by its condition: on the corpus, errors of activity moved by up to 46% between
 * two solutions equal to 5 digits; docs/benchmarks.md, "The arrow solver"), cov = sigma^2
 * (J'J)^-1 with sigma^2 = SSE / dof, each parameter's variance carried through its logistic
 * map, d/dx logistic(x) = l (1 - l); an error wider than the parameter's whole range is
 * reported as infinite (not identified). The projected scales are exact (variable
 * projection), so the reduced J'J is the Schur complement of the full one and its inverse the
 * right marginal covariance. */
static int
shared_se(struct shared_data *d, double *th, size_t p, struct pfs_fit *out,
          struct pfs_shared_se *se)
{
    gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_fdf fdf = {
        .f = shared_residuals, .df = shared_jacobian, .n = d->n_res, .p = p, .params = d};
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, d->n_res, p);
    gsl_matrix *cov = gsl_matrix_alloc(p, p);
    gsl_vector_view x = gsl_vector_view_array(th, p);
    size_t dof = d->n_res > p + d->n_jobs ? d->n_res - p - d->n_jobs : 0;
    size_t base = job_base(d);
    double s2 = NAN, v[N_SHARED] = {NAN, NAN, NAN, NAN};
    int rc = 0;

    if (!w || !cov) {
        rc = PFS_ENOMEM;
        goto out;
    }
    d->central = true;
    if (dof > 0 && gsl_multifit_nlinear_init(&x.vector, &fdf, w) == GSL_SUCCESS) {
        double norm = gsl_blas_dnrm2(gsl_multifit_nlinear_residual(w));

        if (gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 1e-12, cov) == GSL_SUCCESS)
            s2 = norm * norm / (double)dof;
    }
    for (size_t i = 0; i < p; i++) {
        double l = logistic(th[i]), c = isfinite(s2) ? gsl_matrix_get(cov, i, i) : 0;
        double sd = c > 0 ? sqrt(s2 * c) * l * (1 - l) : (double)NAN;

        if (sd > 1) /* wider than the whole bounded range: the data do not identify it */
            sd = INFINITY;
        if (i < base)
            v[i] = sd;
        else if ((i - base) % 2 == 0)
            out[(i - base) / 2].se_alpha = sd;
        else
            out[(i - base) / 2].se_activity = PFS_DVFS_ACTIVITY_MAX * sd;
    }
    if (se)
        *se = (struct pfs_shared_se){.v_min = 0.6 * v[0],
                                     .f_knee_mhz = (d->g->f_max_mhz - d->g->f_min_mhz) * v[1],
                                     .mem_w = (d->g->max_limit_w - d->g->idle_w) * v[2],
                                     .cap_fill = (1.0 - PFS_DVFS_FILL_MIN) * v[3],
                                     .sigma = sqrt(s2),
                                     .dof = dof};
out:
    d->central = false;
    gsl_matrix_free(cov);
    gsl_multifit_nlinear_free(w);
    return rc;
}

/* The starting point of start s (0-7): the shared parameters from a 2 x 2 x 2 grid of v_min,
 * knee and clock-independent draw (fitted mode), the jobs' alpha from a grid of 4 (given
 * mode) or 0.7, and each job's activity from its draw at the highest cap. */
static void
shared_start(const struct shared_data *d, int s, double *start)
{
    static const double vmin0[] = {0.6, 0.85}, knee0[] = {0.3, 0.6}, mem0[] = {0.05, 0.25};
    static const double alpha0[] = {0.2, 0.5, 0.8, 0.95};
    const struct pfs_gpu *g = d->g;
    double budget = g->max_limit_w - g->idle_w;
    double mem = d->fixed ? d->mem_w : mem0[(s >> 2) & 1] * budget;
    size_t base = job_base(d);

    if (!d->fixed) {
        start[0] = logit((vmin0[s & 1] - 0.4) / 0.6);
        start[1] = logit((knee0[(s >> 1) & 1] * g->f_max_mhz - g->f_min_mhz) /
                         (g->f_max_mhz - g->f_min_mhz));
        start[2] = logit(mem0[(s >> 2) & 1]);
        start[3] = logit((0.97 - PFS_DVFS_FILL_MIN) / (1.0 - PFS_DVFS_FILL_MIN));
    }
    for (size_t k = 0; k < d->n_jobs; k++) {
        const struct pfs_job_curve *jc = d->jobs[k];
        double above = fmax(jc->power_w[jc->n_points - 1] - g->idle_w - mem, 0.05 * budget);

        start[base + 2 * k] = logit(d->fixed ? alpha0[s & 3] : 0.7);
        start[base + 2 * k + 1] =
            logit(fmin(fmax(above / g->dyn_w, 0.02), 0.98 * PFS_DVFS_ACTIVITY_MAX) /
                  PFS_DVFS_ACTIVITY_MAX);
    }
}

/* Checks the jobs, solves from the 8 starts (4 with the shared parameters given) and writes the
 * best fit to *g_out, out[] and *se: the work of pfs_fit_shared and pfs_fit_shared_job. */
static int
shared_solve(struct shared_data *d, struct pfs_gpu *g_out, struct pfs_fit *out,
             struct pfs_shared_se *se, struct pfs_diag *diag)
{
    size_t p = job_base(d) + 2 * d->n_jobs;
    double *start = malloc(p * sizeof *start), *best = malloc(p * sizeof *best);
    double best_cost = HUGE_VAL;
    bool qr;
    int rc = 0;

    if (!start || !best) {
        free(start);
        free(best);
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    d->n_res = 0;
    if (!(d->row = malloc((d->n_jobs + 1) * sizeof *d->row))) {
        free(start);
        free(best);
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    d->row[0] = 0;
    for (size_t k = 0; k < d->n_jobs && rc == 0; k++) {
        const struct pfs_job_curve *jc = d->jobs[k];
        size_t used = 0;

        for (size_t i = 0; i < jc->n_points; i++)
            used += shared_uses(d, jc->cap_w[i]);
        if (used < 2)
            rc = pfs__diag_set(diag, PFS_EINVAL, NULL, jc->line, 0, "job_id",
                               "job '%s': %zu points at or above %.0f W, the shared fit needs 2",
                               jc->job_id, used, d->min_cap_w);
        if (!(jc->throughput[jc->n_points - 1] > 0))
            rc = pfs__diag_set(diag, PFS_EINVAL, NULL, jc->line, 0, "throughput",
                               "job '%s': zero throughput at the highest cap", jc->job_id);
        d->n_res += 2 * used + (d->prior != NULL);
        d->row[k + 1] = d->n_res;
    }
    if (rc == 0 && d->n_res < p)
        rc = pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, NULL,
                           "the shared fit has %zu residuals for %zu parameters", d->n_res, p);
    /* the test switch PFISIM_FIT_QR=1: GSL's own QR and scaling, the straightforward solver
     * the arrow solver is checked against (tests/test_model.c) */
    qr = getenv("PFISIM_FIT_QR") && strcmp(getenv("PFISIM_FIT_QR"), "1") == 0;
    for (int s = 0; rc == 0 && s < (d->fixed ? 4 : 8); s++) {
        gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
        gsl_multifit_nlinear_fdf fdf = {
            .f = shared_residuals, .df = shared_jacobian, .n = d->n_res, .p = p, .params = d};
        gsl_multifit_nlinear_workspace *w;

        if (!qr) {
            params.solver = &arrow_solver;
            params.scale = &more_rows;
        }
        w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, d->n_res, p);
        gsl_vector_view x0;
        int info;

        if (!w) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            break;
        }
        shared_start(d, s, start);
        x0 = gsl_vector_view_array(start, p);
        if (gsl_multifit_nlinear_init(&x0.vector, &fdf, w) == GSL_SUCCESS) {
            const gsl_vector *x, *f;
            double norm;

            gsl_multifit_nlinear_driver(300, 1e-10, 1e-10, 1e-12, NULL, NULL, &info, w);
            x = gsl_multifit_nlinear_position(w);
            f = gsl_multifit_nlinear_residual(w);
            norm = gsl_blas_dnrm2(f);
            if (isfinite(norm) && 0.5 * norm * norm < best_cost) {
                best_cost = 0.5 * norm * norm;
                for (size_t i = 0; i < p; i++)
                    best[i] = gsl_vector_get(x, i);
            }
        }
        gsl_multifit_nlinear_free(w);
    }
    if (rc == 0 && !isfinite(best_cost))
        rc = pfs__diag_set(diag, PFS_ENUMERIC, NULL, 0, 0, NULL,
                           "the shared fit did not converge from any start");
    if (rc == 0) {
        double mem_w, fill;

        theta_to_shared(d, best, g_out, &mem_w, &fill);
        for (size_t k = 0; k < d->n_jobs; k++) {
            const struct pfs_job_curve *jc = d->jobs[k];
            double t0 = jc->throughput[jc->n_points - 1], st = 0, sp = 0;
            size_t n = 0;

            memset(&out[k], 0, sizeof out[k]);
            shared_job(d, best, g_out, mem_w, fill, k, &out[k].job);
            for (size_t i = 0; i < jc->n_points; i++) {
                struct pfs_dvfs_point pt;

                if (!shared_uses(d, jc->cap_w[i]))
                    continue;
                pfs_dvfs_eval(g_out, &out[k].job, jc->cap_w[i], &pt);
                st += pow((pt.throughput - jc->throughput[i]) / t0, 2);
                sp += pow((pt.power_w - jc->power_w[i]) / g_out->default_limit_w, 2);
                n++;
            }
            out[k].t0 = t0;
            out[k].n_points = n;
            out[k].rmse_throughput = sqrt(st / (double)n);
            out[k].rmse_power = sqrt(sp / (double)n);
            out[k].uncapped_w = pfs_dvfs_power_w(g_out, &out[k].job, g_out->f_max_mhz);
        }
        /* The errors need the Jacobian's factors: 5-9% of fit --loo's time, which asks
         * for none of the other jobs' */
        if (!d->errors)
            for (size_t k = 0; k < d->n_jobs; k++)
                out[k].se_alpha = out[k].se_activity = NAN;
        else if (shared_se(d, best, p, out, se) != 0)
            rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    free(start);
    free(best);
    free(d->row);
    d->row = NULL;
    return rc;
}

int
pfs_fit_shared(const struct pfs_gpu *g, const struct pfs_job_curve *const *jobs, size_t n_jobs,
               double min_cap_w, struct pfs_gpu *g_out, struct pfs_fit *out,
               struct pfs_shared_se *se, struct pfs_diag *diag)
{
    struct shared_data d = {
        .g = g, .jobs = jobs, .n_jobs = n_jobs, .min_cap_w = min_cap_w, .errors = se != NULL};

    return shared_solve(&d, g_out, out, se, diag);
}

int
pfs_fit_shared_job(const struct pfs_gpu *g_shared, double mem_w, double cap_fill,
                   const struct pfs_alpha_prior *prior, const struct pfs_job_curve *jc,
                   double min_cap_w, struct pfs_fit *out, struct pfs_diag *diag)
{
    const struct pfs_job_curve *jobs[1] = {jc};
    struct shared_data d = {.g = g_shared,
                            .jobs = jobs,
                            .n_jobs = 1,
                            .min_cap_w = min_cap_w,
                            .errors = true, /* (the job's own, printed by fit --loo) */
                            .fixed = true,
                            .mem_w = mem_w,
                            .fill = cap_fill,
                            .prior = prior};

    if (prior && !(isfinite(prior->mean) && prior->sd > 0 && isfinite(prior->sd) &&
                   prior->sigma > 0 && isfinite(prior->sigma)))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, NULL,
                             "alpha prior: mean %g, sd %g, sigma %g: need finite, sd and sigma > 0",
                             prior->mean, prior->sd, prior->sigma);
    struct pfs_gpu ignored;

    return shared_solve(&d, &ignored, out, NULL, diag);
}

int
pfs_alpha_prior_from(const struct pfs_fit *fits, size_t n, double sigma,
                     struct pfs_alpha_prior *out)
{
    double sum = 0, ss = 0;

    if (n < 2 || !(sigma > 0) || !isfinite(sigma))
        return PFS_EINVAL;
    for (size_t i = 0; i < n; i++)
        sum += fits[i].job.alpha;
    for (size_t i = 0; i < n; i++)
        ss += pow(fits[i].job.alpha - sum / (double)n, 2);
    *out = (struct pfs_alpha_prior){
        .mean = sum / (double)n, .sd = sqrt(ss / (double)(n - 1)), .sigma = sigma};
    return out->sd > 0 ? 0 : PFS_EINVAL;
}
