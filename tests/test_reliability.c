/*
 * tests/test_reliability.c - issue 17's findings that are about reading and writing back:
 * what pfisim writes it reads again as the same rows (ids that need quoting, numbers to the
 * last bit), what it cannot represent it refuses with the reason, and inputs that were
 * accepted though wrong are refused at their file, line and field (docs/reliability.md).
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

/* Bitwise equality of doubles, without -Wfloat-equal. */
static bool
same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

void
test_roundtrip_ids_and_numbers(struct test *t)
{
    /* Ids a CSV must quote, or whose '#' would start a comment, and numbers that %.10g or
     * %.3f (the writers before) did not carry exactly. */
    static const char *const ids[] = {"#1", "a,b", "say \"hi\"", " lead", "plain"};
    const double nums[] = {0.1 + 0.2, 1.0 / 3.0, 123456.789012345678, 5e-324, 0.0004};
    struct pfs_corpus_job jobs[5];
    struct pfs_jobset js = {.n_jobs = 5, .jobs = jobs}, *back = NULL;
    struct pfs_workload_job wj[5];
    struct pfs_workload wl = {.n_jobs = 5, .jobs = wj}, *wback = NULL;
    struct pfs_diag d = {0};
    char path[300], wpath[300];
    FILE *fp;

    memset(jobs, 0, sizeof jobs);
    memset(wj, 0, sizeof wj);
    for (int i = 0; i < 5; i++) {
        struct pfs_corpus_job *j = &jobs[i];

        pfs__strlcpy(j->job_id, ids[i], sizeof j->job_id);
        pfs__strlcpy(j->gpu, "h200-sxm", sizeof j->gpu);
        j->n_gpus = 8;
        j->params_b = j->active_params_b = j->power_w = j->power_frac = NAN;
        j->sm_clock_mhz = j->sm_active = j->tensor_active = j->dram_active = NAN;
        j->nvlink_gbps = j->net_gbps = j->tokens_per_s = NAN;
        for (int k = 0; k < PFS_N_CUTS; k++)
            j->pfi[k] = NAN;
        j->power_w = nums[i] * 1000;
        j->sm_active = nums[i] / (1 + nums[i]);

        wj[i].job_id = ids[i];
        wj[i].curve_id = ids[4 - i];
        wj[i].pool = "";
        wj[i].submit_s = nums[i] * 10 * (i + 1);
        wj[i].n_gpus = 8;
        wj[i].tokens = 1e9 * nums[i] + 1;
        wj[i].deadline_s = wj[i].submit_s + nums[i];
    }
    /* the workload must be in submit order */
    for (int i = 1; i < 5; i++)
        if (wj[i].submit_s < wj[i - 1].submit_s)
            wj[i].submit_s = wj[i - 1].submit_s, wj[i].deadline_s = wj[i].submit_s + 1;

    snprintf(path, sizeof path, "%s/jobs.csv", t->tmpdir);
    if (!(fp = fopen(path, "w"))) {
        CHECK(fp != NULL);
        return;
    }
    CHECK_INT(pfs_jobset_write(&js, fp, &d), 0);
    fclose(fp);
    CHECK_INT(pfs_jobset_read(path, &back, &d), 0);
    if (d.code)
        fprintf(stderr, "  %s:%ld: %s: %s\n", d.file, d.line, d.field, d.message);
    if (back) {
        CHECK_INT(back->n_jobs, 5);
        for (size_t i = 0; i < back->n_jobs && i < 5; i++) {
            CHECK_STR(back->jobs[i].job_id, ids[i]);
            CHECK(same_double(back->jobs[i].power_w, jobs[i].power_w));
            CHECK(same_double(back->jobs[i].sm_active, jobs[i].sm_active));
            CHECK(isnan(back->jobs[i].tokens_per_s)); /* unknown stays unknown */
        }
    }
    pfs_jobset_free(back);

    snprintf(wpath, sizeof wpath, "%s/workload.csv", t->tmpdir);
    if (!(fp = fopen(wpath, "w"))) {
        CHECK(fp != NULL);
        return;
    }
    CHECK_INT(pfs_workload_write(&wl, fp, &d), 0);
    fclose(fp);
    CHECK_INT(pfs_workload_read(wpath, &wback, &d), 0);
    if (wback) {
        CHECK_INT(wback->n_jobs, 5);
        for (size_t i = 0; i < wback->n_jobs && i < 5; i++) {
            CHECK_STR(wback->jobs[i].job_id, wj[i].job_id);
            CHECK_STR(wback->jobs[i].curve_id, wj[i].curve_id);
            CHECK(same_double(wback->jobs[i].submit_s, wj[i].submit_s));
            CHECK(same_double(wback->jobs[i].tokens, wj[i].tokens));
            CHECK(same_double(wback->jobs[i].deadline_s, wj[i].deadline_s));
        }
    }
    pfs_workload_free(wback);

    /* A line break cannot be written to a line-based CSV: refused, with the reason. */
    pfs__strlcpy(jobs[0].job_id, "two\nlines", sizeof jobs[0].job_id);
    pfs_diag_clear(&d);
    if (!(fp = fopen(path, "w"))) {
        CHECK(fp != NULL);
        return;
    }
    CHECK_INT(pfs_jobset_write(&js, fp, &d), PFS_EINVAL);
    CHECK(strstr(d.message, "line break") != NULL);
    fclose(fp);
}

void
test_import_ids(struct test *t)
{
    char a[300], b[300], args[1400], *out, *err;
    const char *log = "timestamp, index, power.draw [W], power.limit [W], clocks.sm [MHz], "
                      "utilization.gpu [%], utilization.memory [%]\n"
                      "2026/11/29 23:15:27.100, 0, 600.00 W, 700.00 W, 1950 MHz, 90 %, 40 %\n"
                      "2026/11/29 23:15:28.100, 0, 610.00 W, 700.00 W, 1950 MHz, 90 %, 40 %\n"
                      "2026/11/29 23:15:29.100, 0, 620.00 W, 700.00 W, 1960 MHz, 90 %, 40 %\n"
                      "2026/11/29 23:15:30.100, 0, 630.00 W, 700.00 W, 1960 MHz, 90 %, 40 %\n"
                      "2026/11/29 23:15:31.100, 0, 640.00 W, 700.00 W, 1960 MHz, 90 %, 40 %\n";

    /* Two logs of one base name in two folders gave two jobs of one id. */
    snprintf(a, sizeof a, "%s/a", t->tmpdir);
    snprintf(b, sizeof b, "%s/b", t->tmpdir);
    CHECK(mkdir(a, 0777) == 0 && mkdir(b, 0777) == 0);
    test_write(t, 0, "a/run.csv", log);
    test_write(t, 1, "b/run.csv", log);
    snprintf(args, sizeof args, "import nvidia-smi --gpu h200-sxm %s/run.csv %s/run.csv", a, b);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(strstr(err, "b/run.csv") && strstr(err, "'run'") && strstr(err, "a/run.csv"));
    CHECK(out[0] == '\0'); /* nothing written */
    free(out);
    free(err);

    /* A base name longer than jobs.csv's 31 bytes was cut silently. */
    test_write(t, 2, "a-log-name-that-is-longer-than-thirty-one-bytes.csv", log);
    snprintf(args, sizeof args,
             "import nvidia-smi --gpu h200-sxm %s/a-log-name-that-is-longer-than-thirty-one-"
             "bytes.csv",
             t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(strstr(err, "longer than 31 bytes") && strstr(err, "--job-id"));
    free(out);
    free(err);

    /* A comma and a leading '#' in --job-id: quoted on write, so it reads back. */
    snprintf(args, sizeof args,
             "import nvidia-smi --gpu h200-sxm --job-id '#7,b' %s/run.csv -o %s/out.csv", a,
             t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    {
        char path[300];
        struct pfs_jobset *js = NULL;
        struct pfs_diag d = {0};

        snprintf(path, sizeof path, "%s/out.csv", t->tmpdir);
        CHECK_INT(pfs_jobset_read(path, &js, &d), 0);
        if (js) {
            CHECK_INT(js->n_jobs, 1);
            CHECK_STR(js->jobs[0].job_id, "#7,b");
        }
        pfs_jobset_free(js);
    }
}

void
test_readers_refuse_wrong(struct test *t)
{
    struct pfs_curveset *cs = NULL;
    struct pfs_workload *w = NULL;
    struct pfs_trace *tr = NULL;
    struct pfs_scenario *sc = malloc(sizeof *sc);
    struct pfs_diag d = {0};
    const char *p;

    /* Power above its cap: a little is a measurement (Zeus's A40 at its 100 W floor draws
     * up to 121 W), half again is a unit or column mistake. */
    p = test_write(t, 0, "c.csv",
                   "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                   "j,a40,1,100,1.0,it/s,121\nj,a40,1,300,2.0,it/s,290\n");
    CHECK_INT(pfs_curveset_read(p, &cs, &d), 0);
    pfs_curveset_free(cs);
    cs = NULL;
    p = test_write(t, 0, "c.csv",
                   "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                   "j,a40,1,100,1.0,it/s,80\nj,a40,1,300,2.0,it/s,0.29e4\n");
    CHECK_INT(pfs_curveset_read(p, &cs, &d), PFS_EINVAL);
    CHECK_INT(d.line, 3);
    CHECK_STR(d.field, "power_w");
    CHECK(strstr(d.message, "times the cap") != NULL);

    /* A UTF-8 byte-order mark (a spreadsheet's export) is not part of the first column's
     * name: read as if absent. */
    p = test_write(t, 0, "bom.csv",
                   "\xEF\xBB\xBFjob_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                   "j,a40,1,100,1.0,it/s,90\nj,a40,1,300,2.0,it/s,290\n");
    pfs_diag_clear(&d);
    CHECK_INT(pfs_curveset_read(p, &cs, &d), 0);
    if (cs)
        CHECK_STR(cs->jobs[0].job_id, "j");
    pfs_curveset_free(cs);
    if (sc) {
        p = test_write(t, 1, "bom.cfg",
                       "\xEF\xBB\xBFscenario = { name = \"bom\"; duration_days = 1.0; };\n");
        CHECK_INT(pfs_scenario_load(p, sc, &d), 0);
        CHECK_STR(sc->name, "bom");
        /* A NUL byte (a binary file) is refused at its line, before libconfig sees it. */
        p = test_write(t, 1, "nul.cfg", "scenario = {\n name = \"x\";\n};\n");
        {
            FILE *fp = fopen(p, "r+");

            if (fp) {
                fseek(fp, 15, SEEK_SET); /* inside line 2 */
                fputc('\0', fp);
                fclose(fp);
            }
        }
        pfs_diag_clear(&d);
        CHECK_INT(pfs_scenario_load(p, sc, &d), PFS_EINVAL);
        CHECK_INT(d.line, 2);
        CHECK(strstr(d.message, "NUL byte") != NULL);
    }
    free(sc);

    /* A 32-byte job id was blamed on curve_id. */
    p = test_write(t, 2, "w.csv",
                   "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier\n"
                   "abcdefghijabcdefghijabcdefghij12,0,c,8,1e9,100,firm\n");
    pfs_diag_clear(&d);
    CHECK_INT(pfs_workload_read(p, &w, &d), PFS_EINVAL);
    CHECK_STR(d.field, "job_id");
    CHECK(strstr(d.message, "got 32") != NULL);
    pfs_workload_free(w);

    /* A carriage return inside a line (classic Mac line ends, or a stray byte: fuzz-jobs and
     * fuzz-workload found ids that the writer then could not write back); CRLF is fine. */
    p = test_write(t, 2, "w.csv",
                   "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier\r\n"
                   "a\rb,0,c,8,1e9,100,firm\r\n");
    pfs_diag_clear(&d);
    CHECK_INT(pfs_workload_read(p, &w, &d), PFS_EINVAL);
    CHECK_INT(d.line, 2);
    CHECK_INT(d.column, 2);
    CHECK(strstr(d.message, "carriage return") != NULL);
    pfs_workload_free(w);
    w = NULL;
    p = test_write(t, 2, "w.csv",
                   "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier\r\n"
                   "ab,0,c,8,1e9,100,firm\r\n");
    pfs_diag_clear(&d);
    CHECK_INT(pfs_workload_read(p, &w, &d), 0);
    pfs_workload_free(w);

    /* A drawn event's ramp longer than the event (fuzz-scenario: accepted from the generator,
     * then its written-back events refused: "the ramp down must end by end_h"). */
    {
        struct pfs_scenario *g = malloc(sizeof *g);

        p = test_write(t, 2, "gen.cfg",
                       "scenario = { duration_days = 30.0;\n"
                       "  dr_generator = { per_year = 100.0; duration_h = [4.0, 4.0];\n"
                       "    ramp_min = 300.0; }; };\n");
        pfs_diag_clear(&d);
        CHECK(g != NULL);
        if (g) {
            CHECK_INT(pfs_scenario_load(p, g, &d), PFS_EINVAL);
            CHECK_INT(d.line, 3);
            CHECK_STR(d.field, "scenario.dr_generator.ramp_min");
        }
        free(g);
    }

    /* A predictor coefficient that libconfig reads as infinity (1e999): refused, not
     * carried into every prediction and then written back as "-inf", which libconfig
     * cannot read (fuzz-predictor). */
    {
        FILE *in = fopen("traces/h200-h100/predictor.cfg", "r");
        char *text = NULL, *coef;
        size_t len = 0;
        struct pfs_predictor *pr = NULL;

        CHECK(in != NULL);
        if (in) {
            text = calloc(1, 1 << 16);
            len = text ? fread(text, 1, (1 << 16) - 1, in) : 0;
            fclose(in);
        }
        if (text && len > 0 && (coef = strstr(text, "coef = [")) != NULL) {
            char *comma = strchr(coef, ',');
            char patched[1 << 16];

            snprintf(patched, sizeof patched, "%.*s1e999%s", (int)(coef + 8 - text), text,
                     comma ? comma : "");
            p = test_write(t, 2, "inf.cfg", patched);
            pfs_diag_clear(&d);
            CHECK_INT(pfs_predictor_load(p, &pr, &d), PFS_EINVAL);
            CHECK(strstr(d.message, "not a finite number") != NULL);
            pfs_predictor_free(pr);
        }
        free(text);
    }

    /* A trace job of more GPUs than any job can have (an int overflow downstream). */
    p = test_write(t, 3, "kalos.csv",
                   "submit_offset_s,duration_s,gpu_num\n0,3600,8\n10,60,99999999999\n");
    pfs_diag_clear(&d);
    CHECK_INT(pfs__trace_read_file("kalos", p, &tr, &d), PFS_EINVAL);
    CHECK_INT(d.line, 3);
    CHECK_STR(d.field, "gpu_num");
    pfs_trace_free(tr);
}

/* The size of the file at path, -1 when there is none. */
static long
file_size(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

#define WL_ARGS "workload --arrivals poisson:20 --gpus 1024 --days 2 --seed 3"

void
test_outputs_safe(struct test *t)
{
    char args[1400], path[400], link[400], fifo[400], *out, *err;
    struct stat sb;
    long full;

    /* The reference: the output as a regular file. */
    snprintf(path, sizeof path, "%s/wl.csv", t->tmpdir);
    snprintf(args, sizeof args, WL_ARGS " -o %s", path);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    full = file_size(path);
    CHECK(full > 2000);

    /* A symbolic link is followed: the file it points to is replaced, the link stays
     * (the old FILE.tmp-and-rename replaced the link itself with a file). */
    snprintf(link, sizeof link, "%s/link.csv", t->tmpdir);
    test_write(t, 0, "target.csv", "old\n");
    CHECK(symlink("target.csv", link) == 0);
    snprintf(args, sizeof args, WL_ARGS " -o %s", link);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
    {
        char target[400];

        snprintf(target, sizeof target, "%s/target.csv", t->tmpdir);
        CHECK(test_same_file(target, path));
    }

    /* A link to nothing is refused, not replaced by a file. */
    snprintf(link, sizeof link, "%s/dangling.csv", t->tmpdir);
    CHECK(symlink("no-such-file.csv", link) == 0);
    snprintf(args, sizeof args, WL_ARGS " -o %s", link);
    CHECK_INT(test_run(t, args, &out, &err), 4);
    CHECK(strstr(err, "dangling.csv") && strstr(err, "symbolic link"));
    CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
    free(out);
    free(err);

    /* A FIFO (as a device such as /dev/null) is written in place, never replaced: the
     * reader at its other end gets the whole output. */
    snprintf(fifo, sizeof fifo, "%s/pipe", t->tmpdir);
    CHECK(mkfifo(fifo, 0600) == 0);
    {
        char got[400];

        snprintf(got, sizeof got, "%s/from-pipe.csv", t->tmpdir);
        snprintf(args, sizeof args, WL_ARGS " -o %s & timeout 60 cat %s > %s; wait $!", fifo, fifo,
                 got);
        CHECK_INT(test_run(t, args, &out, &err), 0);
        free(out);
        free(err);
        CHECK(lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode));
        CHECK(test_same_file(got, path));
    }

    /* A directory is refused, naming it. */
    snprintf(args, sizeof args, WL_ARGS " -o %s", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 4);
    CHECK(strstr(err, t->tmpdir) && strstr(err, "is a directory"));
    free(out);
    free(err);

    /* A full disk: exit 4, the message names the file (it said "write error"), the file
     * that was there is as it was, and no temporary file is left. */
    snprintf(args, sizeof args, WL_ARGS " -o %s", path);
    CHECK_INT(test_run_fsize(t, full / 2, args, &out, &err), 4);
    CHECK(strstr(err, path) != NULL);
    CHECK_INT(file_size(path), full);
    CHECK(!test_leftover_tmp(t->tmpdir));
    free(out);
    free(err);

    /* synth into a new folder that cannot be filled: no empty folder left behind. */
    snprintf(path, sizeof path, "%s/corpus", t->tmpdir);
    snprintf(args, sizeof args, "synth --seed 3 -o %s", path);
    CHECK_INT(test_run_fsize(t, 20000, args, &out, &err), 4);
    CHECK(strstr(err, path) != NULL);
    CHECK(access(path, F_OK) != 0);
    free(out);
    free(err);
}

/* alloc --budget-w above what the jobs draw uncapped: pfi, sla and deadline capped jobs
 * anyway, lost throughput against equal, and the gap printed -inf. A budget that binds
 * nothing leaves every job at its reference limit, under every policy. */
void
test_alloc_budget_binds_nothing(struct test *t)
{
    char *out, *err, *line;
    double equal_total = NAN;
    int rows = 0;

    CHECK_INT(test_run(t, "alloc traces/h200-h100/curves.csv --budget-w 1e9 --csv", &out, &err), 0);
    CHECK(strstr(out, "nan") == NULL && strstr(out, "inf") == NULL);
    for (line = strchr(out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char name[64];
        double total, delta;

        if (sscanf(line + 1, "%63[^,],%lf,%*[^,],%lf,", name, &total, &delta) != 3)
            continue;
        if (strcmp(name, "equal") == 0)
            equal_total = total;
        CHECK_NEAR(delta, 0, 1e-9);
        rows++;
    }
    CHECK(rows >= 9 && equal_total > 0);
    free(out);
    free(err);
    CHECK_INT(test_run(t, "alloc traces/h200-h100/curves.csv --budget-w 1e9 --policy pfi --caps",
                       &out, &err),
              0);
    for (line = strchr(out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double cap = NAN;

        CHECK(sscanf(line + 1, "%*[^,],%*d,%lf", &cap) == 1);
        CHECK_NEAR(cap, 700, 1e-9); /* every job of the corpus at the H100/H200 default */
    }
    free(out);
    free(err);
}
