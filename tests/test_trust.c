/*
 * tests/test_trust.c - regressions of the answers a planner reads (issue 12): each test
 * reproduces a finding that was wrong before its fix, with the expected numbers worked out
 * independently (byte comparison with another run, hand-computed events, closed forms).
 */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

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
    CHECK_INT(test_sim_run(&sc, in, "equal", &ref, &tref, jref, &d), 0);
    CHECK(ref.jobs_started > 100);
    for (size_t k = 0; pfs_policy_at(k); k++) {
        const char *name = pfs_policy_name(pfs_policy_at(k));
        struct pfs_timeseries ts = {0};

        CHECK_INT(test_sim_run(&sc, in, name, &r, &ts, jr, &d), 0);
        /* and costs no policy work: the policy is never asked (issue 16) */
        if (r.policy_decisions != 0)
            test_fail(t, __FILE__, __LINE__, "%s asked %zu times under a cap that never binds",
                      name, r.policy_decisions);
        if (!same_outcome(&ref, &r) || test_first_job_differing(jref, jr, n) != n ||
            ts.n != tref.n || memcmp(ts.rows, tref.rows, ts.n * sizeof *ts.rows) != 0)
            test_fail(t, __FILE__, __LINE__, "%s differs from equal under a cap that never binds",
                      name);
        pfs_timeseries_free(&ts);
    }
    pfs_timeseries_free(&tref);
    free(jref);
    free(jr);
    pfs_sim_inputs_free(in);
}

/* The run without events made on a spare thread beside the policy's run (pfisim run with
 * more threads than policies) gives the same bytes as made after it on one thread: the
 * default scenario's week, which holds events, one policy, the cost of DR in the CSV; then
 * the same under facility caps. */
void
test_trust_nodr_beside(struct test *t)
{
    char *out1 = NULL, *err1 = NULL, *out2 = NULL, *err2 = NULL;

    CHECK_INT(test_run(t, "run --days 7 --policy oracle --csv --threads 1", &out1, &err1), 0);
    CHECK_INT(test_run(t, "run --days 7 --policy oracle --csv --threads 2", &out2, &err2), 0);
    CHECK(out1 && out2 && strcmp(out1, out2) == 0);
    CHECK(out1 && strstr(out1, "dr_cost") != NULL);
    free(out1);
    free(err1);
    free(out2);
    free(err2);
    /* Without a facility cap and under one, one that never binds without events (made
     * once, every policy's) and one that does (the policy's own): the same bytes on one
     * thread and on more, for one policy (made beside it), two on three threads (the second
     * makes its own, or shares) and the scenario's four on two (every run first, then every
     * pricing). */
    static const char *const caps[] = {NULL, "5 MW", "600 kW"};
    static const struct {
        const char *policies;
        int threads;
    } mode[] = {{"--policy sla ", 2}, {"--policy sla --policy equal ", 3}, {"", 2}};

    for (int c = 0; c < 3; c++) {
        for (int m = 0; m < 3; m++) {
            char cfg[200], cmd[600];
            const char *p;

            if (caps[c])
                snprintf(cfg, sizeof cfg, "scenario = { facility = { cap_w = \"%s\"; }; };\n",
                         caps[c]);
            else
                snprintf(cfg, sizeof cfg, "scenario = { };\n");
            p = test_write(t, 0, "capped.cfg", cfg);
            snprintf(cmd, sizeof cmd, "run %s --days 7 %s--csv --threads 1", p, mode[m].policies);
            CHECK_INT(test_run(t, cmd, &out1, &err1), 0);
            snprintf(cmd, sizeof cmd, "run %s --days 7 %s--csv --threads %d", p, mode[m].policies,
                     mode[m].threads);
            CHECK_INT(test_run(t, cmd, &out2, &err2), 0);
            if (!(out1 && out2 && strcmp(out1, out2) == 0))
                test_fail(t, __FILE__, __LINE__, "cap %s, policies '%s': 1 and %d threads differ",
                          caps[c] ? caps[c] : "none", mode[m].policies, mode[m].threads);
            CHECK(out1 && strstr(out1, "dr_cost") != NULL);
            free(out1);
            free(err1);
            free(out2);
            free(err2);
        }
    }
}

void
test_trust_nodr_shared(struct test *t)
{
    /* The run without events that prices DR is made once and shared by every policy when no
     * policy was asked in it (a base cap that never binds there): a policy's result is the
     * same bytes whether it ran after another policy on the same inputs (sharing) or alone
     * on fresh ones (its own run without events); under a cap that binds, likewise. */
    static const double caps[] = {1.0, 0.6}; /* of the facility's top draw */

    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        struct pfs_scenario sc;
        struct pfs_sim_inputs *shared = NULL, *alone = NULL, *made = NULL;
        struct pfs_diag d = {0};
        struct pfs_run_result first, after, fresh, beside;

        pfs_scenario_default(&sc);
        sc.gpus = 256;
        sc.days = 2;
        sc.n_dr = 1; /* the default's first event, day 2 */
        sc.base_cap_w = caps[c] * sc.pue * (256 * 700.0 + 32 * sc.node_other_w);
        CHECK_INT(pfs_sim_inputs_new(&sc, &shared, &d), 0);
        CHECK_INT(pfs_sim_inputs_new(&sc, &alone, &d), 0);
        if (!shared || !alone)
            return;
        CHECK_INT(pfs_sim_run(&sc, shared, "equal", &first, NULL, NULL, &d), 0);
        CHECK_INT(pfs_sim_run(&sc, shared, "pfi", &after, NULL, NULL, &d), 0);
        CHECK_INT(pfs_sim_run(&sc, alone, "pfi", &fresh, NULL, NULL, &d), 0);
        CHECK(isfinite(after.nodr_tokens) && after.nodr_tokens > 0);
        CHECK(memcmp(&after, &fresh, sizeof after) == 0);
        /* Made first by pfs_sim_nodr_prepare for another policy (equal), or for this one:
         * every policy's where the cap never binds without events, else equal's or pfi's
         * own. The same bytes either way. */
        for (int k = 0; k < 2; k++) {
            CHECK_INT(pfs_sim_inputs_new(&sc, &made, &d), 0);
            if (!made)
                return;
            CHECK_INT(pfs_sim_nodr_prepare(&sc, made, k == 0 ? "equal" : "pfi", &d), 0);
            CHECK_INT(pfs_sim_run(&sc, made, "pfi", &beside, NULL, NULL, &d), 0);
            if (memcmp(&beside, &fresh, sizeof beside) != 0)
                test_fail(t, __FILE__, __LINE__, "cap %g, made first for %s: pfi differs", caps[c],
                          k == 0 ? "equal" : "pfi");
            pfs_sim_inputs_free(made);
        }
        pfs_sim_inputs_free(shared);
        pfs_sim_inputs_free(alone);
    }
}

static void
count_sim_s(void *arg, double sim_s, size_t events)
{
    (void)events;
    *(double *)arg += sim_s;
}

/* A policy that shifts power within jobs on GPUs that differ prices DR against a run without
 * events of its own: making the run every other policy shares beside it (pfisim run's
 * pricing, pfs_sim_nodr_prepare) is a whole simulation nobody reads. Counted by the progress
 * hook: the policy's run and its own run without events, two runs' simulated time. */
void
test_trust_nodr_own(struct test *t)
{
    struct pfs_scenario *sc = malloc(sizeof *sc);
    struct pfs_sim_inputs *in = NULL;
    struct pfs_run_result r;
    struct pfs_diag d = {0};
    double sim_s = 0;

    if (!sc)
        return;
    CHECK_INT(pfs_scenario_parse("scenario = { duration_days = 3.0; facility = { gpus = 64;\n"
                                 "  variability = { eta_sd = 0.03; seed = 9; }; }; };",
                                 "own.cfg", sc, &d),
              0);
    CHECK_INT(pfs_sim_inputs_new(sc, &in, &d), 0);
    if (in) {
        pfs_sim_set_progress(count_sim_s, &sim_s);
        CHECK_INT(pfs_sim_run_unpriced(sc, in, "pfi+sync-shift", &r, NULL, NULL, &d), 0);
        CHECK(r.dr_events > 0);
        CHECK_INT(pfs_sim_nodr_prepare(sc, in, "pfi+sync-shift", &d), 0);
        CHECK_INT(pfs_sim_price(sc, in, "pfi+sync-shift", &r, &d), 0);
        pfs_sim_set_progress(NULL, NULL);
        CHECK(isfinite(r.nodr_tokens));
        if (!(sim_s > 1.5 * 3 * 86400 && sim_s < 2.5 * 3 * 86400))
            test_fail(t, __FILE__, __LINE__, "%.2f runs simulated, 2 expected",
                      sim_s / (3 * 86400));
    }
    pfs_sim_inputs_free(in);
    free(sc);
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

static const char jobs_header[] =
    "job_id,gpu,split,twin_id,n_gpus,family,phase,params_b,active_params_b,seq_len,"
    "micro_batch,tp,pp,dp,ep,power_w,power_frac,sm_clock_mhz,sm_active,tensor_active,"
    "dram_active,nvlink_gbps,net_gbps,tokens_per_s,pfi_10,pfi_20,pfi_30,pfi_40,pfi_50\n";

/* A hand-made corpus in t->tmpdir (SYNTHETIC, exactly linear in the cap): c200 on an H200,
 * 100 + 0.2 (cap - 200) tokens/s per GPU drawing cap - 10 W; its measured H100 twin c100,
 * 50 + 0.1 (cap - 200) tokens/s drawing cap - 20 W. */
static void
two_gpu_corpus(struct test *t, struct pfs_scenario *sc, const char *workload)
{
    char text[4096];
    size_t used;

    used = (size_t)snprintf(text, sizeof text, "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n");
    for (int k = 0; k <= 10; k++) {
        double cap = 200 + 50.0 * k;

        used += (size_t)snprintf(text + used, sizeof text - used,
                                 "c200,h200-sxm,1,%g,%g,tokens/s,%g\n"
                                 "c100,h100-sxm,1,%g,%g,tokens/s,%g\n",
                                 cap, 100 + 0.2 * (cap - 200), cap - 10, cap,
                                 50 + 0.1 * (cap - 200), cap - 20);
    }
    test_write(t, 0, "curves.csv", text);
    snprintf(text, sizeof text,
             "%sc200,h200-sxm,train,,1,dense,pretrain,7,7,4096,1,1,1,1,1,690,0.9857,1980,0.9,"
             "0.6,0.3,2,0.5,200,,,,,\n"
             "c100,h100-sxm,transfer,c200,1,dense,pretrain,7,7,4096,1,1,1,1,1,680,0.9714,1980,"
             "0.9,0.6,0.3,2,0.5,100,,,,,\n",
             jobs_header);
    test_write(t, 1, "jobs.csv", text);
    pfs_scenario_default(sc);
    pfs__strlcpy(sc->corpus, t->tmpdir, sizeof sc->corpus);
    pfs__strlcpy(sc->workload, test_write(t, 2, "workload.csv", workload), sizeof sc->workload);
    sc->n_dr = 0;
    sc->pue = 1.5;
    sc->cadence_s = 100;
    sc->event_cadence_s = 100;
    sc->actuation_s = 0;
    sc->track_power = false;
    sc->days = 3.0 / 24;
}

/* Two pools, an H100 one ("old", first) and an H200 one ("new"), 8 GPUs and one 1,000 W
 * node each, PUE 1.5, a cap of 13,800 W: with 16 GPUs busy equal gives every GPU
 * (13,800 / 1.5 - 2,000) / 16 = 450 W. Jobs a and b run c200 (8 GPUs, 5.76e6 tokens), c runs
 * c100 (8 GPUs, 1.44e6 tokens), all submitted at 0. By hand:
 * - a takes the first pool, "old", on c200's H100 twin c100: alone there its full draw
 *   1.5 x (8 x 680 + 8 x 75 + 2,000) = 12,060 W fits, but once b starts on "new" the cap
 *   binds: 450 W a GPU, a 8 x 75 = 600 tokens/s, b 8 x 150 = 1,200 tokens/s; c waits.
 * - b ends at 5.76e6 / 1,200 = 4,800 s; c starts on "new" on its twin c200 at 450 W:
 *   1,200 tokens/s, done at 4,800 + 1.44e6 / 1,200 = 6,000 s.
 * - a alone then does not bind (12,060 W < 13,800 W): 700 W, 800 tokens/s; it has
 *   600 x 6,000 = 3.6e6 tokens, so it ends at 6,000 + 2.16e6 / 800 = 8,700 s.
 * Energy: "old" 1.5 x ((8 x 430 + 1,000) x 6,000 + (8 x 680 + 1,000) x 2,700 + (8 x 72 +
 * 1,000) x 2,100) = 71,006,400 J; "new" 1.5 x ((8 x 440 + 1,000) x 6,000 + (8 x 75 +
 * 1,000) x 4,800) = 52,200,000 J. */
void
test_trust_two_pools(struct test *t)
{
    struct pfs_scenario sc;
    struct pfs_sim_inputs *in = NULL;
    struct pfs_diag d = {0};
    struct pfs_run_result r;
    struct pfs_job_result j[3];

    two_gpu_corpus(t, &sc,
                   "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier\n"
                   "a,0,c200,8,5760000,1e9,firm\n"
                   "b,0,c200,8,5760000,1e9,firm\n"
                   "c,0,c100,8,1440000,1e9,firm\n");
    sc.n_pools = 2;
    sc.pools[0] = (struct pfs_pool){"old", "h100-sxm", 8, 8, 1000};
    sc.pools[1] = (struct pfs_pool){"new", "h200-sxm", 8, 8, 1000};
    sc.gpus = 16;
    sc.base_cap_w = 13800;
    CHECK_INT(pfs_sim_inputs_new(&sc, &in, &d), 0);
    if (!in) {
        fprintf(stderr, "  %s\n", d.message);
        return;
    }
    CHECK_INT(test_sim_run(&sc, in, "equal", &r, NULL, j, &d), 0);
    CHECK_INT(j[0].pool, 0);
    CHECK_STR(pfs_sim_inputs_curve(in, j[0].curve)->job_id, "c100");
    CHECK_INT(j[1].pool, 1);
    CHECK_STR(pfs_sim_inputs_curve(in, j[1].curve)->job_id, "c200");
    CHECK_INT(j[2].pool, 1);
    CHECK_STR(pfs_sim_inputs_curve(in, j[2].curve)->job_id, "c200");
    CHECK_NEAR(j[0].finish_s, 8700, 1e-5);
    CHECK_NEAR(j[1].finish_s, 4800, 1e-5);
    CHECK_NEAR(j[2].start_s, 4800, 1e-5);
    CHECK_NEAR(j[2].finish_s, 6000, 1e-5);
    CHECK_NEAR(j[0].duration_s, 7200, 1e-6); /* at full power on its pool: 5.76e6 / 800 */
    CHECK_NEAR(j[2].duration_s, 900, 1e-6);
    CHECK_NEAR(r.tokens, 12.96e6, 1e-3);
    CHECK_INT(r.n_pools, 2);
    CHECK_STR(r.pool[0].name, "old");
    CHECK_NEAR(r.pool[0].tokens, 5.76e6, 1e-3);
    CHECK_NEAR(r.pool[1].tokens, 7.2e6, 1e-3);
    CHECK_INT(r.pool[0].jobs_started, 1);
    CHECK_INT(r.pool[1].jobs_finished, 2);
    CHECK_NEAR(r.pool[0].energy_j, 71006400, 1);
    CHECK_NEAR(r.pool[1].energy_j, 52200000, 1);
    CHECK_NEAR(r.energy_j, 71006400 + 52200000.0, 1);
    CHECK_NEAR(r.pool[0].busy_gpu_h, 8 * 8700 / 3600.0, 1e-6);
    /* The one budget over both pools: 16 x 450 W of caps, 6,660 + 6,780 W drawn. */
    CHECK_NEAR(r.peak_facility_w, 13440, 1e-6);
    CHECK_NEAR(r.cap_binding_h, 6000 / 3600.0, 1e-9);
    /* Losses 1 - 7,200 / 8,700, 1 - 3,600 / 4,800 and 1 - 900 / 1,200. */
    CHECK_NEAR(r.job_loss_max, 0.25, 1e-9);
    CHECK_NEAR(r.job_loss_p50, 0.25, 1e-9);
    CHECK_NEAR(r.job_loss_mean, (1 - 7200 / 8700.0 + 0.5) / 3, 1e-9);
    pfs_sim_inputs_free(in);
    in = NULL;
    /* The workload may name the pool: a on "new" waits for nothing (it is first), b then
     * takes "old" on the twin; a pool the facility lacks is an error naming the pools. */
    pfs__strlcpy(sc.workload,
                 test_write(t, 2, "workload.csv",
                            "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier,pool\n"
                            "a,0,c200,8,5760000,1e9,firm,new\n"
                            "b,0,c200,8,5760000,1e9,firm,\n"),
                 sizeof sc.workload);
    CHECK_INT(pfs_sim_inputs_new(&sc, &in, &d), 0);
    if (in && test_sim_run(&sc, in, "equal", &r, NULL, j, &d) == 0) {
        CHECK_INT(j[0].pool, 1);
        CHECK_INT(j[1].pool, 0);
        CHECK_STR(pfs_sim_inputs_curve(in, j[1].curve)->job_id, "c100");
    }
    pfs_sim_inputs_free(in);
    in = NULL;
    pfs__strlcpy(sc.workload,
                 test_write(t, 2, "workload.csv",
                            "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier,pool\n"
                            "a,0,c200,8,5760000,1e9,firm,newest\n"),
                 sizeof sc.workload);
    CHECK_INT(pfs_sim_inputs_new(&sc, &in, &d), PFS_EINVAL);
    CHECK_STR(
        d.message,
        "workload job 'a' names pool 'newest', which the facility lacks (its pools: old, new)");
}

void
test_trust_gpu_types(struct test *t)
{
    /* A job runs curves of the GPU it is placed on. On an H100 facility the synthetic
     * corpus's H100 jobs run, never an H200 curve; before the fix every job ran H200 curves
     * (and an H100-only corpus was refused). */
    struct pfs_scenario sc;
    struct pfs_sim_inputs *in = NULL;
    struct pfs_diag d = {0};
    size_t h100 = 0;

    pfs_scenario_default(&sc);
    pfs__strlcpy(sc.gpu, "h100-sxm", sizeof sc.gpu);
    sc.gpus = 256;
    sc.days = 1;
    CHECK_INT(pfs_sim_inputs_new(&sc, &in, &d), 0);
    for (size_t j = 0; in && j < pfs_sim_inputs_n_jobs(in); j++) {
        const struct pfs_workload_job *w = pfs_sim_inputs_job(in, j);

        for (size_t k = 0; k < pfs_sim_inputs_n_curves(in); k++)
            if (strcmp(pfs_sim_inputs_curve(in, k)->job_id, w->curve_id) == 0)
                h100 += strcmp(pfs_sim_inputs_curve(in, k)->gpu, "h100-sxm") == 0;
    }
    CHECK(in && pfs_sim_inputs_n_jobs(in) > 100 && h100 == pfs_sim_inputs_n_jobs(in));
    pfs_sim_inputs_free(in);
    in = NULL;
    /* A workload naming an H200 curve with no H100 twin on an H100 facility: stopped
     * before simulating, naming the job, its GPU and the way out. */
    two_gpu_corpus(t, &sc,
                   "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier\n"
                   "x,0,c200,8,1000,1e9,firm\n");
    {
        char text[1024];

        snprintf(text, sizeof text,
                 "%sc100,h100-sxm,transfer,,1,dense,pretrain,7,7,4096,1,1,1,1,1,680,0.9714,1980,"
                 "0.9,0.6,0.3,2,0.5,100,,,,,\n",
                 jobs_header); /* no twin */
        test_write(t, 1, "jobs.csv", text);
    }
    pfs__strlcpy(sc.gpu, "h100-sxm", sizeof sc.gpu);
    d = (struct pfs_diag){0};
    CHECK_INT(pfs_sim_inputs_new(&sc, &in, &d), PFS_EINVAL);
    CHECK_STR(d.message, "workload job 'x' runs curve 'c200', measured on h200-sxm, and the "
                         "facility has only h100-sxm with no measured twin of it there: add a "
                         "pool of h200-sxm, or give the job a curve of the facility's GPUs");
    CHECK(in == NULL);
    /* Drawing arrivals for a facility of a GPU the corpus lacks: the GPU and the way out. */
    pfs_scenario_default(&sc);
    pfs__strlcpy(sc.gpu, "a100-sxm", sizeof sc.gpu);
    d = (struct pfs_diag){0};
    CHECK_INT(pfs_sim_inputs_new(&sc, &in, &d), PFS_EINVAL);
    CHECK(strstr(d.message, "the corpus has no job measured on a100-sxm") != NULL);
    CHECK(in == NULL);
}

void
test_trust_gap_defined(struct test *t)
{
    /* The gap recovered is a ratio over oracle - equal: defined only where the oracle leads
     * by more than 0.1% of equal's tokens. Over a long run the instantaneous oracle can fall
     * behind equal, and then a worse policy would show a large positive "gap". */
    struct pfs_run_result r[3];

    memset(r, 0, sizeof r);
    pfs__strlcpy(r[0].policy, "equal", sizeof r[0].policy);
    pfs__strlcpy(r[1].policy, "oracle", sizeof r[1].policy);
    pfs__strlcpy(r[2].policy, "pfi", sizeof r[2].policy);
    r[0].tokens = 1000, r[1].tokens = 1100, r[2].tokens = 1050;
    pfs_gap_recovered(r, 3);
    CHECK_NEAR(r[2].gap_recovered, 0.5, 1e-12);
    CHECK_NEAR(r[1].gap_recovered, 1, 1e-12);
    CHECK_STR(r[2].gap_note, "");
    r[1].tokens = 990, r[2].tokens = 980; /* oracle behind equal: (980-1000)/(990-1000) = 2 */
    pfs_gap_recovered(r, 3);
    CHECK(isnan(r[2].gap_recovered) && isnan(r[0].gap_recovered));
    CHECK_STR(r[2].gap_note, "oracle -1% against equal: no gap to recover");
    r[1].tokens = 1000.5; /* a lead of 0.05%: noise, not a gap */
    pfs_gap_recovered(r, 3);
    CHECK(isnan(r[2].gap_recovered));
    pfs_gap_recovered(r + 1, 2); /* no equal run */
    CHECK_STR(r[2].gap_note, "needs an equal and an oracle run");
}

void
test_trust_seeds(struct test *t)
{
    /* --seeds runs every policy under each seed: its mean and min-max of tokens are those of
     * the three single-seed runs, and the interval is Student's t over them. */
    double tok[3], mean = 0, lo = HUGE_VAL, hi = -HUGE_VAL, ss = 0;
    char *out = NULL, *err = NULL, args[1024];
    const char *row;

    for (int s = 0; s < 3; s++) {
        snprintf(args, sizeof args, "run --days 0.5 --policy equal --seed %d --csv", s + 1);
        CHECK_INT(test_run(t, args, &out, &err), 0);
        row = out ? strstr(out, "\nequal,") : NULL;
        tok[s] = row ? strtod(row + 7, NULL) : (double)NAN;
        mean += tok[s] / 3;
        lo = fmin(lo, tok[s]);
        hi = fmax(hi, tok[s]);
        free(out);
        free(err);
    }
    for (int s = 0; s < 3; s++)
        ss += (tok[s] - mean) * (tok[s] - mean);
    CHECK_INT(
        test_run(t, "run --days 0.5 --policy equal --policy pfi --seeds 1..3 --csv", &out, &err),
        0);
    row = out ? strstr(out, "\nequal,tokens,3,") : NULL;
    CHECK(row != NULL);
    if (row) {
        char *end;
        double m = strtod(row + 16, &end), ci = strtod(end + 1, &end);
        double mn = strtod(end + 1, &end), mx = strtod(end + 1, &end);

        CHECK_NEAR(m, mean, 1e-5 * mean); /* printed with 6 digits */
        CHECK_NEAR(mn, lo, 1e-5 * lo);
        CHECK_NEAR(mx, hi, 1e-5 * hi);
        CHECK_NEAR(ci, 4.302652729911275 * sqrt(ss / 2) / sqrt(3.0), 1e-5 * ci); /* t(0.975, 2) */
    }
    CHECK(out && strstr(out, "\npfi,tokens_vs_equal,3,") != NULL);
    free(out);
    free(err);
    /* Stored, every seed is a run; the comparison figure draws their spread. */
    snprintf(args, sizeof args,
             "run --days 0.5 --policy equal --policy oracle --seeds 1..3 --db=%s/s.db", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "plot %s/s.db -o %s/figs --only comparison", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "%s/figs/comparison.png", t->tmpdir);
    test_check_png(t, args, 900, 520);
    /* Several seeds and a per-minute file: refused, with the way out. */
    CHECK_INT(test_run(t, "run --seeds 1,2 --timeseries-csv /dev/null", &out, &err), 2);
    CHECK(err && strstr(err, "--db keeps every run"));
    free(out);
    free(err);
    /* Less than a minute to simulate (issue 17: --days 1e-300 ran a run of nothing); a
     * minute is the least, as scenario.duration_days has it. */
    CHECK_INT(test_run(t, "run --days 1e-300", &out, &err), 2);
    CHECK(err && strstr(err, "--days takes a number of days from 1/1440 (a minute) to 3660"));
    free(out);
    free(err);
}

/* pfisim ARGS exits with code and says msg on standard error, printing nothing. */
static void
refused(struct test *t, const char *args, int code, const char *msg)
{
    char *out, *err;

    CHECK_INT(test_run(t, args, &out, &err), code);
    if (!err || !strstr(err, msg))
        test_fail(t, __FILE__, __LINE__, "%s: expected '%s' in: %s", args, msg, err);
    CHECK(out && !*out);
    free(out);
    free(err);
}

/* A policy named twice, or more than sixteen, and a seed or a size given twice: refused
 * before anything is simulated or written. Before, the seventeenth of --policy was dropped
 * without a word; a name given twice ran twice (in a database the second run replaced the
 * first: one key); a seed given twice weighed twice in the seeds' mean and interval. */
void
test_trust_named_twice(struct test *t)
{
    char args[2048], db[600], want[96];
    size_t n;

    snprintf(db, sizeof db, "%s/p.db", t->tmpdir);
    snprintf(args, sizeof args, "run --days 0.01 --policy equal,pfi --policy equal --db=%s", db);
    refused(t, args, 2, "pfisim run: policy 'equal' named twice");
    CHECK(access(db, F_OK) != 0);
    n = (size_t)snprintf(args, sizeof args, "run --days 0.01 --csv");
    for (int k = 0; k < 17; k++) /* (11 names, then 6 of them with +sync-shift: all known) */
        n += (size_t)snprintf(args + n, sizeof args - n, " --policy %s%s",
                              pfs_policy_at((size_t)k % 11)->name, k < 11 ? "" : "+sync-shift");
    snprintf(want, sizeof want, "at most 16 policies, got '%s+sync-shift' as well",
             pfs_policy_at(16 % 11)->name);
    refused(t, args, 2, want);
    snprintf(args, sizeof args, "run %s --days 0.01",
             test_write(t, 0, "twice.cfg",
                        "scenario = {\n  name = \"twice\";\n"
                        "  policies = [\"equal\", \"pfi\", \"pfi\"];\n};\n"));
    refused(t, args, 3, "twice.cfg:3: error: scenario.policies: policy 'pfi' named twice");
    refused(t, "capacity configs/default.cfg --gpus 64 --days 0.01 --policy oracle,equal,oracle", 2,
            "pfisim capacity: policy 'oracle' named twice");
    refused(t, "run --days 0.01 --policy equal --seeds 1,1,2 --csv", 2,
            "at most 256 distinct non-negative seeds), got '1,1,2'");
    snprintf(args, sizeof args, "run %s --days 0.01",
             test_write(t, 0, "seeds.cfg", "scenario = {\n  seeds = [3, 4, 3];\n};\n"));
    refused(t, args, 3, "seeds.cfg:2: error: scenario.seeds: seed 3 given twice");
    refused(t, "capacity configs/default.cfg --gpus 64,128,64 --days 0.01", 2,
            "--gpus takes A..B:STEP or A,B,C (distinct), got '64,128,64'");
    snprintf(args, sizeof args, "scale traces/h200-h100/curves.csv --sizes 8,64,8 -o %s/s.csv",
             t->tmpdir);
    refused(t, args, 2, "--sizes takes up to 16 distinct sizes");
}

/* An output named as another output or as an input is refused, the file left as it was:
 * before, `report DB -o DB` put a PDF where the database was, `run --timeseries-csv X --db=X`
 * replaced the database with the CSV, and the jobs CSV over the time series lost it. */
void
test_trust_not_over(struct test *t)
{
    char db[600], kept[600], args[2000], want[1400], *out, *err;
    const char *cfg, *wl, *curves;

    snprintf(db, sizeof db, "%s/r.db", t->tmpdir);
    snprintf(kept, sizeof kept, "%s/kept.db", t->tmpdir);
    snprintf(args, sizeof args, "run --days 0.02 --policy equal --policy oracle --db=%s", db);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "cp %s %s", db, kept);
    CHECK_INT(system(args), 0);
    snprintf(args, sizeof args, "report %s -o %s/../%s/r.db", db, t->tmpdir,
             strrchr(t->tmpdir, '/') + 1);
    refused(t, args, 2, "pfisim report: -o");
    snprintf(args, sizeof args, "run --days 0.02 --policy equal --timeseries-csv %s --db=%s", db,
             db);
    refused(t, args, 2, "--timeseries-csv and --db name one file");
    CHECK(test_same_file(db, kept));
    snprintf(args, sizeof args,
             "run --days 0.02 --policy equal --timeseries-csv %s/x.csv --jobs-csv %s/x.csv",
             t->tmpdir, t->tmpdir);
    refused(t, args, 2, "--timeseries-csv and --jobs-csv name one file");
    wl = test_write(t, 1, "wl.csv",
                    "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier\n"
                    "a,0,h200-049,2,380284,1e6,firm\n");
    cfg = test_write(t, 0, "wl.cfg",
                     "scenario = {\n  duration_days = 0.02;\n  facility = { gpus = 64; };\n"
                     "  workload = { file = \"wl.csv\"; };\n  dr_events = ();\n};\n");
    snprintf(args, sizeof args, "run %s --policy equal --jobs-csv %s", cfg, cfg);
    snprintf(want, sizeof want, "pfisim run: --jobs-csv '%s' would write over the input '%s'\n",
             cfg, cfg);
    refused(t, args, 2, want);
    snprintf(args, sizeof args, "run %s --policy equal --jobs-csv %s", cfg, wl);
    snprintf(want, sizeof want, "pfisim run: --jobs-csv '%s' would write over the input '%s'\n", wl,
             wl); /* (the workload file, found beside the scenario) */
    refused(t, args, 2, want);
    snprintf(args, sizeof args, "capacity %s --gpus 64 --days 0.02 --plot %s", cfg, cfg);
    refused(t, args, 2, "pfisim capacity: --plot");
    curves = test_write(t, 2, "c.csv",
                        "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                        "j,h200-sxm,1,400,50,tokens/s,380\nj,h200-sxm,1,700,80,tokens/s,650\n");
    snprintf(args, sizeof args, "scale %s --gpus 64 -o %s", curves, curves);
    refused(t, args, 2, "pfisim scale: -o");
    snprintf(args, sizeof args, "fit %s --save %s", curves, curves);
    refused(t, args, 2, "pfisim fit: --save");
    snprintf(args, sizeof args, "import perseus --gpu h200-sxm %s -o %s", curves, curves);
    refused(t, args, 2, "pfisim import: -o");
    snprintf(args, sizeof args,
             "workload --arrivals poisson:5 --days 0.1 --corpus %s -o %s/../%s/curves.csv",
             t->tmpdir, t->tmpdir, strrchr(t->tmpdir, '/') + 1);
    refused(t, args, 2, "pfisim workload: -o");
    out = test_slurp(curves);
    CHECK(out && strncmp(out, "job_id,gpu,n_gpus", 17) == 0);
    free(out);
}

/* pfisim price on runs without a DR event: nothing to comply with, so no compliance (null in
 * --json, said in words), where it printed "compliance 0.000", every minute over, as it
 * would for a run that met no target at all. */
void
test_trust_price_no_event(struct test *t)
{
    char args[1400], *out, *err;

    snprintf(args, sizeof args, "run --days 0.02 --policy equal --policy oracle --db=%s/p.db",
             t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "price %s/p.db", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(out && strstr(out, "0 DR events (0.0 h, 0 kW each), no event to comply with\n") &&
          !strstr(out, "compliance"));
    free(out);
    free(err);
    snprintf(args, sizeof args, "price %s/p.db --json", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(out && strstr(out, "\"compliance\": null, \"rev_compute\"") &&
          strstr(out, "\"rev_dr_capacity\": 0, \"rev_dr_energy\": 0,"));
    free(out);
    free(err);
    /* Half a day: flex2's delivery a rounding above 1 printed its discount as "-0.0%"
     * (-0.000000 in --csv, -2.2e-16 in --json). */
    snprintf(args, sizeof args, "run --days 0.5 --policy equal --db=%s/h.db", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "price %s/h.db", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(out && strstr(out, "\n  flex2 ") && !strstr(out, "-0.0%"));
    free(out);
    free(err);
    snprintf(args, sizeof args, "price %s/h.db --csv", t->tmpdir); /* (-0.000000 there) */
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(out && strstr(out, ",flex2,") && !strstr(out, "-0.000000"));
    free(out);
    free(err);
}

/* DR events that overlap, ramps included, are refused. Before, two copies of one event were
 * two events judged on the same minutes (one met, one missed) sharing one cost of DR (its
 * cost per event halved), and an event starting inside another took its baseline under the
 * other's caps (a 10% cut inside a 10% cut held the facility to 357.7 kW where the outer
 * event alone held 401.5 kW: 0.81 of the baseline). Back to back is one way to change the
 * target within a spell, and is kept. */
void
test_trust_events_overlap(struct test *t)
{
    static const struct {
        const char *events, *err; /* NULL: reads */
    } c[] = {
        {"{ start_h = 18.0; end_h = 21.0; cut = 0.3; },\n"
         "{ start_h = 18.0; end_h = 21.0; cut = 0.3; }",
         "starting at hours 18 and 18 overlap"},
        {"{ start_h = 10.0; end_h = 20.0; cut = 0.2; },\n" /* inside another, listed later */
         "{ start_h = 30.0; end_h = 31.0; cut = 0.3; },\n"
         "{ start_h = 12.0; end_h = 13.0; cut = 0.4; },\n"
         "{ start_h = 2.0; end_h = 3.0; cut = 0.3; }",
         "starting at hours 10 and 12 overlap"},
        {"{ start_h = 2.0; end_h = 3.0; cut = 0.3; ramp_up_min = 30.0; },\n" /* its ramp up */
         "{ start_h = 3.25; end_h = 4.0; cut = 0.3; }",
         "starting at hours 2 and 3.25 overlap"},
        {"{ start_h = 2.0; end_h = 3.0; cut = 0.3; ramp_up_min = 30.0; },\n"
         "{ start_h = 3.5; end_h = 4.0; cut = 0.3; }",
         NULL},
        {"{ start_h = 2.0; end_h = 3.0; cut = 0.3; },\n" /* back to back */
         "{ start_h = 3.0; end_h = 4.0; cut = 0.5; }",
         NULL},
    };
    struct pfs_scenario *sc = malloc(sizeof *sc);

    for (size_t k = 0; sc && k < sizeof c / sizeof *c; k++) {
        char text[600];
        struct pfs_diag d = {0};
        int rc;

        snprintf(text, sizeof text,
                 "scenario = {\n  duration_days = 2.0;\n  dr_events = (\n%s\n);\n};\n",
                 c[k].events);
        rc = pfs_scenario_load(test_write(t, 0, "ev.cfg", text), sc, &d);
        if (!c[k].err) {
            CHECK_INT(rc, 0);
            continue;
        }
        CHECK_INT(rc, PFS_EINVAL);
        CHECK_INT(d.line, 3);
        if (!strstr(d.message, c[k].err) || !strstr(d.message, "scenario.dr_events"))
            test_fail(t, __FILE__, __LINE__, "case %zu: %s", k, d.message);
    }
    /* A grid signal's two spells an hour apart, with 90-minute ramps: the first's ramp up
     * runs into the second. With 60-minute ramps they are back to back. */
    test_write(t, 0, "grid.csv",
               "date,hour,load\n2024-01-01,1,1\n2024-01-01,2,9\n2024-01-01,3,9\n"
               "2024-01-01,4,1\n2024-01-01,5,9\n2024-01-01,6,9\n2024-01-01,7,1\n");
    for (int ramp = 60; sc && ramp <= 90; ramp += 30) {
        char text[400];
        struct pfs_diag d = {0};
        int rc;

        snprintf(text, sizeof text,
                 "scenario = {\n  duration_days = 1.0;\n  dr_events = ();\n"
                 "  dr_grid = { file = \"grid.csv\"; column = \"load\"; threshold = 5.0;\n"
                 "    ramp_min = %d.0; };\n};\n",
                 ramp);
        rc = pfs_scenario_load(test_write(t, 0, "grid.cfg", text), sc, &d);
        CHECK_INT(rc, ramp == 60 ? 0 : PFS_EINVAL);
        if (rc == 0) {
            CHECK_INT(sc->n_dr, 2);
            continue;
        }
        CHECK_INT(d.line, 4);
        if (!strstr(d.message, "scenario.dr_grid") ||
            !strstr(d.message, "starting at hours 1 and 4 overlap") ||
            !strstr(d.message, "dr_grid a ramp_min shorter"))
            test_fail(t, __FILE__, __LINE__, "%s", d.message);
    }
    free(sc);
}

/* An event or a workload file's job the scenario gives after its own end is not part of the
 * run; run and check now say so (before, "1 DR events" and nothing more, and the jobs counted
 * as submitted, listed in the per-job rows and in check's GPU time asked), and say nothing
 * where --days asked for a shorter run. */
void
test_trust_after_end(struct test *t)
{
    const char *cfg =
        test_write(t, 0, "late.cfg",
                   "scenario = {\n  duration_days = 0.5;\n  facility = { gpus = 64; };\n"
                   "  dr_events = ( { start_h = 2.0; end_h = 3.0; cut = 0.3; },\n"
                   "    { start_h = 12.0; end_h = 13.0; cut = 0.3; },\n"
                   "    { start_h = 30.0; end_h = 31.0; cut = 0.3; } );\n};\n");
    const char *said = "2 DR events of the scenario start at or after its end (0.5 days) and are "
                       "not simulated";
    char args[700], *out, *err;

    snprintf(args, sizeof args, "run %s --policy equal --json", cfg);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(err && strstr(err, said));
    CHECK(out && strstr(out, "\"dr_events\": 1,"));
    free(out);
    free(err);
    snprintf(args, sizeof args, "check %s", cfg);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(out && strstr(out, "DR events inside the run: 1.") && strstr(out, said));
    free(out);
    free(err);
    snprintf(args, sizeof args, "run %s --policy equal --csv --days 0.25", cfg);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(err && strstr(err, "not simulated") == NULL);
    free(out);
    free(err);
    /* Three jobs, one submitted at the end itself (it arrives), one after it (it does not). */
    test_write(t, 0, "wl.csv",
               "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier\n"
               "a,0,h200-049,2,380284,1e6,firm\nb,43200,h200-060,2,761738,1e6,flex1\n"
               "c,43200.5,h200-146,8,131074837,1e6,firm\n");
    cfg = test_write(t, 0, "wl.cfg",
                     "scenario = {\n  duration_days = 0.5;\n  facility = { gpus = 64; };\n"
                     "  workload = { file = \"wl.csv\"; };\n  dr_events = ();\n};\n");
    snprintf(args, sizeof args, "run %s --policy equal --json --jobs-csv %s/jobs.csv", cfg,
             t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(err && strstr(err, "1 job of the workload is submitted after the scenario's end (0.5 "
                             "days) and is not simulated"));
    CHECK(out && strstr(out, "\"jobs_submitted\": 2,"));
    free(out);
    free(err);
    snprintf(args, sizeof args, "%s/jobs.csv", t->tmpdir);
    out = test_slurp(args);
    CHECK(out && strstr(out, "\nequal,a,") && strstr(out, "\nequal,b,") && !strstr(out, ",c,"));
    free(out);
}

void
test_trust_pool_settings(struct test *t)
{
    /* facility.pools read, defaulted, written canonically and read back; bad ones refused
     * with the setting's path and line. */
    struct pfs_scenario *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    struct pfs_diag d = {0};
    char *canon = NULL;
    size_t len = 0;
    FILE *fp;

    CHECK_INT(pfs_scenario_load(test_write(t, 0, "p.cfg",
                                           "scenario = { facility = { node_other_w = 900.0;\n"
                                           "  pools = ( { gpu = \"h100-sxm\"; gpus = 512; },\n"
                                           "    { name = \"b\"; gpu = \"h200-sxm\"; gpus = 256;\n"
                                           "      gpus_per_node = 4; } ); }; };\n"),
                                a, &d),
              0);
    CHECK_INT(a->n_pools, 2);
    CHECK_INT(a->gpus, 768);
    CHECK_STR(a->pools[0].name, "h100-sxm");
    CHECK_INT(a->pools[0].gpus_per_node, 8);
    CHECK_NEAR(a->pools[1].node_other_w, 900, 0);
    CHECK_INT(a->pools[1].gpus_per_node, 4);
    fp = open_memstream(&canon, &len);
    pfs_scenario_write(a, fp);
    fclose(fp);
    CHECK_INT(pfs_scenario_parse(canon, "canonical", b, &d), 0);
    CHECK(b->n_pools == 2 && memcmp(a->pools, b->pools, sizeof a->pools) == 0);
    free(canon);
    CHECK_INT(
        pfs_scenario_load(test_write(t, 0, "p.cfg",
                                     "scenario = { facility = { gpus = 8;\n"
                                     "  pools = ( { gpu = \"h100-sxm\"; gpus = 8; } ); }; };\n"),
                          a, &d),
        PFS_EINVAL);
    CHECK_STR(d.message, "scenario.facility.pools: give either pools or gpus and gpu, not both");
    d = (struct pfs_diag){0};
    CHECK_INT(pfs_scenario_load(test_write(t, 0, "p.cfg",
                                           "scenario = { facility = {\n"
                                           "  pools = ( { gpu = \"h100-sxm\"; gpus = 8; },\n"
                                           "    { gpu = \"h100-sxm\"; gpus = 8; } ); }; };\n"),
                                a, &d),
              PFS_EINVAL);
    CHECK_STR(d.message,
              "scenario.facility.pools.[1]: two pools of the same name (give each a name)");
    CHECK_INT(d.line, 3);
    d = (struct pfs_diag){0};
    CHECK_INT(pfs_scenario_load(test_write(t, 0, "p.cfg",
                                           "scenario = { facility = {\n"
                                           "  pools = ( { gpu = \"z300\"; gpus = 8; } ); }; };\n"),
                                a, &d),
              PFS_EINVAL);
    CHECK_STR(d.message,
              "scenario.facility.pools.[0].gpu: unknown GPU profile 'z300' (pfisim gpus)");
    free(a);
    free(b);
}

/* alloc where equal has no answer (a budget of 200 kW for the corpus's 189 jobs, whose
 * minimum caps need 368 kW; the oracle, sla and deadline pause jobs and answer): before,
 * their rows read "+nan" against equal (the JSON a bare nan, which no parser reads) and the
 * note blamed an oracle gaining less than 0.1%. And options that did nothing without a word:
 * --plot and --uncertainty-seed without --uncertainty, --policy and --json with it, --csv
 * with --json (alloc, run, price: the JSON came out). Under --uncertainty a budget below
 * every draw's minimum caps printed zero draws for every policy and exited 0. */
void
test_trust_alloc_edges(struct test *t)
{
    static const char *const alloc = "alloc traces/h200-h100/curves.csv --budget-w 200000";
    char args[600], *out, *err;

    for (int f = 0; f < 3; f++) {
        snprintf(args, sizeof args, "%s%s", alloc, f == 0 ? "" : f == 1 ? " --csv" : " --json");
        CHECK_INT(test_run(t, args, &out, &err), 3); /* (below the minimum caps: bad input) */
        CHECK(out && !strstr(out, "nan") && strstr(out, "oracle"));
        if (f == 0)
            CHECK(strstr(out, "gap: not defined, equal is infeasible here.") &&
                  strstr(out, " tokens/s              -        -              -   0.0000\n"));
        if (f == 1)
            CHECK(out && strstr(out, "\noracle,") && strstr(out, ",tokens/s,,,,0.0000\n"));
        if (f == 2)
            CHECK(out && strstr(out, "\"delta_vs_equal\": null, \"gap_recovered\": null, "
                                     "\"mean_gain_per_job\": null"));
        free(out);
        free(err);
    }
    refused(t, "alloc synth:b200 --cut 0.3 --plot x.png", 2, "--plot needs --uncertainty N");
    refused(t, "alloc synth:b200 --cut 0.3 --uncertainty-seed 2", 2,
            "--uncertainty-seed needs --uncertainty N");
    refused(t, "alloc synth:b200 --cut 0.3 --uncertainty 2 --policy pfi", 2, "not with --policy");
    refused(t, "alloc synth:b200 --cut 0.3 --uncertainty 2 --json", 2, "not with --json");
    refused(t, "alloc synth:b200 --cut 0.3 --csv --json", 2, "give --csv or --json, not both");
    refused(t, "run --days 0.01 --csv --json", 2, "give --csv or --json, not both");
    refused(t, "run --days 0.01 --uncertainty-seed 2", 2,
            "--uncertainty-seed needs --uncertainty N");
    refused(t, "price x.db --csv --json", 2, "give --csv or --json, not both");
    CHECK_INT(test_run(t, "alloc synth:b200 --budget-w 50000 --uncertainty 3", &out, &err), 3);
    CHECK(err &&
          strstr(err, "pfisim alloc: equal: no answer on 3 of 3 draws (the first: "
                      "infeasible for equal: the budget of 50000 W is below") &&
          strstr(err, "minimum caps on 3 of 3 draws: infeasible without pausing"));
    free(out);
    free(err);
}

/* Settings the source of jobs does not read, which did nothing without a word: a scenario's
 * workload.load with Poisson arrivals (the same bytes as without it), its arrivals, tiers
 * and slack beside a workload file; `workload --load` with other than fitted arrivals,
 * `--start-day` with other than a real trace, and `--fit` with the options that build a
 * workload. The scenario's are warnings (a copy of configs/default.cfg keeps its load), the
 * command's usage errors. */
void
test_trust_unread_settings(struct test *t)
{
    const char *cfg =
        test_write(t, 0, "pl.cfg",
                   "scenario = {\n  duration_days = 0.2;\n  facility = { gpus = 64; };\n"
                   "  workload = { arrivals = \"poisson:10\"; load = 0.5; };\n"
                   "  dr_events = ();\n};\n");
    const char *said = "scenario.workload.load does nothing with arrivals 'poisson:10': only "
                       "fitted:SOURCE arrivals are scaled to a load";
    char args[700], *out, *err, *plain;

    snprintf(args, sizeof args, "run %s --policy equal --csv", cfg);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(err && strstr(err, said));
    free(err);
    test_write(t, 0, "pl.cfg",
               "scenario = {\n  duration_days = 0.2;\n  facility = { gpus = 64; };\n"
               "  workload = { arrivals = \"poisson:10\"; };\n  dr_events = ();\n};\n");
    CHECK_INT(test_run(t, args, &plain, &err), 0);
    CHECK(err && !*err);
    CHECK(out && plain && strcmp(out, plain) == 0); /* (it did nothing) */
    free(out);
    free(err);
    free(plain);
    test_write(t, 0, "wl.csv",
               "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier\n"
               "a,0,h200-049,2,380284,1e6,firm\n");
    cfg = test_write(t, 0, "wf.cfg",
                     "scenario = {\n  duration_days = 0.2;\n  facility = { gpus = 64; };\n"
                     "  workload = { file = \"wl.csv\"; tiers = { firm = 1.0; flex1 = 0.0; "
                     "flex2 = 0.0; flex3 = 0.0; }; slack = [5.0, 6.0]; };\n"
                     "  dr_events = ();\n};\n");
    snprintf(args, sizeof args, "check %s", cfg);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(out && strstr(out, "warning: scenario.workload.tiers and slack do nothing beside a "
                             "workload file"));
    free(out);
    free(err);
    refused(t, "workload --arrivals poisson:10 --days 1 --load 0.5", 2,
            "--load goes with fitted:SOURCE arrivals, not 'poisson:10'");
    refused(t, "workload --arrivals fitted:itp:cluster04 --days 1 --start-day 2", 2,
            "--start-day goes with a real trace");
    refused(t, "workload --fit itp:cluster04 --gpus 100", 2,
            "--fit SOURCE takes only -o (not --gpus)");
}

/* Options read and then ignored, each without a word: `predict eval --method physics`
 * evaluated the model given, `predict train --split transfer` trained on the train split,
 * `explain --csv` printed text; `grid --baseline-window-min` and a scenario event's
 * `baseline_window_min` with the instant baseline (which has no window); `model --fit
 * --alpha` (the fit gives the job's parameters); `fit --shared --loo` (the leave-one-out
 * ran); `sweep --list --csv`; `synth --gpu b200 --transfer 5` (no twins made);
 * `policy-check --policy equal --policy equal` (checked and printed twice); `capacity
 * --plot c.jpg` and `alloc --plot u.txt` (PNG bytes under those names). Refused now,
 * naming the option. And `run --timeseries-csv -` printed the summary's table after the
 * CSV on standard output: now on standard error; `report -o -` its name after the PDF, `fit
 * --save -` the models after the table. */
void
test_trust_options_ignored(struct test *t)
{
    const char *grid = test_write(t, 0, "g.csv",
                                  "date,hour,SRP Actual\n2024-07-01,1,100\n2024-07-01,2,500\n"
                                  "2024-07-01,3,100\n");
    const char *cfg = test_write(t, 1, "bw.cfg",
                                 "scenario = {\n  duration_days = 1.0;\n  dr_events = (\n"
                                 "    { start_h = 5.0; end_h = 7.0; cut = 0.3;\n"
                                 "      baseline_window_min = 30.0; } );\n};\n");
    char args[700], want[600], *out, *err;

    refused(t, "predict eval --model traces/h200-h100/predictor.cfg --method physics", 2,
            "predict eval does not take --method");
    refused(t, "predict train --split transfer", 2, "predict train does not take --split");
    refused(t, "predict explain --model traces/h200-h100/predictor.cfg --csv", 2,
            "predict explain does not take --csv");
    snprintf(args, sizeof args, "grid %s --threshold 300 --baseline-window-min 30", grid);
    refused(t, args, 2, "--baseline-window-min goes with --baseline average");
    snprintf(args, sizeof args,
             "grid %s --threshold 300 --baseline average --baseline-window-min 30", grid);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(out && strstr(out, "baseline = \"average\"; baseline_window_min = 30;"));
    free(out);
    free(err);
    snprintf(args, sizeof args, "check %s", cfg);
    snprintf(want, sizeof want,
             "%s:5: error: scenario.dr_events.[0].baseline_window_min: goes with baseline = "
             "\"average\"",
             cfg);
    refused(t, args, 3, want);
    snprintf(args, sizeof args, "fit traces/h200-h100/curves.csv --save %s/fit.cfg", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "model --fit %s/fit.cfg --job h200-001 --alpha 2", t->tmpdir);
    refused(t, args, 2, "--fit gives the job's parameters: not --alpha");
    refused(t, "fit traces/h200-h100/curves.csv --shared --loo", 2,
            "give --shared or --loo, not both");
    refused(t, "sweep configs/sweeps/oversub.cfg --list --csv", 2,
            "--list runs nothing: not with --csv");
    snprintf(args, sizeof args, "synth -o %s/s --gpu b200 --transfer 5", t->tmpdir);
    refused(t, args, 2, "--transfer makes H100 twins; --gpu makes its configurations");
    snprintf(args, sizeof args, "%s/s", t->tmpdir);
    CHECK(access(args, F_OK) != 0);
    refused(t, "policy-check --policy equal --policy equal", 2, "policy 'equal' named twice");
    refused(t, "capacity configs/default.cfg --gpus 256 --plot c.jpg", 2,
            "--plot takes a .png, .svg or .pdf file, got 'c.jpg'");
    refused(t, "alloc synth:b200 --cut 0.3 --uncertainty 2 --plot u.txt", 2,
            "--plot takes a .png, .svg or .pdf file, got 'u.txt'");
    /* A CSV asked for on standard output came with the summary's table after it. */
    CHECK_INT(test_run(t, "run --days 0.05 --policy equal --csv --timeseries-csv -", &out, &err),
              0);
    CHECK(out && strncmp(out, "t_s,policy,", 11) == 0 && !strstr(out, "policy,tokens"));
    CHECK(err && strstr(err, "policy,tokens,") && strstr(err, "\nequal,"));
    free(out);
    free(err);
    /* So did `report -o -` its name ("-") after the PDF; `fit --save -` its models after its
     * table. */
    snprintf(args, sizeof args, "run --days 0.05 --policy equal --db %s/r.db", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "report %s/r.db -o -", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    { /* (the PDF holds NUL bytes: its end read from test_run's file of it) */
        char end[7] = "", path[600];
        FILE *fp;

        snprintf(path, sizeof path, "%s/stdout", t->tmpdir);
        if ((fp = fopen(path, "rb")) != NULL) {
            if (fseek(fp, -6, SEEK_END) != 0 || fread(end, 1, 6, fp) != 6)
                end[0] = '\0';
            fclose(fp);
        }
        CHECK_STR(end, "%%EOF\n");
    }
    refused(t, "fit traces/h200-h100/curves.csv --save -", 2,
            "--save takes a file: standard output carries the fit's table");
    /* Zeus's A40 summary imported as another GPU's (from the command or a scenario's
     * import:zeus:GPU:PATH corpus) was labelled that GPU; its --job-id was ignored. The
     * check is on the name, before the file is read: an empty one does. */
    test_write(t, 2, "summary_power_a40.csv", "");
    snprintf(args, sizeof args, "import zeus %s/summary_power_a40.csv --gpu h100-sxm", t->tmpdir);
    snprintf(want, sizeof want,
             "%s/summary_power_a40.csv: error: measured on a40, as the file's name says, not on "
             "h100-sxm",
             t->tmpdir);
    refused(t, args, 3, want);
    snprintf(args, sizeof args, "import zeus %s/summary_power_a40.csv --job-id x", t->tmpdir);
    refused(t, args, 2, "--job-id names the job of a telemetry import");
    /* model's range of caps was cut at 1,024 without a word (200 to 201 W at --step 0.001),
     * and a cap outside the GPU's limits shown as any other. */
    refused(t, "model h200-sxm --step 0.001", 2,
            "--step 0.001 gives 500001 caps over 200-700 W: at most 1024");
    CHECK_INT(test_run(t, "model h200-sxm --caps 100,300", &out, &err), 0);
    CHECK(err && strstr(err, "h200-sxm's limits are 200-700 W: a cap of 100 W is no setting"));
    CHECK(out && strstr(out, "\n     100 ") && strstr(out, "\n     300 "));
    free(out);
    free(err);
}

/* Two sweep points are the same runs only if every axis makes them so: the check on each
 * axis alone, on the base, refused dr_generator.per_year [0, 20] where the base's two days
 * draw no event but the sweep's own duration axis gives 30 days, and with it every `capacity
 * --days 30 --dr-per-year 10` on the default scenario (7 days: round(10 x (7 - 3) / 365) =
 * 0 events drawn), naming capacity's temporary file. Now the points are compared; capacity
 * says itself when the rate draws no event in the run. */
void
test_trust_sweep_axes_meet(struct test *t)
{
    const char *base = test_write(t, 0, "base.cfg",
                                  "scenario = { duration_days = 2.0; facility = { gpus = 64; }; "
                                  "dr_events = (); };\n");
    char text[800], args[900], *out, *err;
    const char *sw;

    snprintf(text, sizeof text,
             "sweep = { scenario = \"%s\";\n axes = (\n"
             " { setting = \"dr_generator.per_year\"; values = [0.0, 20.0]; },\n"
             " { setting = \"duration_days\"; values = [30.0]; } ); };\n",
             base);
    sw = test_write(t, 1, "meet.cfg", text);
    snprintf(args, sizeof args, "sweep %s --list", sw);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    /* round(20 x (30 - 3) / 365) = 1 event drawn */
    CHECK(out && strstr(out, "0 dr_generator.per_year=0 duration_days=30 (64 GPUs, 0 DR events") &&
          strstr(out, "1 dr_generator.per_year=20 duration_days=30 (64 GPUs, 1 DR events"));
    free(out);
    free(err);
    CHECK_INT(test_run(t,
                       "capacity configs/default.cfg --gpus 256 --days 30 --dr-per-year 10 "
                       "--policy equal",
                       &out, &err),
              0);
    CHECK(out && strstr(out, "10 DR events a year drawn"));
    free(out);
    free(err);
    refused(t, "capacity configs/default.cfg --gpus 256 --days 3 --dr-per-year 5", 3,
            "--dr-per-year 5 draws no DR event in these 3 days");
}
