/*
 * sim/main.c - the pfisim command line: subcommands, options, tables and exit codes.
 *
 * The only file outside libpfisim: it parses argv, calls the library, prints, and turns
 * the library's PFS_E* codes into exit codes (0 ok, 1 run-time failure, 2 usage, 3 invalid
 * input, 4 I/O). Errors are printed the way compilers print them, with the offending input
 * line and a caret under the column (STYLE.md). Output that a command writes is built
 * completely before any of it is printed, so a failing command prints no half table.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int
exit_code(int rc)
{
    switch (rc) {
    case 0:
        return EXIT_OK;
    case PFS_EINVAL:
    case PFS_ENOTFOUND:
    case PFS_ERANGE:
        return EXIT_INPUT;
    case PFS_EIO:
        return EXIT_IO;
    case PFS_EUSAGE:
        return EXIT_USAGE;
    default:
        return EXIT_FAIL;
    }
}

int
pfs_cli_report(const struct pfs_diag *d, int rc)
{
    if (d->file[0] && d->line > 0 && d->column > 0)
        fprintf(stderr, "%s:%ld:%ld: error: %s\n", d->file, d->line, d->column, d->message);
    else if (d->file[0] && d->line > 0)
        fprintf(stderr, "%s:%ld: error: %s\n", d->file, d->line, d->message);
    else if (d->file[0])
        fprintf(stderr, "%s: error: %s\n", d->file, d->message);
    else
        fprintf(stderr, "pfisim: error: %s\n", d->message[0] ? d->message : pfs_strerror(rc));
    if (d->text[0]) {
        fprintf(stderr, "    %s\n", d->text);
        if (d->column > 0)
            fprintf(stderr, "    %*s^\n", (int)(d->column - 1), "");
    }
    return exit_code(rc);
}

int
pfs_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "pfisim %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'pfisim help %s'.\n", cmd);
    return EXIT_USAGE;
}

bool
pfs_cli_parse_frac(const char *s, double *out)
{
    char buf[64];
    size_t n = strlen(s);

    if (n > 0 && n < sizeof buf && s[n - 1] == '%') {
        memcpy(buf, s, n - 1);
        buf[n - 1] = '\0';
        if (!pfs__parse_double(buf, out))
            return false;
        *out /= 100.0;
        return true;
    }
    return pfs__parse_double(s, out);
}

/* ---------------------------------------------------------------------------------------
 * Help texts
 */

struct command {
    const char *name;
    const char *summary;
    const char *usage; /* full help text, printed by --help and `pfisim help NAME` */
    int (*run)(int argc, char **argv);
};

static const struct command *find_command(const char *name);

static const char help_fit[] =
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

static const char help_import[] =
    "usage: pfisim import FORMAT FILE... [--gpu NAME] [--job-id ID] [-o|--output OUT.csv]\n"
    "\n"
    "Converts real power-cap measurements into a curves CSV (docs/formats.md); without -o\n"
    "it writes to standard output. FORMAT is one of:\n";

static const char help_import_tail[] =
    "\n"
    "Telemetry of an operator's own job, one jobs.csv row per log (docs/formats.md):\n"
    "  nvidia-smi  nvidia-smi --query-gpu=timestamp,index,power.draw,power.limit,clocks.sm,\n"
    "              utilization.gpu,utilization.memory --format=csv[,nounits]\n"
    "  dcgm        dcgmi dmon -e 155,150,1002,1003,1004,1005,1011,1012\n"
    "\n"
    "  --gpu NAME   GPU profile of the measurements (see 'pfisim gpus'); required where the\n"
    "               file does not say it (perseus, emerald, nvidia-smi, dcgm)\n"
    "  --job-id ID  job id of a telemetry import of one log (default: the log's file name)\n"
    "  -o, --output FILE  write here (whole or not at all: nothing if any input is bad)\n"
    "\n"
    "Real data lives in the data directory: $PFISIM_DATA, default ../shared/data.\n";

static const char help_model[] =
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

static const char help_gpus[] = "usage: pfisim gpus [--csv]\n"
                                "\n"
                                "Lists the GPU profiles built in from configs/gpus/.\n";

/* ---------------------------------------------------------------------------------------
 * pfisim gpus
 */

static int
cmd_gpus(int argc, char **argv)
{
    static const struct option opts[] = {
        {"csv", no_argument, 0, 'c'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    bool csv = false;
    int c;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'c')
            csv = true;
        else if (c == 'h')
            return fputs(help_gpus, stdout), EXIT_OK;
        else
            return pfs_cli_usage("gpus", "%s", "bad option");
    }
    if (optind != argc)
        return pfs_cli_usage("gpus", "unexpected argument '%s'", argv[optind]);
    if (csv)
        puts("name,model,min_limit_w,default_limit_w,max_limit_w,idle_w,f_min_mhz,f_max_mhz,"
             "f_knee_mhz,v_min,mem_bw_tbs,mem_gb,tflops_bf16,extrapolated");
    else
        printf("%-10s %-32s %15s %6s %6s %8s %5s\n", "name", "model", "limit_w min/def/max",
               "idle_w", "f_max", "mem_TB/s", "v_min");
    for (size_t i = 0; pfs_gpu_name(i); i++) {
        struct pfs_diag d = {0};
        struct pfs_gpu g;
        int rc = pfs_gpu_find(pfs_gpu_name(i), &g, &d);

        if (rc)
            return pfs_cli_report(&d, rc);
        if (csv)
            printf("%s,\"%s\",%g,%g,%g,%g,%g,%g,%g,%g,%g,%g,%g,%d\n", g.name, g.model,
                   g.min_limit_w, g.default_limit_w, g.max_limit_w, g.idle_w, g.f_min_mhz,
                   g.f_max_mhz, g.f_knee_mhz, g.v_min, g.mem_bw_tbs, g.mem_gb, g.tflops_bf16,
                   g.extrapolated);
        else
            printf("%-10s %-32s %4.0f/%4.0f/%4.0f %6.0f %6.0f %8.3g %5.3g\n", g.name, g.model,
                   g.min_limit_w, g.default_limit_w, g.max_limit_w, g.idle_w, g.f_max_mhz,
                   g.mem_bw_tbs, g.v_min);
    }
    return EXIT_OK;
}

/* ---------------------------------------------------------------------------------------
 * pfisim model
 */

static const double cuts[] = {0.1, 0.2, 0.3, 0.4, 0.5};
#define N_CUTS (sizeof cuts / sizeof cuts[0])

static int
cmd_model(int argc, char **argv)
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
            return fputs(help_model, stdout), EXIT_OK;
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
 * pfisim import
 */

char **
pfs_cli_join_optional(int argc, char **argv, const char *opt, const char *not_suffix, int *n_out)
{
    static char **kept; /* lives as long as the process, like argv */
    size_t n_opt = strlen(opt), n_suf = strlen(not_suffix);
    char **out = calloc((size_t)argc + 1, sizeof *out);
    int n = 0;

    if (!out)
        return NULL;
    for (int i = 0; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        size_t len = next ? strlen(next) : 0;

        if (strcmp(argv[i], "--") == 0) { /* the rest are operands */
            while (i < argc)
                out[n++] = argv[i++];
            break;
        }
        if (strcmp(argv[i], opt) == 0 && next && next[0] != '-' &&
            !(len >= n_suf && strcmp(next + len - n_suf, not_suffix) == 0)) {
            char *joined = malloc(n_opt + 1 + len + 1);

            if (!joined) {
                free(out);
                return NULL;
            }
            snprintf(joined, n_opt + 1 + len + 1, "%s=%s", opt, next);
            out[n++] = joined;
            i++;
            continue;
        }
        out[n++] = argv[i];
    }
    out[n] = NULL;
    kept = out;
    *n_out = n;
    return kept;
}

const char *
pfs_cli_suggest(const char *name, const char *(*candidate)(size_t i))
{
    static char buf[96];
    const char *names[64];
    size_t n = 0;

    while (n < 64 && candidate(n)) {
        names[n] = candidate(n);
        n++;
    }
    if (!pfs__nearest(name, names, n))
        return "";
    snprintf(buf, sizeof buf, "; did you mean '%s'?", pfs__nearest(name, names, n));
    return buf;
}

static const char *
policy_name_at(size_t i)
{
    return pfs_policy_at(i) ? pfs_policy_name(pfs_policy_at(i)) : NULL;
}

const char *
pfs_cli_suggest_policy(const char *name)
{
    return pfs_cli_suggest(name, policy_name_at);
}

const char *
pfs_cli_shipped(const char *rel)
{
    static char paths[4][PATH_MAX];
    static int next;
    char *p = paths[next++ % 4];

    if (pfs__resolve_path(NULL, rel, p, PATH_MAX) != 0)
        return rel;
    return p;
}

int
pfs_cli_write_output(const char *output,
                     int (*write)(const void *obj, FILE *fp, struct pfs_diag *d), const void *obj,
                     struct pfs_diag *d)
{
    return pfs__out_write(output, write, obj, d);
}

static int
write_jobs_obj(const void *obj, FILE *fp, struct pfs_diag *d)
{
    return pfs_jobset_write(obj, fp, d);
}

/* pfisim import nvidia-smi|dcgm LOG...: one jobs.csv row per log. */
static int
import_telemetry(const struct pfs_telemetry_ops *imp, int n_logs, char **logs, const char *gpu_name,
                 const char *job_id, const char *output)
{
    struct pfs_jobset js = {.n_jobs = 0};
    struct pfs_diag d = {0};
    struct pfs_gpu g;
    int rc = 0;

    if (!gpu_name) {
        fprintf(stderr,
                "pfisim import %s: a log does not say which GPU it came from; give "
                "--gpu NAME (see 'pfisim gpus')\n",
                imp->name);
        return EXIT_USAGE;
    }
    if (job_id && n_logs != 1)
        return pfs_cli_usage("import", "%s", "--job-id names the job of a single log");
    if (pfs_gpu_find(gpu_name, &g, &d) != 0) {
        fprintf(stderr, "pfisim import: %s\n", d.message);
        return EXIT_USAGE;
    }
    js.jobs = calloc((size_t)n_logs, sizeof *js.jobs);
    if (!js.jobs)
        return pfs_cli_report(&d, pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory"));
    for (int i = 0; i < n_logs && rc == 0; i++) {
        struct pfs_corpus_job *j = &js.jobs[i];
        const char *base = strrchr(logs[i], '/');
        char *dot;

        char id[512];

        memset(j, 0, sizeof *j);
        pfs__strlcpy(id, job_id ? job_id : (base ? base + 1 : logs[i]), sizeof id);
        if (!job_id && (dot = strrchr(id, '.')) != NULL && dot != id)
            *dot = '\0';
        /* An id jobs.csv cannot hold is refused, not cut or mangled (issue 17): the
         * import's output must read back as the same jobs. */
        if (!id[0] || strpbrk(id, "\n\r") || !pfs__strlcpy(j->job_id, id, sizeof j->job_id)) {
            rc = pfs__diag_set(&d, PFS_EINVAL, logs[i], 0, 0, "job_id",
                               "job id '%.60s' %s (give --job-id)", id,
                               !id[0]                ? "is empty"
                               : strpbrk(id, "\n\r") ? "holds a line break"
                                                     : "is longer than 31 bytes");
            break;
        }
        for (size_t k = 0; k < js.n_jobs && rc == 0; k++)
            if (strcmp(js.jobs[k].job_id, j->job_id) == 0)
                rc = pfs__diag_set(&d, PFS_EINVAL, logs[i], 0, 0, "job_id",
                                   "gives job id '%s', as %s does: one id per job (rename one "
                                   "log, or import them one at a time with --job-id)",
                                   j->job_id, logs[k]);
        if (rc)
            break;
        pfs__strlcpy(j->gpu, g.name, sizeof j->gpu);
        rc = imp->read(logs[i], &g, j, &d);
        js.n_jobs++;
    }
    if (rc == 0)
        rc = pfs_cli_write_output(output, write_jobs_obj, &js, &d);
    free(js.jobs);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}

static int
cmd_import(int argc, char **argv)
{
    static const struct option opts[] = {{"gpu", required_argument, 0, 'g'},
                                         {"output", required_argument, 0, 'o'},
                                         {"job-id", required_argument, 0, 'j'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *gpu_opt = NULL, *output = NULL, *job_id = NULL;
    const struct pfs_importer_ops *imp;
    struct pfs_curveset *cs = NULL;
    struct pfs_diag d = {0};
    int c, rc;

    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        if (c == 'g')
            gpu_opt = optarg;
        else if (c == 'o')
            output = optarg;
        else if (c == 'j')
            job_id = optarg;
        else if (c == 'h') {
            fputs(help_import, stdout);
            for (size_t i = 0; pfs_importers[i]; i++)
                printf("  %-9s %s\n", pfs_importers[i]->name, pfs_importers[i]->summary);
            fputs(help_import_tail, stdout);
            return EXIT_OK;
        } else
            return pfs_cli_usage("import", "%s", "bad option");
    }
    if (argc - optind < 2)
        return pfs_cli_usage("import", "%s", "expected FORMAT and at least one FILE");
    if (pfs_telemetry_find(argv[optind]))
        return import_telemetry(pfs_telemetry_find(argv[optind]), argc - optind - 1,
                                argv + optind + 1, gpu_opt, job_id, output);
    imp = pfs_importer_find(argv[optind]);
    if (!imp) {
        fprintf(stderr, "pfisim import: unknown format '%s' (known:", argv[optind]);
        for (size_t i = 0; pfs_importers[i]; i++)
            fprintf(stderr, " %s", pfs_importers[i]->name);
        for (size_t i = 0; pfs_telemetry_importers[i]; i++)
            fprintf(stderr, " %s", pfs_telemetry_importers[i]->name);
        fprintf(stderr, ")\n");
        return EXIT_USAGE;
    }
    if (gpu_opt) {
        struct pfs_gpu g;

        if ((rc = pfs_gpu_find(gpu_opt, &g, &d)) != 0) {
            fprintf(stderr, "pfisim import: %s\n", d.message);
            return EXIT_USAGE;
        }
    }
    if ((rc = pfs_curveset_new(&cs)) != 0)
        return pfs_cli_report(&d, rc);
    for (int i = optind + 1; i < argc; i++) {
        const char *gpu = gpu_opt;

        if (!gpu && imp->gpu_from_path)
            gpu = imp->gpu_from_path(argv[i]);
        if (!gpu) {
            pfs_curveset_free(cs);
            fprintf(stderr,
                    "pfisim import: %s: the file does not say which GPU it measured; "
                    "give --gpu NAME (see 'pfisim gpus')\n",
                    argv[i]);
            return EXIT_USAGE;
        }
        if ((rc = imp->read(argv[i], gpu, cs, &d)) != 0) {
            pfs_curveset_free(cs);
            return pfs_cli_report(&d, rc);
        }
    }
    if (cs->n_jobs == 0) {
        pfs_curveset_free(cs);
        fprintf(stderr, "pfisim import: no data rows in the input\n");
        return EXIT_INPUT;
    }
    rc = pfs_curveset_write_path(cs, output ? output : "-", &d);
    pfs_curveset_free(cs);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
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

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double
median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
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

        printf("%s,%s,%d,%.6g,%.6g", r->jc->job_id, r->jc->gpu, r->jc->n_gpus, f->rmse_throughput,
               f->rmse_power);
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
        if (csv)
            printf("%s,%s,%zu,%zu,%.6g,%.6g\n", jc->job_id, jc->gpu, k, held, rmse[m], mx);
        else
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
                printf("%s,%s,%zu,%.6g,%zu,", jc->job_id, jc->gpu, fits[q].n_points,
                       fits[q].rmse_throughput, h);
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

/* --loo: leave one job out. For each job of a GPU with at least one other job, the shared
 * physics fitted on every cap of the other jobs, then the job's own alpha and activity on its
 * caps at or above frac of the default limit, and the error at its caps below. */
static int
fit_loo_cli(struct fit_row *rows, size_t n, double frac, bool prior, bool csv, struct pfs_diag *d)
{
    const struct pfs_job_curve **jobs = malloc((n + 1) * sizeof *jobs);
    struct pfs_fit *fits = malloc((n + 1) * sizeof *fits);
    double *held = malloc((n + 1) * sizeof *held);
    size_t n_held = 0, skipped = 0;
    int rc = 0, w = id_width(rows, n);

    if (!jobs || !fits || !held) {
        rc = pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    if (csv)
        puts("job_id,gpu,n_others,n_fit,rmse_fit,n_held,rmse_heldout,alpha,activity,mem_w,"
             "cap_fill,v_min,f_knee_mhz,se_alpha,se_activity");
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct pfs_job_curve *jc = rows[i].jc;
        double lim = frac * rows[i].gpu.default_limit_w, rmse;
        struct pfs_gpu shared;
        struct pfs_fit own;
        struct pfs_shared_se se;
        struct pfs_alpha_prior ap;
        bool has_prior;
        size_t m = 0, used = 0, h;

        for (size_t k = 0; k < n; k++)
            if (k != i && strcmp(rows[k].jc->gpu, jc->gpu) == 0 && rows[k].jc->n_points >= 2)
                jobs[m++] = rows[k].jc;
        for (size_t p = 0; p < jc->n_points; p++)
            used += jc->cap_w[p] >= lim * (1 - 1e-12);
        if (m == 0 || used < 2) { /* no other job, or too few top caps of its own */
            skipped++;
            continue;
        }
        if ((rc = pfs_fit_shared(&rows[i].gpu, jobs, m, 0, &shared, fits, &se, d)) != 0)
            break;
        has_prior = prior && pfs_alpha_prior_from(fits, m, se.sigma, &ap) == 0;
        if ((rc = pfs_fit_shared_job(&shared, fits[0].job.mem_w, fits[0].job.cap_fill,
                                     has_prior ? &ap : NULL, jc, lim, &own, d)) != 0)
            break;
        rmse = heldout_rmse(&shared, &own.job, jc, lim, &h);
        if (h)
            held[n_held++] = rmse;
        if (csv) {
            printf("%s,%s,%zu,%zu,%.6g,%zu,", jc->job_id, jc->gpu, m, own.n_points,
                   own.rmse_throughput, h);
            if (h)
                printf("%.6g", rmse);
            printf(",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", own.job.alpha, own.job.activity,
                   own.job.mem_w, own.job.cap_fill, shared.v_min, shared.f_knee_mhz, own.se_alpha,
                   own.se_activity);
        } else {
            char hb[32] = "-";

            if (n_held == 1 && h)
                printf("Leave one job out: shared physics from every cap of the GPU's other "
                       "jobs,\nthe job's alpha and activity from its caps >= %.0f%% of the "
                       "default limit.\n%-*s %-10s %6s %5s %8s %6s %12s %6s %6s %6s %6s %6s\n",
                       100 * frac, w, "job_id", "gpu", "others", "n_fit", "rmse_fit", "n_held",
                       "rmse_heldout", "v_min", "knee", "mem_w", "alpha", "se");
            if (h)
                snprintf(hb, sizeof hb, "%.4f", rmse);
            printf("%-*s %-10s %6zu %5zu %8.4f %6zu %12s %6.3f %6.0f %6.1f %6.3f %6.3f\n", w,
                   jc->job_id, jc->gpu, m, own.n_points, own.rmse_throughput, h, hb, shared.v_min,
                   shared.f_knee_mhz, own.job.mem_w, own.job.alpha, own.se_alpha);
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
    free(jobs);
    free(fits);
    free(held);
    return rc;
}

static int
write_fitset(const void *obj, FILE *fp, struct pfs_diag *d)
{
    return pfs_fitset_write(obj, fp, d);
}

static int
cmd_fit(int argc, char **argv)
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
            return fputs(help_fit, stdout), EXIT_OK;
        else
            return pfs_cli_usage("fit", "%s", "bad option");
    }
    if (optind + 1 != argc)
        return pfs_cli_usage("fit", "%s", "expected one curves file");
    if (loo && save)
        return pfs_cli_usage("fit", "%s", "--loo fits one model per job left out: no --save");
    if (prior && !loo)
        return pfs_cli_usage("fit", "%s", "--prior goes with --loo");
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

/* ---------------------------------------------------------------------------------------
 * pfisim synth
 */

static const char help_synth[] =
    "usage: pfisim synth [--seed S] -o|--output DIR [--train N] [--validation N] [--transfer N]\n"
    "\n"
    "Generates the SYNTHETIC H100/H200 LLM-training corpus of docs/corpus.md into DIR:\n"
    "curves.csv (cap sweeps 200-700 W), jobs.csv (configuration, telemetry at the default\n"
    "limit, true PFI labels) and README.md (seed, generator version, calibration summary).\n"
    "The same seed gives byte-identical files.\n"
    "\n"
    "  --seed S         random seed (default 7, the shipped traces/h200-h100 corpus)\n"
    "  -o, --output DIR where to write (created if missing)\n"
    "  --train N        H200 jobs in split train (default 131)\n"
    "  --validation N   H200 jobs in split validation (default 24)\n"
    "  --transfer N     H100 twins of H200 configurations (default 34)\n"
    "  --unseen-scale X scale the variation telemetry cannot see (default 1; 0 removes it):\n"
    "                   for measuring how well any predictor could do (docs/predictor.md)\n";

static bool
parse_count(const char *s, unsigned long *out)
{
    long v;

    if (!pfs__parse_long(s, &v) || v < 0)
        return false;
    *out = (unsigned long)v;
    return true;
}

static int
cmd_synth(int argc, char **argv)
{
    static const struct option opts[] = {
        {"seed", required_argument, 0, 's'},     {"output", required_argument, 0, 'o'},
        {"train", required_argument, 0, 't'},    {"validation", required_argument, 0, 'v'},
        {"transfer", required_argument, 0, 'x'}, {"unseen-scale", required_argument, 0, 'u'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    struct pfs_synth_options o;
    struct pfs_jobset *js = NULL;
    struct pfs_curveset *cs = NULL;
    struct pfs_diag d = {0};
    const char *dir = NULL;
    unsigned long v;
    int c, rc;

    pfs_synth_defaults(&o, 7);
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            dir = optarg;
            break;
        case 'u':
            if (!pfs__parse_double(optarg, &o.unseen_scale))
                return pfs_cli_usage("synth", "expected a number, got '%s'", optarg);
            break;
        case 's':
        case 't':
        case 'v':
        case 'x':
            if (!parse_count(optarg, &v))
                return pfs_cli_usage("synth", "expected a non-negative integer, got '%s'", optarg);
            if (c == 's')
                o.seed = v;
            else if (c == 't')
                o.n_train = v;
            else if (c == 'v')
                o.n_validation = v;
            else
                o.n_transfer = v;
            break;
        case 'h':
            return fputs(help_synth, stdout), EXIT_OK;
        default:
            return pfs_cli_usage("synth", "%s", "bad option");
        }
    }
    if (!dir || optind != argc)
        return pfs_cli_usage("synth", "%s", "expected -o DIR and no other arguments");
    if ((rc = pfs_synth(&o, &js, &cs, &d)) != 0 || (rc = pfs_corpus_write(dir, &o, js, cs, &d)))
        rc = pfs_cli_report(&d, rc);
    else
        fprintf(stderr,
                "pfisim synth: wrote %s/{curves.csv,jobs.csv,README.md} (%zu jobs, "
                "synthetic, seed %lu)\n",
                dir, js->n_jobs, o.seed);
    pfs_jobset_free(js);
    pfs_curveset_free(cs);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * pfisim workload
 */

static const char help_workload[] =
    "usage: pfisim workload --arrivals SOURCE [--corpus DIR] [--gpus N] [--days D]\n"
    "                       [--start-day X] [--seed S]\n"
    "                       [--slack LO:HI] [--tiers firm:F,flex1:F,flex2:F,flex3:F]\n"
    "                       [--rescale] [--load L] [--gpu-scale K] [--gpu TYPE]...\n"
    "                       [-o|--output WORKLOAD.csv]\n"
    "       pfisim workload --fit SOURCE [-o MODEL.cfg]\n"
    "\n"
    "Builds a workload (job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier) whose\n"
    "arrivals, GPU counts and durations come from SOURCE, each job running the curve of a\n"
    "corpus job of its size (docs/workload.md). SOURCE is one of\n"
    "  kalos, itp:clusterNN (01-10), helios, philly   real traces in the data directory\n"
    "  poisson:RATE                                    RATE jobs per hour\n"
    "  fitted:SOURCE                                   the model fitted to a real trace,\n"
    "                                                  shipped in configs/arrivals/\n"
    "\n"
    "  --corpus DIR   corpus with jobs.csv (default traces/h200-h100, synthetic)\n"
    "  --gpus N       the facility's GPUs (default 1024); a larger job is an error\n"
    "  --gpu TYPE     jobs run curves measured on this GPU (repeatable; default h200-sxm)\n"
    "  --days D       window length in days (default 7)\n"
    "  --start-day X  a real trace's window starts X days after its first job (default 0)\n"
    "  --seed S       seed of the mapping, deadlines, tiers and synthetic arrivals (default 1)\n"
    "  --slack LO:HI  deadline = submit + U(LO, HI) x duration (default 1.5:3)\n"
    "  --tiers MIX    tier shares (default firm:0.4,flex1:0.2,flex2:0.2,flex3:0.2)\n"
    "  --rescale      scale job sizes down to fit the facility instead of failing\n"
    "  --gpu-scale K  every job asks for K times its GPUs (a small cluster's trace on a\n"
    "                 large facility); with --load the rate falls by K\n"
    "  --load L       fitted sources: arrival rate scaled to offer L x the facility's GPU\n"
    "                 time (sizes and durations unchanged)\n"
    "  --fit SOURCE   fit the arrival model to a real trace and print it (libconfig)\n";

static bool
parse_range(const char *s, double *lo, double *hi)
{
    char buf[64], *colon;

    if (!pfs__strlcpy(buf, s, sizeof buf) || !(colon = strchr(buf, ':')))
        return false;
    *colon = '\0';
    return pfs__parse_double(buf, lo) && pfs__parse_double(colon + 1, hi);
}

/* firm:0.4,flex1:0.2,... into mix[]; every tier not named gets 0. */
static bool
parse_tiers(const char *s, double *mix)
{
    char buf[256], *p, *next;

    if (!pfs__strlcpy(buf, s, sizeof buf))
        return false;
    for (int k = 0; k < PFS_N_TIERS; k++)
        mix[k] = 0;
    for (p = buf; p; p = next) {
        char *colon = strchr(p, ':');
        int k;

        next = strchr(p, ',');
        if (next)
            *next++ = '\0';
        if (!colon)
            return false;
        *colon = '\0';
        for (k = 0; k < PFS_N_TIERS && strcmp(p, pfs_tier_name(k)) != 0; k++)
            ;
        if (k == PFS_N_TIERS || !pfs__parse_double(colon + 1, &mix[k]))
            return false;
    }
    return true;
}

static int
write_workload_obj(const void *obj, FILE *fp, struct pfs_diag *d)
{
    return pfs_workload_write(obj, fp, d);
}

static int
write_arrivals_obj(const void *obj, FILE *fp, struct pfs_diag *d)
{
    return pfs_arrival_write(obj, fp, d);
}

static int
cmd_workload(int argc, char **argv)
{
    static const struct option opts[] = {{"arrivals", required_argument, 0, 'a'},
                                         {"corpus", required_argument, 0, 'c'},
                                         {"gpus", required_argument, 0, 'g'},
                                         {"days", required_argument, 0, 'd'},
                                         {"seed", required_argument, 0, 's'},
                                         {"slack", required_argument, 0, 'k'},
                                         {"tiers", required_argument, 0, 't'},
                                         {"rescale", no_argument, 0, 'r'},
                                         {"fit", required_argument, 0, 'f'},
                                         {"output", required_argument, 0, 'o'},
                                         {"start-day", required_argument, 0, 'S'},
                                         {"load", required_argument, 0, 'L'},
                                         {"gpu-scale", required_argument, 0, 'G'},
                                         {"gpu", required_argument, 0, 'P'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    struct pfs_workload_options o;
    struct pfs_gpu gpu;
    const char *corpus_dir = pfs_cli_shipped("traces/h200-h100"), *output = NULL, *fit = NULL;
    char jobs_path[600];
    struct pfs_jobset *js = NULL;
    struct pfs_workload *w = NULL;
    struct pfs_diag d = {0};
    unsigned long v;
    int c, rc;

    pfs_workload_defaults(&o);
    o.arrivals = NULL;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'a':
            o.arrivals = optarg;
            break;
        case 'c':
            corpus_dir = optarg;
            break;
        case 'g':
        case 's':
        case 'G':
            if (!parse_count(optarg, &v) || v > 100000000)
                return pfs_cli_usage("workload", "expected a non-negative integer, got '%s'",
                                     optarg);
            if (c == 'g')
                o.facility_gpus = (int)v;
            else if (c == 'G')
                o.gpu_scale = (int)v;
            else
                o.seed = v;
            break;
        case 'd':
        case 'S':
        case 'L':
            if (!pfs__parse_double(optarg, c == 'd' ? &o.days : c == 'S' ? &o.start_day : &o.load))
                return pfs_cli_usage("workload", "expected a number for --%s, got '%s'",
                                     c == 'd'   ? "days"
                                     : c == 'S' ? "start-day"
                                                : "load",
                                     optarg);
            break;
        case 'k':
            if (!parse_range(optarg, &o.slack_lo, &o.slack_hi))
                return pfs_cli_usage("workload", "expected --slack LO:HI, got '%s'", optarg);
            break;
        case 't':
            if (!parse_tiers(optarg, o.tier_mix))
                return pfs_cli_usage("workload",
                                     "expected --tiers firm:F,flex1:F,flex2:F,flex3:F, got '%s'",
                                     optarg);
            break;
        case 'r':
            o.rescale = true;
            break;
        case 'P':
            if (o.n_gpu_types == PFS_MAX_POOLS || strlen(optarg) >= sizeof o.gpu_types[0] ||
                pfs_gpu_find(optarg, &gpu, NULL) != 0)
                return pfs_cli_usage("workload",
                                     "--gpu: unknown GPU profile '%s' (pfisim gpus), "
                                     "or more than 8",
                                     optarg);
            pfs__strlcpy(o.gpu_types[o.n_gpu_types++], optarg, sizeof o.gpu_types[0]);
            break;
        case 'f':
            fit = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'h':
            return fputs(help_workload, stdout), EXIT_OK;
        default:
            return pfs_cli_usage("workload", "%s", "bad option");
        }
    }
    if (optind != argc)
        return pfs_cli_usage("workload", "unexpected argument '%s'", argv[optind]);
    if (fit) {
        struct pfs_trace *t = NULL;
        struct pfs_arrival_model m;

        if ((rc = pfs_trace_read(fit, &t, &d)) == 0 && (rc = pfs_arrival_fit(t, &m, &d)) == 0)
            rc = pfs_cli_write_output(output, write_arrivals_obj, &m, &d);
        pfs_trace_free(t);
        return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
    }
    if (!o.arrivals)
        return pfs_cli_usage("workload", "%s", "expected --arrivals SOURCE (or --fit SOURCE)");
    snprintf(jobs_path, sizeof jobs_path, "%s/jobs.csv", corpus_dir);
    if ((rc = pfs_jobset_read(jobs_path, &js, &d)) == 0 &&
        (rc = pfs_workload_generate(&o, js, &w, &d)) == 0)
        rc = pfs_cli_write_output(output, write_workload_obj, w, &d);
    pfs_workload_free(w);
    pfs_jobset_free(js);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}

/* ---------------------------------------------------------------------------------------
 * pfisim predict
 */

static const char help_predict[] =
    "usage: pfisim predict train [--corpus DIR] [--method ridge|physics] [--seed S]\n"
    "                            [--folds K] [--drop FEATURE] [-o|--output MODEL.cfg]\n"
    "       pfisim predict eval --model MODEL.cfg [--corpus DIR]\n"
    "                           [--split validation|transfer|train] [--csv] [--per-job]\n"
    "       pfisim predict explain --model MODEL.cfg [--corpus DIR]\n"
    "\n"
    "The telemetry-to-PFI predictor (docs/predictor.md). train fits on the corpus's train\n"
    "split, choosing the regularisation by seeded k-fold cross-validation; eval reports\n"
    "R^2, MAE and Spearman rank correlation of predicted against true PFI per cut (--csv:\n"
    "split,cut,r2,mae,spearman,n; --per-job: one row per job); explain lists standardised\n"
    "coefficients and a drop-one ablation.\n"
    "\n"
    "  --corpus DIR  corpus with jobs.csv and curves.csv (default traces/h200-h100)\n"
    "  --method M    ridge (telemetry -> PFI per cut, default) or physics (telemetry ->\n"
    "                DVFS job parameters fitted to the training curves -> PFI)\n";

struct predict_args {
    const char *corpus, *model, *split, *output, *drop;
    struct pfs_predict_options o;
    bool csv, per_job;
};

static int
load_corpus(const char *dir, bool curves, struct pfs_jobset **js, struct pfs_curveset **cs,
            struct pfs_diag *d)
{
    char path[600];
    int rc;

    *js = NULL;
    *cs = NULL;
    snprintf(path, sizeof path, "%s/jobs.csv", dir);
    if ((rc = pfs_jobset_read(path, js, d)) != 0 || !curves)
        return rc;
    snprintf(path, sizeof path, "%s/curves.csv", dir);
    return pfs_curveset_read(path, cs, d);
}

static int
write_predictor_obj(const void *obj, FILE *fp, struct pfs_diag *d)
{
    return pfs_predictor_save(obj, fp, d);
}

/* Predicted and true PFI of the jobs of split; *n jobs. Arrays [n * PFS_N_CUTS]. */
static int
predict_split(const struct pfs_predictor *p, const struct pfs_jobset *js, const char *split,
              double **truth, double **pred, const char ***ids, size_t *n, struct pfs_diag *d)
{
    size_t m = 0;
    int rc = 0;

    *truth = malloc((js->n_jobs + 1) * PFS_N_CUTS * sizeof **truth);
    *pred = malloc((js->n_jobs + 1) * PFS_N_CUTS * sizeof **pred);
    *ids = malloc((js->n_jobs + 1) * sizeof **ids);
    if (!*truth || !*pred || !*ids)
        return pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t i = 0; i < js->n_jobs && rc == 0; i++) {
        const struct pfs_corpus_job *j = &js->jobs[i];
        struct pfs_telemetry tel;

        if (strcmp(j->split, split) != 0)
            continue;
        pfs_telemetry_of(j, &tel);
        rc = pfs_predictor_pfi(p, &tel, *pred + m * PFS_N_CUTS, d);
        for (size_t k = 0; rc == 0 && k < PFS_N_CUTS; k++) {
            (*truth)[m * PFS_N_CUTS + k] = j->pfi[k];
            if (!isfinite(j->pfi[k]))
                rc = pfs__diag_set(d, PFS_EINVAL, js->path, 0, 0, "pfi",
                                   "job '%s' has no true PFI at %.0f%% to compare with", j->job_id,
                                   pfs_cut(k) * 100);
        }
        (*ids)[m++] = j->job_id;
    }
    if (rc == 0 && m == 0)
        rc = pfs__diag_set(d, PFS_EINVAL, js->path, 0, 0, "split",
                           "no jobs in split '%s' (splits are train, validation, transfer)", split);
    if (rc && !d->file[0])
        pfs__strlcpy(d->file, js->path, sizeof d->file);
    *n = m;
    return rc;
}

static void
cut_column(const double *v, size_t n, size_t k, double *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = v[i * PFS_N_CUTS + k];
}

static int
predict_eval(const struct predict_args *a)
{
    struct pfs_predictor *p = NULL;
    struct pfs_jobset *js = NULL;
    struct pfs_curveset *cs = NULL;
    struct pfs_diag d = {0};
    double *truth = NULL, *pred = NULL;
    const char **ids = NULL;
    size_t n = 0;
    int rc;

    if ((rc = pfs_predictor_load(a->model, &p, &d)) == 0 &&
        (rc = load_corpus(a->corpus, false, &js, &cs, &d)) == 0)
        rc = predict_split(p, js, a->split, &truth, &pred, &ids, &n, &d);
    if (rc == 0 && a->per_job) {
        printf("job_id,split");
        for (size_t k = 0; k < PFS_N_CUTS; k++)
            printf(",true_pfi_%.0f,pred_pfi_%.0f", pfs_cut(k) * 100, pfs_cut(k) * 100);
        putchar('\n');
        for (size_t i = 0; i < n; i++) {
            printf("%s,%s", ids[i], a->split);
            for (size_t k = 0; k < PFS_N_CUTS; k++)
                printf(",%.6f,%.6f", truth[i * PFS_N_CUTS + k], pred[i * PFS_N_CUTS + k]);
            putchar('\n');
        }
    } else if (rc == 0) {
        double *t = malloc(n * sizeof *t), *q = malloc(n * sizeof *q);

        if (a->csv)
            puts("split,cut,r2,mae,spearman,n");
        else
            printf("%-10s %4s %7s %7s %9s %4s   (%s model, %s)\n", "split", "cut", "R^2", "MAE",
                   "Spearman", "n",
                   pfs_predictor_method(p) == PFS_PREDICT_RIDGE ? "ridge" : "physics", a->model);
        for (size_t k = 0; t && q && k < PFS_N_CUTS; k++) {
            cut_column(truth, n, k, t);
            cut_column(pred, n, k, q);
            printf(a->csv ? "%s,%.2f,%.4f,%.4f,%.4f,%zu\n" : "%-10s %4.2f %7.4f %7.4f %9.4f %4zu\n",
                   a->split, pfs_cut(k), pfs_stat_r2(t, q, n), pfs_stat_mae(t, q, n),
                   pfs_stat_spearman(t, q, n), n);
        }
        free(t);
        free(q);
    }
    free(truth);
    free(pred);
    free(ids);
    pfs_predictor_free(p);
    pfs_jobset_free(js);
    pfs_curveset_free(cs);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}

static int
predict_explain(const struct predict_args *a)
{
    struct pfs_predictor *p = NULL, *q = NULL;
    struct pfs_jobset *js = NULL;
    struct pfs_curveset *cs = NULL;
    struct pfs_diag d = {0};
    size_t k30 = 2;
    int rc;

    if ((rc = pfs_predictor_load(a->model, &p, &d)) != 0)
        return pfs_cli_report(&d, rc);
    if (pfs_predictor_method(p) == PFS_PREDICT_PHYSICS)
        k30 = 0; /* logit alpha carries the slope */
    printf("Standardised coefficients for %s (per 1 sd of the feature; lambda %.3g, CV RMSE "
           "%.4f):\n",
           pfs_predictor_target(p, k30), pfs_predictor_lambda(p, k30),
           pfs_predictor_cv_rmse(p, k30));
    for (size_t i = 0; i < pfs_predictor_n_features(p); i++)
        printf("  %-22s %+9.4f\n", pfs_predictor_feature(p, i), pfs_predictor_coef(p, k30, i));
    if ((rc = load_corpus(a->corpus, true, &js, &cs, &d)) != 0)
        goto out;
    printf("\nDrop-one ablation (retrained without the feature; CV RMSE of %s, %s):\n",
           pfs_predictor_target(p, k30), a->corpus);
    for (size_t i = 0; i < pfs_predictor_n_features(p) && rc == 0; i++) {
        struct pfs_predict_options o;

        pfs_predict_defaults(&o);
        o.method = pfs_predictor_method(p);
        o.drop = pfs_predictor_feature(p, i);
        if ((rc = pfs_predictor_train(js, cs, &o, &q, &d)) != 0)
            break;
        printf("  without %-22s %.4f (%+.4f)\n", o.drop, pfs_predictor_cv_rmse(q, k30),
               pfs_predictor_cv_rmse(q, k30) - pfs_predictor_cv_rmse(p, k30));
        pfs_predictor_free(q);
        q = NULL;
    }
out:
    pfs_predictor_free(p);
    pfs_jobset_free(js);
    pfs_curveset_free(cs);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}

static int
cmd_predict(int argc, char **argv)
{
    static const struct option opts[] = {
        {"corpus", required_argument, 0, 'c'}, {"model", required_argument, 0, 'm'},
        {"split", required_argument, 0, 's'},  {"method", required_argument, 0, 'M'},
        {"seed", required_argument, 0, 'S'},   {"folds", required_argument, 0, 'k'},
        {"drop", required_argument, 0, 'D'},   {"output", required_argument, 0, 'o'},
        {"csv", no_argument, 0, 'C'},          {"per-job", no_argument, 0, 'p'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    struct predict_args a = {.corpus = pfs_cli_shipped("traces/h200-h100"), .split = "validation"};
    const char *verb;
    unsigned long v;
    int c;

    pfs_predict_defaults(&a.o);
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(help_predict, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    verb = argv[1];
    argc--;
    argv++;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            a.corpus = optarg;
            break;
        case 'm':
            a.model = optarg;
            break;
        case 's':
            a.split = optarg;
            break;
        case 'M':
            if (strcmp(optarg, "ridge") == 0)
                a.o.method = PFS_PREDICT_RIDGE;
            else if (strcmp(optarg, "physics") == 0)
                a.o.method = PFS_PREDICT_PHYSICS;
            else
                return pfs_cli_usage("predict", "unknown method '%s' (ridge, physics)", optarg);
            break;
        case 'S':
        case 'k':
            if (!parse_count(optarg, &v) || v > 1000000000)
                return pfs_cli_usage("predict", "expected a non-negative integer, got '%s'",
                                     optarg);
            if (c == 'S')
                a.o.seed = v;
            else
                a.o.folds = (int)v;
            break;
        case 'D':
            a.o.drop = optarg;
            break;
        case 'o':
            a.output = optarg;
            break;
        case 'C':
            a.csv = true;
            break;
        case 'p':
            a.per_job = true;
            break;
        case 'h':
            return fputs(help_predict, stdout), EXIT_OK;
        default:
            return pfs_cli_usage("predict", "%s", "bad option");
        }
    }
    if (optind != argc)
        return pfs_cli_usage("predict", "unexpected argument '%s'", argv[optind]);
    if (strcmp(verb, "train") == 0) {
        struct pfs_predictor *p = NULL;
        struct pfs_jobset *js = NULL;
        struct pfs_curveset *cs = NULL;
        struct pfs_diag d = {0};
        int rc;

        if (a.o.folds < 2)
            return pfs_cli_usage("predict", "%s", "--folds must be at least 2");
        if ((rc = load_corpus(a.corpus, a.o.method == PFS_PREDICT_PHYSICS, &js, &cs, &d)) == 0 &&
            (rc = pfs_predictor_train(js, cs, &a.o, &p, &d)) == 0)
            rc = pfs_cli_write_output(a.output, write_predictor_obj, p, &d);
        pfs_predictor_free(p);
        pfs_jobset_free(js);
        pfs_curveset_free(cs);
        return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
    }
    if (strcmp(verb, "eval") == 0 || strcmp(verb, "explain") == 0) {
        if (!a.model)
            return pfs_cli_usage("predict", "%s", "expected --model MODEL.cfg");
        return verb[1] == 'v' ? predict_eval(&a) : predict_explain(&a);
    }
    return pfs_cli_usage("predict", "unknown verb '%s' (train, eval, explain)", verb);
}

/* ---------------------------------------------------------------------------------------
 * pfisim plot
 */

static const char help_plot[] =
    "usage: pfisim plot DB [-o|--output DIR] [--format png|svg|pdf] [--only NAME]\n"
    "\n"
    "Draws figures from a results database (pfisim run --db) into DIR (default\n"
    "results/plots), one file per figure, and prints their paths (docs/plots.md):\n"
    "  curves      five of the jobs' power-throughput curves, least to most flexible\n"
    "  pfi         PFI at a 30% cut by model family and phase (CDFs)\n"
    "  power       facility power against its limit over time, DR events shaded\n"
    "  throughput  throughput over time, one line per policy\n"
    "  comparison  mean throughput and gap recovered per policy (bars)\n"
    "  outcomes    per-job slowdown of the finished jobs, one CDF per policy\n"
    "  phoenix     the Phoenix replay's GPU power against the measured series (a run of\n"
    "              configs/phoenix-srp.cfg, with the data directory present)\n"
    "The first scenario in the database and its lowest seed are drawn.\n"
    "\n"
    "  -o, --output DIR  output directory (created if missing)\n"
    "  --format F       png (900 x 520 pixels, the default), svg or pdf\n"
    "  --only NAME      one figure\n";

static int
cmd_plot(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"format", required_argument, 0, 'f'},
                                         {"only", required_argument, 0, 'n'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    enum pfs_plot_format format = PFS_PLOT_PNG;
    const char *dir = "results/plots", *only = NULL;
    struct pfs_diag d = {0};
    int c, rc;

    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            dir = optarg;
            break;
        case 'f':
            if (strcmp(optarg, "png") == 0)
                format = PFS_PLOT_PNG;
            else if (strcmp(optarg, "svg") == 0)
                format = PFS_PLOT_SVG;
            else if (strcmp(optarg, "pdf") == 0)
                format = PFS_PLOT_PDF;
            else
                return pfs_cli_usage("plot", "--format is png, svg or pdf, not '%s'", optarg);
            break;
        case 'n':
            only = optarg;
            break;
        case 'h':
            return fputs(help_plot, stdout), EXIT_OK;
        default:
            return pfs_cli_usage("plot", "%s", "bad option");
        }
    }
    if (argc - optind != 1)
        return pfs_cli_usage("plot", "%s", "expected one results database");
    rc = pfs_plot_db(argv[optind], dir, format, only, stdout, &d);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}

/* ---------------------------------------------------------------------------------------
 * pfisim report
 */

static const char help_report[] =
    "usage: pfisim report DB [-o|--output REPORT.pdf]\n"
    "\n"
    "Writes a multi-page PDF (A4 landscape) from a results database: a title page naming\n"
    "the scenario, the pfisim version and whether its curves and workload are real or\n"
    "synthetic; a summary table; then each figure of pfisim plot on its own page with a\n"
    "one-line reading (docs/plots.md). Default output: results/report.pdf.\n";

static int
cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *output = "results/report.pdf";
    struct pfs_diag d = {0};
    int c, rc;

    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        if (c == 'o')
            output = optarg;
        else if (c == 'h')
            return fputs(help_report, stdout), EXIT_OK;
        else
            return pfs_cli_usage("report", "%s", "bad option");
    }
    if (argc - optind != 1)
        return pfs_cli_usage("report", "%s", "expected one results database");
    if ((rc = pfs_report_db(argv[optind], output, &d)) != 0)
        return pfs_cli_report(&d, rc);
    printf("%s\n", output);
    return EXIT_OK;
}

static int cmd_help(int argc, char **argv);

static const struct command commands[] = {
    {"run", "replay a scenario: every policy on the same workload, power, DR, deadlines",
     pfs_cli_run_help, pfs_cli_run},
    {"alloc", "one-shot allocation of a power budget by every policy", pfs_cli_alloc_help,
     pfs_cli_alloc},
    {"fit", "fit the DVFS model to a curves CSV; fit error and PFI per job", help_fit, cmd_fit},
    {"import", "convert real power-cap data (perseus, zeus, emerald) to a curves CSV", help_import,
     cmd_import},
    {"model", "print the DVFS model's curve for a job on a GPU profile", help_model, cmd_model},
    {"gpus", "list the GPU profiles", help_gpus, cmd_gpus},
    {"synth", "generate the synthetic H100/H200 corpus", help_synth, cmd_synth},
    {"predict", "train, evaluate and explain the telemetry-to-PFI predictor", help_predict,
     cmd_predict},
    {"plot", "figures from a results database", help_plot, cmd_plot},
    {"report", "PDF report from a results database", help_report, cmd_report},
    {"sweep", "a grid of scenarios (axes over any setting) into one results database",
     pfs_cli_sweep_help, pfs_cli_sweep},
    {"merge", "combine results databases (the shards of a sweep)", pfs_cli_merge_help,
     pfs_cli_merge},
    {"price", "interruptible-tier pricing: discounts and revenue per MW from a database",
     pfs_cli_price_help, pfs_cli_price},
    {"grid", "DR events from a utility's hourly demand above a threshold", pfs_cli_grid_help,
     pfs_cli_grid},
    {"workload", "build a workload from real or fitted arrivals and the corpus", help_workload,
     cmd_workload},
    {"capacity", "how many GPUs fit behind the cap, with and without DR, per policy",
     pfs_cli_capacity_help, pfs_cli_capacity},
    {"check", "validate a scenario and say what it means (pools, draw against the cap, events)",
     pfs_cli_check_help, pfs_cli_check},
    {"help", "help on a command", NULL, cmd_help},
    {NULL, NULL, NULL, NULL},
};

static const struct command *
find_command(const char *name)
{
    for (const struct command *c = commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

static const char *
command_name_at(size_t i)
{
    return i < sizeof commands / sizeof commands[0] ? commands[i].name : NULL;
}

static void
print_main_help(FILE *fp)
{
    fprintf(fp, "usage: pfisim [--help] [--version] [--list-policies] COMMAND [ARGS]\n"
                "\n"
                "pfisim simulates datacenter GPU power allocation under power caps and\n"
                "demand-response events, and measures jobs' Power Flexibility Index (PFI).\n"
                "\n"
                "Commands:\n");
    for (const struct command *c = commands; c->name; c++)
        fprintf(fp, "  %-8s %s\n", c->name, c->summary);
    fprintf(fp,
            "\n'pfisim help COMMAND' or 'pfisim COMMAND --help' tells more.\n"
            "Exit status: 0 ok, 1 failure, 2 usage, 3 invalid input, 4 I/O error.\n"
            "Real data: $PFISIM_DATA (now: %s).\n",
            pfs_data_dir());
}

static int
cmd_help(int argc, char **argv)
{
    const struct command *c;

    if (argc < 2) {
        print_main_help(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        /* help on help: the command list (before, exit 2) */
        print_main_help(stdout);
        return EXIT_OK;
    }
    c = find_command(argv[1]);
    if (!c || !c->usage) {
        fprintf(stderr, "pfisim help: unknown command '%s'%s\n", argv[1],
                pfs_cli_suggest(argv[1], command_name_at));
        return EXIT_USAGE;
    }
    if (c->run == cmd_import) {
        char *args[] = {(char *)"import", (char *)"--help", NULL};

        optind = 0;
        return cmd_import(2, args);
    }
    fputs(c->usage, stdout);
    return EXIT_OK;
}

int
main(int argc, char **argv)
{
    const struct command *c;

    gsl_set_error_handler_off();
    if (argc < 2) {
        print_main_help(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_main_help(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--list-policies") == 0) {
        for (size_t i = 0; pfs_policy_at(i); i++)
            printf("%-20s %s\n", pfs_policy_name(pfs_policy_at(i)),
                   pfs_policy_summary(pfs_policy_at(i)));
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("pfisim %s\n", PFS_VERSION);
        return EXIT_OK;
    }
    c = find_command(argv[1]);
    if (!c) {
        fprintf(stderr, "pfisim: unknown command '%s'%s (commands:", argv[1],
                pfs_cli_suggest(argv[1], command_name_at));
        for (const struct command *k = commands; k->name; k++)
            fprintf(stderr, " %s", k->name);
        fprintf(stderr, ")\n");
        return EXIT_USAGE;
    }
    optind = 0; /* a full reset of GNU getopt for the subcommand's own argv */
    return c->run(argc - 1, argv + 1);
}
