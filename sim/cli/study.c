/*
 * sim/cli/study.c - pfisim study source: the source study's headline reproduced and
 * explained (issue 57, docs/results.md "The source study, reproduced").
 *
 * The source study measured PFI-aware allocation on 131 H200 training jobs under a 30% cut:
 * 63% of the equal-to-oracle gap, about 1.5k tokens/s per job. This study poses the same
 * problem on the synthetic corpus over three things pfisim cannot know: how well PFI is
 * predicted (the telemetry-noise knob, and a reading's window), how a scheduler uses it (the
 * allocators), and what the jobs are (draws of the generator's uncertain inputs). Every
 * prediction is out of fold: a job's PFI comes from a model trained on the other jobs.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "cli.h"

const char pfs_cli_study_help[] =
    "usage: pfisim study source [--draws N] [--draw-seed S] [--noise LIST] [--windows LIST]\n"
    "                          [--cuts LIST] [-o|--output DIR]\n"
    "\n"
    "The source study's headline (63% of the equal-to-oracle gap, about 1.5k tokens/s per\n"
    "job, 131 H200 jobs, a 30% cut) on the SYNTHETIC corpus: 131 H200 training jobs made at\n"
    "each telemetry-noise level and each draw of the generator's uncertain inputs, their PFI\n"
    "predicted out of fold (5 folds, ridge), each allocator given those predictions and scored\n"
    "on the true curves. Writes DIR/study-source.csv (allocator, noise, window, R^2 and\n"
    "Spearman of the predictions, draw and its mix, cut, gap recovered, gain per job, the\n"
    "worst job's relative throughput) and DIR/plots/study-source.png (the gap recovered\n"
    "against Spearman per allocator with the source's 63% marked; the gain per job against\n"
    "the mean job size), and prints the 30% cut's medians. Same arguments, same bytes.\n"
    "\n"
    "  --draws N       corpus draws besides the shipped mix (default 20; 0: the shipped only)\n"
    "  --draw-seed S   their seed (default 1)\n"
    "  --noise LIST    telemetry-noise levels (default 0,0.5,1,2,4,8,16,32,64)\n"
    "  --windows LIST  reading windows in seconds, each at noise 1 (default 1,30)\n"
    "  --cuts LIST     cuts of the jobs' reference power, of 10,20,30,40,50% (default\n"
    "                  20%,30%,40%)\n"
    "  -o, --output DIR  where to write (default results)\n"
    "\n"
    "usage: pfisim study tree [SCENARIO] [--racks LIST] [--seeds LIST] [--days D]\n"
    "                        [--policy NAME]... [-o|--output DIR]\n"
    "\n"
    "Oversubscription under a power tree: every row's racks set to each count, each policy\n"
    "and seed run with every node's limit held (pfisim study tree --help).\n";

/* The allocators compared: the baselines, the curve-based pfi, pfi with one PFI for every
 * job (the jobs' mean prediction: it knows each job's speed, not its elasticity), the two
 * that use one PFI number as the study describes, and a PFI-blind proportional share. */
static const char *const allocators[] = {"equal",    "oracle",    "pfi",         "pfi-mean",
                                         "pfi-rank", "pfi-share", "proportional"};
#define PFI_MEAN 3 /* pfi on the mean prediction */
#define N_ALLOC  (sizeof allocators / sizeof allocators[0])

/* One corpus (draw, noise, window) at one cut, one allocator. */
struct row {
    size_t draw; /* 0: the shipped mix */
    double mix[PFS_MIX_N], mean_gpus;
    double noise, window_s, cut;
    int objective; /* objectives[] */
    double r2, spearman;
    size_t allocator;
    double gap, gain_per_job, gain_tokens, min_rel, oracle_gain_per_job;
    double gap_tokens; /* gain_tokens over the tokens objective's oracle's */
};

struct study {
    struct row *rows;
    size_t n_rows, cap_rows;
};

static int
parse_doubles(const char *s, double *v, size_t max, size_t *n, bool frac)
{
    char buf[512], *save = NULL;

    *n = 0;
    if (strlen(s) >= sizeof buf)
        return -1;
    memcpy(buf, s, strlen(s) + 1);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n == max || !(frac ? pfs_cli_parse_frac(tok, &v[*n]) : pfs__parse_double(tok, &v[*n])))
            return -1;
        (*n)++;
    }
    return *n > 0 ? 0 : -1;
}

/* The PFI cut index of cut (0.1 ... 0.5), or -1. */
static int
cut_index(double cut)
{
    for (size_t k = 0; k < PFS_N_CUTS; k++)
        if (fabs(pfs_cut(k) - cut) < 1e-9)
            return (int)k;
    return -1;
}

static struct row *
add_row(struct study *s)
{
    struct row *r = pfs__grow(s->rows, &s->cap_rows, s->n_rows, sizeof *r, 256);

    if (!r)
        return NULL;
    s->rows = r;
    memset(&s->rows[s->n_rows], 0, sizeof s->rows[0]);
    return &s->rows[s->n_rows++];
}

/* What the allocators maximise, and the gap is measured in: the jobs' total tokens/s
 * (pfisim's), or each job's share of its own uncapped throughput weighted by its GPUs, where
 * every GPU counts the same whatever model it trains and how fast (a scheduler that reads
 * PFI alone, a normalised number, sees only this: curve shape, no speed). */
static const char *const objectives[] = {"tokens", "relative"};
#define N_OBJ 2

/* Each job's throughput as its GPUs times its share of its top cap's (its curve and its
 * telemetry's), so that every GPU counts the same; t0[i] is what one unit of it is in
 * tokens/s for curve i. */
static void
normalise(struct pfs_cli_problem *p, double *t0)
{
    for (size_t i = 0; i < p->cs->n_jobs; i++) {
        struct pfs_job_curve *jc = &p->cs->jobs[i];
        const struct pfs_corpus_job *cj = pfs_jobset_find(p->js, jc->job_id);

        t0[i] = jc->throughput[jc->n_points - 1] / jc->n_gpus;
        for (size_t k = 0; k < jc->n_points; k++)
            jc->throughput[k] /= t0[i];
        if (cj)
            p->js->jobs[cj - p->js->jobs].tokens_per_s /= t0[i];
    }
}

/* x - base, or 0 where that is within rounding of sums of a hundred terms. */
static double
above(double x, double base)
{
    return fabs(x - base) <= 1e-12 * fabs(base) ? 0.0 : x - base;
}

/* One objective on one corpus, js and cs (the caller's; the relative objective rescales
 * them in place, so it comes last): pred the jobs' out-of-fold PFI (by jobset index). */
static int
one_objective(struct study *s, const struct pfs_synth_options *so, struct pfs_jobset *js,
              struct pfs_curveset *cs, int obj, double (*pred)[PFS_N_CUTS], const double *cuts,
              size_t n_cuts, struct pfs_diag *d)
{
    struct pfs_cli_problem p = {0};
    double *truth = NULL, *guess = NULL, *t0 = NULL;
    size_t *at = NULL; /* the jobset index of problem job i */
    int rc;

    p.js = js;
    p.cs = cs;
    truth = calloc(p.cs->n_jobs + 1, sizeof *truth);
    guess = calloc(p.cs->n_jobs + 1, sizeof *guess);
    t0 = calloc(p.cs->n_jobs + 1, sizeof *t0);
    at = calloc(p.cs->n_jobs + 1, sizeof *at);
    if (!truth || !guess || !t0 || !at) {
        rc = pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < p.cs->n_jobs; i++)
        t0[i] = 1;
    if (obj == 1)
        normalise(&p, t0);
    /* given_pfi: no predictor is loaded, and each job's given PFI is replaced below by its
     * out-of-fold prediction, so that no policy sees a measured PFI. */
    if ((rc = pfs_cli_problem_setup(&p, "synth:h200-sxm:7", NULL, true, PFS_TIER_FLEX2, NULL, d)) !=
        0)
        goto out;
    for (size_t i = 0; i < p.n; i++) {
        const struct pfs_corpus_job *cj = pfs_jobset_find(p.js, p.jobs[i].job_id);

        at[i] = (size_t)(cj - p.js->jobs);
        memcpy(p.tel[i].pfi_given, pred[at[i]], sizeof p.tel[i].pfi_given);
    }
    for (size_t c = 0; c < n_cuts && rc == 0; c++) {
        const int k = cut_index(cuts[c]);
        struct pfs_cli_outcome out[N_ALLOC];
        struct pfs_alloc_view view = {.budget_w = p.ref_total_w * (1 - cuts[c]),
                                      .n_jobs = p.n,
                                      .jobs = p.jobs,
                                      .telemetry = p.tel,
                                      .truth = p.truth};
        double r2, rho, gpus = 0, tokens[N_ALLOC], mean[PFS_N_CUTS] = {0};

        for (size_t i = 0; i < p.n; i++) {
            truth[i] = p.js->jobs[at[i]].pfi[k];
            guess[i] = pred[at[i]][k];
            gpus += p.jobs[i].n_gpus;
        }
        for (size_t i = 0; i < p.n; i++)
            for (size_t j = 0; j < PFS_N_CUTS; j++)
                mean[j] += pred[at[i]][j] / (double)p.n;
        r2 = pfs_stat_r2(truth, guess, p.n);
        rho = pfs_stat_spearman(truth, guess, p.n);
        memset(out, 0, sizeof out);
        for (size_t a = 0; a < N_ALLOC; a++) {
            out[a].ops = pfs_policy_find(a == PFI_MEAN ? "pfi" : allocators[a]);
            for (size_t i = 0; a == PFI_MEAN && i < p.n; i++)
                memcpy(p.tel[i].pfi_given, mean, sizeof mean);
            pfs_cli_outcome_run(&p, &view, &out[a]);
            for (size_t i = 0; a == PFI_MEAN && i < p.n; i++)
                memcpy(p.tel[i].pfi_given, pred[at[i]], sizeof p.tel[i].pfi_given);
            /* the same allocation in tokens/s, whatever it maximised */
            tokens[a] = 0;
            for (size_t i = 0; out[a].rc == 0 && i < p.n; i++)
                tokens[a] += t0[i] * pfs_truth_throughput(p.truth, i, &out[a].d[i]);
            free(out[a].d);
        }
        for (size_t a = 0; a < N_ALLOC; a++) {
            struct row *r = add_row(s);
            double eq = out[0].total, orc = out[1].total;

            if (!r) {
                rc = pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
                break;
            }
            r->draw = so->n_draws > 0 ? so->draw + 1 : 0;
            memcpy(r->mix, so->mix, sizeof r->mix);
            r->mean_gpus = gpus / (double)p.n;
            r->noise = so->telemetry_noise;
            r->window_s = so->telemetry_window_s;
            r->objective = obj;
            r->cut = cuts[c];
            r->r2 = r2;
            r->spearman = rho;
            r->allocator = a;
            /* No answer (an allocator the cut leaves infeasible) is a row of NANs. */
            r->gap = r->gain_per_job = r->gain_tokens = r->min_rel = r->oracle_gain_per_job = NAN;
            if (out[a].rc == 0 && out[0].rc == 0 && out[1].rc == 0) {
                /* (a difference within rounding of the totals is none: no -0.0000) */
                const double dt = above(out[a].total, eq), dk = above(tokens[a], tokens[0]);

                r->gap = orc - eq > 1e-9 * eq ? dt / (orc - eq) : (double)NAN;
                r->gain_per_job = dt / (double)p.n;
                r->gain_tokens = dk / (double)p.n;
                r->min_rel = out[a].min_rel;
                r->oracle_gain_per_job = (orc - eq) / (double)p.n;
            }
        }
    }
out:
    free(truth);
    free(guess);
    free(t0);
    free(at);
    p.js = NULL; /* (the caller's) */
    p.cs = NULL;
    pfs_cli_problem_free(&p);
    return rc;
}

/* The 131 jobs of one corpus: predicted out of fold, then each objective. */
static int
one_corpus(struct study *s, const struct pfs_synth_options *so, const double *cuts, size_t n_cuts,
           struct pfs_diag *d)
{
    struct pfs_synth_options o = *so;
    struct pfs_jobset *js = NULL;
    struct pfs_curveset *cs = NULL;
    struct pfs_predict_options po;
    double(*pred)[PFS_N_CUTS] = NULL;
    struct pfs_gpu g;
    int rc;

    if ((rc = pfs_gpu_find("h200-sxm", &g, d)) != 0)
        return rc;
    o.gpu = &g;
    if ((rc = pfs_synth(&o, &js, &cs, d)) != 0)
        goto out;
    if (!(pred = calloc(js->n_jobs + 1, sizeof *pred))) {
        rc = pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    pfs_predict_defaults(&po);
    if ((rc = pfs_predictor_crossfit(js, cs, &po, 5, pred, d)) != 0)
        goto out;
    {
        const size_t first = s->n_rows;

        for (int obj = 0; obj < N_OBJ && rc == 0; obj++)
            rc = one_objective(s, so, js, cs, obj, pred, cuts, n_cuts, d);
        /* Every allocation's gain in tokens/s against what the tokens oracle gains: the
         * relative objective's allocations scored as a tokens/s study scores them. */
        for (size_t i = first; rc == 0 && i < s->n_rows; i++) {
            struct row *r = &s->rows[i];

            r->gap_tokens = NAN;
            for (size_t k = first; k < s->n_rows; k++) {
                const struct row * or = &s->rows[k];

                if (or->objective == 0 && or->allocator == 1 && fabs(or->cut - r->cut) < 1e-12 &&
                    or->gain_tokens > 0)
                    r->gap_tokens = r->gain_tokens / or->gain_tokens;
            }
        }
    }
out:
    free(pred);
    pfs_jobset_free(js);
    pfs_curveset_free(cs);
    return rc;
}

/* ",v" with prec decimals (significant digits with g), or "," alone where v is NAN (no
 * answer, or a gap the cut leaves undefined). */
static void
put(FILE *fp, int prec, bool g, double v)
{
    fputc(',', fp);
    if (!isnan(v) && g)
        fprintf(fp, "%.*g", prec, v);
    else if (!isnan(v))
        fprintf(fp, "%.*f", prec, v);
}

static int
write_csv(const void *obj, FILE *fp, struct pfs_diag *d)
{
    const struct study *s = obj;

    (void)d;
    fprintf(fp, "# SYNTHETIC: pfisim study source (issue 57); the corpus is pfisim's synthetic "
                "H200 corpus, seed 7, at each draw and noise level; docs/results.md\n");
    fprintf(fp, "allocator,objective,noise,window_s,r2,spearman,draw");
    for (size_t i = 0; i < PFS_MIX_N; i++) {
        double def, lo, hi;

        fprintf(fp, ",%s", pfs_synth_mix_param(i, &def, &lo, &hi));
    }
    fprintf(fp, ",mean_gpus_per_job,cut,gap_recovered,gain_per_job,oracle_gain_per_job,"
                "gain_per_job_tokens_s,gap_recovered_tokens,min_rel_throughput\n");
    for (size_t i = 0; i < s->n_rows; i++) {
        const struct row *r = &s->rows[i];

        fprintf(fp, "%s,%s,%g,%g,%.4f,%.4f,%zu", allocators[r->allocator], objectives[r->objective],
                r->noise, r->window_s, r->r2, r->spearman, r->draw);
        for (size_t k = 0; k < PFS_MIX_N; k++)
            fprintf(fp, ",%.4g", r->mix[k]);
        fprintf(fp, ",%.3f,%g", r->mean_gpus, r->cut);
        put(fp, 4, false, r->gap);
        put(fp, 6, true, r->gain_per_job);
        put(fp, 6, true, r->oracle_gain_per_job);
        put(fp, 1, false, r->gain_tokens);
        put(fp, 4, false, r->gap_tokens);
        put(fp, 4, false, r->min_rel);
        fputc('\n', fp);
    }
    return ferror(fp) ? PFS_EIO : 0;
}

/* Median, min and max of v[0..n) (finite ones; NAN when none). */
static void
med_range(double *v, size_t n, double *med, double *lo, double *hi)
{
    size_t m = 0;

    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            v[m++] = v[i];
    *med = *lo = *hi = NAN;
    if (m == 0)
        return;
    gsl_sort(v, 1, m);
    *med = gsl_stats_median_from_sorted_data(v, 1, m) + 0.0; /* never -0 */
    *lo = v[0] + 0.0;
    *hi = v[m - 1] + 0.0;
}

/* The fields the table summarises. */
enum field { F_R2, F_SPEARMAN, F_GAP, F_GAIN_TOKENS, F_MIN_REL };

static double
field_of(const struct row *r, enum field f)
{
    switch (f) {
    case F_R2:
        return r->r2;
    case F_SPEARMAN:
        return r->spearman;
    case F_GAP:
        return r->gap;
    case F_GAIN_TOKENS:
        return r->gain_tokens;
    case F_MIN_REL:
        return r->min_rel;
    }
    return NAN;
}

/* The rows of allocator a and objective obj at cut for noise L and window: field f into v. */
static size_t
gather(const struct study *s, size_t a, int obj, double cut, double L, double window,
       enum field field, double *v)
{
    size_t n = 0;

    for (size_t i = 0; i < s->n_rows; i++) {
        const struct row *r = &s->rows[i];

        if (r->allocator == a && r->objective == obj && fabs(r->cut - cut) < 1e-9 &&
            fabs(r->noise - L) < 1e-12 && fabs(r->window_s - window) < 1e-12)
            v[n++] = field_of(r, field);
    }
    return n;
}

/* The allocators drawn and printed: past the baselines (equal, oracle). */
#define FIRST  2
#define N_LINE (N_ALLOC - FIRST)

struct figure {
    size_t n_pts, n_dots;
    /* per objective and allocator: gap (median, range) against Spearman by noise level */
    double *x, *y, *lo, *hi;
    /* per objective and allocator: (mean GPUs, tokens/s gain) of each draw at dot_noise (1,
     * the shipped, when studied; else the first level) */
    double *gx, *gy;
    double dot_noise;
    char dot_title[80];
};

/* Prints the medians over the draws at a 30% cut per objective, allocator and noise level
 * (then each window), and keeps the figure's points. */
static void
print_table(const struct study *s, const double *noise, size_t n_noise, const double *windows,
            size_t n_windows, double *v, struct figure *f)
{
    printf("%-12s %-8s %6s %6s %8s  %-23s %-20s %7s\n", "allocator", "relative", "noise", "R^2",
           "Spearman", "gap recovered [range]", "tokens/s/job [range]", "min rel");
    for (int obj = 0; obj < N_OBJ; obj++)
        for (size_t a = FIRST; a < N_ALLOC; a++)
            for (size_t l = 0; l < n_noise + n_windows; l++) {
                const bool win = l >= n_noise;
                const double L = win ? 1 : noise[l], w = win ? windows[l - n_noise] : 0;
                double r2, rho, g, glo, ghi, t, tlo, thi, m, x0, x1;
                size_t n = gather(s, a, obj, 0.3, L, w, F_R2, v);
                char label[32], gap[48], tok[48];

                if (n == 0)
                    continue;
                med_range(v, n, &r2, &x0, &x1);
                gather(s, a, obj, 0.3, L, w, F_SPEARMAN, v);
                med_range(v, n, &rho, &x0, &x1);
                gather(s, a, obj, 0.3, L, w, F_GAP, v);
                med_range(v, n, &g, &glo, &ghi);
                gather(s, a, obj, 0.3, L, w, F_GAIN_TOKENS, v);
                med_range(v, n, &t, &tlo, &thi);
                gather(s, a, obj, 0.3, L, w, F_MIN_REL, v);
                med_range(v, n, &m, &x0, &x1);
                snprintf(label, sizeof label, win ? "1, %gs" : "%g", win ? w : L);
                snprintf(gap, sizeof gap, "%.2f [%.2f, %.2f]", g, glo, ghi);
                snprintf(tok, sizeof tok, "%.0f [%.0f, %.0f]", t, tlo, thi);
                printf("%-12s %-8s %6s %6.3f %8.3f  %-23s %-20s %7.3f\n", allocators[a],
                       obj ? "yes" : "no", label, r2, rho, gap, tok, m);
                if (!win) { /* by Spearman upwards: the noisiest first */
                    size_t at = ((size_t)obj * N_LINE + a - FIRST) * f->n_pts + n_noise - 1 - l;

                    f->x[at] = rho;
                    f->y[at] = g;
                    f->lo[at] = glo;
                    f->hi[at] = ghi;
                }
            }
    /* the dots: noise 1, run-averaged telemetry, each draw; NANs between them break the
     * line */
    for (int obj = 0; obj < N_OBJ; obj++)
        for (size_t a = FIRST; a < N_ALLOC; a++) {
            size_t k = 0, base = ((size_t)obj * N_LINE + a - FIRST) * f->n_dots;

            for (size_t i = 0; i < s->n_rows && k + 1 < f->n_dots; i++) {
                const struct row *r = &s->rows[i];

                if (r->allocator == a && r->objective == obj && fabs(r->cut - 0.3) < 1e-9 &&
                    fabs(r->noise - f->dot_noise) < 1e-12 && r->window_s <= 0) {
                    f->gx[base + k] = r->mean_gpus;
                    f->gy[base + k++] = r->gain_tokens;
                    f->gx[base + k] = f->gy[base + k] = NAN;
                    k++;
                }
            }
        }
}

/* The figure, three panels: the gap against Spearman per allocator under each objective,
 * the source's 0.63 marked (an allocator far below equal everywhere is left off its panel's
 * scale, and says so); and the tokens/s gain per job against the mean job size. */
static int
draw_figure(const struct figure *f, const char *path, struct pfs_diag *d)
{
    /* per panel: the allocators drawn (indices past FIRST), -1 ending */
    static const int shown[2][N_LINE + 1] = {{0, 1, 2, 3, 4, -1}, {0, 1, 4, -1}};
    static const char *const titles[2] = {"gap recovered in tokens/s, 30% cut",
                                          "every GPU alike (pfi-rank, pfi-share: far below 0)"};
    struct pfs_series series[3][N_LINE + 2];
    struct pfs_chart charts[3];
    char labels[3][N_LINE + 1][48];
    double ref_x[2][2] = {{INFINITY, -INFINITY}, {INFINITY, -INFINITY}},
           ref_y[2][2] = {{0.63, 0.63}, {1500, 1500}};
    size_t n[3] = {0, 0, 0};

    for (size_t i = 0; i < N_OBJ * N_LINE * f->n_pts; i++)
        if (isfinite(f->x[i]))
            ref_x[0][0] = fmin(ref_x[0][0], f->x[i]), ref_x[0][1] = fmax(ref_x[0][1], f->x[i]);
    for (size_t i = 0; i < N_OBJ * N_LINE * f->n_dots; i++)
        if (isfinite(f->gx[i]))
            ref_x[1][0] = fmin(ref_x[1][0], f->gx[i]), ref_x[1][1] = fmax(ref_x[1][1], f->gx[i]);
    for (int obj = 0; obj < N_OBJ; obj++) {
        for (const int *a = shown[obj]; *a >= 0; a++) {
            const size_t k = (size_t)obj * N_LINE + (size_t)*a;

            snprintf(labels[obj][n[obj]], sizeof labels[obj][n[obj]], "%s", allocators[*a + FIRST]);
            series[obj][n[obj]] = (struct pfs_series){.label = labels[obj][n[obj]],
                                                      .x = f->x + k * f->n_pts,
                                                      .y = f->y + k * f->n_pts,
                                                      .n = f->n_pts,
                                                      .colour = *a,
                                                      .markers = true,
                                                      .lo = f->lo + k * f->n_pts,
                                                      .hi = f->hi + k * f->n_pts};
            n[obj]++;
        }
        series[obj][n[obj]++] = (struct pfs_series){.label = "source: 0.63",
                                                    .x = ref_x[0],
                                                    .y = ref_y[0],
                                                    .n = 2,
                                                    .style = PFS_SERIES_REFERENCE};
        charts[obj] = (struct pfs_chart){.title = titles[obj],
                                         .x_label = "Spearman, predicted vs true PFI",
                                         .y_label = "(allocator - equal) / (oracle - equal)",
                                         .series = series[obj],
                                         .n_series = n[obj]};
    }
    /* the dots: pfi under each objective, and the PFI-blind proportional */
    for (int obj = 0; obj < N_OBJ + 1; obj++) {
        const size_t k = obj < N_OBJ ? (size_t)obj * N_LINE : N_LINE - 1;

        snprintf(labels[2][n[2]], sizeof labels[2][n[2]], "%s",
                 obj == 0   ? "pfi, tokens/s"
                 : obj == 1 ? "pfi, every GPU alike"
                            : "proportional");
        series[2][n[2]] = (struct pfs_series){.label = labels[2][n[2]],
                                              .x = f->gx + k * f->n_dots,
                                              .y = f->gy + k * f->n_dots,
                                              .n = f->n_dots,
                                              .colour = obj == 2 ? 4 : obj * 6,
                                              .markers = true};
        n[2]++;
    }
    series[2][n[2]++] = (struct pfs_series){.label = "source: 1.5k",
                                            .x = ref_x[1],
                                            .y = ref_y[1],
                                            .n = 2,
                                            .style = PFS_SERIES_REFERENCE};
    charts[2] = (struct pfs_chart){.title = f->dot_title,
                                   .x_label = "mean GPUs per job",
                                   .y_label = "tokens/s per job over equal",
                                   .series = series[2],
                                   .n_series = n[2]};
    return pfs__charts_write("the source study, reproduced (SYNTHETIC corpus; medians over "
                             "the draws, whiskers their range)",
                             charts, 3, path, (enum pfs_plot_format)pfs_cli_plot_format(path), d);
}

static int
summarise(const struct study *s, const double *noise, size_t n_noise, const double *windows,
          size_t n_windows, size_t n_draws, const char *fig, struct pfs_diag *d)
{
    const size_t n = N_OBJ * N_LINE;
    struct figure f = {.n_pts = n_noise, .n_dots = 2 * (n_draws + 1)};
    double *v = malloc((s->n_rows + 1) * sizeof *v);
    int rc;

    f.x = calloc(n * f.n_pts + 1, sizeof *f.x);
    f.y = calloc(n * f.n_pts + 1, sizeof *f.y);
    f.lo = calloc(n * f.n_pts + 1, sizeof *f.lo);
    f.hi = calloc(n * f.n_pts + 1, sizeof *f.hi);
    f.gx = malloc((n * f.n_dots + 1) * sizeof *f.gx);
    f.gy = malloc((n * f.n_dots + 1) * sizeof *f.gy);
    for (size_t i = 0; f.gx && f.gy && i < n * f.n_dots + 1; i++)
        f.gx[i] = f.gy[i] = NAN; /* (a draw with no row is no dot, not one at 0) */
    for (size_t i = 0; f.x && f.y && f.lo && f.hi && i < n * f.n_pts + 1; i++)
        f.x[i] = f.y[i] = f.lo[i] = f.hi[i] = NAN;
    f.dot_noise = noise[0];
    for (size_t l = 0; l < n_noise; l++)
        if (fabs(noise[l] - 1) < 1e-12)
            f.dot_noise = 1;
    snprintf(f.dot_title, sizeof f.dot_title, "tokens/s gained per job (noise %g, per draw)",
             f.dot_noise);
    if (!v || !f.x || !f.y || !f.lo || !f.hi || !f.gx || !f.gy) {
        rc = pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    } else {
        printf(
            "the source study, reproduced (SYNTHETIC corpus: the shipped mix and %zu draws, 131\n"
            "H200 jobs each; a 30%% cut; predictions out of fold; relative: every GPU alike):\n"
            "  the source measured a gap recovered of 0.63, about 1,500 tokens/s per job\n\n",
            n_draws);
        print_table(s, noise, n_noise, windows, n_windows, v, &f);
        rc = draw_figure(&f, fig, d);
    }
    free(v);
    free(f.x);
    free(f.y);
    free(f.lo);
    free(f.hi);
    free(f.gx);
    free(f.gy);
    return rc;
}

static int
study_source(int argc, char **argv)
{
    static const struct option opts[] = {
        {"draws", required_argument, 0, 'n'}, {"draw-seed", required_argument, 0, 's'},
        {"noise", required_argument, 0, 'L'}, {"windows", required_argument, 0, 'w'},
        {"cuts", required_argument, 0, 'c'},  {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    double noise[32] = {0, 0.5, 1, 2, 4, 8, 16, 32, 64}, windows[8] = {1, 30},
           cuts[PFS_N_CUTS] = {0.2, 0.3, 0.4};
    size_t n_noise = 9, n_windows = 2, n_cuts = 3;
    unsigned long n_draws = 20, seed = 1;
    const char *dir = "results";
    char csv[1024], plots[1024], fig[1100];
    struct study s = {0};
    struct pfs_diag d = {0};
    int c, rc = 0;

    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
        case 's':
            if (!pfs_cli_parse_count(optarg, c == 'n' ? &n_draws : &seed) ||
                (c == 'n' && n_draws > 1000))
                return pfs_cli_usage("study", "%s takes a non-negative integer%s, got '%s'",
                                     c == 'n' ? "--draws" : "--draw-seed",
                                     c == 'n' ? " up to 1000" : "", optarg);
            break;
        case 'L':
            if (parse_doubles(optarg, noise, 32, &n_noise, false) != 0)
                return pfs_cli_usage("study", "--noise takes up to 32 levels, got '%s'", optarg);
            for (size_t i = 0; i < n_noise; i++)
                if (!(noise[i] >= 0 && noise[i] <= 100))
                    return pfs_cli_usage("study", "--noise: each level in [0, 100], got %g",
                                         noise[i]);
            break;
        case 'w':
            if (strcmp(optarg, "none") == 0) {
                n_windows = 0;
                break;
            }
            if (parse_doubles(optarg, windows, 8, &n_windows, false) != 0)
                return pfs_cli_usage("study", "--windows takes up to 8 windows or none, got '%s'",
                                     optarg);
            for (size_t i = 0; i < n_windows; i++)
                if (!(windows[i] > 0 && windows[i] <= 86400))
                    return pfs_cli_usage("study", "--windows: each in (0, 86400] s, got %g",
                                         windows[i]);
            break;
        case 'c':
            if (parse_doubles(optarg, cuts, PFS_N_CUTS, &n_cuts, true) != 0)
                return pfs_cli_usage("study", "--cuts takes up to %d cuts, got '%s'", PFS_N_CUTS,
                                     optarg);
            for (size_t i = 0; i < n_cuts; i++)
                if (cut_index(cuts[i]) < 0)
                    return pfs_cli_usage("study",
                                         "--cuts: each of 10%%, 20%%, ... 50%% (the cuts "
                                         "PFI is labelled at), got %g",
                                         cuts[i]);
            break;
        case 'o':
            dir = optarg;
            break;
        case 'h':
            return fputs(pfs_cli_study_help, stdout), EXIT_OK;
        default:
            return pfs_cli_usage("study", "%s", "bad option");
        }
    }
    if (optind != argc)
        return pfs_cli_usage("study", "%s", "unexpected arguments");
    if (snprintf(csv, sizeof csv, "%s/study-source.csv", dir) >= (int)sizeof csv ||
        snprintf(plots, sizeof plots, "%s/plots", dir) >= (int)sizeof plots)
        return pfs_cli_usage("study", "%s", "the output folder's name is too long");
    snprintf(fig, sizeof fig, "%s/study-source.png", plots);
    for (size_t dd = 0; dd <= n_draws && rc == 0; dd++)
        for (size_t l = 0; l < n_noise + n_windows && rc == 0; l++) {
            struct pfs_synth_options o;

            pfs_synth_defaults(&o, 7);
            o.n_validation = 0;
            o.n_transfer = 0;
            if (dd > 0 && (rc = pfs_synth_draw(&o, n_draws, dd - 1, seed, &d)) != 0)
                break;
            o.telemetry_noise = l < n_noise ? noise[l] : 1;
            o.telemetry_window_s = l < n_noise ? 0 : windows[l - n_noise];
            rc = one_corpus(&s, &o, cuts, n_cuts, &d);
        }
    if (rc == 0 && pfs__mkdir_parents(fig) != 0)
        rc = pfs__diag_set(&d, PFS_EIO, plots, 0, 0, NULL, "cannot create the folder");
    if (rc == 0 && (rc = pfs_cli_write_output(csv, write_csv, &s, &d)) == 0)
        rc = summarise(&s, noise, n_noise, windows, n_windows, n_draws, fig, &d);
    if (rc == 0)
        printf("\nwrote %s and %s\n", csv, fig);
    free(s.rows);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}

int
pfs_cli_study(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "source") == 0)
        return study_source(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "tree") == 0)
        return pfs_cli_study_tree(argc - 1, argv + 1);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return fputs(pfs_cli_study_help, stdout), EXIT_OK;
    return pfs_cli_usage("study", "%s", "expected a study's name: source or tree");
}
