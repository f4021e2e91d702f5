/*
 * tests/test_dr.c - DR events as programmes announce them (docs/scenarios.md): baseline
 * rules, stepped targets and separate ramps read, written canonically and read back, and
 * refused with the setting's path when wrong.
 */
#include <stdlib.h>

#include "test.h"

void
test_dr_event_settings(struct test *t)
{
    struct pfs_scenario *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    struct pfs_diag d = {0};
    char *canon = NULL;
    size_t len = 0;
    FILE *fp;
    static const struct {
        const char *event, *message;
    } bad[] = {
        {"{ start_h = 1.0; end_h = 2.0; steps = ( { at_min = 5.0; cut = 0.1; } ); }",
         "scenario.dr_events.[0].steps.[0]: the first step is at_min = 0 (the event's start)"},
        {"{ start_h = 1.0; end_h = 2.0; steps = ( { at_min = 0.0; cut = 0.1; }, "
         "{ at_min = 0.0; cut = 0.2; } ); }",
         "scenario.dr_events.[0].steps.[1]: steps must be in time order"},
        {"{ start_h = 1.0; end_h = 2.0; steps = ( { at_min = 0.0; cut = 0.1; }, "
         "{ at_min = 90.0; cut = 0.2; } ); }",
         "scenario.dr_events.[0].steps.[1]: a step must start before the event's end_h"},
        {"{ start_h = 1.0; end_h = 2.0; cut = 0.1; steps = ( { at_min = 0.0; cut = 0.1; } ); }",
         "scenario.dr_events.[0]: give steps or one cut / target_w, not both"},
        {"{ start_h = 1.0; end_h = 2.0; cut = 0.1; baseline = \"median\"; }",
         "scenario.dr_events.[0].baseline: expected \"instant\", \"average\" or \"given\""},
        {"{ start_h = 1.0; end_h = 2.0; cut = 0.1; baseline_w = 5e5; }",
         "scenario.dr_events.[0].baseline_w: give baseline_w exactly with baseline = \"given\""},
        {"{ start_h = 1.0; end_h = 1.2; cut = 0.1; ramp_down_min = 15.0; }",
         "scenario.dr_events.[0]: the ramp down must end by end_h"},
    };

    /* The SRP event as announced (docs/scenarios.md's worked example) and a two-level one. */
    CHECK_INT(
        pfs_scenario_load(test_write(t, 0, "e.cfg",
                                     "scenario = { dr_events = (\n"
                                     "  { start_h = 1.5; end_h = 4.75; ramp_down_min = 15.0;\n"
                                     "    ramp_up_min = 13.0; cut = 0.25; baseline = \"average\";\n"
                                     "    baseline_window_min = 90.0; notice_min = 1440.0; },\n"
                                     "  { start_h = 30.0; end_h = 33.0; ramp_min = 10.0;\n"
                                     "    baseline = \"given\"; baseline_w = 900000.0;\n"
                                     "    steps = ( { at_min = 0.0; cut = 0.15; },\n"
                                     "              { at_min = 60.0; cut = 0.25; } ); } ); };\n"),
                          a, &d),
        0);
    CHECK_INT(a->n_dr, 2);
    CHECK_NEAR(a->dr[0].ramp_s, 900, 0);
    CHECK(a->dr[0].ramp_up_given && fabs(a->dr[0].ramp_up_s - 780) < 1e-9);
    CHECK_INT(a->dr[0].baseline, PFS_BASELINE_AVERAGE);
    CHECK_NEAR(a->dr[0].baseline_window_s, 5400, 0);
    CHECK_NEAR(pfs_dr_over_s(&a->dr[0]), 4.75 * 3600 + 780, 1e-9);
    CHECK_INT(a->dr[1].n_steps, 2);
    CHECK_NEAR(a->dr[1].steps[1].at_s, 3600, 0);
    CHECK_NEAR(a->dr[1].steps[1].cut_frac, 0.25, 0);
    CHECK_NEAR(a->dr[1].baseline_w, 9e5, 0);
    CHECK(!a->dr[1].ramp_up_given && fabs(pfs_dr_ramp_up_s(&a->dr[1]) - 600) < 1e-9);
    fp = open_memstream(&canon, &len);
    pfs_scenario_write(a, fp);
    fclose(fp);
    CHECK_INT(pfs_scenario_parse(canon, "canonical", b, &d), 0);
    CHECK(b->n_dr == 2 && memcmp(a->dr, b->dr, 2 * sizeof a->dr[0]) == 0);
    free(canon);
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char text[512];

        snprintf(text, sizeof text, "scenario = { dr_events = ( %s ); };\n", bad[k].event);
        d = (struct pfs_diag){0};
        CHECK_INT(pfs_scenario_load(test_write(t, 0, "e.cfg", text), a, &d), PFS_EINVAL);
        CHECK_STR(d.message, bad[k].message);
    }
    free(a);
    free(b);
}

void
test_dr_grid_steps(struct test *t)
{
    /* pfisim grid emits stepped events with an average baseline that a scenario reads back:
     * on a SYNTHETIC day whose hours ending 17-19 are above 5 (one event 16:00-19:00), a 15%
     * level and a 25% one from 60 minutes on; a step after an event's end is left out. */
    const char *demand = test_write(t, 0, "demand.csv",
                                    "# SYNTHETIC demand for tests\n"
                                    "date,hour,load\n"
                                    "2025-07-01,16,4.0\n2025-07-01,17,5.5\n"
                                    "2025-07-01,18,6.0\n2025-07-01,19,5.1\n"
                                    "2025-07-01,20,4.9\n");
    char args[1024], text[4096], *out = NULL, *err = NULL;
    struct pfs_scenario *sc = malloc(sizeof *sc);
    struct pfs_diag d = {0};

    snprintf(args, sizeof args,
             "grid %s --column load --threshold 5 --cut 15%% --step 60:25%% --step 500:40%% "
             "--baseline average --baseline-window-min 30",
             demand);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    snprintf(text, sizeof text, "scenario = { duration_days = 1.0;\n%s};\n",
             out && strchr(out, '\n') ? strchr(out, '\n') + 1 : "");
    CHECK_INT(pfs_scenario_load(test_write(t, 1, "g.cfg", text), sc, &d), 0);
    CHECK_INT(sc->n_dr, 1);
    CHECK_NEAR(sc->dr[0].start_s, 16 * 3600.0, 0);
    CHECK_INT(sc->dr[0].n_steps, 2);
    CHECK_NEAR(sc->dr[0].steps[0].cut_frac, 0.15, 1e-12);
    CHECK_NEAR(sc->dr[0].steps[1].at_s, 3600, 0);
    CHECK_NEAR(sc->dr[0].steps[1].cut_frac, 0.25, 1e-12);
    CHECK_INT(sc->dr[0].baseline, PFS_BASELINE_AVERAGE);
    CHECK_NEAR(sc->dr[0].baseline_window_s, 1800, 0);
    free(out);
    free(err);
    /* Steps out of order: a usage error. */
    snprintf(args, sizeof args, "grid %s --column load --threshold 5 --step 60:25%% --step 30:30%%",
             demand);
    CHECK_INT(test_run(t, args, &out, &err), 2);
    CHECK(err && strstr(err, "--step takes MIN:CUT, MIN after the level before") != NULL);
    free(out);
    free(err);
    free(sc);
}
