/*
 * traces/jobs.c - jobs.csv: one row per job, its configuration, its telemetry at the
 * uncapped operating point, and its true PFI (docs/formats.md).
 *
 * Only job_id, gpu and n_gpus are required in every row; the rest may be empty, because an
 * operator's imported job (pfisim import nvidia-smi/dcgm) knows its telemetry but not, say,
 * its tensor activity or its PFI. Empty numbers read as NAN, empty integers as 0. What is
 * present is checked: fractions in [0, 1], nothing negative, names from their lists.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum col {
    C_JOB,
    C_GPU,
    C_SPLIT,
    C_TWIN,
    C_NGPUS,
    C_FAMILY,
    C_PHASE,
    C_PARAMS,
    C_ACTIVE,
    C_SEQ,
    C_MB,
    C_TP,
    C_PP,
    C_DP,
    C_EP,
    C_POWER,
    C_FRAC,
    C_CLOCK,
    C_SMACT,
    C_TENSOR,
    C_DRAM,
    C_NVLINK,
    C_NET,
    C_TPS,
    C_PFI10,
    C_PFI20,
    C_PFI30,
    C_PFI40,
    C_PFI50,
    N_COLS
};

static const char *const names[N_COLS] = {"job_id",
                                          "gpu",
                                          "split",
                                          "twin_id",
                                          "n_gpus",
                                          "family",
                                          "phase",
                                          "params_b",
                                          "active_params_b",
                                          "seq_len",
                                          "micro_batch",
                                          "tp",
                                          "pp",
                                          "dp",
                                          "ep",
                                          "power_w",
                                          "power_frac",
                                          "sm_clock_mhz",
                                          "sm_active",
                                          "tensor_active",
                                          "dram_active",
                                          "nvlink_gbps",
                                          "net_gbps",
                                          "tokens_per_s",
                                          "pfi_10",
                                          "pfi_20",
                                          "pfi_30",
                                          "pfi_40",
                                          "pfi_50"};

/* Where each double column lives in the struct, and whether it is a 0..1 fraction. */
static double *
num_field(struct pfs_corpus_job *j, int c, bool *is_frac)
{
    *is_frac = false;
    switch (c) {
    case C_PARAMS:
        return &j->params_b;
    case C_ACTIVE:
        return &j->active_params_b;
    case C_POWER:
        return &j->power_w;
    case C_FRAC:
        return &j->power_frac;
    case C_CLOCK:
        return &j->sm_clock_mhz;
    case C_SMACT:
        *is_frac = true;
        return &j->sm_active;
    case C_TENSOR:
        *is_frac = true;
        return &j->tensor_active;
    case C_DRAM:
        *is_frac = true;
        return &j->dram_active;
    case C_NVLINK:
        return &j->nvlink_gbps;
    case C_NET:
        return &j->net_gbps;
    case C_TPS:
        return &j->tokens_per_s;
    default:
        if (c >= C_PFI10 && c <= C_PFI50)
            return &j->pfi[c - C_PFI10];
        return NULL;
    }
}

static int *
int_field(struct pfs_corpus_job *j, int c)
{
    switch (c) {
    case C_SEQ:
        return &j->seq_len;
    case C_MB:
        return &j->micro_batch;
    case C_TP:
        return &j->tp;
    case C_PP:
        return &j->pp;
    case C_DP:
        return &j->dp;
    case C_EP:
        return &j->ep;
    default:
        return NULL;
    }
}

static bool
one_of(const char *v, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(v, *list) == 0)
            return true;
    return false;
}

/* Reads a text column into dst; allowed == NULL means any text. */
static int
read_text(struct pfs__csv *csv, const size_t *idx, int c, char *dst, size_t size,
          const char *const *allowed, bool required)
{
    const char *v;
    int rc = pfs__csv_str(csv, idx[c], names[c], &v);

    if (rc)
        return rc;
    if (required && !*v)
        return pfs__csv_error(csv, idx[c], names[c], PFS_EINVAL, "must not be empty");
    if (*v && allowed && !one_of(v, allowed))
        return pfs__csv_error(csv, idx[c], names[c], PFS_EINVAL, "unknown value '%s'", v);
    if (!pfs__strlcpy(dst, v, size))
        return pfs__csv_error(csv, idx[c], names[c], PFS_EINVAL, "longer than %zu bytes", size - 1);
    return 0;
}

static int
read_row(struct pfs__csv *csv, const size_t *idx, struct pfs_corpus_job *j)
{
    static const char *const splits[] = {"train", "validation", "transfer", NULL};
    static const char *const families[] = {"dense", "moe", NULL};
    static const char *const phases[] = {"pretrain", "finetune", "lora", NULL};
    long n;
    int rc;

    memset(j, 0, sizeof *j);
    if ((rc = read_text(csv, idx, C_JOB, j->job_id, sizeof j->job_id, NULL, true)) ||
        (rc = read_text(csv, idx, C_GPU, j->gpu, sizeof j->gpu, NULL, true)) ||
        (rc = read_text(csv, idx, C_SPLIT, j->split, sizeof j->split, splits, false)) ||
        (rc = read_text(csv, idx, C_TWIN, j->twin_id, sizeof j->twin_id, NULL, false)) ||
        (rc = read_text(csv, idx, C_FAMILY, j->family, sizeof j->family, families, false)) ||
        (rc = read_text(csv, idx, C_PHASE, j->phase, sizeof j->phase, phases, false)) ||
        (rc = pfs__csv_long(csv, idx[C_NGPUS], names[C_NGPUS], &n)))
        return rc;
    if (n < 1 || n > PFS__MAX_JOB_GPUS)
        return pfs__csv_error(csv, idx[C_NGPUS], names[C_NGPUS], PFS_EINVAL,
                              "must be between 1 and 1000000");
    j->n_gpus = (int)n;
    for (int c = 0; c < N_COLS; c++) {
        bool is_frac;
        double *d = num_field(j, c, &is_frac);
        int *k = int_field(j, c);
        const char *v;

        if (!d && !k)
            continue;
        if ((rc = pfs__csv_str(csv, idx[c], names[c], &v)) != 0)
            return rc;
        if (!*v) {
            if (d)
                *d = NAN;
            continue;
        }
        if (d) {
            if ((rc = pfs__csv_double(csv, idx[c], names[c], d)) != 0)
                return rc;
            if (*d < 0 && c < C_PFI10) /* a measured PFI may dip below 0 with noise */
                return pfs__csv_error(csv, idx[c], names[c], PFS_EINVAL, "must not be negative");
            if (is_frac && *d > 1)
                return pfs__csv_error(csv, idx[c], names[c], PFS_EINVAL,
                                      "is a fraction: must be at most 1");
        } else {
            if ((rc = pfs__csv_long(csv, idx[c], names[c], &n)) != 0)
                return rc;
            if (n < 0 || n > 1000000)
                return pfs__csv_error(csv, idx[c], names[c], PFS_EINVAL,
                                      "must be between 0 and 1000000");
            *k = (int)n;
        }
    }
    return 0;
}

static const char *
job_key(const void *base, size_t i)
{
    return ((const struct pfs_jobset *)base)->jobs[i].job_id;
}

int
pfs_jobset_read(const char *path, struct pfs_jobset **out, struct pfs_diag *diag)
{
    struct pfs__csv csv;
    struct pfs_jobset *js;
    size_t idx[N_COLS], cap = 0;
    int rc;

    *out = NULL;
    if ((rc = pfs__csv_open(&csv, path, diag)) != 0)
        return rc;
    js = calloc(1, sizeof *js);
    if (!js) {
        pfs__csv_close(&csv);
        return pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
    }
    pfs__strlcpy(js->path, path, sizeof js->path);
    if (!(js->index = calloc(1, sizeof *js->index))) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
        goto fail;
    }
    if ((rc = pfs__csv_header(&csv, names, N_COLS, idx)) != 0)
        goto fail;
    while ((rc = pfs__csv_next(&csv)) == 1) {
        struct pfs_corpus_job j;

        if ((rc = read_row(&csv, idx, &j)) != 0)
            goto fail;
        if (pfs_jobset_find(js, j.job_id)) {
            rc = pfs__csv_error(&csv, idx[C_JOB], "job_id", PFS_EINVAL, "job '%s' appears twice",
                                j.job_id);
            goto fail;
        }
        void *grown = pfs__grow(js->jobs, &cap, js->n_jobs, sizeof *js->jobs, 64);

        if (!grown) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
            goto fail;
        }
        js->jobs = grown;
        js->jobs[js->n_jobs++] = j;
        if (pfs__strindex_add(js->index, js->n_jobs - 1, job_key, js) != 0) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
            goto fail;
        }
    }
    if (rc < 0)
        goto fail;
    if (js->n_jobs == 0) {
        rc = pfs__diag_set(diag, PFS_EINVAL, path, csv.line, 0, NULL,
                           "no data rows after the header");
        goto fail;
    }
    pfs__csv_close(&csv);
    *out = js;
    return 0;
fail:
    pfs__diag_oom(diag, rc, path, csv.line, "reading the file"); /* (names it) */
    pfs__csv_close(&csv);
    pfs_jobset_free(js);
    return rc;
}

static void
put_num(FILE *fp, double v)
{
    fputc(',', fp);
    if (!isnan(v))
        pfs__csv_put_num(fp, v);
}

int
pfs_jobset_write(const struct pfs_jobset *js, FILE *fp, struct pfs_diag *diag)
{
    for (int c = 0; c < N_COLS; c++)
        fprintf(fp, "%s%s", c ? "," : "", names[c]);
    fputc('\n', fp);
    for (size_t i = 0; i < js->n_jobs; i++) {
        struct pfs_corpus_job copy = js->jobs[i], *j = &copy;

        const char *text[] = {j->job_id, j->gpu, j->split, j->twin_id};

        if (strpbrk(j->job_id, "\n\r") || strpbrk(j->twin_id, "\n\r"))
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "job_id",
                                 "job id with a line break cannot be written to a CSV");
        for (int c = 0; c < 4; c++) {
            if (c)
                fputc(',', fp);
            pfs__csv_put_text(fp, text[c]);
        }
        fprintf(fp, ",%d,%s,%s", j->n_gpus, j->family, j->phase);
        for (int c = C_PARAMS; c < N_COLS; c++) {
            bool is_frac;
            double *d = num_field(j, c, &is_frac);
            int *k = int_field(j, c);

            if (d)
                put_num(fp, *d);
            else if (k)
                fprintf(fp, ",%d", *k);
        }
        fputc('\n', fp);
    }
    if (fflush(fp) != 0 || ferror(fp))
        return pfs__diag_set(diag, PFS_EIO, NULL, 0, 0, NULL, "write error");
    return 0;
}

const struct pfs_corpus_job *
pfs_jobset_find(const struct pfs_jobset *js, const char *job_id)
{
    if (js->index && js->index->n == js->n_jobs) {
        size_t i = pfs__strindex_find(js->index, job_id, job_key, js);

        return i == SIZE_MAX ? NULL : &js->jobs[i];
    }
    for (size_t i = 0; i < js->n_jobs; i++)
        if (strcmp(js->jobs[i].job_id, job_id) == 0)
            return &js->jobs[i];
    return NULL;
}

void
pfs_jobset_free(struct pfs_jobset *js)
{
    if (!js)
        return;
    free(js->jobs);
    if (js->index)
        pfs__strindex_fini(js->index);
    free(js->index);
    free(js);
}
