/*
 * traces/import.c - importers that turn the real power-cap data sets into curves.
 *
 * Each importer reads one upstream file (shared/data/README.md has their provenance) and
 * appends its jobs to a curve set; what a row means is decided here and documented in
 * docs/formats.md:
 * - perseus: Perseus (SOSP '24) zeus_csv_*_zeus_global.csv. One job per model; every GPU
 *   of the pipeline has the same limit (a row whose limits differ is rejected: that is the
 *   _local file). throughput = 1 / time [iterations/s]; per-GPU power =
 *   energy / time / n_gpus, n_gpus = dp x tp x pp as the row gives them. The file has one
 *   power_limit_<k> column per stage of the widest pipeline it was written for; a row uses
 *   the first pp of them, and the columns of stages it does not have hold 0.0 (ignored).
 * - zeus: Zeus (NSDI '23) summary_power_<gpu>.csv. One single-GPU job per
 *   (dataset, network, batch size, optimizer); throughput = 1 / time_per_epoch
 *   [epochs/s]; power = average_power. The file name names the GPU.
 * - emerald: Emerald Phoenix dvfs_sweep.csv. One job per workload; throughput as given
 *   (upstream does not state its unit: "units/s"); per-GPU power = power per GPU;
 *   n_gpus = total GPU power / power per GPU, which must come out an integer.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

/* Puts the importer's input file into a diag that came from the in-memory builder. */
static int
blame_file(struct pfs_diag *diag, const char *path, int rc)
{
    if (rc && diag && diag->file[0] == '\0')
        pfs__strlcpy(diag->file, path, sizeof diag->file);
    return rc;
}

static int
positive(struct pfs__csv *csv, size_t idx, const char *name, double *v)
{
    int rc = pfs__csv_double(csv, idx, name, v);

    if (rc == 0 && !(*v > 0))
        rc = pfs__csv_error(csv, idx, name, PFS_EINVAL, "must be positive, got '%s'",
                            csv->fields[idx]);
    return rc;
}

static int
non_negative(struct pfs__csv *csv, size_t idx, const char *name, double *v)
{
    int rc = pfs__csv_double(csv, idx, name, v);

    if (rc == 0 && !(*v >= 0))
        rc = pfs__csv_error(csv, idx, name, PFS_EINVAL, "must not be negative, got '%s'",
                            csv->fields[idx]);
    return rc;
}

/* A whole number in [1, 4096] from column idx. */
static int
whole_count(struct pfs__csv *csv, size_t idx, const char *name, long *v)
{
    int rc = pfs__csv_long(csv, idx, name, v);

    if (rc == 0 && !(*v >= 1 && *v <= 4096))
        rc = pfs__csv_error(csv, idx, name, PFS_EINVAL,
                            "must be a whole number in [1, 4096], got '%s'", csv->fields[idx]);
    return rc;
}

static int
perseus_read(const char *path, const char *gpu, struct pfs_curveset *cs, struct pfs_diag *diag)
{
    static const char *const names[] = {"model_name", "time", "energy", "power_limit_0",
                                        "dp",         "tp",   "pp"};
    struct pfs__csv csv;
    size_t idx[7], lim[64], n_lim = 0;
    int rc;

    if ((rc = pfs__csv_open(&csv, path, diag)) != 0)
        return rc;
    if ((rc = pfs__csv_header(&csv, names, 7, idx)) != 0)
        goto out;
    /* power_limit_<k>, k = 0, 1, ...: one column per pipeline stage of the widest row */
    for (size_t k = 0; k < 64; k++) {
        char want[40];
        size_t f;

        snprintf(want, sizeof want, "power_limit_%zu", k);
        for (f = 0; f < csv.n_fields && strcmp(csv.fields[f], want) != 0; f++)
            ;
        if (f == csv.n_fields)
            break;
        lim[n_lim++] = f;
    }
    while ((rc = pfs__csv_next(&csv)) == 1) {
        const char *model;
        double t, e, cap0;
        long dp, tp, pp;

        if ((rc = pfs__csv_str(&csv, idx[0], "model_name", &model)) ||
            (rc = positive(&csv, idx[1], "time", &t)) ||
            (rc = non_negative(&csv, idx[2], "energy", &e)) ||
            (rc = whole_count(&csv, idx[4], "dp", &dp)) ||
            (rc = whole_count(&csv, idx[5], "tp", &tp)) ||
            (rc = whole_count(&csv, idx[6], "pp", &pp)) ||
            (rc = positive(&csv, lim[0], "power_limit_0", &cap0)))
            goto out;
        if ((size_t)pp > n_lim) {
            rc = pfs__csv_error(&csv, idx[6], "pp", PFS_EINVAL,
                                "%ld stages, but the file has power_limit columns for %zu", pp,
                                n_lim);
            goto out;
        }
        for (size_t k = 1; k < n_lim; k++) {
            char name[40];
            double cap;

            snprintf(name, sizeof name, "power_limit_%zu", k);
            if (k >= (size_t)pp) { /* a stage this row does not have: 0.0, ignored */
                if ((rc = non_negative(&csv, lim[k], name, &cap)) != 0)
                    goto out;
                if (cap > 0) {
                    rc = pfs__csv_error(&csv, lim[k], name, PFS_EINVAL,
                                        "a limit for stage %zu of a %ld-stage pipeline (pp): "
                                        "expected 0 for a stage it does not have",
                                        k, pp);
                    goto out;
                }
                continue;
            }
            if ((rc = positive(&csv, lim[k], name, &cap)) != 0)
                goto out;
            if (!(fabs(cap - cap0) < 1e-9)) {
                rc = pfs__csv_error(&csv, lim[k], name, PFS_EINVAL,
                                    "differs from power_limit_0 (%g W): only uniform-limit "
                                    "(zeus_global) files are curves",
                                    cap0);
                goto out;
            }
        }
        rc = pfs_curveset_add(cs, model, gpu, (int)(dp * tp * pp), cap0, 1.0 / t, "iter/s",
                              e / t / (double)(dp * tp * pp), csv.line, diag);
        if (rc)
            goto out;
    }
out:
    pfs__diag_oom(diag, rc, path, csv.line, "reading the file"); /* (names it) */
    pfs__csv_close(&csv);
    return blame_file(diag, path, rc < 0 ? rc : 0);
}

static int
zeus_read(const char *path, const char *gpu, struct pfs_curveset *cs, struct pfs_diag *diag)
{
    static const char *const names[] = {"dataset",      "network",     "batch_size",
                                        "optimizer",    "power_limit", "time_per_epoch",
                                        "average_power"};
    struct pfs__csv csv;
    size_t idx[7];
    int rc;

    if ((rc = pfs__csv_open(&csv, path, diag)) != 0)
        return rc;
    if ((rc = pfs__csv_header(&csv, names, 7, idx)) != 0)
        goto out;
    while ((rc = pfs__csv_next(&csv)) == 1) {
        const char *ds, *net, *opt;
        long batch;
        double cap, t, p;
        char job[160];

        if ((rc = pfs__csv_str(&csv, idx[0], "dataset", &ds)) ||
            (rc = pfs__csv_str(&csv, idx[1], "network", &net)) ||
            (rc = pfs__csv_long(&csv, idx[2], "batch_size", &batch)) ||
            (rc = pfs__csv_str(&csv, idx[3], "optimizer", &opt)) ||
            (rc = positive(&csv, idx[4], "power_limit", &cap)) ||
            (rc = positive(&csv, idx[5], "time_per_epoch", &t)) ||
            (rc = non_negative(&csv, idx[6], "average_power", &p)))
            goto out;
        snprintf(job, sizeof job, "%s-%s-b%ld-%s", ds, net, batch, opt);
        rc = pfs_curveset_add(cs, job, gpu, 1, cap, 1.0 / t, "epochs/s", p, csv.line, diag);
        if (rc)
            goto out;
    }
out:
    pfs__diag_oom(diag, rc, path, csv.line, "reading the file"); /* (names it) */
    pfs__csv_close(&csv);
    return blame_file(diag, path, rc < 0 ? rc : 0);
}

static const char *
zeus_gpu_from_path(const char *path)
{
    static const char *const gpus[] = {"a40", "rtx6000", "p100"};
    const char *base = strrchr(path, '/');

    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
        char want[64];

        snprintf(want, sizeof want, "summary_power_%s.csv", gpus[i]);
        if (strcmp(base, want) == 0)
            return gpus[i];
    }
    return NULL;
}

static int
emerald_read(const char *path, const char *gpu, struct pfs_curveset *cs, struct pfs_diag *diag)
{
    static const char *const names[] = {"Workload", "GPU power cap", "throughput",
                                        "total GPU power", "power per GPU"};
    struct pfs__csv csv;
    size_t idx[5];
    int rc;

    if ((rc = pfs__csv_open(&csv, path, diag)) != 0)
        return rc;
    if ((rc = pfs__csv_header(&csv, names, 5, idx)) != 0)
        goto out;
    while ((rc = pfs__csv_next(&csv)) == 1) {
        const char *job;
        double cap, t, total, per;
        long n_gpus;

        if ((rc = pfs__csv_str(&csv, idx[0], "Workload", &job)) ||
            (rc = positive(&csv, idx[1], "GPU power cap", &cap)) ||
            (rc = non_negative(&csv, idx[2], "throughput", &t)) ||
            (rc = positive(&csv, idx[3], "total GPU power", &total)) ||
            (rc = positive(&csv, idx[4], "power per GPU", &per)))
            goto out;
        n_gpus = lround(total / per);
        if (n_gpus < 1 || fabs(total / per - (double)n_gpus) > 0.01) {
            rc = pfs__csv_error(&csv, idx[3], "total GPU power", PFS_EINVAL,
                                "total / per-GPU power = %.4g is not a whole number of GPUs",
                                total / per);
            goto out;
        }
        rc = pfs_curveset_add(cs, job, gpu, (int)n_gpus, cap, t, "units/s", per, csv.line, diag);
        if (rc)
            goto out;
    }
out:
    pfs__diag_oom(diag, rc, path, csv.line, "reading the file"); /* (names it) */
    pfs__csv_close(&csv);
    return blame_file(diag, path, rc < 0 ? rc : 0);
}

static const struct pfs_importer_ops importer_perseus = {
    .name = "perseus",
    .summary = "Perseus (SOSP '24) zeus_csv_*_zeus_global.csv: pipeline training, uniform limit",
    .read = perseus_read,
    .gpu_from_path = NULL,
};

static const struct pfs_importer_ops importer_zeus = {
    .name = "zeus",
    .summary = "Zeus (NSDI '23) summary_power_<gpu>.csv: single-GPU DNN training per epoch",
    .read = zeus_read,
    .gpu_from_path = zeus_gpu_from_path,
};

static const struct pfs_importer_ops importer_emerald = {
    .name = "emerald",
    .summary = "Emerald Phoenix dvfs_sweep.csv: LLM training and inference on A100 SXM",
    .read = emerald_read,
    .gpu_from_path = NULL,
};

const struct pfs_importer_ops *const pfs_importers[] = {
    &importer_perseus,
    &importer_zeus,
    &importer_emerald,
    NULL,
};

const struct pfs_importer_ops *
pfs_importer_find(const char *name)
{
    for (size_t i = 0; pfs_importers[i]; i++)
        if (strcmp(pfs_importers[i]->name, name) == 0)
            return pfs_importers[i];
    return NULL;
}

int
pfs_import_read(const struct pfs_importer_ops *imp, const char *path, const char *gpu,
                struct pfs_curveset *cs, struct pfs_diag *diag)
{
    const char *own = imp->gpu_from_path ? imp->gpu_from_path(path) : NULL;
    struct pfs_gpu a, b;

    /* (the same profile under another of its names passes) */
    if (own && !(pfs_gpu_find(own, &a, NULL) == 0 && pfs_gpu_find(gpu, &b, NULL) == 0 &&
                 strcmp(a.name, b.name) == 0))
        return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL,
                             "measured on %s, as the file's name says, not on %s: its curves "
                             "would be labelled another GPU's",
                             own, gpu);
    return imp->read(path, gpu, cs, diag);
}
