/*
 * tests/test_workload.c - workloads follow their sources: each real trace is re-read here
 * with a parser of the test's own and its window compared with the workload (counts,
 * quantiles of sizes, durations and arrival gaps); synthetic sources against their law.
 */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdlib.h>

#include "test.h"

struct src_job {
    double submit, duration;
    int gpus;
};

/* Reads columns (submit or interval, duration, gpus) of a trace by index, plainly. */
/* Whether two workloads hold the same jobs: every number bit for bit, every string equal. */
static bool
same_jobs(const struct pfs_workload *a, const struct pfs_workload *b)
{
    if (a->n_jobs != b->n_jobs)
        return false;
    for (size_t i = 0; i < a->n_jobs; i++) {
        const struct pfs_workload_job *x = &a->jobs[i], *y = &b->jobs[i];

        if (strcmp(x->job_id, y->job_id) != 0 || strcmp(x->curve_id, y->curve_id) != 0 ||
            strcmp(x->pool, y->pool) != 0 || x->n_gpus != y->n_gpus || x->tier != y->tier ||
            memcmp(&x->submit_s, &y->submit_s, sizeof x->submit_s) != 0 ||
            memcmp(&x->tokens, &y->tokens, sizeof x->tokens) != 0 ||
            memcmp(&x->deadline_s, &y->deadline_s, sizeof x->deadline_s) != 0 ||
            memcmp(&x->duration_s, &y->duration_s, sizeof x->duration_s) != 0)
            return false;
    }
    return true;
}

static size_t
read_source(const char *path, int c_sub, int c_dur, int c_gpu, bool interval, struct src_job **out)
{
    FILE *fp = fopen(path, "r");
    char line[4096];
    size_t n = 0, cap = 0;
    double clock = 0;

    *out = NULL;
    if (!fp || !fgets(line, sizeof line, fp)) {
        if (fp)
            fclose(fp);
        return 0;
    }
    while (fgets(line, sizeof line, fp)) {
        double v[16];
        int k = 0;
        char *p = line;

        while (k < 16) {
            v[k++] = strtod(p, NULL);
            p = strchr(p, ',');
            if (!p)
                break;
            p++;
        }
        clock = interval ? clock + v[c_sub] : v[c_sub];
        if (v[c_gpu] < 1 || !(v[c_dur] > 0))
            continue;
        if (n == cap)
            *out = realloc(*out, (cap = cap ? 2 * cap : 1024) * sizeof **out);
        (*out)[n++] = (struct src_job){clock, v[c_dur], (int)v[c_gpu]};
    }
    fclose(fp);
    return n;
}

static int
cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double
quantile(double *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, cmp_d);
    return gsl_stats_quantile_from_sorted_data(v, 1, n, q);
}

static struct pfs_jobset *
corpus(struct test *t)
{
    struct pfs_jobset *js = NULL;
    struct pfs_diag d = {0};

    if (pfs_jobset_read("traces/h200-h100/jobs.csv", &js, &d) != 0)
        test_fail(t, __FILE__, __LINE__, "corpus: %s", d.message);
    return js;
}

/* Every job's tokens are its duration at the uncapped rate of its curve, scaled to its
 * size; its curve has its size or the largest smaller corpus size. */
static void
check_mapping(struct test *t, const struct pfs_workload *w, const struct pfs_jobset *js)
{
    for (size_t i = 0; i < w->n_jobs; i++) {
        const struct pfs_workload_job *j = &w->jobs[i];
        const struct pfs_corpus_job *c = pfs_jobset_find(js, j->curve_id);

        CHECK(c != NULL);
        if (!c)
            return;
        CHECK(c->n_gpus <= j->n_gpus || c->n_gpus == 1);
        CHECK_NEAR(j->tokens, j->duration_s * c->tokens_per_s * j->n_gpus / c->n_gpus,
                   1e-9 * j->tokens);
        CHECK(j->deadline_s >= j->submit_s + 1.5 * j->duration_s - 1e-6);
        CHECK(j->deadline_s <= j->submit_s + 3.0 * j->duration_s + 1e-6);
    }
}

/* The workload of source over [start, start + 7 d) against the file, read independently. */
static void
check_trace_source(struct test *t, const char *source, const char *rel, int c_sub, int c_dur,
                   int c_gpu, bool interval, double start_day)
{
    struct pfs_workload_options o;
    struct pfs_workload *w = NULL;
    struct pfs_jobset *js = corpus(t);
    struct src_job *src = NULL;
    struct pfs_diag d = {0};
    char path[512];
    size_t n, m = 0;
    double t0 = HUGE_VAL, *a = NULL, *b = NULL;

    if (!js)
        return;
    if (!test_data(rel, path, sizeof path)) {
        pfs_jobset_free(js);
        return;
    }
    n = read_source(path, c_sub, c_dur, c_gpu, interval, &src);
    pfs_workload_defaults(&o);
    o.arrivals = source;
    o.start_day = start_day;
    CHECK_INT(pfs_workload_generate(&o, js, &w, &d), 0);
    if (!w)
        goto out;
    for (size_t i = 0; i < n; i++)
        t0 = fmin(t0, src[i].submit);
    a = malloc((n + 1) * sizeof *a);
    b = malloc((w->n_jobs + 1) * sizeof *b);
    for (size_t i = 0; i < n; i++) {
        double s = src[i].submit - t0 - start_day * 86400;

        if (s >= 0 && s < 7 * 86400.0)
            src[m++] = (struct src_job){s, src[i].duration, src[i].gpus};
    }
    if (m != w->n_jobs)
        test_fail(t, __FILE__, __LINE__, "%s: %zu jobs in the window, workload has %zu", source, m,
                  w->n_jobs);
    CHECK(m > 0);
    if (m != w->n_jobs || m == 0)
        goto out;
    for (double q = 0.1; q < 0.95; q += 0.4) { /* p10, p50, p90 */
        for (size_t i = 0; i < m; i++) {
            a[i] = src[i].gpus;
            b[i] = w->jobs[i].n_gpus;
        }
        CHECK_NEAR(quantile(b, m, q), quantile(a, m, q), 0);
        for (size_t i = 0; i < m; i++) {
            a[i] = src[i].duration;
            b[i] = w->jobs[i].duration_s;
        }
        CHECK_NEAR(quantile(b, m, q), quantile(a, m, q), 1e-9);
        for (size_t i = 0; i < m; i++) {
            a[i] = src[i].submit;
            b[i] = w->jobs[i].submit_s;
        }
        CHECK_NEAR(quantile(b, m, q), quantile(a, m, q), 1e-6);
    }
    check_mapping(t, w, js);
out:
    free(a);
    free(b);
    free(src);
    pfs_workload_free(w);
    pfs_jobset_free(js);
}

void
test_workload_real_sources(struct test *t)
{
    char path[512];

    if (!test_data("jobs", path, sizeof path))
        SKIP("no jobs/ in the data directory");
    check_trace_source(t, "kalos", "jobs/acmetrace-kalos/kalos_completed_llm_jobs.csv", 1, 2, 4,
                       false, 0);
    check_trace_source(t, "itp:cluster04", "jobs/elasticflow-itp/raw/cluster04.csv", 1, 2, 3, false,
                       0);
    check_trace_source(t, "helios", "jobs/helios-philly/helios_latest15000.csv", 5, 6, 2, true, 0);
    check_trace_source(t, "philly", "jobs/helios-philly/philly_latest15000.csv", 5, 6, 2, true, 30);
}

void
test_workload_synthetic_sources(struct test *t)
{
    struct pfs_workload_options o;
    struct pfs_workload *w = NULL;
    struct pfs_jobset *js = corpus(t);
    struct pfs_diag d = {0};
    double *gap;
    size_t tiers[PFS_N_TIERS] = {0};

    if (!js)
        return;
    /* poisson:20 over 7 days: about 3,360 jobs, exponential gaps (mean 180 s, CV 1). */
    pfs_workload_defaults(&o);
    o.arrivals = "poisson:20";
    CHECK_INT(pfs_workload_generate(&o, js, &w, &d), 0);
    if (w) {
        gap = malloc(w->n_jobs * sizeof *gap);
        for (size_t i = 1; i < w->n_jobs; i++)
            gap[i - 1] = w->jobs[i].submit_s - w->jobs[i - 1].submit_s;
        CHECK_NEAR(gsl_stats_mean(gap, 1, w->n_jobs - 1), 180.0, 18.0);
        CHECK_NEAR(gsl_stats_sd(gap, 1, w->n_jobs - 1) / gsl_stats_mean(gap, 1, w->n_jobs - 1), 1.0,
                   0.1);
        CHECK_NEAR(quantile(gap, w->n_jobs - 1, 0.5), 180.0 * log(2), 18.0);
        for (size_t i = 0; i < w->n_jobs; i++)
            tiers[w->jobs[i].tier]++;
        /* The jobs' names, w000001 on, as printf's "w%06zu" writes them. */
        for (size_t i = 0; i < w->n_jobs; i++) {
            char want[32];

            snprintf(want, sizeof want, "w%06zu", i + 1);
            if (strcmp(w->jobs[i].job_id, want) != 0) {
                test_fail(t, __FILE__, __LINE__, "job %zu is named %s, not %s", i,
                          w->jobs[i].job_id, want);
                break;
            }
        }
        /* Tier mix 0.4/0.2/0.2/0.2, binomial sd about 0.01 at this size. */
        CHECK_NEAR((double)tiers[PFS_TIER_FIRM] / (double)w->n_jobs, 0.4, 0.04);
        CHECK_NEAR((double)tiers[PFS_TIER_FLEX3] / (double)w->n_jobs, 0.2, 0.04);
        check_mapping(t, w, js);
        free(gap);
    }
    pfs_workload_free(w);
    w = NULL;
    /* The same options give the same workload. */
    {
        struct pfs_workload *w2 = NULL;

        CHECK_INT(pfs_workload_generate(&o, js, &w, &d), 0);
        CHECK_INT(pfs_workload_generate(&o, js, &w2, &d), 0);
        CHECK(w && w2 && same_jobs(w, w2));
        pfs_workload_free(w2);
        pfs_workload_free(w);
        w = NULL;
    }
    pfs_jobset_free(js);
}

void
test_workload_fitted(struct test *t)
{
    /* fitted:helios against the Helios file: rate, the share of 1-GPU jobs and the median
     * duration of small jobs, over 28 days of generated arrivals. */
    struct pfs_workload_options o;
    struct pfs_workload *w = NULL;
    struct pfs_jobset *js = corpus(t);
    struct src_job *src = NULL;
    struct pfs_diag d = {0};
    char path[512];
    size_t n, one = 0, w_one = 0, n_small = 0, w_small = 0;
    double *v, *u;

    if (!js)
        return;
    pfs_workload_defaults(&o);
    o.arrivals = "fitted:helios";
    o.days = 28;
    CHECK_INT(pfs_workload_generate(&o, js, &w, &d), 0);
    if (!w || !test_data("jobs/helios-philly/helios_latest15000.csv", path, sizeof path)) {
        pfs_workload_free(w);
        pfs_jobset_free(js);
        if (!w)
            return;
        SKIP("no Helios file to compare the fitted model with");
    }
    n = read_source(path, 5, 6, 2, true, &src);
    v = malloc(n * sizeof *v);
    u = malloc(w->n_jobs * sizeof *u);
    for (size_t i = 0; i < n; i++) {
        one += src[i].gpus == 1;
        if (src[i].gpus <= 8)
            v[n_small++] = src[i].duration;
    }
    for (size_t i = 0; i < w->n_jobs; i++) {
        w_one += w->jobs[i].n_gpus == 1;
        if (w->jobs[i].n_gpus <= 8)
            u[w_small++] = w->jobs[i].duration_s;
    }
    /* Rate: jobs per day, source over its span. */
    CHECK_NEAR((double)w->n_jobs / 28.0, (double)n / ((src[n - 1].submit - src[0].submit) / 86400),
               0.10 * (double)n / ((src[n - 1].submit - src[0].submit) / 86400));
    CHECK_NEAR((double)w_one / (double)w->n_jobs, (double)one / (double)n, 0.03);
    CHECK_NEAR(quantile(u, w_small, 0.5) / quantile(v, n_small, 0.5), 1.0, 0.15);
    CHECK_NEAR(quantile(u, w_small, 0.9) / quantile(v, n_small, 0.9), 1.0, 0.25);
    free(v);
    free(u);
    free(src);
    pfs_workload_free(w);
    pfs_jobset_free(js);
}

void
test_workload_bad_input(struct test *t)
{
    struct pfs_workload_options o;
    struct pfs_workload *w = NULL;
    struct pfs_jobset *js = corpus(t);
    struct pfs_diag d = {0};
    char *out, *err;

    if (!js)
        return;
    pfs_workload_defaults(&o);
    o.arrivals = "nosuch";
    CHECK_INT(pfs_workload_generate(&o, js, &w, &d), PFS_ENOTFOUND);
    CHECK_STR(d.message, "unknown trace 'nosuch' (known: kalos, itp:cluster01..itp:cluster10, "
                         "helios, philly)");
    pfs_diag_clear(&d);
    o.arrivals = "poisson:-3";
    CHECK_INT(pfs_workload_generate(&o, js, &w, &d), PFS_EINVAL);
    pfs_diag_clear(&d);
    o.arrivals = "fitted:kalos";
    o.tier_mix[0] = 0.9;
    CHECK_INT(pfs_workload_generate(&o, js, &w, &d), PFS_EINVAL);
    CHECK_STR(d.message, "tier shares must add up to 1, not 1.5");
    pfs_diag_clear(&d);
    /* fitted:kalos asks for up to 1,024 GPUs: a 100-GPU facility cannot hold it. */
    pfs_workload_defaults(&o);
    o.facility_gpus = 100;
    CHECK_INT(pfs_workload_generate(&o, js, &w, &d), PFS_EINVAL);
    CHECK(strstr(d.message, "but the facility has 100") != NULL);
    CHECK(w == NULL);
    pfs_diag_clear(&d);
    o.rescale = true;
    CHECK_INT(pfs_workload_generate(&o, js, &w, &d), 0);
    for (size_t i = 0; w && i < w->n_jobs; i++)
        CHECK(w->jobs[i].n_gpus <= 100);
    pfs_workload_free(w);
    pfs_jobset_free(js);
    /* Two jobs of one id (issue 17: accepted, then refused by the results database after the
     * whole simulation). */
    w = NULL;
    pfs_diag_clear(&d);
    CHECK_INT(
        pfs_workload_read(test_write(t, 0, "dup.csv",
                                     "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier\n"
                                     "a,0,c1,1,1000,9999,firm\n"
                                     "b,1,c1,1,1000,9999,firm\n"
                                     "a,2,c1,1,1000,9999,firm\n"),
                          &w, &d),
        PFS_EINVAL);
    CHECK(w == NULL && d.line == 4 && d.column == 1);
    CHECK_STR(d.message, "field 1 (job_id): job 'a' appears twice (first on data row 1)");
    /* A deadline before the job's submission (issue 17: accepted, then a certain miss). */
    pfs_diag_clear(&d);
    CHECK_INT(
        pfs_workload_read(test_write(t, 0, "early.csv",
                                     "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier\n"
                                     "a,100,c1,1,1000,50,firm\n"),
                          &w, &d),
        PFS_EINVAL);
    CHECK(w == NULL && d.line == 2);
    CHECK_STR(d.message, "field 6 (deadline_s): 50 is before the job's submit_s 100");

    CHECK_INT(test_run(t, "workload --arrivals nosuch", &out, &err), 3);
    CHECK_STR(err, "pfisim: error: unknown trace 'nosuch' (known: kalos, "
                   "itp:cluster01..itp:cluster10, helios, philly)\n");
    free(out);
    free(err);
    CHECK_INT(test_run(t, "workload --arrivals fitted:kalos --gpus 100", &out, &err), 3);
    free(out);
    free(err);
    CHECK_INT(test_run(t, "workload --arrivals fitted:nosuch", &out, &err), 3);
    CHECK_STR(err, "pfisim: error: no fitted arrival model for 'nosuch' in configs/arrivals/\n");
    free(out);
    free(err);
    CHECK_INT(test_run(t, "workload --arrivals kalos --tiers firm:1,gold:0", &out, &err), 2);
    free(out);
    free(err);
}

void
test_arrival_models_reproducible(struct test *t)
{
    /* Each shipped model in configs/arrivals/ is what fitting its real trace gives now. */
    static const char *const sources[] = {
        "kalos",         "helios",        "philly",        "itp:cluster01", "itp:cluster02",
        "itp:cluster03", "itp:cluster04", "itp:cluster05", "itp:cluster06", "itp:cluster07",
        "itp:cluster08", "itp:cluster09", "itp:cluster10"};
    char path[512];

    if (!test_data("jobs", path, sizeof path))
        SKIP("no jobs/ in the data directory");
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        struct pfs_trace *tr = NULL;
        struct pfs_arrival_model m, shipped;
        struct pfs_diag d = {0};
        char *text = NULL, *disk = NULL, file[128];
        size_t len = 0;
        FILE *fp;

        CHECK_INT(pfs_trace_read(sources[i], &tr, &d), 0);
        CHECK_INT(pfs_arrival_fit(tr, &m, &d), 0);
        fp = open_memstream(&text, &len);
        pfs_arrival_write(&m, fp, &d);
        fclose(fp);
        snprintf(file, sizeof file, "configs/arrivals/%s.cfg", sources[i]);
        for (char *c = file; *c; c++)
            if (*c == ':')
                *c = '-';
        fp = fopen(file, "r");
        if (fp) {
            disk = calloc(len + 2, 1);
            if (disk && fread(disk, 1, len + 1, fp) != len)
                disk[0] = '\0';
            fclose(fp);
        }
        if (!disk || strcmp(disk, text) != 0)
            test_fail(t, __FILE__, __LINE__,
                      "%s is stale: regenerate it with 'pfisim workload "
                      "--fit %s -o %s'",
                      file, sources[i], file);
        /* and the embedded copy reads back to the fitted numbers (libconfig's scanner may
         * round the 17th digit differently) */
        CHECK_INT(pfs_arrival_find(sources[i], &shipped, &d), 0);
        CHECK_NEAR(shipped.interarrival_mean_s, m.interarrival_mean_s,
                   1e-15 * m.interarrival_mean_s);
        CHECK_NEAR(shipped.dur_large_q[20], m.dur_large_q[20], 1e-15 * m.dur_large_q[20]);
        free(text);
        free(disk);
        pfs_trace_free(tr);
    }
}

void
test_workload_load_cli(struct test *t)
{
    /* --load scales the arrival rate and nothing else: a third of the load is a third of
     * the jobs. The fitted ITP arrivals are a gamma renewal process with cv 4.7, so a count
     * of n has a standard deviation of about cv sqrt(n): over a year, n near 175,000 and
     * 58,000, the ratio's is 3 x sqrt(22/175000 + 22/58000) = 0.07; 0.25 is 3.6 of them. */
    char args[700], *out, *err;
    long n[2];

    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args,
                 "workload --arrivals fitted:itp:cluster04 --gpus 1024 --days 365 --load %s "
                 "-o %s/w%d.csv",
                 k ? "0.3" : "0.9", t->tmpdir, k);
        CHECK_INT(test_run(t, args, &out, &err), 0);
        free(out);
        free(err);
        snprintf(args, sizeof args, "%s/w%d.csv", t->tmpdir, k);
        n[k] = test_count_lines(args) - 1; /* less the header */
    }
    CHECK(n[0] > 5000);
    CHECK_NEAR((double)n[0] / (double)n[1], 3.0, 0.25);
    CHECK_INT(test_run(t, "workload --arrivals fitted:kalos --load -1", &out, &err), 3);
    CHECK(strstr(err, "load") != NULL);
    free(out);
    free(err);
    CHECK_INT(test_run(t, "workload --arrivals fitted:kalos --load lots", &out, &err), 2);
    free(out);
    free(err);
}

void
test_workload_gpu_scale(struct test *t)
{
    /* With load L, gpu_scale k stretches the gamma renewal process's mean interarrival by
     * exactly k (its scale parameter, the shape unchanged), and the RNG draws of the
     * arrivals come in the same order: job i of the scaled workload arrives at k times job
     * i's time on k times its GPUs, and the window holds the first 1/k of them. */
    struct pfs_workload_options o;
    struct pfs_workload *w[2] = {NULL, NULL};
    struct pfs_jobset *js = corpus(t);
    struct pfs_diag d = {0};
    const int k = 4;
    size_t expect = 0;

    if (!js)
        return;
    for (int s = 0; s < 2; s++) {
        pfs_workload_defaults(&o);
        o.arrivals = "fitted:itp:cluster04";
        o.facility_gpus = 4096;
        o.days = 28;
        o.load = 0.9;
        o.gpu_scale = s ? k : 1;
        CHECK_INT(pfs_workload_generate(&o, js, &w[s], &d), 0);
    }
    if (w[0] && w[1]) {
        while (expect < w[0]->n_jobs && k * w[0]->jobs[expect].submit_s < 28 * 86400.0)
            expect++;
        CHECK(expect > 1000);
        CHECK_INT(w[1]->n_jobs, expect);
        for (size_t i = 0; i < w[1]->n_jobs && i < expect; i++) {
            if (fabs(w[1]->jobs[i].submit_s - k * w[0]->jobs[i].submit_s) >
                    1e-9 * w[1]->jobs[i].submit_s + 1e-6 ||
                w[1]->jobs[i].n_gpus != k * w[0]->jobs[i].n_gpus) {
                test_fail(t, __FILE__, __LINE__, "job %zu: %g s on %d GPUs, expected %g s on %d", i,
                          w[1]->jobs[i].submit_s, w[1]->jobs[i].n_gpus, k * w[0]->jobs[i].submit_s,
                          k * w[0]->jobs[i].n_gpus);
                break;
            }
        }
    }
    pfs_workload_free(w[0]);
    pfs_workload_free(w[1]);
    /* Out of range: an error naming the setting. */
    pfs_workload_defaults(&o);
    o.gpu_scale = 0;
    CHECK_INT(pfs_workload_generate(&o, js, &w[0], &d), PFS_EINVAL);
    CHECK(strstr(d.message, "gpu_scale") != NULL);
    pfs_jobset_free(js);
}
