/*
 * sim/cli/model.c - pfisim gpus, model and fit: the GPU profiles, the DVFS model's curve of one
 * job, and the model fitted to measured curves (docs/model.md).
 */
#include <errno.h>
#include <getopt.h>
#include <gsl/gsl_errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const char pfs_cli_fit_help[] =
    "usage: pfisim fit CURVES.csv [--csv] [--profile] [--shared | --loo [--prior]]\n"
    "                  [--holdout-below FRAC] [--save FIT.cfg]\n"
    "\n"
    "Fits the DVFS model (docs/model.md) to every job of a curves CSV and reports, per job,\n"
    "the fit error and PFI at 10-50% cuts.\n"
    "\n"
    "  --csv       one row per job: job_id,gpu,n_gpus,rmse_throughput,rmse_power,\n"
    "              pfi_10..pfi_50 (measured; empty where the cut is outside the measured\n"
    "              caps), then the fitted parameters t_max,unit,alpha,activity,mem_w,\n"
    "              cap_fill,uncapped_w, model_pfi_10..model_pfi_50 and the profile's "
    "v_min,f_knee_mhz\n"
    "  --profile   first fit the GPU's voltage shape (v_min, knee) jointly to all jobs on\n"
    "              that GPU, then fit the jobs with it\n"
    "  --holdout-below FRAC  prediction, not interpolation: fit each job on its caps at or\n"
    "              above FRAC of the default limit (0.75: the top quarter) and report the\n"
    "              error of T/T0 at the caps held out below (per job: points fitted, points\n"
    "              held out, RMSE and worst absolute error; --csv: job_id,gpu,n_fit,n_held,\n"
    "              rmse_heldout,max_abs_heldout)\n"
    "  --shared    shared GPU physics: the voltage shape, one clock-independent draw and one\n"
    "              cap fill for all jobs of a GPU, two parameters (alpha, activity) per job,\n"
    "              fitted jointly (with --holdout-below: on the top caps, scored below),\n"
    "              each parameter with its standard error from the Jacobian (inf: not\n"
    "              identified by the caps fitted); --csv: job_id,gpu,n_fit,rmse_fit,n_held,\n"
    "              rmse_heldout,alpha,activity,mem_w,cap_fill,v_min,f_knee_mhz, then se_ of\n"
    "              alpha,activity,mem_w,cap_fill,v_min,f_knee_mhz\n"
    "  --loo       leave one job out: for each job, the shared physics fitted on every cap\n"
    "              of the other jobs of its GPU, the job's alpha and activity on its caps at\n"
    "              or above FRAC of the default limit (--holdout-below, default 0.75), and\n"
    "              the error of T/T0 at its caps below (--csv: job_id,gpu,n_others,n_fit,\n"
    "              rmse_fit,n_held,rmse_heldout,alpha,activity,mem_w,cap_fill,v_min,\n"
    "              f_knee_mhz,se_alpha,se_activity; inf: not identified by its caps)\n"
    "  --prior     with --loo: a prior on the job's alpha from the other jobs' alphas\n"
    "              (their mean and sd; docs/model.md)\n"
    "  --save FIT.cfg  write the fitted models (with --holdout-below: those fitted on the\n"
    "              top caps) for pfisim model --fit\n"
    "\n"
    "rmse_throughput is the RMSE of T/T0 (T0: throughput at the highest measured cap),\n"
    "rmse_power the RMSE of per-GPU power as a fraction of the default limit. In the table a\n"
    "PFI marked * comes from the fitted model because the cut is outside the measured caps.\n";

const char pfs_cli_model_help[] =
    "usage: pfisim model GPU [--alpha A] [--activity A] [--mem-w W] [--t-max T]\n"
    "                        [--step W] [--caps W,W,...] [--csv]\n"
    "       pfisim model --fit FIT.cfg --job ID [--step W] [--caps W,W,...] [--csv]\n"
    "\n"
    "Prints the DVFS model's curve for one job on one GPU profile: per cap, the SM clock,\n"
    "the per-GPU draw and the throughput, then PFI at 10-50% cuts.\n"
    "\n"
    "  --alpha A     compute-bound share of a step at f_max, 0..1 (default 0.8)\n"
    "  --activity A  dynamic-power activity factor, 0..1.5 (default 0.9)\n"
    "  --mem-w W     per-GPU draw above idle that does not scale with the clock (default 40)\n"
    "  --t-max T     throughput at f_max (default 1, i.e. relative)\n"
    "  --step W      cap step in W (default 50)\n"
    "  --caps LIST   these caps (W, comma-separated) instead of the profile's range by --step\n"
    "  --fit FIT.cfg a model fitted by pfisim fit --save: job ID's parameters on its GPU\n"
    "                profile with the voltage shape it was fitted with\n"
    "  --job ID      the fitted job to evaluate\n";

const char pfs_cli_gpus_help[] =
    "usage: pfisim gpus [NAME] [--csv]\n"
    "\n"
    "Lists the GPU profiles built in from configs/gpus/: their point values, and whether\n"
    "measurements back them or they are EXTRAPOLATED (Blackwell: b100, b200, gb200). With\n"
    "NAME: every parameter of that profile, its value or its range [lo, hi] (the point is\n"
    "the midpoint; run and alloc --uncertainty draw across it) and what backs it: measured,\n"
    "published (with the source) or assumed (with the reason) (docs/model.md).\n";

/* ---------------------------------------------------------------------------------------
 * pfisim gpus
 */

/* Every parameter of one profile: value or range, kind, source. */
static int
gpu_detail(const char *name, bool csv)
{
    struct pfs_diag d = {0};
    struct pfs_gpu g;
    int rc = pfs_gpu_find(name, &g, &d);

    if (rc)
        return pfs_cli_report(&d, rc);
    if (csv)
        puts("setting,value,lo,hi,kind,source");
    else
        printf("%s: %s%s\n%-21s %10s %21s %-9s %s\n", g.name, g.model,
               g.extrapolated ? " (EXTRAPOLATED: no measurement of this GPU)" : "", "setting",
               "value", "range", "kind", "source or reason");
    for (size_t k = 0; k < PFS_GPU_N_PARAMS; k++) {
        char src[600], range[48] = "";
        double v = pfs_gpu_param(&g, k);
        bool derived = (k == 4 && g.dyn_derived) || (k == 7 && g.knee_derived);

        if (!isfinite(g.lo[k]) && !derived)
            continue; /* the knee given in MHz: no fraction */
        if ((rc = pfs_gpu_source(name, k, src, sizeof src, &d)))
            return pfs_cli_report(&d, rc);
        if (derived)
            pfs__strlcpy(src, k == 4 ? "derived: max limit - idle" : "derived: knee_frac x max",
                         sizeof src);
        if (g.hi[k] > g.lo[k])
            snprintf(range, sizeof range, "[%g, %g]", g.lo[k], g.hi[k]);
        if (csv) {
            printf("%s,%.6g,%.6g,%.6g,%s,", pfs_gpu_param_name(k), v,
                   isfinite(g.lo[k]) ? g.lo[k] : v, isfinite(g.hi[k]) ? g.hi[k] : v,
                   derived ? "derived" : pfs_gpu_kind_name(g.kind[k]));
            pfs_cli_csv_quoted(src);
            putchar('\n');
        } else {
            printf("%-21s %10.4g %21s %-9s %s\n", pfs_gpu_param_name(k), v, range,
                   derived ? "derived" : pfs_gpu_kind_name(g.kind[k]), src);
        }
    }
    return EXIT_OK;
}

int
pfs_cli_gpus(int argc, char **argv)
{
    static const struct option opts[] = {
        {"csv", no_argument, 0, 'c'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    bool csv = false;
    int c;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'c')
            csv = true;
        else if (c == 'h')
            return fputs(pfs_cli_gpus_help, stdout), EXIT_OK;
        else
            return pfs_cli_usage("gpus", "%s", "bad option");
    }
    if (optind + 1 == argc)
        return gpu_detail(argv[optind], csv);
    if (optind != argc)
        return pfs_cli_usage("gpus", "unexpected argument '%s'", argv[optind + 1]);
    if (csv)
        puts("name,model,min_limit_w,default_limit_w,max_limit_w,idle_w,f_min_mhz,f_max_mhz,"
             "f_knee_mhz,v_min,mem_bw_tbs,mem_gb,tflops_bf16,extrapolated,uncertain");
    else
        printf("%-10s %-32s %15s %6s %6s %8s %5s  %s\n", "name", "model", "limit_w min/def/max",
               "idle_w", "f_max", "mem_TB/s", "v_min", "backed by");
    for (size_t i = 0; pfs_gpu_name(i); i++) {
        struct pfs_diag d = {0};
        struct pfs_gpu g;
        int rc = pfs_gpu_find(pfs_gpu_name(i), &g, &d);

        if (rc)
            return pfs_cli_report(&d, rc);
        if (csv)
            printf("%s,\"%s\",%g,%g,%g,%g,%g,%g,%g,%g,%g,%g,%g,%d,%d\n", g.name, g.model,
                   g.min_limit_w, g.default_limit_w, g.max_limit_w, g.idle_w, g.f_min_mhz,
                   g.f_max_mhz, g.f_knee_mhz, g.v_min, g.mem_bw_tbs, g.mem_gb, g.tflops_bf16,
                   g.extrapolated, pfs_gpu_uncertain(&g));
        else
            printf("%-10s %-32.32s %4.0f/%4.0f/%4.0f %6.0f %6.0f %8.3g %5.3g  %s\n", g.name,
                   g.model, g.min_limit_w, g.default_limit_w, g.max_limit_w, g.idle_w, g.f_max_mhz,
                   g.mem_bw_tbs, g.v_min,
                   g.extrapolated ? "EXTRAPOLATED, ranges (pfisim gpus NAME)" : "measurements");
    }
    return EXIT_OK;
}

/* ---------------------------------------------------------------------------------------
 * pfisim model
 */

static const double cuts[] = {0.1, 0.2, 0.3, 0.4, 0.5};
#define N_CUTS (sizeof cuts / sizeof cuts[0])

int
pfs_cli_model(int argc, char **argv)
{
    static const struct option opts[] = {{"alpha", required_argument, 0, 'a'},
                                         {"activity", required_argument, 0, 'A'},
                                         {"mem-w", required_argument, 0, 'm'},
                                         {"t-max", required_argument, 0, 't'},
                                         {"step", required_argument, 0, 's'},
                                         {"csv", no_argument, 0, 'c'},
                                         {"caps", required_argument, 0, 'C'},
                                         {"fit", required_argument, 0, 'F'},
                                         {"job", required_argument, 0, 'J'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *fit_path = NULL, *job_id = NULL, *caps_arg = NULL;
    double caps[1024];
    size_t n_caps = 0;
    struct pfs_fitset *fs = NULL;
    struct pfs_dvfs_job j = {
        .t_max = 1.0, .alpha = 0.8, .activity = 0.9, .mem_w = 40.0, .cap_fill = 1.0};
    struct pfs_diag d = {0};
    struct pfs_gpu g;
    struct pfs_curve *curve;
    double step = 50.0, *dst;
    bool csv = false;
    const char *set = NULL; /* a job parameter given (--fit gives them all: it was ignored) */
    int c, rc;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'a':
        case 'A':
        case 'm':
        case 't':
        case 's':
            dst = c == 'a'   ? &j.alpha
                  : c == 'A' ? &j.activity
                  : c == 'm' ? &j.mem_w
                  : c == 't' ? &j.t_max
                             : &step;
            if (!pfs__parse_double(optarg, dst))
                return pfs_cli_usage("model", "expected a number, got '%s'", optarg);
            if (c != 's')
                set = c == 'a'   ? "--alpha"
                      : c == 'A' ? "--activity"
                      : c == 'm' ? "--mem-w"
                                 : "--t-max";
            break;
        case 'c':
            csv = true;
            break;
        case 'C':
            caps_arg = optarg;
            break;
        case 'F':
            fit_path = optarg;
            break;
        case 'J':
            job_id = optarg;
            break;
        case 'h':
            return fputs(pfs_cli_model_help, stdout), EXIT_OK;
        default:
            return pfs_cli_usage("model", "%s", "bad option");
        }
    }
    if (caps_arg) {
        char buf[4096];

        if (!pfs__strlcpy(buf, caps_arg, sizeof buf))
            return pfs_cli_usage("model", "%s", "--caps: too long");
        for (char *tok = buf, *comma; tok; tok = comma ? comma + 1 : NULL) {
            if ((comma = strchr(tok, ',')) != NULL)
                *comma = '\0';
            if (n_caps == 1024 || !pfs__parse_double(tok, &caps[n_caps++]) ||
                !(caps[n_caps - 1] > 0))
                return pfs_cli_usage("model", "--caps takes positive watts, W,W,..., got '%s'",
                                     caps_arg);
        }
    }
    if (!(step > 0))
        return pfs_cli_usage("model", "%s", "--step must be positive");
    if (fit_path) {
        const struct pfs_fitted_job *fj;

        if (!job_id || optind != argc)
            return pfs_cli_usage("model", "%s", "--fit takes --job ID and no GPU name");
        if (set)
            return pfs_cli_usage("model", "--fit gives the job's parameters: not %s", set);
        if ((rc = pfs_fitset_load(fit_path, &fs, &d)) != 0)
            return pfs_cli_report(&d, rc);
        if (!(fj = pfs_fitset_find(fs, job_id))) {
            rc = pfs__diag_set(&d, PFS_ENOTFOUND, fit_path, 0, 0, "job",
                               "no fitted job '%s' in the file", job_id);
            pfs_fitset_free(fs);
            return pfs_cli_report(&d, rc);
        }
        if ((rc = pfs_gpu_find(fj->gpu, &g, &d)) != 0) {
            pfs_fitset_free(fs);
            return pfs_cli_report(&d, rc);
        }
        g.v_min = fj->v_min;
        g.f_knee_mhz = fj->f_knee_mhz;
        j = fj->job;
        pfs_fitset_free(fs);
    } else {
        if (job_id || optind + 1 != argc)
            return pfs_cli_usage("model", "%s", "expected one GPU profile name");
        if ((rc = pfs_gpu_find(argv[optind], &g, &d)) != 0)
            return pfs_cli_report(&d, rc);
    }
    if (j.activity > PFS_DVFS_ACTIVITY_MAX)
        return pfs_cli_usage("model", "%s", "--activity must be at most 1.5");
    /* (past 1,024 caps the range was cut short without a word: 200-201 W at --step 0.001) */
    if (n_caps == 0 && (g.max_limit_w - g.min_limit_w) / step + 1 > 1024)
        return pfs_cli_usage("model", "--step %g gives %.0f caps over %g-%g W: at most 1024", step,
                             floor((g.max_limit_w - g.min_limit_w) / step + 1e-9) + 1,
                             g.min_limit_w, g.max_limit_w);
    for (size_t k = 0; k < n_caps; k++)
        if (caps[k] < g.min_limit_w * (1 - 1e-12) || caps[k] > g.max_limit_w * (1 + 1e-12)) {
            fprintf(stderr,
                    "pfisim model: warning: %s's limits are %g-%g W: a cap of %g W is no setting "
                    "of it, shown as the model extends%s\n",
                    g.name, g.min_limit_w, g.max_limit_w, caps[k],
                    caps[k] > g.max_limit_w ? " (the clock at its highest)" : "");
            break;
        }
    if ((rc = pfs_curve_model_new(&g, &j, &curve, &d)) != 0)
        return pfs_cli_report(&d, rc);

    if (csv)
        puts("cap_w,f_mhz,power_w,throughput,rel_throughput");
    else
        printf("# %s, model job: alpha %g, activity %g, mem_w %g W (uncapped draw %.1f W)\n"
               "%8s %8s %9s %12s %8s\n",
               g.name, j.alpha, j.activity, j.mem_w, pfs_dvfs_power_w(&g, &j, g.f_max_mhz), "cap_w",
               "f_mhz", "power_w", "throughput", "T/T0");
    if (n_caps == 0)
        for (double cap = g.min_limit_w; cap <= g.max_limit_w + 1e-9 && n_caps < 1024; cap += step)
            caps[n_caps++] = cap;
    for (size_t k = 0; k < n_caps; k++) {
        double cap = caps[k];
        struct pfs_dvfs_point pt, top;

        pfs_dvfs_eval(&g, &j, cap, &pt);
        pfs_dvfs_eval(&g, &j, g.default_limit_w, &top);
        printf(csv ? "%g,%.6g,%.6g,%.6g,%.6g\n" : "%8g %8.1f %9.1f %12.6g %8.4f\n", cap, pt.f_mhz,
               pt.power_w, pt.throughput,
               top.throughput > 0 ? pt.throughput / top.throughput : 0.0);
    }
    if (!csv) {
        printf("PFI (P0 = %g W):", g.default_limit_w);
        for (size_t k = 0; k < N_CUTS; k++) {
            double pfi;

            if (pfs_pfi(curve, g.default_limit_w, cuts[k], &pfi) == 0)
                printf("  %.0f%%: %.3f", cuts[k] * 100, pfi);
            else
                printf("  %.0f%%: -", cuts[k] * 100);
        }
        putchar('\n');
    }
    pfs_curve_free(curve);
    return EXIT_OK;
}

/* ---------------------------------------------------------------------------------------
 * pfisim fit
 */

struct fit_row {
    bool fitted; /* fit holds this job's model (a job too short for --holdout-below has none) */
    const struct pfs_job_curve *jc;
    struct pfs_gpu gpu; /* the profile used, with a fitted shape under --profile */
    struct pfs_fit fit;
    double pfi[N_CUTS];       /* measured, NAN where out of range */
    double model_pfi[N_CUTS]; /* from the fit */
};

static double
median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, pfs__cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The width of the widest job id of rows[n], at least 6 (the "job_id" header). */
static int
id_width(const struct fit_row *rows, size_t n)
{
    int w = 6;

    for (size_t i = 0; i < n; i++)
        if ((int)strlen(rows[i].jc->job_id) > w)
            w = (int)strlen(rows[i].jc->job_id);
    return w;
}

/* RMSE of T/T0 at job jc's caps below lim (and at or above the profile's minimum limit), on
 * profile g with parameters j; *h: the number of such caps. */
static double
heldout_rmse(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, const struct pfs_job_curve *jc,
             double lim, size_t *h)
{
    double ss = 0, t0 = jc->throughput[jc->n_points - 1];

    *h = 0;
    for (size_t p = 0; p < jc->n_points; p++) {
        struct pfs_dvfs_point pt;

        if (jc->cap_w[p] >= lim * (1 - 1e-12) || jc->cap_w[p] < g->min_limit_w)
            continue;
        pfs_dvfs_eval(g, j, jc->cap_w[p], &pt);
        ss += pow((pt.throughput - jc->throughput[p]) / t0, 2);
        (*h)++;
    }
    return *h ? sqrt(ss / (double)*h) : (double)NAN;
}

/* Fits the voltage shape of every GPU named in the set, jointly over its jobs. */
static int
fit_profiles(struct pfs_curveset *cs, struct fit_row *rows, struct pfs_diag *d)
{
    const struct pfs_job_curve **jobs = malloc(cs->n_jobs * sizeof *jobs);
    int rc = 0;

    if (!jobs)
        return pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t i = 0; i < cs->n_jobs && rc == 0; i++) {
        struct pfs_profile_fit pf;
        size_t n = 0;
        bool seen = false;

        for (size_t k = 0; k < i; k++)
            seen = seen || strcmp(cs->jobs[k].gpu, cs->jobs[i].gpu) == 0;
        if (seen)
            continue;
        for (size_t k = i; k < cs->n_jobs; k++)
            if (strcmp(cs->jobs[k].gpu, cs->jobs[i].gpu) == 0)
                jobs[n++] = &cs->jobs[k];
        rc = pfs_fit_profile(&rows[i].gpu, jobs, n, &pf, d);
        if (rc == 0) {
            fprintf(stderr,
                    "pfisim fit: %s voltage shape over %zu jobs: v_min %.3f, knee %.0f MHz "
                    "(%.3f of f_max); RMSE T/T0 %.4f, P/limit %.4f\n",
                    rows[i].gpu.name, n, pf.v_min, pf.f_knee_mhz,
                    pf.f_knee_mhz / rows[i].gpu.f_max_mhz, pf.rmse_throughput, pf.rmse_power);
            for (size_t k = i; k < cs->n_jobs; k++)
                if (strcmp(cs->jobs[k].gpu, cs->jobs[i].gpu) == 0)
                    rows[k].gpu = rows[i].gpu;
        }
    }
    free(jobs);
    return rc;
}

static void
print_fit_csv(const struct fit_row *rows, size_t n)
{
    puts("job_id,gpu,n_gpus,rmse_throughput,rmse_power,pfi_10,pfi_20,pfi_30,pfi_40,pfi_50,"
         "t_max,unit,alpha,activity,mem_w,cap_fill,uncapped_w,model_pfi_10,model_pfi_20,model_pfi_"
         "30,"
         "model_pfi_40,model_pfi_50,v_min,f_knee_mhz");
    for (size_t i = 0; i < n; i++) {
        const struct fit_row *r = &rows[i];
        const struct pfs_fit *f = &r->fit;

        pfs__csv_put_text(stdout, r->jc->job_id); /* (quoted where CSV needs it) */
        printf(",%s,%d,%.6g,%.6g", r->jc->gpu, r->jc->n_gpus, f->rmse_throughput, f->rmse_power);
        for (size_t k = 0; k < N_CUTS; k++) {
            if (isnan(r->pfi[k]))
                fputs(",", stdout);
            else
                printf(",%.6g", r->pfi[k]);
        }
        printf(",%.6g,%s,%.6g,%.6g,%.6g,%.6g,%.6g", f->job.t_max, r->jc->unit, f->job.alpha,
               f->job.activity, f->job.mem_w, f->job.cap_fill, f->uncapped_w);
        for (size_t k = 0; k < N_CUTS; k++)
            printf(",%.6g", r->model_pfi[k]);
        printf(",%.6g,%.6g\n", r->gpu.v_min, r->gpu.f_knee_mhz);
    }
}

static void
print_fit_table(const struct fit_row *rows, size_t n)
{
    double *rt = malloc(n * sizeof *rt), *rp = malloc(n * sizeof *rp);
    size_t worst = 0;

    int w = id_width(rows, n); /* the job_id column is as wide as the longest id */

    printf("%-*s %-9s %4s %3s %7s %7s %7s %7s %7s %7s %7s %6s %6s %6s %5s\n", w, "job_id", "gpu",
           "gpus", "pts", "rmse_T", "rmse_P", "pfi_10", "pfi_20", "pfi_30", "pfi_40", "pfi_50",
           "alpha", "activ", "mem_w", "fill");
    for (size_t i = 0; i < n; i++) {
        const struct fit_row *r = &rows[i];

        printf("%-*s %-9s %4d %3zu %7.4f %7.4f", w, r->jc->job_id, r->jc->gpu, r->jc->n_gpus,
               r->jc->n_points, r->fit.rmse_throughput, r->fit.rmse_power);
        for (size_t k = 0; k < N_CUTS; k++) {
            if (isnan(r->pfi[k]))
                printf(" %6.3f*", r->model_pfi[k]);
            else
                printf(" %7.3f", r->pfi[k]);
        }
        printf(" %6.3f %6.3f %6.1f %5.3f\n", r->fit.job.alpha, r->fit.job.activity,
               r->fit.job.mem_w, r->fit.job.cap_fill);
        if (rt && rp) {
            rt[i] = r->fit.rmse_throughput;
            rp[i] = r->fit.rmse_power;
        }
        if (r->fit.rmse_throughput > rows[worst].fit.rmse_throughput)
            worst = i;
    }
    if (rt && rp && n > 0) {
        printf("\n%zu jobs. RMSE of T/T0: median %.4f, worst %.4f (%s). "
               "RMSE of P/limit: median %.4f.\n",
               n, median(rt, n), rows[worst].fit.rmse_throughput, rows[worst].jc->job_id,
               median(rp, n));
        printf("* PFI from the fitted model: the cut lies outside the measured caps.\n");
    }
    free(rt);
    free(rp);
}

/* --holdout-below: each job fitted on its caps at or above frac x its default limit, the
 * model then asked for the caps below; T/T0 with T0 the measured throughput at the highest
 * cap, as in the full fit. A job with fewer than PFS_FIT_MIN_POINTS caps to fit, or none held
 * out, is listed as such and left out of the summary. */
static int
fit_holdout(struct fit_row *rows, size_t n, double frac, bool csv, struct pfs_diag *d)
{
    double *rmse = malloc((n + 1) * sizeof *rmse), *worst = malloc((n + 1) * sizeof *worst);
    size_t m = 0, within = 0;
    int w = id_width(rows, n), rc = 0;

    if (!rmse || !worst) {
        free(rmse);
        free(worst);
        return pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    if (csv)
        puts("job_id,gpu,n_fit,n_held,rmse_heldout,max_abs_heldout");
    else
        printf("fitted on caps >= %.0f%% of the default limit, asked for the caps below\n"
               "%-*s %-9s %5s %6s %12s %15s\n",
               100 * frac, w, "job_id", "gpu", "n_fit", "n_held", "rmse_heldout",
               "max_abs_heldout");
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct pfs_job_curve *jc = rows[i].jc;
        const struct pfs_gpu *g = &rows[i].gpu;
        double lim = frac * g->default_limit_w, t0 = jc->throughput[jc->n_points - 1];
        double caps[PFS_PWL_MAX], tp[PFS_PWL_MAX], pw[PFS_PWL_MAX], ss = 0, mx = 0;
        struct pfs_job_curve top = *jc;
        struct pfs_fit fit;
        struct pfs_curve *model = NULL;
        size_t k = 0, held = 0;

        for (size_t p = 0; p < jc->n_points && k < PFS_PWL_MAX; p++)
            if (jc->cap_w[p] >= lim * (1 - 1e-12)) {
                caps[k] = jc->cap_w[p];
                tp[k] = jc->throughput[p];
                pw[k++] = jc->power_w[p];
            }
        top.n_points = k;
        top.cap_w = caps;
        top.throughput = tp;
        top.power_w = pw;
        if (k < PFS_FIT_MIN_POINTS || k == jc->n_points) {
            if (!csv)
                printf("%-*s %-9s %5zu %6zu %12s %15s\n", w, jc->job_id, jc->gpu, k,
                       jc->n_points - k, "-", k < PFS_FIT_MIN_POINTS ? "(too few to fit)" : "-");
            continue;
        }
        if ((rc = pfs_fit_job(g, &top, &fit, d)) != 0 ||
            (rc = pfs_curve_model_new(g, &fit.job, &model, d)) != 0)
            break;
        rows[i].fit = fit;
        rows[i].fitted = true;
        for (size_t p = 0; p < jc->n_points; p++) {
            struct pfs_curve_point pt;

            if (jc->cap_w[p] >= lim * (1 - 1e-12) || pfs_curve_eval(model, jc->cap_w[p], &pt))
                continue; /* fitted, or below what the profile can set */
            double e = (pt.throughput - jc->throughput[p]) / t0;

            ss += e * e;
            mx = fmax(mx, fabs(e));
            held++;
        }
        pfs_curve_free(model);
        if (held == 0)
            continue;
        rmse[m] = sqrt(ss / (double)held);
        worst[m] = mx;
        within += rmse[m] <= 0.03;
        if (csv) {
            pfs__csv_put_text(stdout, jc->job_id);
            printf(",%s,%zu,%zu,%.6g,%.6g\n", jc->gpu, k, held, rmse[m], mx);
        } else
            printf("%-*s %-9s %5zu %6zu %12.4f %15.4f\n", w, jc->job_id, jc->gpu, k, held, rmse[m],
                   mx);
        m++;
    }
    if (rc == 0 && !csv && m > 0) {
        double med = median(rmse, m), wmax = 0;

        for (size_t i = 0; i < m; i++)
            wmax = fmax(wmax, rmse[i]);
        printf("\n%zu jobs predicted. Held-out RMSE of T/T0: median %.4f, worst %.4f; %zu of %zu "
               "within 0.03.\n",
               m, med, wmax, within, m);
    }
    free(rmse);
    free(worst);
    return rc;
}

/* --shared: the jobs of each GPU fitted together with shared physics (pfs_fit_shared), on
 * every cap, or with --holdout-below on the top caps and scored on the caps below. */
static int
fit_shared_cli(struct fit_row *rows, size_t n, double frac, bool csv, struct pfs_diag *d)
{
    const struct pfs_job_curve **jobs = malloc((n + 1) * sizeof *jobs);
    struct pfs_fit *fits = malloc((n + 1) * sizeof *fits);
    size_t *at = malloc((n + 1) * sizeof *at);
    double *all = malloc((n + 1) * sizeof *all), *held = malloc((n + 1) * sizeof *held);
    size_t n_all = 0, n_held = 0;
    int rc = 0, w = id_width(rows, n);

    if (!jobs || !fits || !at || !all || !held) {
        rc = pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    if (csv)
        puts("job_id,gpu,n_fit,rmse_fit,n_held,rmse_heldout,alpha,activity,mem_w,cap_fill,v_min,"
             "f_knee_mhz,se_alpha,se_activity,se_mem_w,se_cap_fill,se_v_min,se_f_knee_mhz");
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct pfs_gpu shared;
        struct pfs_shared_se sse;
        size_t m = 0;
        bool seen = false;
        double lim = frac * rows[i].gpu.default_limit_w;

        for (size_t k = 0; k < i; k++)
            seen = seen || strcmp(rows[k].jc->gpu, rows[i].jc->gpu) == 0;
        if (seen)
            continue;
        for (size_t k = i; k < n; k++)
            if (strcmp(rows[k].jc->gpu, rows[i].jc->gpu) == 0) {
                size_t used = 0;

                for (size_t p = 0; p < rows[k].jc->n_points; p++)
                    used += rows[k].jc->cap_w[p] >= lim * (1 - 1e-12);
                if (used >= 2) { /* a job with fewer caps to fit is left out */
                    at[m] = k;
                    jobs[m++] = rows[k].jc;
                }
            }
        if (m == 0)
            continue;
        if ((rc = pfs_fit_shared(&rows[i].gpu, jobs, m, lim, &shared, fits, &sse, d)) != 0)
            break;
        if (!csv)
            printf("%s, %zu jobs, fitted on caps >= %.0f W (residual sd %.4f, %zu dof), shared "
                   "+/- standard error:\n  v_min %.3f +/- %.3f, knee %.0f +/- %.0f MHz, mem_w %.1f "
                   "+/- %.1f W, cap_fill %.3f +/- %.3f\n%-*s %5s %8s %6s %12s %6s %6s %8s %6s\n",
                   shared.name, m, lim, sse.sigma, sse.dof, shared.v_min, sse.v_min,
                   shared.f_knee_mhz, sse.f_knee_mhz, fits[0].job.mem_w, sse.mem_w,
                   fits[0].job.cap_fill, sse.cap_fill, w, "job_id", "n_fit", "rmse_fit", "n_held",
                   "rmse_heldout", "alpha", "se", "activity", "se");
        for (size_t q = 0; q < m; q++) {
            const struct pfs_job_curve *jc = jobs[q];
            size_t h;
            double rmse = heldout_rmse(&shared, &fits[q].job, jc, lim, &h);

            all[n_all++] = fits[q].rmse_throughput;
            if (h)
                held[n_held++] = rmse;
            rows[at[q]].fit = fits[q];
            rows[at[q]].gpu = shared;
            rows[at[q]].fitted = true;
            if (csv) {
                pfs__csv_put_text(stdout, jc->job_id);
                printf(",%s,%zu,%.6g,%zu,", jc->gpu, fits[q].n_points, fits[q].rmse_throughput, h);
                if (h)
                    printf("%.6g", held[n_held - 1]);
                printf(",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n",
                       fits[q].job.alpha, fits[q].job.activity, fits[q].job.mem_w,
                       fits[q].job.cap_fill, shared.v_min, shared.f_knee_mhz, fits[q].se_alpha,
                       fits[q].se_activity, sse.mem_w, sse.cap_fill, sse.v_min, sse.f_knee_mhz);
            } else {
                char hb[32] = "-";

                if (h)
                    snprintf(hb, sizeof hb, "%.4f", held[n_held - 1]);
                printf("%-*s %5zu %8.4f %6zu %12s %6.3f %6.3f %8.3f %6.3f\n", w, jc->job_id,
                       fits[q].n_points, fits[q].rmse_throughput, h, hb, fits[q].job.alpha,
                       fits[q].se_alpha, fits[q].job.activity, fits[q].se_activity);
            }
        }
    }
    if (rc == 0 && !csv && n_all) {
        double worst = 0;

        for (size_t i = 0; i < n_all; i++)
            worst = fmax(worst, all[i]);
        printf("\n%zu jobs. RMSE of T/T0 on the fitted caps: median %.4f, worst %.4f.", n_all,
               median(all, n_all), worst);
        if (n_held) {
            worst = 0;
            for (size_t i = 0; i < n_held; i++)
                worst = fmax(worst, held[i]);
            printf(" Held out: median %.4f, worst %.4f.", median(held, n_held), worst);
        }
        putchar('\n');
    }
out:
    free(jobs);
    free(fits);
    free(at);
    free(all);
    free(held);
    return rc;
}

/* One job's leave-one-out fold (loo_fold): skipped (no other job on its GPU, or under 2
 * caps of its own to fit), failed (rc, d), or its fit. */
struct loo_fold {
    bool skipped;
    int rc;
    struct pfs_diag d;
    size_t m, h; /* the other jobs fitted; its caps held out */
    struct pfs_gpu shared;
    struct pfs_fit own;
    double rmse; /* over its caps held out */
};

/* The folds, taken in turn by up to one thread a CPU: each is two fits of its own, the shared
 * one of every other job of the GPU nearly all of the time (some 3 s of CPU a fold on the
 * corpus's 189 jobs). */
struct loo_work {
    struct fit_row *rows;
    size_t n;
    double frac;
    bool prior;
    struct loo_fold *f;
    size_t next;
    pthread_mutex_t lock;
};

/* Fold i into w->f[i]; jobs and fits: room for n. */
static void
loo_fold(struct loo_work *w, size_t i, const struct pfs_job_curve **jobs, struct pfs_fit *fits)
{
    struct fit_row *rows = w->rows;
    const struct pfs_job_curve *jc = rows[i].jc;
    struct loo_fold *f = &w->f[i];
    double lim = w->frac * rows[i].gpu.default_limit_w;
    struct pfs_shared_se se;
    struct pfs_alpha_prior ap;
    bool has_prior;
    size_t used = 0;

    f->m = 0;
    for (size_t k = 0; k < w->n; k++)
        if (k != i && strcmp(rows[k].jc->gpu, jc->gpu) == 0 && rows[k].jc->n_points >= 2)
            jobs[f->m++] = rows[k].jc;
    for (size_t p = 0; p < jc->n_points; p++)
        used += jc->cap_w[p] >= lim * (1 - 1e-12);
    if (f->m == 0 || used < 2) {
        f->skipped = true;
        return;
    }
    if ((f->rc = pfs_fit_shared(&rows[i].gpu, jobs, f->m, 0, &f->shared, fits,
                                w->prior ? &se : NULL, &f->d)) != 0) /* (the prior's sigma) */
        return;
    has_prior = w->prior && pfs_alpha_prior_from(fits, f->m, se.sigma, &ap) == 0;
    if ((f->rc = pfs_fit_shared_job(&f->shared, fits[0].job.mem_w, fits[0].job.cap_fill,
                                    has_prior ? &ap : NULL, jc, lim, &f->own, &f->d)) != 0)
        return;
    f->rmse = heldout_rmse(&f->shared, &f->own.job, jc, lim, &f->h);
}

static void *
loo_run(void *arg)
{
    struct loo_work *w = arg;
    const struct pfs_job_curve **jobs = malloc((w->n + 1) * sizeof *jobs);
    struct pfs_fit *fits = malloc((w->n + 1) * sizeof *fits);

    for (;;) {
        size_t i;

        pthread_mutex_lock(&w->lock);
        i = w->next++;
        pthread_mutex_unlock(&w->lock);
        if (i >= w->n)
            break;
        if (!jobs || !fits)
            w->f[i].rc = pfs__diag_set(&w->f[i].d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        else
            loo_fold(w, i, jobs, fits);
    }
    free(jobs);
    free(fits);
    return NULL;
}

/* --loo: leave one job out. For each job of a GPU with at least one other job, the shared
 * physics fitted on every cap of the other jobs, then the job's own alpha and activity on its
 * caps at or above frac of the default limit, and the error at its caps below. The folds are
 * fitted on up to one thread a CPU, then written in job order (the same bytes whatever the
 * threads); the first failure in job order ends the output there, as it did one fold at a
 * time. */
static int
fit_loo_cli(struct fit_row *rows, size_t n, double frac, bool prior, bool csv, struct pfs_diag *d)
{
    struct loo_work lw = {.rows = rows, .n = n, .frac = frac, .prior = prior};
    double *held = malloc((n + 1) * sizeof *held);
    size_t n_held = 0, skipped = 0, started = 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t want = cpus > 64 ? 64 : cpus > 1 ? (size_t)cpus : 1; /* threads, this one among them */
    pthread_t th[64];
    int rc = 0, w = id_width(rows, n);

    lw.f = calloc(n + 1, sizeof *lw.f);
    if (!lw.f || !held) {
        rc = pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    pthread_mutex_init(&lw.lock, NULL);
    for (; started + 1 < n && started + 1 < want; started++)
        if (pthread_create(&th[started], NULL, loo_run, &lw) != 0)
            break;
    loo_run(&lw); /* (this thread too) */
    for (size_t t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_destroy(&lw.lock);
    if (csv)
        puts("job_id,gpu,n_others,n_fit,rmse_fit,n_held,rmse_heldout,alpha,activity,mem_w,"
             "cap_fill,v_min,f_knee_mhz,se_alpha,se_activity");
    for (size_t i = 0; i < n; i++) {
        const struct pfs_job_curve *jc = rows[i].jc;
        const struct loo_fold *f = &lw.f[i];

        if (f->skipped) {
            skipped++;
            continue;
        }
        if ((rc = f->rc) != 0) {
            *d = f->d;
            break;
        }
        if (f->h)
            held[n_held++] = f->rmse;
        if (csv) {
            pfs__csv_put_text(stdout, jc->job_id);
            printf(",%s,%zu,%zu,%.6g,%zu,", jc->gpu, f->m, f->own.n_points, f->own.rmse_throughput,
                   f->h);
            if (f->h)
                printf("%.6g", f->rmse);
            printf(",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", f->own.job.alpha,
                   f->own.job.activity, f->own.job.mem_w, f->own.job.cap_fill, f->shared.v_min,
                   f->shared.f_knee_mhz, f->own.se_alpha, f->own.se_activity);
        } else {
            char hb[32] = "-";

            if (n_held == 1 && f->h)
                printf("Leave one job out: shared physics from every cap of the GPU's other "
                       "jobs,\nthe job's alpha and activity from its caps >= %.0f%% of the "
                       "default limit.\n%-*s %-10s %6s %5s %8s %6s %12s %6s %6s %6s %6s %6s\n",
                       100 * frac, w, "job_id", "gpu", "others", "n_fit", "rmse_fit", "n_held",
                       "rmse_heldout", "v_min", "knee", "mem_w", "alpha", "se");
            if (f->h)
                snprintf(hb, sizeof hb, "%.4f", f->rmse);
            printf("%-*s %-10s %6zu %5zu %8.4f %6zu %12s %6.3f %6.0f %6.1f %6.3f %6.3f\n", w,
                   jc->job_id, jc->gpu, f->m, f->own.n_points, f->own.rmse_throughput, f->h, hb,
                   f->shared.v_min, f->shared.f_knee_mhz, f->own.job.mem_w, f->own.job.alpha,
                   f->own.se_alpha);
        }
    }
    if (rc == 0 && !csv) {
        double worst = 0;

        for (size_t i = 0; i < n_held; i++)
            worst = fmax(worst, held[i]);
        if (n_held)
            printf("\n%zu jobs held out. RMSE of T/T0 below the fitted caps: median %.4f, worst "
                   "%.4f.",
                   n_held, median(held, n_held), worst);
        if (skipped)
            printf("%s%zu jobs left out (no other job on their GPU, or under 2 caps to fit).",
                   n_held ? " " : "", skipped);
        putchar('\n');
    }
out:
    free(lw.f);
    free(held);
    return rc;
}

static int
write_fitset(const void *obj, FILE *fp, struct pfs_diag *d)
{
    return pfs_fitset_write(obj, fp, d);
}

int
pfs_cli_fit(int argc, char **argv)
{
    static const struct option opts[] = {{"csv", no_argument, 0, 'c'},
                                         {"profile", no_argument, 0, 'p'},
                                         {"holdout-below", required_argument, 0, 'H'},
                                         {"save", required_argument, 0, 'S'},
                                         {"shared", no_argument, 0, 'X'},
                                         {"loo", no_argument, 0, 'L'},
                                         {"prior", no_argument, 0, 'N'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    bool csv = false, profile = false;
    double holdout = 0;
    const char *save = NULL;
    bool shared = false, loo = false, prior = false;
    struct pfs_curveset *cs = NULL;
    struct fit_row *rows = NULL;
    struct pfs_diag d = {0};
    int c, rc;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'c')
            csv = true;
        else if (c == 'p')
            profile = true;
        else if (c == 'H') {
            if (!pfs_cli_parse_frac(optarg, &holdout) || !(holdout > 0 && holdout < 1))
                return pfs_cli_usage("fit", "--holdout-below takes a fraction in (0, 1), got '%s'",
                                     optarg);
        } else if (c == 'S')
            save = optarg;
        else if (c == 'X')
            shared = true;
        else if (c == 'L')
            loo = true;
        else if (c == 'N')
            prior = true;
        else if (c == 'h')
            return fputs(pfs_cli_fit_help, stdout), EXIT_OK;
        else
            return pfs_cli_usage("fit", "%s", "bad option");
    }
    if (optind + 1 != argc)
        return pfs_cli_usage("fit", "%s", "expected one curves file");
    if (loo && shared) /* (--loo ran, --shared was ignored) */
        return pfs_cli_usage("fit", "%s", "give --shared or --loo, not both");
    if (loo && save)
        return pfs_cli_usage("fit", "%s", "--loo fits one model per job left out: no --save");
    if (prior && !loo)
        return pfs_cli_usage("fit", "%s", "--prior goes with --loo");
    if (save && strcmp(save, "-") == 0) /* (the models came after the table, one stream) */
        return pfs_cli_usage("fit", "%s",
                             "--save takes a file: standard output carries the fit's table");
    if ((rc = pfs_cli_not_over("fit", "--save", save, (const char *const *)&argv[optind], 1)))
        return rc;
    if ((rc = pfs_curveset_read(argv[optind], &cs, &d)) != 0)
        return pfs_cli_report(&d, rc);
    rows = calloc(cs->n_jobs, sizeof *rows);
    if (!rows) {
        rc = pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < cs->n_jobs; i++) {
        rows[i].jc = &cs->jobs[i];
        if ((rc = pfs_gpu_find(cs->jobs[i].gpu, &rows[i].gpu, &d)) != 0) {
            /* Point at the job's first row, not at the profile table. */
            pfs__strlcpy(d.file, cs->path, sizeof d.file);
            d.line = cs->jobs[i].line;
            goto out;
        }
    }
    if (profile && (rc = fit_profiles(cs, rows, &d)) != 0)
        goto out;
    if (loo) {
        rc = fit_loo_cli(rows, cs->n_jobs, holdout > 0 ? holdout : 0.75, prior, csv, &d);
        goto saved;
    }
    if (shared) {
        rc = fit_shared_cli(rows, cs->n_jobs, holdout, csv, &d);
        goto saved;
    }
    if (holdout > 0) {
        rc = fit_holdout(rows, cs->n_jobs, holdout, csv, &d);
        goto saved;
    }
    for (size_t i = 0; i < cs->n_jobs; i++) {
        struct fit_row *r = &rows[i];
        struct pfs_curve *measured = NULL, *model = NULL;

        if ((rc = pfs_fit_job(&r->gpu, r->jc, &r->fit, &d)) != 0)
            goto out_job;
        r->fitted = true;
        if ((rc = pfs_curve_sampled_new(r->jc->cap_w, r->jc->throughput, r->jc->power_w,
                                        r->jc->n_points, &measured, &d)) != 0 ||
            (rc = pfs_curve_model_new(&r->gpu, &r->fit.job, &model, &d)) != 0)
            goto out_job;
        for (size_t k = 0; k < N_CUTS; k++) {
            if (pfs_pfi(measured, r->gpu.default_limit_w, cuts[k], &r->pfi[k]) != 0)
                r->pfi[k] = NAN;
            if (pfs_pfi(model, r->gpu.default_limit_w, cuts[k], &r->model_pfi[k]) != 0)
                r->model_pfi[k] = NAN;
        }
    out_job:
        pfs_curve_free(measured);
        pfs_curve_free(model);
        if (rc) {
            if (!d.file[0])
                pfs__strlcpy(d.file, cs->path, sizeof d.file);
            goto out;
        }
    }
    if (csv)
        print_fit_csv(rows, cs->n_jobs);
    else
        print_fit_table(rows, cs->n_jobs);
saved:
    if (rc == 0 && save) {
        struct pfs_fitset fs = {.holdout_below = holdout};

        pfs__strlcpy(fs.source, cs->path, sizeof fs.source);
        if (!(fs.jobs = calloc(cs->n_jobs + 1, sizeof *fs.jobs))) {
            rc = pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < cs->n_jobs; i++) {
            struct pfs_fitted_job *f = &fs.jobs[fs.n_jobs];

            if (!rows[i].fitted)
                continue;
            pfs__strlcpy(f->job_id, rows[i].jc->job_id, sizeof f->job_id);
            pfs__strlcpy(f->gpu, rows[i].jc->gpu, sizeof f->gpu);
            pfs__strlcpy(f->unit, rows[i].jc->unit, sizeof f->unit);
            f->n_gpus = rows[i].jc->n_gpus;
            f->job = rows[i].fit.job;
            f->v_min = rows[i].gpu.v_min;
            f->f_knee_mhz = rows[i].gpu.f_knee_mhz;
            f->rmse_throughput = rows[i].fit.rmse_throughput;
            fs.n_jobs++;
        }
        rc = pfs_cli_write_output(save, write_fitset, &fs, &d);
        free(fs.jobs);
    }
out:
    if (rc && !d.file[0] && cs)
        pfs__strlcpy(d.file, cs->path, sizeof d.file);
    free(rows);
    pfs_curveset_free(cs);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}
