/*
 * tests/test_blackwell.c - GPU profiles as ranges, their draws, the corpus on any GPU, and
 * --uncertainty (issue 21; docs/model.md, "Profiles as ranges").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static size_t
param_index(const char *name)
{
    for (size_t k = 0; pfs_gpu_param_name(k); k++)
        if (strcmp(pfs_gpu_param_name(k), name) == 0)
            return k;
    return SIZE_MAX;
}

void
test_gpu_profile_ranges(struct test *t)
{
    struct pfs_gpu g, h;
    struct pfs_diag d = {0};
    char src[600], *out, *err;
    size_t k_min = param_index("limits_w.min"), k_max = param_index("limits_w.max");
    size_t k_idle = param_index("idle_w");

    CHECK_INT(pfs_gpu_find("b200", &g, &d), 0);
    CHECK(g.extrapolated && pfs_gpu_uncertain(&g));
    /* A range's point is its midpoint; dyn_w and the knee are derived from the point. */
    CHECK_NEAR(g.lo[k_min], 200, 0);
    CHECK_NEAR(g.hi[k_min], 400, 0);
    CHECK_NEAR(g.min_limit_w, 300, 0);
    CHECK_NEAR(g.idle_w, 130, 0);
    CHECK(g.dyn_derived && g.knee_derived);
    CHECK_NEAR(g.dyn_w, 1000 - 130, 0);
    CHECK_NEAR(g.f_knee_mhz, 0.675 * 1980, 1e-9);
    CHECK_NEAR(pfs_gpu_param(&g, PFS_GPU_KNEE_FRAC), 0.675, 1e-12);
    CHECK_INT(g.kind[k_max], PFS_GPU_PUBLISHED);
    CHECK_INT(g.kind[k_idle], PFS_GPU_ASSUMED);
    CHECK_INT(pfs_gpu_source("b200", k_max, src, sizeof src, &d), 0);
    CHECK(strstr(src, "\"B200 TGP 1000W\"") != NULL);
    /* The measured-data profiles: values, no provenance, no ranges. */
    CHECK_INT(pfs_gpu_find("h200-sxm", &h, &d), 0);
    CHECK(!h.extrapolated && !pfs_gpu_uncertain(&h));
    CHECK_INT(h.kind[k_max], PFS_GPU_UNSTATED);
    CHECK_INT(pfs_gpu_find("gb200", &g, &d), 0);
    CHECK_NEAR(g.max_limit_w, 1200, 0);
    CHECK_INT(pfs_gpu_find("b100", &g, &d), 0);
    CHECK_NEAR(g.mem_bw_tbs, 7.85, 1e-12);
    /* Bad profiles: each refused, naming what is wrong. */
    {
        static const struct {
            const char *body, *msg;
        } bad[] = {
            {"idle_w = [50.0, 60.0];", "gpu.idle_w: a range needs a provenance entry"},
            {"idle_w = [60.0, 50.0];", "gpu.idle_w: expected a number or a range [lo, hi]"},
            {"idle_w = [50.0, 250.0]; provenance = ( { setting = \"idle_w\"; kind = \"assumed\"; "
             "source = \"x\"; } );",
             "the ranges allow a profile the model cannot use"},
            {"idle_w = [50.0, 60.0]; provenance = ( { setting = \"idle_w\"; kind = \"guessed\"; "
             "source = \"x\"; } );",
             "kind 'guessed' is not measured, published or assumed"},
            {"idle_w = 50.0; provenance = ( { setting = \"nope\"; kind = \"assumed\"; source = "
             "\"x\"; } );",
             "'nope' is not a setting of this profile"},
        };

        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            char text[1200];
            const char *path;

            snprintf(text, sizeof text,
                     "gpu = { name = \"x\"; model = \"X\"; extrapolated = false;\n"
                     "  limits_w = { min = 200.0; default = 700.0; max = 700.0; };\n"
                     "  %s dyn_w = 600.0;\n"
                     "  clock_mhz = { min = 345.0; max = 1980.0; knee = 1300.0; };\n"
                     "  v_min = 0.8; memory = { bandwidth_tbs = 3.0; size_gb = 80.0; };\n"
                     "  tflops_bf16 = 900.0; };\n",
                     bad[i].body);
            path = test_write(t, 0, "x.cfg", text);
            pfs_diag_clear(&d);
            CHECK_INT(pfs_gpu_load(path, &g, &d), PFS_EINVAL);
            if (!strstr(d.message, bad[i].msg))
                test_fail(t, __FILE__, __LINE__, "'%s': got '%s'", bad[i].body, d.message);
        }
        /* An extrapolated profile needs a source for every number; knee or knee_frac. */
        static const struct {
            const char *text, *msg;
        } more[] = {
            {"gpu = { name = \"x\"; model = \"X\"; extrapolated = true;\n"
             "  limits_w = { min = 200.0; default = 700.0; max = 700.0; }; idle_w = 50.0;\n"
             "  clock_mhz = { min = 345.0; max = 1980.0; knee = 1300.0; };\n"
             "  v_min = 0.8; memory = { bandwidth_tbs = 3.0; size_gb = 80.0; };\n"
             "  tflops_bf16 = 900.0; };\n",
             "gpu.limits_w.min: in an extrapolated profile it needs a provenance entry"},
            {"gpu = { name = \"x\"; model = \"X\"; extrapolated = false;\n"
             "  limits_w = { min = 200.0; default = 700.0; max = 700.0; }; idle_w = 50.0;\n"
             "  clock_mhz = { min = 345.0; max = 1980.0; knee = 1300.0; knee_frac = 0.6; };\n"
             "  v_min = 0.8; memory = { bandwidth_tbs = 3.0; size_gb = 80.0; };\n"
             "  tflops_bf16 = 900.0; };\n",
             "gpu.clock_mhz: give knee or knee_frac, not both"},
        };

        for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
            pfs_diag_clear(&d);
            CHECK_INT(pfs_gpu_load(test_write(t, 0, "x.cfg", more[i].text), &g, &d), PFS_EINVAL);
            if (!strstr(d.message, more[i].msg))
                test_fail(t, __FILE__, __LINE__, "got '%s', expected '%s'", d.message, more[i].msg);
        }
    }
    /* pfisim gpus NAME: every parameter with its range and what backs it. */
    CHECK_INT(test_run(t, "gpus b200 --csv", &out, &err), 0);
    CHECK(strstr(out, "limits_w.min,300,200,400,assumed,\"not published") != NULL);
    CHECK(strstr(out, "dyn_w,870,870,870,derived,\"derived: max limit - idle\"") != NULL);
    CHECK(strstr(out, "tflops_bf16,2250,2250,2250,published,") != NULL);
    free(out);
    free(err);
    CHECK_INT(test_run(t, "gpus", &out, &err), 0);
    CHECK(strstr(out, "EXTRAPOLATED") != NULL);
    free(out);
    free(err);
}

void
test_gpu_draws(struct test *t)
{
    /* A centred Latin hypercube: over n draws each ranged parameter takes every stratum's
     * middle, lo + (i + 1/2) (hi - lo) / n, exactly once; derived ones follow each draw. */
    enum { N = 7 };
    struct pfs_gpu g, dr[N], again;
    struct pfs_diag d = {0};
    bool differs = false;

    CHECK_INT(pfs_gpu_find("b200", &g, &d), 0);
    for (size_t i = 0; i < N; i++) {
        CHECK_INT(pfs_gpu_draw(&g, N, i, 11, &dr[i], &d), 0);
        CHECK(!pfs_gpu_uncertain(&dr[i]));
        CHECK_NEAR(dr[i].dyn_w, dr[i].max_limit_w - dr[i].idle_w, 1e-9);
        CHECK_NEAR(dr[i].f_knee_mhz, pfs_gpu_param(&dr[i], PFS_GPU_KNEE_FRAC) * 1980, 1e-9);
    }
    for (size_t k = 0; k < PFS_GPU_N_PARAMS; k++) {
        double v[N];

        if (!(g.hi[k] > g.lo[k]))
            continue;
        for (size_t i = 0; i < N; i++)
            v[i] = pfs_gpu_param(&dr[i], k);
        qsort(v, N, sizeof v[0], pfs__cmp_double);
        for (size_t i = 0; i < N; i++)
            CHECK_NEAR(v[i], g.lo[k] + (i + 0.5) * (g.hi[k] - g.lo[k]) / N, 1e-9 * g.hi[k]);
    }
    /* The same seed, the same draws; another seed, another order. */
    for (size_t i = 0; i < N; i++) {
        CHECK_INT(pfs_gpu_draw(&g, N, i, 11, &again, &d), 0);
        CHECK(memcmp(&again, &dr[i], sizeof again) == 0);
        CHECK_INT(pfs_gpu_draw(&g, N, i, 12, &again, &d), 0);
        differs |= !(again.idle_w >= dr[i].idle_w && again.idle_w <= dr[i].idle_w);
    }
    CHECK(differs);
    /* One draw is the point profile, to the bit. */
    CHECK_INT(pfs_gpu_draw(&g, 1, 0, 99, &again, &d), 0);
    for (size_t k = 0; k < PFS_GPU_N_PARAMS; k++)
        CHECK(memcmp(&(double){pfs_gpu_param(&again, k)}, &(double){pfs_gpu_param(&g, k)},
                     sizeof(double)) == 0);
    CHECK_INT(pfs_gpu_draw(&g, 3, 3, 1, &again, &d), PFS_EINVAL);
}

void
test_synth_on_gpu(struct test *t)
{
    /* The corpus on one GPU: on the H200's own profile it is the H200 part of the shipped
     * corpus bit for bit (the generalised step split reduces to Hopper's); on the B200 the
     * same configurations, measured over its limits, labelled extrapolated. */
    struct pfs_synth_options o;
    struct pfs_jobset *js = NULL, *js_h = NULL;
    struct pfs_curveset *cs = NULL, *cs_h = NULL;
    struct pfs_gpu h200, b200;
    struct pfs_diag d = {0};
    char *out, *err, args[600], path[600];

    CHECK_INT(pfs_gpu_find("h200-sxm", &h200, &d), 0);
    CHECK_INT(pfs_gpu_find("b200", &b200, &d), 0);
    pfs_synth_defaults(&o, 7);
    CHECK_INT(pfs_synth(&o, &js, &cs, &d), 0);
    o.gpu = &h200;
    CHECK_INT(pfs_synth(&o, &js_h, &cs_h, &d), 0);
    if (!js || !js_h)
        return;
    CHECK_INT(js_h->n_jobs, 155);
    for (size_t i = 0; i < js_h->n_jobs; i++) {
        const struct pfs_job_curve *a = &cs->jobs[i], *b = &cs_h->jobs[i];

        CHECK(strcmp(js->jobs[i].job_id, js_h->jobs[i].job_id) == 0);
        CHECK(memcmp(js->jobs[i].pfi, js_h->jobs[i].pfi, sizeof js->jobs[i].pfi) == 0);
        CHECK(a->n_points == b->n_points &&
              memcmp(a->throughput, b->throughput, a->n_points * sizeof *a->throughput) == 0 &&
              memcmp(a->power_w, b->power_w, a->n_points * sizeof *a->power_w) == 0);
    }
    pfs_jobset_free(js_h);
    pfs_curveset_free(cs_h);
    o.gpu = &b200;
    CHECK_INT(pfs_synth(&o, &js_h, &cs_h, &d), 0);
    if (js_h) {
        CHECK(strcmp(js_h->jobs[0].job_id, "b200-001") == 0);
        for (size_t i = 0; i < js_h->n_jobs; i++) {
            const struct pfs_job_curve *b = &cs_h->jobs[i];

            CHECK(strcmp(js_h->jobs[i].family, js->jobs[i].family) == 0 &&
                  strcmp(js_h->jobs[i].phase, js->jobs[i].phase) == 0 &&
                  js_h->jobs[i].n_gpus == js->jobs[i].n_gpus);
            CHECK(b->n_points == 11);
            CHECK_NEAR(b->cap_w[0], 300, 0);
            CHECK_NEAR(b->cap_w[1], 370, 1e-9);
            CHECK_NEAR(b->cap_w[10], 1000, 0);
        }
    }
    pfs_jobset_free(js);
    pfs_curveset_free(cs);
    pfs_jobset_free(js_h);
    pfs_curveset_free(cs_h);
    snprintf(args, sizeof args, "synth --gpu b200 -o %s/b", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(path, sizeof path, "%s/b/curves.csv", t->tmpdir);
    {
        FILE *fp = fopen(path, "r");
        char line[300] = "";

        CHECK(fp && fgets(line, sizeof line, fp));
        CHECK(strncmp(line,
                      "# SYNTHETIC, on an EXTRAPOLATED GPU profile: generated by pfisim "
                      "synth --gpu b200 --seed 7",
                      90) == 0);
        if (fp)
            fclose(fp);
    }
    /* The synth:GPU[:SEED] source, one parser for scenarios and pfisim alloc. */
    {
        static const char *bad[] = {"synth:",
                                    "synth::3",
                                    "synth:b200:",
                                    "synth:b200:-1",
                                    "synth:b200:3x",
                                    "import:perseus:h100:x",
                                    "synth:a-name-longer-than-thirty-one-bytes"};
        char gpu[32];
        unsigned long seed = 0;

        CHECK(pfs_synth_spec("synth:b200", gpu, sizeof gpu, &seed));
        CHECK(strcmp(gpu, "b200") == 0 && seed == 7);
        CHECK(pfs_synth_spec("synth:h100-sxm:42", gpu, sizeof gpu, &seed));
        CHECK(strcmp(gpu, "h100-sxm") == 0 && seed == 42);
        for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
            CHECK(!pfs_synth_spec(bad[k], gpu, sizeof gpu, &seed));
    }
    CHECK(test_run(t, "alloc synth:b200:x --cut 0.3", &out, &err) != 0);
    CHECK(strstr(err, "expected synth:GPU or synth:GPU:SEED, got 'synth:b200:x'") != NULL);
    free(out);
    free(err);
    test_write(t, 0, "bad.cfg",
               "scenario = { name = \"bad\"; duration_days = 1.0; facility = { gpus = 64; "
               "gpu = \"b200\"; };\n"
               "  workload = { corpus = \"synth:b200:-2\"; }; policies = [\"equal\"]; };\n");
    snprintf(args, sizeof args, "run %s/bad.cfg", t->tmpdir);
    CHECK(test_run(t, args, &out, &err) != 0);
    CHECK(strstr(err, "scenario.workload.corpus: expected synth:GPU or synth:GPU:SEED, got "
                      "'synth:b200:-2'") != NULL);
    free(out);
    free(err);
}

void
test_uncertainty_cli(struct test *t)
{
    char args[800], *point, *one, *a, *b, *out, *err;

    test_write(t, 0, "b200.cfg",
               "scenario = { name = \"b200\"; duration_days = 2.0; facility = { gpus = 512; "
               "gpu = \"b200\"; };\n"
               "  workload = { corpus = \"synth:b200\"; }; policies = [\"equal\", \"pfi\", "
               "\"oracle\"]; };\n");
    /* --uncertainty 1 is the point run, every range at its midpoint: the same runs. */
    snprintf(args, sizeof args, "run %s/b200.cfg --json", t->tmpdir);
    CHECK_INT(test_run(t, args, &point, &err), 0);
    free(err);
    snprintf(args, sizeof args, "run %s/b200.cfg --json --uncertainty 1", t->tmpdir);
    CHECK_INT(test_run(t, args, &one, &err), 0);
    free(err);
    {
        /* each run's object, "draw": 1 taken out, against the point run's */
        char *p = point ? strstr(point, "\"runs\": [") : NULL,
             *q = one ? strstr(one, "\"runs\": [") : NULL;
        char *pe = p ? strstr(p, "\n]") : NULL, *w, *r;

        CHECK(p && q && pe);
        for (w = r = q; r && *r; r++) { /* drop ", \"draw\": 1" in place */
            if (strncmp(r, ", \"draw\": 1", 11) == 0)
                r += 11;
            *w++ = *r;
            if (!*r)
                break;
        }
        if (w)
            *w = '\0';
        CHECK(p && q && pe && strncmp(p, q, (size_t)(pe - p)) == 0);
        CHECK(q && strstr(q, "\"uncertainty\": {\"draws\": 1, \"seed\": 1") != NULL);
    }
    free(point);
    free(one);
    /* Draws are reproducible from their seed, and another seed draws otherwise. */
    snprintf(args, sizeof args, "run %s/b200.cfg --uncertainty 4 --uncertainty-seed 3 --csv",
             t->tmpdir);
    CHECK_INT(test_run(t, args, &a, &err), 0);
    free(err);
    CHECK_INT(test_run(t, args, &b, &err), 0);
    free(err);
    CHECK(a && b && strcmp(a, b) == 0 && strstr(a, "policy,metric,n_draws,median,min,max\n"));
    free(b);
    snprintf(args, sizeof args, "run %s/b200.cfg --uncertainty 4 --uncertainty-seed 4 --csv",
             t->tmpdir);
    CHECK_INT(test_run(t, args, &b, &err), 0);
    free(err);
    CHECK(a && b && strcmp(a, b) != 0);
    free(a);
    free(b);
    /* The text report: the ranges drawn, the rankings. */
    snprintf(args, sizeof args, "run %s/b200.cfg --uncertainty 3", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(out, "uncertainty: 3 draws (centred Latin hypercube, seed 1) of b200 "
                      "(EXTRAPOLATED): limits_w.min [200, 400] idle_w [100, 160]") != NULL);
    CHECK(strstr(out, "ranking by tokens (share of the 3 draws):") != NULL);
    free(out);
    free(err);
    /* Usage: a scenario without ranges, several seeds, outputs of one run. */
    CHECK_INT(test_run(t, "run --uncertainty 3", &out, &err), 2);
    CHECK(strstr(err, "--uncertainty takes a GPU profile with ranges") != NULL);
    free(out);
    free(err);
    snprintf(args, sizeof args, "run %s/b200.cfg --uncertainty 3 --jobs-csv %s/j.csv", t->tmpdir,
             t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 2);
    free(out);
    free(err);
    /* alloc: one draw is the point allocation; a curves file has no profile to draw. */
    CHECK_INT(test_run(t, "alloc synth:b200 --cut 30% --csv", &a, &err), 0);
    free(err);
    CHECK_INT(test_run(t, "alloc synth:b200 --cut 30% --csv --uncertainty 1", &b, &err), 0);
    free(err);
    {
        char *row = a ? strstr(a, "\npfi,") : NULL,
             *u = b ? strstr(b, "\npfi,throughput,1,") : NULL;
        char tot[40] = "", med[40] = "";

        CHECK(row && u);
        if (row && u) {
            sscanf(row + 5, "%39[^,]", tot);
            sscanf(u + 18, "%39[^,]", med);
            CHECK(strcmp(tot, med) == 0);
        }
    }
    free(a);
    free(b);
    /* The figure: medians with the draws' range, per policy. */
    snprintf(args, sizeof args, "alloc synth:b200 --cut 30%% --uncertainty 3 --plot %s/u.png",
             t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(out, "the figure: ") != NULL);
    free(out);
    free(err);
    snprintf(args, sizeof args, "%s/u.png", t->tmpdir);
    test_check_png(t, args, 900, 520);
    CHECK_INT(
        test_run(t, "alloc traces/h200-h100/curves.csv --cut 30% --uncertainty 3", &out, &err), 2);
    CHECK(strstr(err, "--uncertainty takes synth:GPU") != NULL);
    free(out);
    free(err);
    /* The scenario's own uncertainty group: draw 2 (from 0) of 4 is --uncertainty 4's third
     * run; a facility with no ranges, or a draw past the draws, is refused. */
    test_write(t, 1, "d.cfg",
               "scenario = { name = \"b200\"; duration_days = 2.0; facility = { gpus = 512; "
               "gpu = \"b200\"; };\n"
               "  workload = { corpus = \"synth:b200\"; }; policies = [\"equal\", \"pfi\", "
               "\"oracle\"];\n"
               "  uncertainty = { draws = 4; draw = 2; seed = 1; }; };\n");
    snprintf(args, sizeof args, "run %s/d.cfg --json", t->tmpdir);
    CHECK_INT(test_run(t, args, &a, &err), 0);
    free(err);
    snprintf(args, sizeof args, "run %s/b200.cfg --json --uncertainty 4", t->tmpdir);
    CHECK_INT(test_run(t, args, &b, &err), 0);
    free(err);
    {
        char want[200] = "", *x = a ? strstr(a, "\"policy\": \"pfi\"") : NULL;
        char *y = b ? strstr(b, "\"policy\": \"pfi\", \"seed\": 1, \"draw\": 3") : NULL;

        CHECK(x && y);
        if (x && y) {
            sscanf(strstr(x, "\"tokens\": "), "%199[^,]", want);
            CHECK(strncmp(strstr(y, "\"tokens\": "), want, strlen(want)) == 0);
        }
    }
    free(a);
    free(b);
    test_write(t, 1, "d.cfg", "scenario = { uncertainty = { draws = 4; draw = 1; }; };\n");
    snprintf(args, sizeof args, "run %s/d.cfg", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(strstr(err, "scenario.uncertainty: no GPU profile of the facility has a range") != NULL);
    free(out);
    free(err);
    test_write(t, 1, "d.cfg",
               "scenario = { facility = { gpu = \"b200\"; }; workload = { corpus = "
               "\"synth:b200\"; };\n"
               "  uncertainty = { draws = 4; draw = 4; }; };\n");
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(strstr(err, "0 <= draw < draws") != NULL);
    free(out);
    free(err);
}
