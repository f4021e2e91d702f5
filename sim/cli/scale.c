/*
 * sim/cli/scale.c - pfisim scale: jobs of a curves file at another size, on GPUs that are not
 * all alike, waiting at every step for the slowest (docs/model.md section 6, issue 19); and
 * PFI as a function of job size.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char pfs_cli_scale_help[] =
    "usage: pfisim scale CURVES.csv (--gpus N | --times K) [--shift] [VARIABILITY]\n"
    "                    [-o|--output OUT.csv]\n"
    "       pfisim scale CURVES.csv (--pfi | --swing) [--sizes N,N,...] [--jobs JOBS.csv]\n"
    "                    [VARIABILITY] [--csv]\n"
    "\n"
    "Runs every job of CURVES on N GPUs whose efficiencies differ (the clock a chip holds at\n"
    "a given power, relative to the median chip), each step waiting for the slowest GPU\n"
    "(docs/model.md section 6). A job's DVFS parameters are fitted to its curve; at each\n"
    "measured cap its throughput is its measured curve where identical GPUs would hold the\n"
    "clock of the GPU it waits for, scaled out to N GPUs. OUT.csv (default standard\n"
    "output) is a curves file of the jobs at N GPUs, for pfisim alloc; its first line says\n"
    "it is model-derived.\n"
    "\n"
    "  --gpus N        GPUs of every job (1 to 1048576)\n"
    "  --times K       every job on K times its own GPUs (its size relative to the others\n"
    "                  kept)\n"
    "  --shift         power shifting within each job (sync-shift): the job's budget given to\n"
    "                  its GPUs so that all hold one clock; cap_w is then the job's mean cap\n"
    "  --pfi           instead: PFI at 10-50% cuts by job size (--sizes, default\n"
    "                  8,32,256,1024,4096,16384), mean over each group of jobs (GPU, and\n"
    "                  family and phase when a jobs.csv is beside CURVES or given with\n"
    "                  --jobs), with uniform caps and with sync-shift, and how much of the\n"
    "                  32-GPU PFI is left at 4,096 GPUs\n"
    "  --swing         instead: the draw within a step at the default limit (every GPU\n"
    "                  computing, then every GPU in the step's collective), by job size:\n"
    "                  the peak-to-trough swing per MW of training and a job's swing in MW\n"
    "  --csv           with --pfi: group,n_gpus,jobs,pfi_10..pfi_50,shift_pfi_10..shift_pfi_50;\n"
    "                  with --swing: group,n_gpus,jobs,mean_w,peak_w,trough_w,swing_per_mw,\n"
    "                  swing_mw (per GPU W, means over the group's jobs)\n"
    "\n"
    "VARIABILITY (the GPUs' efficiencies, drawn per job from its id and the seed):\n"
    "  --eta-sd SD     sd of a GPU's efficiency (default 0.0172, calibrated on Sinha et al.,\n"
    "                  SC'22; 0: identical GPUs, the curves of CURVES scaled)\n"
    "  --outliers F:E  a share F of the GPUs are outliers of efficiency E times their draw\n"
    "                  (default none; Sinha et al. saw chips 1.5x slower: 0.667)\n"
    "  --seed S        (default 1)\n";

static const long default_sizes[] = {8, 32, 256, 1024, 4096, 16384};

/* One job at one size: PFI at each cut, uniform and shifted, on the curve scale -o writes. */
static int
job_pfi(const struct pfs_gpu *g, const struct pfs_job_curve *jc, const struct pfs_dvfs_job *fit,
        const struct pfs_variability *var, unsigned long seed, long n, double *pfi,
        double *pfi_shift, struct pfs_diag *d)
{
    struct pfs_scale_options o = {n, 0, *var, seed, false};
    double *thr = malloc(jc->n_points * sizeof *thr), *pow = malloc(jc->n_points * sizeof *pow);
    int rc = 0;

    if (!thr || !pow)
        rc = pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (int s = 0; s < 2 && rc == 0; s++) {
        struct pfs_curve *c = NULL;
        double *to = s ? pfi_shift : pfi;

        o.shift = s == 1;
        if ((rc = pfs_job_curve_scale(g, jc, fit, &o, false, thr, pow, d)) != 0 ||
            (rc = pfs_curve_sampled_new(jc->cap_w, thr, pow, jc->n_points, &c, d)) != 0)
            break;
        for (size_t k = 0; k < PFS_N_CUTS; k++)
            if (pfs_pfi(c, g->default_limit_w, pfs_cut(k), &to[k]) != 0)
                to[k] = (double)NAN;
        pfs_curve_free(c);
    }
    free(thr);
    free(pow);
    return rc;
}

struct group {
    char name[64];
    size_t jobs;
    double *sum; /* the table's cells: [n_sizes][2][PFS_N_CUTS] (--pfi), [n_sizes][3] (--swing) */
    size_t *cnt; /* --pfi: the jobs with a PFI in each cell */
};

/* The groups job jc counts in: its GPU, and with its corpus row its GPU, family and phase;
 * made (with cells of sums and, with_cnt, counts) on first sight in gr, which has room for
 * two a job. Their indices into at[]; returns how many (1 or 2), 0 without memory. */
static int
groups_of(struct group *gr, size_t *n_gr, size_t cells, bool with_cnt,
          const struct pfs_job_curve *jc, const struct pfs_corpus_job *cj, size_t at[2])
{
    char name[2][64];
    int n = cj ? 2 : 1;

    snprintf(name[0], sizeof name[0], "%s", jc->gpu);
    if (cj)
        snprintf(name[1], sizeof name[1], "%s %s %s", jc->gpu, cj->family, cj->phase);
    for (int w = 0; w < n; w++) {
        size_t q = 0;

        while (q < *n_gr && strcmp(gr[q].name, name[w]) != 0)
            q++;
        if (q == *n_gr) {
            pfs__strlcpy(gr[q].name, name[w], sizeof gr[q].name);
            gr[q].sum = calloc(cells, sizeof *gr[q].sum);
            gr[q].cnt = with_cnt ? calloc(cells, sizeof *gr[q].cnt) : NULL;
            ++*n_gr;
            if (!gr[q].sum || (with_cnt && !gr[q].cnt))
                return 0;
        }
        gr[q].jobs++;
        at[w] = q;
    }
    return n;
}

/* A table's row of work for job jc: its groups (groups_of), its GPU's profile and its DVFS
 * parameters fitted to its curve. Returns 0 or the error, in d. */
static int
job_setup(struct group *gr, size_t *n_gr, size_t cells, bool with_cnt,
          const struct pfs_curveset *cs, const struct pfs_job_curve *jc,
          const struct pfs_corpus_job *cj, size_t at[2], int *n_at, struct pfs_gpu *g,
          struct pfs_fit *fit, struct pfs_diag *d)
{
    int rc;

    if ((*n_at = groups_of(gr, n_gr, cells, with_cnt, jc, cj, at)) == 0)
        return pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if ((rc = pfs_gpu_find(jc->gpu, g, d)) != 0 || (rc = pfs_fit_job(g, jc, fit, d)) != 0)
        pfs__strlcpy(d->file, cs->path, sizeof d->file);
    return rc;
}

static void
groups_free(struct group *gr, size_t n_gr)
{
    for (size_t q = 0; q < n_gr; q++) {
        free(gr[q].sum);
        free(gr[q].cnt);
    }
    free(gr);
}

static int
pfi_table(const struct pfs_curveset *cs, const struct pfs_jobset *js,
          const struct pfs_variability *var, unsigned long seed, const long *sizes, size_t n_sizes,
          bool csv)
{
    struct group *gr = calloc(2 * cs->n_jobs + 1, sizeof *gr);
    size_t n_gr = 0, cells = n_sizes * 2 * PFS_N_CUTS;
    struct pfs_diag d = {0};
    int rc = 0;

    if (!gr)
        return pfs_cli_report(&(struct pfs_diag){.message = "out of memory"}, PFS_ENOMEM);
    for (size_t k = 0; k < cs->n_jobs && rc == 0; k++) {
        const struct pfs_job_curve *jc = &cs->jobs[k];
        const struct pfs_corpus_job *cj = js ? pfs_jobset_find(js, jc->job_id) : NULL;
        size_t at[2];
        int n_at = 0;
        struct pfs_gpu g;
        struct pfs_fit fit;

        rc = job_setup(gr, &n_gr, cells, true, cs, jc, cj, at, &n_at, &g, &fit, &d);
        for (size_t z = 0; z < n_sizes && rc == 0; z++) {
            double pfi[2][PFS_N_CUTS];

            if ((rc = job_pfi(&g, jc, &fit.job, var, seed, sizes[z], pfi[0], pfi[1], &d)) != 0)
                break;
            for (int w = 0; w < n_at; w++)
                for (size_t s = 0; s < 2; s++)
                    for (size_t c = 0; c < PFS_N_CUTS; c++)
                        if (!isnan(pfi[s][c])) {
                            gr[at[w]].sum[(z * 2 + s) * PFS_N_CUTS + c] += pfi[s][c];
                            gr[at[w]].cnt[(z * 2 + s) * PFS_N_CUTS + c]++;
                        }
        }
    }
    if (rc == 0 && csv) {
        fputs("group,n_gpus,jobs", stdout);
        for (int s = 0; s < 2; s++)
            for (size_t c = 0; c < PFS_N_CUTS; c++)
                printf(",%spfi_%.0f", s ? "shift_" : "", 100 * pfs_cut(c));
        putchar('\n');
        for (size_t q = 0; q < n_gr; q++)
            for (size_t z = 0; z < n_sizes; z++) {
                printf("%s,%ld,%zu", gr[q].name, sizes[z], gr[q].jobs);
                for (size_t s = 0; s < 2; s++)
                    for (size_t c = 0; c < PFS_N_CUTS; c++) {
                        size_t i = (z * 2 + s) * PFS_N_CUTS + c;

                        if (gr[q].cnt[i])
                            printf(",%.6g", gr[q].sum[i] / (double)gr[q].cnt[i]);
                        else
                            fputs(",", stdout);
                    }
                putchar('\n');
            }
    } else if (rc == 0) {
        size_t z32 = n_sizes, z4k = n_sizes;

        for (size_t z = 0; z < n_sizes; z++) {
            z32 = sizes[z] == 32 ? z : z32;
            z4k = sizes[z] == 4096 ? z : z4k;
        }
        printf("PFI at a 30%% cut by job size, uniform caps [with sync-shift]; GPU efficiency sd "
               "%g, outliers %g (x%g), seed %lu\n",
               var->eta_sd, var->outlier_frac, var->outlier_frac > 0 ? var->outlier_eta : 1, seed);
        printf("%-24s %5s", "group", "jobs");
        for (size_t z = 0; z < n_sizes; z++)
            printf(" %15ld", sizes[z]);
        if (z32 < n_sizes && z4k < n_sizes)
            printf("  4096/32");
        putchar('\n');
        for (size_t q = 0; q < n_gr; q++) {
            double at[2] = {NAN, NAN};

            printf("%-24s %5zu", gr[q].name, gr[q].jobs);
            for (size_t z = 0; z < n_sizes; z++) {
                size_t u = (z * 2) * PFS_N_CUTS + 2, s = (z * 2 + 1) * PFS_N_CUTS + 2;
                double pu = gr[q].cnt[u] ? gr[q].sum[u] / (double)gr[q].cnt[u] : (double)NAN;
                double ps = gr[q].cnt[s] ? gr[q].sum[s] / (double)gr[q].cnt[s] : (double)NAN;

                printf("   %5.3f [%5.3f]", pu, ps);
                if (z == z32)
                    at[0] = pu;
                if (z == z4k)
                    at[1] = pu;
            }
            if (z32 < n_sizes && z4k < n_sizes)
                printf("  %7.3f", at[1] / at[0]);
            putchar('\n');
        }
    }
    groups_free(gr, n_gr);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}

/* The swing of every job at every size: the group means of its draw within a step. */
static int
swing_table(const struct pfs_curveset *cs, const struct pfs_jobset *js,
            const struct pfs_variability *var, unsigned long seed, const long *sizes,
            size_t n_sizes, bool csv)
{
    struct group *gr = calloc(cs->n_jobs * 2 + 1, sizeof *gr);
    size_t n_gr = 0, cells = n_sizes * 3;
    struct pfs_diag d = {0};
    double *eta = NULL;
    long most = 1;
    int rc = 0;

    for (size_t z = 0; z < n_sizes; z++)
        most = sizes[z] > most ? sizes[z] : most;
    if (!gr || !(eta = malloc((size_t)most * sizeof *eta))) {
        free(gr);
        return pfs_cli_report(&(struct pfs_diag){.message = "out of memory"}, PFS_ENOMEM);
    }
    for (size_t k = 0; k < cs->n_jobs && rc == 0; k++) {
        const struct pfs_job_curve *jc = &cs->jobs[k];
        const struct pfs_corpus_job *cj = js ? pfs_jobset_find(js, jc->job_id) : NULL;
        size_t at[2];
        int n_at = 0;
        struct pfs_gpu g;
        struct pfs_fit fit;

        rc = job_setup(gr, &n_gr, cells, false, cs, jc, cj, at, &n_at, &g, &fit, &d);
        for (size_t z = 0; z < n_sizes && rc == 0; z++) {
            struct pfs_sync_gpus *set = NULL;
            struct pfs_sync_swing sw;

            if ((rc = pfs_eta_draw(var, pfs_job_seed(seed, jc->job_id), (size_t)sizes[z], eta,
                                   &d)) != 0 ||
                (rc = pfs_sync_gpus_new(eta, (size_t)sizes[z], &set, &d)) != 0)
                break;
            pfs_sync_swing(&g, &fit.job, set, g.default_limit_w, &sw);
            pfs_sync_gpus_free(set);
            for (int w = 0; w < n_at; w++) {
                gr[at[w]].sum[z * 3] += sw.mean_w;
                gr[at[w]].sum[z * 3 + 1] += sw.peak_w;
                gr[at[w]].sum[z * 3 + 2] += sw.trough_w;
            }
        }
    }
    if (rc == 0 && csv) {
        puts("group,n_gpus,jobs,mean_w,peak_w,trough_w,swing_per_mw,swing_mw");
        for (size_t q = 0; q < n_gr; q++)
            for (size_t z = 0; z < n_sizes; z++) {
                double m = gr[q].sum[z * 3] / (double)gr[q].jobs;
                double p = gr[q].sum[z * 3 + 1] / (double)gr[q].jobs;
                double tr = gr[q].sum[z * 3 + 2] / (double)gr[q].jobs;

                printf("%s,%ld,%zu,%.6g,%.6g,%.6g,%.6g,%.6g\n", gr[q].name, sizes[z], gr[q].jobs, m,
                       p, tr, (p - tr) / m, (p - tr) * (double)sizes[z] / 1e6);
            }
    } else if (rc == 0) {
        printf("The draw within a step at the default limit (model-derived, docs/model.md "
               "section 6): peak-to-trough swing per MW of training [a job's swing, MW];\n"
               "GPU efficiency sd %g, outliers %g (x%g), seed %lu\n",
               var->eta_sd, var->outlier_frac, var->outlier_frac > 0 ? var->outlier_eta : 1, seed);
        printf("%-24s %5s", "group", "jobs");
        for (size_t z = 0; z < n_sizes; z++)
            printf(" %16ld", sizes[z]);
        putchar('\n');
        for (size_t q = 0; q < n_gr; q++) {
            printf("%-24s %5zu", gr[q].name, gr[q].jobs);
            for (size_t z = 0; z < n_sizes; z++) {
                double m = gr[q].sum[z * 3] / (double)gr[q].jobs;
                double sw = (gr[q].sum[z * 3 + 1] - gr[q].sum[z * 3 + 2]) / (double)gr[q].jobs;

                printf("   %5.2f [%6.3g]", sw / m, sw * (double)sizes[z] / 1e6);
            }
            putchar('\n');
        }
    }
    groups_free(gr, n_gr);
    free(eta);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}

/* The scaled set with its first line: what it is and where it came from. */
struct labelled {
    const struct pfs_curveset *cs;
    const char *line;
};

static int
write_labelled(const void *obj, FILE *fp, struct pfs_diag *d)
{
    const struct labelled *l = obj;

    fputs(l->line, fp);
    return pfs_curveset_write(l->cs, fp, d);
}

int
pfs_cli_scale(int argc, char **argv)
{
    static const struct option opts[] = {{"gpus", required_argument, 0, 'n'},
                                         {"times", required_argument, 0, 'k'},
                                         {"shift", no_argument, 0, 's'},
                                         {"pfi", no_argument, 0, 'p'},
                                         {"swing", no_argument, 0, 'w'},
                                         {"sizes", required_argument, 0, 'z'},
                                         {"jobs", required_argument, 0, 'j'},
                                         {"eta-sd", required_argument, 0, 'e'},
                                         {"outliers", required_argument, 0, 'O'},
                                         {"seed", required_argument, 0, 'S'},
                                         {"csv", no_argument, 0, 'v'},
                                         {"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    struct pfs_scale_options o = {0, 0, {PFS_ETA_SD_CALIBRATED, 0, 1}, 1, false};
    const char *output = NULL, *jobs = NULL;
    bool pfi = false, csv = false, swing = false;
    long sizes[16];
    size_t n_sizes = 0;
    struct pfs_curveset *cs = NULL, *scaled = NULL;
    struct pfs_jobset *js = NULL;
    struct pfs_diag d = {0};
    int c, rc, code;

    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'n': {
            unsigned long v;

            if (!pfs_cli_parse_count(optarg, &v) || v < 1 || v > PFS_SCALE_MAX_GPUS)
                return pfs_cli_usage("scale", "--gpus takes 1 to %d, got '%s'", PFS_SCALE_MAX_GPUS,
                                     optarg);
            o.n_gpus = (long)v;
            break;
        }
        case 'k': {
            unsigned long v;

            if (!pfs_cli_parse_count(optarg, &v) || v < 1 || v > PFS_SCALE_MAX_GPUS)
                return pfs_cli_usage("scale", "--times takes 1 to %d, got '%s'", PFS_SCALE_MAX_GPUS,
                                     optarg);
            o.times = (long)v;
            break;
        }
        case 's':
            o.shift = true;
            break;
        case 'p':
            pfi = true;
            break;
        case 'w':
            swing = true;
            break;
        case 'z':
            n_sizes = pfs_cli_parse_list(optarg, sizes, 16, 0);
            for (size_t k = 0; k < n_sizes; k++)
                if (sizes[k] < 1 || sizes[k] > PFS_SCALE_MAX_GPUS)
                    n_sizes = 0;
            if (n_sizes == 0)
                return pfs_cli_usage("scale",
                                     "--sizes takes up to 16 distinct sizes of 1 to %d GPUs, "
                                     "got '%s'",
                                     PFS_SCALE_MAX_GPUS, optarg);
            break;
        case 'j':
            jobs = optarg;
            break;
        case 'e':
            if (!pfs__parse_double(optarg, &o.var.eta_sd) ||
                !(o.var.eta_sd >= 0 && o.var.eta_sd <= PFS_ETA_SD_MAX))
                return pfs_cli_usage("scale", "--eta-sd takes 0 to %g, got '%s'", PFS_ETA_SD_MAX,
                                     optarg);
            break;
        case 'O': {
            const char *colon = strchr(optarg, ':');
            char f[64];

            if (!colon || (size_t)(colon - optarg) >= sizeof f)
                return pfs_cli_usage("scale", "--outliers takes SHARE:ETA, got '%s'", optarg);
            memcpy(f, optarg, (size_t)(colon - optarg));
            f[colon - optarg] = '\0';
            if (!pfs_cli_parse_frac(f, &o.var.outlier_frac) ||
                !(o.var.outlier_frac >= 0 && o.var.outlier_frac <= 1) ||
                !pfs__parse_double(colon + 1, &o.var.outlier_eta) ||
                !(o.var.outlier_eta >= PFS_OUTLIER_ETA_MIN && o.var.outlier_eta <= 1))
                return pfs_cli_usage("scale",
                                     "--outliers takes SHARE:ETA, a share in [0, 1] and an "
                                     "efficiency in [%g, 1], got '%s'",
                                     PFS_OUTLIER_ETA_MIN, optarg);
            break;
        }
        case 'S':
            if (!pfs_cli_parse_count(optarg, &o.seed))
                return pfs_cli_usage("scale", "--seed takes a non-negative integer, got '%s'",
                                     optarg);
            break;
        case 'v':
            csv = true;
            break;
        case 'o':
            output = optarg;
            break;
        case 'h':
            return fputs(pfs_cli_scale_help, stdout), EXIT_OK;
        default:
            return pfs_cli_usage("scale", "%s", "bad option");
        }
    }
    if (optind + 1 != argc)
        return pfs_cli_usage("scale", "%s", "expected one curves file");
    if ((int)pfi + (int)swing + (o.n_gpus > 0) + (o.times > 0) != 1)
        return pfs_cli_usage("scale", "%s",
                             "give exactly one of --gpus N, --times K, --pfi and --swing");
    pfi = pfi || swing; /* (the two tables take the same options) */
    if (!pfi && (n_sizes || csv || jobs))
        return pfs_cli_usage("scale", "%s", "--sizes, --jobs and --csv go with --pfi or --swing");
    if (pfi && (o.shift || output))
        return pfs_cli_usage("scale", "%s", "--shift and -o go with --gpus or --times");
    if ((rc = pfs_cli_not_over("scale", "-o", output, (const char *const *)&argv[optind], 1)))
        return rc;
    if ((rc = pfs_curveset_read(argv[optind], &cs, &d)) != 0)
        return pfs_cli_report(&d, rc);
    if (pfi) {
        char guess[600];

        if (!jobs)
            jobs = pfs_cli_jobs_beside(argv[optind], guess, sizeof guess);
        if (jobs && (rc = pfs_jobset_read(jobs, &js, &d)) != 0) {
            pfs_curveset_free(cs);
            return pfs_cli_report(&d, rc);
        }
        if (n_sizes == 0) {
            n_sizes = sizeof default_sizes / sizeof *default_sizes;
            memcpy(sizes, default_sizes, sizeof default_sizes);
        }
        code = swing ? swing_table(cs, js, &o.var, o.seed, sizes, n_sizes, csv)
                     : pfi_table(cs, js, &o.var, o.seed, sizes, n_sizes, csv);
        pfs_jobset_free(js);
        pfs_curveset_free(cs);
        return code;
    }
    if ((rc = pfs_curveset_scale(cs, &o, &scaled, &d)) != 0) {
        if (!d.file[0])
            pfs__strlcpy(d.file, argv[optind], sizeof d.file);
        pfs_curveset_free(cs);
        return pfs_cli_report(&d, rc);
    }
    {
        char line[700], first[256] = "";
        struct labelled l = {scaled, line};
        FILE *in = fopen(argv[optind], "r");

        /* Synthetic input stays labelled synthetic. */
        if (in) {
            if (!fgets(first, sizeof first, in) || first[0] != '#' || !strstr(first, "SYNTHETIC"))
                first[0] = '\0';
            fclose(in);
        }
        snprintf(line, sizeof line,
                 "# MODEL-DERIVED by pfisim scale --%s %ld%s --eta-sd %g --outliers %g:%g "
                 "--seed %lu from %s (docs/model.md section 6)%s\n",
                 o.n_gpus > 0 ? "gpus" : "times", o.n_gpus > 0 ? o.n_gpus : o.times,
                 o.shift ? " --shift" : "", o.var.eta_sd, o.var.outlier_frac, o.var.outlier_eta,
                 o.seed, argv[optind], first[0] ? "; the input is SYNTHETIC" : "");
        rc = pfs_cli_write_output(output, write_labelled, &l, &d);
    }
    pfs_curveset_free(scaled);
    pfs_curveset_free(cs);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}
