/*
 * tests/test_trust.c - regressions of the answers a planner reads (issue 12): each test
 * reproduces a finding that was wrong before its fix, with the expected numbers worked out
 * independently (byte comparison with another run, hand-computed events, closed forms).
 */
#include <stdlib.h>

#include "test.h"

/* Every output of a run but its policy name and its count of events (which counts the
 * policy's own decisions): equal when two runs did the same thing. */
static bool
same_outcome(const struct pfs_run_result *a, const struct pfs_run_result *b)
{
    struct pfs_run_result x = *a, y = *b;

    memset(x.policy, 0, sizeof x.policy);
    memset(y.policy, 0, sizeof y.policy);
    x.events = y.events = 0;
    x.gap_recovered = y.gap_recovered = 0;
    return memcmp(&x, &y, sizeof x) == 0;
}

void
test_trust_nonbinding_cap(struct test *t)
{
    /* A cap the facility meets with every GPU at its top limit (700 W, above any job's
     * draw) never binds: every policy of the registry must give equal's results, job for
     * job and minute for minute. Before the fix pfi showed more tier violations than equal
     * (391 against 29 on 4,096 GPUs under 5 MW). */
    struct pfs_scenario sc;
    struct pfs_sim_inputs *in = NULL;
    struct pfs_diag d = {0};
    struct pfs_run_result ref, r;
    struct pfs_timeseries tref = {0};
    struct pfs_job_result *jref, *jr;
    size_t n;

    pfs_scenario_default(&sc);
    sc.gpus = 256;
    sc.days = 2;
    sc.n_dr = 0;
    sc.base_cap_w = sc.pue * (256 * 700.0 + 32 * sc.node_other_w);
    CHECK_INT(pfs_sim_inputs_new(&sc, &in, &d), 0);
    if (!in)
        return;
    n = pfs_sim_inputs_n_jobs(in);
    jref = calloc(n + 1, sizeof *jref);
    jr = calloc(n + 1, sizeof *jr);
    CHECK_INT(pfs_sim_run(&sc, in, "equal", &ref, &tref, jref, &d), 0);
    CHECK(ref.jobs_started > 100);
    for (size_t k = 0; pfs_policy_at(k); k++) {
        const char *name = pfs_policy_name(pfs_policy_at(k));
        struct pfs_timeseries ts = {0};

        CHECK_INT(pfs_sim_run(&sc, in, name, &r, &ts, jr, &d), 0);
        if (!same_outcome(&ref, &r) || memcmp(jref, jr, n * sizeof *jr) != 0 || ts.n != tref.n ||
            memcmp(ts.rows, tref.rows, ts.n * sizeof *ts.rows) != 0)
            test_fail(t, __FILE__, __LINE__, "%s differs from equal under a cap that never binds",
                      name);
        pfs_timeseries_free(&ts);
    }
    pfs_timeseries_free(&tref);
    free(jref);
    free(jr);
    pfs_sim_inputs_free(in);
}

void
test_trust_event_counts(struct test *t)
{
    /* Only the events inside the run are the run's. The default scenario's events start at
     * 41, 89 and 137 h: a day has none, two days one, a week three. Before the fix `run
     * --days 1` reported 3 and `--days 2` on a year's drawn events 10 (drawn over 365 days). */
    static const double days[3] = {1, 2, 7};
    static const size_t want[3] = {0, 1, 3};
    struct pfs_scenario *sc = malloc(sizeof *sc);
    struct pfs_diag d = {0};
    const char *p;
    char *out = NULL, *err = NULL;

    for (int k = 0; k < 3; k++) {
        CHECK_INT(pfs_scenario_load_days(NULL, days[k], sc, &d), 0);
        CHECK_INT(sc->n_dr, want[k]);
    }
    /* A year's file with 365 drawn events a year, run for 2 days with no warm-up: the
     * events are drawn over those 2 days, round(365 x 2 / 365) = 2, all inside. */
    p = test_write(t, 0, "year.cfg",
                   "scenario = { duration_days = 365; dr_events = ();\n"
                   "  dr_generator = { per_year = 365.0; warmup_h = 0.0; }; };\n");
    CHECK_INT(pfs_scenario_load_days(p, 2, sc, &d), 0);
    CHECK_INT(sc->n_dr, 2);
    for (size_t k = 0; k < sc->n_dr; k++)
        CHECK(sc->dr[k].start_s < 2 * 86400.0);
    /* With the default warm-up (72 h) nothing is drawn into the first 3 days; over a week,
     * round(365 x 4 / 365) = 4 events, none before 72 h. */
    p = test_write(t, 0, "year.cfg",
                   "scenario = { duration_days = 365; dr_events = ();\n"
                   "  dr_generator = { per_year = 365.0; }; };\n");
    CHECK_INT(pfs_scenario_load_days(p, 2, sc, &d), 0);
    CHECK_INT(sc->n_dr, 0);
    CHECK_INT(pfs_scenario_load_days(p, 7, sc, &d), 0);
    CHECK_INT(sc->n_dr, 4);
    for (size_t k = 0; k < sc->n_dr; k++)
        CHECK(sc->dr[k].start_s >= 72 * 3600.0);
    /* The command line says so too. */
    CHECK_INT(test_run(t, "run --days 1 --policy equal", &out, &err), 0);
    CHECK(out && strstr(out, ", 0 DR events,") != NULL);
    free(out);
    free(err);
    free(sc);
}
