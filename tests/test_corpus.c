/*
 * tests/test_corpus.c - the synthetic corpus: determinism, the population's shape, physical
 * invariants of every curve, the H200/H100 twins, and the shipped default corpus.
 */
#include <stdlib.h>

#include "test.h"

static int
write_corpus(struct test *t, const char *sub, unsigned long seed)
{
    struct pfs_synth_options o;
    struct pfs_jobset *js = NULL;
    struct pfs_curveset *cs = NULL;
    struct pfs_diag d = {0};
    char dir[512];
    int rc;

    pfs_synth_defaults(&o, seed);
    snprintf(dir, sizeof dir, "%s/%s", t->tmpdir, sub);
    rc = pfs_synth(&o, &js, &cs, &d);
    if (rc == 0)
        rc = pfs_corpus_write(dir, &o, js, cs, &d);
    if (rc)
        test_fail(t, __FILE__, __LINE__, "synth: %s", d.message);
    pfs_jobset_free(js);
    pfs_curveset_free(cs);
    return rc;
}

void
test_synth_deterministic(struct test *t)
{
    static const char *const files[] = {"curves.csv", "jobs.csv", "README.md"};
    char a[600], b[600];

    if (write_corpus(t, "s7a", 7) || write_corpus(t, "s7b", 7) || write_corpus(t, "s8", 8))
        return;
    for (int i = 0; i < 3; i++) {
        snprintf(a, sizeof a, "%s/s7a/%s", t->tmpdir, files[i]);
        snprintf(b, sizeof b, "%s/s7b/%s", t->tmpdir, files[i]);
        CHECK(test_same_file(a, b));
        snprintf(b, sizeof b, "%s/s8/%s", t->tmpdir, files[i]);
        CHECK(!test_same_file(a, b));
    }
    /* The shipped default corpus is exactly what seed 7 gives now. */
    for (int i = 0; i < 3; i++) {
        snprintf(a, sizeof a, "%s/s7a/%s", t->tmpdir, files[i]);
        snprintf(b, sizeof b, "traces/h200-h100/%s", files[i]);
        if (!test_same_file(a, b))
            test_fail(t, __FILE__, __LINE__,
                      "traces/h200-h100/%s is stale: regenerate it with "
                      "'pfisim synth --seed 7 -o traces/h200-h100'",
                      files[i]);
    }
    /* It says what it is. */
    {
        FILE *fp;
        char line[200] = "";

        snprintf(a, sizeof a, "%s/s7a/curves.csv", t->tmpdir);
        fp = fopen(a, "r");
        CHECK(fp && fgets(line, sizeof line, fp));
        CHECK(strncmp(line, "# SYNTHETIC", 11) == 0);
        if (fp)
            fclose(fp);
    }
}

void
test_synth_population(struct test *t)
{
    struct pfs_synth_options o;
    struct pfs_jobset *js = NULL;
    struct pfs_curveset *cs = NULL;
    struct pfs_diag d = {0};
    struct pfs_dvfs_job truth[189];
    struct pfs_gpu unit[189], h100, h200;
    size_t n_split[3] = {0, 0, 0}, n_moe = 0, n_pretrain = 0, n_lora = 0;

    pfs_synth_defaults(&o, 7);
    CHECK_INT(pfs__synth_truth(&o, &js, &cs, truth, unit, &d), 0);
    CHECK_INT(pfs_gpu_find("h100-sxm", &h100, &d), 0);
    CHECK_INT(pfs_gpu_find("h200-sxm", &h200, &d), 0);
    if (!js || !cs)
        return;
    CHECK_INT(js->n_jobs, 189);
    CHECK_INT(cs->n_jobs, 189);
    for (size_t i = 0; i < js->n_jobs; i++) {
        const struct pfs_corpus_job *j = &js->jobs[i];
        const struct pfs_job_curve *c = pfs_curveset_find(cs, j->job_id);

        n_split[0] += strcmp(j->split, "train") == 0;
        n_split[1] += strcmp(j->split, "validation") == 0;
        n_split[2] += strcmp(j->split, "transfer") == 0;
        n_moe += strcmp(j->family, "moe") == 0;
        n_pretrain += strcmp(j->phase, "pretrain") == 0;
        n_lora += strcmp(j->phase, "lora") == 0;
        CHECK(j->n_gpus >= 1 && j->n_gpus <= 32);
        CHECK(j->tp * j->pp * j->dp == j->n_gpus);
        CHECK(j->params_b >= 1 && j->params_b <= 71);
        CHECK(j->active_params_b <= j->params_b);
        CHECK(j->power_w <= 700.0); /* no uncapped draw above the limit */
        CHECK(j->power_frac > 0.3 && j->power_frac <= 1.0);
        for (size_t k = 0; k < PFS_N_CUTS; k++)
            CHECK(j->pfi[k] >= 0 && j->pfi[k] <= 1.2);
        CHECK(c != NULL);
        if (!c)
            continue;
        CHECK_INT(c->n_points, 11);
        CHECK_NEAR(c->cap_w[0], 200, 0);
        CHECK_NEAR(c->cap_w[10], 700, 0);
        for (size_t k = 1; k < c->n_points; k++) {
            CHECK(c->throughput[k] >= c->throughput[k - 1]); /* non-decreasing in cap */
            CHECK(c->power_w[k] >= c->power_w[k - 1]);
        }
        for (size_t k = 0; k < c->n_points; k++)
            CHECK(c->power_w[k] <= c->cap_w[k]);
        /* Labels are the noise-free model's PFI: recompute from the hidden parameters, on
         * these GPUs' own voltage curve, which varies around the type's. */
        CHECK_STR(unit[i].name, j->gpu);
        CHECK(fabs(unit[i].v_min - (j->gpu[1] == '2' ? h200 : h100).v_min) < 0.25);
        {
            struct pfs_curve *m = NULL;
            double pfi;

            CHECK_INT(pfs_curve_model_new(&unit[i], &truth[i], &m, &d), 0);
            CHECK_INT(pfs_pfi(m, 700, 0.3, &pfi), 0);
            CHECK_NEAR(pfi, j->pfi[2], 1e-12);
            pfs_curve_free(m);
        }
        if (strcmp(j->split, "transfer") == 0) {
            const struct pfs_corpus_job *tw = pfs_jobset_find(js, j->twin_id);
            size_t ti = tw ? (size_t)(tw - js->jobs) : 0;

            CHECK(tw != NULL);
            CHECK_STR(j->gpu, "h100-sxm");
            if (!tw)
                continue;
            CHECK_STR(tw->gpu, "h200-sxm");
            CHECK(strcmp(tw->split, "train") == 0 || strcmp(tw->split, "validation") == 0);
            /* the same configuration */
            CHECK_INT(j->n_gpus, tw->n_gpus);
            CHECK_STR(j->family, tw->family);
            CHECK_STR(j->phase, tw->phase);
            CHECK_NEAR(j->params_b, tw->params_b, 0);
            CHECK_INT(j->seq_len, tw->seq_len);
            CHECK_INT(j->micro_batch, tw->micro_batch);
            CHECK_INT(j->tp, tw->tp);
            CHECK_INT(j->pp, tw->pp);
            CHECK_INT(j->ep, tw->ep);
            /* Uncapped (at f_max), the H200 is never slower than its H100 twin. */
            CHECK(pfs_dvfs_throughput(&unit[ti], &truth[ti], h200.f_max_mhz) >=
                  pfs_dvfs_throughput(&unit[i], &truth[i], h100.f_max_mhz));
        }
    }
    CHECK_INT(n_split[0], 131);
    CHECK_INT(n_split[1], 24);
    CHECK_INT(n_split[2], 34);
    /* Dense and MoE, pre-training and both kinds of fine-tuning are all there. */
    CHECK(n_moe > 20 && n_moe < 100);
    CHECK(n_pretrain > 40);
    CHECK(n_lora > 20);
    pfs_jobset_free(js);
    pfs_curveset_free(cs);
}

void
test_synth_h200_slower_under_cap(struct test *t)
{
    /* Under a deep cap an H200 can be slower than its H100 twin, since its HBM3e takes more
     * of the budget (shared/data/README.md): the corpus must contain such a pair. */
    struct pfs_synth_options o;
    struct pfs_jobset *js = NULL;
    struct pfs_curveset *cs = NULL;
    struct pfs_diag d = {0};
    size_t n_slower = 0, n_pairs = 0;

    pfs_synth_defaults(&o, 7);
    CHECK_INT(pfs_synth(&o, &js, &cs, &d), 0);
    for (size_t i = 0; js && i < js->n_jobs; i++) {
        const struct pfs_corpus_job *j = &js->jobs[i];
        const struct pfs_job_curve *a, *b;

        if (strcmp(j->split, "transfer") != 0)
            continue;
        a = pfs_curveset_find(cs, j->job_id);
        b = pfs_curveset_find(cs, j->twin_id);
        n_pairs++;
        /* 200 W: the relative throughput, per GPU */
        if (a && b && b->throughput[0] / b->n_gpus < a->throughput[0] / a->n_gpus)
            n_slower++;
    }
    CHECK_INT(n_pairs, 34);
    CHECK(n_slower >= 1);
    pfs_jobset_free(js);
    pfs_curveset_free(cs);
}

void
test_jobs_bad_input(struct test *t)
{
    char text[2048];
    struct pfs_jobset *js = (struct pfs_jobset *)&js;
    struct pfs_diag d = {0};
    const char *hdr = "job_id,gpu,split,twin_id,n_gpus,family,phase,params_b,active_params_b,"
                      "seq_len,micro_batch,tp,pp,dp,ep,power_w,power_frac,sm_clock_mhz,sm_active,"
                      "tensor_active,dram_active,nvlink_gbps,net_gbps,tokens_per_s,pfi_10,pfi_20,"
                      "pfi_30,pfi_40,pfi_50\n";
    const char *p;

    snprintf(text, sizeof text,
             "%sa,h200-sxm,train,,8,dense,pretrain,7,7,4096,2,1,1,8,1,600,"
             "0.86,1900,1.3,0.5,0.3,100,1,9000,0.1,0.2,0.3,0.4,0.5\n",
             hdr);
    p = test_write(t, 0, "j.csv", text);
    CHECK_INT(pfs_jobset_read(p, &js, &d), PFS_EINVAL);
    CHECK(js == NULL);
    CHECK_STR(d.message, "field 19 (sm_active): is a fraction: must be at most 1");
    CHECK_INT(d.line, 2);
    pfs_diag_clear(&d);
    snprintf(text, sizeof text,
             "%sa,h200-sxm,test,,8,dense,pretrain,7,7,4096,2,1,1,8,1,600,"
             "0.86,1900,,,,,,,,,,,\n",
             hdr);
    p = test_write(t, 0, "j.csv", text);
    CHECK_INT(pfs_jobset_read(p, &js, &d), PFS_EINVAL);
    CHECK_STR(d.message, "field 3 (split): unknown value 'test'");
    pfs_diag_clear(&d);
    /* Empty telemetry reads as unknown. */
    snprintf(text, sizeof text, "%sa,h200-sxm,,,8,,,,,,,,,,,600,0.86,,,,,,,,,,,,\n", hdr);
    p = test_write(t, 0, "j.csv", text);
    CHECK_INT(pfs_jobset_read(p, &js, &d), 0);
    if (js) {
        CHECK(isnan(js->jobs[0].sm_active));
        CHECK_NEAR(js->jobs[0].power_w, 600, 0);
        pfs_jobset_free(js);
    }
}

void
test_synth_cli(struct test *t)
{
    char *out, *err, args[800], a[600], b[600];

    /* `pfisim synth --seed 7` twice: byte-identical files. */
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "synth --seed 7 -o %s/run%d", t->tmpdir, i);
        CHECK_INT(test_run(t, args, &out, &err), 0);
        free(out);
        free(err);
    }
    snprintf(a, sizeof a, "%s/run0/jobs.csv", t->tmpdir);
    snprintf(b, sizeof b, "%s/run1/jobs.csv", t->tmpdir);
    CHECK(test_same_file(a, b));
    snprintf(a, sizeof a, "%s/run0/curves.csv", t->tmpdir);
    snprintf(b, sizeof b, "%s/run1/curves.csv", t->tmpdir);
    CHECK(test_same_file(a, b));
    CHECK_INT(test_run(t, "synth --seed x -o /tmp", &out, &err), 2);
    free(out);
    free(err);
    CHECK_INT(test_run(t, "synth --seed 7 -o /nonexistent/dir/deeper", &out, &err), 4);
    free(out);
    free(err);
}
