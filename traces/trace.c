/*
 * traces/trace.c - real cluster job traces, and the arrival models fitted to them.
 *
 * Four sources, read from the data directory, never copied into the project
 * (shared/data/README.md has their provenance and licences):
 *   kalos        AcmeTrace Kalos LLM jobs: submit_offset_s, duration_s, gpu_num
 *   itp:clusterNN Microsoft ITP (ElasticFlow traces) raw/clusterNN.csv: submission_time,
 *                duration, num_gpu
 *   helios, philly  the latest 15,000 jobs: interval (s since the previous submission, any
 *                job), run_time, gpu_num; submit times are the running sum of intervals
 * CPU-only jobs (gpu 0, many in Helios) and jobs of zero length are dropped after their
 * interval has counted; failed and killed jobs are kept, since they held their GPUs.
 *
 * The arrival model (configs/arrivals/SOURCE.cfg, fitted by `pfisim workload --fit SOURCE`):
 * arrivals are a gamma renewal process with the trace's mean interarrival time and its
 * coefficient of variation (burstiness); GPU counts a categorical distribution over powers
 * of two (a count rounded up); durations the trace's 21 quantiles (0, 5, ..., 100%) in two
 * size classes, up to 8 GPUs and above, sampled by log-linear interpolation. Keeping the size
 * classes apart keeps the correlation that matters for power: big jobs run long (Kalos's
 * pre-training jobs hold 96% of its GPU time).
 */
#include <errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <libconfig.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct trace_kind {
    const char *prefix;  /* source name, or prefix for itp: */
    const char *relpath; /* under the data directory; for itp: the folder of clusterNN.csv */
    const char *submit, *duration, *gpus; /* column names */
    bool interval;                        /* submit column holds intervals */
};

static const struct trace_kind kinds[] = {
    {"kalos", "jobs/acmetrace-kalos/kalos_completed_llm_jobs.csv", "submit_offset_s", "duration_s",
     "gpu_num", false},
    {"itp:", "jobs/elasticflow-itp/raw/", "submission_time", "duration", "num_gpu", false},
    {"helios", "jobs/helios-philly/helios_latest15000.csv", "interval", "run_time", "gpu_num",
     true},
    {"philly", "jobs/helios-philly/philly_latest15000.csv", "interval", "run_time", "gpu_num",
     true},
};

static int
cmp_job(const void *a, const void *b)
{
    const struct pfs_trace_job *x = a, *y = b;

    /* Equal submit times keep file order: durations break ties, then GPU counts, so the
     * order never depends on qsort's instability. */
    if (x->submit_s < y->submit_s || x->submit_s > y->submit_s)
        return x->submit_s < y->submit_s ? -1 : 1;
    if (x->duration_s < y->duration_s || x->duration_s > y->duration_s)
        return x->duration_s < y->duration_s ? -1 : 1;
    return (x->n_gpus > y->n_gpus) - (x->n_gpus < y->n_gpus);
}

/* The trace kind source names, and the file that holds it into path; NULL if none. */
static const struct trace_kind *
trace_kind(const char *source, char *path, size_t size)
{
    const struct trace_kind *k = NULL;
    char rel[128];

    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t n = strlen(kinds[i].prefix);

        if (kinds[i].prefix[n - 1] == ':' ? strncmp(source, kinds[i].prefix, n) == 0
                                          : strcmp(source, kinds[i].prefix) == 0)
            k = &kinds[i];
    }
    if (k && strncmp(source, "itp:", 4) == 0) {
        const char *c = source + 4;

        if (strlen(c) != 9 || strncmp(c, "cluster", 7) != 0 || c[7] < '0' || c[7] > '9' ||
            c[8] < '0' || c[8] > '9')
            return NULL;
        snprintf(rel, sizeof rel, "jobs/elasticflow-itp/raw/%s.csv", c);
    } else if (k) {
        pfs__strlcpy(rel, k->relpath, sizeof rel);
    } else {
        return NULL;
    }
    if (snprintf(path, size, "%s/%s", pfs_data_dir(), rel) >= (int)size)
        return NULL;
    return k;
}

bool
pfs__trace_path(const char *source, char *path, size_t size)
{
    return trace_kind(source, path, size) != NULL;
}

int
pfs_trace_read(const char *source, struct pfs_trace **out, struct pfs_diag *diag)
{
    char path[512];

    *out = NULL;
    if (!trace_kind(source, path, sizeof path))
        return pfs__diag_set(diag, PFS_ENOTFOUND, NULL, 0, 0, "arrivals",
                             "unknown trace '%s' (known: kalos, itp:cluster01..itp:cluster10, "
                             "helios, philly)",
                             source);
    return pfs__trace_read_file(source, path, out, diag);
}

int
pfs__trace_read_file(const char *source, const char *path, struct pfs_trace **out,
                     struct pfs_diag *diag)
{
    char scratch[512];
    const struct trace_kind *k = trace_kind(source, scratch, sizeof scratch);
    const char *names[3];
    struct pfs__csv csv;
    struct pfs_trace *t;
    size_t idx[3], cap = 0;
    double clock = 0;
    int rc;

    *out = NULL;
    if (!k)
        return pfs__diag_set(diag, PFS_ENOTFOUND, NULL, 0, 0, "arrivals", "unknown trace '%s'",
                             source);
    names[0] = k->submit;
    names[1] = k->duration;
    names[2] = k->gpus;
    if ((rc = pfs__csv_open(&csv, path, diag)) != 0)
        return rc;
    t = calloc(1, sizeof *t);
    if (!t) {
        pfs__csv_close(&csv);
        return pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
    }
    pfs__strlcpy(t->source, source, sizeof t->source);
    pfs__strlcpy(t->path, path, sizeof t->path);
    if ((rc = pfs__csv_header(&csv, names, 3, idx)) != 0)
        goto fail;
    while ((rc = pfs__csv_next(&csv)) == 1) {
        struct pfs_trace_job j;
        double sub;
        long g;

        if ((rc = pfs__csv_double(&csv, idx[0], names[0], &sub)) ||
            (rc = pfs__csv_double(&csv, idx[1], names[1], &j.duration_s)) ||
            (rc = pfs__csv_long(&csv, idx[2], names[2], &g)))
            goto fail;
        if (sub < 0 || j.duration_s < 0 || g < 0) {
            int c = sub < 0 ? 0 : j.duration_s < 0 ? 1 : 2;

            rc = pfs__csv_error(&csv, idx[c], names[c], PFS_EINVAL, "must not be negative");
            goto fail;
        }
        if (g > PFS__MAX_JOB_GPUS) {
            rc = pfs__csv_error(&csv, idx[2], names[2], PFS_EINVAL,
                                "%ld GPUs: more than a job can have (%d)", g, PFS__MAX_JOB_GPUS);
            goto fail;
        }
        clock = k->interval ? clock + sub : sub;
        if (g == 0 || !(j.duration_s > 0))
            continue;
        j.submit_s = clock;
        j.n_gpus = (int)g;
        void *grown = pfs__grow(t->jobs, &cap, t->n_jobs, sizeof *t->jobs, 1024);

        if (!grown) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
            goto fail;
        }
        t->jobs = grown;
        t->jobs[t->n_jobs++] = j;
    }
    if (rc < 0)
        goto fail;
    if (t->n_jobs == 0) {
        rc = pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL, "no GPU jobs in the trace");
        goto fail;
    }
    qsort(t->jobs, t->n_jobs, sizeof *t->jobs, cmp_job);
    pfs__csv_close(&csv);
    *out = t;
    return 0;
fail:
    pfs__diag_oom(diag, rc, path, csv.line, "reading the file"); /* (names it) */
    pfs__csv_close(&csv);
    pfs_trace_free(t);
    return rc;
}

void
pfs_trace_free(struct pfs_trace *t)
{
    if (!t)
        return;
    free(t->jobs);
    free(t);
}

static int
pow2_at_least(int g)
{
    int p = 1;

    while (p < g && p < (1 << 30))
        p <<= 1;
    return p;
}

/* Fills q[] with the 21 quantiles (0, 5, ..., 100%) of v[0..n), n > 0 (sorts v). */
static void
quantiles(double *v, size_t n, double *q)
{
    gsl_sort(v, 1, n);
    for (int i = 0; i < PFS_ARRIVAL_N_QUANTILES; i++)
        q[i] = gsl_stats_quantile_from_sorted_data(v, 1, n, i / 20.0);
}

/* The quantiles of one size class: its own when it has 10 jobs or more, else the pooled
 * ones, since a handful of jobs says little about a distribution. */
static void
class_quantiles(double *v, size_t n, double *q, const double *pooled)
{
    if (n < 10)
        memcpy(q, pooled, PFS_ARRIVAL_N_QUANTILES * sizeof *q);
    else
        quantiles(v, n, q);
}

int
pfs_arrival_fit(const struct pfs_trace *t, struct pfs_arrival_model *m, struct pfs_diag *diag)
{
    double *v;
    size_t n = t->n_jobs, ns = 0, nl = 0;
    double pooled[PFS_ARRIVAL_N_QUANTILES];

    memset(m, 0, sizeof *m);
    if (n < 10)
        return pfs__diag_set(diag, PFS_EINVAL, t->path, 0, 0, NULL,
                             "an arrival model needs at least 10 jobs, the trace has %zu", n);
    v = malloc(n * sizeof *v);
    if (!v)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    pfs__strlcpy(m->source, t->source, sizeof m->source);
    snprintf(m->cite, sizeof m->cite,
             "%.100s in the data directory; shared/data/README.md "
             "gives its provenance and licence",
             strstr(t->path, "jobs/") ? strstr(t->path, "jobs/") : t->path);
    m->n_jobs = n;
    m->span_days = (t->jobs[n - 1].submit_s - t->jobs[0].submit_s) / 86400.0;
    for (size_t i = 1; i < n; i++)
        v[i - 1] = t->jobs[i].submit_s - t->jobs[i - 1].submit_s;
    m->interarrival_mean_s = gsl_stats_mean(v, 1, n - 1);
    m->interarrival_cv =
        gsl_stats_sd_m(v, 1, n - 1, m->interarrival_mean_s) / m->interarrival_mean_s;
    for (size_t i = 0; i < n; i++) {
        int b = pow2_at_least(t->jobs[i].n_gpus), k;

        for (k = 0; k < (int)m->n_buckets && m->bucket_gpus[k] != b; k++)
            ;
        if (k == (int)m->n_buckets && m->n_buckets < PFS_ARRIVAL_MAX_BUCKETS)
            m->bucket_gpus[m->n_buckets++] = b;
        if (k < (int)m->n_buckets)
            m->bucket_p[k] += 1.0 / (double)n;
    }
    /* Buckets in increasing size (insertion sort, a handful of them). */
    for (size_t i = 1; i < m->n_buckets; i++)
        for (size_t k = i; k > 0 && m->bucket_gpus[k - 1] > m->bucket_gpus[k]; k--) {
            int g = m->bucket_gpus[k];
            double p = m->bucket_p[k];

            m->bucket_gpus[k] = m->bucket_gpus[k - 1];
            m->bucket_p[k] = m->bucket_p[k - 1];
            m->bucket_gpus[k - 1] = g;
            m->bucket_p[k - 1] = p;
        }
    m->small_max_gpus = 8;
    for (size_t i = 0; i < n; i++)
        v[i] = t->jobs[i].duration_s;
    quantiles(v, n, pooled);
    for (size_t i = 0; i < n; i++)
        if (t->jobs[i].n_gpus <= m->small_max_gpus)
            v[ns++] = t->jobs[i].duration_s;
    class_quantiles(v, ns, m->dur_small_q, pooled);
    for (size_t i = 0; i < n; i++)
        if (t->jobs[i].n_gpus > m->small_max_gpus)
            v[nl++] = t->jobs[i].duration_s;
    class_quantiles(v, nl, m->dur_large_q, pooled);
    free(v);
    return 0;
}

int
pfs_arrival_write(const struct pfs_arrival_model *m, FILE *fp, struct pfs_diag *diag)
{
    fprintf(fp,
            "# configs/arrivals/%s.cfg - arrival model of the %s trace (docs/workload.md).\n"
            "# Generated by `pfisim workload --fit %s`; do not edit by hand. Derived from real\n"
            "# data that stays in the data directory (shared/data/README.md).\n"
            "arrivals = {\n"
            "    source = \"%s\";\n"
            "    cite = \"%s\";\n"
            "    jobs = %zu;\n"
            "    span_days = %.17e;\n"
            "    interarrival_mean_s = %.17e;\n"
            "    interarrival_cv = %.17e;\n"
            "    bucket_gpus = [",
            m->source, m->source, m->source, m->source, m->cite, m->n_jobs, m->span_days,
            m->interarrival_mean_s, m->interarrival_cv);
    for (size_t i = 0; i < m->n_buckets; i++)
        fprintf(fp, "%s%d", i ? ", " : "", m->bucket_gpus[i]);
    fprintf(fp, "];\n");
    pfs__cfg_write_floats(fp, "    ", "bucket_p", m->bucket_p, m->n_buckets);
    fprintf(fp, "    small_max_gpus = %d;\n", m->small_max_gpus);
    pfs__cfg_write_floats(fp, "    ", "duration_small_q", m->dur_small_q, PFS_ARRIVAL_N_QUANTILES);
    pfs__cfg_write_floats(fp, "    ", "duration_large_q", m->dur_large_q, PFS_ARRIVAL_N_QUANTILES);
    fprintf(fp, "};\n");
    if (fflush(fp) != 0 || ferror(fp))
        return pfs__diag_set(diag, PFS_EIO, NULL, 0, 0, NULL, "write error: %s", strerror(errno));
    return 0;
}

int
pfs_arrival_find(const char *source, struct pfs_arrival_model *m, struct pfs_diag *diag)
{
    char want[64], file[96];

    /* itp:cluster04 is shipped as itp-cluster04.cfg */
    pfs__strlcpy(want, source, sizeof want);
    for (char *p = want; *p; p++)
        if (*p == ':')
            *p = '-';
    for (size_t k = 0; pfs__arrivals_embedded[k].name; k++) {
        config_t cfg;
        config_setting_t *root;
        double buckets[PFS_ARRIVAL_MAX_BUCKETS];
        const char *str;
        int ival, rc = 0;
        double d;

        if (strcmp(pfs__arrivals_embedded[k].name, want) != 0)
            continue;
        snprintf(file, sizeof file, "configs/arrivals/%s.cfg", want);
        memset(m, 0, sizeof *m);
        config_init(&cfg);
        if (config_read_string(&cfg, pfs__arrivals_embedded[k].text) == CONFIG_FALSE) {
            rc = pfs__diag_set(diag, PFS_EINVAL, file, config_error_line(&cfg), 0, NULL, "%s",
                               config_error_text(&cfg));
        } else if (!(root = config_lookup(&cfg, "arrivals"))) {
            rc = pfs__diag_set(diag, PFS_EINVAL, file, 0, 0, "arrivals", "arrivals: missing group");
        } else {
            if (config_setting_lookup_string(root, "source", &str))
                pfs__strlcpy(m->source, str, sizeof m->source);
            if (config_setting_lookup_string(root, "cite", &str))
                pfs__strlcpy(m->cite, str, sizeof m->cite);
            if (config_setting_lookup_int(root, "jobs", &ival))
                m->n_jobs = (size_t)ival;
            if (config_setting_lookup_float(root, "span_days", &d))
                m->span_days = d;
            if (!config_setting_lookup_float(root, "interarrival_mean_s",
                                             &m->interarrival_mean_s) ||
                !config_setting_lookup_float(root, "interarrival_cv", &m->interarrival_cv) ||
                !config_setting_lookup_int(root, "small_max_gpus", &m->small_max_gpus))
                rc = pfs__diag_set(diag, PFS_EINVAL, file, config_setting_source_line(root), 0,
                                   "arrivals", "arrivals: missing interarrival or size setting");
            if (!rc)
                rc = pfs__cfg_read_floats(root, "bucket_gpus", "arrivals", buckets, 1,
                                          PFS_ARRIVAL_MAX_BUCKETS, NULL, &m->n_buckets, file, diag);
            if (!rc)
                rc = pfs__cfg_read_floats(root, "bucket_p", "arrivals", m->bucket_p, m->n_buckets,
                                          m->n_buckets, "per bucket", NULL, file, diag);
            if (!rc)
                rc = pfs__cfg_read_floats(root, "duration_small_q", "arrivals", m->dur_small_q,
                                          PFS_ARRIVAL_N_QUANTILES, PFS_ARRIVAL_N_QUANTILES,
                                          "per quantile", NULL, file, diag);
            if (!rc)
                rc = pfs__cfg_read_floats(root, "duration_large_q", "arrivals", m->dur_large_q,
                                          PFS_ARRIVAL_N_QUANTILES, PFS_ARRIVAL_N_QUANTILES,
                                          "per quantile", NULL, file, diag);
            for (size_t i = 0; !rc && i < m->n_buckets; i++)
                m->bucket_gpus[i] = (int)buckets[i];
        }
        config_destroy(&cfg);
        return rc;
    }
    return pfs__diag_set(diag, PFS_ENOTFOUND, NULL, 0, 0, "arrivals",
                         "no fitted arrival model for '%s' in configs/arrivals/", source);
}
