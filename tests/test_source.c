/*
 * tests/test_source.c - the source study's pieces (issue 57, docs/results.md "The source
 * study, reproduced"): the telemetry-noise knob, the corpus's draws, out-of-fold prediction.
 */
#include <stdlib.h>

#include "test.h"

/* Spearman at a 30% cut of a ridge model trained on 131 jobs of a corpus made at noise L,
 * on 500 held-out jobs of the same corpus. */
static double
heldout_spearman(struct test *t, double L, double *r2)
{
    struct pfs_synth_options o;
    struct pfs_predict_options po;
    struct pfs_jobset *js = NULL;
    struct pfs_curveset *cs = NULL;
    struct pfs_predictor *p = NULL;
    struct pfs_diag d = {0};
    double *truth, *pred, rho = NAN;
    size_t n = 0;

    pfs_synth_defaults(&o, 7);
    o.n_validation = 500;
    o.n_transfer = 0;
    o.telemetry_noise = L;
    pfs_predict_defaults(&po);
    if (pfs_synth(&o, &js, &cs, &d) != 0 || pfs_predictor_train(js, cs, &po, &p, &d) != 0) {
        test_fail(t, __FILE__, __LINE__, "noise %g: %s", L, d.message);
        goto out;
    }
    truth = calloc(js->n_jobs, sizeof *truth);
    pred = calloc(js->n_jobs, sizeof *pred);
    for (size_t i = 0; truth && pred && i < js->n_jobs; i++) {
        struct pfs_telemetry tel;
        double v[PFS_N_CUTS];

        if (strcmp(js->jobs[i].split, "validation") != 0)
            continue;
        pfs_telemetry_of(&js->jobs[i], &tel);
        CHECK_INT(pfs_predictor_pfi(p, &tel, v, &d), 0);
        truth[n] = js->jobs[i].pfi[2];
        pred[n++] = v[2];
    }
    CHECK_INT(n, 500);
    rho = pfs_stat_spearman(truth, pred, n);
    *r2 = pfs_stat_r2(truth, pred, n);
    free(truth);
    free(pred);
out:
    pfs_predictor_free(p);
    pfs_jobset_free(js);
    pfs_curveset_free(cs);
    return rho;
}

/* Over the knob's range the predictor's Spearman falls monotonically and spans 0.95 to
 * 0.3 (issue 57's bar). */
void
test_noise_spearman(struct test *t)
{
    static const double levels[] = {0, 0.5, 1, 2, 4, 8, 16, 32, 64};
    const size_t n = sizeof levels / sizeof levels[0];
    double rho[sizeof levels / sizeof levels[0]], r2;

    for (size_t i = 0; i < n; i++) {
        rho[i] = heldout_spearman(t, levels[i], &r2);
        if (i > 0 && !(rho[i] < rho[i - 1]))
            test_fail(t, __FILE__, __LINE__, "noise %g: Spearman %.4f, not below %.4f at %g",
                      levels[i], rho[i], rho[i - 1], levels[i - 1]);
    }
    CHECK(rho[0] >= 0.95);
    CHECK(rho[n - 1] <= 0.3);
}

/* A reading's window moves the readings and nothing else: the labels, the throughput and
 * the measured curves are those of the run-averaged corpus; a 1 s reading of a step of
 * seconds sees mostly one phase, so most readings move. */
void
test_noise_window(struct test *t)
{
    struct pfs_synth_options o;
    struct pfs_jobset *a = NULL, *b = NULL;
    struct pfs_curveset *ca = NULL, *cb = NULL;
    struct pfs_diag d = {0};
    size_t moved = 0, n = 0;

    pfs_synth_defaults(&o, 7);
    o.n_transfer = 0;
    if (pfs_synth(&o, &a, &ca, &d) != 0)
        test_fail(t, __FILE__, __LINE__, "%s", d.message);
    o.telemetry_window_s = 1;
    if (pfs_synth(&o, &b, &cb, &d) != 0)
        test_fail(t, __FILE__, __LINE__, "%s", d.message);
    for (size_t i = 0; a && b && i < a->n_jobs; i++) {
        const struct pfs_corpus_job *x = &a->jobs[i], *y = &b->jobs[i];

        for (size_t k = 0; k < PFS_N_CUTS; k++)
            CHECK(memcmp(&x->pfi[k], &y->pfi[k], sizeof x->pfi[k]) == 0);
        CHECK(memcmp(&x->tokens_per_s, &y->tokens_per_s, sizeof x->tokens_per_s) == 0);
        moved += fabs(x->sm_active - y->sm_active) > 1e-9;
        n++;
    }
    CHECK(n > 0 && moved * 2 > n);
    for (size_t i = 0; ca && cb && i < ca->n_jobs; i++)
        CHECK(memcmp(ca->jobs[i].throughput, cb->jobs[i].throughput,
                     ca->jobs[i].n_points * sizeof *ca->jobs[i].throughput) == 0);
    pfs_jobset_free(a);
    pfs_jobset_free(b);
    pfs_curveset_free(ca);
    pfs_curveset_free(cb);
}

/* The corpus's draws: each parameter's range in n strata, each stratum used by exactly one
 * draw, at its centre; the same seed the same draws and the same corpus; another seed
 * another pairing. */
void
test_corpus_draws(struct test *t)
{
    enum { N = 7 };
    struct pfs_synth_options o[N], again, other;
    struct pfs_diag d = {0};
    bool differs = false;

    for (size_t k = 0; k < N; k++) {
        pfs_synth_defaults(&o[k], 7);
        CHECK_INT(pfs_synth_draw(&o[k], N, k, 3, &d), 0);
    }
    for (size_t i = 0; i < PFS_MIX_N; i++) {
        double def, lo, hi;
        const char *name = pfs_synth_mix_param(i, &def, &lo, &hi);
        int used[N] = {0};

        CHECK(name != NULL);
        CHECK(def >= lo && def <= hi);
        for (size_t k = 0; k < N; k++) {
            double s = (o[k].mix[i] - lo) / (hi - lo) * N - 0.5;
            long stratum = lround(s);

            CHECK_NEAR(s, (double)stratum, 1e-9); /* at a stratum's centre */
            if (stratum >= 0 && stratum < N)
                used[stratum]++;
        }
        for (size_t k = 0; k < N; k++)
            CHECK_INT(used[k], 1);
    }
    CHECK(pfs_synth_mix_param(PFS_MIX_N, &(double){0}, &(double){0}, &(double){0}) == NULL);
    pfs_synth_defaults(&again, 7);
    pfs_synth_defaults(&other, 7);
    CHECK_INT(pfs_synth_draw(&again, N, 4, 3, &d), 0);
    CHECK_INT(pfs_synth_draw(&other, N, 4, 4, &d), 0);
    for (size_t i = 0; i < PFS_MIX_N; i++) {
        CHECK(memcmp(&again.mix[i], &o[4].mix[i], sizeof again.mix[i]) == 0);
        differs |= fabs(other.mix[i] - o[4].mix[i]) > 0;
    }
    CHECK(differs);
    CHECK_INT(pfs_synth_draw(&again, N, N, 3, &d), PFS_EINVAL);
    {
        struct pfs_jobset *a = NULL, *b = NULL;
        struct pfs_curveset *ca = NULL, *cb = NULL;
        char pa[512], pb[512];

        o[4].n_transfer = 0;
        again.n_transfer = 0;
        CHECK_INT(pfs_synth_draw(&again, N, 4, 3, &d), 0);
        snprintf(pa, sizeof pa, "%s/a", t->tmpdir);
        snprintf(pb, sizeof pb, "%s/b", t->tmpdir);
        if (pfs_synth(&o[4], &a, &ca, &d) != 0 || pfs_corpus_write(pa, &o[4], a, ca, &d) != 0 ||
            pfs_synth(&again, &b, &cb, &d) != 0 || pfs_corpus_write(pb, &again, b, cb, &d) != 0)
            test_fail(t, __FILE__, __LINE__, "%s", d.message);
        else {
            char fa[600], fb[600];

            for (int f = 0; f < 2; f++) {
                char *x, *y;

                snprintf(fa, sizeof fa, "%s/%s", pa, f ? "jobs.csv" : "curves.csv");
                snprintf(fb, sizeof fb, "%s/%s", pb, f ? "jobs.csv" : "curves.csv");
                x = test_slurp(fa);
                y = test_slurp(fb);
                CHECK(strlen(x) > 1000 && strcmp(x, y) == 0);
                /* labelled with its draw */
                CHECK(strstr(x, "--draw 5/7 --draw-seed 3") != NULL);
                free(x);
                free(y);
            }
        }
        pfs_jobset_free(a);
        pfs_jobset_free(b);
        pfs_curveset_free(ca);
        pfs_curveset_free(cb);
    }
}

/* Out-of-fold predictions: every training job predicted by a model that never saw it, the
 * other splits left NAN; the same seed the same predictions; and on the shipped corpus a
 * job's prediction differs from the full model's (it was trained without it). */
void
test_crossfit(struct test *t)
{
    struct pfs_jobset *js = NULL;
    struct pfs_curveset *cs = NULL;
    struct pfs_predict_options po;
    struct pfs_diag d = {0};
    double(*a)[PFS_N_CUTS] = NULL, (*b)[PFS_N_CUTS] = NULL;
    size_t n_train = 0;

    if (pfs_jobset_read("traces/h200-h100/jobs.csv", &js, &d) != 0) {
        test_fail(t, __FILE__, __LINE__, "%s", d.message);
        return;
    }
    pfs_predict_defaults(&po);
    a = calloc(js->n_jobs, sizeof *a);
    b = calloc(js->n_jobs, sizeof *b);
    CHECK_INT(pfs_predictor_crossfit(js, cs, &po, 5, a, &d), 0);
    CHECK_INT(pfs_predictor_crossfit(js, cs, &po, 5, b, &d), 0);
    for (size_t i = 0; a && b && i < js->n_jobs; i++) {
        bool train = strcmp(js->jobs[i].split, "train") == 0;

        n_train += train;
        CHECK(train ? isfinite(a[i][2]) : isnan(a[i][2]));
        CHECK(memcmp(a[i], b[i], sizeof a[i]) == 0);
    }
    CHECK_INT(n_train, 131);
    {
        /* Held out: every job's prediction is not the model's trained on all of them (which
         * saw it), the fit is worse than that model's in-sample fit, and it still tells the
         * jobs apart. */
        double truth[131], pred[131], in[131], v[PFS_N_CUTS];
        struct pfs_predictor *full = NULL;
        size_t n = 0, same = 0;

        CHECK_INT(pfs_predictor_train(js, cs, &po, &full, &d), 0);
        for (size_t i = 0; a && full && i < js->n_jobs && n < 131; i++)
            if (strcmp(js->jobs[i].split, "train") == 0) {
                struct pfs_telemetry tel;

                pfs_telemetry_of(&js->jobs[i], &tel);
                CHECK_INT(pfs_predictor_pfi(full, &tel, v, &d), 0);
                truth[n] = js->jobs[i].pfi[2];
                in[n] = v[2];
                same += memcmp(&in[n], &a[i][2], sizeof in[n]) == 0;
                pred[n++] = a[i][2];
            }
        CHECK_INT(n, 131);
        CHECK_INT(same, 0);
        CHECK(pfs_stat_r2(truth, pred, n) < pfs_stat_r2(truth, in, n));
        CHECK(pfs_stat_spearman(truth, pred, n) > 0.8);
        pfs_predictor_free(full);
    }
    free(a);
    free(b);
    pfs_jobset_free(js);
}

/* pfisim study source: the same arguments the same bytes; every corpus's equal at 0 and
 * oracle at 1; the predictions' R^2 and Spearman the same for every allocator of a corpus
 * and cut, and falling with the noise; bad arguments refused with the option named. */
void
test_study_source_cli(struct test *t)
{
    char args[600], *out = NULL, *err = NULL, path[600], *a, *b;
    size_t n_rows = 0;

    for (int run = 0; run < 2; run++) {
        snprintf(args, sizeof args,
                 "study source --draws 1 --noise 0,4 --windows 30 --cuts 30%% -o %s/r%d", t->tmpdir,
                 run);
        CHECK_INT(test_run(t, args, &out, &err), 0);
        CHECK(strstr(out, "the source measured a gap recovered of 0.63") != NULL);
        free(out);
        free(err);
    }
    snprintf(path, sizeof path, "%s/r0/study-source.csv", t->tmpdir);
    a = test_slurp(path);
    snprintf(path, sizeof path, "%s/r1/study-source.csv", t->tmpdir);
    b = test_slurp(path);
    CHECK(strlen(a) > 100 && strcmp(a, b) == 0);
    CHECK(strncmp(a, "# SYNTHETIC", 11) == 0);
    {
        /* allocator,objective,noise,window_s,r2,spearman,draw,<6 mix>,mean_gpus,cut,gap,... */
        char *save = NULL, *line = strtok_r(a, "\n", &save);
        double rho_at[2] = {NAN, NAN};

        line = strtok_r(NULL, "\n", &save); /* the header */
        CHECK(line &&
              strncmp(line, "allocator,objective,noise,window_s,r2,spearman,draw,", 52) == 0);
        while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
            char alloc[32], obj[16];
            double noise, window, r2, rho, gap, mix[7], cut;
            int draw;

            if (sscanf(line,
                       "%31[^,],%15[^,],%lf,%lf,%lf,%lf,%d,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf",
                       alloc, obj, &noise, &window, &r2, &rho, &draw, &mix[0], &mix[1], &mix[2],
                       &mix[3], &mix[4], &mix[5], &mix[6], &cut, &gap) != 16) {
                test_fail(t, __FILE__, __LINE__, "a row that does not read: %s", line);
                break;
            }
            n_rows++;
            CHECK_NEAR(cut, 0.3, 0);
            if (strcmp(alloc, "equal") == 0)
                CHECK_NEAR(gap, 0, 1e-12);
            if (strcmp(alloc, "oracle") == 0)
                CHECK_NEAR(gap, 1, 1e-12);
            if (window <= 0 && draw == 0) { /* noise 0 or 4 */
                double *r = &rho_at[noise > 0];

                CHECK(isnan(*r) || fabs(*r - rho) < 1e-12); /* one corpus, one prediction */
                *r = rho;
            }
        }
        CHECK(rho_at[0] > rho_at[1] + 0.1);
    }
    /* 2 corpora (the shipped mix, one draw) x 3 (noise 0, 4, a 30 s window) x 2 objectives
     * x 7 allocators */
    CHECK_INT(n_rows, 2 * 3 * 2 * 7);
    free(a);
    free(b);
    snprintf(path, sizeof path, "%s/r0/plots/study-source.png", t->tmpdir);
    CHECK(test_count_lines(path) > 0);
    CHECK(test_run(t, "study source --cuts 25% -o /nonexistent/x", &out, &err) == 2);
    CHECK(strstr(err, "--cuts") != NULL);
    free(out);
    free(err);
    CHECK(test_run(t, "study source --noise -1", &out, &err) == 2);
    CHECK(strstr(err, "--noise") != NULL);
    free(out);
    free(err);
    CHECK(test_run(t, "study nothing", &out, &err) == 2);
    CHECK(strstr(err, "source") != NULL);
    free(out);
    free(err);
}

/* alloc --corpus-draws: each policy's median and range over the corpus's draws, the same
 * from the same seed; refused beside --uncertainty and on a curves file. */
void
test_alloc_corpus_draws(struct test *t)
{
    char *a = NULL, *b = NULL, *err = NULL;

    CHECK_INT(test_run(t, "alloc synth:h200-sxm --cut 30% --corpus-draws 3 --csv", &a, &err), 0);
    free(err);
    CHECK_INT(test_run(t, "alloc synth:h200-sxm --cut 30% --corpus-draws 3 --csv", &b, &err), 0);
    free(err);
    CHECK(strcmp(a, b) == 0);
    CHECK(strstr(a, "pfi,gap_recovered,3,") != NULL);
    CHECK(strstr(a, "oracle,gap_recovered,3,1,1,1") != NULL);
    free(a);
    free(b);
    CHECK_INT(test_run(t, "alloc synth:h200-sxm --cut 30% --corpus-draws 3", &a, &err), 0);
    CHECK(strstr(a, "of the SYNTHETIC corpus's inputs:\n  p_moe [0.15, 0.45] p_pretrain") != NULL);
    free(a);
    free(err);
    CHECK(test_run(t, "alloc synth:b200 --cut 30% --corpus-draws 3 --uncertainty 3", &a, &err) ==
          2);
    CHECK(strstr(err, "one at a time") != NULL);
    free(a);
    free(err);
    CHECK(test_run(t, "alloc traces/h200-h100/curves.csv --cut 30% --corpus-draws 3", &a, &err) ==
          2);
    CHECK(strstr(err, "--corpus-draws takes synth:GPU") != NULL);
    free(a);
    free(err);
}
