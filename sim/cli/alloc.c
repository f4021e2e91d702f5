/*
 * sim/cli/alloc.c - pfisim alloc: the one-shot allocation study (docs/policies.md).
 *
 * All jobs of a curves file run at once; the budget is their reference power (default limit
 * x GPUs) times 1 - cut, or given in watts. Every policy (or one) divides it; each is scored
 * on the true curves the same way (sim/alloc.c). What a policy may know: the jobs' limits and
 * tiers; their telemetry from a jobs.csv beside the curves (or --jobs) or, for real curves
 * that come with none, what an operator learns from the curve's top point (draw, throughput)
 * and its measured PFI ("PFI given per job"); the predictor (--model, default the shipped
 * one when telemetry is present); and, for the oracle alone, the curves themselves.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "cli.h"

const char pfs_cli_alloc_help[] =
    "usage: pfisim alloc CURVES.csv [--jobs JOBS.csv] (--cut FRAC | --budget-w W)\n"
    "                   [--policy NAME [--caps] [--nvidia-smi MAP.csv]] [--tier TIER]\n"
    "                   [--model MODEL.cfg | --given-pfi] [--csv | --json]\n"
    "                   [--policy-lib FILE]... [--policy-exec CMD]... [--policy-timeout SEC]\n"
    "                   [--uncertainty N | --corpus-draws N [--uncertainty-seed S]\n"
    "                   [--plot FILE]] [--tree SCENARIO.cfg [--spread]]\n"
    "\n"
    "Divides a power budget among all the jobs of CURVES running at once (CURVES may be\n"
    "synth:GPU[:SEED]: the synthetic corpus made on that GPU's profile). Without --policy:\n"
    "one row per policy: policy,total_throughput,unit,delta_vs_equal,gap_recovered,\n"
    "mean_gain_per_job,min_rel_throughput (gap_recovered = (policy - equal) / (oracle -\n"
    "equal)). With --policy NAME --caps: one row per job: job_id,n_gpus,cap_w,throughput,\n"
    "power_w,pause_frac. With --nvidia-smi MAP.csv (job_id,host,gpu_index per GPU): the\n"
    "nvidia-smi -pl commands that set those caps.\n"
    "\n"
    "  --cut FRAC      cut from the jobs' reference power: 0.3 or 30%\n"
    "  --budget-w W    the GPU power budget in watts\n"
    "  --jobs FILE     telemetry (jobs.csv); default: jobs.csv beside CURVES, if any\n"
    "  --tier TIER     every job's tier: firm, flex1, flex2 (default), flex3\n"
    "  --model FILE    the pfi policy's predictor (default traces/h200-h100/predictor.cfg\n"
    "                  when the jobs have telemetry)\n"
    "  --given-pfi     policies go by each job's measured PFI instead of a prediction\n"
    "  --uncertainty N with CURVES synth:GPU (the synthetic corpus made on that profile,\n"
    "                  synth:b200): every policy on each of N draws of the profile's ranges\n"
    "                  (pfisim gpus GPU); each metric's median and range, the rankings, and\n"
    "                  the corpus's PFI over the draws (--uncertainty-seed S, default 1)\n"
    "  --corpus-draws N  with CURVES synth:GPU: every policy on the corpus made at each of N\n"
    "                  draws of its generator's uncertain inputs (job sizes, model and phase\n"
    "                  mix, parallelism, curve shapes: docs/corpus.md), the profile at its\n"
    "                  point; the same report as --uncertainty\n"
    "  --tree FILE     divide under the power tree of that scenario (facility.tree): the\n"
    "                  jobs placed in its racks (packed, or --spread), every node's limit held;\n"
    "                  equal, pfi and oracle divide under a tree, the others say they do not\n"
    "  --plot FILE     with either: the gap recovered and throughput per watt per\n"
    "                  policy, medians with the draws' range (.png, .svg or "
    ".pdf)\n" PFS_CLI_PLUGIN_HELP "\n"
    "A budget below the jobs' minimum caps is infeasible: policies that may pause pause by\n"
    "tier; the others say so, and alloc exits 3.\n";

/* v with its sign into buf, or where it is NAN (against an infeasible equal) "-" in the
 * table and nothing in CSV, as an undefined gap is shown. */
static void
signed_or_none(char *buf, size_t size, double v, bool csv)
{
    if (isnan(v))
        pfs__strlcpy(buf, csv ? "" : "-", size);
    else
        snprintf(buf, size, csv ? "%.6g" : "%+.6g", v);
}

/* alloc --tree: the jobs placed in a scenario's power tree, and the tree as the solvers read
 * it (docs/policies.md, "Under a power tree"). */
struct alloc_tree {
    struct pfs_power_tree *t;
    int32_t *parent;
    double *limit, *fixed, *max_w;
    uint32_t *node;
    const char **name;
    struct pfs_alloc_tree view;
};

static void
alloc_tree_free(struct alloc_tree *a)
{
    pfs_power_tree_free(a->t);
    free(a->parent);
    free(a->limit);
    free(a->fixed);
    free(a->max_w);
    free(a->node);
    free(a->name);
}

/* Reads the scenario's tree, places p's jobs in it (each on the pool of its curve's GPU),
 * holds each job within its racks' own limit, and makes p's tree. */
static int
alloc_tree_setup(struct alloc_tree *a, const char *path, bool spread, struct pfs_cli_problem *p,
                 struct pfs_diag *d)
{
    struct pfs_scenario *sc = malloc(sizeof *sc);
    struct pfs_pool pools[PFS_MAX_POOLS];
    double idle[PFS_MAX_POOLS];
    int *pool = NULL, *gpus = NULL, rc;
    size_t np;

    if (!sc)
        return pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if ((rc = pfs_scenario_load(path, sc, d)) != 0)
        goto out;
    if (sc->tree.n == 0) {
        rc = pfs__diag_set(d, PFS_EINVAL, path, 0, 0, "tree",
                           "--tree: the scenario has no facility.tree");
        goto out;
    }
    if ((rc = pfs_power_tree_new(sc, &a->t, d)) != 0)
        goto out;
    np = pfs_scenario_pools(sc, pools);
    for (size_t k = 0; k < np; k++) {
        struct pfs_gpu g;

        if ((rc = pfs_scenario_gpu(sc, pools[k].gpu, &g, d)) != 0)
            goto out;
        idle[k] = g.idle_w;
    }
    a->parent = calloc(a->t->n + 1, sizeof *a->parent);
    a->limit = calloc(a->t->n + 1, sizeof *a->limit);
    a->fixed = calloc(a->t->n + 1, sizeof *a->fixed);
    a->name = calloc(a->t->n + 1, sizeof *a->name);
    a->max_w = calloc(p->n + 1, sizeof *a->max_w);
    a->node = calloc(p->n + 1, sizeof *a->node);
    pool = calloc(p->n + 1, sizeof *pool);
    gpus = calloc(p->n + 1, sizeof *gpus);
    if (!a->parent || !a->limit || !a->fixed || !a->name || !a->max_w || !a->node || !pool ||
        !gpus) {
        rc = pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < p->n; i++) {
        const char *gpu = p->cs->jobs[i].gpu;

        for (pool[i] = 0; (size_t)pool[i] < np && strcmp(pools[pool[i]].gpu, gpu) != 0; pool[i]++)
            ;
        if ((size_t)pool[i] == np) {
            rc = pfs__diag_set(d, PFS_EINVAL, path, 0, 0, "tree",
                               "--tree: job '%s' runs on %s, which no pool of the scenario has",
                               p->jobs[i].job_id, gpu);
            goto out;
        }
        gpus[i] = p->jobs[i].n_gpus;
    }
    if ((rc = pfs_power_tree_place(a->t, pools, idle, pool, gpus, p->n, spread, a->node, a->max_w,
                                   a->fixed, d)) != 0) {
        pfs__strlcpy(d->file, path, sizeof d->file);
        goto out;
    }
    for (size_t v = 0; v < a->t->n; v++) {
        a->parent[v] = a->t->node[v].parent;
        a->limit[v] =
            a->t->node[v].limit_w < HUGE_VAL ? a->t->node[v].limit_w - a->fixed[v] : HUGE_VAL;
        a->name[v] = a->t->node[v].name;
    }
    for (size_t i = 0; i < p->n; i++) { /* within what its racks allow it alone */
        if (a->max_w[i] < p->jobs[i].min_w) {
            rc = pfs__diag_set(d, PFS_EINVAL, path, 0, 0, "tree",
                               "--tree: job '%s' holds whole racks whose limits leave it %.0f W a "
                               "GPU, below its lowest cap of %.0f W",
                               p->jobs[i].job_id, a->max_w[i], p->jobs[i].min_w);
            goto out;
        }
        p->jobs[i].max_w = fmin(p->jobs[i].max_w, a->max_w[i]);
    }
    a->view = (struct pfs_alloc_tree){a->t->n, a->parent, a->limit, a->node, a->name};
    p->tree = &a->view;
out:
    free(sc);
    free(pool);
    free(gpus);
    return rc;
}

/* The tree's kinds of node, each with its fullest copy's IT draw under each tree-aware
 * policy's answer, against its limit. */
static void
print_tree_use(const struct alloc_tree *a, const struct pfs_cli_problem *p,
               const struct pfs_cli_outcome *out, size_t n_pol)
{
    double *w = calloc(a->t->n + 1, sizeof *w);
    int spec_done[PFS_MAX_TREE_SPEC + 1] = {0};

    if (!w)
        return;
    printf("\nthe tree (IT power of the fullest copy of each node, kW; its limit):\n%-24s %10s",
           "node", "limit");
    for (size_t k = 0; k < n_pol; k++)
        if (out[k].d && out[k].rc == 0)
            printf(" %10s", pfs_policy_name(out[k].ops));
    printf("\n");
    for (size_t v = 0; v < a->t->n; v++) {
        const struct pfs_power_node *n = &a->t->node[v];
        char lim[24];

        if (spec_done[n->spec]++)
            continue;
        if (n->limit_w < HUGE_VAL)
            snprintf(lim, sizeof lim, "%.4g", n->limit_w / 1e3);
        else
            pfs__strlcpy(lim, "none", sizeof lim);
        printf("%*s%-*s %10s", 2 * n->level, "", 24 - 2 * n->level, n->name, lim);
        for (size_t k = 0; k < n_pol; k++) {
            double most = 0;

            if (!out[k].d || out[k].rc)
                continue;
            for (size_t u = 0; u < a->t->n; u++)
                w[u] = a->fixed[u];
            for (size_t i = 0; i < p->n; i++) {
                double gw = pfs_alloc_power_w(&p->jobs[i], &out[k].d[i]);

                for (int32_t u = (int32_t)a->node[i]; u >= 0; u = a->parent[u])
                    w[u] += gw;
            }
            for (size_t u = 0; u < a->t->n; u++)
                if (a->t->node[u].spec == n->spec)
                    most = fmax(most, w[u]);
            printf(" %10.4g", most / 1e3);
        }
        printf("\n");
    }
    free(w);
}

/* Prints the nvidia-smi commands for map (job_id,host,gpu_index per GPU). */
static int
print_nvidia_smi(const char *map, const struct pfs_cli_problem *p, const struct pfs_cli_outcome *o,
                 struct pfs_diag *d)
{
    static const char *const names[] = {"job_id", "host", "gpu_index"};
    struct pfs__csv csv;
    size_t idx[3];
    int rc;

    if ((rc = pfs__csv_open(&csv, map, d)) || (rc = pfs__csv_header(&csv, names, 3, idx)))
        goto out;
    while ((rc = pfs__csv_next(&csv)) == 1) {
        const char *job, *host;
        long gpu;
        size_t i;

        if ((rc = pfs__csv_str(&csv, idx[0], "job_id", &job)) ||
            (rc = pfs__csv_str(&csv, idx[1], "host", &host)) ||
            (rc = pfs__csv_long(&csv, idx[2], "gpu_index", &gpu)))
            goto out;
        for (i = 0; i < p->n && strcmp(p->jobs[i].job_id, job) != 0; i++)
            ;
        if (i == p->n) {
            rc = pfs__csv_error(&csv, idx[0], "job_id", PFS_EINVAL, "no job '%s' in the curves",
                                job);
            goto out;
        }
        if (o->d[i].pause_frac >= 1)
            printf("# %s: job %s paused (checkpoint and stop it)\n", host, job);
        else
            printf("ssh %s nvidia-smi -i %ld -pl %.0f%s\n", host, gpu, floor(o->d[i].cap_w),
                   o->d[i].pause_frac > 0 ? "   # and pause it part of the time" : "");
    }
out:
    pfs__csv_close(&csv);
    return rc < 0 ? rc : 0;
}

/* The most energy per token a job saves by capping while it keeps 97% of its throughput
 * at its top cap (NVIDIA's power profiles claim up to 15% on Blackwell at >= 97%
 * performance): its measured points, linear between them on a grid of 50 steps each. */
static double
saved_at_97(const struct pfs_job_curve *jc)
{
    size_t n = jc->n_points;
    double t0 = jc->throughput[n - 1], p0 = jc->power_w[n - 1], best = 0;

    if (!(t0 > 0 && p0 > 0))
        return NAN;
    for (size_t i = 0; i + 1 < n; i++)
        for (int k = 0; k <= 50; k++) {
            double f = k / 50.0,
                   t = jc->throughput[i] + f * (jc->throughput[i + 1] - jc->throughput[i]);
            double pw = jc->power_w[i] + f * (jc->power_w[i + 1] - jc->power_w[i]);

            if (t >= 0.97 * t0 && t > 0)
                best = fmax(best, 1 - (pw / t) / (p0 / t0));
        }
    return best;
}

/* Median, min and max of the finite of v[0], v[stride], ... (n of them), NAN when none. */
static void
spread3(const double *v, size_t n, size_t stride, double *med, double *lo, double *hi)
{
    double *w = malloc((n + 1) * sizeof *w);
    size_t m = 0;

    *med = *lo = *hi = NAN;
    for (size_t i = 0; w && i < n; i++)
        if (isfinite(v[i * stride]))
            w[m++] = v[i * stride];
    if (w && m > 0) {
        gsl_sort(w, 1, m);
        *med = gsl_stats_median_from_sorted_data(w, 1, m);
        *lo = w[0];
        *hi = w[m - 1];
    }
    free(w);
}

/* alloc --uncertainty N: every policy on the corpus made on each draw of the source GPU's
 * profile (synth:GPU), the budget the same cut of each draw's reference power (or the same
 * watts); per policy the throughput, the gap recovered, throughput per watt and the worst
 * job's share over the draws, the rankings, and the corpus's own PFI and draw. */
static int
alloc_draws(const char *src, const char *jobs, const char *model, bool given, int tier, double cut,
            double budget_w, size_t n_draws, unsigned long useed, bool corpus, bool csv,
            const char *plot)
{
    static const char *const names[] = {"throughput", "gap_recovered", "throughput_per_w",
                                        "min_rel_throughput", "gain_per_job"};
    static const char *const corpus_names[] = {"pfi30_p10",
                                               "pfi30_p50",
                                               "pfi30_p90",
                                               "uncapped_draw_frac_p50",
                                               "energy_saved_at_97pct_p50",
                                               "energy_saved_at_97pct_max"};
    const size_t n_cm = sizeof corpus_names / sizeof corpus_names[0];
    const size_t n_m = 5;
    struct pfs_gpu prof, drawn;
    struct pfs_diag d = {0};
    const char *pol[64];
    char name[32];
    unsigned long seed;
    size_t n_pol = 0;
    double *v = NULL, *cv = NULL;
    /* per policy: the draws it gave no answer on, and the first one's reason; the draws
     * whose budget is below the jobs' minimum caps */
    size_t *fails = NULL, n_below = 0;
    char(*why)[200] = NULL;
    int rc = 0, code = EXIT_OK;

    if (!pfs_synth_spec(src, name, sizeof name, &seed))
        return pfs_cli_usage("alloc", "%s",
                             corpus ? "--corpus-draws takes synth:GPU (the corpus made on that "
                                      "GPU's profile: synth:h200-sxm)"
                                    : "--uncertainty takes synth:GPU (the corpus made on a "
                                      "profile with ranges: synth:b200)");
    if ((rc = pfs_gpu_find(name, &prof, &d)) != 0)
        return pfs_cli_report(&d, rc);
    if (!corpus && !pfs_gpu_uncertain(&prof))
        return pfs_cli_usage(
            "alloc", "--uncertainty: the profile %s has no ranges (pfisim gpus %s)", name, name);
    while (pfs_policy_at(n_pol) && n_pol < 64) {
        pol[n_pol] = pfs_policy_name(pfs_policy_at(n_pol));
        n_pol++;
    }
    v = calloc(n_m * n_draws * n_pol + 1, sizeof *v);
    cv = calloc(n_cm * n_draws + 1, sizeof *cv);
    fails = calloc(n_pol + 1, sizeof *fails);
    why = calloc(n_pol + 1, sizeof *why);
    if (!v || !cv || !fails || !why) {
        free(v);
        free(cv);
        free(fails);
        free(why);
        return pfs_cli_report(&d, pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory"));
    }
    for (size_t dd = 0; dd < n_draws && rc == 0; dd++) {
        struct pfs_cli_problem p = {0};
        struct pfs_cli_outcome *out = calloc(n_pol, sizeof *out);
        double eq = NAN, orc = NAN, *pfi = NULL, *frac = NULL, *sav = NULL;
        size_t n_pfi = 0, n_sav = 0;
        struct pfs_synth_options so;

        /* One draw of the profile's ranges, or of the corpus generator's inputs. */
        pfs_synth_defaults(&so, seed);
        drawn = prof;
        if (!out ||
            (rc = corpus ? pfs_synth_draw(&so, n_draws, dd, useed, &d)
                         : pfs_gpu_draw(&prof, n_draws, dd, useed, &drawn, &d)) != 0 ||
            (rc = pfs_cli_problem_build(&p, src, jobs, model, given, tier, &drawn, &so, &d)) != 0) {
            rc = rc ? rc : pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            free(out);
            pfs_cli_problem_free(&p);
            break;
        }
        {
            struct pfs_alloc_view view = {isnan(budget_w) ? p.ref_total_w * (1 - cut) : budget_w,
                                          p.n,
                                          p.jobs,
                                          p.tel,
                                          p.truth,
                                          p.predictor,
                                          {NULL, NULL},
                                          NULL,
                                          NULL,
                                          0};

            n_below += view.budget_w < p.min_total_w * (1 - 1e-12);
            for (size_t k = 0; k < n_pol; k++) {
                out[k].ops = pfs_policy_at(k);
                pfs_cli_outcome_run(&p, &view, &out[k]);
                if (out[k].rc && fails[k]++ == 0)
                    pfs__strlcpy(why[k], out[k].diag.message, sizeof why[k]);
                if (strcmp(pol[k], "equal") == 0 && out[k].rc == 0)
                    eq = out[k].total;
                if (strcmp(pol[k], "oracle") == 0 && out[k].rc == 0)
                    orc = out[k].total;
            }
        }
        for (size_t k = 0; k < n_pol; k++) {
            double *row = v + dd * n_pol + k;
            const struct pfs_cli_outcome *o = &out[k];
            bool ok = o->rc == 0;

            row[0] = ok ? o->total : (double)NAN;
            row[n_draws * n_pol] =
                ok && orc - eq > 1e-3 * fabs(eq) ? (o->total - eq) / (orc - eq) : (double)NAN;
            row[2 * n_draws * n_pol] = ok && o->power_w > 0 ? o->total / o->power_w : (double)NAN;
            row[3 * n_draws * n_pol] = ok ? o->min_rel : (double)NAN;
            row[4 * n_draws * n_pol] =
                ok && isfinite(eq) ? (o->total - eq) / (double)p.n : (double)NAN;
            free(o->d);
        }
        /* the corpus itself on this draw: its jobs' true PFI at 30%, and uncapped draw */
        pfi = calloc(p.js->n_jobs + 1, sizeof *pfi);
        frac = calloc(p.js->n_jobs + 1, sizeof *frac);
        for (size_t j = 0; pfi && frac && j < p.js->n_jobs; j++)
            if (isfinite(p.js->jobs[j].pfi[2])) {
                pfi[n_pfi] = p.js->jobs[j].pfi[2];
                frac[n_pfi++] = p.js->jobs[j].power_frac;
            }
        if (n_pfi > 0) {
            gsl_sort(pfi, 1, n_pfi);
            gsl_sort(frac, 1, n_pfi);
            cv[dd] = gsl_stats_quantile_from_sorted_data(pfi, 1, n_pfi, 0.1);
            cv[n_draws + dd] = gsl_stats_quantile_from_sorted_data(pfi, 1, n_pfi, 0.5);
            cv[2 * n_draws + dd] = gsl_stats_quantile_from_sorted_data(pfi, 1, n_pfi, 0.9);
            cv[3 * n_draws + dd] = gsl_stats_quantile_from_sorted_data(frac, 1, n_pfi, 0.5);
        }
        sav = calloc(p.cs->n_jobs + 1, sizeof *sav);
        for (size_t j = 0; sav && j < p.cs->n_jobs; j++)
            if (isfinite(sav[n_sav] = saved_at_97(&p.cs->jobs[j])))
                n_sav++;
        if (n_sav > 0) {
            gsl_sort(sav, 1, n_sav);
            cv[4 * n_draws + dd] = gsl_stats_quantile_from_sorted_data(sav, 1, n_sav, 0.5);
            cv[5 * n_draws + dd] = sav[n_sav - 1];
        }
        free(sav);
        free(pfi);
        free(frac);
        free(out);
        pfs_cli_problem_free(&p);
    }
    if (rc) {
        code = pfs_cli_report(&d, rc);
    } else {
        struct pfs_cli_draw_metric m[5], cm[8];
        const char *corpus_row = "corpus";

        for (size_t i = 0; i < n_m; i++)
            m[i] = (struct pfs_cli_draw_metric){names[i], v + i * n_draws * n_pol};
        for (size_t i = 0; i < n_cm; i++)
            cm[i] = (struct pfs_cli_draw_metric){corpus_names[i], cv + i * n_draws};
        if (!csv && corpus)
            pfs_cli_corpus_draws_header(n_draws, useed);
        else if (!csv)
            pfs_cli_draws_header(&prof, 1, n_draws, useed);
        pfs_cli_draws_report(pol, n_pol, n_draws, m, n_m, 0, csv);
        if (!csv)
            printf("\nthe corpus on each draw (true PFI at a 30%% cut, uncapped draw / limit, "
                   "energy per token saved keeping 97%% of throughput):\n");
        pfs_cli_draws_report(&corpus_row, 1, n_draws, cm, n_cm, 0, csv);
        if (plot) {
            /* Per policy the gap recovered and throughput per watt: the median over the
             * draws, whiskers from their min to their max. */
            double *st = calloc(6 * n_pol + 1, sizeof *st);
            struct pfs_bar_panel panels[2];
            char title[200];

            for (size_t k = 0; st && k < n_pol; k++)
                for (size_t i = 0; i < 2; i++)
                    spread3(v + (i ? 2 : 1) * n_draws * n_pol + k, n_draws, n_pol,
                            &st[(3 * i) * n_pol + k], &st[(3 * i + 1) * n_pol + k],
                            &st[(3 * i + 2) * n_pol + k]);
            for (size_t i = 0; st && i < 2; i++)
                panels[i] = (struct pfs_bar_panel){
                    .title = i ? "throughput per watt" : "gap recovered",
                    .y_label = i ? "tokens/s per W" : "(policy - equal) / (oracle - equal)",
                    .labels = pol,
                    .values = st + 3 * i * n_pol,
                    .n = n_pol,
                    .value_format = 1,
                    .lo = st + (3 * i + 1) * n_pol,
                    .hi = st + (3 * i + 2) * n_pol,
                    .missing = "no answer"};
            snprintf(title, sizeof title,
                     "%s%s: median over %zu draws of its profile, whiskers their range "
                     "(SYNTHETIC corpus)",
                     prof.name, prof.extrapolated ? " (EXTRAPOLATED)" : "", n_draws);
            if (!st)
                rc = pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            else
                rc = pfs__bars_write(title, panels, 2, plot,
                                     (enum pfs_plot_format)pfs_cli_plot_format(plot), &d);
            free(st);
            if (rc)
                code = pfs_cli_report(&d, rc);
            else if (!csv)
                printf("\nthe figure: %s\n", plot);
        }
        /* Why a policy has fewer draws than the others (its rows showed only the count),
         * and, as without draws, a budget below every job's minimum cap is bad input. */
        for (size_t k = 0; k < n_pol; k++)
            if (fails[k])
                fprintf(stderr, "pfisim alloc: %s: no answer on %zu of %zu draws (the first: %s)\n",
                        pol[k], fails[k], n_draws, why[k]);
        if (n_below > 0 && code == EXIT_OK) {
            fprintf(stderr,
                    "pfisim alloc: %s: the budget is below the jobs' minimum caps on %zu of %zu "
                    "draws%s\n",
                    n_below == n_draws ? "error" : "warning", n_below, n_draws,
                    n_below == n_draws ? ": infeasible without pausing" : "");
            code = n_below == n_draws ? EXIT_INPUT : code;
        }
    }
    free(v);
    free(cv);
    free(fails);
    free(why);
    return code;
}

int
pfs_cli_alloc(int argc, char **argv)
{
    static const struct option opts[] = {{"jobs", required_argument, 0, 'j'},
                                         {"cut", required_argument, 0, 'c'},
                                         {"budget-w", required_argument, 0, 'b'},
                                         {"policy", required_argument, 0, 'p'},
                                         {"caps", no_argument, 0, 'C'},
                                         {"nvidia-smi", required_argument, 0, 'n'},
                                         {"tier", required_argument, 0, 't'},
                                         {"model", required_argument, 0, 'm'},
                                         {"given-pfi", no_argument, 0, 'g'},
                                         {"csv", no_argument, 0, 'v'},
                                         {"json", no_argument, 0, 'J'},
                                         {"help", no_argument, 0, 'h'},
                                         {"uncertainty", required_argument, 0, 'U'},
                                         {"uncertainty-seed", required_argument, 0, 'V'},
                                         {"corpus-draws", required_argument, 0, 'D'},
                                         {"tree", required_argument, 0, 'T'},
                                         {"spread", no_argument, 0, 'S'},
                                         {"plot", required_argument, 0, 'P'},
                                         PFS_CLI_PLUGIN_OPTIONS,
                                         {0, 0, 0, 0}};
    struct pfs_cli_plugins plugins = {0};
    unsigned long n_draws = 0, useed = 1;
    const char *plot = NULL;
    const char *jobs = NULL, *policy = NULL, *map = NULL, *model = NULL;
    double cut = NAN, budget = NAN;
    bool caps = false, given = false, csv = false, json = false, useed_given = false;
    bool corpus = false, profile = false, spread = false;
    const char *tree_path = NULL;
    struct alloc_tree at = {0};
    int c, tier = PFS_TIER_FLEX2, rc, code = EXIT_OK;
    struct pfs_cli_problem p = {0};
    struct pfs_diag d = {0};
    struct pfs_cli_outcome *out = NULL;
    size_t n_pol = 0, i_equal = (size_t)-1, i_oracle = (size_t)-1;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            jobs = optarg;
            break;
        case 'c':
            if (!pfs_cli_parse_frac(optarg, &cut) || !(cut > 0 && cut < 1))
                return pfs_cli_usage("alloc",
                                     "--cut takes a fraction in (0, 1) or a percent, "
                                     "got '%s'",
                                     optarg);
            break;
        case 'b': {
            char why[120];

            /* watts, or with a unit as in scenarios: 900kW, "1.2 MW" */
            if ((!pfs__parse_double(optarg, &budget) &&
                 !pfs__parse_quantity(optarg, "budget_w", &budget, why, sizeof why)) ||
                !(budget > 0))
                return pfs_cli_usage("alloc",
                                     "--budget-w takes positive watts (or kW, MW), "
                                     "got '%s'",
                                     optarg);
            break;
        }
        case 'J':
            json = true;
            break;
        case 'p':
            policy = optarg;
            break;
        case 'C':
            caps = true;
            break;
        case 'n':
            map = optarg;
            break;
        case 't':
            for (tier = 0; tier < PFS_N_TIERS && strcmp(optarg, pfs_tier_name(tier)); tier++)
                ;
            if (tier == PFS_N_TIERS)
                return pfs_cli_usage("alloc", "unknown tier '%s' (firm, flex1, flex2, flex3)",
                                     optarg);
            break;
        case 'm':
            model = optarg;
            break;
        case 'g':
            given = true;
            break;
        case 'T':
            tree_path = optarg;
            break;
        case 'S':
            spread = true;
            break;
        case 'v':
            csv = true;
            break;
        case 'U':
        case 'D':
            if (!pfs_cli_parse_count(optarg, &n_draws) || n_draws < 1 || n_draws > 10000)
                return pfs_cli_usage("alloc", "%s takes 1 to 10000 draws, got '%s'",
                                     c == 'D' ? "--corpus-draws" : "--uncertainty", optarg);
            if (c == 'D')
                corpus = true;
            else
                profile = true;
            break;
        case 'P':
            if (pfs_cli_plot_format(optarg) < 0)
                return pfs_cli_usage("alloc", "--plot takes a .png, .svg or .pdf file, got '%s'",
                                     optarg);
            plot = optarg;
            break;
        case 'V':
            if (!pfs_cli_parse_count(optarg, &useed))
                return pfs_cli_usage("alloc",
                                     "--uncertainty-seed takes a non-negative integer, "
                                     "got '%s'",
                                     optarg);
            useed_given = true;
            break;
        case 'h':
            return fputs(pfs_cli_alloc_help, stdout), EXIT_OK;
        default:
            if ((code = pfs_cli_plugins_option(&plugins, "alloc", c, optarg)) == 1) {
                code = EXIT_OK;
                break;
            }
            return code == 2 ? EXIT_USAGE : pfs_cli_usage("alloc", "%s", "bad option");
        }
    }
    if (optind + 1 != argc)
        return pfs_cli_usage("alloc", "%s", "expected one curves file");
    /* (each of these was ignored without a word) */
    if (csv && json)
        return pfs_cli_usage("alloc", "%s", "give --csv or --json, not both");
    if (n_draws == 0 && (plot || useed_given))
        return pfs_cli_usage("alloc", "%s needs --uncertainty N or --corpus-draws N",
                             plot ? "--plot" : "--uncertainty-seed");
    if (corpus && profile)
        return pfs_cli_usage("alloc", "%s",
                             "--uncertainty draws the GPU profile, --corpus-draws the corpus: "
                             "one at a time");
    if (n_draws > 0 && (policy || json))
        return pfs_cli_usage("alloc",
                             "--uncertainty reports every policy, as text or --csv: not with %s",
                             policy ? "--policy" : "--json");
    if ((code = pfs_cli_plugins_load(&plugins)) != EXIT_OK)
        return code;
    if (isnan(cut) == isnan(budget))
        return pfs_cli_usage("alloc", "%s", "give exactly one of --cut and --budget-w");
    if ((caps || map) && !policy)
        return pfs_cli_usage("alloc", "%s", "--caps and --nvidia-smi need --policy NAME");
    if (policy && !pfs_policy_find(policy)) {
        fprintf(stderr, "pfisim alloc: unknown policy '%.64s' (known:", policy);
        for (size_t k = 0; pfs_policy_at(k); k++)
            fprintf(stderr, " %s", pfs_policy_name(pfs_policy_at(k)));
        fprintf(stderr, ")\n");
        return EXIT_USAGE;
    }
    if (spread && !tree_path)
        return pfs_cli_usage("alloc", "%s", "--spread places jobs in a --tree");
    if (tree_path && (n_draws > 0 || map))
        return pfs_cli_usage("alloc", "%s", "--tree: not with draws or --nvidia-smi");
    if (n_draws > 0)
        return alloc_draws(argv[optind], jobs, model, given, tier, cut, budget, n_draws, useed,
                           corpus, csv, plot);
    if ((rc = pfs_cli_problem_build(&p, argv[optind], jobs, model, given, tier, NULL, NULL, &d)) !=
        0) {
        pfs_cli_problem_free(&p);
        return pfs_cli_report(&d, pfs__diag_oom(&d, rc, argv[optind], 0,
                                                "building the curves and the policies' tables"));
    }
    if (tree_path && (rc = alloc_tree_setup(&at, tree_path, spread, &p, &d)) != 0) {
        alloc_tree_free(&at);
        pfs_cli_problem_free(&p);
        return pfs_cli_report(&d, rc);
    }
    if (isnan(budget))
        budget = p.ref_total_w * (1 - cut);
    {
        struct pfs_alloc_view v = {budget,      p.n,          p.jobs, p.tel, p.truth,
                                   p.predictor, {NULL, NULL}, NULL,   NULL,  0};

        while (pfs_policy_at(n_pol))
            n_pol++;
        out = calloc(n_pol, sizeof *out);
        for (size_t k = 0; out && k < n_pol; k++) {
            out[k].ops = pfs_policy_at(k);
            if (policy && strcmp(pfs_policy_name(out[k].ops), policy) != 0 &&
                strcmp(pfs_policy_name(out[k].ops), "equal") != 0 &&
                strcmp(pfs_policy_name(out[k].ops), "oracle") != 0)
                continue;
            pfs_cli_outcome_run(&p, &v, &out[k]);
            pfs__diag_oom(&out[k].diag, out[k].rc, argv[optind], 0, "in the policy's own tables");
            if (strcmp(pfs_policy_name(out[k].ops), "equal") == 0)
                i_equal = k;
            if (strcmp(pfs_policy_name(out[k].ops), "oracle") == 0)
                i_oracle = k;
        }
        if (!out) {
            pfs_cli_problem_free(&p);
            return pfs_cli_report(&d,
                                  pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory"));
        }
    }
    {
        struct pfs_cli_outcome *chosen = NULL;

        for (size_t k = 0; policy && k < n_pol; k++)
            if (strcmp(pfs_policy_name(out[k].ops), policy) == 0)
                chosen = &out[k];
        if (chosen && chosen->rc) {
            code = pfs_cli_report(&chosen->diag, chosen->rc);
            goto done;
        }
        if (chosen && map) {
            rc = print_nvidia_smi(map, &p, chosen, &d);
            code = rc ? pfs_cli_report(&d, rc) : EXIT_OK;
            goto done;
        }
        if (chosen && caps) {
            puts("job_id,n_gpus,cap_w,throughput,power_w,pause_frac");
            for (size_t i = 0; i < p.n; i++) { /* (an id quoted where CSV needs it) */
                pfs__csv_put_text(stdout, p.jobs[i].job_id);
                printf(",%d,%.3f,%.6g,%.3f,%.4f\n", p.jobs[i].n_gpus, chosen->d[i].cap_w,
                       pfs_truth_throughput(p.truth, i, &chosen->d[i]),
                       pfs_truth_power_w(p.truth, i, chosen->d[i].cap_w), chosen->d[i].pause_frac);
            }
            goto done;
        }
    }
    {
        double eq = i_equal < n_pol && out[i_equal].rc == 0 ? out[i_equal].total : (double)NAN;
        double orc = i_oracle < n_pol && out[i_oracle].rc == 0 ? out[i_oracle].total : (double)NAN;
        char gap[32], delta[32], gain[32];

        bool gap_defined = orc - eq > 1e-3 * fabs(eq);

        if (json) {
            /* the same as one JSON document (null where the table shows "-") */
            printf("{\"jobs\": %zu, \"gpus\": %ld, \"budget_w\": %.17g, \"reference_w\": "
                   "%.17g, \"uncapped_w\": %.17g, \"binds\": %s, \"unit\": \"%s\", "
                   "\"policies\": [",
                   p.n, p.n_gpus, budget, p.ref_total_w, p.full_total_w,
                   budget < p.full_total_w ? "true" : "false", p.unit);
            for (size_t k = 0, first = 1; k < n_pol; k++) {
                const struct pfs_cli_outcome *o = &out[k];

                if (!o->d)
                    continue;
                printf("%s\n  {\"policy\": ", first ? "" : ",");
                pfs_cli_json_string(pfs_policy_name(o->ops));
                first = 0;
                if (o->rc) {
                    printf(", \"error\": ");
                    pfs_cli_json_string(o->diag.message);
                    printf("}");
                    continue;
                }
                printf(", \"total_throughput\": %.17g, \"delta_vs_equal\": ", o->total);
                pfs_cli_json_number(o->total - eq); /* (null where equal is infeasible) */
                printf(", \"gap_recovered\": ");
                pfs_cli_json_number(gap_defined ? (o->total - eq) / (orc - eq) : (double)NAN);
                printf(", \"mean_gain_per_job\": ");
                pfs_cli_json_number((o->total - eq) / (double)p.n);
                printf(", \"min_rel_throughput\": %.17g, \"power_w\": %.17g}", o->min_rel,
                       o->power_w);
            }
            printf("\n]}\n");
            goto infeasible;
        }
        if (csv)
            puts("policy,total_throughput,unit,delta_vs_equal,gap_recovered,mean_gain_per_job,"
                 "min_rel_throughput");
        else
            printf("%zu jobs on %ld GPUs; budget %.0f W, %.1f%% of their reference %.0f W\n"
                   "%-20s %16s %-10s %12s %8s %14s %8s\n",
                   p.n, p.n_gpus, budget, 100 * budget / p.ref_total_w, p.ref_total_w, "policy",
                   "total", "unit", "vs equal", "gap", "gain per job", "min rel");
        for (size_t k = 0; k < n_pol; k++) {
            const struct pfs_cli_outcome *o = &out[k];

            if (!o->d)
                continue;
            if (o->rc) {
                /* (under a tree, those without allocate_tree in one list below) */
                if (!csv && !(p.tree && !o->ops->allocate_tree))
                    printf("%-20s %s\n", pfs_policy_name(o->ops), o->diag.message);
                continue;
            }
            /* The gap is defined only where the oracle gains more than 0.1% of equal's
             * throughput (docs/simulator.md); else empty, not -nan or -inf. */
            if (gap_defined)
                snprintf(gap, sizeof gap, "%.4f", (o->total - eq) / (orc - eq));
            else
                pfs__strlcpy(gap, csv ? "" : "-", sizeof gap);
            /* against equal: nothing where equal is infeasible (empty, as the gap, not nan) */
            signed_or_none(delta, sizeof delta, o->total - eq, csv);
            signed_or_none(gain, sizeof gain, (o->total - eq) / (double)p.n, csv);
            printf(csv ? "%s,%.6g,%s,%s,%s,%s,%.4f\n" : "%-20s %16.6g %-10s %12s %8s %14s %8.4f\n",
                   pfs_policy_name(o->ops), o->total, p.unit, delta, gap, gain, o->min_rel);
        }
        if (!csv && budget >= p.full_total_w && !p.tree)
            printf("The budget covers the %.0f W the jobs draw uncapped: it binds nothing, every "
                   "job keeps its reference limit and no policy is asked.\n",
                   p.full_total_w);
        else if (!csv && !gap_defined)
            printf("gap: not defined, %s here.\n",
                   isnan(eq) && isnan(orc) ? "equal and the oracle are infeasible"
                   : isnan(eq)             ? "equal is infeasible"
                   : isnan(orc)            ? "the oracle is infeasible"
                                           : "the oracle gains less than 0.1% over equal");
        if (!csv && p.tree) {
            size_t col = 0;

            for (size_t k = 0; k < n_pol; k++)
                if (out[k].d && out[k].rc && !out[k].ops->allocate_tree) {
                    char item[40];

                    if (col == 0) {
                        fputs("not under a tree (no allocate_tree, policy ABI 3):", stdout);
                        col = 51;
                    }
                    snprintf(item, sizeof item, " %s", pfs_policy_name(out[k].ops));
                    pfs_cli_put_wrapped(item, &col, 100, "  ");
                }
            if (col > 0)
                putchar('\n');
            print_tree_use(&at, &p, out, n_pol);
        }
        for (size_t k = 0; csv && k < n_pol; k++)
            if (out[k].d && out[k].rc)
                fprintf(stderr, "pfisim alloc: %s: %s\n", pfs_policy_name(out[k].ops),
                        out[k].diag.message);
    infeasible:
        /* A budget below every job's minimum cap is bad input (exit 3), whatever the
         * pausing policies made of it; one policy that cannot meet a feasible budget is a
         * result, shown in its row. */
        if (budget < p.min_total_w * (1 - 1e-12)) {
            fprintf(stderr,
                    "pfisim alloc: error: the budget of %.0f W is below the %.0f W of the jobs' "
                    "minimum caps: infeasible without pausing\n",
                    budget, p.min_total_w);
            code = EXIT_INPUT;
        }
    }
done:
    for (size_t k = 0; k < n_pol; k++)
        free(out[k].d);
    free(out);
    alloc_tree_free(&at);
    pfs_cli_problem_free(&p);
    return code;
}
