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
