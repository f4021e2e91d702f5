/*
 * tests/test_workbench.c - issue 18: pfisim as a planner meets it, installed anywhere and
 * driven from the command line (docs/scenarios.md, docs/pfisim.1).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "test.h"

/* `make install DESTDIR=... PREFIX=/usr`, then the installed binary runs the default
 * scenario and a shipped scenario file from / (before: "traces/h200-h100/curves.csv: error:
 * cannot open", every path being relative to the current folder and nothing installed). */
void
test_install_destdir(struct test *t)
{
    const char *bin =
        getenv("PFISIM_BIN") && *getenv("PFISIM_BIN") ? getenv("PFISIM_BIN") : "build/pfisim";
    char build[400], cmd[4000], dest[400], *slash;
    FILE *fp;
    char line[400] = "";
    int st;

    pfs__strlcpy(build, bin, sizeof build);
    if ((slash = strrchr(build, '/')) != NULL)
        *slash = '\0';
    snprintf(dest, sizeof dest, "%s/dest", t->tmpdir);
    snprintf(cmd, sizeof cmd,
             "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s install DESTDIR=%s PREFIX=/usr "
             "BUILD=%s >%s/make.log 2>&1",
             dest, build, t->tmpdir);
    st = system(cmd);
    CHECK(st == 0);
    if (st != 0)
        return;
    snprintf(cmd, sizeof cmd, "%s/usr/share/pfisim/traces/h200-h100/curves.csv", dest);
    CHECK(access(cmd, R_OK) == 0);
    snprintf(cmd, sizeof cmd,
             "cd / && env -u PFISIM_SHARE %s/usr/bin/pfisim run --days 1 --policy equal 2>&1",
             dest);
    CHECK((fp = popen(cmd, "r")) != NULL);
    if (fp) {
        CHECK(fgets(line, sizeof line, fp) != NULL);
        CHECK(strncmp(line, "scenario default: 1024 GPUs", 27) == 0);
        while (fgets(line, sizeof line, fp))
            ;
        CHECK(pclose(fp) == 0);
    }
    snprintf(cmd, sizeof cmd,
             "cd / && env -u PFISIM_SHARE %s/usr/bin/pfisim run "
             "%s/usr/share/pfisim/configs/default.cfg --days 1 --policy equal >/dev/null 2>&1",
             dest, dest);
    CHECK(system(cmd) == 0);
    /* A policy built outside pfisim against the installed header alone (issue 20): the
     * shipped example, compiled with nothing else, loads into the installed binary and keeps
     * every rule. */
    snprintf(cmd, sizeof cmd,
             "cc -std=c11 -Wall -Werror -shared -fPIC -I%s/usr/include -o %s/mine.so "
             "%s/usr/share/pfisim/policies/examples/equal_plugin.c >%s/cc.log 2>&1 && "
             "cd / && %s/usr/bin/pfisim policy-check --policy-lib %s/mine.so --instances 20 "
             ">%s/check.log 2>&1",
             dest, t->tmpdir, dest, t->tmpdir, dest, t->tmpdir, t->tmpdir);
    CHECK(system(cmd) == 0);
}

/* A scenario's relative paths are found beside it: a workload file next to the scenario
 * runs whatever the current folder (before, only relative to the current folder). */
void
test_paths_beside_scenario(struct test *t)
{
    char args[1200], *out, *err;

    test_write(t, 0, "w.csv",
               "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier\n"
               "a,0,h200-001,1,1e9,86400,firm\n"
               "b,60,h200-002,2,1e9,86400,flex1\n");
    test_write(t, 1, "s.cfg",
               "scenario = { name = \"beside\"; duration_days = 0.5;\n"
               "  workload = { file = \"w.csv\"; }; };\n");
    snprintf(args, sizeof args, "run %s/s.cfg --policy equal", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(out, "scenario beside:") && strstr(out, "2 jobs"));
    free(out);
    free(err);
    /* the same from another folder, the corpus default found among the shipped files */
    snprintf(args, sizeof args, "run %s/s.cfg --policy equal", t->tmpdir);
    {
        char cmd[PATH_MAX + 3000];
        const char *bin =
            getenv("PFISIM_BIN") && *getenv("PFISIM_BIN") ? getenv("PFISIM_BIN") : "build/pfisim";
        char abs_bin[PATH_MAX];

        CHECK(realpath(bin, abs_bin) != NULL);
        snprintf(cmd, sizeof cmd, "cd %s && %s %s >/dev/null 2>&1", t->tmpdir, abs_bin, args);
        CHECK(system(cmd) == 0);
    }
}

/* Every option that takes a value takes it both ways; --policy takes a comma list; unknown
 * names say the nearest known one (before: --db FILE failed with "cannot read the file",
 * and "run cfg --db x.db" with "expected at most one scenario file"). */
void
test_option_forms(struct test *t)
{
    char args[1200], db[3][400], *out, *err;
    const char *cfg = test_write(t, 0, "s.cfg", "scenario = { name = \"forms\"; };\n");

    for (int k = 0; k < 3; k++)
        snprintf(db[k], sizeof db[k], "%s/%d/r.db", t->tmpdir, k); /* one study name */
    snprintf(args, sizeof args, "run --days 0.5 --policy equal --db %s", db[0]);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "run --days=0.5 --policy=equal --db=%s", db[1]);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "run %s --days 0.5 --db %s --policy equal,pfi", cfg, db[2]);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(out, "scenario forms:") && strstr(out, "\nequal ") && strstr(out, "\npfi "));
    free(out);
    free(err);
    for (int k = 0; k < 3; k++)
        CHECK(access(db[k], R_OK) == 0);
    CHECK(test_same_file(db[0], db[1])); /* the same run, the same bytes */

    CHECK_INT(test_run(t, "run --days 0.5 --policy pfii", &out, &err), 2);
    CHECK(strstr(err, "did you mean 'pfi'?") != NULL);
    free(out);
    free(err);
    CHECK_INT(test_run(t, "gpu", &out, &err), 2);
    CHECK(strstr(err, "did you mean 'gpus'?") != NULL);
    free(out);
    free(err);
    cfg = test_write(t, 0, "g.cfg", "scenario = {\n  facility = { gpu = \"h100\"; };\n};\n");
    snprintf(args, sizeof args, "run %s", cfg);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(strstr(err, "g.cfg:2:") && strstr(err, "did you mean 'h100-sxm'?"));
    free(out);
    free(err);
    cfg = test_write(t, 0, "p.cfg", "scenario = {\n  polices = [\"pfi\"];\n};\n");
    snprintf(args, sizeof args, "run %s", cfg);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(strstr(err, "p.cfg:2:") && strstr(err, "did you mean 'policies'?"));
    free(out);
    free(err);
    CHECK_INT(test_run(t, "help --help", &out, &err), 0);
    CHECK(strstr(out, "usage: pfisim") != NULL);
    free(out);
    free(err);
}

/* Settings with units as a person writes them (before: `25%` a bare syntax error, and no
 * string taken for a number): the same results as the plain numbers, and a unit that does
 * not suit the setting refused at its line. */
void
test_units_in_scenarios(struct test *t)
{
    char args[1200], *with, *plain, *err;
    const char *a = test_write(t, 0, "units.cfg",
                               "scenario = { name = \"u\"; duration_days = \"36 h\";\n"
                               "  facility = { cap_w = \"1.3 MW\"; };\n"
                               "  dr_events = ( { start_h = \"1 d\"; end_h = \"1620 min\";\n"
                               "                  ramp_min = \"900 s\"; cut = \"25%\"; } );\n"
                               "  control = { cadence_s = \"5 min\"; };\n"
                               "  workload = { load = \"90%\"; }; };\n");
    const char *b = test_write(t, 1, "plain.cfg",
                               "scenario = { name = \"u\"; duration_days = 1.5;\n"
                               "  facility = { cap_w = 1300000.0; };\n"
                               "  dr_events = ( { start_h = 24.0; end_h = 27.0;\n"
                               "                  ramp_min = 15.0; cut = 0.25; } );\n"
                               "  control = { cadence_s = 300.0; };\n"
                               "  workload = { load = 0.9; }; };\n");

    snprintf(args, sizeof args, "run %s --policy equal,pfi --csv", a);
    CHECK_INT(test_run(t, args, &with, &err), 0);
    free(err);
    snprintf(args, sizeof args, "run %s --policy equal,pfi --csv", b);
    CHECK_INT(test_run(t, args, &plain, &err), 0);
    free(err);
    CHECK(with && plain && strlen(with) > 100);
    if (with && plain)
        CHECK_STR(with, plain);
    free(with);
    free(plain);

    a = test_write(t, 0, "bad.cfg",
                   "scenario = {\n  dr_events = ( { start_h = 30.0; end_h = 33.0;\n"
                   "    cut = \"25 kW\"; } );\n};\n");
    snprintf(args, sizeof args, "run %s", a);
    CHECK_INT(test_run(t, args, &with, &err), 3);
    CHECK(strstr(err, "bad.cfg:3:") && strstr(err, "dr_events.[0].cut: '25 kW'") &&
          strstr(err, "percent"));
    free(with);
    free(err);
    /* unquoted, libconfig's syntax error, with how to write it */
    a = test_write(t, 0, "bad.cfg", "scenario = {\n  facility = { cap_w = 5 MW; };\n};\n");
    snprintf(args, sizeof args, "run %s", a);
    CHECK_INT(test_run(t, args, &with, &err), 3);
    CHECK(strstr(err, "bad.cfg:2:") && strstr(err, "goes in quotes"));
    free(with);
    free(err);
    a = test_write(t, 0, "bad.cfg", "scenario = {\n  facility = { pue = \"1.3 W\"; };\n};\n");
    snprintf(args, sizeof args, "run %s", a);
    CHECK_INT(test_run(t, args, &with, &err), 3);
    CHECK(strstr(err, "bad.cfg:2:") && strstr(err, "takes no unit"));
    free(with);
    free(err);
    a = test_write(t, 0, "bad.cfg", "scenario = {\n  facility = { cap_w = \"5 MWh\"; };\n};\n");
    snprintf(args, sizeof args, "run %s", a);
    CHECK_INT(test_run(t, args, &with, &err), 3);
    CHECK(strstr(err, "bad.cfg:2:") && strstr(err, "expected watts"));
    free(with);
    free(err);
}

/* pfisim check: a valid scenario in words, with the cap that can never bind called out.
 * The default facility: 1,024 H200s at 700 W and 128 nodes of 1,500 W other draw, PUE 1.3:
 * at most 1.3 x (716,800 + 192,000) = 1,181,440 W; idle 1.3 x (1,024 x 75 + 192,000). */
void
test_check_command(struct test *t)
{
    char args[1200], *out, *err;
    const char *cfg = test_write(t, 0, "cap.cfg",
                                 "scenario = { name = \"loose\"; facility = { cap_w = \"1.2 MW\"; "
                                 "}; };\n");

    snprintf(args, sizeof args, "check %s --json", cfg);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(out, "\"peak_w\": 1181440,") != NULL);
    CHECK(strstr(out, "\"idle_w\": 349440,") != NULL);
    CHECK(strstr(out, "\"cap_can_bind\": false") && strstr(out, "can never bind"));
    free(out);
    free(err);
    cfg = test_write(t, 0, "cap.cfg",
                     "scenario = { name = \"tight\"; facility = { cap_w = \"1.1 MW\"; }; };\n");
    snprintf(args, sizeof args, "check %s", cfg);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(out, "scenario tight: valid.") && strstr(out, "it binds when"));
    CHECK(strstr(out, "warning") == NULL);
    CHECK(strstr(out, "DR events inside the run: 3.") != NULL);
    free(out);
    free(err);
    /* A DR event whose every level is an absolute target at or above that most: it can never
     * bind and counts as met (before, check said nothing). A level 440 W under it binds, as
     * does a cut among its steps. */
    {
        static const struct {
            const char *event;
            bool warned;
        } c[] = {
            {"target_w = 1181440.0;", true},
            {"target_w = 1181000.0;", false},
            {"steps = ( { at_min = 0.0; target_w = 2e6; }, { at_min = 60.0; target_w = 1.5e6; } );",
             true},
            {"steps = ( { at_min = 0.0; target_w = 2e6; }, { at_min = 60.0; cut = 0.1; } );",
             false},
        };

        for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
            char text[400];

            snprintf(text, sizeof text,
                     "scenario = { duration_days = 1.0; dr_events = ( { start_h = 18.0; end_h = "
                     "21.0; %s } ); };\n",
                     c[k].event);
            snprintf(args, sizeof args, "check %s", test_write(t, 0, "ev.cfg", text));
            CHECK_INT(test_run(t, args, &out, &err), 0);
            if (!out ||
                (strstr(out, "it can never bind, and counts as met") != NULL) != c[k].warned)
                test_fail(t, __FILE__, __LINE__, "case %zu: %s", k, out);
            if (k == 2)
                CHECK(strstr(out, "event 1 asks for no less than 1.5 MW, at or above the most the "
                                  "facility can draw (1.181 MW)"));
            free(out);
            free(err);
        }
    }
    cfg = test_write(t, 0, "cap.cfg", "scenario = {\n facility = { cap_w = -1.0; };\n};\n");
    snprintf(args, sizeof args, "check %s", cfg);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(strstr(err, "cap.cfg:2:") != NULL);
    free(out);
    free(err);
}

/* Reads a whole file (malloc'd; NULL when it cannot). */
static char *
read_all(const char *path)
{
    FILE *fp = fopen(path, "rb");
    char *buf = NULL;
    long n;

    if (!fp)
        return NULL;
    if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) != NULL) {
        size_t got = fread(buf, 1, (size_t)n, fp);

        buf[got] = '\0';
    }
    fclose(fp);
    return buf;
}

/* One source for help: every long option in a command's getopt table (in the sim/cli/ sources,
 * the table followed by its command's pfs_cli_usage("NAME", ...)) appears in that
 * command's --help and in the man page; every command appears in the man page. */
void
test_help_man_consistent(struct test *t)
{
    char files[64][300];
    size_t n_files = 0;
    char *man = read_all("docs/pfisim.1"), *list, *err;
    int checked = 0;

    DIR *dir = opendir("sim/cli");
    struct dirent *de;

    CHECK(man != NULL && dir != NULL);
    while (dir && (de = readdir(dir)) != NULL && n_files < 64) {
        size_t len = strlen(de->d_name);

        if (len > 2 && strcmp(de->d_name + len - 2, ".c") == 0)
            snprintf(files[n_files++], sizeof files[0], "sim/cli/%s", de->d_name);
    }
    if (dir)
        closedir(dir);
    if (!man)
        return;
    /* the man page writes - as \- */
    for (char *r = man, *w = man;; r++) {
        if (r[0] == '\\' && r[1] == '-')
            r++;
        if (!(*w++ = *r))
            break;
    }
    for (size_t f = 0; f < n_files; f++) {
        char *src = read_all(files[f]);

        CHECK(src != NULL);
        for (char *tab = src; src && (tab = strstr(tab, "static const struct option"));) {
            char *end = strstr(tab, "{0, 0, 0, 0}"), *use, cmd[32] = "", args[64];
            char *help = NULL, *herr = NULL;

            if (!end)
                break;
            use = strstr(end, "pfs_cli_usage(\"");
            if (use)
                sscanf(use + 15, "%31[^\"]", cmd);
            snprintf(args, sizeof args, "%s --help", cmd);
            CHECK(cmd[0] && test_run(t, args, &help, &herr) == 0);
            for (char *o = tab; help && (o = strstr(o, "{\"")) && o < end; o += 2) {
                char name[40], flag[48];

                if (sscanf(o + 2, "%39[a-z0-9-]", name) != 1 || strcmp(name, "help") == 0)
                    continue;
                snprintf(flag, sizeof flag, "--%s", name);
                if (!strstr(help, flag))
                    test_fail(t, __FILE__, __LINE__, "pfisim %s --help lacks %s", cmd, flag);
                if (!strstr(man, flag))
                    test_fail(t, __FILE__, __LINE__, "the man page lacks %s of %s", flag, cmd);
                checked++;
            }
            free(help);
            free(herr);
            tab = end;
        }
        free(src);
    }
    CHECK(checked > 80);
    /* every command of pfisim --help has its entry */
    CHECK_INT(test_run(t, "--help", &list, &err), 0);
    for (char *l = strstr(list, "Commands:\n"); l && (l = strstr(l, "\n  ")); l += 3) {
        char name[32], entry[48];

        if (sscanf(l + 3, "%31s", name) != 1)
            continue;
        snprintf(entry, sizeof entry, ".B %s", name);
        if (!strstr(man, entry))
            test_fail(t, __FILE__, __LINE__, "the man page has no entry for %s", name);
    }
    free(list);
    free(err);
    free(man);
}

/* Progress within a run on a terminal (simulated days, events a second, time left), and
 * none on a pipe: scripts and logs get only the results. The terminal is a pseudo-terminal
 * made by script(1) (util-linux); without it the test skips. */
void
test_progress_tty_only(struct test *t)
{
    const char *bin =
        getenv("PFISIM_BIN") && *getenv("PFISIM_BIN") ? getenv("PFISIM_BIN") : "build/pfisim";
    char cmd[1200], *out, *err;

    if (system("command -v script >/dev/null 2>&1") != 0)
        SKIP("script(1) is not installed (util-linux): no pseudo-terminal to test on");
    snprintf(cmd, sizeof cmd, "script -qec '%s run --days 1 --policy equal' /dev/null > %s/tty",
             bin, t->tmpdir);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof cmd, "%s/tty", t->tmpdir);
    out = read_all(cmd);
    CHECK(out && strstr(out, "simulated days") && strstr(out, "events/s") && strstr(out, "left"));
    free(out);
    CHECK_INT(test_run(t, "run --days 1 --policy equal", &out, &err), 0);
    CHECK(strstr(err, "simulated days") == NULL && strstr(out, "simulated days") == NULL);
    CHECK(err[0] == '\0');
    free(out);
    free(err);
}

/* The number after "key": in a JSON text (NAN when absent). */
static double
json_number(const char *text, const char *key)
{
    char k[64];
    const char *p;

    snprintf(k, sizeof k, "\"%s\": ", key);
    p = strstr(text, k);
    return p ? strtod(p + strlen(k), NULL) : (double)NAN;
}

/* --json on run, alloc, price and check: one document each (valid JSON, checked by
 * python3's parser where it is installed), holding the numbers the CSV output holds. */
void
test_json_outputs(struct test *t)
{
    static const char *const cmds[] = {"run --days 1 --policy pfi",
                                       "alloc "
                                       "traces/h200-h100/"
                                       "curves.csv --cut 30%",
                                       "check"};
    char args[1200], *json, *csv, *err;
    bool have_python = system("python3 -c 'import json' >/dev/null 2>&1") == 0;

    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
        snprintf(args, sizeof args, "%s --json", cmds[k]);
        CHECK_INT(test_run(t, args, &json, &err), 0);
        test_write(t, 2, "doc.json", json ? json : "");
        CHECK(json && json[0] == '{');
        free(json);
        free(err);
        if (have_python) {
            snprintf(args, sizeof args, "python3 -m json.tool %s/doc.json >/dev/null", t->tmpdir);
            if (system(args) != 0)
                test_fail(t, __FILE__, __LINE__, "pfisim %s --json: not valid JSON", cmds[k]);
        }
    }
    CHECK_INT(test_run(t, "run --days 1 --policy pfi --json", &json, &err), 0);
    /* issue 16: the size of a run, reported; issue 54: on standard error, not in the JSON,
     * which is the same bytes every run */
    CHECK(strstr(err, "pfisim run: peak memory ") && strtod(strstr(err, "memory ") + 7, NULL) > 1);
    CHECK(strstr(json, "peak_rss_mb") == NULL);
    free(err);
    CHECK_INT(test_run(t, "run --days 1 --policy pfi --csv", &csv, &err), 0);
    free(err);
    {
        const char *row = strstr(csv, "\npfi,");

        CHECK(row != NULL);
        if (row)
            CHECK_NEAR(json_number(json, "tokens") / strtod(row + 5, NULL), 1, 1e-6);
    }
    free(json);
    free(csv);
    CHECK_INT(test_run(t, "alloc traces/h200-h100/curves.csv --cut 30% --json", &json, &err), 0);
    free(err);
    CHECK_INT(test_run(t, "alloc traces/h200-h100/curves.csv --budget-w 901.6kW --csv", &csv, &err),
              0); /* 70% of the corpus's 1,288 kW reference: the same budget, with a unit */
    free(err);
    CHECK_NEAR(json_number(json, "budget_w"), 901600, 1e-6);
    {
        const char *row = strstr(csv, "\nequal,");

        CHECK(row != NULL);
        if (row)
            CHECK_NEAR(json_number(json, "total_throughput") / strtod(row + 7, NULL), 1, 1e-5);
    }
    free(json);
    free(csv);
    /* price, from a database of one run */
    snprintf(args, sizeof args, "run --days 1 --policy equal --db %s/p.db", t->tmpdir);
    CHECK_INT(test_run(t, args, &json, &err), 0);
    free(json);
    free(err);
    snprintf(args, sizeof args, "price %s/p.db --json", t->tmpdir);
    CHECK_INT(test_run(t, args, &json, &err), 0);
    CHECK(strstr(json, "\"policy\": \"equal\"") && strstr(json, "\"tier\": \"firm\""));
    free(err);
    snprintf(args, sizeof args, "price %s/p.db --csv", t->tmpdir);
    CHECK_INT(test_run(t, args, &csv, &err), 0);
    free(err);
    {
        const char *row = strstr(csv, ",firm,");

        CHECK(row != NULL);
        if (row)
            CHECK_NEAR(json_number(json, "jobs"), strtod(row + 6, NULL), 0);
    }
    free(json);
    free(csv);
}

/* pfisim capacity: its table is the runs' own numbers, each size's tokens a day what
 * pfisim run gives for that size alone (an independent run of the same scenario). */
void
test_capacity_command(struct test *t)
{
    char args[1400], *out, *err, *run;
    const char *cfg = test_write(t, 0, "cap.cfg",
                                 "scenario = { name = \"cap\"; duration_days = 1.0;\n"
                                 "  facility = { cap_w = \"0.3 MW\"; }; dr_events = ();\n"
                                 "  dr_generator = { per_year = 0.0; warmup_h = 0.0;\n"
                                 "    duration_h = [2.0, 2.0]; notice_h = [1.0, 1.0]; }; };\n");
    const char *one = test_write(t, 1, "one.cfg",
                                 "scenario = { name = \"cap\"; duration_days = 1.0;\n"
                                 "  facility = { gpus = 384; cap_w = \"0.3 MW\"; };\n"
                                 "  dr_events = (); };\n");

    snprintf(args, sizeof args,
             "capacity %s --gpus 256..512:128 --policy equal,pfi --plot %s/c.png", cfg, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(err, "6 runs (3 sizes, 1 DR frequency, 1 seed, 2 policies)") != NULL);
    CHECK(strstr(out, "pfi: the most tokens a day at") != NULL);
    snprintf(args, sizeof args, "%s/c.png", t->tmpdir);
    test_check_png(t, args, 900, 520);
    free(err);
    snprintf(args, sizeof args, "run %s --policy pfi --csv", one);
    CHECK_INT(test_run(t, args, &run, &err), 0);
    free(err);
    {
        const char *row = strstr(run, "\npfi,"), *cell = strstr(out, "    384 pfi ");
        double tokens = row ? strtod(row + 5, NULL) : (double)NAN;
        double per_day = cell ? strtod(cell + 12, NULL) : (double)NAN;

        CHECK(row && cell);
        CHECK_NEAR(per_day / tokens, 1, 1e-3); /* one day: tokens a day are its tokens */
    }
    free(run);
    free(out);
    snprintf(args, sizeof args, "capacity %s --gpus 256 --dr-per-year 2000", cfg);
    CHECK_INT(test_run(t, args, &out, &err), 2);
    free(out);
    free(err);
    /* Seeds step by one (a range of sizes by about an eighth of it); more sizes than it
     * takes are refused, not cut short. */
    snprintf(args, sizeof args, "capacity %s --gpus 256 --seeds 1..20 --policy equal", cfg);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(err, "20 runs (1 sizes, 1 DR frequency, 20 seeds, 1 policy)") != NULL);
    free(out);
    free(err);
    snprintf(args, sizeof args, "capacity %s --gpus 8..1000:8", cfg);
    CHECK_INT(test_run(t, args, &out, &err), 2);
    CHECK(strstr(err, "--gpus takes") != NULL);
    free(out);
    free(err);
}

/* The Python snippets of docs/results.md ("Reading it from Python") run, in order, against
 * a database pfisim run --db wrote: each table as the docs say. Needs python3 and pandas
 * (Debian: python3-pandas); without them the test skips. */
void
test_results_python(struct test *t)
{
    char *doc = read_all("docs/results.md"), args[1400], script[400], *out, *err;
    const char *py = "python3";
    FILE *fp;

    /* python3 on the PATH, else the system's (a pyenv or venv python3 may lack pandas) */
    if (system("python3 -c 'import pandas' >/dev/null 2>&1") != 0)
        py = "/usr/bin/python3";
    if (strcmp(py, "python3") != 0 &&
        system("/usr/bin/python3 -c 'import pandas' >/dev/null 2>&1") != 0) {
        free(doc);
        SKIP("python3 with pandas is not installed (Debian: python3-pandas)");
    }
    CHECK(doc != NULL);
    if (!doc)
        return;
    snprintf(script, sizeof script, "%s/snippets.py", t->tmpdir);
    CHECK((fp = fopen(script, "w")) != NULL);
    if (!fp) {
        free(doc);
        return;
    }
    {
        int blocks = 0;

        for (char *b = doc; (b = strstr(b, "\n```python\n")); blocks++) {
            char *start = b + 11, *end = strstr(start, "\n```");

            if (!end)
                break;
            fwrite(start, 1, (size_t)(end - start) + 1, fp);
            b = end + 4;
        }
        CHECK(blocks >= 5);
    }
    fclose(fp);
    free(doc);
    snprintf(args, sizeof args,
             "run --days 2 --policy equal,pfi,oracle --seeds 1,2 --db %s/py.db >/dev/null",
             t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "PFISIM_DB=%s/py.db %s %s > %s/py.out 2>&1", t->tmpdir, py, script,
             t->tmpdir);
    if (system(args) != 0) {
        snprintf(args, sizeof args, "%s/py.out", t->tmpdir);
        out = read_all(args);
        test_fail(t, __FILE__, __LINE__, "the docs' Python failed:\n%s", out ? out : "");
        free(out);
        return;
    }
    snprintf(args, sizeof args, "%s/py.out", t->tmpdir);
    out = read_all(args);
    CHECK(out && strstr(out, "oracle") && strstr(out, "h200-sxm"));
    free(out);
}

/* A long run's power and throughput figures: one panel per DR event (an hour either side),
 * not weeks drawn solid. The default scenario for 15 days has its three events: two panels
 * across, two rows, 900 x (34 + 2 x 330) pixels. A week keeps the whole-run figure. */
void
test_event_panels(struct test *t)
{
    char args[1200], png[400], *out, *err;

    snprintf(args, sizeof args, "run --days 15 --policy equal,pfi --db %s/long.db", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "plot %s/long.db -o %s/long", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(png, sizeof png, "%s/long/power.png", t->tmpdir);
    test_check_png(t, png, 900, 34 + 2 * 330);
    snprintf(png, sizeof png, "%s/long/throughput.png", t->tmpdir);
    test_check_png(t, png, 900, 34 + 2 * 330);
    snprintf(args, sizeof args, "run --days 7 --policy equal --db %s/week.db", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "plot %s/week.db -o %s/week --only power", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(png, sizeof png, "%s/week/power.png", t->tmpdir);
    test_check_png(t, png, 900, 520);
    snprintf(args, sizeof args, "report %s/long.db -o %s/long.pdf", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
}
