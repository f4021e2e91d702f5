/*
 * tests/test_real.c - checks against the real data in the data directory ($PFISIM_DATA,
 * default ../shared/data); each test skips when its file is absent. The numbers here are
 * worked out by hand from the upstream files, not from pfisim.
 */
#include <stdlib.h>

#include "test.h"

static struct pfs_curveset *
import(struct test *t, const char *format, const char *rel, const char *gpu)
{
    char path[512];
    struct pfs_curveset *cs = NULL;
    struct pfs_diag d = {0};

    if (!test_data(rel, path, sizeof path))
        return NULL;
    if (pfs_curveset_new(&cs) != 0 || pfs_importer_find(format)->read(path, gpu, cs, &d) != 0) {
        test_fail(t, __FILE__, __LINE__, "import %s: %s", rel, d.message);
        pfs_curveset_free(cs);
        return NULL;
    }
    return cs;
}

void
test_real_emerald_pfi(struct test *t)
{
    struct pfs_curveset *cs = import(t, "emerald", "emerald-phoenix/dvfs_sweep.csv", "a100-sxm");
    const struct pfs_job_curve *j;
    struct pfs_curve *c = NULL;
    struct pfs_diag d = {0};
    double pfi;

    if (!cs)
        SKIP("no emerald-phoenix/dvfs_sweep.csv in the data directory");
    CHECK_INT(cs->n_jobs, 8);
    j = pfs_curveset_find(cs, "pt_mpt_7b_fast");
    CHECK(j != NULL);
    if (j) {
        CHECK_INT(j->n_gpus, 48); /* 18616.6 W total / 387.8 W per GPU */
        CHECK_INT(pfs_curve_sampled_new(j->cap_w, j->throughput, j->power_w, j->n_points, &c, &d),
                  0);
        /* 400 W to 200 W: normalized throughput 0.6256 (the file's own column), so
         * PFI(0.5) = (1 - 0.0775 / 0.12388889) / 0.5 = 0.748879. */
        CHECK_INT(pfs_pfi(c, 400, 0.5, &pfi), 0);
        CHECK_NEAR(pfi, 0.748879, 1e-6);
        /* 400 W to 300 W: (1 - 0.10833333 / 0.12388889) / 0.25 = 0.502242. */
        CHECK_INT(pfs_pfi(c, 400, 0.25, &pfi), 0);
        CHECK_NEAR(pfi, 0.502242, 1e-6);
        pfs_curve_free(c);
    }
    pfs_curveset_free(cs);

    /* Perseus gpt3-xl, 300 W to 225 W: time 300 W / time 225 W from the file. */
    cs = import(t, "perseus", "power/perseus-sosp24/zeus_csv_A100_zeus_global.csv", "a100-pcie");
    if (!cs)
        SKIP("no Perseus file");
    j = pfs_curveset_find(cs, "gpt3-xl");
    CHECK(j != NULL);
    if (j) {
        CHECK_INT(j->n_gpus, 4);
        CHECK_INT(j->n_points, 6);
        CHECK_INT(pfs_curve_sampled_new(j->cap_w, j->throughput, j->power_w, j->n_points, &c, &d),
                  0);
        CHECK_INT(pfs_pfi(c, 300, 0.25, &pfi), 0);
        /* time 60.095173 s per iteration at 300 W, 73.328783 s at 225 W:
         * (1 - 60.095173 / 73.328783) / 0.25 = 0.721878, an 18% loss for a 25% cut, the top
         * of the 14-18% that shared/data/README.md reports. */
        CHECK_NEAR(pfi, 0.721878, 1e-6);
        pfs_curve_free(c);
    }
    pfs_curveset_free(cs);
}

void
test_real_import_errors(struct test *t)
{
    char path[512];
    struct pfs_curveset *cs = NULL;
    struct pfs_diag d = {0};

    if (!test_data("power/perseus-sosp24/zeus_csv_A100_zeus_local.csv", path, sizeof path))
        SKIP("no Perseus local file");
    CHECK_INT(pfs_curveset_new(&cs), 0);
    /* The _local file gives each pipeline stage its own limit: not a curve. */
    CHECK_INT(pfs_importer_find("perseus")->read(path, "a100-pcie", cs, &d), PFS_EINVAL);
    CHECK(strstr(d.message, "differs from power_limit_0") != NULL);
    CHECK(strstr(d.message, "field 10 (power_limit_1)") == d.message);
    pfs_diag_clear(&d);
    /* The wrong importer for a file: a missing column, named. */
    CHECK_INT(pfs_importer_find("emerald")->read(path, "a100-sxm", cs, &d), PFS_EINVAL);
    CHECK_STR(d.message, "missing column 'Workload' in the header");
    CHECK_INT(d.line, 1);
    pfs_curveset_free(cs);
}

struct quality {
    size_t n;
    double worst, median;
};

static int
cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Fits every job of cs accepted by keep() and summarises rmse_throughput. */
static struct quality
fit_all(struct test *t, const struct pfs_curveset *cs, bool (*keep)(const struct pfs_job_curve *))
{
    struct quality q = {0, 0, 0};
    double *r = calloc(cs->n_jobs, sizeof *r);
    struct pfs_gpu g;
    struct pfs_diag d = {0};

    for (size_t i = 0; r && i < cs->n_jobs; i++) {
        const struct pfs_job_curve *j = &cs->jobs[i];
        struct pfs_fit f;

        if (!keep(j))
            continue;
        if (pfs_gpu_find(j->gpu, &g, &d) != 0 || pfs_fit_job(&g, j, &f, &d) != 0) {
            test_fail(t, __FILE__, __LINE__, "fit %s: %s", j->job_id, d.message);
            continue;
        }
        r[q.n++] = f.rmse_throughput;
        q.worst = fmax(q.worst, f.rmse_throughput);
    }
    if (q.n) {
        qsort(r, q.n, sizeof *r, cmp);
        q.median = q.n % 2 ? r[q.n / 2] : 0.5 * (r[q.n / 2 - 1] + r[q.n / 2]);
    }
    free(r);
    return q;
}

static bool
all_jobs(const struct pfs_job_curve *j)
{
    (void)j;
    return true;
}

static bool
training_job(const struct pfs_job_curve *j)
{
    return strncmp(j->job_id, "pt_", 3) == 0 || strncmp(j->job_id, "ft_", 3) == 0;
}

/* The cap binds somewhere in the sweep: the draw at the highest cap (uncapped) exceeds
 * the lowest cap. NCF, for one, draws about 85 W whatever the A40's limit. */
static bool
reaches_limit(const struct pfs_job_curve *j)
{
    return j->power_w[j->n_points - 1] > j->cap_w[0];
}

void
test_real_fit_quality(struct test *t)
{
    struct pfs_curveset *cs;
    struct quality q;

    /* Acceptance of issue 2; docs/model.md has the full tables. */
    cs = import(t, "perseus", "power/perseus-sosp24/zeus_csv_A100_zeus_global.csv", "a100-pcie");
    if (!cs)
        SKIP("no Perseus file");
    q = fit_all(t, cs, all_jobs);
    CHECK_INT(q.n, 5);
    CHECK(q.worst <= 0.03);
    pfs_curveset_free(cs);

    cs = import(t, "emerald", "emerald-phoenix/dvfs_sweep.csv", "a100-sxm");
    if (!cs)
        SKIP("no Emerald sweep");
    q = fit_all(t, cs, training_job);
    CHECK_INT(q.n, 5);
    CHECK(q.worst <= 0.03);
    pfs_curveset_free(cs);

    cs = import(t, "zeus", "power/zeus-nsdi23/summary_power_a40.csv", "a40");
    if (!cs)
        SKIP("no Zeus A40 file");
    CHECK_INT(cs->n_jobs, 53);
    q = fit_all(t, cs, reaches_limit);
    CHECK_INT(q.n, 38);
    CHECK(q.median <= 0.03);
    pfs_curveset_free(cs);
}

/* Sorts e[n] ascending (insertion sort: n is small). */
static void
sort_small(double *e, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && e[k] < e[k - 1]; k--) {
            double x = e[k];

            e[k] = e[k - 1];
            e[k - 1] = x;
        }
}

/* Leave one job out on a real data set (issue 15): each job's error of T/T0 at its caps below
 * 75% of the default limit, the shared physics fitted on every cap of the other jobs and the
 * job's alpha and activity on its own caps at or above 75%. Writes the median and worst. */
static void
loo(struct test *t, const struct pfs_curveset *cs, const char *gpu_name, double *med, double *worst)
{
    struct pfs_gpu g;
    struct pfs_diag d = {0};
    const struct pfs_job_curve **others = calloc(cs->n_jobs, sizeof *others);
    struct pfs_fit *fits = calloc(cs->n_jobs, sizeof *fits);
    double *e = calloc(cs->n_jobs, sizeof *e);
    size_t n = 0;

    *med = *worst = NAN;
    if (!others || !fits || !e || pfs_gpu_find(gpu_name, &g, &d) != 0)
        goto out;
    for (size_t i = 0; i < cs->n_jobs; i++) {
        const struct pfs_job_curve *jc = &cs->jobs[i];
        double lim = 0.75 * g.default_limit_w, ss = 0;
        struct pfs_gpu shared;
        struct pfs_fit own;
        size_t m = 0, h = 0;

        for (size_t k = 0; k < cs->n_jobs; k++)
            if (k != i)
                others[m++] = &cs->jobs[k];
        if (pfs_fit_shared(&g, others, m, 0, &shared, fits, NULL, &d) != 0 ||
            pfs_fit_shared_job(&shared, fits[0].job.mem_w, fits[0].job.cap_fill, NULL, jc, lim,
                               &own, &d) != 0) {
            test_fail(t, __FILE__, __LINE__, "job %s: %s", jc->job_id, d.message);
            goto out;
        }
        for (size_t p = 0; p < jc->n_points; p++) {
            struct pfs_dvfs_point pt;

            if (jc->cap_w[p] >= lim)
                continue;
            pfs_dvfs_eval(&shared, &own.job, jc->cap_w[p], &pt);
            ss += pow((pt.throughput - jc->throughput[p]) / jc->throughput[jc->n_points - 1], 2);
            h++;
        }
        if (h)
            e[n++] = sqrt(ss / (double)h);
    }
    sort_small(e, n);
    if (n) {
        *med = n % 2 ? e[n / 2] : 0.5 * (e[n / 2 - 1] + e[n / 2]);
        *worst = e[n - 1];
    }
out:
    free(others);
    free(fits);
    free(e);
}

void
test_real_loo(struct test *t)
{
    /* Issue 15's held-out bar, 4% median and 8% worst, met by leave-one-job-out on the two
     * LLM data sets (docs/validation.md has the numbers; Zeus A40 is not asserted: it
     * misses, reported there). */
    struct pfs_curveset *cs;
    double med, worst;

    cs = import(t, "perseus", "power/perseus-sosp24/zeus_csv_A100_zeus_global.csv", "a100-pcie");
    if (!cs)
        SKIP("no Perseus file");
    /* The finding reproduced first: the per-job model fitted on each job's own top caps alone
     * misses the caps below by far more than the bar (issue 15 measured a median of 0.275
     * with the earlier profile shape, 0.209 with the shared fit's); the median is asserted
     * above twice the 4% bar. */
    {
        struct pfs_gpu g;
        double e[8];
        size_t n = 0;

        CHECK_INT(pfs_gpu_find("a100-pcie", &g, &(struct pfs_diag){0}), 0);
        for (size_t i = 0; i < cs->n_jobs && n < 8; i++) {
            const struct pfs_job_curve *jc = &cs->jobs[i];
            struct pfs_job_curve top = *jc;
            struct pfs_fit fit;
            struct pfs_diag d = {0};
            double lim = 0.75 * g.default_limit_w, ss = 0;
            size_t k = 0, h = 0;

            while (k < jc->n_points && jc->cap_w[k] < lim)
                k++;
            top.cap_w += k, top.throughput += k, top.power_w += k;
            top.n_points -= k;
            if (pfs_fit_job(&g, &top, &fit, &d) != 0)
                continue;
            for (size_t p = 0; p < k; p++) {
                struct pfs_dvfs_point pt;

                pfs_dvfs_eval(&g, &fit.job, jc->cap_w[p], &pt);
                ss +=
                    pow((pt.throughput - jc->throughput[p]) / jc->throughput[jc->n_points - 1], 2);
                h++;
            }
            if (h)
                e[n++] = sqrt(ss / (double)h);
        }
        CHECK_INT((int)n, 5);
        sort_small(e, n);
        CHECK(n == 5 && e[2] > 0.08);
    }
    loo(t, cs, "a100-pcie", &med, &worst);
    CHECK(med <= 0.04);
    CHECK(worst <= 0.08);
    pfs_curveset_free(cs);

    cs = import(t, "emerald", "emerald-phoenix/dvfs_sweep.csv", "a100-sxm");
    if (!cs)
        SKIP("no Emerald sweep");
    loo(t, cs, "a100-sxm", &med, &worst);
    CHECK(med <= 0.04);
    CHECK(worst <= 0.08);
    pfs_curveset_free(cs);
}

void
test_real_shared_se(struct test *t)
{
    /* The shared fit's standard errors do not hang on where its solver stops. On Perseus
     * (every cap) GSL's QR and the arrow solver stop at solutions equal to 5 digits, the
     * knee apart (v_min at its bound of 1: the knee does nothing). The error of the
     * clock-independent draw by forward differences was 4.4 W at the one and 3.8 W at the
     * other (14% apart; 3.6-4.4 W as their step moved); by central differences 11.5 and 11.6
     * W. Asserted: the two within 3% of each other, and the error no smaller than 8 W. */
    struct pfs_curveset *cs =
        import(t, "perseus", "power/perseus-sosp24/zeus_csv_A100_zeus_global.csv", "a100-pcie");
    const struct pfs_job_curve *jobs[16];
    struct pfs_fit fits[16];
    struct pfs_shared_se se[2];
    struct pfs_gpu g, shared[2];
    struct pfs_diag d = {0};

    if (!cs)
        SKIP("no Perseus file");
    CHECK_INT(pfs_gpu_find("a100-pcie", &g, &d), 0);
    CHECK(cs->n_jobs <= 16);
    if (cs->n_jobs > 16) { /* (room for 16: no fit past it) */
        pfs_curveset_free(cs);
        return;
    }
    for (size_t i = 0; i < cs->n_jobs; i++)
        jobs[i] = &cs->jobs[i];
    CHECK_INT(pfs_fit_shared(&g, jobs, cs->n_jobs, 0, &shared[0], fits, &se[0], &d), 0);
    setenv("PFISIM_FIT_QR", "1", 1);
    CHECK_INT(pfs_fit_shared(&g, jobs, cs->n_jobs, 0, &shared[1], fits, &se[1], &d), 0);
    unsetenv("PFISIM_FIT_QR");
    CHECK_NEAR(fits[0].job.mem_w, 73.7, 0.05);
    CHECK(se[0].mem_w > 8 && se[1].mem_w > 8);
    CHECK_NEAR(se[0].mem_w, se[1].mem_w, 0.03 * se[1].mem_w);
    pfs_curveset_free(cs);
}
