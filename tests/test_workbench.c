/*
 * tests/test_workbench.c - issue 18: pfisim as a planner meets it, installed anywhere and
 * driven from the command line (docs/scenarios.md, docs/pfisim.1).
 */
#define _XOPEN_SOURCE 700 /* realpath */
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
    char build[400], cmd[2000], dest[400], *slash;
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
