/*
 * tests/test_store.c - the results database (docs/results.md) against the CSV outputs.
 *
 * The same run writes its summary (--csv), per-job (--jobs-csv) and per-minute
 * (--timeseries-csv) results as text and into the database; the row counts and sums read
 * back from SQLite must match the text, reruns must replace rather than duplicate, and a
 * run that fails half-way must leave the rows it would have replaced untouched.
 */
#define _XOPEN_SOURCE   700 /* realpath */
#define _DEFAULT_SOURCE     /* wait4 */
#include <sqlite3.h>
#include <stdlib.h>
#include <limits.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

static double
query_double(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *q = NULL;
    double v = (double)NAN;

    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        v = sqlite3_column_double(q, 0);
    sqlite3_finalize(q);
    return v;
}

/* Every row of every result table, in key order, as text: what "the same results" means. */
static char *
dump(sqlite3 *db)
{
    static const char *const tables[] = {
        "SELECT s.hash, r.policy, r.seed, m.* FROM summary m JOIN run r ON r.id = m.run_id "
        "JOIN scenario s ON s.id = r.scenario_id ORDER BY s.hash, r.policy, r.seed",
        "SELECT r.policy, j.* FROM job_result j JOIN run r ON r.id = j.run_id "
        "ORDER BY r.policy, j.job_id",
        "SELECT r.policy, x.* FROM timeseries x JOIN run r ON r.id = x.run_id "
        "ORDER BY r.policy, x.t_s"};
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);

    for (size_t k = 0; fp && k < sizeof tables / sizeof tables[0]; k++) {
        sqlite3_stmt *q = NULL;

        if (sqlite3_prepare_v2(db, tables[k], -1, &q, NULL) != SQLITE_OK)
            continue;
        while (sqlite3_step(q) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(q); c++) {
                const unsigned char *v = sqlite3_column_text(q, c);

                if (strcmp(sqlite3_column_name(q, c), "run_id") != 0) /* a rowid: not content */
                    fprintf(fp, "|%s", v ? (const char *)v : "NULL");
            }
            fputc('\n', fp);
        }
        sqlite3_finalize(q);
    }
    if (fp)
        fclose(fp);
    return text;
}

/* The tokens column of policy's row in a `run --csv` summary (NAN when absent). */
static double
csv_tokens(const char *csv, const char *policy)
{
    char key[64];
    const char *p;

    snprintf(key, sizeof key, "\n%s,", policy);
    p = strstr(csv, key);
    return p ? strtod(p + strlen(key), NULL) : (double)NAN;
}

#define RUN_ARGS "run --days 2 --policy equal --policy pfi --csv" /* a DR event on day 2 */

void
test_store_matches_csv(struct test *t)
{
    char args[1600], db_path[300], jobs[300], ts[300], *out, *err, *first, *again, *before;
    sqlite3 *db = NULL;
    long n_jobs, n_ts;

    snprintf(db_path, sizeof db_path, "%s/r.db", t->tmpdir);
    snprintf(jobs, sizeof jobs, "%s/jobs.csv", t->tmpdir);
    snprintf(ts, sizeof ts, "%s/ts.csv", t->tmpdir);
    snprintf(args, sizeof args, RUN_ARGS " --db=%s --jobs-csv %s --timeseries-csv %s", db_path,
             jobs, ts);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    n_jobs = test_count_lines(jobs) - 1; /* header; rows for both policies */
    n_ts = test_count_lines(ts) - 1;
    CHECK(n_jobs > 100);
    CHECK(n_ts >= 2 * 1440);
    CHECK(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM scenario"), 1);
    {
        sqlite3_stmt *q = NULL; /* the study, named after the file */

        CHECK(sqlite3_prepare_v2(db, "SELECT name FROM study", -1, &q, NULL) == SQLITE_OK &&
              sqlite3_step(q) == SQLITE_ROW &&
              strcmp((const char *)sqlite3_column_text(q, 0), "r") == 0);
        sqlite3_finalize(q);
    }
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM run"), 2);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM summary"), 2);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM job_result"), n_jobs);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM timeseries"), n_ts);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    /* The curves behind the scenario, once: every point of the corpus's curves.csv (less its
     * comment and header lines), every curve with the PFI the policies were given. */
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM curve_point"),
              test_count_lines("traces/h200-h100/curves.csv") - 2);
    CHECK_INT(test_query_long(db, "SELECT count(DISTINCT curve_id) FROM curve_point"),
              test_query_long(db, "SELECT count(*) FROM curve"));
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM curve WHERE pfi_30_given IS NULL"), 0);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM curve WHERE family IS NULL"), 0);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM run WHERE version <> '" PFS_VERSION "'"),
              0);
    /* The summary's tokens are the CSV's, to the printed precision. */
    for (int k = 0; k < 2; k++) {
        const char *pol = k ? "pfi" : "equal";
        char sql[200];
        double csv = csv_tokens(out, pol);

        snprintf(sql, sizeof sql,
                 "SELECT tokens FROM summary JOIN run ON run.id = run_id WHERE policy = '%s'", pol);
        CHECK(isfinite(csv) && csv > 0);
        CHECK_NEAR(query_double(db, sql) / csv, 1, 1e-5);
        /* ... and the jobs' tokens done add up to it (each job's done tokens are what the
         * run produced, to rounding). */
        snprintf(sql, sizeof sql,
                 "SELECT sum(tokens_done) FROM job_result JOIN run ON run.id = run_id "
                 "WHERE policy = '%s'",
                 pol);
        CHECK_NEAR(query_double(db, sql) / csv, 1, 1e-6);
    }
    first = dump(db);
    sqlite3_close(db);
    free(out);
    free(err);

    /* The same run again replaces its rows: no duplicates, the same content. */
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    CHECK(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM run"), 2);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM job_result"), n_jobs);
    again = dump(db);
    CHECK(first && again && strcmp(first, again) == 0);
    free(again);

    /* --resume skips both stored runs and writes nothing: nor invented rows for them in
     * --jobs-csv (issue 17: it wrote every job of a skipped policy with zeros). */
    snprintf(args, sizeof args, RUN_ARGS " --db=%s --resume --jobs-csv %s/resumed.csv", db_path,
             t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(err, "equal, seed 1: already in") && strstr(err, "pfi, seed 1: already in"));
    free(out);
    free(err);
    {
        char path[600], line[512];
        FILE *fp;
        int rows = 0;

        snprintf(path, sizeof path, "%s/resumed.csv", t->tmpdir);
        if ((fp = fopen(path, "r"))) {
            while (fgets(line, sizeof line, fp))
                rows++;
            fclose(fp);
        }
        CHECK_INT(rows, 1); /* the header alone */
    }
    /* Another seed is another run beside them. */
    snprintf(args, sizeof args, RUN_ARGS " --seed 2 --policy sla --db=%s --resume", db_path);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM run"), 5);
    CHECK_INT(test_query_long(db, "SELECT count(DISTINCT scenario_id) FROM run"), 1);
    /* No oracle yet: no gap. Then an oracle run alone (the others resumed): every stored
     * run of seed 1 gets its gap from the stored equal and oracle tokens. */
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM summary WHERE gap_recovered IS NOT NULL"),
              0);
    snprintf(args, sizeof args, RUN_ARGS " --policy oracle --db=%s --resume", db_path);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    {
        double eq = query_double(db, "SELECT tokens FROM summary JOIN run ON run.id = run_id "
                                     "WHERE policy = 'equal' AND seed = 1"),
               orc = query_double(db, "SELECT tokens FROM summary JOIN run ON run.id = run_id "
                                      "WHERE policy = 'oracle' AND seed = 1"),
               pfi = query_double(db, "SELECT tokens FROM summary JOIN run ON run.id = run_id "
                                      "WHERE policy = 'pfi' AND seed = 1");

        CHECK(orc > eq);
        CHECK_NEAR(query_double(db, "SELECT gap_recovered FROM summary JOIN run ON run.id = "
                                    "run_id WHERE policy = 'pfi' AND seed = 1"),
                   (pfi - eq) / (orc - eq), 1e-12);
        CHECK_NEAR(query_double(db, "SELECT gap_recovered FROM summary JOIN run ON run.id = "
                                    "run_id WHERE policy = 'oracle' AND seed = 1"),
                   1, 1e-12);
        CHECK_INT(test_query_long(db, "SELECT count(*) FROM summary JOIN run ON run.id = run_id "
                                      "WHERE seed = 2 AND gap_recovered IS NOT NULL"),
                  0); /* seed 2 had no oracle */
    }
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM run"), 6);
    before = dump(db);

    /* A run that fails half-way (a trigger refuses late time series rows) rolls back whole:
     * the rows it would have replaced are still there, and the exit says why. */
    CHECK(sqlite3_exec(db,
                       "CREATE TRIGGER boom BEFORE INSERT ON timeseries WHEN NEW.t_s > 3600 "
                       "BEGIN SELECT RAISE(ABORT, 'boom'); END;",
                       NULL, NULL, NULL) == SQLITE_OK);
    snprintf(args, sizeof args, RUN_ARGS " --db=%s", db_path);
    CHECK_INT(test_run(t, args, &out, &err), 4);
    CHECK(strstr(err, "boom") != NULL);
    free(out);
    free(err);
    CHECK(sqlite3_exec(db, "DROP TRIGGER boom", NULL, NULL, NULL) == SQLITE_OK);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM run"), 6);
    again = dump(db);
    CHECK(again && before && strcmp(again, before) == 0);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM job_result JOIN run ON run.id = run_id "
                                  "WHERE seed = 1"),
              n_jobs / 2 * 3); /* equal, pfi, oracle */
    free(again);
    free(before);

    /* Deleting a scenario takes its runs and every row under them with it. */
    CHECK(sqlite3_exec(db, "PRAGMA foreign_keys = ON; DELETE FROM scenario", NULL, NULL, NULL) ==
          SQLITE_OK);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM run"), 0);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM summary"), 0);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM job_result"), 0);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM timeseries"), 0);
    sqlite3_close(db);
    free(first);
}

void
test_store_deterministic(struct test *t)
{
    char args[900], path[2][300], *out, *err, *text[2] = {NULL, NULL};

    for (int k = 0; k < 2; k++) {
        sqlite3 *db = NULL;

        /* Same file name in two directories: the study is named after the file. */
        snprintf(path[k], sizeof path[k], "%s/%d", t->tmpdir, k);
        mkdir(path[k], 0777);
        snprintf(path[k], sizeof path[k], "%s/%d/r.db", t->tmpdir, k);
        snprintf(args, sizeof args, RUN_ARGS " --db=%s", path[k]);
        CHECK_INT(test_run(t, args, &out, &err), 0);
        free(out);
        free(err);
        if (sqlite3_open_v2(path[k], &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
            text[k] = dump(db);
        sqlite3_close(db);
    }
    CHECK(text[0] && text[1] && strlen(text[0]) > 1000);
    CHECK(text[0] && text[1] && strcmp(text[0], text[1]) == 0);
    /* ... and the files themselves, byte for byte (no time is stored, the same statements
     * run in the same order). */
    {
        FILE *a = fopen(path[0], "rb"), *b = fopen(path[1], "rb");
        long n = 0, diff = -1;
        int ca, cb;

        CHECK(a && b);
        while (a && b) {
            ca = fgetc(a);
            cb = fgetc(b);
            if (ca != cb) {
                diff = n;
                break;
            }
            if (ca == EOF)
                break;
            n++;
        }
        CHECK(n > 100000);
        CHECK_INT(diff, -1);
        if (a)
            fclose(a);
        if (b)
            fclose(b);
    }
    free(text[0]);
    free(text[1]);
}

/* The text of file path (NULL when unreadable), its rel_throughput column (the 8th: not
 * stored, it follows from the rest) dropped from every line when drop_8th. */
static char *
read_text(const char *path, bool drop_8th)
{
    FILE *fp = fopen(path, "r"), *out;
    char *text = NULL, line[512];
    size_t len = 0;

    if (!fp || !(out = open_memstream(&text, &len))) {
        if (fp)
            fclose(fp);
        return NULL;
    }
    while (fgets(line, sizeof line, fp)) {
        char *c = line;

        for (int k = 0; drop_8th && k < 7 && c; k++)
            c = strchr(c + 1, ',');
        if (drop_8th && c && strchr(c + 1, ','))
            memmove(c, strchr(c + 1, ','), strlen(strchr(c + 1, ',')) + 1);
        fputs(line, out);
    }
    fclose(fp);
    fclose(out);
    return text;
}

/* Stored column c as the CSV writers print it, as `how` says: s text, d an integer, 0 1 3
 * a number to that many decimals (0: %.0f, 1: %.6g, 3: %.3f); NULL as nothing. */
static void
put_col(FILE *fp, sqlite3_stmt *q, int c, char how)
{
    double v = sqlite3_column_double(q, c);

    if (sqlite3_column_type(q, c) == SQLITE_NULL)
        return;
    if (how == 's')
        fputs((const char *)sqlite3_column_text(q, c), fp);
    else if (how == 'd')
        fprintf(fp, "%d", sqlite3_column_int(q, c));
    else if (how == '0')
        fprintf(fp, "%.0f", v);
    else if (how == '1')
        fprintf(fp, "%.6g", v);
    else
        fprintf(fp, "%.3f", v);
}

/* Lines of the file named name in t's folder. */
static long
count_in(struct test *t, const char *name)
{
    char path[1024];

    snprintf(path, sizeof path, "%s/%s", t->tmpdir, name);
    return test_count_lines(path);
}

/* Whether the files named a and b in t's folder have the same bytes. */
static bool
same_in(struct test *t, const char *a, const char *b)
{
    char pa[1024], pb[1024];

    snprintf(pa, sizeof pa, "%s/%s", t->tmpdir, a);
    snprintf(pb, sizeof pb, "%s/%s", t->tmpdir, b);
    return test_same_file(pa, pb);
}

/* The jobs and time series CSVs are formatted in pieces on several threads, every piece but
 * the first into a temporary file, and copied in order: the same bytes as in turn, with four
 * policies of 20 days (more than 8,192 jobs and 28,800 minutes each: several pieces a
 * policy, read from one spill file by threads at once) on one, two and three threads; and
 * with --resume, where the first policy is stored already and not written, the same bytes as
 * a run of the other two alone. */
void
test_store_csv_threads(struct test *t)
{
    static const char four[] = "--policy equal --policy sla --policy pfi --policy oracle";
    static const char *const jobs[] = {"jobs1.csv", "jobs2.csv", "jobs3.csv"};
    static const char *const ts[] = {"ts1.csv", "ts2.csv", "ts3.csv"};
    char args[1200], *out, *err; /* (three folders of up to 255 bytes) */

    for (int th = 1; th <= 3; th++) {
        snprintf(args, sizeof args,
                 "run --days 20 %s --csv --threads %d --jobs-csv %s/%s --timeseries-csv %s/%s",
                 four, th, t->tmpdir, jobs[th - 1], t->tmpdir, ts[th - 1]);
        CHECK_INT(test_run(t, args, &out, &err), 0);
        free(out);
        free(err);
    }
    CHECK(count_in(t, jobs[0]) > 4 * 8192 && count_in(t, ts[0]) == 1 + 4 * 20 * 1440);
    for (int th = 2; th <= 3; th++) {
        CHECK(same_in(t, jobs[0], jobs[th - 1]));
        CHECK(same_in(t, ts[0], ts[th - 1]));
    }
    snprintf(args, sizeof args, "run --days 2 --policy equal --csv --db=%s/r.db", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args,
             "run --days 2 --policy equal --policy sla --policy pfi --csv --threads 2 "
             "--db=%s/r.db --resume --jobs-csv %s/%s --timeseries-csv %s/%s",
             t->tmpdir, t->tmpdir, jobs[1], t->tmpdir, ts[1]);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args,
             "run --days 2 --policy sla --policy pfi --csv --threads 1 --jobs-csv %s/%s "
             "--timeseries-csv %s/%s",
             t->tmpdir, jobs[2], t->tmpdir, ts[2]);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    CHECK(count_in(t, jobs[1]) > 2 * 800);
    CHECK(same_in(t, jobs[1], jobs[2]));
    CHECK(same_in(t, ts[1], ts[2]));
}

/* Every stored job and minute is the one the CSV files have, field by field: the rows go to
 * the database 64 to an insert, then the rest one by one (sim/store.c), and the windows
 * are chosen so that each table has both (907 jobs a policy; 2,448 minutes, 38 x 64 + 16). */
void
test_store_rows_match_csv(struct test *t)
{
    char args[1200], db_path[300], jobs[300], ts[300], *out, *err, *csv[2], *stored[2] = {0};
    static const char *const sql[2] = {
        "SELECT r.policy, j.job_id, j.n_gpus, j.tier, j.start_s, j.finish_s, j.tokens_done, "
        "j.pool, j.curve_id FROM job_result j JOIN run r ON r.id = j.run_id "
        "ORDER BY j.run_id, j.job_id",
        "SELECT x.t_s, r.policy, x.facility_w, x.gpu_w, x.budget_w, x.throughput, "
        "x.running_jobs, x.paused_jobs FROM timeseries x JOIN run r ON r.id = x.run_id "
        "ORDER BY x.run_id, x.t_s"};
    static const char *const how[2] = {"ssds331ss", "0s3331dd"};
    sqlite3 *db = NULL;

    snprintf(db_path, sizeof db_path, "%s/r.db", t->tmpdir);
    snprintf(jobs, sizeof jobs, "%s/jobs.csv", t->tmpdir);
    snprintf(ts, sizeof ts, "%s/ts.csv", t->tmpdir);
    snprintf(args, sizeof args,
             "run --days 1.7 --policy equal --policy pfi --db=%s --jobs-csv %s "
             "--timeseries-csv %s",
             db_path, jobs, ts);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    CHECK_INT(test_count_lines(ts) - 1, 2 * 2448);
    CHECK((test_count_lines(jobs) - 1) / 2 % 64 != 0);
    csv[0] = read_text(jobs, true);
    csv[1] = read_text(ts, false);
    CHECK(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    for (int k = 0; k < 2; k++) {
        sqlite3_stmt *q = NULL;
        size_t len = 0;
        FILE *fp = open_memstream(&stored[k], &len);

        if (!fp || sqlite3_prepare_v2(db, sql[k], -1, &q, NULL) != SQLITE_OK) {
            test_fail(t, __FILE__, __LINE__, "cannot read back table %d", k);
            if (fp)
                fclose(fp);
            continue;
        }
        fputs(k ? "t_s,policy,facility_w,gpu_w,budget_w,throughput,running_jobs,paused_jobs\n"
                : "policy,job_id,n_gpus,tier,start_s,finish_s,tokens_done,pool,curve_id\n",
              fp);
        while (sqlite3_step(q) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(q); c++) {
                if (c > 0)
                    fputc(',', fp);
                put_col(fp, q, c, how[k][c]);
            }
            fputc('\n', fp);
        }
        sqlite3_finalize(q);
        fclose(fp);
    }
    sqlite3_close(db);
    for (int k = 0; k < 2; k++) {
        CHECK(csv[k] && stored[k] && strlen(csv[k]) > 50000);
        CHECK(csv[k] && stored[k] && strcmp(csv[k], stored[k]) == 0);
        free(csv[k]);
        free(stored[k]);
    }
}

/* The peak memory (kB) of `pfisim run CFG --days DAYS --policy equal --policy pfi --csv` with
 * the extra arguments, or -1. */
static long
run_peak_kb(const char *cfg, const char *days, const char *extra_a, const char *extra_b)
{
    const char *bin =
        getenv("PFISIM_BIN") && *getenv("PFISIM_BIN") ? getenv("PFISIM_BIN") : "build/pfisim";
    struct rusage ru;
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);

        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
        }
        execl(bin, bin, "run", cfg, "--days", days, "--policy", "equal", "--policy", "pfi", "--csv",
              extra_a, extra_b, (char *)NULL);
        _exit(127);
    }
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return -1;
    return ru.ru_maxrss;
}

/* How much more peak memory (kB) run_peak_kb's run of cfg takes with `flag TMPDIR/name` than
 * without, the file's lines in *lines; -1 (a failure of t) where either run fails. */
static long
peak_more_kb(struct test *t, const char *cfg, const char *days, const char *flag, const char *name,
             long *lines)
{
    char path[300];
    long without, with;

    snprintf(path, sizeof path, "%s/%s", t->tmpdir, name);
    without = run_peak_kb(cfg, days, "--seed", "1");
    with = run_peak_kb(cfg, days, flag, path);
    CHECK(without > 0 && with > 0);
    *lines = test_count_lines(path);
    return without > 0 && with > 0 ? with - without : -1;
}

/* The time series goes to a temporary file as the runs make it, not into memory: 90 days of
 * two policies' minutes are 12.4 MB as rows (48 bytes a minute), and the run's peak memory
 * was 12 MB higher with --timeseries-csv than without it; now it is the same, to the
 * allocator's and the kernel's few MB. (With --db the same file feeds the database, whose
 * own memory, SQLite's, ASan's quarantine makes hundreds of MB: not measured here.) */
void
test_store_timeseries_memory(struct test *t)
{
    long lines,
        more = peak_more_kb(t, "configs/default.cfg", "90", "--timeseries-csv", "ts.csv", &lines);

    CHECK_INT(lines - 1, 2 * 90 * 1440);
    if (more > 4096)
        test_fail(t, __FILE__, __LINE__, "peak memory %ld kB higher with --timeseries-csv", more);
}

/* The jobs' results go to a temporary file as the runs' jobs finish, through a window of
 * PFS_JOB_WINDOW jobs (131,072 of 56 bytes: 7.3 MB a run): a year of bench/cap-4k.cfg is
 * 826,000 jobs, 46 MB a policy in memory, and two policies' peak memory was 92 MB higher
 * with --jobs-csv than without it; now their two windows, to the allocator's few MB. */
void
test_store_jobs_memory(struct test *t)
{
    long lines, more = peak_more_kb(t, "bench/cap-4k.cfg", "365", "--jobs-csv", "jobs.csv", &lines);

    CHECK(lines - 1 > 2 * 800000);
    if (more > 2 * 7300 + 4096)
        test_fail(t, __FILE__, __LINE__, "peak memory %ld kB higher with --jobs-csv", more);
}

/* A disk that fills while the jobs' results go to their temporary file (every file limited
 * to 4 MB, where 91 days of bench/cap-4k.cfg are 207,587 jobs, 11.6 MB of results): the run
 * stops with an I/O error that says so, and writes no jobs CSV, whole or in part. */
void
test_store_jobs_disk_full(struct test *t)
{
    char args[600], jobs[300], *out, *err;

    snprintf(jobs, sizeof jobs, "%s/jobs.csv", t->tmpdir);
    snprintf(args, sizeof args, "run bench/cap-4k.cfg --days 91 --policy equal --jobs-csv %s",
             jobs);
    CHECK_INT(test_run_fsize(t, 4L << 20, args, &out, &err), 4);
    CHECK(strstr(err, "job results") && strstr(err, "temporary file"));
    CHECK(access(jobs, F_OK) != 0);
    CHECK(!test_leftover_tmp(t->tmpdir));
    free(out);
    free(err);
}

void
test_store_bad_databases(struct test *t)
{
    char args[900], path[300], *out, *err;
    sqlite3 *db = NULL;

    /* Another application's SQLite file: refused before any simulation, left as it was. */
    snprintf(path, sizeof path, "%s/other.db", t->tmpdir);
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "CREATE TABLE orders (id INTEGER PRIMARY KEY)", NULL, NULL, NULL) ==
          SQLITE_OK);
    sqlite3_close(db);
    snprintf(args, sizeof args, RUN_ARGS " --db=%s", path);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(strstr(err, path) && strstr(err, "not a pfisim results database"));
    CHECK(strstr(out, "tokens") == NULL); /* nothing simulated, nothing printed */
    free(out);
    free(err);
    db = NULL;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK_INT(test_query_long(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"), 1);

    /* A pfisim database of another schema version. */
    CHECK(sqlite3_exec(db,
                       "DROP TABLE orders; CREATE TABLE pfisim_meta (key TEXT PRIMARY KEY, "
                       "value TEXT); INSERT INTO pfisim_meta VALUES ('app', 'pfisim'), "
                       "('schema_version', '99');",
                       NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(strstr(err, "schema version '99'") != NULL);
    free(out);
    free(err);

    /* Not SQLite at all. */
    snprintf(path, sizeof path, "%s/text.db", t->tmpdir);
    test_write(t, 0, "text.db", "job_id,gpu\nthis is a CSV file, not a database\n");
    snprintf(args, sizeof args, RUN_ARGS " --db=%s", path);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(strstr(err, path) != NULL);
    free(out);
    free(err);

    /* A directory that cannot be made (a file is in the way): an I/O error naming the path.
     * (Missing directories are made.) */
    snprintf(args, sizeof args, RUN_ARGS " --db=%s/text.db/dir/r.db", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 4);
    CHECK(strstr(err, "text.db/dir/r.db") != NULL);
    free(out);
    free(err);

    /* A full disk while the database is made: exit 4 naming it, and no 0-byte or
     * half-made database left behind (issue 17: sweep left one). */
    snprintf(path, sizeof path, "%s/full.db", t->tmpdir);
    snprintf(args, sizeof args, "sweep configs/sweeps/oversub.cfg --db %s", path);
    CHECK_INT(test_run_fsize(t, 2048, args, &out, &err), 4);
    CHECK(strstr(err, path) != NULL);
    CHECK(access(path, F_OK) != 0);
    free(out);
    free(err);

    /* --resume without --db is a usage error. */
    CHECK_INT(test_run(t, RUN_ARGS " --resume", &out, &err), 2);
    free(out);
    free(err);
}

/* Whether the database at path is in WAL mode. */
static bool
in_wal_mode(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    bool wal = false;

    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        wal = strcmp((const char *)sqlite3_column_text(q, 0), "wal") == 0;
    sqlite3_finalize(q);
    sqlite3_close(db);
    return wal;
}

/* A new database (pfs_store_create) is there whole at the end or not at all, and is the
 * database that writing into an existing one makes:
 * - `run --db` to a new path and to an existing, empty pfisim database give the same rows
 *   (dump), both in WAL mode, and no temporary file is left beside the new one;
 * - a disk that fills while the second of two runs is stored (every file limited to half a
 *   run more than the first run's database): exit 4, and no database at the path, where the
 *   store of every run in its own transaction left the first run's rows there;
 * - under --resume, which exists to keep what an interrupted run stored, the first run's
 *   rows stay;
 * - `merge` into a new file whose disk fills at its second shard: no file either;
 * - two commands making one new database at once: both exit 0 and it holds both runs (the
 *   one that finishes second finds the file there and merges its runs into it). */
void
test_store_new_whole(struct test *t)
{
    const char *bin = getenv("PFISIM_BIN");
    char a[300], b[300], args[1200], cmd[2400], *out, *err, *da = NULL, *db_text = NULL;
    struct pfs_store *st = NULL;
    struct pfs_diag d = {0};
    sqlite3 *db = NULL;
    struct stat sb;
    long one;

    if (!bin || !*bin)
        bin = "build/pfisim";
    snprintf(a, sizeof a, "%s/new/r.db", t->tmpdir);
    snprintf(b, sizeof b, "%s/old/r.db", t->tmpdir);
    CHECK_INT(pfs_store_open(b, &st, &d), 0); /* (the old way: made in place) */
    pfs_store_close(st);
    snprintf(args, sizeof args, RUN_ARGS " --db %s", a);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, RUN_ARGS " --db %s", b);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    for (int k = 0; k < 2; k++) {
        db = NULL;
        CHECK(sqlite3_open_v2(k ? b : a, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
        *(k ? &db_text : &da) = dump(db);
        CHECK_INT(test_query_long(db, "SELECT count(*) FROM run"), 2);
        sqlite3_close(db);
        CHECK(in_wal_mode(k ? b : a));
    }
    CHECK(da && db_text && strlen(da) > 1000 && strcmp(da, db_text) == 0);
    free(da);
    free(db_text);
    snprintf(cmd, sizeof cmd, "%s/new", t->tmpdir);
    CHECK(!test_leftover_tmp(cmd));

    /* One run's database, and a limit half a run above it for two. */
    snprintf(a, sizeof a, "%s/one.db", t->tmpdir);
    snprintf(args, sizeof args, "run --days 2 --policy equal --csv --db %s", a);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    CHECK(stat(a, &sb) == 0);
    one = (long)sb.st_size;
    for (int resume = 0; resume < 2; resume++) {
        snprintf(a, sizeof a, "%s/full-%d.db", t->tmpdir, resume);
        snprintf(args, sizeof args,
                 "run --days 2 --policy equal --policy pfi --threads 1 --db %s%s", a,
                 resume ? " --resume" : "");
        CHECK_INT(test_run_fsize(t, one + one / 2, args, &out, &err), 4);
        CHECK(strstr(err, a) != NULL);
        free(out);
        free(err);
        CHECK(!test_leftover_tmp(t->tmpdir));
        if (!resume) {
            CHECK(access(a, F_OK) != 0);
            continue;
        }
        db = NULL;
        CHECK(sqlite3_open_v2(a, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
        CHECK_INT(test_query_long(db, "SELECT count(*) FROM run WHERE policy = 'equal'"), 1);
        sqlite3_close(db);
    }
    /* merge into a new file, the disk full at the second shard: none either */
    snprintf(b, sizeof b, "%s/merged.db", t->tmpdir);
    snprintf(args, sizeof args, "merge %s %s/one.db %s/new/r.db", b, t->tmpdir, t->tmpdir);
    CHECK_INT(test_run_fsize(t, one + one / 2, args, &out, &err), 4);
    free(out);
    free(err);
    CHECK(access(b, F_OK) != 0);
    CHECK(!test_leftover_tmp(t->tmpdir));

    /* Two at once. */
    snprintf(a, sizeof a, "%s/both.db", t->tmpdir);
    snprintf(cmd, sizeof cmd,
             "%s run --days 1 --policy equal --db %s >/dev/null 2>&1 & e=$!; "
             "%s run --days 1 --policy pfi --db %s >/dev/null 2>&1 & p=$!; "
             "wait $e && wait $p",
             bin, a, bin, a);
    CHECK_INT(system(cmd), 0);
    db = NULL;
    CHECK(sqlite3_open_v2(a, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_INT(test_query_long(db, "SELECT count(DISTINCT policy) FROM run"), 2);
    CHECK_INT(test_query_long(db, "SELECT count(DISTINCT run_id) FROM job_result"), 2);
    sqlite3_close(db);
    CHECK(!test_leftover_tmp(t->tmpdir));
}

/* Two writers creating one new database at once (two shards of a sweep): before, a second
 * writer could find the tables half-made and refuse the file as "not a pfisim results
 * database". Each try releases two processes together through a pipe; both must open it. */
void
test_store_concurrent_create(struct test *t)
{
    int failures = 0, tries = 24;

    for (int k = 0; k < tries; k++) {
        char path[400];
        int go[2];
        pid_t pid[2];

        snprintf(path, sizeof path, "%s/race-%d.db", t->tmpdir, k);
        if (pipe(go) != 0) {
            CHECK(false);
            return;
        }
        for (int w = 0; w < 2; w++) {
            if ((pid[w] = fork()) == 0) {
                struct pfs_store *st = NULL;
                struct pfs_diag d = {0};
                char c;
                int rc;

                close(go[1]);
                if (read(go[0], &c, 1) < 0)
                    _exit(2);
                rc = pfs_store_open(path, &st, &d);
                if (rc)
                    fprintf(stderr, "  writer %d, try %d: %s\n", w, k, d.message);
                pfs_store_close(st);
                _exit(rc ? 1 : 0);
            }
        }
        close(go[0]);
        close(go[1]); /* both released at once: read() returns 0 */
        for (int w = 0; w < 2; w++) {
            int status = -1;

            if (pid[w] <= 0 || waitpid(pid[w], &status, 0) != pid[w] || !WIFEXITED(status) ||
                WEXITSTATUS(status) != 0)
                failures++;
        }
        {
            sqlite3 *db = NULL;

            CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
            CHECK_INT(test_query_long(db, "SELECT count(*) FROM pfisim_meta"), 2);
            sqlite3_close(db);
        }
    }
    CHECK_INT(failures, 0);
}

/* A finished database on read-only media (WAL mode, no -shm beside it and no way to make
 * one) was refused as "not a results database". The folder is made read-only and, since
 * root ignores permissions, the reader runs as nobody then. */
void
test_store_read_only_media(struct test *t)
{
    char base[] = "/tmp/pfisim-ro-XXXXXX", dir[300], db[400], args[1200], *out, *err;
    const char *bin =
        getenv("PFISIM_BIN") && *getenv("PFISIM_BIN") ? getenv("PFISIM_BIN") : "build/pfisim";
    char abs_bin[PATH_MAX];
    pid_t pid;
    int status = -1;

    if (!mkdtemp(base) || !realpath(bin, abs_bin)) {
        CHECK(false);
        return;
    }
    snprintf(dir, sizeof dir, "%s/media", base);
    snprintf(db, sizeof db, "%s/r.db", dir);
    snprintf(args, sizeof args, RUN_ARGS " --db=%s", db);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "%s-shm", db);
    CHECK(access(args, F_OK) != 0); /* closed cleanly: no -shm, no -wal */
    CHECK(chmod(db, 0444) == 0 && chmod(dir, 0555) == 0 && chmod(base, 0755) == 0);
    if ((pid = fork()) == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(125);
        if (!freopen("/dev/null", "w", stdout))
            _exit(126);
        execl(abs_bin, "pfisim", "price", db, (char *)NULL);
        _exit(127);
    }
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        fprintf(stderr, "  (nobody cannot run %s)\n", abs_bin);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    snprintf(args, sizeof args, "%s-shm", db);
    CHECK(access(args, F_OK) != 0); /* nothing written beside it */
    chmod(dir, 0755);
    snprintf(args, sizeof args, "rm -rf '%s'", base);
    CHECK(system(args) == 0);
}

/* --resume after the corpus was edited skipped every run (the key was the scenario's text
 * alone, which names the files but not what they hold). Now the key covers the bytes of
 * every file read: an edit re-runs, an untouched copy elsewhere does not. */
void
test_store_key_covers_inputs(struct test *t)
{
    char corpus[400], cfg_text[600], args[1600], db[400], sql[600], *out, *err;
    const char *cfg;
    sqlite3 *h = NULL;

    snprintf(corpus, sizeof corpus, "%s/corpus", t->tmpdir);
    snprintf(db, sizeof db, "%s/k.db", t->tmpdir);
    snprintf(args, sizeof args, "cp -r traces/h200-h100 %s", corpus);
    CHECK(system(args) == 0);
    snprintf(cfg_text, sizeof cfg_text,
             "scenario = { name = \"k\"; workload = { corpus = \"%s\"; }; };\n", corpus);
    cfg = test_write(t, 0, "k.cfg", cfg_text);
    snprintf(args, sizeof args, "run %s --days 1 --policy equal --db=%s --resume", cfg, db);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(err, "skipped") == NULL);
    free(out);
    free(err);
    CHECK_INT(test_run(t, args, &out, &err), 0); /* nothing changed: skipped */
    CHECK(strstr(err, "skipped (--resume)") != NULL);
    free(out);
    free(err);

    /* One throughput of one curve point edited: the run is made again, as a new key. */
    snprintf(args, sizeof args,
             "sed -i '3s/^\\([^,]*,[^,]*,[^,]*,[^,]*,\\)[0-9.]*/\\11234.5/' %s/curves.csv", corpus);
    CHECK(system(args) == 0);
    snprintf(args, sizeof args, "run %s --days 1 --policy equal --db=%s --resume", cfg, db);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(err, "skipped") == NULL);
    free(out);
    free(err);
    CHECK(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_INT(test_query_long(h, "SELECT count(*) FROM run"), 2);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM scenario WHERE inputs LIKE '%% %s/curves.csv%%'", corpus);
    CHECK_INT(test_query_long(h, sql), 2); /* the files read are on record */
    sqlite3_close(h);

    /* The edit undone: the bytes are the first run's again, and so is the key. */
    snprintf(args, sizeof args, "cp traces/h200-h100/curves.csv %s/curves.csv", corpus);
    CHECK(system(args) == 0);
    snprintf(args, sizeof args, "run %s --days 1 --policy equal --db=%s --resume", cfg, db);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(err, "skipped (--resume)") != NULL);
    free(out);
    free(err);
}
