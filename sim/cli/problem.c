/*
 * sim/cli/problem.c - one allocation problem as alloc and the source study pose it: the jobs
 * of a curves file (or a synthetic corpus) running at once, what each policy may know of
 * them, and each policy's answer scored on the true curves the same way.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"

void
pfs_cli_problem_free(struct pfs_cli_problem *p)
{
    for (size_t i = 0; p->curves && i < p->n; i++)
        pfs_curve_free(p->curves[i]);
    free(p->curves);
    free(p->jobs);
    free(p->tel);
    pfs_truth_free(p->truth);
    pfs_predictor_free(p->predictor);
    pfs_jobset_free(p->js);
    pfs_curveset_free(p->cs);
}

/* What an operator knows of a job that comes with no telemetry: its draw and throughput at
 * full power, and the PFI its measured curve gives. */
static void
telemetry_from_curve(const struct pfs_job_curve *jc, const struct pfs_alloc_job *j,
                     const struct pfs_curve *c, struct pfs_telemetry *t)
{
    struct pfs_curve_point top;
    double lo, hi;

    memset(t, 0, sizeof *t);
    pfs__strlcpy(t->job_id, jc->job_id, sizeof t->job_id);
    pfs__strlcpy(t->gpu, jc->gpu, sizeof t->gpu);
    t->n_gpus = jc->n_gpus;
    t->power_w = t->power_frac = t->sm_clock_mhz = t->sm_active = t->tensor_active = NAN;
    t->dram_active = t->nvlink_gbps = t->net_gbps = NAN;
    pfs_curve_domain(c, &lo, &hi);
    if (pfs_curve_eval(c, fmin(j->ref_w, hi), &top) == 0) {
        t->power_w = top.power_w;
        t->power_frac = top.power_w / j->ref_w;
        t->tokens_per_s = top.throughput;
    }
    for (size_t k = 0; k < PFS_N_CUTS; k++)
        if (pfs_pfi(c, j->ref_w, pfs_cut(k), &t->pfi_given[k]) != 0)
            t->pfi_given[k] = NAN;
}

/* A synth:GPU[:SEED] source: the synthetic corpus made on that GPU's profile (drawn, when
 * given and of that name). Returns 0, or an error naming the source. */
static int
synth_source(struct pfs_cli_problem *p, const char *src, const struct pfs_gpu *drawn,
             const struct pfs_synth_options *so, struct pfs_diag *d)
{
    struct pfs_synth_options o;
    struct pfs_gpu g;
    char name[32];
    unsigned long seed;
    int rc;

    if (!pfs_synth_spec(src, name, sizeof name, &seed))
        return pfs__diag_set(d, PFS_EINVAL, NULL, 0, 0, NULL,
                             "expected synth:GPU or synth:GPU:SEED, got '%s'", src);
    if (drawn && strcmp(drawn->name, name) == 0)
        g = *drawn;
    else if ((rc = pfs_gpu_find(name, &g, d)) != 0)
        return rc;
    if (so)
        o = *so;
    else
        pfs_synth_defaults(&o, seed);
    o.seed = seed;
    o.gpu = &g;
    return pfs_synth(&o, &p->js, &p->cs, d);
}

/* What alloc holds per job once the curves are read: the policies' tables (the truth's, the
 * predicted curves', the water-filling's), measured as the peak resident memory of
 * `alloc --given-pfi` over 100,000 jobs of 4 points less the same over 1,000 (610 MB;
 * docs/reliability.md, "Memory"). The reader itself holds about 1.1 times the file. */
#define ALLOC_BYTES_PER_JOB 6144.0

/* The memory this process may still take, bytes: the least of the system's available
 * memory (/proc/meminfo's MemAvailable) and the address-space and data limits; HUGE_VAL
 * where none is known. */
static double
memory_room(void)
{
    double room = HUGE_VAL;
    struct rlimit rl;
    FILE *fp = fopen("/proc/meminfo", "r");
    char line[128];

    while (fp && fgets(line, sizeof line, fp)) {
        char *end;
        double kb;

        if (strncmp(line, "MemAvailable:", 13) == 0 && (kb = strtod(line + 13, &end)) > 0 &&
            end != line + 13)
            room = kb * 1024;
    }
    if (fp)
        fclose(fp);
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        room = fmin(room, (double)rl.rlim_cur);
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        room = fmin(room, (double)rl.rlim_cur);
    return room;
}

/* 0 where n jobs' tables fit in the memory left; PFS_ENOMEM naming the file otherwise, before
 * any is built (a 1 GB curves file was killed by the kernel at 22 GB, saying nothing). */
static int
room_for(const char *path, size_t n, struct pfs_diag *d)
{
    double need = (double)n * ALLOC_BYTES_PER_JOB, room = memory_room();

    if (need <= room)
        return 0;
    return pfs__diag_set(d, PFS_ENOMEM, path, 0, 0, NULL,
                         "%zu jobs: alloc's tables need about %.2g GB (%.0f KB a job), and "
                         "%.2g GB is available to this process",
                         n, need / 1e9, ALLOC_BYTES_PER_JOB / 1024, room / 1e9);
}

int
pfs_cli_problem_read(struct pfs_cli_problem *p, const char *curves_path, const char *jobs_path,
                     const struct pfs_gpu *drawn, const struct pfs_synth_options *so,
                     struct pfs_diag *d)
{
    char guess[600];
    int rc;

    if (strncmp(curves_path, "synth:", 6) == 0)
        return synth_source(p, curves_path, drawn, so, d);
    if ((rc = pfs_curveset_read(curves_path, &p->cs, d)) != 0 ||
        (rc = room_for(curves_path, p->cs->n_jobs, d)) != 0)
        return rc;
    if (!jobs_path)
        jobs_path = pfs_cli_jobs_beside(curves_path, guess, sizeof guess);
    if (jobs_path && (rc = pfs_jobset_read(jobs_path, &p->js, d)) != 0)
        return rc;
    return 0;
}

int
pfs_cli_problem_build(struct pfs_cli_problem *p, const char *curves_path, const char *jobs_path,
                      const char *model_path, bool given_pfi, int tier, const struct pfs_gpu *drawn,
                      const struct pfs_synth_options *so, struct pfs_diag *d)
{
    int rc = pfs_cli_problem_read(p, curves_path, jobs_path, drawn, so, d);

    return rc ? rc : pfs_cli_problem_setup(p, curves_path, model_path, given_pfi, tier, drawn, d);
}

int
pfs_cli_problem_setup(struct pfs_cli_problem *p, const char *curves_path, const char *model_path,
                      bool given_pfi, int tier, const struct pfs_gpu *drawn, struct pfs_diag *d)
{
    int rc;

    p->n = p->cs->n_jobs;
    p->jobs = calloc(p->n + 1, sizeof *p->jobs);
    p->tel = calloc(p->n + 1, sizeof *p->tel);
    p->curves = calloc(p->n + 1, sizeof *p->curves);
    if (!p->jobs || !p->tel || !p->curves)
        return pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    p->unit = p->cs->jobs[0].unit;
    for (size_t i = 0; i < p->n; i++) {
        const struct pfs_job_curve *jc = &p->cs->jobs[i];
        struct pfs_alloc_job *j = &p->jobs[i];
        const struct pfs_corpus_job *cj = p->js ? pfs_jobset_find(p->js, jc->job_id) : NULL;
        struct pfs_gpu g;

        if (strcmp(jc->unit, p->unit) != 0)
            return pfs__diag_set(d, PFS_EINVAL, curves_path, jc->line, 0, "unit",
                                 "job '%s' counts %s, job '%s' %s: a total needs one unit",
                                 jc->job_id, jc->unit, p->cs->jobs[0].job_id, p->unit);
        if (drawn && strcmp(drawn->name, jc->gpu) == 0)
            g = *drawn;
        else if ((rc = pfs_gpu_find(jc->gpu, &g, d)) != 0) {
            pfs__strlcpy(d->file, curves_path, sizeof d->file);
            d->line = jc->line;
            return rc;
        }
        pfs__strlcpy(j->job_id, jc->job_id, sizeof j->job_id);
        j->n_gpus = jc->n_gpus;
        j->min_w = fmax(g.min_limit_w, jc->cap_w[0]);
        j->max_w = fmin(g.max_limit_w, jc->cap_w[jc->n_points - 1]);
        j->ref_w = fmin(g.default_limit_w, j->max_w);
        j->idle_w = g.idle_w;
        j->tier = tier;
        j->max_loss = pfs_tier_max_loss(tier);
        j->deadline_s = NAN;
        j->remaining_tokens = NAN;
        if (!(j->max_w >= j->min_w))
            return pfs__diag_set(d, PFS_EINVAL, curves_path, jc->line, 0, NULL,
                                 "job '%s': measured caps [%g, %g] W miss the %s limits",
                                 jc->job_id, jc->cap_w[0], jc->cap_w[jc->n_points - 1], g.name);
        /* A curve to divide power over (issue 17: one point failed with neither file nor job
         * named; no throughput printed -nan). */
        if (jc->n_points < 2)
            return pfs__diag_set(d, PFS_EINVAL, curves_path, jc->line, 0, "cap_w",
                                 "job '%s': 1 measured point; a curve needs at least 2 caps",
                                 jc->job_id);
        if (!(jc->throughput[jc->n_points - 1] > 0))
            return pfs__diag_set(d, PFS_EINVAL, curves_path, jc->line, 0, "throughput",
                                 "job '%s': no throughput at its highest cap (%g W)", jc->job_id,
                                 jc->cap_w[jc->n_points - 1]);
        if ((rc = pfs_curve_sampled_new(jc->cap_w, jc->throughput, jc->power_w, jc->n_points,
                                        &p->curves[i], d)) != 0)
            return rc;
        /* Observed telemetry where there is some; the curve's top point otherwise. The
         * measured PFI is given to the policies only where no telemetry exists (real
         * curves) or when asked (--given-pfi). */
        telemetry_from_curve(jc, j, p->curves[i], &p->tel[i]);
        if (cj) {
            struct pfs_telemetry measured = p->tel[i];

            pfs_telemetry_of(cj, &p->tel[i]);
            if (given_pfi)
                memcpy(p->tel[i].pfi_given, measured.pfi_given, sizeof measured.pfi_given);
        }
        p->ref_total_w += j->n_gpus * j->ref_w;
        p->min_total_w += j->n_gpus * j->min_w;
        p->n_gpus += j->n_gpus;
    }
    if (!given_pfi && (model_path || p->js)) {
        const char *mp =
            model_path ? model_path : pfs_cli_shipped("traces/h200-h100/predictor.cfg");

        if ((rc = pfs_predictor_load(mp, &p->predictor, d)) != 0)
            return rc;
    }
    if ((rc = pfs_truth_new((const struct pfs_curve *const *)p->curves, p->jobs, p->n, &p->truth,
                            d)) != 0)
        return rc;
    for (size_t i = 0; i < p->n; i++)
        p->full_total_w += p->jobs[i].n_gpus * pfs_truth_power_w(p->truth, i, p->jobs[i].ref_w);
    return 0;
}

void
pfs_cli_outcome_run(const struct pfs_cli_problem *p, const struct pfs_alloc_view *v,
                    struct pfs_cli_outcome *o)
{
    o->d = calloc(p->n + 1, sizeof *o->d);
    o->total = o->power_w = 0;
    o->min_rel = HUGE_VAL;
    if (!o->d) {
        o->rc = pfs__diag_set(&o->diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        return;
    }
    /* A budget that covers what every job draws uncapped binds nothing: each job keeps its
     * reference limit and no policy is asked, as in the simulator (issue 17: pfi and sla
     * capped jobs anyway and lost throughput against equal). */
    if (p->tree) /* (a node's limit may bind where the budget does not) */
        o->rc = pfs__policy_allocate_tree(o->ops, v, p->tree, o->d, &o->diag);
    else if (v->budget_w >= p->full_total_w)
        for (size_t i = 0; i < p->n; i++)
            o->d[i] = (struct pfs_alloc_decision){.cap_w = p->jobs[i].ref_w};
    else
        o->rc = pfs_policy_allocate(o->ops, v, o->d, &o->diag);
    for (size_t i = 0; o->rc == 0 && i < p->n; i++) {
        struct pfs_alloc_decision full = {.cap_w = p->jobs[i].ref_w};
        double t = pfs_truth_throughput(p->truth, i, &o->d[i]);
        double t0 = pfs_truth_throughput(p->truth, i, &full);

        o->total += t;
        o->power_w += p->jobs[i].n_gpus *
                      (o->d[i].pause_frac * p->jobs[i].idle_w +
                       (1 - o->d[i].pause_frac) * pfs_truth_power_w(p->truth, i, o->d[i].cap_w));
        if (t0 > 0)
            o->min_rel = fmin(o->min_rel, t / t0);
    }
}
