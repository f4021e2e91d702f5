/*
 * sim/conformance.c - the rules every allocation policy keeps, checked on any policy: the
 * built-in ones (tests/test_policies.c), a plugin's, an external program's (pfisim
 * policy-check; docs/policies.md).
 *
 * Seeded random instances as tests/test_policies.c makes them: 1 to 60 jobs of 1 to 8 H100
 * or H200 GPUs on the DVFS model's curves (job parameters drawn), every tier, telemetry at
 * the uncapped point with the measured PFI given (what a PFI-aware policy goes by), budgets
 * from the sum of the minimum caps to 10% above the sum of the maxima; then, at every fifth
 * instance, a budget below the minimum caps. The policy is run as the simulator runs it
 * (its view without the truth unless it is built in) but its answer is not refused: each
 * rule is checked here, so that a report says which it breaks and where first.
 */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_JOBS 60

enum { LIMITS, PAUSING, BUDGET, INFEASIBLE, DETERMINISM, MEMORYLESS, ERRORS, N_CHECKS };

static const char *const check_name[N_CHECKS] = {
    "limits", "pausing", "budget", "infeasible", "determinism", "memoryless", "errors"};
static const char *const check_what[N_CHECKS] = {
    "every cap within the job's GPU limits, pauses in [0, 1], GPUs at most the job's",
    "no pause and no job on fewer GPUs unless the policy says it may pause",
    "what the decisions commit within the budget (1e-9 relative)",
    "below the minimum caps: refused (infeasible, with a message) or met by pausing",
    "the same view twice, the same decisions bit for bit",
    "if it says it is memoryless: the same decisions whatever the time-varying fields say",
    "no failure but a refusal (PFS_EINVAL with a message)"};

struct instance {
    size_t n;
    struct pfs_alloc_job jobs[MAX_JOBS];
    struct pfs_telemetry tel[MAX_JOBS];
    struct pfs_curve *curves[MAX_JOBS];
    struct pfs_truth *truth;
    double min_total_w, max_total_w;
};

static void
instance_free(struct instance *in)
{
    for (size_t i = 0; i < in->n; i++)
        pfs_curve_free(in->curves[i]);
    pfs_truth_free(in->truth);
    in->truth = NULL;
    in->n = 0;
}

int
pfs__policy_instance_job(gsl_rng *r, const struct pfs_gpu *const *gpus, size_t i, bool single_gpu,
                         bool sampled, double idle_w, struct pfs_alloc_job *j,
                         struct pfs_telemetry *tl, struct pfs_curve **curve, struct pfs_diag *diag)
{
    const struct pfs_gpu *gp = gpus[gsl_rng_uniform_int(r, 2)];
    struct pfs_dvfs_job dj = {.t_max = 1000 * (0.5 + gsl_rng_uniform(r)),
                              .alpha = gsl_rng_uniform(r),
                              .activity = 0.2 + 1.0 * gsl_rng_uniform(r),
                              .mem_w = 100 * gsl_rng_uniform(r),
                              .cap_fill = 0.9 + 0.1 * gsl_rng_uniform(r)};
    struct pfs_curve_point top;
    int rc;

    memset(j, 0, sizeof *j);
    snprintf(j->job_id, sizeof j->job_id, "j%zu", i);
    j->n_gpus = single_gpu ? 1 : 1 << gsl_rng_uniform_int(r, 4);
    j->min_w = gp->min_limit_w;
    j->max_w = gp->max_limit_w;
    j->ref_w = gp->default_limit_w;
    j->idle_w = isnan(idle_w) ? gp->idle_w : idle_w;
    j->tier = (int)gsl_rng_uniform_int(r, PFS_N_TIERS);
    j->max_loss = pfs_tier_max_loss(j->tier);
    j->deadline_s = NAN;
    j->remaining_tokens = NAN;
    j->limit_until_s = INFINITY;
    if (!sampled) {
        rc = pfs_curve_model_new(gp, &dj, curve, diag);
    } else { /* measured-like: 11 caps, 1% noise, made non-decreasing (not concave) */
        double cap[11], tp[11], pw[11];

        for (int k = 0; k < 11; k++) {
            struct pfs_dvfs_point pt;

            cap[k] = 200 + 50.0 * k;
            pfs_dvfs_eval(gp, &dj, cap[k], &pt);
            tp[k] = pt.throughput * (1 + gsl_ran_gaussian(r, 0.01));
            pw[k] = fmin(pt.power_w, cap[k]);
            if (k > 0 && tp[k] < tp[k - 1])
                tp[k] = tp[k - 1];
        }
        rc = pfs_curve_sampled_new(cap, tp, pw, 11, curve, diag);
    }
    if (rc)
        return rc;
    /* What a telemetry-aware policy goes by: the draw and throughput at the reference
     * limit, and the PFI an operator's sweep would measure. */
    memset(tl, 0, sizeof *tl);
    pfs__strlcpy(tl->job_id, j->job_id, sizeof tl->job_id);
    pfs__strlcpy(tl->gpu, gp->name, sizeof tl->gpu);
    tl->n_gpus = j->n_gpus;
    pfs_curve_eval(*curve, j->ref_w, &top);
    tl->power_w = top.power_w;
    tl->power_frac = top.power_w / j->ref_w;
    tl->sm_clock_mhz = tl->sm_active = tl->tensor_active = tl->dram_active = NAN;
    tl->nvlink_gbps = tl->net_gbps = NAN;
    tl->tokens_per_s = top.throughput;
    for (size_t k = 0; k < PFS_N_CUTS; k++)
        pfs_pfi(*curve, j->ref_w, pfs_cut(k), &tl->pfi_given[k]);
    return 0;
}

static int
instance_make(gsl_rng *r, struct instance *in, struct pfs_diag *diag)
{
    struct pfs_gpu g[2];
    const struct pfs_gpu *gp[2] = {&g[0], &g[1]};
    int rc;

    memset(in, 0, sizeof *in);
    if ((rc = pfs_gpu_find("h200-sxm", &g[0], diag)) ||
        (rc = pfs_gpu_find("h100-sxm", &g[1], diag)))
        return rc;
    in->n = 1 + gsl_rng_uniform_int(r, MAX_JOBS);
    for (size_t i = 0; i < in->n; i++) {
        if ((rc = pfs__policy_instance_job(r, gp, i, false, false, NAN, &in->jobs[i], &in->tel[i],
                                           &in->curves[i], diag)) != 0) {
            in->n = i;
            return rc;
        }
        in->min_total_w += in->jobs[i].n_gpus * in->jobs[i].min_w;
        in->max_total_w += in->jobs[i].n_gpus * in->jobs[i].max_w;
    }
    return pfs_truth_new((const struct pfs_curve *const *)in->curves, in->jobs, in->n, &in->truth,
                         diag);
}

static void failed(struct pfs_conformance *c, int k, size_t inst, const char *fmt, ...)
    PFS__PRINTF(4, 5);

static void
failed(struct pfs_conformance *c, int k, size_t inst, const char *fmt, ...)
{
    struct pfs_conformance_check *ck = &c->checks[k];

    if (ck->failed++ == 0) {
        va_list ap;
        int n = snprintf(ck->first, sizeof ck->first, "instance %zu: ", inst);

        va_start(ap, fmt);
        vsnprintf(ck->first + n, sizeof ck->first - (size_t)n, fmt, ap);
        va_end(ap);
    }
}

/* The rules on one answer (rc, d) to view v. */
static void
judge(const struct pfs_policy_ops *ops, const struct pfs_alloc_view *v, int rc,
      const struct pfs_alloc_decision *d, const struct pfs_diag *diag, bool feasible, size_t inst,
      struct pfs_conformance *c)
{
    double used = 0;
    bool paused = false;

    c->checks[ERRORS].tried++;
    if (rc != 0 && rc != PFS_EINVAL) {
        failed(c, ERRORS, inst, "failed with %s: %s", pfs_strerror(rc), diag->message);
        return;
    }
    if (rc == PFS_EINVAL) {
        if (!diag->message[0])
            failed(c, ERRORS, inst, "refused with no message");
        if (feasible)
            c->refused++;
        return;
    }
    c->checks[LIMITS].tried++;
    c->checks[PAUSING].tried++;
    c->checks[BUDGET].tried++;
    for (size_t i = 0; i < v->n_jobs; i++) {
        const struct pfs_alloc_job *j = &v->jobs[i];

        if (!(d[i].cap_w >= j->min_w * (1 - 1e-12) && d[i].cap_w <= j->max_w * (1 + 1e-12)) ||
            !(d[i].pause_frac >= 0 && d[i].pause_frac <= 1) || d[i].n_gpus < 0 ||
            d[i].n_gpus > j->n_gpus) {
            failed(c, LIMITS, inst, "job %s: cap %g W (limits [%g, %g] W), pause %g, GPUs %d of %d",
                   j->job_id, d[i].cap_w, j->min_w, j->max_w, d[i].pause_frac, d[i].n_gpus,
                   j->n_gpus);
            return;
        }
        if (!paused && !ops->may_pause &&
            (d[i].pause_frac > 0 || pfs_alloc_active_gpus(j, &d[i]) < j->n_gpus)) {
            failed(c, PAUSING, inst, "job %s paused %g (or resized) by a policy that may not pause",
                   j->job_id, d[i].pause_frac);
            paused = true; /* an instance counts once */
        }
        used += pfs_alloc_power_w(j, &d[i]);
    }
    if (used > v->budget_w * (1 + 1e-9))
        failed(c, BUDGET, inst, "committed %.3f W of a %.3f W budget", used, v->budget_w);
}

int
pfs_policy_conformance(const struct pfs_policy_ops *ops, unsigned long seed, size_t n_instances,
                       struct pfs_conformance *c, struct pfs_diag *diag)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    struct instance *in = calloc(1, sizeof *in);
    struct pfs_alloc_decision *d = calloc(3 * MAX_JOBS, sizeof *d), *again, *moved_d;
    struct pfs_alloc_job *moved = calloc(MAX_JOBS, sizeof *moved);
    int rc = 0;

    memset(c, 0, sizeof *c);
    c->n = N_CHECKS;
    for (int k = 0; k < N_CHECKS; k++) {
        c->checks[k].name = check_name[k];
        c->checks[k].what = check_what[k];
    }
    if (!r || !in || !d || !moved) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    again = d + MAX_JOBS;
    moved_d = d + 2 * MAX_JOBS;
    gsl_rng_set(r, seed);
    for (size_t inst = 0; inst < n_instances && rc == 0; inst++) {
        bool below = inst % 5 == 4; /* a budget no cap can meet */
        struct pfs_alloc_view v;
        struct pfs_diag d1 = {0}, d2 = {0};
        int rc1, rc2;

        if ((rc = instance_make(r, in, diag)) != 0)
            break;
        v = (struct pfs_alloc_view){0};
        v.n_jobs = in->n;
        v.jobs = in->jobs;
        v.telemetry = in->tel;
        v.truth = in->truth;
        v.budget_w = below ? in->min_total_w * (0.3 + 0.6 * gsl_rng_uniform(r))
                           : in->min_total_w +
                                 gsl_rng_uniform(r) * (1.1 * in->max_total_w - in->min_total_w);
        c->instances++;
        rc1 = pfs__policy_run(ops, &v, d, &d1);
        judge(ops, &v, rc1, d, &d1, !below, inst, c);
        if (below) {
            c->checks[INFEASIBLE].tried++;
            if (rc1 == 0 && !ops->may_pause)
                failed(c, INFEASIBLE, inst,
                       "answered a %.1f W budget below the %.1f W of minimum caps, and it "
                       "may not pause",
                       v.budget_w, in->min_total_w);
        }
        /* Determinism: the same view again. */
        c->checks[DETERMINISM].tried++;
        rc2 = pfs__policy_run(ops, &v, again, &d2);
        if (rc2 != rc1 || (rc1 == 0 && memcmp(again, d, in->n * sizeof *d) != 0))
            failed(c, DETERMINISM, inst, "decided differently when asked the same again");
        /* Memoryless: what the time-varying fields say must not matter. */
        if (ops->memoryless) {
            struct pfs_diag d3 = {0};
            struct pfs_alloc_view mv = v;
            int rc3;

            memcpy(moved, in->jobs, in->n * sizeof *moved);
            for (size_t i = 0; i < in->n; i++) {
                moved[i].remaining_tokens = 1e6 * gsl_rng_uniform(r);
                moved[i].now_s = 86400 * gsl_rng_uniform(r);
                moved[i].limit_until_s = moved[i].now_s + 3600 * gsl_rng_uniform(r);
                moved[i].restart_s = 600 * gsl_rng_uniform(r);
                moved[i].deadline_s = moved[i].now_s + 7200 * gsl_rng_uniform(r);
            }
            mv.jobs = moved;
            c->checks[MEMORYLESS].tried++;
            rc3 = pfs__policy_run(ops, &mv, moved_d, &d3);
            if (rc3 != rc1 || (rc1 == 0 && memcmp(moved_d, d, in->n * sizeof *d) != 0))
                failed(c, MEMORYLESS, inst,
                       "says it is memoryless, but decided differently when only the "
                       "time-varying fields changed");
        }
        instance_free(in);
    }
    for (int k = 0; k < N_CHECKS; k++)
        c->n_failed += c->checks[k].failed > 0;
out:
    if (in)
        instance_free(in);
    free(in);
    free(d);
    free(moved);
    gsl_rng_free(r);
    return rc;
}
