/*
 * sim/cli/predict.c - pfisim predict: train, evaluate and explain the predictor
 * (docs/predictor.md).
 */
#include <errno.h>
#include <getopt.h>
#include <gsl/gsl_errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---------------------------------------------------------------------------------------
 * pfisim predict
 */

const char pfs_cli_predict_help[] =
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
            pfs__csv_put_text(stdout, ids[i]); /* (quoted where CSV needs it) */
            printf(",%s", a->split);
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

int
pfs_cli_predict(int argc, char **argv)
{
    static const struct option opts[] = {
        {"corpus", required_argument, 0, 'c'}, {"model", required_argument, 0, 'm'},
        {"split", required_argument, 0, 's'},  {"method", required_argument, 0, 'M'},
        {"seed", required_argument, 0, 'S'},   {"folds", required_argument, 0, 'k'},
        {"drop", required_argument, 0, 'D'},   {"output", required_argument, 0, 'o'},
        {"csv", no_argument, 0, 'C'},          {"per-job", no_argument, 0, 'p'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    struct predict_args a = {.corpus = pfs_cli_shipped("traces/h200-h100"), .split = "validation"};
    const char *verb, *allowed, *not_taken = NULL;
    unsigned long v;
    int c;

    pfs_predict_defaults(&a.o);
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(pfs_cli_predict_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    verb = argv[1];
    argc--;
    argv++;
    /* Each verb's options (the rest were read and ignored: eval --method physics evaluated
     * the model given, train --split trained on the training split whatever was asked). */
    allowed = strcmp(verb, "train") == 0 ? "cMSkDo" : strcmp(verb, "eval") == 0 ? "mcsCp" : "mc";
    for (int li = -1; (c = getopt_long(argc, argv, "ho:", opts, &li)) != -1; li = -1) {
        if (!not_taken && c != 'h' && c != '?' && !strchr(allowed, c))
            not_taken = li >= 0 ? opts[li].name : "o";
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
            if (!pfs_cli_parse_count(optarg, &v) || v > 1000000000)
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
            return fputs(pfs_cli_predict_help, stdout), EXIT_OK;
        default:
            return pfs_cli_usage("predict", "%s", "bad option");
        }
    }
    if (optind != argc)
        return pfs_cli_usage("predict", "unexpected argument '%s'", argv[optind]);
    if (not_taken &&
        (strcmp(verb, "train") == 0 || strcmp(verb, "eval") == 0 || strcmp(verb, "explain") == 0))
        return pfs_cli_usage("predict", "predict %s does not take -%s%s", verb,
                             strlen(not_taken) > 1 ? "-" : "", not_taken);
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
