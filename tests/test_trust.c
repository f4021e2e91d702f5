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
