/*
 * tests/test_sweep.c - sweeps (docs/sweeps.md): the same database for any -j, shards merged
 * equal to the whole, an interrupted sweep resumed without duplicates or gaps, bad sweeps and
 * shard specs refused; the DR event generator against its own specification.
 */
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "test.h"

/* 2 GPU counts x 2 DR frequencies x 2 seeds = 8 points, 3 policies: 24 runs of a day. The
 * generator's warm-up is off so that a day can hold a drawn event. */
#define SWEEP_TEXT(gpus, days)                                                                     \
    "sweep = {\n"                                                                                  \
    "    name = \"test\";\n"                                                                       \
    "    axes = (\n"                                                                               \
    "        { setting = \"facility.gpus\"; values = " gpus "; },\n"                               \
    "        { setting = \"duration_days\"; values = " days "; },\n"                               \
    "        { setting = \"dr_generator.per_year\"; values = [0, 365]; },\n"                       \
    "        { setting = \"dr_generator.warmup_h\"; values = [0.0]; },\n"                          \
    "        { setting = \"seed\"; values = [1, 2]; },\n"                                          \
    "        { setting = \"policy\"; values = [\"equal\", \"pfi\", \"oracle\"]; }\n"               \
    "    );\n"                                                                                     \
    "};\n"
static const char sweep_text[] = SWEEP_TEXT("[256, 320]", "[1.0]");

/* Every result row, keyed by content (scenario hash, policy, seed), not by row ids. */
static char *
dump(const char *path)
{
    static const char *const tables[] = {
        "SELECT s.hash, s.config, r.policy, r.seed, r.version, m.* FROM summary m "
        "JOIN run r ON r.id = m.run_id JOIN scenario s ON s.id = r.scenario_id "
        "ORDER BY s.hash, r.policy, r.seed",
        "SELECT s.hash, r.policy, r.seed, j.* FROM job_result j JOIN run r ON r.id = j.run_id "
        "JOIN scenario s ON s.id = r.scenario_id ORDER BY s.hash, r.policy, r.seed, j.job_id",
        "SELECT s.hash, c.* FROM curve c JOIN scenario s ON s.id = c.scenario_id "
        "ORDER BY s.hash, c.curve_id",
        "SELECT s.hash, p.* FROM curve_point p JOIN scenario s ON s.id = p.scenario_id "
        "ORDER BY s.hash, p.curve_id, p.cap_w",
        "SELECT count(*) FROM timeseries"};
    sqlite3 *db = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);

    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        fclose(fp);
        free(text);
        return NULL;
    }
    for (size_t k = 0; fp && k < sizeof tables / sizeof tables[0]; k++) {
        sqlite3_stmt *q = NULL;

        if (sqlite3_prepare_v2(db, tables[k], -1, &q, NULL) != SQLITE_OK) {
            fprintf(fp, "error %s\n", sqlite3_errmsg(db));
            continue;
        }
        while (sqlite3_step(q) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(q); c++) {
                const char *name = sqlite3_column_name(q, c);
                const unsigned char *v = sqlite3_column_text(q, c);

                if (strcmp(name, "run_id") != 0 && strcmp(name, "scenario_id") != 0)
                    fprintf(fp, "|%s", v ? (const char *)v : "NULL");
            }
            fputc('\n', fp);
        }
        sqlite3_finalize(q);
    }
    sqlite3_close(db);
    fclose(fp);
    return text;
}

static int sh(struct test *t, const char *fmt, ...) PFS__PRINTF(2, 3);

/* Runs pfisim with the formatted arguments; says what went wrong when it fails. */
static int
sh(struct test *t, const char *fmt, ...)
{
    char cmd[2048];
    char *out = NULL, *err = NULL;
    va_list ap;
    int rc;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    rc = test_run(t, cmd, &out, &err);
    if (rc != 0)
        fprintf(stderr, "  pfisim %s: exit %d\n%s%s", cmd, rc, out ? out : "", err ? err : "");
    free(out);
    free(err);
    return rc;
}

void
test_sweep_jobs_same_db(struct test *t)
{
    const char *cfg = test_write(t, 0, "sweep.cfg", sweep_text);
    char a[512], b[512], *da, *db;

    /* The same file name in two directories: the study is named after the file. */
    snprintf(a, sizeof a, "%s/j1/s.db", t->tmpdir);
    snprintf(b, sizeof b, "%s/j2/s.db", t->tmpdir);
    CHECK_INT(sh(t, "sweep %s --db %s -j 1 >/dev/null", cfg, a), 0);
    CHECK_INT(sh(t, "sweep %s --db %s -j 2 >/dev/null", cfg, b), 0);
    da = dump(a);
    db = dump(b);
    CHECK(da && db && strlen(da) > 1000);
    CHECK(da && db && strcmp(da, db) == 0);
    /* Written in sweep order by one thread: the very same bytes. */
    CHECK(test_same_file(a, b));
    {
        sqlite3 *h = NULL;

        sqlite3_open_v2(a, &h, SQLITE_OPEN_READONLY, NULL);
        CHECK_INT(test_query_long(h, "SELECT count(*) FROM run"), 24);
        /* The seed keys runs, not scenarios: 4 scenarios. */
        CHECK_INT(test_query_long(h, "SELECT count(*) FROM scenario"), 4);
        /* 365 events a year over a day: one drawn event in each of the two such scenarios. */
        CHECK_INT(test_query_long(h, "SELECT count(*) FROM scenario WHERE config LIKE "
                                     "'%notice_min = 1440.0; baseline = \"instant\"; cut%'"),
                  2);
        /* Without an event nothing is capped: equal = oracle, no gap (NULL, and why). */
        CHECK_INT(test_query_long(h, "SELECT count(*) FROM summary m JOIN run r ON r.id = "
                                     "m.run_id JOIN scenario s ON s.id = r.scenario_id WHERE "
                                     "s.config NOT LIKE '%notice_min%' AND m.gap_recovered IS "
                                     "NULL AND m.gap_note = 'oracle +0% against equal: no gap "
                                     "to recover'"),
                  12);
        /* With one 3-hour event in a day the oracle gains little over equal: a gap is defined
         * exactly where it gains more than 0.1% of equal's tokens (pfs_gap_recovered), worked
         * out here from the stored tokens; where defined, equal scores 0 and the oracle 1. */
        CHECK_INT(test_query_long(h, "SELECT count(*) FROM summary m JOIN run r ON r.id = "
                                     "m.run_id JOIN run re ON re.scenario_id = r.scenario_id AND "
                                     "re.seed = r.seed AND re.policy = 'equal' JOIN summary e ON "
                                     "e.run_id = re.id JOIN run ro ON ro.scenario_id = "
                                     "r.scenario_id AND ro.seed = r.seed AND ro.policy = 'oracle' "
                                     "JOIN summary o ON o.run_id = ro.id WHERE (o.tokens - "
                                     "e.tokens > 0.001 * e.tokens) = (m.gap_recovered IS NOT "
                                     "NULL)"),
                  24);
        CHECK_INT(test_query_long(h, "SELECT count(*) FROM summary m JOIN run r ON r.id = "
                                     "m.run_id WHERE m.gap_recovered IS NOT NULL AND NOT "
                                     "((r.policy = 'equal' AND m.gap_recovered = 0) OR (r.policy "
                                     "= 'oracle' AND m.gap_recovered = 1) OR r.policy = 'pfi')"),
                  0);
        sqlite3_close(h);
    }
    free(da);
    free(db);
}

void
test_sweep_shards_merge(struct test *t)
{
    const char *cfg = test_write(t, 0, "sweep.cfg", sweep_text);
    char whole[512], merged[512], shard[4][512], *dw, *dm;

    snprintf(whole, sizeof whole, "%s/whole.db", t->tmpdir);
    snprintf(merged, sizeof merged, "%s/merged.db", t->tmpdir);
    CHECK_INT(sh(t, "sweep %s --db %s >/dev/null", cfg, whole), 0);
    for (int k = 0; k < 4; k++) {
        snprintf(shard[k], sizeof shard[k], "%s/shard-%d.db", t->tmpdir, k);
        CHECK_INT(sh(t, "sweep %s --shard %d/4 --db %s >/dev/null", cfg, k, shard[k]), 0);
    }
    CHECK_INT(
        sh(t, "merge %s %s %s %s %s >/dev/null", merged, shard[0], shard[1], shard[2], shard[3]),
        0);
    dw = dump(whole);
    dm = dump(merged);
    CHECK(dw && dm && strlen(dw) > 1000);
    CHECK(dw && dm && strcmp(dw, dm) == 0);
    /* Merging a shard again replaces its runs: still 24, nothing doubled. */
    CHECK_INT(sh(t, "merge %s %s >/dev/null", merged, shard[2]), 0);
    free(dm);
    dm = dump(merged);
    CHECK(dw && dm && strcmp(dw, dm) == 0);
    free(dw);
    free(dm);
}

void
test_sweep_resume(struct test *t)
{
    const char *cfg = test_write(t, 0, "sweep.cfg", sweep_text);
    char whole[512], part[512], *dw, *dp;
    char *out = NULL, *err = NULL;
    sqlite3 *h = NULL;
    char cmd[1024];

    snprintf(whole, sizeof whole, "%s/whole.db", t->tmpdir);
    snprintf(part, sizeof part, "%s/part.db", t->tmpdir);
    CHECK_INT(sh(t, "sweep %s --db %s >/dev/null", cfg, whole), 0);
    /* A run is one transaction, so a sweep stopped anywhere leaves the runs written before
     * the stop: the same as the whole sweep with its last runs removed. Stop after 10. */
    CHECK_INT(sh(t, "sweep %s --db %s >/dev/null", cfg, part), 0);
    sqlite3_open(part, &h);
    sqlite3_exec(h, "PRAGMA foreign_keys = ON; DELETE FROM run WHERE id > 10;", NULL, NULL, NULL);
    CHECK_INT(test_query_long(h, "SELECT count(*) FROM run"), 10);
    sqlite3_close(h);
    snprintf(cmd, sizeof cmd, "sweep %s --db %s --resume", cfg, part);
    CHECK_INT(test_run(t, cmd, &out, &err), 0);
    CHECK(out && strstr(out, "14 runs done, 10 skipped"));
    free(out);
    free(err);
    dw = dump(whole);
    dp = dump(part);
    CHECK(dw && dp && strcmp(dw, dp) == 0);
    free(dp);
    /* Killed after a point's runs were committed but before its gaps were filled (the
     * gap columns still NULL): --resume skips every run and still fills them in. */
    sqlite3_open(part, &h);
    sqlite3_exec(h, "UPDATE summary SET gap_recovered = NULL, gap_note = NULL", NULL, NULL, NULL);
    CHECK_INT(test_query_long(h, "SELECT count(*) FROM summary WHERE gap_recovered IS NOT NULL"),
              0);
    sqlite3_close(h);
    snprintf(cmd, sizeof cmd, "sweep %s --db %s --resume", cfg, part);
    CHECK_INT(test_run(t, cmd, &out, &err), 0);
    CHECK(out && strstr(out, "0 runs done, 24 skipped"));
    free(out);
    free(err);
    dp = dump(part);
    CHECK(dw && dp && strcmp(dw, dp) == 0);
    free(dp);
    free(dw);
    /* And a sweep really killed midway (wherever it is), then resumed: the same rows as the
     * whole. Seven days on 1,024 and 2,048 GPUs, so that the kill lands while it runs. */
    {
        const char *bin =
            getenv("PFISIM_BIN") && *getenv("PFISIM_BIN") ? getenv("PFISIM_BIN") : "build/pfisim";
        cfg = test_write(t, 1, "longer.cfg", SWEEP_TEXT("[1024, 2048]", "[7.0]"));
        CHECK_INT(sh(t, "sweep %s --db %s/whole7.db >/dev/null", cfg, t->tmpdir), 0);
        snprintf(cmd, sizeof cmd,
                 "sweep %s --db %s/killed.db -j 2 >/dev/null & p=$!; sleep 0.4; kill -9 $p "
                 "2>/dev/null; wait $p; %s sweep %s --db %s/killed.db --resume",
                 cfg, t->tmpdir, bin, cfg, t->tmpdir);
        out = err = NULL;
        CHECK_INT(test_run(t, cmd, &out, &err), 0);
        if (out)
            fprintf(stderr, "  after the kill: %s", out);
        free(out);
        free(err);
        snprintf(whole, sizeof whole, "%s/whole7.db", t->tmpdir);
        snprintf(part, sizeof part, "%s/killed.db", t->tmpdir);
        dw = dump(whole);
        dp = dump(part);
        CHECK(dw && dp && strlen(dw) > 1000 && strcmp(dw, dp) == 0);
    }
    free(dw);
    free(dp);
}

/* The command's exit status and whether its stderr holds needle. */
static void
expect_exit(struct test *t, const char *args, int code, const char *needle)
{
    char *out = NULL, *err = NULL;
    int rc = test_run(t, args, &out, &err);

    if (rc != code || !err || !strstr(err, needle))
        test_fail(t, __FILE__, __LINE__, "pfisim %s: exit %d, stderr '%s', expected %d and '%s'",
                  args, rc, err ? err : "", code, needle);
    free(out);
    free(err);
}

static void
expect_error(struct test *t, const char *args, const char *needle)
{
    expect_exit(t, args, 3, needle);
}

/* A sweep that stores its time series (each run's minutes spilled to a temporary file as
 * made, then read back into the database at the point's turn): every minute of every run,
 * the same bytes at -j 1 and -j 2. */
void
test_sweep_timeseries(struct test *t)
{
    const char *cfg =
        test_write(t, 0, "ts.cfg",
                   "sweep = { name = \"ts\"; timeseries = true; axes = (\n"
                   "  { setting = \"facility.gpus\"; values = [256, 320]; },\n"
                   "  { setting = \"duration_days\"; values = [1.3]; },\n"
                   "  { setting = \"policy\"; values = [\"equal\", \"pfi\"]; } ); };\n");
    char a[512], b[512];
    sqlite3 *h = NULL;

    snprintf(a, sizeof a, "%s/j1/s.db", t->tmpdir);
    snprintf(b, sizeof b, "%s/j2/s.db", t->tmpdir);
    CHECK_INT(sh(t, "sweep %s --db %s -j 1 >/dev/null", cfg, a), 0);
    CHECK_INT(sh(t, "sweep %s --db %s -j 2 >/dev/null", cfg, b), 0);
    CHECK(test_same_file(a, b));
    CHECK(sqlite3_open_v2(a, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_INT(test_query_long(h, "SELECT count(*) FROM timeseries"), 4 * 1872); /* 1.3 days */
    CHECK_INT(test_query_long(h, "SELECT count(DISTINCT run_id) FROM timeseries"), 4);
    sqlite3_close(h);
}

/* A point that fails when simulated (a cap below the facility's idle draw, found only when
 * its inputs are made) stops the sweep with its message, whatever -j: the points before it
 * in sweep order are stored, none after it, and no thread is left waiting for a point no
 * one will write (the threads take turns at writing, in sweep order). */
/* The scenario text of the default scenario under name (malloc'd). */
static char *
named_text(const char *name)
{
    struct pfs_scenario *sc = malloc(sizeof *sc);
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);

    if (sc && fp) {
        pfs_scenario_default(sc);
        pfs__strlcpy(sc->name, name, sizeof sc->name);
        pfs_scenario_write(sc, fp);
    }
    if (fp)
        fclose(fp);
    free(sc);
    return text;
}

/* Two scenario texts that differ and share a hash (bf9fef3): points are sorted by hash, and
 * a point checked only against the one before it in that order missed the same scenario
 * twice with a text of the other kind between ([X, Y, X] below), running it twice. The two
 * names are a 64-bit FNV-1a collision of the texts' first bytes, found by
 * tests/tools/fnv_collide.c (about 6e9 steps, 90 s on two cores); the texts agree after the
 * name, so their hashes are the same whatever follows. */
void
test_sweep_hash_collision(struct test *t)
{
    static const char x[] = "d5f23a5ed36fd4ee", y[] = "2e9f53557ee35fb5";
    char *tx = named_text(x), *ty = named_text(y), args[1024], cfg[256];
    const char *p;

    CHECK(tx && ty);
    if (!tx || !ty) {
        free(tx);
        free(ty);
        return;
    }
    /* (a change to how a scenario is written ahead of its name ends the collision: find a
     * new pair with fnv_collide, given the text before the name) */
    CHECK(strcmp(tx, ty) != 0);
    CHECK(pfs__fnv1a_str(PFS__FNV_OFFSET, tx) == pfs__fnv1a_str(PFS__FNV_OFFSET, ty));
    free(tx);
    free(ty);
    /* Two names of one hash are two scenarios: both run. */
    snprintf(
        cfg, sizeof cfg,
        "sweep = {\n axes = (\n { setting = \"name\";\n   values = [\"%s\", \"%s\"]; } ); };\n", x,
        y);
    p = test_write(t, 0, "two.cfg", cfg);
    snprintf(args, sizeof args, "sweep %s --list", p);
    {
        char *out = NULL, *err = NULL;
        int rc = test_run(t, args, &out, &err);

        CHECK_INT(rc, 0);
        CHECK(out && strstr(out, x) && strstr(out, y));
        free(out);
        free(err);
    }
    /* The first again, after the second: the same scenario as value [0]. */
    snprintf(cfg, sizeof cfg,
             "sweep = {\n axes = (\n { setting = \"name\";\n   values = [\"%s\", \"%s\", "
             "\"%s\"]; } ); };\n",
             x, y, x);
    p = test_write(t, 0, "three.cfg", cfg);
    snprintf(args, sizeof args, "sweep %s --list", p);
    expect_error(t, args,
                 "three.cfg:3: error: sweep.axes.[0].values.[2] (name = ...): the same scenario "
                 "as value [0]");
}

void
test_sweep_point_fails(struct test *t)
{
    const char *cfg =
        test_write(t, 0, "fails.cfg",
                   "sweep = { name = \"fails\"; axes = (\n"
                   "  { setting = \"facility.gpus\"; values = [64, 80, 96]; },\n"
                   "  { setting = \"facility.cap_w\"; values = [1.0e7, 10.0]; },\n"
                   "  { setting = \"duration_days\"; values = [0.5]; },\n"
                   "  { setting = \"policy\"; values = [\"equal\", \"pfi\"]; } ); };\n");

    for (int j = 1; j <= 3; j++) {
        char args[1024], db[512];
        sqlite3 *h = NULL;

        snprintf(db, sizeof db, "%s/f%d.db", t->tmpdir, j);
        snprintf(args, sizeof args, "sweep %s --db %s -j %d", cfg, db, j);
        expect_error(t, args, "scenario.facility.cap_w: 10 W is below the facility's idle draw");
        CHECK(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
        /* point 0 (64 GPUs, 10 MW) only: point 1 (64 GPUs, 10 W) fails */
        CHECK_INT(test_query_long(h, "SELECT count(*) FROM run"), 2);
        CHECK_INT(test_query_long(h, "SELECT count(*) FROM summary"), 2);
        CHECK_INT(test_query_long(h, "SELECT count(*) FROM scenario WHERE config LIKE "
                                     "'%gpus = 64;%'"),
                  1);
        sqlite3_close(h);
    }
}

void
test_sweep_bad_input(struct test *t)
{
    char args[1024], db[512];
    sqlite3 *h = NULL;
    const char *p;

    p = test_write(t, 0, "unknown.cfg",
                   "sweep = { axes = ( { setting = \"facility.gpux\"; values = [1, 2]; } ); };\n");
    snprintf(args, sizeof args, "sweep %s --db %s/x.db", p, t->tmpdir);
    expect_error(t, args,
                 "unknown.cfg:1: error: sweep.axes.[0].values.[0] (facility.gpux = ...): "
                 "scenario.facility.gpux: unknown setting");
    p = test_write(t, 0, "range.cfg",
                   "sweep = {\n axes = (\n { setting = \"facility.pue\"; values = [1.2, 9.0]; }"
                   " ); };\n");
    snprintf(args, sizeof args, "sweep %s", p);
    expect_error(t, args, "range.cfg:3: error: sweep.axes.[0].values.[1]");
    p = test_write(t, 0, "empty.cfg",
                   "sweep = {\n axes = (\n { setting = \"facility.gpus\"; values = [ ]; } ); };\n");
    snprintf(args, sizeof args, "sweep %s", p);
    expect_error(t, args, "empty.cfg:3: error: sweep.axes.[0]: empty axis");
    p = test_write(t, 0, "policy.cfg",
                   "sweep = { axes = ( { setting = \"policy\"; values = [\"fastest\"]; } ); };\n");
    snprintf(args, sizeof args, "sweep %s", p);
    expect_error(t, args, "unknown policy 'fastest'");
    /* A policy named twice would run twice, the second run's rows replacing the first's. */
    p = test_write(t, 0, "twice.cfg",
                   "sweep = {\n axes = (\n { setting = \"policy\";\n"
                   "   values = [\"equal\", \"pfi\", \"equal\"]; } ); };\n");
    snprintf(args, sizeof args, "sweep %s", p);
    expect_error(t, args, "twice.cfg:4: error: sweep.axes.values: policy 'equal' named twice");
    /* Two values of an axis that make one scenario: the same runs twice. */
    p = test_write(t, 0, "same.cfg",
                   "sweep = {\n axes = (\n { setting = \"facility.gpus\"; values = [256, 64]; },\n"
                   " { setting = \"seed\";\n   values = [1, 2, 1]; } ); };\n");
    snprintf(args, sizeof args, "sweep %s", p);
    expect_error(t, args,
                 "same.cfg:4: error: sweep.axes.[1].values.[2] (seed = ...): the same scenario "
                 "as value [0]");
    /* A base scenario that is missing or a directory, with and without a jobs setting after
     * it (issue 17: it crashed without one and named the wrong line with one). A path that
     * cannot be read is exit 4. */
    p = test_write(t, 0, "nobase.cfg",
                   "sweep = {\n scenario = \"/nonexistent/base.cfg\";\n"
                   " axes = ( { setting = \"seed\"; values = [1]; } );\n};\n");
    snprintf(args, sizeof args, "sweep %s --list", p);
    expect_exit(t, args, 4,
                "nobase.cfg:2: error: sweep.scenario: cannot read '/nonexistent/base.cfg'");
    p = test_write(t, 0, "dirbase.cfg",
                   "sweep = {\n scenario = \"/\";\n"
                   " axes = ( { setting = \"seed\"; values = [1]; } );\n};\n");
    snprintf(args, sizeof args, "sweep %s --list", p);
    expect_exit(t, args, 4, "dirbase.cfg:2: error: sweep.scenario: cannot read '/'");
    p = test_write(t, 0, "jobsbase.cfg",
                   "sweep = {\n scenario = \"/nonexistent/base.cfg\";\n"
                   " axes = ( { setting = \"seed\"; values = [1]; } );\n jobs = true;\n};\n");
    snprintf(args, sizeof args, "sweep %s --list", p);
    expect_exit(t, args, 4, "jobsbase.cfg:2: error: sweep.scenario: cannot read");
    p = test_write(t, 0, "ok.cfg", sweep_text);
    snprintf(args, sizeof args, "sweep %s --shard 5/4 --db %s/y.db", p, t->tmpdir);
    expect_error(t, args, "--shard takes K/N with 0 <= K < N");
    snprintf(args, sizeof args, "sweep %s --shard 1/0", p);
    expect_error(t, args, "--shard takes K/N");
    /* Nothing was written for any of them. */
    snprintf(db, sizeof db, "%s/x.db", t->tmpdir);
    CHECK(access(db, F_OK) != 0);
    /* A database of another schema version is refused and left as it was. */
    snprintf(db, sizeof db, "%s/old.db", t->tmpdir);
    sqlite3_open(db, &h);
    sqlite3_exec(h,
                 "CREATE TABLE pfisim_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                 "INSERT INTO pfisim_meta VALUES ('app', 'pfisim'), ('schema_version', '3');",
                 NULL, NULL, NULL);
    sqlite3_close(h);
    snprintf(args, sizeof args, "merge %s/out.db %s", t->tmpdir, db);
    expect_error(t, args, "schema version '3'");
    /* The output named as a shard too (another path to the same file). */
    snprintf(args, sizeof args, "merge %s %s/./old.db", db, t->tmpdir);
    expect_error(t, args, "is the output database too");
    snprintf(db, sizeof db, "%s/out.db", t->tmpdir);
    CHECK(access(db, F_OK) != 0);
}

/* The DR event generator against its specification (docs/scenarios.md): the count, months,
 * hours, durations and notices it was given, no overlaps, in time order, reproducible by
 * seed, and the canonical text reads back to the same events. */
void
test_dr_generator(struct test *t)
{
    static const char text[] =
        "scenario = {\n"
        "  duration_days = 365.0;\n"
        "  dr_events = ();\n"
        "  dr_generator = { per_year = 50.0; duration_h = [2.0, 4.0]; notice_h = [1.0, 3.0];\n"
        "    ramp_min = 10.0; cut = 0.25; seed = %d;\n"
        "    month_weights = [0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0];\n"
        "    hour_weights = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0,"
        " 0]; };\n"
        "};\n";
    struct pfs_scenario *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    struct pfs_diag d = {0};
    char buf[1024], *canon = NULL;
    size_t len = 0, july = 0, hour17 = 0;
    FILE *fp;

    snprintf(buf, sizeof buf, text, 5);
    CHECK_INT(pfs_scenario_load(test_write(t, 0, "g.cfg", buf), a, &d), 0);
    CHECK_INT(a->n_dr, 50);
    for (size_t k = 0; k < a->n_dr; k++) {
        const struct pfs_dr_event *e = &a->dr[k];
        double day = floor(e->start_s / 86400);
        long secs = (long)fmod(e->start_s, 86400), hour = secs / 3600;

        /* July is days 181-211 of the year (0-based), August 212-242. */
        CHECK(day >= 181 && day <= 242);
        july += day <= 211;
        CHECK(secs % 3600 == 0 && (hour == 17 || hour == 18)); /* on the hour */
        hour17 += hour == 17;
        CHECK(e->end_s - e->start_s >= 2 * 3600 - 30 && e->end_s - e->start_s <= 4 * 3600 + 30);
        CHECK(e->notice_s >= 3600 - 30 && e->notice_s <= 3 * 3600 + 30);
        CHECK_NEAR(e->ramp_s, 600, 0);
        CHECK_NEAR(e->cut_frac, 0.25, 0);
        if (k > 0) /* in order, and each ends (ramp included) before the next starts */
            CHECK(a->dr[k - 1].end_s + a->dr[k - 1].ramp_s <= e->start_s);
    }
    /* August weighs twice July: 50 events, P(July) = 1/3 - a binomial (sd 3.3) far from 0
     * and 50; hours 17 and 18 weigh the same. */
    CHECK(july >= 5 && july <= 30);
    CHECK(hour17 >= 12 && hour17 <= 38);
    /* The same seed, the same events; another seed, other events. */
    CHECK_INT(pfs_scenario_load(test_write(t, 0, "g.cfg", buf), b, &d), 0);
    CHECK(memcmp(a->dr, b->dr, a->n_dr * sizeof a->dr[0]) == 0);
    snprintf(buf, sizeof buf, text, 6);
    CHECK_INT(pfs_scenario_load(test_write(t, 0, "g.cfg", buf), b, &d), 0);
    CHECK(b->n_dr == 50 && memcmp(a->dr, b->dr, a->n_dr * sizeof a->dr[0]) != 0);
    /* The canonical text lists the drawn events; read back, they are the same. */
    fp = open_memstream(&canon, &len);
    pfs_scenario_write(a, fp);
    fclose(fp);
    CHECK_INT(pfs_scenario_parse(canon, "canonical", b, &d), 0);
    CHECK_INT(b->n_dr, 50);
    for (size_t k = 0; k < b->n_dr && k < a->n_dr; k++) {
        CHECK_NEAR(b->dr[k].start_s, a->dr[k].start_s, 1e-6);
        CHECK_NEAR(b->dr[k].end_s, a->dr[k].end_s, 1e-6);
        CHECK_NEAR(b->dr[k].notice_s, a->dr[k].notice_s, 1e-6);
    }
    free(canon);
    /* A month's share of a shorter run, after the 3-day warm-up: round(50 x 27 / 365) = 4
     * events (none in January
     * would fit these weights: the weights are over the days simulated). */
    snprintf(buf, sizeof buf,
             "scenario = { duration_days = 30.0; dr_events = ();\n"
             "  dr_generator = { per_year = 50.0; }; };\n");
    CHECK_INT(pfs_scenario_load(test_write(t, 0, "g.cfg", buf), a, &d), 0);
    CHECK_INT(a->n_dr, 4);
    /* Too many to place without overlap: an error naming the setting. */
    snprintf(buf, sizeof buf,
             "scenario = { duration_days = 30.0;\n"
             "  dr_generator = { per_year = 2000.0; duration_h = [20.0, 24.0]; }; };\n");
    d = (struct pfs_diag){0};
    CHECK_INT(pfs_scenario_load(test_write(t, 0, "g.cfg", buf), a, &d), PFS_EINVAL);
    /* round(2000 x (30 - 3 days of warm-up) / 365) = 148. */
    CHECK(strstr(d.message, "scenario.dr_generator: cannot place 148 events") != NULL);
    CHECK_INT(d.line, 2);
    free(a);
    free(b);
}

/* Demand hours above a threshold become events (traces/grid.c), on a hand-made file
 * (SYNTHETIC: two days, an hour missing) and on SRP's real day when the data is here. */
void
test_grid_events(struct test *t)
{
    /* Day 1: hours ending 17-19 above 5 (one event 16:00-19:00). Day 2: hours ending 2 and 3
     * above, hour 4 missing, hour 5 above: two events (a missing hour ends a run). */
    static const char text[] = "# SYNTHETIC demand for tests\n"
                               "date,hour,load\n"
                               "2025-07-01,16,4.0\n"
                               "2025-07-01,17,5.5\n"
                               "2025-07-01,18,6.0\n"
                               "2025-07-01,19,5.1\n"
                               "2025-07-01,20,4.9\n"
                               "2025-07-02,2,5.2\n"
                               "2025-07-02,3,5.3\n"
                               "2025-07-02,5,5.4\n";
    struct pfs_grid_options o = {
        .column = "load", .threshold = 5, .cut = 0.2, .ramp_s = 600, .notice_s = INFINITY};
    struct pfs_dr_event ev[8];
    struct pfs_diag d = {0};
    const char *p = test_write(t, 0, "demand.csv", text);
    char buf[512], args[600];
    double th;
    size_t n;

    CHECK_INT(pfs_grid_events(p, &o, ev, 8, &n, &th, &d), 0);
    CHECK_INT(n, 3);
    CHECK_NEAR(ev[0].start_s, 16 * 3600.0, 0);
    CHECK_NEAR(ev[0].end_s, 19 * 3600.0, 0);
    CHECK_NEAR(ev[1].start_s, (24 + 1) * 3600.0, 0);
    CHECK_NEAR(ev[1].end_s, (24 + 3) * 3600.0, 0);
    CHECK_NEAR(ev[2].start_s, (24 + 4) * 3600.0, 0);
    CHECK_NEAR(ev[2].end_s, (24 + 5) * 3600.0, 0);
    CHECK_NEAR(ev[0].cut_frac, 0.2, 0);
    CHECK_NEAR(ev[0].ramp_s, 600, 0);
    /* The 2 highest hours (6.0 and 5.5): one event, 16:00-18:00. */
    o.threshold = 0;
    o.top_hours = 2;
    CHECK_INT(pfs_grid_events(p, &o, ev, 8, &n, &th, &d), 0);
    CHECK_INT(n, 1);
    CHECK_NEAR(th, 5.5, 0);
    CHECK_NEAR(ev[0].start_s, 16 * 3600.0, 0);
    CHECK_NEAR(ev[0].end_s, 18 * 3600.0, 0);
    /* Bad input: an hour out of range, hours going back, negative demand. */
    o.top_hours = 0;
    o.threshold = 5;
    p = test_write(t, 0, "bad.csv", "date,hour,load\n2025-07-01,25,4.0\n");
    CHECK_INT(pfs_grid_events(p, &o, ev, 8, &n, &th, &d), PFS_EINVAL);
    CHECK(d.line == 2 && d.column == 12 && strstr(d.message, "expected 1-24"));
    d = (struct pfs_diag){0};
    p = test_write(t, 0, "bad.csv", "date,hour,load\n2025-07-01,5,4.0\n2025-07-01,4,4.0\n");
    CHECK_INT(pfs_grid_events(p, &o, ev, 8, &n, &th, &d), PFS_EINVAL);
    CHECK(d.line == 3 && strstr(d.message, "hours must increase"));
    d = (struct pfs_diag){0};
    p = test_write(t, 0, "bad.csv", "date,hour,load\n2025-07-01,5,-4.0\n");
    CHECK_INT(pfs_grid_events(p, &o, ev, 8, &n, &th, &d), PFS_EINVAL);
    CHECK(d.line == 2 && strstr(d.message, "negative demand"));
    /* Dates that are not dates (issue 17: 2025-02-31 was taken as 3 March, and a year of
     * 2^63 - 1 overflowed); 2024-02-29 is one, 2025-02-29 is not. */
    {
        static const char *const bad[] = {"2025-02-31", "2025-02-29",
                                          "2025-04-31", "9223372036854775807-01-01",
                                          "0-01-01",    "2025-13-01"};

        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            snprintf(buf, sizeof buf, "date,hour,load\n%s,5,4.0\n", bad[k]);
            p = test_write(t, 0, "bad.csv", buf);
            d = (struct pfs_diag){0};
            CHECK_INT(pfs_grid_events(p, &o, ev, 8, &n, &th, &d), PFS_EINVAL);
            if (!(d.line == 2 && strstr(d.message, "expected a date YYYY-MM-DD")))
                test_fail(t, __FILE__, __LINE__, "%s: %s", bad[k], d.message);
        }
        p = test_write(t, 0, "leap.csv", "date,hour,load\n2024-02-29,5,4.0\n");
        d = (struct pfs_diag){0};
        CHECK_INT(pfs_grid_events(p, &o, ev, 8, &n, &th, &d), 0);
    }
    /* SRP's demand on 3 May 2025 (REAL): above 4.6 GW from 14:00 to 20:00; its 4 highest
     * hours, 15:00-19:00; the same through a scenario's dr_grid. */
    if (!test_data("emerald-phoenix/SRP_0503.csv", buf, sizeof buf))
        SKIP("no data directory");
    o.column = "SRP Actual";
    o.threshold = 4.6;
    CHECK_INT(pfs_grid_events(buf, &o, ev, 8, &n, &th, &d), 0);
    CHECK_INT(n, 1);
    CHECK_NEAR(ev[0].start_s, 14 * 3600.0, 0);
    CHECK_NEAR(ev[0].end_s, 20 * 3600.0, 0);
    snprintf(args, sizeof args,
             "scenario = { dr_events = (); dr_grid = { file = \"emerald-phoenix/SRP_0503.csv\";"
             " top_hours = 4.0; }; };\n");
    {
        struct pfs_scenario *sc = malloc(sizeof *sc);

        CHECK_INT(pfs_scenario_load(test_write(t, 1, "g.cfg", args), sc, &d), 0);
        CHECK_INT(sc->n_dr, 1);
        CHECK_NEAR(sc->dr[0].start_s, 15 * 3600.0, 0);
        CHECK_NEAR(sc->dr[0].end_s, 19 * 3600.0, 0);
        CHECK_NEAR(sc->dr[0].cut_frac, 0.3, 0);
        free(sc);
    }
}

/* pfisim price counts tier-floor violations and deadline misses from the per-job rows; the
 * simulator counted them as it ran: per run, the tiers' counts add up to its summary's. */
void
test_price_matches_summary(struct test *t)
{
    struct pfs_price_run *pr = NULL;
    struct pfs_diag d = {0};
    sqlite3 *h = NULL;
    char db[512], args[700], *out = NULL, *err = NULL;
    size_t n = 0;

    snprintf(db, sizeof db, "%s/day.db", t->tmpdir);
    snprintf(args, sizeof args, "run --days 1 --db=%s", db);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    CHECK_INT(pfs_price_db(db, &pr, &n, &d), 0);
    CHECK_INT(n, 4);
    sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL);
    for (size_t i = 0; i < n; i++) {
        char sql[256];
        size_t floor = 0, missed = 0, jobs = 0;

        for (int k = 0; k < PFS_N_TIERS; k++) {
            floor += pr[i].tier[k].floor_violations;
            missed += pr[i].tier[k].deadline_misses;
            jobs += pr[i].tier[k].jobs;
        }
        snprintf(sql, sizeof sql,
                 "SELECT tier_violations FROM summary JOIN run ON run.id = run_id "
                 "WHERE policy = '%s'",
                 pr[i].policy);
        CHECK_INT(floor, test_query_long(h, sql));
        snprintf(sql, sizeof sql,
                 "SELECT deadline_misses FROM summary JOIN run ON run.id = run_id "
                 "WHERE policy = '%s'",
                 pr[i].policy);
        CHECK_INT(missed, test_query_long(h, sql));
        CHECK_INT(jobs, test_query_long(h, "SELECT jobs_submitted FROM summary LIMIT 1"));
        CHECK(floor > 0); /* the check means something: there are some */
    }
    sqlite3_close(h);
    free(pr);
    snprintf(args, sizeof args, "price %s --csv", db);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(out && strncmp(out, "scenario,hash,policy,seed,tier,jobs,delivered,", 46) == 0);
    CHECK_INT(out ? (long)(strchr(out, '\0') - out) > 200 : 0, 1);
    free(out);
    free(err);
}

/* Merges the four shards in tmpdir/shards into merged and compares it with the unsharded
 * sweep's database whole, row for row by content. */
static void
merge_and_compare(struct test *t, const char *whole, const char *merged)
{
    char *dw, *dm;

    CHECK_INT(sh(t,
                 "merge %s %s/shards/shard-0.db %s/shards/shard-1.db %s/shards/shard-2.db "
                 "%s/shards/shard-3.db >/dev/null",
                 merged, t->tmpdir, t->tmpdir, t->tmpdir, t->tmpdir),
              0);
    dw = dump(whole);
    dm = dump(merged);
    CHECK(dw && dm && strlen(dw) > 1000 && strcmp(dw, dm) == 0);
    free(dw);
    free(dm);
}

/* The shipped Slurm script (configs/slurm/sweep.sbatch), run here as a 4-task array would
 * run it, task after task, then merged: equal to the unsharded sweep. */
void
test_sweep_slurm_script(struct test *t)
{
    const char *cfg = test_write(t, 0, "sweep.cfg", sweep_text);
    const char *bin =
        getenv("PFISIM_BIN") && *getenv("PFISIM_BIN") ? getenv("PFISIM_BIN") : "build/pfisim";
    char cmd[2048], whole[512], merged[512];

    snprintf(whole, sizeof whole, "%s/whole.db", t->tmpdir);
    snprintf(merged, sizeof merged, "%s/merged.db", t->tmpdir);
    CHECK_INT(sh(t, "sweep %s --db %s >/dev/null", cfg, whole), 0);
    for (int k = 0; k < 4; k++) {
        /* Array 10-13: K is counted from the array's first index. */
        snprintf(cmd, sizeof cmd,
                 "SLURM_ARRAY_TASK_ID=%d SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_COUNT=4 "
                 "SLURM_CPUS_PER_TASK=2 PFISIM=%s bash configs/slurm/sweep.sbatch %s %s/shards "
                 ">%s/slurm.out 2>&1",
                 10 + k, bin, cfg, t->tmpdir, t->tmpdir);
        CHECK_INT(system(cmd), 0);
    }
    merge_and_compare(t, whole, merged);
}

/* The same on a real Slurm (issue 16): a private one-node cluster started here
 * (configs/slurm/local-cluster.sh: slurmctld and slurmd of Debian's slurm-wlm, a generated
 * slurm.conf), the sweep submitted as a 4-task array with sbatch --wait, the shards merged:
 * equal to the unsharded sweep. Skipped, saying why, where Slurm is not installed or will
 * not start; .ci/run installs it. */
void
test_sweep_real_slurm(struct test *t)
{
    const char *cfg = test_write(t, 0, "sweep.cfg", sweep_text);
    const char *bin =
        getenv("PFISIM_BIN") && *getenv("PFISIM_BIN") ? getenv("PFISIM_BIN") : "build/pfisim";
    char cmd[3072], whole[512], merged[512], cwd[1024], why[512] = "";
    int port = 20000 + 2 * (int)(getpid() % 10000), rc;
    FILE *fp;

    if (system("command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 && "
               "command -v sbatch >/dev/null 2>&1") != 0)
        SKIP("Slurm is not installed (Debian: apt-get install slurm-wlm; .ci/run does)");
    if (!getcwd(cwd, sizeof cwd))
        SKIP("no working directory");
    snprintf(cmd, sizeof cmd,
             "sh configs/slurm/local-cluster.sh start %s/slurm %d >%s/start.log 2>&1", t->tmpdir,
             port, t->tmpdir);
    if (system(cmd) != 0) {
        snprintf(cmd, sizeof cmd, "%s/start.log", t->tmpdir);
        if ((fp = fopen(cmd, "r"))) {
            if (!fgets(why, sizeof why, fp))
                why[0] = 0;
            fclose(fp);
        }
        why[strcspn(why, "\n")] = 0;
        snprintf(cmd, sizeof cmd, "sh configs/slurm/local-cluster.sh stop %s/slurm", t->tmpdir);
        rc = system(cmd);
        (void)rc;
        fprintf(stderr, "  skip %s: Slurm would not start here: %s\n", t->name, why);
        t->skipped = true;
        return;
    }
    snprintf(whole, sizeof whole, "%s/whole.db", t->tmpdir);
    snprintf(merged, sizeof merged, "%s/merged.db", t->tmpdir);
    CHECK_INT(sh(t, "sweep %s --db %s >/dev/null", cfg, whole), 0);
    snprintf(cmd, sizeof cmd,
             "SLURM_CONF=%s/slurm/slurm.conf PFISIM=%s timeout 300 sbatch --wait --quiet "
             "--array=0-3 --cpus-per-task=1 --chdir=%s --output=%s/task-%%a.out "
             "configs/slurm/sweep.sbatch %s %s/shards >%s/sbatch.out 2>&1",
             t->tmpdir, bin, cwd, t->tmpdir, cfg, t->tmpdir, t->tmpdir);
    rc = system(cmd);
    CHECK_INT(rc, 0);
    if (rc == 0) {
        merge_and_compare(t, whole, merged);
    }
    snprintf(cmd, sizeof cmd, "sh configs/slurm/local-cluster.sh stop %s/slurm", t->tmpdir);
    CHECK_INT(system(cmd), 0);
}

/* The studies' figures from a sweep's database: oversub per DR frequency and outcome, and
 * pricing per scenario with Flex jobs; every file a 900 x 520 PNG. A database with one GPU
 * count has no oversub figure to give when asked by name. */
void
test_sweep_figures(struct test *t)
{
    static const char *const names[] = {"oversub-0dr",   "oversub-365dr", "oversub-deadlines",
                                        "oversub-tiers", "pricing-",      NULL};
    const char *cfg = test_write(t, 0, "sweep.cfg", sweep_text);
    char db[512], args[1024], *out = NULL, *err = NULL;

    snprintf(db, sizeof db, "%s/s.db", t->tmpdir);
    CHECK_INT(sh(t, "sweep %s --db %s >/dev/null", cfg, db), 0);
    snprintf(args, sizeof args, "plot %s -o %s/figs --only oversub", db, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "plot %s -o %s/figs --only pricing", db, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    /* Four scenarios (2 GPU counts x 2 DR frequencies), all with Flex jobs: four figures. */
    {
        size_t lines = 0;

        for (const char *p = out; p && *p; p++)
            lines += *p == '\n';
        CHECK_INT(lines, 4);
    }
    free(out);
    free(err);
    for (size_t k = 0; names[k]; k++) {
        char path[700];

        if (strcmp(names[k], "pricing-") == 0)
            continue;
        snprintf(path, sizeof path, "%s/figs/%s.png", t->tmpdir, names[k]);
        test_check_png(t, path, 900, 520);
    }
    /* One GPU count: no oversub figure. */
    snprintf(args, sizeof args, "run --days 0.1 --db=%s/one.db >/dev/null", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "plot %s/one.db -o %s/figs --only oversub", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(err && strstr(err, "figure oversub needs runs at two or more GPU counts"));
    free(out);
    free(err);
}

/* On a terminal, stderr carries a progress line (runs done of the runs to do, elapsed, ETA);
 * off one, nothing. script(1) (util-linux, essential in Debian) gives the sweep a terminal;
 * --list prints each point's axis values. */
/* A site axis (issue 16's multi-site fleets): each value a group of scenario settings that
 * replace the base's. Two sites of different size, DR programme and workload: one point
 * each, named after the site, with its own GPUs and events; the fleet's totals are the sums
 * over the sites' runs. A site that is not a group is refused, naming the axis's line. */
void
test_sweep_sites(struct test *t)
{
    const char *cfg = test_write(
        t, 0, "fleet.cfg",
        "sweep = {\n"
        "    name = \"fleet\";\n"
        "    axes = (\n"
        "        { setting = \"site\";\n"
        "          values = ( { name = \"north\"; duration_days = 1.0;\n"
        "                       facility = { gpus = 128; };\n"
        "                       dr_events = ( { start_h = 17.0; end_h = 19.0; cut = 0.3; } ); },\n"
        "                     { name = \"south\"; duration_days = 1.0;\n"
        "                       facility = { gpus = 256; cap_w = 0.0; };\n"
        "                       workload = { arrivals = \"fitted:itp:cluster02\"; };\n"
        "                       dr_events = ( ); } ); },\n"
        "        { setting = \"policy\"; values = [\"equal\", \"pfi\"]; }\n"
        "    );\n"
        "    jobs = false;\n"
        "};\n");
    const char *bad = test_write(t, 1, "bad.cfg",
                                 "sweep = {\n"
                                 "    axes = (\n"
                                 "        { setting = \"site\"; values = [1, 2]; }\n"
                                 "    );\n"
                                 "};\n");
    char args[1200], db[512], *out = NULL, *err = NULL;

    snprintf(args, sizeof args, "sweep %s --list", cfg);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(out && strstr(out, "0 site=\"north\" (128 GPUs, 1 DR events") != NULL);
    CHECK(out && strstr(out, "1 site=\"south\" (256 GPUs, 0 DR events") != NULL);
    free(out);
    free(err);
    snprintf(db, sizeof db, "%s/fleet.db", t->tmpdir);
    CHECK_INT(sh(t, "sweep %s --db %s >/dev/null", cfg, db), 0);
    {
        sqlite3 *h = NULL;

        sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL);
        CHECK_INT(test_query_long(h, "SELECT count(*) FROM run"), 4);
        CHECK_INT(test_query_long(h, "SELECT count(*) FROM scenario WHERE name = 'north' AND "
                                     "config LIKE '%gpus = 128;%'"),
                  1);
        CHECK_INT(test_query_long(h, "SELECT count(*) FROM scenario WHERE name = 'south' AND "
                                     "config LIKE '%gpus = 256;%' AND config LIKE "
                                     "'%fitted:itp:cluster02%'"),
                  1);
        CHECK_INT(test_query_long(h, "SELECT SUM(m.dr_events) FROM summary m JOIN run r ON r.id "
                                     "= m.run_id WHERE r.policy = 'equal'"),
                  1);
        sqlite3_close(h);
    }
    snprintf(args, sizeof args, "sweep %s --list", bad);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(err && strstr(err, "bad.cfg:3: error:") != NULL &&
          strstr(err, "site: each value is a group of scenario settings") != NULL);
    free(out);
    free(err);
}

void
test_sweep_progress_and_list(struct test *t)
{
    const char *cfg = test_write(t, 0, "sweep.cfg", sweep_text);
    const char *bin =
        getenv("PFISIM_BIN") && *getenv("PFISIM_BIN") ? getenv("PFISIM_BIN") : "build/pfisim";
    char cmd[2048], path[600], buf[8192] = "";
    char *out = NULL, *err = NULL;
    FILE *fp;
    size_t n;

    snprintf(path, sizeof path, "%s/tty.txt", t->tmpdir);
    snprintf(cmd, sizeof cmd, "script -qec '%s sweep %s --db %s/p.db -j 2' /dev/null >%s 2>&1", bin,
             cfg, t->tmpdir, path);
    CHECK_INT(system(cmd), 0);
    if ((fp = fopen(path, "r")) != NULL) {
        n = fread(buf, 1, sizeof buf - 1, fp);
        buf[n] = '\0';
        fclose(fp);
    }
    CHECK(strstr(buf, "\rpfisim sweep: 0/24 runs") != NULL);
    CHECK(strstr(buf, "\rpfisim sweep: 24/24 runs, ") != NULL);
    CHECK(strstr(buf, "ETA 0 s") != NULL);
    /* Without a terminal (the test's pipes): no progress line. */
    snprintf(cmd, sizeof cmd, "sweep %s --db %s/q.db", cfg, t->tmpdir);
    CHECK_INT(test_run(t, cmd, &out, &err), 0);
    CHECK(err && strstr(err, "runs,") == NULL);
    free(out);
    free(err);
    /* --csv: every run of the sweep, skipped ones too, read back from the database: 24 rows
     * whose tokens add up to the database's (to the 7 digits printed). */
    snprintf(cmd, sizeof cmd, "sweep %s --db %s/p.db --resume --csv", cfg, t->tmpdir);
    CHECK_INT(test_run(t, cmd, &out, &err), 0);
#define CSV_HEAD                                                                                   \
    "point,facility.gpus,duration_days,dr_generator.per_year,dr_generator.warmup_h,seed,policy,"   \
    "seed,tokens,"
    CHECK(out && strncmp(out, CSV_HEAD, sizeof CSV_HEAD - 1) == 0);
    CHECK(err && strstr(err, "0 runs done, 24 skipped"));
    {
        double sum = 0, want;
        size_t rows = 0;
        sqlite3 *h = NULL;
        char db[700];

        for (const char *line = out ? strchr(out, '\n') : NULL; line && line[1];
             line = strchr(line + 1, '\n')) {
            const char *f = line + 1;

            for (int c = 0; c < 8 && f; c++) /* tokens is the 9th column */
                f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL;
            sum += f ? strtod(f, NULL) : 0;
            rows++;
        }
        snprintf(db, sizeof db, "%s/p.db", t->tmpdir);
        sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL);
        want = (double)test_query_long(h, "SELECT CAST(sum(tokens) AS INTEGER) FROM summary");
        sqlite3_close(h);
        CHECK_INT(rows, 24);
        CHECK_NEAR(sum, want, 1e-6 * want);
    }
    free(out);
    free(err);
    snprintf(cmd, sizeof cmd, "sweep %s --list --shard 3/4", cfg);
    CHECK_INT(test_run(t, cmd, &out, &err), 0);
    CHECK_STR(out ? out : "",
              "3 facility.gpus=256 duration_days=1 dr_generator.per_year=365 "
              "dr_generator.warmup_h=0 seed=2 (256 GPUs, 1 DR events, seed 2, 1 days)\n"
              "7 facility.gpus=320 duration_days=1 dr_generator.per_year=365 "
              "dr_generator.warmup_h=0 seed=2 (320 GPUs, 1 DR events, seed 2, 1 days)\n");
    free(out);
    free(err);
}
