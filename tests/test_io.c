/*
 * tests/test_io.c - error codes, the CSV tokenizer, the curves CSV and GPU profiles.
 *
 * Bad-input tests check the exact text (STYLE.md): the message is the interface a user
 * sees, and the column must point at the offending field.
 */
#include <errno.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "test.h"

/* "file:line:column: message" as the CLI prints it, for comparisons. */
static const char *
where(const struct pfs_diag *d)
{
    static char buf[1024];
    const char *base = strrchr(d->file, '/');

    snprintf(buf, sizeof buf, "%s:%ld:%ld: %s", base ? base + 1 : d->file, d->line, d->column,
             d->message);
    return buf;
}

void
test_diag_strerror(struct test *t)
{
    struct pfs_diag d = {0};

    CHECK_STR(pfs_strerror(PFS_EINVAL), "invalid input");
    CHECK_STR(pfs_strerror(PFS_EIO), "input/output error");
    CHECK_STR(pfs_strerror(0), "success");
    CHECK_STR(pfs_strerror(-999), "unknown error");
    /* The first error wins. */
    CHECK_INT(pfs__diag_set(&d, PFS_EINVAL, "a.csv", 3, 7, "cap_w", "first %d", 1), PFS_EINVAL);
    CHECK_INT(pfs__diag_set(&d, PFS_EIO, "b.csv", 9, 9, NULL, "second"), PFS_EIO);
    CHECK_STR(where(&d), "a.csv:3:7: first 1");
    CHECK_INT(d.code, PFS_EINVAL);
    CHECK_INT(pfs__diag_set(NULL, PFS_EIO, NULL, 0, 0, NULL, "x"), PFS_EIO);
}

void
test_csv_tokenizer(struct test *t)
{
    const char *p = test_write(t, 0, "q.csv",
                               "a,b,c\r\n"
                               "\n"
                               "\"x,1\",\"say \"\"hi\"\"\",\n"
                               "plain,,last\n"
                               "\"open,2\n");
    struct pfs_diag d = {0};
    struct pfs__csv csv;

    CHECK_INT(pfs__csv_open(&csv, p, &d), 0);
    CHECK_INT(pfs__csv_next(&csv), 1);
    CHECK_INT(csv.n_fields, 3);
    CHECK_STR(csv.fields[2], "c"); /* CR stripped */
    CHECK_INT(pfs__csv_next(&csv), 1);
    CHECK_INT(csv.line, 3); /* blank line 2 skipped, still counted */
    CHECK_INT(csv.n_fields, 3);
    CHECK_STR(csv.fields[0], "x,1");
    CHECK_STR(csv.fields[1], "say \"hi\"");
    CHECK_STR(csv.fields[2], "");
    CHECK_INT(csv.columns[1], 7);
    CHECK_INT(pfs__csv_next(&csv), 1);
    CHECK_STR(csv.fields[1], "");
    CHECK_INT(csv.columns[2], 8);
    CHECK_INT(pfs__csv_next(&csv), PFS_EINVAL);
    CHECK_STR(where(&d), "q.csv:5:1: unterminated quoted field");
    CHECK_STR(d.text, "\"open,2");
    pfs__csv_close(&csv);

    pfs_diag_clear(&d);
    CHECK_INT(pfs__csv_open(&csv, "/nonexistent/x.csv", &d), PFS_EIO);
    CHECK_STR(d.message, "cannot open: No such file or directory");
}

static const char header[] = "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n";

void
test_curves_roundtrip(struct test *t)
{
    char text[1024];
    struct pfs_curveset *cs = NULL, *back = NULL;
    struct pfs_diag d = {0};
    const struct pfs_job_curve *j;
    const char *p, *q;

    /* Rows out of order, jobs interleaved, extra column ignored, a quoted id. */
    snprintf(text, sizeof text,
             "note,%s"
             "x,\"job,a\",h100-sxm,8,700,1000.5,tokens/s,650\n"
             "x,b,h200-sxm,1,300,0.1,iter/s,290.25\n"
             "x,\"job,a\",h100-sxm,8,300,0.1234567890123456789,tokens/s,299\n"
             "x,\"job,a\",h100-sxm,8,500,900,tokens/s,480\n",
             header);
    p = test_write(t, 0, "c.csv", text);
    CHECK_INT(pfs_curveset_read(p, &cs, &d), 0);
    if (!cs)
        return;
    CHECK_INT(cs->n_jobs, 2);
    j = pfs_curveset_find(cs, "job,a");
    CHECK(j != NULL);
    if (j) {
        CHECK_INT(j->n_points, 3);
        CHECK_NEAR(j->cap_w[0], 300, 0);
        CHECK_NEAR(j->cap_w[2], 700, 0);
        CHECK_NEAR(j->throughput[1], 900, 0);
        CHECK_INT(j->n_gpus, 8);
        CHECK_INT(j->line, 2);
    }
    /* Write and read back: every number bit-identical. */
    q = test_write(t, 1, "back.csv", "");
    CHECK_INT(pfs_curveset_write_path(cs, q, &d), 0);
    CHECK_INT(pfs_curveset_read(q, &back, &d), 0);
    if (back) {
        const struct pfs_job_curve *k = pfs_curveset_find(back, "job,a");

        CHECK(k != NULL);
        for (size_t i = 0; k && j && i < k->n_points; i++)
            CHECK(memcmp(&k->throughput[i], &j->throughput[i], sizeof(double)) == 0);
    }
    pfs_curveset_free(back);
    pfs_curveset_free(cs);
}

/* Reads text as a curves file and returns "file:line:column: message" of the failure. */
static const char *
read_error(struct test *t, const char *body, int *rc)
{
    char text[2048];
    struct pfs_curveset *cs = (struct pfs_curveset *)&cs;
    struct pfs_diag d = {0};
    const char *p;

    snprintf(text, sizeof text, "%s", body);
    p = test_write(t, 0, "bad.csv", text);
    *rc = pfs_curveset_read(p, &cs, &d);
    CHECK(cs == NULL); /* never half-loaded */
    return where(&d);
}

void
test_curves_bad_input(struct test *t)
{
    int rc;

    CHECK_STR(read_error(t,
                         "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                         "a,h100-sxm,1,700,2,tokens/s,650\n"
                         "a,h100-sxm,1,300,nan,tokens/s,290\n",
                         &rc),
              "bad.csv:3:18: field 5 (throughput): expected a finite number, got 'nan'");
    CHECK_INT(rc, PFS_EINVAL);
    CHECK_STR(read_error(t,
                         "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                         "b,h100-sxm,1,-300,1,tokens/s,290\n",
                         &rc),
              "bad.csv:2:14: field 4 (cap_w): must be a positive number of watts");
    CHECK_STR(read_error(t,
                         "job_id,gpu,n_gpus,cap_w,throughput,unit\n"
                         "b,h100-sxm,1,300,1,tokens/s\n",
                         &rc),
              "bad.csv:1:1: missing column 'power_w' in the header");
    CHECK_STR(read_error(t,
                         "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                         "a,h100-sxm,1,300,1,tokens/s,290\n"
                         "a,h100-sxm,1,300.0,1.1,tokens/s,291\n",
                         &rc),
              "bad.csv:3:14: field 4 (cap_w): job 'a' already has a point at 300 W");
    CHECK_STR(read_error(t,
                         "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                         "a,h100-sxm,1,300,1,tokens/s,290\n"
                         "a,h200-sxm,1,400,1,tokens/s,390\n",
                         &rc),
              "bad.csv:3:3: field 2 (gpu): job 'a' has gpu 'h200-sxm' here but 'h100-sxm' on "
              "line 2");
    CHECK_STR(read_error(t,
                         "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                         "a,h100-sxm,1,300,1,tokens/s\n",
                         &rc),
              "bad.csv:2:28: field 7 (power_w): missing (the row has 6 fields)");
    CHECK_STR(read_error(t,
                         "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                         "a,h100-sxm,two,300,1,tokens/s,290\n",
                         &rc),
              "bad.csv:2:12: field 3 (n_gpus): expected an integer, got 'two'");
    CHECK_STR(read_error(t,
                         "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                         "a,h100-sxm,1,300,1,tokens/s,-5\n",
                         &rc),
              "bad.csv:2:29: field 7 (power_w): must not be negative");
    CHECK_STR(read_error(t,
                         "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                         "a,h100-sxm,1,inf,1,tokens/s,5\n",
                         &rc),
              "bad.csv:2:14: field 4 (cap_w): expected a finite number, got 'inf'");
    CHECK_STR(read_error(t, "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n", &rc),
              "bad.csv:1:0: no data rows after the header");
    CHECK_STR(read_error(t, "", &rc), "bad.csv:1:0: empty file: expected a header row");
    CHECK_STR(read_error(t, "job_id,gpu,gpu,n_gpus,cap_w,throughput,unit,power_w\n", &rc),
              "bad.csv:1:12: column 'gpu' appears twice in the header");
}

void
test_gpu_profiles(struct test *t)
{
    static const char *const names[] = {"h100-sxm", "h200-sxm", "a100-pcie", "a100-sxm",
                                        "a40",      "rtx6000",  "p100"};
    struct pfs_diag d = {0};
    struct pfs_gpu g;
    size_t n = 0;

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        CHECK_INT(pfs_gpu_find(names[i], &g, &d), 0);
        CHECK_STR(g.name, names[i]);
    }
    while (pfs_gpu_name(n))
        n++;
    CHECK_INT(n, 10); /* seven with measurements, three Blackwell (extrapolated) */
    /* Published figures (shared/data/README.md). */
    CHECK_INT(pfs_gpu_find("h200-sxm", &g, &d), 0);
    CHECK_NEAR(g.default_limit_w, 700, 0);
    CHECK_NEAR(g.max_limit_w, 700, 0);
    CHECK_NEAR(g.min_limit_w, 200, 0);
    CHECK_NEAR(g.f_max_mhz, 1980, 0);
    CHECK_NEAR(g.mem_bw_tbs, 4.8, 0);
    CHECK(g.idle_w >= 72 && g.idle_w <= 75);
    CHECK_INT(pfs_gpu_find("h100-sxm", &g, &d), 0);
    CHECK_NEAR(g.mem_bw_tbs, 3.35, 0);
    CHECK_INT(pfs_gpu_find("a100-sxm", &g, &d), 0);
    CHECK_NEAR(g.default_limit_w, 400, 0);
    CHECK_INT(pfs_gpu_find("xyz9", &g, &d), PFS_ENOTFOUND);
    CHECK_STR(d.message, "unknown GPU profile 'xyz9' (known: a100-pcie, a100-sxm, a40, b100, "
                         "b200, gb200, h100-sxm, h200-sxm, p100, rtx6000)");
}

void
test_gpu_bad_config(struct test *t)
{
    struct pfs_diag d = {0};
    struct pfs_gpu g;
    const char *p;

    p = test_write(t, 0, "g.cfg", "gpu = { name = \"x\"; model = \"y\"\n}; broken");
    CHECK_INT(pfs_gpu_load(p, &g, &d), PFS_EINVAL);
    CHECK_STR(where(&d), "g.cfg:2:0: syntax error");
    pfs_diag_clear(&d);
    p = test_write(t, 1, "h.cfg",
                   "gpu = {\n name = \"x\"; model = \"y\"; extrapolated = true;\n"
                   " limits_w = { min = 200; default = 700; max = 700; };\n"
                   " idle_w = 70; dyn_w = 630;\n"
                   " clock_mhz = { min = 300; max = 1980; knee = 1000; };\n"
                   " v_min = \"high\";\n"
                   " memory = { bandwidth_tbs = 1; size_gb = 1; }; tflops_bf16 = 1;\n};\n");
    CHECK_INT(pfs_gpu_load(p, &g, &d), PFS_EINVAL);
    CHECK_STR(where(&d), "h.cfg:6:0: gpu.v_min: expected a number");
    pfs_diag_clear(&d);
    p = test_write(t, 2, "k.cfg",
                   "gpu = {\n name = \"x\"; model = \"y\"; extrapolated = true;\n"
                   " limits_w = { min = 200; default = 700; max = 600; };\n"
                   " idle_w = 70; dyn_w = 630;\n"
                   " clock_mhz = { min = 300; max = 1980; knee = 1000; };\n"
                   " v_min = 0.7;\n"
                   " memory = { bandwidth_tbs = 1; size_gb = 1; }; tflops_bf16 = 1;\n};\n");
    CHECK_INT(pfs_gpu_load(p, &g, &d), PFS_EINVAL);
    CHECK_STR(where(&d), "k.cfg:1:0: gpu.limits_w: need 0 < min <= default <= max");
    pfs_diag_clear(&d);
    p = test_write(t, 3, "m.cfg", "gpu = { name = \"x\"; };\n");
    CHECK_INT(pfs_gpu_load(p, &g, &d), PFS_EINVAL);
    CHECK_STR(where(&d), "m.cfg:1:0: gpu.model: missing string setting");
    pfs_diag_clear(&d);
    CHECK_INT(pfs_gpu_load("/nonexistent.cfg", &g, &d), PFS_EIO);
}

void
test_perseus_published_format(struct test *t)
{
    /* A Perseus zeus_global file as published for up to 8 pipeline stages (SYNTHETIC rows of
     * the published shape): a job's GPUs are dp x tp x pp, the limits of stages it does not
     * have hold 0.0 and are ignored. Before the fix such a file was refused at its first zero
     * and n_gpus was the number of power_limit columns. */
    static const char head[] =
        "model_name,partition_method,batch_size,dp,tp,pp,microbatch_size,num_microbatches,"
        "power_limit_0,power_limit_1,power_limit_2,power_limit_3,power_limit_4,power_limit_5,"
        "power_limit_6,power_limit_7,time,energy,optimal_power_limit\n";
    char text[2048];
    struct pfs_curveset *cs = NULL;
    struct pfs_diag d = {0};
    const struct pfs_job_curve *jc;

    snprintf(text, sizeof text,
             "%sgpt-a,uniform,64,2,1,4,4,16,300,300,300,300,0.0,0.0,0.0,0.0,2.0,4000.0,300\n"
             "gpt-a,uniform,64,2,1,4,4,16,200,200,200,200,0.0,0.0,0.0,0.0,2.5,3500.0,300\n"
             "gpt-b,uniform,64,1,2,8,4,16,250,250,250,250,250,250,250,250,1.0,3200.0,250\n",
             head);
    CHECK_INT(pfs_curveset_new(&cs), 0);
    CHECK_INT(
        pfs_importer_find("perseus")->read(test_write(t, 0, "p.csv", text), "a100-pcie", cs, &d),
        0);
    CHECK_INT(cs->n_jobs, 2);
    jc = pfs_curveset_find(cs, "gpt-a");
    CHECK(jc && jc->n_gpus == 8 && jc->n_points == 2);
    /* 4,000 J in 2 s over 8 GPUs: 250 W each; 3,500 J in 2.5 s: 175 W. */
    CHECK(jc && fabs(jc->power_w[1] - 250) < 1e-9 && fabs(jc->power_w[0] - 175) < 1e-9);
    CHECK(jc && fabs(jc->throughput[1] - 0.5) < 1e-12);
    jc = pfs_curveset_find(cs, "gpt-b");
    CHECK(jc && jc->n_gpus == 16 && fabs(jc->power_w[0] - 200) < 1e-9);
    pfs_curveset_free(cs);
    /* A limit in a stage the row does not have is an error naming the column. */
    snprintf(text, sizeof text,
             "%sgpt-a,uniform,64,2,1,4,4,16,300,300,300,300,300,0.0,0.0,0.0,2.0,4000.0,300\n",
             head);
    cs = NULL;
    CHECK_INT(pfs_curveset_new(&cs), 0);
    d = (struct pfs_diag){0};
    CHECK_INT(
        pfs_importer_find("perseus")->read(test_write(t, 0, "p.csv", text), "a100-pcie", cs, &d),
        PFS_EINVAL);
    CHECK_STR(d.field, "power_limit_4");
    CHECK(strstr(d.message, "expected 0 for a stage it does not have") != NULL);
    CHECK_INT(d.line, 2);
    pfs_curveset_free(cs);
}

void
test_scenario_strings_roundtrip(struct test *t)
{
    /* A scenario's strings written back as libconfig reads them (issue 17: a name with a
     * quote was stored unescaped, and price and report then failed on the stored text). */
    struct pfs_scenario *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    struct pfs_diag d = {0};
    char *canon = NULL;
    size_t len = 0;
    FILE *fp;

    pfs_scenario_default(a);
    pfs__strlcpy(a->name, "we \"quote\" \\ it\ttab\x01", sizeof a->name);
    pfs__strlcpy(a->predictor, "dir with \"quotes\"/p.cfg", sizeof a->predictor);
    fp = open_memstream(&canon, &len);
    CHECK_INT(pfs_scenario_write(a, fp), 0);
    fclose(fp);
    CHECK(canon && strstr(canon, "name = \"we \\\"quote\\\" \\\\ it\\x09tab\\x01\";") != NULL);
    CHECK_INT(pfs_scenario_parse(canon, "canonical", b, &d), 0);
    CHECK_STR(b->name, a->name);
    CHECK_STR(b->predictor, a->predictor);
    free(canon);
    free(a);
    free(b);
}

/* What pfs__parse_double takes, and its value (and pfs__strtod's), against strtod's read of
 * the whole string, bit for bit: random decimals of 1-28 digits with powers of ten from
 * 10^-40 to 10^40, 19 digits either side of the fast reader's range, the 15-19 digit forms
 * of random doubles, halfway points between doubles and their neighbours, and the forms
 * strtod alone reads. */
static void
parse_like_strtod(struct test *t, const char *s)
{
    char *end;
    double want, got = 12345.0;
    bool ok_want, ok_got = pfs__parse_double(s, &got);

    errno = 0;
    want = strtod(s, &end);
    ok_want = end != s && *end == '\0' && isfinite(want) && *s != ' ';
    if (ok_got != ok_want || (ok_want && memcmp(&got, &want, sizeof got) != 0))
        test_fail(t, __FILE__, __LINE__, "'%s': %s %.17g, strtod %s %.17g", s,
                  ok_got ? "read" : "refused", got, ok_want ? "read" : "refused", want);
    got = ok_want ? pfs__strtod(s) : want;
    if (memcmp(&got, &want, sizeof got) != 0)
        test_fail(t, __FILE__, __LINE__, "pfs__strtod('%s') %.17g, strtod %.17g", s, got, want);
}

void
test_parse_double(struct test *t)
{
    static const char *const forms[] = {
        "0",
        "-0",
        "+0.0e+0",
        "1.",
        ".5",
        "-.5e-3",
        "5e0",
        "1E+05",
        "1e",
        "1e+",
        "e5",
        ".",
        "-",
        "+",
        "",
        "0x10",
        "0x1p-3",
        "inf",
        "-nan",
        "1e400",
        "1e-400",
        "4.9e-324",
        "1.5 ",
        "1,5",
        "--1",
        "1e5.5",
        "1.2.3",
        "00000000000000000000000001.5",
        "1.000000000000000000000001",
        "9007199254740993",
        "9007199254740992.5",
        "179769313486231570000000000000000000000000000000000000000000000000000000000000000"};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    char s[96];

    gsl_rng_set(r, 11);
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
        parse_like_strtod(t, forms[i]);
    for (int i = 0; i < 400000 && t->failures < 20; i++) {
        size_t n = 0, whole = gsl_rng_uniform_int(r, 14), frac = gsl_rng_uniform_int(r, 14);

        if (gsl_rng_uniform(r) < 0.2)
            s[n++] = gsl_rng_uniform(r) < 0.5 ? '-' : '+';
        for (size_t k = 0; k < whole; k++)
            s[n++] = (char)('0' + gsl_rng_uniform_int(r, k == 0 && i % 3 ? 10 : 9) + (k == 0));
        if (frac || !whole) {
            s[n++] = '.';
            for (size_t k = 0; k <= frac; k++)
                s[n++] = (char)('0' + gsl_rng_uniform_int(r, 10));
        }
        if (gsl_rng_uniform(r) < 0.6)
            n += (size_t)snprintf(s + n, sizeof s - n, "e%d", (int)gsl_rng_uniform_int(r, 81) - 40);
        s[n] = '\0';
        parse_like_strtod(t, s);
    }
    for (int i = 0; i < 300000 && t->failures < 20; i++) { /* 19 digits at the range's edges */
        size_t n = 0;

        for (int k = 0; k < 19; k++)
            s[n++] = (char)('0' + gsl_rng_uniform_int(r, 9) + (k == 0));
        snprintf(s + n, sizeof s - n, "e%d", (int)gsl_rng_uniform_int(r, 71) - 35 - 18);
        parse_like_strtod(t, s);
    }
    for (int i = 0; i < 100000 && t->failures < 20; i++) { /* a double's shortest forms */
        uint64_t bits = ((uint64_t)gsl_rng_get(r) << 32) ^ gsl_rng_get(r);
        double v;

        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v))
            continue;
        for (int digits = 15; digits <= 19; digits++) {
            snprintf(s, sizeof s, "%.*g", digits, v);
            parse_like_strtod(t, s);
        }
    }
    for (int k = 0; k < 64 && t->failures < 20; k++) { /* halfway between doubles of 2^k */
        long double base = ldexpl(1.0L, k + 53), half = ldexpl(1.0L, k);

        for (int d = -2; d <= 2; d++) {
            long double x = base + half + d;

            snprintf(s, sizeof s, "%.0Lf", x);
            parse_like_strtod(t, s);
            snprintf(s, sizeof s, "%.0Lfe-7", x);
            parse_like_strtod(t, s);
        }
    }
    gsl_rng_free(r);
}
