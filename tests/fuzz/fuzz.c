/*
 * tests/fuzz/fuzz.c - libFuzzer harnesses, one per reader (docs/reliability.md).
 *
 * One source, one binary per harness: the Makefile compiles it with -DFUZZ_TARGET=NAME and
 * NAME's entry below becomes LLVMFuzzerTestOneInput. Each harness writes the input to a
 * file (the readers take paths, as pfisim does), reads it, and checks more than "no crash":
 *
 *   - round trip: what a reader accepted and pfisim writes back reads again, to the same
 *     bytes when written a second time (the rows survive the trip);
 *   - finite: no NaN or infinity reaches a written file or a number the simulator uses
 *     (every reader refuses a non-finite number, so a written one fails the round trip;
 *     the numbers read are checked directly);
 *   - a rejected input leaves a diagnostic with a message.
 *
 * A violated property calls abort(), which libFuzzer reports as a crash with its input.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char dir[64], in_path[96], back_path[96];

static void
fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz: property violated: %s\n%s\n", what, detail ? detail : "");
    abort();
}

static void
put(const char *path, const void *data, size_t size)
{
    FILE *fp = fopen(path, "wb");

    if (!fp || fwrite(data, 1, size, fp) != size || fclose(fp) != 0)
        fail("cannot write the input file", path);
}

/* A rejected input must say why. */
static void
rejected(const struct pfs_diag *d)
{
    if (!d->code || !d->message[0])
        fail("an input was rejected without a message", NULL);
}

static void
finite(double v, const char *what)
{
    if (!isfinite(v))
        fail("a non-finite number was read", what);
}

typedef int (*write_fn)(const void *obj, FILE *fp, struct pfs_diag *d);

/* What write_fn writes of obj, as a malloc'd string. */
static char *
text_of(write_fn w, const void *obj)
{
    struct pfs_diag d;
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);

    pfs_diag_clear(&d);
    if (!fp)
        fail("open_memstream", NULL);
    if (w(obj, fp, &d) != 0)
        fail("writing back what was read failed", d.message);
    fclose(fp);
    return text;
}

/* The round trip: first is what pfisim wrote of what it read. Written to a file and read
 * with read_back, it must be accepted, and written again, give the same bytes. */
static void
round_trip(const char *first, char *(*read_back)(const char *path, struct pfs_diag *d))
{
    struct pfs_diag d;
    char *second;

    put(back_path, first, strlen(first));
    pfs_diag_clear(&d);
    if (!(second = read_back(back_path, &d))) {
        fprintf(stderr, "fuzz: %s:%ld: %s: %s\n", d.file, d.line, d.field, d.message);
        fail("pfisim's own output does not read back", first);
    }
    if (strcmp(first, second) != 0) {
        fprintf(stderr, "fuzz: second write:\n%s\n", second);
        fail("written, read and written again, the output changed", first);
    }
    free(second);
}

/* ---- curves.csv, and the importers that fill a curve set ---- */

static int
w_curves(const void *obj, FILE *fp, struct pfs_diag *d)
{
    return pfs_curveset_write(obj, fp, d);
}

static char *
curves_text(const char *path, struct pfs_diag *d)
{
    struct pfs_curveset *cs = NULL;
    char *text;

    if (pfs_curveset_read(path, &cs, d) != 0)
        return NULL;
    text = text_of(w_curves, cs);
    pfs_curveset_free(cs);
    return text;
}

static void
check_curves(const struct pfs_curveset *cs)
{
    for (size_t i = 0; i < cs->n_jobs; i++)
        for (size_t k = 0; k < cs->jobs[i].n_points; k++) {
            finite(cs->jobs[i].cap_w[k], "curve cap_w");
            finite(cs->jobs[i].throughput[k], "curve throughput");
            finite(cs->jobs[i].power_w[k], "curve power_w");
        }
}

static void
fuzz_curves(void)
{
    struct pfs_curveset *cs = NULL;
    struct pfs_diag d;
    char *text;

    pfs_diag_clear(&d);
    if (pfs_curveset_read(in_path, &cs, &d) != 0) {
        rejected(&d);
        return;
    }
    check_curves(cs);
    text = text_of(w_curves, cs);
    pfs_curveset_free(cs);
    round_trip(text, curves_text);
    free(text);
}

static void
fuzz_importer(const char *name)
{
    const struct pfs_importer_ops *imp = pfs_importer_find(name);
    struct pfs_curveset *cs = NULL;
    struct pfs_diag d;
    char *text;

    pfs_diag_clear(&d);
    if (!imp || pfs_curveset_new(&cs) != 0)
        fail("no such importer", name);
    if (imp->read(in_path, "a100-sxm", cs, &d) != 0) {
        rejected(&d);
        pfs_curveset_free(cs);
        return;
    }
    check_curves(cs);
    text = cs->n_jobs ? text_of(w_curves, cs) : NULL;
    pfs_curveset_free(cs);
    if (text)
        round_trip(text, curves_text);
    free(text);
}

static void
fuzz_perseus(void)
{
    fuzz_importer("perseus");
}

static void
fuzz_zeus(void)
{
    fuzz_importer("zeus");
}

static void
fuzz_emerald(void)
{
    fuzz_importer("emerald");
}

/* ---- jobs.csv, and the telemetry importers that make its rows ---- */

static int
w_jobs(const void *obj, FILE *fp, struct pfs_diag *d)
{
    return pfs_jobset_write(obj, fp, d);
}

static char *
jobs_text(const char *path, struct pfs_diag *d)
{
    struct pfs_jobset *js = NULL;
    char *text;

    if (pfs_jobset_read(path, &js, d) != 0)
        return NULL;
    text = text_of(w_jobs, js);
    pfs_jobset_free(js);
    return text;
}

static void
fuzz_jobs(void)
{
    struct pfs_diag d;
    char *text;

    pfs_diag_clear(&d);
    if (!(text = jobs_text(in_path, &d))) {
        rejected(&d);
        return;
    }
    round_trip(text, jobs_text);
    free(text);
}

static void
fuzz_telemetry(const char *name)
{
    const struct pfs_telemetry_ops *imp = pfs_telemetry_find(name);
    struct pfs_corpus_job job;
    struct pfs_jobset js = {.n_jobs = 1, .jobs = &job};
    struct pfs_gpu g;
    struct pfs_diag d;
    char *text;

    pfs_diag_clear(&d);
    if (!imp || pfs_gpu_find("h200-sxm", &g, &d) != 0)
        fail("no such importer", name);
    memset(&job, 0, sizeof job);
    pfs__strlcpy(job.job_id, "fuzz-job", sizeof job.job_id);
    pfs__strlcpy(job.gpu, g.name, sizeof job.gpu);
    if (imp->read(in_path, &g, &job, &d) != 0) {
        rejected(&d);
        return;
    }
    text = text_of(w_jobs, &js);
    round_trip(text, jobs_text);
    free(text);
}

static void
fuzz_nvidia_smi(void)
{
    fuzz_telemetry("nvidia-smi");
}

static void
fuzz_dcgm(void)
{
    fuzz_telemetry("dcgm");
}

/* ---- workload CSV ---- */

static int
w_workload(const void *obj, FILE *fp, struct pfs_diag *d)
{
    return pfs_workload_write(obj, fp, d);
}

static char *
workload_text(const char *path, struct pfs_diag *d)
{
    struct pfs_workload *w = NULL;
    char *text;

    if (pfs_workload_read(path, &w, d) != 0)
        return NULL;
    text = text_of(w_workload, w);
    pfs_workload_free(w);
    return text;
}

static void
fuzz_workload(void)
{
    struct pfs_diag d;
    char *text;

    pfs_diag_clear(&d);
    if (!(text = workload_text(in_path, &d))) {
        rejected(&d);
        return;
    }
    round_trip(text, workload_text);
    free(text);
}

/* ---- the strict CSV reader underneath them all ---- */

static void
fuzz_csv(void)
{
    struct pfs__csv csv;
    struct pfs_diag d;
    int rc;

    pfs_diag_clear(&d);
    if (pfs__csv_open(&csv, in_path, &d) != 0) {
        rejected(&d);
        return;
    }
    while ((rc = pfs__csv_next(&csv)) == 1)
        for (size_t i = 0; i < csv.n_fields; i++)
            if (!csv.fields[i] || csv.columns[i] < 1)
                fail("a field without text or column", NULL);
    pfs__csv_close(&csv);
    if (rc < 0 || rc > 1)
        rejected(&d);
}

/* ---- arrival traces (the kalos layout; the others differ in column names only) ---- */

static void
fuzz_trace(void)
{
    struct pfs_trace *t = NULL;
    struct pfs_diag d;

    pfs_diag_clear(&d);
    if (pfs__trace_read_file("kalos", in_path, &t, &d) != 0) {
        rejected(&d);
        return;
    }
    for (size_t i = 0; i < t->n_jobs; i++) {
        finite(t->jobs[i].submit_s, "trace submit");
        finite(t->jobs[i].duration_s, "trace duration");
        if (t->jobs[i].n_gpus < 1 || (i && t->jobs[i].submit_s < t->jobs[i - 1].submit_s))
            fail("trace job out of order or without GPUs", NULL);
    }
    pfs_trace_free(t);
}

/* ---- grid signals ---- */

static void
fuzz_grid(void)
{
    static const int tops[] = {0, 3};
    struct pfs_dr_event ev[64];
    struct pfs_diag d;

    for (size_t k = 0; k < 2; k++) {
        struct pfs_grid_options o = {.column = "SRP Actual",
                                     .threshold = tops[k] ? 0 : 4.6,
                                     .top_hours = tops[k],
                                     .cut = 0.3,
                                     .ramp_s = 900};
        size_t n = 0;
        double thr = 0;

        pfs_diag_clear(&d);
        if (pfs_grid_events(in_path, &o, ev, 64, &n, &thr, &d) != 0) {
            rejected(&d);
            continue;
        }
        finite(thr, "grid threshold");
        for (size_t i = 0; i < n; i++)
            if (!isfinite(ev[i].start_s) || !isfinite(ev[i].end_s) ||
                !(ev[i].end_s > ev[i].start_s))
                fail("a grid event without a finite, positive span", NULL);
    }
}

/* ---- GPU profiles, scenarios, sweeps, predictors (libconfig) ---- */

static void
fuzz_gpu(void)
{
    struct pfs_gpu g;
    struct pfs_diag d;

    pfs_diag_clear(&d);
    if (pfs_gpu_load(in_path, &g, &d) != 0) {
        rejected(&d);
        return;
    }
    finite(g.idle_w, "gpu idle");
    finite(g.default_limit_w, "gpu default limit");
    if (!(g.min_limit_w <= g.default_limit_w && g.default_limit_w <= g.max_limit_w))
        fail("a GPU profile with its limits out of order", g.name);
}

static int
w_scenario(const void *obj, FILE *fp, struct pfs_diag *d)
{
    (void)d;
    return pfs_scenario_write(obj, fp);
}

static char *
scenario_text(const char *path, struct pfs_diag *d)
{
    static struct pfs_scenario sc; /* large: not on the stack */

    struct pfs_power_tree *tree = NULL;

    if (pfs_scenario_load(path, &sc, d) != 0)
        return NULL;
    /* a tree it accepts expands, or says why not (too many nodes) */
    if (pfs_power_tree_new(&sc, &tree, d) != 0 && d->code != PFS_EINVAL)
        abort();
    pfs_power_tree_free(tree);
    return text_of(w_scenario, &sc);
}

static void
fuzz_scenario(void)
{
    struct pfs_diag d;
    char *text;

    pfs_diag_clear(&d);
    if (!(text = scenario_text(in_path, &d))) {
        rejected(&d);
        return;
    }
    round_trip(text, scenario_text);
    free(text);
}

static void
fuzz_sweep(void)
{
    static struct pfs_scenario sc;
    struct pfs_sweep *sw = NULL;
    struct pfs_diag d;
    size_t n;

    pfs_diag_clear(&d);
    if (pfs_sweep_load(in_path, &sw, &d) != 0) {
        rejected(&d);
        return;
    }
    n = pfs_sweep_n_items(sw);
    for (size_t i = 0; i < n && i < 8; i++) {
        pfs_diag_clear(&d);
        if (pfs_sweep_scenario(sw, i, &sc, &d) != 0)
            rejected(&d);
    }
    pfs_sweep_free(sw);
}

static int
w_predictor(const void *obj, FILE *fp, struct pfs_diag *d)
{
    return pfs_predictor_save(obj, fp, d);
}

static char *
predictor_text(const char *path, struct pfs_diag *d)
{
    struct pfs_predictor *p = NULL;
    char *text;

    if (pfs_predictor_load(path, &p, d) != 0)
        return NULL;
    text = text_of(w_predictor, p);
    pfs_predictor_free(p);
    return text;
}

static void
fuzz_predictor(void)
{
    struct pfs_diag d;
    char *text;

    pfs_diag_clear(&d);
    if (!(text = predictor_text(in_path, &d))) {
        rejected(&d);
        return;
    }
    round_trip(text, predictor_text);
    free(text);
}

/* ---- the JSON reader of the policy protocol (sim/json.c) ---- */

static const uint8_t *in_data; /* the input itself, for readers that take text */
static size_t in_size;

/* The tree written back as JSON: numbers with 17 digits, strings escaped. */
static void
json_write(FILE *fp, const struct pfs__json_doc *doc, const struct pfs__json *v, int depth)
{
    size_t members = 0;

    if (depth > 64)
        fail("json: deeper than the reader allows", NULL);
    switch (v->type) {
    case PFS__JSON_NULL:
        fputs("null", fp);
        break;
    case PFS__JSON_BOOL:
        fputs(v->num > 0 ? "true" : "false", fp);
        break;
    case PFS__JSON_NUMBER:
        finite(v->num, "json number");
        fprintf(fp, "%.17g", v->num);
        break;
    case PFS__JSON_STRING:
    case PFS__JSON_ARRAY:
    case PFS__JSON_OBJECT:
        if (v->type == PFS__JSON_STRING) {
            fputc('"', fp);
            for (const char *c = pfs__json_str(doc, v); *c; c++)
                if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
                    fprintf(fp, "\\u%04x", (unsigned char)*c);
                else
                    fputc(*c, fp);
            fputc('"', fp);
            break;
        }
        fputc(v->type == PFS__JSON_ARRAY ? '[' : '{', fp);
        for (const struct pfs__json *m = pfs__json_first(doc, v); m;
             m = pfs__json_next(doc, m), members++) {
            if (members)
                fputc(',', fp);
            if (v->type == PFS__JSON_OBJECT) {
                if (!pfs__json_key(doc, m))
                    fail("json: an object member without a name", NULL);
                fprintf(fp, "\"%s\":", pfs__json_key(doc, m)); /* names: escaped below */
            } else if (pfs__json_key(doc, m)) {
                fail("json: an array member with a name", NULL);
            }
            json_write(fp, doc, m, depth + 1);
        }
        if (members != v->n)
            fail("json: a member count that is not the members'", NULL);
        fputc(v->type == PFS__JSON_ARRAY ? ']' : '}', fp);
        break;
    default:
        fail("json: a value of no type", NULL);
    }
}

static char *
json_text(const struct pfs__json_doc *doc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);

    if (!fp)
        fail("open_memstream", NULL);
    json_write(fp, doc, doc->root, 0);
    fclose(fp);
    return text;
}

static void
fuzz_json(void)
{
    struct pfs__json_doc doc, again;
    const char *why = NULL;
    size_t at = 0;
    char *text, *text2;

    if (pfs__json_parse((const char *)in_data, in_size, &doc, &at, &why) != 0) {
        if (!why || at > in_size)
            fail("json: rejected without a reason or past the end", why);
        return;
    }
    /* Member names go out unescaped: a name the writer cannot write plainly is skipped. */
    for (size_t i = 0; i < doc.n; i++) {
        const char *k = pfs__json_key(&doc, &doc.pool[i]);

        for (; k && *k; k++)
            if (*k == '"' || *k == '\\' || (unsigned char)*k < 0x20) {
                pfs__json_free(&doc);
                return;
            }
    }
    text = json_text(&doc);
    if (pfs__json_parse(text, strlen(text), &again, &at, &why) != 0)
        fail("json: what was read, written back, does not read", text);
    text2 = json_text(&again);
    if (strcmp(text, text2) != 0)
        fail("json: the round trip changed the value", text);
    free(text);
    free(text2);
    pfs__json_free(&doc);
    pfs__json_free(&again);
}

/* ---- the external-process protocol's answers (policies/exec.c) ---- */

/* Three jobs of another program's view, as pfisim sends them; the budget binds. */
static const struct pfs_alloc_job answer_jobs[3] = {
    {.n_gpus = 8, .min_w = 200, .max_w = 700, .ref_w = 700, .idle_w = 75, .job_id = "a"},
    {.n_gpus = 1, .min_w = 100, .max_w = 400, .ref_w = 350, .idle_w = 50, .job_id = "b"},
    {.n_gpus = 4, .min_w = 200, .max_w = 1000, .ref_w = 1000, .idle_w = 90, .job_id = "c"},
};

/* The input as a handshake and as the answer to decision 1, with and without pausing
 * allowed. What is accepted must be what the protocol promises: a name of 1 to 31 bytes;
 * every cap finite within its job's limits, every pause in [0, 1] (none where may_pause is
 * false), the power within the budget. A refusal must say why. */
static void
fuzz_exec_answer(void)
{
    const struct pfs_alloc_view v = {.budget_w = 6000, .n_jobs = 3, .jobs = answer_jobs};
    struct pfs__json_doc doc;
    struct pfs__exec_hello h;
    const char *jwhy = NULL;
    char why[240];
    size_t at = 0;

    if (pfs__json_parse((const char *)in_data, in_size, &doc, &at, &jwhy) != 0)
        return; /* (the JSON reader is the json harness's) */
    why[0] = '\0';
    if (pfs__exec_hello(&doc, &h, why, sizeof why) == 0) {
        if (!h.name[0] || strlen(h.name) > 31 || strlen(h.summary) >= sizeof h.summary)
            fail("exec: a handshake accepted with a bad name", h.name);
    } else if (!why[0]) {
        fail("exec: a handshake refused without a reason", NULL);
    }
    for (int may_pause = 0; may_pause < 2; may_pause++) {
        struct pfs_alloc_decision out[3];
        double total = 0;
        int r;

        for (size_t i = 0; i < 3; i++)
            out[i] = (struct pfs_alloc_decision){.cap_w = answer_jobs[i].max_w};
        why[0] = '\0';
        r = pfs__exec_answer(&doc, 1, may_pause, &v, out, why, sizeof why);
        if (r != 0) {
            if (!why[0] || (r != 1 && r != -1))
                fail("exec: an answer refused without a reason", why);
            continue;
        }
        for (size_t i = 0; i < 3; i++) {
            const struct pfs_alloc_job *j = &answer_jobs[i];

            finite(out[i].cap_w, "exec: cap_w");
            finite(out[i].pause_frac, "exec: pause_frac");
            if (!(out[i].cap_w >= j->min_w * (1 - 1e-12) && out[i].cap_w <= j->max_w * (1 + 1e-12)))
                fail("exec: a cap outside its job's limits accepted", NULL);
            if (!(out[i].pause_frac >= 0 && out[i].pause_frac <= 1) ||
                (!may_pause && out[i].pause_frac > 0))
                fail("exec: a pause accepted that the protocol forbids", NULL);
            total += pfs_alloc_power_w(j, &out[i]);
        }
        if (total > v.budget_w * (1 + 1e-9))
            fail("exec: an answer over the budget accepted", NULL);
    }
    pfs__json_free(&doc);
}

/* ---- a results database as merge, price and report read it (sim/store.c, storecheck.c) ---- */

static char db_template[128], db_path[128], db_merged[128], db_report[128];
static unsigned char *template_bytes;
static size_t template_size;

/* The template: one short run of the default scenario, made by the library as pfisim run
 * --db makes one, read into memory once. */
static void
make_template(void)
{
    struct pfs_scenario *sc = malloc(sizeof *sc);
    struct pfs_sim_inputs *in = NULL;
    struct pfs_run_result r;
    struct pfs_timeseries ts = {0};
    struct pfs_job_results jobs = {0};
    struct pfs_store *st = NULL;
    struct pfs_diag d;
    FILE *fp;

    pfs_diag_clear(&d);
    if (!sc)
        fail("out of memory", NULL);
    pfs_scenario_default(sc);
    pfs_scenario_set_days(sc, 0.05);
    if (pfs_sim_inputs_new(sc, &in, &d) || pfs_sim_run(sc, in, "equal", &r, &ts, &jobs, &d) ||
        pfs_store_create(db_template, &st, &d) ||
        pfs_store_write_run(st, sc, in, &r, &ts, &jobs, &d) || pfs_store_finish(st, &d))
        fail("results_db: cannot make the template database", d.message);
    pfs_store_close(st);
    pfs_timeseries_free(&ts);
    pfs_job_results_free(&jobs);
    pfs_sim_inputs_free(in);
    free(sc);
    if (!(fp = fopen(db_template, "rb")) || fseek(fp, 0, SEEK_END) != 0 ||
        (template_size = (size_t)ftell(fp)) == 0 || fseek(fp, 0, SEEK_SET) != 0 ||
        !(template_bytes = malloc(template_size)) ||
        fread(template_bytes, 1, template_size, fp) != template_size)
        fail("results_db: cannot read the template database", db_template);
    fclose(fp);
}

/* The SQL-level changes: the input read as records of 12 bytes, each an update of one value
 * of one row (table, column, rowid, then a value of the kind its low bits choose: an integer,
 * any double's bits, infinity, text, NULL, a blob) or a row's deletion (orphans its
 * children), bound as parameters. */
static void
sql_changes(const char *path)
{
    static const struct {
        const char *table, *cols[8];
    } t[] = {
        {"summary",
         {"tokens", "gap_recovered", "jobs_started", "dr_events", "cap_w", "gap_note",
          "dr_cost_frac", "events"}},
        {"job_result",
         {"tier", "n_gpus", "start_s", "finish_s", "tokens_done", "duration_s", "deadline_s",
          "run_id"}},
        {"timeseries",
         {"t_s", "facility_w", "budget_w", "running_jobs", "throughput", "gpu_w", "paused_jobs",
          "run_id"}},
        {"run", {"policy", "seed", "scenario_id", "version", "id", "policy", "seed", "id"}},
        {"scenario", {"config", "name", "hash", "inputs", "id", "config", "name", "hash"}},
        {"pool_result",
         {"tokens", "energy_j", "jobs_started", "pool", "gpu", "run_id", "busy_gpu_h",
          "jobs_finished"}},
    };
    sqlite3 *db = NULL;

    if (sqlite3_open(path, &db) != SQLITE_OK) {
        sqlite3_close(db);
        return;
    }
    for (size_t at = 1; at + 12 <= in_size; at += 12) {
        const uint8_t *r = in_data + at;
        size_t ti = r[0] % (sizeof t / sizeof t[0]);
        const char *col = t[ti].cols[r[1] % 8];
        long long rowid = r[2] % 64;
        uint64_t bits;
        char sql[160];
        sqlite3_stmt *q = NULL;

        memcpy(&bits, r + 4, 8);
        if (r[3] % 8 == 7)
            snprintf(sql, sizeof sql, "DELETE FROM %s WHERE rowid = ?2", t[ti].table);
        else
            snprintf(sql, sizeof sql, "UPDATE %s SET %s = ?1 WHERE rowid = ?2", t[ti].table, col);
        if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) {
            double x;

            switch (r[3] % 8) {
            case 0:
                sqlite3_bind_int64(q, 1, (sqlite3_int64)bits);
                break;
            case 1:
                memcpy(&x, &bits, sizeof x);
                sqlite3_bind_double(q, 1, x);
                break;
            case 2:
                sqlite3_bind_double(q, 1, (bits & 1) ? -HUGE_VAL : HUGE_VAL);
                break;
            case 3:
                sqlite3_bind_text(q, 1, (const char *)r + 4, 8, SQLITE_TRANSIENT);
                break;
            case 4:
                sqlite3_bind_null(q, 1);
                break;
            case 5:
                sqlite3_bind_blob(q, 1, r + 4, 8, SQLITE_TRANSIENT);
                break;
            case 6:
                sqlite3_bind_int64(q, 1, (sqlite3_int64)(int8_t)r[4]);
                break;
            default:
                break;
            }
            sqlite3_bind_int64(q, 2, rowid);
            (void)sqlite3_step(q); /* (a constraint may refuse it: the file is as it is) */
        }
        sqlite3_finalize(q);
    }
    sqlite3_close(db);
}

/* The input's first byte chooses: even, the rest are SQL-level changes (sql_changes); odd,
 * the rest are corrupted bytes, pairs of a 2-byte page-scaled offset and a byte XORed into
 * the template's file there. Then the database is read as price, merge and (where its bits 1
 * and 2 are set) report read it:
 * each accepts it or refuses it with a message; what price accepts has no infinite number
 * (an undefined one is NAN, printed "-"), and what merge accepts reads back. */
static void
fuzz_results_db(void)
{
    unsigned char *bytes;
    struct pfs_price_run *runs = NULL;
    struct pfs_store *st = NULL;
    struct pfs_diag d;
    size_t n = 0;
    int rc;

    if (in_size < 1)
        return;
    if (!(bytes = malloc(template_size)))
        fail("out of memory", NULL);
    memcpy(bytes, template_bytes, template_size);
    if (in_data[0] & 1)
        for (size_t at = 1; at + 3 <= in_size; at += 3) {
            size_t off = ((size_t)in_data[at] | (size_t)in_data[at + 1] << 8) *
                         (template_size / 65536 + 1) % template_size;

            bytes[off] ^= in_data[at + 2];
        }
    remove(db_path);
    put(db_path, bytes, template_size);
    free(bytes);
    if (!(in_data[0] & 1))
        sql_changes(db_path);

    pfs_diag_clear(&d);
    if ((rc = pfs_price_db(db_path, &runs, &n, &d)) != 0) {
        rejected(&d);
    } else {
        for (size_t i = 0; i < n; i++) {
            const struct pfs_price_run *p = &runs[i];
            const double v[] = {
                p->days,          p->capacity_w,  p->event_hours,     p->committed_kw,
                p->committed_mwh, p->rev_compute, p->rev_dr_capacity, p->rev_dr_energy,
                p->rev_with,      p->rev_without};

            for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
                if (isinf(v[k]))
                    fail("results_db: price gave an infinite number", p->policy);
            for (int t = 0; t < PFS_N_TIERS; t++)
                if (isinf(p->tier[t].delivered) || isinf(p->tier[t].discount) ||
                    isinf(p->tier[t].gpu_hours) || isinf(p->tier[t].work_hours))
                    fail("results_db: price gave an infinite number", p->policy);
        }
        free(runs);
    }

    remove(db_merged);
    pfs_diag_clear(&d);
    if (pfs_store_create(db_merged, &st, &d) != 0)
        fail("results_db: cannot make the merged database", d.message);
    if ((rc = pfs_store_merge(st, db_path, &d)) == 0)
        rc = pfs_store_finish(st, &d);
    pfs_store_close(st);
    if (rc != 0) {
        rejected(&d);
    } else {
        struct pfs_store *back = NULL;

        pfs_diag_clear(&d);
        if (pfs_store_open_read(db_merged, &back, &d) != 0)
            fail("results_db: what merge accepted does not read back", d.message);
        pfs_store_close(back);
    }

    /* the report on a quarter of the inputs: it draws every figure, 15 times price's time */
    if ((in_data[0] & 6) == 6) {
        remove(db_report);
        pfs_diag_clear(&d);
        if (pfs_report_db(db_path, db_report, &d) != 0)
            rejected(&d);
    }
}

/* ---- the entry points ---- */

#define STR_(x) #x
#define STR(x)  STR_(x)

static const struct {
    const char *name;
    void (*fn)(void);
} targets[] = {
    {"csv", fuzz_csv},
    {"curves", fuzz_curves},
    {"jobs", fuzz_jobs},
    {"workload", fuzz_workload},
    {"trace", fuzz_trace},
    {"nvidia_smi", fuzz_nvidia_smi},
    {"dcgm", fuzz_dcgm},
    {"perseus", fuzz_perseus},
    {"zeus", fuzz_zeus},
    {"emerald", fuzz_emerald},
    {"grid", fuzz_grid},
    {"gpu", fuzz_gpu},
    {"scenario", fuzz_scenario},
    {"sweep", fuzz_sweep},
    {"predictor", fuzz_predictor},
    {"json", fuzz_json},
    {"exec_answer", fuzz_exec_answer},
    {"results_db", fuzz_results_db},
};
static void (*target)(void);

static void
clean_up(void)
{
    static const char *const sidecars[] = {"", "-wal", "-shm", "-journal"};
    const char *dbs[] = {db_template, db_path, db_merged};
    char p[160];

    remove(in_path);
    remove(back_path);
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; dbs[k][0] && i < 4; i++) {
            snprintf(p, sizeof p, "%s%s", dbs[k], sidecars[i]);
            remove(p);
        }
    if (db_report[0])
        remove(db_report);
    free(template_bytes);
    rmdir(dir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* (in memory where there is a tmpfs: the database harness flushes what merge writes) */
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        if (strcmp(targets[i].name, STR(FUZZ_TARGET)) == 0)
            target = targets[i].fn;
    snprintf(dir, sizeof dir, "%s/pfisim-fuzz-XXXXXX",
             target == fuzz_results_db && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!mkdtemp(dir))
        fail("mkdtemp", NULL);
    snprintf(in_path, sizeof in_path, "%s/input", dir);
    snprintf(back_path, sizeof back_path, "%s/written", dir);
    atexit(clean_up);
    if (!target)
        fail("no such harness", STR(FUZZ_TARGET));
    if (target == fuzz_results_db) {
        snprintf(db_template, sizeof db_template, "%s/template.db", dir);
        snprintf(db_path, sizeof db_path, "%s/input.db", dir);
        snprintf(db_merged, sizeof db_merged, "%s/merged.db", dir);
        snprintf(db_report, sizeof db_report, "%s/report.pdf", dir);
        make_template();
    }
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!target)
        LLVMFuzzerInitialize(NULL, NULL);
    put(in_path, data, size);
    in_data = data;
    in_size = size;
    target();
    return 0;
}
