/*
 * tests/test_plugins.c - policies from outside pfisim (issue 20; docs/policies.md, "Your own
 * policy"): the example plugin and the example program decide what the built-in equal does,
 * to the byte; every way a library or a program can be wrong gives its documented error and
 * exit status and leaves no output; policy-check tells a conforming policy from a broken one;
 * the JSON reader the protocol uses.
 *
 * They run the pfisim binary ($PFISIM_BIN): a plugin loaded into this test process would
 * stay in its registry for every later test. The plugins are built beside the binary
 * (make plugins: BIN_DIR/plugins/).
 */
#include <ctype.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static bool
have_python(void)
{
    return system("command -v python3 >/dev/null 2>&1") == 0;
}

/* The file at path with every whole-word name replaced by "equal" and any line holding
 * "peak_rss_mb" (the process's memory, not a result) dropped, into a malloc'd string. */
static char *
normalised(const char *path, const char *name)
{
    FILE *fp = fopen(path, "r");
    char line[8192], *out = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&out, &len);

    while (fp && mem && fgets(line, sizeof line, fp)) {
        size_t n = strlen(name);

        if (strstr(line, "peak_rss_mb"))
            continue;
        for (char *c = line; *c;) {
            if (strncmp(c, name, n) == 0 &&
                (c == line || !(c[-1] == '-' || isalnum((unsigned char)c[-1]))) &&
                !(c[n] == '-' || isalnum((unsigned char)c[n]))) {
                fputs("equal", mem);
                c += n;
            } else {
                fputc(*c++, mem);
            }
        }
    }
    if (fp)
        fclose(fp);
    if (mem)
        fclose(mem);
    return out;
}

/* Runs pfisim with args, expecting success, its standard output (the JSON report) saved as
 * json-TAG.txt in the test folder. */
static void
run_saving(struct test *t, const char *args, const char *tag)
{
    char path[600], *out, *err;
    FILE *fp;

    CHECK_INT(test_run(t, args, &out, &err), 0);
    snprintf(path, sizeof path, "%s/json-%s.txt", t->tmpdir, tag);
    if ((fp = fopen(path, "w")) != NULL) {
        fputs(out ? out : "", fp);
        fclose(fp);
    }
    free(out);
    free(err);
}

/* Runs the default scenario with policy name (added by opts) into json, time series and
 * jobs under tag, and checks each against the built-in equal's (tag "equal"). */
static void
same_as_equal(struct test *t, const char *opts, const char *name, const char *tag)
{
    static const char *const kinds[] = {"json", "ts", "jobs"};
    char args[1500];

    snprintf(args, sizeof args,
             "run %s --policy %s --json --timeseries-csv %s/ts-%s.csv --jobs-csv %s/jobs-%s.csv",
             opts, name, t->tmpdir, tag, t->tmpdir, tag);
    run_saving(t, args, tag);
    for (size_t k = 0; k < 3; k++) {
        char a[600], b[600];
        char *x, *y;

        snprintf(a, sizeof a, "%s/%s-equal.%s", t->tmpdir, kinds[k], k ? "csv" : "txt");
        snprintf(b, sizeof b, "%s/%s-%s.%s", t->tmpdir, kinds[k], tag, k ? "csv" : "txt");
        x = normalised(a, "equal");
        y = normalised(b, name);
        CHECK(x && y && strlen(x) > 100);
        if (x && y && strcmp(x, y) != 0)
            test_fail(t, __FILE__, __LINE__, "%s: %s differs from equal's", name, kinds[k]);
        free(x);
        free(y);
    }
}

void
test_plugin_equal_bytes(struct test *t)
{
    char so[600], opts[700], args[1500];

    if (!test_plugin("equal-plugin.so", so, sizeof so))
        SKIP("no plugins beside the binary (make plugins)");
    /* The built-in equal on the default scenario: a week on 1,024 GPUs, three DR events. */
    snprintf(args, sizeof args,
             "run --policy equal --json --timeseries-csv %s/ts-equal.csv --jobs-csv "
             "%s/jobs-equal.csv",
             t->tmpdir, t->tmpdir);
    run_saving(t, args, "equal");
    snprintf(opts, sizeof opts, "--policy-lib %s", so);
    same_as_equal(t, opts, "equal-plugin", "plugin");
    /* The Python program, standard library only. */
    if (!have_python())
        SKIP("no python3: the external program's half is not checked");
    same_as_equal(t, "--policy-exec 'python3 policies/examples/equal.py'", "equal-py", "python");
}

/* Runs args with outputs into the test folder, expecting exit code want and msg in stderr;
 * then checks that neither output file exists and the database holds no run. */
static void
fails_cleanly(struct test *t, const char *args, int want, const char *msg)
{
    char full[1800], path[600], *out, *err;
    sqlite3 *db = NULL;

    snprintf(full, sizeof full,
             "run %s/cap.cfg %s --jobs-csv %s/jobs.csv --timeseries-csv %s/ts.csv --db=%s/r.db",
             t->tmpdir, args, t->tmpdir, t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, full, &out, &err), want);
    if (!strstr(err, msg))
        test_fail(t, __FILE__, __LINE__, "%s: expected '%s' in: %s", args, msg, err);
    free(out);
    free(err);
    snprintf(path, sizeof path, "%s/jobs.csv", t->tmpdir);
    CHECK(access(path, F_OK) != 0);
    snprintf(path, sizeof path, "%s/ts.csv", t->tmpdir);
    CHECK(access(path, F_OK) != 0);
    snprintf(path, sizeof path, "%s/r.db", t->tmpdir);
    if (access(path, F_OK) == 0 && sqlite3_open(path, &db) == SQLITE_OK) {
        long runs = test_query_long(db, "SELECT count(*) FROM run");

        CHECK(runs <= 0); /* none, or no table at all */
    }
    sqlite3_close(db);
    CHECK(!test_leftover_tmp(t->tmpdir));
}

/* A scenario whose 150 kW cap binds from the first jobs on (256 H200s draw up to 183 kW):
 * every arrival and finish asks the policy. */
static void
cap_scenario(struct test *t)
{
    test_write(t, 0, "cap.cfg",
               "scenario = { duration_days = 0.5; facility = { gpus = 256; cap_w = 150000.0; };\n"
               "             dr_events = (); policies = [\"equal\"]; };\n");
}

void
test_plugin_library_errors(struct test *t)
{
    char so[600], args[1400];

    cap_scenario(t);
    if (!test_plugin("test-bad_abi.so", so, sizeof so))
        SKIP("no plugins beside the binary (make plugins)");
    snprintf(args, sizeof args, "--policy-lib %s", so);
    fails_cleanly(t, args, 3, "built for policy ABI 4; this pfisim speaks policy ABI 3 (and 2)");
    test_plugin("test-no_entry.so", so, sizeof so);
    snprintf(args, sizeof args, "--policy-lib %s", so);
    fails_cleanly(t, args, 3, "not a pfisim policy library: it exports no pfisim_policy_plugin()");
    fails_cleanly(t, "--policy-lib /nonexistent/mine.so", 3,
                  "/nonexistent/mine.so: error: cannot load the policy library: no such file");
    /* A library that calls what pfisim does not export to plugins: refused at load, the
     * symbol named (RTLD_NOW), not at its first decision. */
    test_plugin("test-undefined.so", so, sizeof so);
    snprintf(args, sizeof args, "--policy-lib %s", so);
    fails_cleanly(t, args, 3, "undefined symbol: pfs__level");
    /* Not a shared library at all: dlopen's own reason. */
    fails_cleanly(t, "--policy-lib configs/default.cfg", 3, "cannot load the policy library: ");
    /* A plugin that breaks the budget: the run's own check stops it mid-run. */
    test_plugin("test-broken.so", so, sizeof so);
    snprintf(args, sizeof args, "--policy-lib %s --policy over-budget", so);
    fails_cleanly(t, args, 1, "policy over-budget committed ");
    snprintf(args, sizeof args, "--policy-lib %s --policy sneaky-pause", so);
    fails_cleanly(t, args, 1, "or a pause it may not make");
    /* The information boundary: truth-seeker fails if its view holds the true curves. The
     * simulator's views and alloc's (which hands the oracle the truth) never give it them. */
    snprintf(args, sizeof args, "run %s/cap.cfg --policy-lib %s --policy truth-seeker --csv",
             t->tmpdir, so);
    {
        char *out, *err;

        CHECK_INT(test_run(t, args, &out, &err), 0);
        free(out);
        free(err);
        snprintf(args, sizeof args,
                 "alloc traces/h200-h100/curves.csv --cut 30%% --policy-lib %s --policy "
                 "truth-seeker --csv",
                 so);
        CHECK_INT(test_run(t, args, &out, &err), 0);
        CHECK(strstr(out, "\ntruth-seeker,") != NULL);
        free(out);
        free(err);
    }
    /* Names are checked: a plugin may not take a name twice (loading it twice adds nothing). */
    test_plugin("equal-plugin.so", so, sizeof so);
    snprintf(args, sizeof args, "--policy-lib %s --policy-lib %s --policy nosuch", so, so);
    fails_cleanly(t, args, 2, "unknown policy 'nosuch'");
}

void
test_plugin_program_errors(struct test *t)
{
    char args[900];

    cap_scenario(t);
    /* The handshake: not JSON, another protocol, no name. */
    test_write(t, 1, "p.sh", "read h; echo hello\n");
    snprintf(args, sizeof args, "--policy-exec 'sh %s/p.sh'", t->tmpdir);
    fails_cleanly(t, args, 3,
                  "the answer to the handshake is not JSON (byte 1: expected a value): hello");
    test_write(t, 1, "p.sh", "read h; echo '{\"protocol\":2,\"name\":\"future\"}'\n");
    fails_cleanly(t, args, 3, "it speaks protocol 2; this pfisim speaks protocol 1");
    test_write(t, 1, "p.sh", "read h; echo '{\"protocol\":1}'\n");
    fails_cleanly(t, args, 3, "expected \"name\": the policy's name");
    test_write(t, 1, "p.sh", "read h; echo '{\"protocol\":1,\"name\":\"equal\"}'\n");
    fails_cleanly(t, args, 3, "policy name 'equal' is taken (by pfisim's own policy)");
    /* Mid-run: garbage, silence past the timeout, an exit. */
    test_write(t, 1, "p.sh",
               "read h; echo '{\"protocol\":1,\"name\":\"mine\"}'\n"
               "while read l; do echo 'this is not json'; done\n");
    fails_cleanly(t, args, 1,
                  "the answer to decision 1 is not JSON (byte 1: expected a value): this is not "
                  "json");
    test_write(t, 1, "p.sh",
               "read h; echo '{\"protocol\":1,\"name\":\"mine\"}'\nread l; sleep 30\n");
    snprintf(args, sizeof args, "--policy-exec 'sh %s/p.sh' --policy-timeout 0.5", t->tmpdir);
    fails_cleanly(t, args, 1, "no answer to decision 1 within 0.5 s (killed; --policy-timeout)");
    test_write(t, 1, "p.sh", "read h; echo '{\"protocol\":1,\"name\":\"mine\"}'\nread l; exit 7\n");
    snprintf(args, sizeof args, "--policy-exec 'sh %s/p.sh'", t->tmpdir);
    fails_cleanly(t, args, 1, "exited with status 7 before answering decision 1");
    /* An answer for another decision, or of the wrong length. */
    test_write(t, 1, "p.sh",
               "read h; echo '{\"protocol\":1,\"name\":\"mine\"}'\n"
               "while read l; do echo '{\"decision\":5,\"cap_w\":[]}'; done\n");
    fails_cleanly(t, args, 1, "decision 1: the answer's \"decision\" is not 1");
    test_write(t, 1, "p.sh",
               "read h; echo '{\"protocol\":1,\"name\":\"mine\"}'\n"
               "while read l; do echo '{\"decision\":1,\"cap_w\":[700]}'; done\n");
    fails_cleanly(t, args, 1, "decision 1: expected \"cap_w\": an array of ");
    if (!have_python())
        SKIP("no python3: the over-budget program is not checked");
    /* Top caps whatever the budget. */
    test_write(t, 2, "greedy.py",
               "import json, sys\n"
               "sys.stdin.readline()\n"
               "print(json.dumps({'protocol': 1, 'name': 'greedy'}), flush=True)\n"
               "for line in iter(sys.stdin.readline, ''):\n"
               "    v = json.loads(line)\n"
               "    print(json.dumps({'decision': v['decision'],\n"
               "                      'cap_w': [j['max_w'] for j in v['jobs']]}), flush=True)\n");
    snprintf(args, sizeof args, "--policy-exec 'python3 %s/greedy.py'", t->tmpdir);
    fails_cleanly(t, args, 1, "decision 1: the caps commit ");
}

void
test_plugin_policy_check(struct test *t)
{
    char so[600], args[800], *out, *err;

    if (!test_plugin("equal-plugin.so", so, sizeof so))
        SKIP("no plugins beside the binary (make plugins)");
    snprintf(args, sizeof args, "policy-check --policy-lib %s --instances 100", so);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(out, "equal-plugin: conforms (100 instances") != NULL);
    free(out);
    free(err);
    test_plugin("test-broken.so", so, sizeof so);
    snprintf(args, sizeof args, "policy-check --policy-lib %s --instances 50 --csv", so);
    CHECK_INT(test_run(t, args, &out, &err), 1);
    /* over-budget breaks the budget and answers the infeasible budgets; sneaky-pause pauses
     * though it says it may not; both keep the limits. */
    CHECK(strstr(out, "over-budget,budget,50,") != NULL);
    CHECK(strstr(out, "over-budget,infeasible,10,10,") != NULL);
    CHECK(strstr(out, "over-budget,limits,50,0,") != NULL);
    CHECK(strstr(out, "sneaky-pause,pausing,50,50,") != NULL);
    free(out);
    free(err);
    /* The built-in policies, through the command. */
    CHECK_INT(
        test_run(t, "policy-check --policy equal --policy pause-greedy --instances 20", &out, &err),
        0);
    CHECK(strstr(out, "pause-greedy: conforms") != NULL);
    free(out);
    free(err);
    CHECK_INT(test_run(t, "policy-check", &out, &err), 2);
    CHECK(strstr(err, "nothing to check") != NULL);
    free(out);
    free(err);
    if (!have_python())
        SKIP("no python3");
    CHECK_INT(test_run(t,
                       "policy-check --policy-exec 'python3 policies/examples/equal.py' "
                       "--instances 50",
                       &out, &err),
              0);
    CHECK(strstr(out, "equal-py: conforms (50 instances") != NULL);
    free(out);
    free(err);
}

/* A scenario's policy_libs, found beside the scenario file. */
void
test_plugin_scenario_libs(struct test *t)
{
    char so[600], text[1200], args[1400], link[600], target[1200], cwd[512], *out, *err;

    if (!test_plugin("equal-plugin.so", so, sizeof so))
        SKIP("no plugins beside the binary (make plugins)");
    snprintf(link, sizeof link, "%s/mine.so", t->tmpdir);
    if (so[0] == '/' || !getcwd(cwd, sizeof cwd))
        pfs__strlcpy(target, so, sizeof target);
    else
        snprintf(target, sizeof target, "%s/%s", cwd, so);
    if (symlink(target, link) != 0) {
        test_fail(t, __FILE__, __LINE__, "symlink %s", link);
        return;
    }
    snprintf(text, sizeof text,
             "scenario = { duration_days = 0.5; facility = { gpus = 256; cap_w = 150000.0; };\n"
             "             dr_events = (); policy_libs = [\"mine.so\"];\n"
             "             policies = [\"equal\", \"equal-plugin\"]; };\n");
    test_write(t, 0, "s.cfg", text);
    snprintf(args, sizeof args, "run %s/s.cfg --csv --allow-plugins", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    {
        /* The two rows the same but for the name. */
        char *a = strstr(out, "\nequal,"), *b = strstr(out, "\nequal-plugin,");

        CHECK(a && b &&
              strncmp(strchr(a + 1, ','), strchr(b + 1, ','),
                      (size_t)(strchr(a + 1, '\n') - strchr(a + 1, ','))) == 0);
    }
    free(out);
    free(err);
    /* A sweep over the plugin's policy, two at a time: the base scenario's policy_libs load
     * before the policy axis is checked, and every worker sees the policy. */
    {
        char sw[400], dbp[600];
        sqlite3 *db = NULL;

        snprintf(sw, sizeof sw,
                 "sweep = { name = \"pl\"; scenario = \"s.cfg\"; axes = ( { setting = \"seed\"; "
                 "values = [1, 2]; }, { setting = \"policy\"; values = [\"equal\", "
                 "\"equal-plugin\"]; } ); };\n");
        test_write(t, 1, "sw.cfg", sw);
        snprintf(dbp, sizeof dbp, "%s/sw.db", t->tmpdir);
        snprintf(args, sizeof args, "sweep %s/sw.cfg -j 2 --db %s --allow-plugins", t->tmpdir, dbp);
        CHECK_INT(test_run(t, args, &out, &err), 0);
        free(out);
        free(err);
        if (sqlite3_open(dbp, &db) == SQLITE_OK) {
            CHECK_INT(test_query_long(db, "SELECT count(*) FROM run"), 4);
            /* each seed's two runs made the same tokens */
            CHECK_INT(test_query_long(db, "SELECT count(DISTINCT s.tokens) FROM run r "
                                          "JOIN summary s ON s.run_id = r.id"),
                      2);
        }
        sqlite3_close(db);
    }
    test_write(t, 0, "s.cfg",
               "scenario = { policy_libs = [\"nothere.so\"]; policies = [\"equal\"]; };\n");
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(strstr(err, "scenario.policy_libs") != NULL);
    CHECK(strstr(err, "nothere.so: cannot load the policy library: no such file") != NULL);
    free(out);
    free(err);
}

/* The protocol's JSON reader: values, numbers bit for bit, strings with their escapes, and
 * where it stops on bad text. */
void
test_json_reader(struct test *t)
{
    static const struct {
        const char *text;
        size_t at; /* 0: valid; else the 1-based byte it stops at */
        const char *why;
    } bad[] = {
        {"", 1, "expected a value"},
        {"{\"a\":1,}", 8, "expected a member name in quotes"},
        {"[1 2]", 4, "expected ',' or ']'"},
        {"NaN", 1, "expected a value"},
        {"01", 2, "text after the value"},
        {"1e999", 1, "a number out of range"},
        {"\"a\\x\"", 4, "an unknown escape in a string"},
        {"\"\\ud800\"", 7, "an unpaired surrogate in a \\u escape"},
        {"\"tab\there\"", 5, "a control character in a string"},
        {"{\"a\" 1}", 6, "expected ':' after a member name"},
        {"[1] x", 5, "text after the value"},
    };
    const char *text = " {\"decision\": 12, \"cap_w\": [700, 0.10000000000000001, -2.5e-3, 1E2],"
                       " \"s\": \"\\u00e9\\\"\\\\\\n\\ud83d\\ude00\", \"ok\": true, \"no\": null,"
                       " \"e\": {}} ";
    struct pfs__json_doc doc;
    const struct pfs__json *v, *m;
    const char *why;
    size_t at;
    char deep[200];

    CHECK_INT(pfs__json_parse(text, strlen(text), &doc, &at, &why), 0);
    CHECK_INT(doc.root->type, PFS__JSON_OBJECT);
    CHECK_INT(doc.root->n, 6);
    v = pfs__json_get(&doc, doc.root, "decision");
    CHECK(v && v->type == PFS__JSON_NUMBER && v->num >= 12 && v->num <= 12);
    v = pfs__json_get(&doc, doc.root, "cap_w");
    CHECK(v && v->type == PFS__JSON_ARRAY && v->n == 4);
    m = pfs__json_first(&doc, v);
    CHECK(m && m->num >= 700 && m->num <= 700);
    m = pfs__json_next(&doc, m);
    CHECK(m && memcmp(&m->num, &(double){0.1}, sizeof(double)) == 0); /* bit for bit */
    m = pfs__json_next(&doc, m);
    CHECK(m && memcmp(&m->num, &(double){-0.0025}, sizeof(double)) == 0);
    m = pfs__json_next(&doc, m);
    CHECK(m && m->num >= 100 && m->num <= 100 && !pfs__json_next(&doc, m));
    v = pfs__json_get(&doc, doc.root, "s");
    CHECK(v && strcmp(pfs__json_str(&doc, v), "\xc3\xa9\"\\\n\xf0\x9f\x98\x80") == 0);
    v = pfs__json_get(&doc, doc.root, "ok");
    CHECK(v && v->type == PFS__JSON_BOOL && v->num > 0);
    CHECK(pfs__json_get(&doc, doc.root, "no")->type == PFS__JSON_NULL);
    CHECK(pfs__json_get(&doc, doc.root, "e")->n == 0);
    CHECK(pfs__json_get(&doc, doc.root, "missing") == NULL);
    pfs__json_free(&doc);
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        why = NULL;
        at = 0;
        CHECK_INT(pfs__json_parse(bad[k].text, strlen(bad[k].text), &doc, &at, &why), PFS_EINVAL);
        if (!why || strcmp(why, bad[k].why) != 0 || at + 1 != bad[k].at)
            test_fail(t, __FILE__, __LINE__, "'%s': byte %zu '%s', expected byte %zu '%s'",
                      bad[k].text, at + 1, why ? why : "", bad[k].at, bad[k].why);
    }
    /* Nesting: 64 deep reads, 65 does not. */
    memset(deep, '[', 64);
    memset(deep + 64, ']', 64);
    CHECK_INT(pfs__json_parse(deep, 128, &doc, &at, &why), 0);
    pfs__json_free(&doc);
    memset(deep, '[', 65);
    memset(deep + 65, ']', 65);
    CHECK_INT(pfs__json_parse(deep, 130, &doc, &at, &why), PFS_EINVAL);
    CHECK(strcmp(why, "nested more than 64 deep") == 0);
}
