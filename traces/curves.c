/*
 * traces/curves.c - the curves CSV (docs/formats.md): reader, writer and in-memory builder.
 *
 * One row per measured point: job_id,gpu,n_gpus,cap_w,throughput,unit,power_w. Rows of a
 * job need not be adjacent or sorted; the set keeps jobs in order of first appearance and
 * each job's points sorted by cap, which is what the interpolation and the fit need. A
 * read is all or nothing: the first bad row fails it and frees what was built.
 *
 * Checks (each an error with file:line:column and the field): every required column in the
 * header; numbers finite; cap_w > 0; throughput >= 0; power_w >= 0; n_gpus >= 1; job_id,
 * gpu, unit non-empty; one gpu, n_gpus and unit per job; no (job, cap) twice.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

int
pfs_curveset_new(struct pfs_curveset **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : PFS_ENOMEM;
}

static void
job_curve_fini(struct pfs_job_curve *j)
{
    free(j->job_id);
    free(j->cap_w);
    free(j->throughput);
    free(j->power_w);
}

void
pfs_curveset_free(struct pfs_curveset *cs)
{
    if (!cs)
        return;
    for (size_t i = 0; i < cs->n_jobs; i++)
        job_curve_fini(&cs->jobs[i]);
    free(cs->jobs);
    if (cs->index)
        pfs__strindex_fini(cs->index);
    free(cs->index);
    free(cs);
}

/* Where a value error points: the CSV field when reading a file, else the job. */
struct where {
    struct pfs__csv *csv; /* NULL when building in memory */
    const size_t *idx;    /* column indices of the curves columns, when csv is set */
};

enum { COL_JOB, COL_GPU, COL_NGPUS, COL_CAP, COL_TPUT, COL_UNIT, COL_POWER, N_COLS };
static const char *const col_names[N_COLS] = {"job_id",     "gpu",  "n_gpus", "cap_w",
                                              "throughput", "unit", "power_w"};

static int
point_error(const struct pfs_curveset *cs, const struct where *w, int col, long line,
            struct pfs_diag *diag, const char *msg)
{
    if (w->csv)
        return pfs__csv_error(w->csv, w->idx[col], col_names[col], PFS_EINVAL, "%s", msg);
    return pfs__diag_set(diag, PFS_EINVAL, cs->path[0] ? cs->path : NULL, line, 0, col_names[col],
                         "%s: %s", col_names[col], msg);
}

/* Inserts (cap, throughput, power) into job j keeping caps sorted; fails on a duplicate. */
static int
job_insert(struct pfs_job_curve *j, double cap_w, double tput, double power_w)
{
    size_t n = j->n_points, k;
    double *c = realloc(j->cap_w, (n + 1) * sizeof *c);

    if (!c)
        return PFS_ENOMEM;
    j->cap_w = c;
    c = realloc(j->throughput, (n + 1) * sizeof *c);
    if (!c)
        return PFS_ENOMEM;
    j->throughput = c;
    c = realloc(j->power_w, (n + 1) * sizeof *c);
    if (!c)
        return PFS_ENOMEM;
    j->power_w = c;

    for (k = n; k > 0 && j->cap_w[k - 1] >= cap_w; k--)
        ;
    if (k < n && !(j->cap_w[k] > cap_w)) /* equal caps */
        return PFS_EINVAL;
    memmove(j->cap_w + k + 1, j->cap_w + k, (n - k) * sizeof *c);
    memmove(j->throughput + k + 1, j->throughput + k, (n - k) * sizeof *c);
    memmove(j->power_w + k + 1, j->power_w + k, (n - k) * sizeof *c);
    j->cap_w[k] = cap_w;
    j->throughput[k] = tput;
    j->power_w[k] = power_w;
    j->n_points = n + 1;
    return 0;
}

static int
curveset_add(struct pfs_curveset *cs, const struct where *w, const char *job_id, const char *gpu,
             long n_gpus, double cap_w, double tput, const char *unit, double power_w, long line,
             struct pfs_diag *diag)
{
    struct pfs_job_curve *j = NULL;
    char msg[300];
    int rc;

    if (!*job_id)
        return point_error(cs, w, COL_JOB, line, diag, "empty job id");
    if (!*gpu)
        return point_error(cs, w, COL_GPU, line, diag, "empty GPU name");
    if (strlen(gpu) >= sizeof j->gpu)
        return point_error(cs, w, COL_GPU, line, diag, "GPU name longer than 31 bytes");
    if (n_gpus < 1 || n_gpus > PFS__MAX_JOB_GPUS)
        return point_error(cs, w, COL_NGPUS, line, diag, "must be between 1 and 1000000");
    if (!isfinite(cap_w) || cap_w <= 0)
        return point_error(cs, w, COL_CAP, line, diag, "must be a positive number of watts");
    if (!isfinite(tput) || tput < 0)
        return point_error(cs, w, COL_TPUT, line, diag, "must not be negative");
    if (!*unit)
        return point_error(cs, w, COL_UNIT, line, diag, "empty unit");
    if (strlen(unit) >= sizeof j->unit)
        return point_error(cs, w, COL_UNIT, line, diag, "unit longer than 31 bytes");
    if (!isfinite(power_w) || power_w < 0)
        return point_error(cs, w, COL_POWER, line, diag, "must not be negative");
    if (power_w > PFS__POWER_OVER_CAP * cap_w) {
        /* A measured draw may sit above its cap (Zeus's A40 at its 100 W floor draws up to
         * 121 W); half again the cap is a unit or column mistake, not a measurement. */
        snprintf(msg, sizeof msg,
                 "%g W is more than %g times the cap of %g W (watts per GPU; "
                 "a unit or column mistake?)",
                 power_w, PFS__POWER_OVER_CAP, cap_w);
        return point_error(cs, w, COL_POWER, line, diag, msg);
    }

    /* Found through the index (kept while the set grows here), not a search of every job. */
    if (!cs->index && cs->n_jobs == 0 && !(cs->index = calloc(1, sizeof *cs->index)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    {
        size_t at = pfs__curveset_find_at(cs, job_id);

        j = at == SIZE_MAX ? NULL : &cs->jobs[at];
    }
    if (!j) {
        struct pfs_job_curve *jobs =
            pfs__grow(cs->jobs, &cs->cap_jobs, cs->n_jobs, sizeof *jobs, 64);

        if (!jobs)
            return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        cs->jobs = jobs;
        j = &cs->jobs[cs->n_jobs];
        memset(j, 0, sizeof *j);
        j->job_id = strdup(job_id);
        if (!j->job_id)
            return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        pfs__strlcpy(j->gpu, gpu, sizeof j->gpu);
        pfs__strlcpy(j->unit, unit, sizeof j->unit);
        j->n_gpus = (int)n_gpus;
        j->line = line;
        cs->n_jobs++;
        if (cs->index && cs->index->n == cs->n_jobs - 1 &&
            pfs__strindex_add(cs->index, cs->n_jobs - 1, pfs__curveset_key, cs) != 0)
            return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    } else {
        if (strcmp(j->gpu, gpu) != 0) {
            snprintf(msg, sizeof msg, "job '%s' has gpu '%s' here but '%s' on line %ld", job_id,
                     gpu, j->gpu, j->line);
            return point_error(cs, w, COL_GPU, line, diag, msg);
        }
        if (j->n_gpus != n_gpus) {
            snprintf(msg, sizeof msg, "job '%s' has %ld GPUs here but %d on line %ld", job_id,
                     n_gpus, j->n_gpus, j->line);
            return point_error(cs, w, COL_NGPUS, line, diag, msg);
        }
        if (strcmp(j->unit, unit) != 0) {
            snprintf(msg, sizeof msg, "job '%s' has unit '%s' here but '%s' on line %ld", job_id,
                     unit, j->unit, j->line);
            return point_error(cs, w, COL_UNIT, line, diag, msg);
        }
    }
    rc = job_insert(j, cap_w, tput, power_w);
    if (rc == PFS_EINVAL) {
        snprintf(msg, sizeof msg, "job '%s' already has a point at %g W", job_id, cap_w);
        return point_error(cs, w, COL_CAP, line, diag, msg);
    }
    if (rc)
        return pfs__diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
    return 0;
}

int
pfs_curveset_add(struct pfs_curveset *cs, const char *job_id, const char *gpu, int n_gpus,
                 double cap_w, double throughput, const char *unit, double power_w, long line,
                 struct pfs_diag *diag)
{
    struct where w = {0};

    return curveset_add(cs, &w, job_id, gpu, n_gpus, cap_w, throughput, unit, power_w, line, diag);
}

int
pfs_curveset_read(const char *path, struct pfs_curveset **out, struct pfs_diag *diag)
{
    struct pfs__csv csv;
    struct pfs_curveset *cs = NULL;
    size_t idx[N_COLS];
    struct where w = {&csv, idx};
    int rc;

    *out = NULL;
    rc = pfs__csv_open(&csv, path, diag);
    if (rc)
        return rc;
    rc = pfs__csv_header(&csv, col_names, N_COLS, idx);
    if (rc)
        goto fail;
    if ((rc = pfs_curveset_new(&cs)) != 0) {
        pfs__diag_set(diag, rc, path, 0, 0, NULL, "out of memory");
        goto fail;
    }
    pfs__strlcpy(cs->path, path, sizeof cs->path);
    while ((rc = pfs__csv_next(&csv)) == 1) {
        const char *job_id, *gpu, *unit;
        long n_gpus;
        double cap_w, tput, power_w;

        if ((rc = pfs__csv_str(&csv, idx[COL_JOB], "job_id", &job_id)) ||
            (rc = pfs__csv_str(&csv, idx[COL_GPU], "gpu", &gpu)) ||
            (rc = pfs__csv_long(&csv, idx[COL_NGPUS], "n_gpus", &n_gpus)) ||
            (rc = pfs__csv_double(&csv, idx[COL_CAP], "cap_w", &cap_w)) ||
            (rc = pfs__csv_double(&csv, idx[COL_TPUT], "throughput", &tput)) ||
            (rc = pfs__csv_str(&csv, idx[COL_UNIT], "unit", &unit)) ||
            (rc = pfs__csv_double(&csv, idx[COL_POWER], "power_w", &power_w)))
            goto fail;
        rc = curveset_add(cs, &w, job_id, gpu, n_gpus, cap_w, tput, unit, power_w, csv.line, diag);
        if (rc) {
            char what[96];

            snprintf(what, sizeof what, "reading the curves (job %zu of the file)", cs->n_jobs + 1);
            pfs__diag_oom(diag, rc, path, csv.line, what);
            goto fail;
        }
    }
    if (rc < 0)
        goto fail;
    if (cs->n_jobs == 0) {
        rc = pfs__diag_set(diag, PFS_EINVAL, path, csv.line, 0, NULL,
                           "no data rows after the header");
        goto fail;
    }
    pfs__csv_close(&csv);
    *out = cs;
    return 0;
fail:
    pfs__csv_close(&csv);
    pfs_curveset_free(cs);
    return rc;
}

/* Writes a field, quoting it when it holds a comma, a quote or leading/trailing space. */
int
pfs_curveset_write(const struct pfs_curveset *cs, FILE *fp, struct pfs_diag *diag)
{
    fputs("job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n", fp);
    for (size_t i = 0; i < cs->n_jobs; i++) {
        const struct pfs_job_curve *j = &cs->jobs[i];

        for (size_t k = 0; k < j->n_points; k++) {
            pfs__csv_put_text(fp, j->job_id);
            fputc(',', fp);
            pfs__csv_put_text(fp, j->gpu);
            fprintf(fp, ",%d,", j->n_gpus);
            pfs__csv_put_num(fp, j->cap_w[k]);
            fputc(',', fp);
            pfs__csv_put_num(fp, j->throughput[k]);
            fputc(',', fp);
            pfs__csv_put_text(fp, j->unit);
            fputc(',', fp);
            pfs__csv_put_num(fp, j->power_w[k]);
            fputc('\n', fp);
        }
    }
    if (fflush(fp) != 0 || ferror(fp))
        return pfs__diag_set(diag, PFS_EIO, NULL, 0, 0, NULL, "write error: %s", strerror(errno));
    return 0;
}

static int
write_obj(const void *obj, FILE *fp, struct pfs_diag *diag)
{
    return pfs_curveset_write(obj, fp, diag);
}

int
pfs_curveset_write_path(const struct pfs_curveset *cs, const char *path, struct pfs_diag *diag)
{
    return pfs__out_write(path, write_obj, cs, diag);
}

/* A curve set's scaled copy (models/sync.c's synchronous model over each job's GPUs): here,
 * with the sets, so that the models build none themselves. */
int
pfs_curveset_scale(const struct pfs_curveset *in, const struct pfs_scale_options *o,
                   struct pfs_curveset **out, struct pfs_diag *diag)
{
    struct pfs_curveset *cs = NULL;
    double *thr = NULL, *pow = NULL;
    size_t most = 1;
    int rc;

    *out = NULL;
    for (size_t k = 0; k < in->n_jobs; k++)
        most = in->jobs[k].n_points > most ? in->jobs[k].n_points : most;
    if (!(thr = malloc(most * sizeof *thr)) || !(pow = malloc(most * sizeof *pow)) ||
        (rc = pfs_curveset_new(&cs)) != 0) {
        free(thr);
        free(pow);
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    for (size_t k = 0; k < in->n_jobs; k++) {
        const struct pfs_job_curve *jc = &in->jobs[k];
        struct pfs_gpu g;
        struct pfs_fit fit;

        if ((rc = pfs_gpu_find(jc->gpu, &g, diag)) != 0 ||
            (rc = pfs_fit_job(&g, jc, &fit, diag)) != 0 ||
            (rc = pfs_job_curve_scale(&g, jc, &fit.job, o, true, thr, pow, diag)) != 0)
            goto fail;
        for (size_t q = 0; q < jc->n_points; q++) {
            struct pfs_diag why = {0};

            if ((rc = pfs_curveset_add(cs, jc->job_id, jc->gpu, (int)pfs_scaled_gpus(o, jc->n_gpus),
                                       jc->cap_w[q], thr[q], jc->unit, pow[q], jc->line, &why)) !=
                0) {
                /* (the reader's checks on what the model made, not on the file) */
                rc = pfs__diag_set(diag, rc, in->path, jc->line, 0, why.field,
                                   "job '%s' on %ld GPUs of these efficiencies, at %g W: %s; "
                                   "its slowest GPUs cannot hold the minimum clock there "
                                   "(docs/model.md section 1)",
                                   jc->job_id, pfs_scaled_gpus(o, jc->n_gpus), jc->cap_w[q],
                                   why.message);
                goto fail;
            }
        }
    }
    free(thr);
    free(pow);
    *out = cs;
    return 0;
fail:
    if (diag && !diag->file[0])
        pfs__strlcpy(diag->file, in->path, sizeof diag->file);
    free(thr);
    free(pow);
    pfs_curveset_free(cs);
    return rc;
}
