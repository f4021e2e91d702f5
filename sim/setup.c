/*
 * sim/setup.c - a run's inputs assembled once for every policy and seed: the facility's pools, the
 * corpus curves tabulated per pool, each job placed on its curve and pool, the arrival order, the
 * GPUs' variability (pfs_sim_inputs_new).
 *
 * It owns struct pfs_sim_inputs and writes nothing else; the runs read the inputs, never
 * change them (but for the shared, locked caches behind pointers: the run without DR events,
 * the queue's index). It may call the models, the traces and the scenario's pools; never the
 * event loop.
 * The engine's room, its files and their layers: docs/simulator.md, "Where each concern lives".
 */
#include "engine.h"

/* A scenario's pools and GPU profiles as a run reads them: here, in the engine below the
 * scenario reader, which the engine must not call (docs/simulator.md, "Layers"). */
size_t
pfs_scenario_pools(const struct pfs_scenario *sc, struct pfs_pool *out)
{
    if (sc->n_pools > 0) {
        memcpy(out, sc->pools, sc->n_pools * sizeof *out);
        return sc->n_pools;
    }
    memset(out, 0, sizeof *out);
    pfs__strlcpy(out->name, sc->gpu, sizeof out->name);
    pfs__strlcpy(out->gpu, sc->gpu, sizeof out->gpu);
    out->gpus = sc->gpus;
    out->gpus_per_node = sc->gpus_per_node;
    out->node_other_w = sc->node_other_w;
    return 1;
}

int
pfs_scenario_gpu(const struct pfs_scenario *sc, const char *name, struct pfs_gpu *out,
                 struct pfs_diag *diag)
{
    for (size_t k = 0; sc && k < sc->n_gpu_drawn && k < PFS_MAX_POOLS; k++)
        if (strcmp(sc->gpu_drawn[k].name, name) == 0) {
            *out = sc->gpu_drawn[k];
            return 0;
        }
    return pfs_gpu_find(name, out, diag);
}

/* ----- inputs ----- */

int
pfs__setup_tabulate(struct corpus_curve *cc, const struct pfs_job_curve *jc,
                    const struct pfs_gpu *g, struct pfs_diag *diag)
{
    struct pfs_curve *c = NULL;
    struct pfs_alloc_job aj = {.min_w = g->min_limit_w,
                               .max_w = g->max_limit_w,
                               .idle_w = g->idle_w,
                               .n_gpus = jc->n_gpus};
    const struct pfs_curve *one[1];
    struct pfs_truth *t = NULL;
    int rc;

    pfs__strlcpy(aj.job_id, jc->job_id, sizeof aj.job_id);
    if ((rc =
             pfs_curve_sampled_new(jc->cap_w, jc->throughput, jc->power_w, jc->n_points, &c, diag)))
        return rc;
    one[0] = c;
    rc = pfs_truth_new(one, &aj, 1, &t, diag);
    if (rc == 0) {
        cc->env = t->hull[0];
        cc->power = t->power[0];
    }
    pfs_truth_free(t);
    pfs_curve_free(c);
    cc->n_gpus = jc->n_gpus;
    return rc;
}

/* Whether corpus jobs a and b are twins (one's twin_id names the other). */
static bool
twins(const struct pfs_jobset *js, const char *a, const char *b)
{
    const struct pfs_corpus_job *x = js ? pfs_jobset_find(js, a) : NULL;
    const struct pfs_corpus_job *y = js ? pfs_jobset_find(js, b) : NULL;

    return (x && strcmp(x->twin_id, b) == 0) || (y && strcmp(y->twin_id, a) == 0);
}

/* The facility: its pools, their profiles and nodes; a limit below its idle draw stops the
 * scenario before anything is simulated. */
double
pfs_scenario_cap_w(const struct pfs_scenario *sc)
{
    double cap = sc->base_cap_w > 0 ? sc->base_cap_w : HUGE_VAL;

    if (sc->tree.n > 0 && sc->tree.node[0].limit_w > 0)
        cap = fmin(cap, sc->pue * sc->tree.node[0].limit_w);
    return isfinite(cap) ? cap : 0;
}

static int
facility_new(struct pfs_sim_inputs *in, const struct pfs_scenario *sc, struct pfs_diag *diag)
{
    double idle_fac_w = 0;
    int rc;

    in->n_pools = pfs_scenario_pools(sc, in->pools);
    for (size_t p = 0; p < in->n_pools; p++) {
        const struct pfs_pool *pl = &in->pools[p];

        if ((rc = pfs_scenario_gpu(sc, pl->gpu, &in->gpu[p], diag)))
            return rc;
        in->nodes[p] = (pl->gpus + pl->gpus_per_node - 1) / pl->gpus_per_node;
        in->other_w += in->nodes[p] * pl->node_other_w;
        idle_fac_w += in->nodes[p] * pl->node_other_w + pl->gpus * in->gpu[p].idle_w;
    }
    idle_fac_w *= sc->pue;
    if (sc->base_cap_w > 0 && sc->base_cap_w < idle_fac_w)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "facility.cap_w",
                             "scenario.facility.cap_w: %.0f W is below the facility's idle draw "
                             "of %.0f W",
                             sc->base_cap_w, idle_fac_w);
    if (pfs_scenario_cap_w(sc) > 0 && pfs_scenario_cap_w(sc) < idle_fac_w) /* (the root's) */
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "tree",
                             "scenario.facility.tree: the root's limit of %.0f W (IT power) is "
                             "below the facility's idle draw of %.0f W",
                             sc->tree.node[0].limit_w, idle_fac_w / sc->pue);
    for (size_t k = 0; k < sc->n_dr; k++)
        if (sc->dr[k].target_w > 0 && sc->dr[k].target_w < idle_fac_w)
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "dr_events",
                                 "scenario.dr_events.[%zu]: the target of %.0f W is below the "
                                 "facility's idle draw of %.0f W",
                                 k, sc->dr[k].target_w, idle_fac_w);
    return 0;
}

/* What an operator knows of curve i: the corpus job's telemetry (and the PFI the predictor
 * gives for it), or, without a jobs.csv row, the top of the curve and its sweep's PFI. */
static int
observe_curve(struct pfs_sim_inputs *in, size_t i, const struct pfs_gpu *g, struct pfs_diag *diag)
{
    const struct pfs_job_curve *jc = &in->cs->jobs[i];
    const struct pfs_corpus_job *cj = in->js ? pfs_jobset_find(in->js, jc->job_id) : NULL;
    struct pfs_telemetry *t = &in->curves[i].tel;
    struct pfs_curve *c = NULL;
    int rc;

    if (cj) {
        pfs_telemetry_of(cj, t);
        /* A job's telemetry does not change while it runs, so neither does its predicted
         * PFI: predict once per curve here, not at every control step, and hand the
         * policies the result as the PFI known for the job. */
        if (in->pred) {
            double pfi[PFS_N_CUTS];
            struct pfs_diag quiet = {0};

            if (pfs_predictor_pfi(in->pred, t, pfi, &quiet) == 0)
                memcpy(t->pfi_given, pfi, sizeof pfi);
        }
        return 0;
    }
    memset(t, 0, sizeof *t);
    pfs__strlcpy(t->job_id, jc->job_id, sizeof t->job_id);
    pfs__strlcpy(t->gpu, jc->gpu, sizeof t->gpu);
    t->n_gpus = jc->n_gpus;
    t->power_w = jc->power_w[jc->n_points - 1];
    t->power_frac = t->power_w / g->default_limit_w;
    t->tokens_per_s = jc->throughput[jc->n_points - 1];
    t->sm_clock_mhz = t->sm_active = t->tensor_active = t->dram_active = NAN;
    t->nvlink_gbps = t->net_gbps = NAN;
    if ((rc =
             pfs_curve_sampled_new(jc->cap_w, jc->throughput, jc->power_w, jc->n_points, &c, diag)))
        return rc;
    for (size_t k = 0; k < PFS_N_CUTS; k++)
        if (pfs_pfi(c, g->default_limit_w, pfs_cut(k), &t->pfi_given[k]))
            t->pfi_given[k] = NAN;
    pfs_curve_free(c);
    return 0;
}

/* Every workload job gets its curve and at least one pool it can run on: one of the curve's
 * GPU, or of a GPU its measured twin ran on, with enough GPUs for it. */
static int
place_jobs(struct pfs_sim_inputs *in, struct pfs_diag *diag)
{
    for (size_t j = 0; j < in->wl->n_jobs; j++) {
        const struct pfs_workload_job *w = &in->wl->jobs[j];
        const struct pfs_job_curve *jc = pfs_curveset_find(in->cs, w->curve_id);
        size_t i = jc ? (size_t)(jc - in->cs->jobs) : in->n_curves, p, own = SIZE_MAX;
        int biggest = 0;

        if (i >= in->n_curves) /* by the curves' index: a search per job cost 2% of a run */
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "curve_id",
                                 "workload job '%s' runs curve '%s', which the corpus lacks",
                                 w->job_id, w->curve_id);
        in->job_curve[j] = (uint32_t)i;
        in->job_pool[j] = -1;
        if (w->pool && w->pool[0]) {
            char names[PFS_MAX_POOLS * 34] = "";

            for (p = 0; p < in->n_pools && strcmp(in->pools[p].name, w->pool) != 0; p++)
                ;
            for (size_t q = 0, used = 0; q < in->n_pools; q++)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", q ? ", " : "",
                                         in->pools[q].name);
            if (p == in->n_pools)
                return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "pool",
                                     "workload job '%s' names pool '%s', which the facility "
                                     "lacks (its pools: %s)",
                                     w->job_id, w->pool, names);
            if (in->curve_on[i * in->n_pools + p] == SIZE_MAX)
                return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "pool",
                                     "workload job '%s' names pool '%s' (%s), where its curve "
                                     "'%s', measured on %s, has no measured twin",
                                     w->job_id, w->pool, in->pools[p].gpu, w->curve_id,
                                     in->cs->jobs[i].gpu);
            in->job_pool[j] = (int)p;
        }
        for (p = 0; p < in->n_pools; p++) {
            if (in->curve_on[i * in->n_pools + p] == SIZE_MAX ||
                (in->job_pool[j] >= 0 && (size_t)in->job_pool[j] != p))
                continue;
            if (in->pools[p].gpus > biggest)
                biggest = in->pools[p].gpus;
            if (in->curve_on[i * in->n_pools + p] == i && own == SIZE_MAX)
                own = p;
        }
        if (biggest == 0) {
            char types[PFS_MAX_POOLS * 34] = "";

            for (size_t q = 0, used = 0; q < in->n_pools; q++)
                used += (size_t)snprintf(types + used, sizeof types - used, "%s%s", q ? ", " : "",
                                         in->pools[q].gpu);
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "curve_id",
                                 "workload job '%s' runs curve '%s', measured on %s, and the "
                                 "facility has only %s with no measured twin of it there: "
                                 "add a pool of %s, or give the job a curve of the facility's GPUs",
                                 w->job_id, w->curve_id, in->cs->jobs[i].gpu, types,
                                 in->cs->jobs[i].gpu);
        }
        if (w->n_gpus > biggest)
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "n_gpus",
                                 "workload job '%s' needs %d GPUs; the facility has %d%s",
                                 w->job_id, w->n_gpus, biggest,
                                 in->n_pools > 1 ? " in the largest pool it can run on" : "");
        /* A job's uncapped run time, here, is its tokens at its curve's full-power rate: the
         * rate the simulation gives it (the workload's own duration came from the corpus's
         * telemetry, a separate measurement one percent off). On a pool of another GPU it
         * runs its twin's curve and takes that curve's time (struct job's dur_s). */
        {
            size_t c = own != SIZE_MAX ? i : in->curve_on[i * in->n_pools + 0];
            int gp = own != SIZE_MAX ? (int)own : 0;

            for (p = 0; own == SIZE_MAX && p < in->n_pools; p++)
                if (in->curve_on[i * in->n_pools + p] != SIZE_MAX &&
                    (in->job_pool[j] < 0 || (size_t)in->job_pool[j] == p)) {
                    c = in->curve_on[i * in->n_pools + p];
                    gp = (int)p;
                    break;
                }
            in->wl->jobs[j].duration_s =
                w->tokens / (in->curves[c].top_rate[gp] * w->n_gpus / in->curves[c].n_gpus);
        }
    }
    return 0;
}

/* facility.variability: the curves' DVFS parameters (a job's GPUs then give it a curve of
 * its own at its start, sync_curve) and the efficiency of every GPU of every pool, drawn
 * from a stream per pool (the facility's seed and the pool's index). */
static int
variability_new(struct pfs_sim_inputs *in, const struct pfs_scenario *sc, struct pfs_diag *diag)
{
    int rc;

    if (!pfs_variability_on(&sc->var))
        return 0;
    if (!(in->fit = calloc(in->n_curves + 1, sizeof *in->fit)) ||
        !(in->fit_gpu = calloc(in->n_curves + 1, sizeof *in->fit_gpu)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t k = 0; k < in->n_curves; k++) {
        const struct pfs_job_curve *jc = &in->cs->jobs[k];
        struct pfs_fit f;

        if (in->curves[k].gpu >= 0)
            in->fit_gpu[k] = in->gpu[in->curves[k].gpu];
        else if ((rc = pfs_scenario_gpu(sc, jc->gpu, &in->fit_gpu[k], diag)))
            return rc;
        if (jc->n_points < PFS_FIT_MIN_POINTS)
            return pfs__diag_set(diag, PFS_EINVAL, in->cs->path, jc->line, 0, "cap_w",
                                 "facility.variability: job '%s' has %zu measured caps; its "
                                 "model needs at least %d",
                                 jc->job_id, jc->n_points, PFS_FIT_MIN_POINTS);
        if (jc->cap_w[0] < in->fit_gpu[k].min_limit_w ||
            jc->cap_w[jc->n_points - 1] > in->fit_gpu[k].max_limit_w)
            return pfs__diag_set(diag, PFS_EINVAL, in->cs->path, jc->line, 0, "cap_w",
                                 "facility.variability: job '%s' was measured at %g-%g W, "
                                 "outside the %s limits [%g, %g] W",
                                 jc->job_id, jc->cap_w[0], jc->cap_w[jc->n_points - 1],
                                 in->fit_gpu[k].name, in->fit_gpu[k].min_limit_w,
                                 in->fit_gpu[k].max_limit_w);
        if ((rc = pfs_fit_job(&in->fit_gpu[k], jc, &f, diag)))
            return rc;
        in->fit[k] = f.job;
    }
    for (size_t p = 0; p < in->n_pools; p++) {
        size_t n = (size_t)in->pools[p].gpus;

        if (!(in->eta[p] = malloc((n + 1) * sizeof *in->eta[p])))
            return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        if ((rc = pfs_eta_draw(&sc->var, sc->var_seed * 1000003ul + p, n, in->eta[p], diag)))
            return rc;
    }
    return 0;
}

/* corpus = "synth:GPU[:SEED]": the corpus generated on GPU's profile for this scenario. */
static int
synth_corpus(struct pfs_sim_inputs *in, const struct pfs_scenario *sc, struct pfs_diag *diag)
{
    struct pfs_synth_options o;
    struct pfs_gpu g;
    char name[32];
    unsigned long seed;
    int rc;

    if (!pfs_synth_spec(sc->corpus, name, sizeof name, &seed))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "workload.corpus",
                             "scenario.workload.corpus: expected synth:GPU or synth:GPU:SEED, "
                             "got '%s'",
                             sc->corpus);
    if ((rc = pfs_scenario_gpu(sc, name, &g, diag)))
        return rc;
    pfs_synth_defaults(&o, seed);
    o.gpu = &g;
    return pfs_synth(&o, &in->js, &in->cs, diag);
}

/* Curve i's own GPU (in->curves[i].gpu set): the facility's pool of that GPU, or the
 * profile itself for a curve no pool can run (it may still be a twin's). */
static int
curve_gpu(const struct pfs_sim_inputs *in, const struct pfs_scenario *sc, size_t i,
          struct pfs_gpu *own, struct pfs_diag *diag)
{
    if (in->curves[i].gpu >= 0) {
        *own = in->gpu[in->curves[i].gpu];
        return 0;
    }
    return pfs_scenario_gpu(sc, in->cs->jobs[i].gpu, own, diag);
}

/* Every corpus curve tabulated on its own GPU's limits (in->curves). */
static int
tabulate_curves(struct pfs_sim_inputs *in, const struct pfs_scenario *sc, struct pfs_diag *diag)
{
    int rc = 0;

    in->n_curves = in->cs->n_jobs;
    if (!(in->curves = pfs__huge_calloc(in->n_curves + 1, sizeof *in->curves)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t i = 0; i < in->n_curves && rc == 0; i++) {
        struct corpus_curve *cc = &in->curves[i];
        struct pfs_gpu own;

        cc->gpu = -1;
        for (size_t p = 0; p < in->n_pools && cc->gpu < 0; p++)
            if (strcmp(in->pools[p].gpu, in->cs->jobs[i].gpu) == 0)
                cc->gpu = (int)p;
        if ((rc = curve_gpu(in, sc, i, &own, diag)) == 0)
            rc = pfs__setup_tabulate(cc, &in->cs->jobs[i], &own, diag);
    }
    return rc;
}

/* Writes a byte into every page of the index's block ahead (pre_th): a write, where
 * pfs__populate would leave 4.5-5 us of each page's fault to its first write here. */
static void *
touch_run(void *arg)
{
    struct qindex *c = arg;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);

    for (size_t at = 0; at < c->pre_bytes; at += page)
        ((volatile char *)c->pre)[at] = 0;
    return NULL;
}

/* A corpus directory's curves, read and tabulated on a thread of their own while the caller
 * reads its jobs and makes the workload, which need nothing of them (a week's set-up: 9.3 ->
 * 7.1 ms). Failures keep the order of doing it all in turn: the curves file's before the
 * caller's, the caller's before the tabulation's. */
struct curves_job {
    struct pfs_sim_inputs *in;
    const struct pfs_scenario *sc;
    char path[600];
    int read_rc, tab_rc;
    struct pfs_diag read_d, tab_d;
};

static void *
curves_run(void *arg)
{
    struct curves_job *cj = arg;

    if ((cj->read_rc = pfs_curveset_read(cj->path, &cj->in->cs, &cj->read_d)) == 0)
        cj->tab_rc = tabulate_curves(cj->in, cj->sc, &cj->tab_d);
    return NULL;
}

int
pfs_sim_inputs_new(const struct pfs_scenario *sc, struct pfs_sim_inputs **out,
                   struct pfs_diag *diag)
{
    struct pfs_sim_inputs *in = calloc(1, sizeof *in);
    struct curves_job cj = {0};
    pthread_t curves_th;
    bool beside = false; /* the curves made on curves_th */
    char path[600];
    int rc;

    *out = NULL;
    if (!in)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (!(in->nodr = calloc(1, sizeof *in->nodr))) {
        free(in);
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    pthread_mutex_init(&in->nodr->lock, NULL);
    pthread_cond_init(&in->nodr->made, NULL);
    if (!(in->qx = calloc(1, sizeof *in->qx))) {
        pfs_sim_inputs_free(in);
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    pthread_mutex_init(&in->qx->lock, NULL);
    if ((rc = facility_new(in, sc, diag)))
        goto fail;
    if (strncmp(sc->corpus, "import:", 7) == 0) {
        /* import:FORMAT:GPU:PATH - real curves read from the data directory at run time,
         * with no jobs.csv: what an operator knows comes from each curve (below). */
        char fmt[32], gpu[32], rel[400];
        const struct pfs_importer_ops *imp;

        if (sscanf(sc->corpus + 7, "%31[^:]:%31[^:]:%399s", fmt, gpu, rel) != 3 ||
            !(imp = pfs_importer_find(fmt))) {
            rc = pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "workload.corpus",
                               "scenario.workload.corpus: expected import:FORMAT:GPU:PATH with "
                               "FORMAT perseus, zeus or emerald, got '%s'",
                               sc->corpus);
            goto fail;
        }
        snprintf(path, sizeof path, "%s/%s", pfs_data_dir(), rel);
        if ((rc = pfs_curveset_new(&in->cs)) ||
            (rc = pfs_import_read(imp, path, gpu, in->cs, diag)))
            goto fail;
    } else if (strncmp(sc->corpus, "synth:", 6) == 0) {
        /* synth:GPU[:SEED] - the synthetic corpus's configurations measured on that GPU's
         * profile (its draw under --uncertainty), made now (traces/synth.c). */
        if ((rc = synth_corpus(in, sc, diag)))
            goto fail;
    } else {
        cj = (struct curves_job){.in = in, .sc = sc};
        snprintf(cj.path, sizeof cj.path, "%s/curves.csv", sc->corpus);
        if (!(beside = pthread_create(&curves_th, NULL, curves_run, &cj) == 0))
            curves_run(&cj); /* (in turn, then) */
        snprintf(path, sizeof path, "%s/jobs.csv", sc->corpus);
        rc = pfs_jobset_read(path, &in->js, diag);
    }
    /* The predictor: the scenario's, else the corpus's when it has one (a synth: corpus
     * has the shipped one, trained on the H200 corpus: no Blackwell data to train on). */
    if (strncmp(sc->corpus, "synth:", 6) == 0)
        pfs__resolve_path("", "traces/h200-h100/predictor.cfg", path, sizeof path);
    else
        snprintf(path, sizeof path, "%s/predictor.cfg", sc->corpus);
    if (rc == 0 && (sc->predictor[0] || access(path, R_OK) == 0))
        rc = pfs_predictor_load(sc->predictor[0] ? sc->predictor : path, &in->pred, diag);
    if (rc == 0 && sc->workload[0]) {
        rc = pfs_workload_read(sc->workload, &in->wl, diag);
    } else if (rc == 0 && !in->js) {
        rc = pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "workload.file",
                           "scenario.workload.file: an imported corpus has no jobs to draw "
                           "arrivals from; give a workload file");
    } else if (rc == 0) {
        struct pfs_workload_options o = sc->arrivals;

        o.arrivals = sc->arrivals_source;
        o.facility_gpus = 0; /* the largest pool: a job runs within one */
        for (size_t p = 0; p < in->n_pools; p++) {
            bool seen = false;

            o.facility_gpus =
                in->pools[p].gpus > o.facility_gpus ? in->pools[p].gpus : o.facility_gpus;
            for (size_t q = 0; q < o.n_gpu_types; q++)
                seen = seen || strcmp(o.gpu_types[q], in->pools[p].gpu) == 0;
            if (!seen)
                pfs__strlcpy(o.gpu_types[o.n_gpu_types++], in->pools[p].gpu, sizeof o.gpu_types[0]);
        }
        o.days = sc->days;
        o.seed = sc->seed;
        rc = pfs_workload_generate(&o, in->js, &in->wl, diag);
    }
    if (rc == 0) {
        /* A job submitted after the run's end never arrives (an arrival at the end itself
         * still does): it is not part of the run, its jobs submitted, its per-job rows or
         * the GPU time asked (a workload file longer than the scenario's days counted
         * them all). */
        int64_t end_us = (int64_t)(sc->days * 86400 * US);
        size_t m = 0;

        for (size_t j = 0; j < in->wl->n_jobs; j++)
            if (arrival_us(in, j) <= end_us)
                in->wl->jobs[m++] = in->wl->jobs[j];
        in->n_after = in->wl->n_jobs - m;
        in->wl->n_jobs = m;
    }
    if (beside)
        pthread_join(curves_th, NULL);
    if (cj.read_rc) { /* (before the jobs' failure: in turn, the curves were read first) */
        *diag = cj.read_d;
        rc = cj.read_rc;
    } else if (rc == 0 && cj.tab_rc) {
        *diag = cj.tab_d;
        rc = cj.tab_rc;
    } else if (rc == 0 && !cj.in) { /* an imported or synthetic corpus: its curves now */
        rc = tabulate_curves(in, sc, diag);
    }
    if (rc)
        goto fail;
    { /* a workload in submit order (what the readers and generators give) is in order: its
       * arrival order is job order, and no array of keys is needed (44 MB of a Poisson year,
       * written once and each of its pages faulted in) */
        size_t j = 1;

        while (j < in->wl->n_jobs && arrival_us(in, j - 1) <= arrival_us(in, j))
            j++;
        if (j < in->wl->n_jobs) {
            if (!(in->arrival = pfs__huge_calloc(in->wl->n_jobs + 1, sizeof *in->arrival))) {
                rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
                goto fail;
            }
            for (j = 0; j < in->wl->n_jobs; j++)
                in->arrival[j] = (struct arrival_key){arrival_us(in, j), (uint32_t)j};
            qsort(in->arrival, in->wl->n_jobs, sizeof *in->arrival, cmp_arrival_key);
        }
    }
    /* The queue index is made at the runs' start, by one thread while the others wait for
     * it; its block is faulted in now, beside what is left to do here (a 28-day cap-4k
     * window's index was 373 page faults, some 4 ms: the window's wall time 115.7 -> 108.8
     * ms, the least of 15). Not where the scenario rules the index out (indexed_queue; a
     * run under the test switch PFISIM_SCAN_BACKFILL leaves it unused, and the inputs free
     * it). */
    if (in->n_pools == 1 && !sc->admit_deadlines && !sc->scan_backfill && in->wl->n_jobs > 0) {
        struct qindex *c = in->qx;

        c->pre_bytes = pfs__queue_index_bytes(in->wl->n_jobs, sc->edf || in->arrival);
        if (c->pre_bytes && (c->pre = pfs__huge_malloc(c->pre_bytes)) != NULL)
            c->pre_on = pthread_create(&c->pre_th, NULL, touch_run, c) == 0;
    }
    in->job_curve = pfs__huge_calloc(in->wl->n_jobs + 1, sizeof *in->job_curve);
    in->job_pool = pfs__huge_calloc(in->wl->n_jobs + 1, sizeof *in->job_pool);
    in->curve_on = calloc(in->n_curves * in->n_pools + 1, sizeof *in->curve_on);
    if (!in->job_curve || !in->curve_on || !in->job_pool) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < in->n_curves; i++) {
        struct pfs_gpu own;

        if ((rc = curve_gpu(in, sc, i, &own, diag)) || (rc = observe_curve(in, i, &own, diag)))
            goto fail;
        for (size_t p = 0; p < in->n_pools; p++) {
            struct corpus_curve *cc = &in->curves[i];

            cc->top_rate[p] = pfs_pwl_eval(&cc->env, in->gpu[p].max_limit_w);
            cc->top_w[p] = pfs_pwl_eval(&cc->power, in->gpu[p].max_limit_w);
            cc->floor_w[p] = pfs_pwl_eval(&cc->power, in->gpu[p].min_limit_w);
        }
    }
    /* Which curve a job of curve k runs on pool p: k on a pool of its GPU; else a measured
     * twin of k on p's GPU (the corpus's twin_id, either way round); else none. */
    for (size_t k = 0; k < in->n_curves; k++)
        for (size_t p = 0; p < in->n_pools; p++) {
            size_t *on = &in->curve_on[k * in->n_pools + p];

            *on = SIZE_MAX;
            if (strcmp(in->cs->jobs[k].gpu, in->pools[p].gpu) == 0)
                *on = k;
            for (size_t m = 0; m < in->n_curves && *on == SIZE_MAX && in->js; m++)
                if (strcmp(in->cs->jobs[m].gpu, in->pools[p].gpu) == 0 &&
                    twins(in->js, in->cs->jobs[k].job_id, in->cs->jobs[m].job_id))
                    *on = m;
        }
    if ((rc = place_jobs(in, diag)) || (rc = variability_new(in, sc, diag)))
        goto fail;
    if (in->n_curves >= UINT32_MAX ||
        !(in->job_on = pfs__huge_malloc((in->wl->n_jobs * in->n_pools + 1) * sizeof *in->job_on))) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto fail;
    }
    for (size_t j = 0; j < in->wl->n_jobs; j++) {
        for (size_t p = 0; p < in->n_pools; p++) {
            size_t c = in->wl->jobs[j].n_gpus > in->pools[p].gpus ||
                               (in->job_pool[j] >= 0 && (size_t)in->job_pool[j] != p)
                           ? SIZE_MAX
                           : in->curve_on[in->job_curve[j] * in->n_pools + p];

            in->job_on[j * in->n_pools + p] = c == SIZE_MAX ? UINT32_MAX : (uint32_t)c;
        }
    }
    if (in->wl->n_jobs >= UINT32_MAX) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto fail;
    }
    *out = in;
    return 0;
fail:
    pfs_sim_inputs_free(in);
    return rc;
}

size_t
pfs_sim_inputs_n_jobs(const struct pfs_sim_inputs *in)
{
    return in->wl->n_jobs;
}

size_t
pfs_sim_inputs_n_after(const struct pfs_sim_inputs *in)
{
    return in->n_after;
}

const struct pfs_workload_job *
pfs_sim_inputs_job(const struct pfs_sim_inputs *in, size_t j)
{
    return &in->wl->jobs[j];
}

size_t
pfs_sim_inputs_n_curves(const struct pfs_sim_inputs *in)
{
    return in->n_curves;
}

const struct pfs_job_curve *
pfs_sim_inputs_curve(const struct pfs_sim_inputs *in, size_t k)
{
    return &in->cs->jobs[k];
}

const struct pfs_corpus_job *
pfs_sim_inputs_curve_job(const struct pfs_sim_inputs *in, size_t k)
{
    return in->js ? pfs_jobset_find(in->js, in->cs->jobs[k].job_id) : NULL;
}

double
pfs_sim_inputs_curve_pfi(const struct pfs_sim_inputs *in, size_t k, size_t cut)
{
    return cut < PFS_N_CUTS ? in->curves[k].tel.pfi_given[cut] : (double)NAN;
}

void
pfs_sim_inputs_free(struct pfs_sim_inputs *in)
{
    if (!in)
        return;
    free(in->arrival);
    free(in->curves);
    free(in->job_curve);
    free(in->job_pool);
    free(in->job_on);
    free(in->curve_on);
    free(in->fit);
    free(in->fit_gpu);
    for (size_t p = 0; p < PFS_MAX_POOLS; p++)
        free(in->eta[p]);
    pthread_mutex_destroy(&in->nodr->lock);
    pthread_cond_destroy(&in->nodr->made);
    free(in->nodr);
    if (in->qx) {
        if (in->qx->pre_on)
            pthread_join(in->qx->pre_th, NULL);
        free(in->qx->pre);
        pfs__queue_index_free(in->qx->x[0]);
        pfs__queue_index_free(in->qx->x[1]);
        pthread_mutex_destroy(&in->qx->lock);
        free(in->qx);
    }
    pfs_workload_free(in->wl);
    pfs_predictor_free(in->pred);
    pfs_jobset_free(in->js);
    pfs_curveset_free(in->cs);
    free(in);
}
