/*
 * tests/test_deadline.c - the deadline policy (policies/deadline.c) against hand
 * computations: two jobs, one budget, one deadline each.
 *
 * Both jobs are 1 GPU (limits 200-700 W, reference 700 W), 100 tokens/s at full power, with
 * given PFI (no predictor): A's PFI is 1 at every cut, so its predicted curve is
 * T = 100 P / 700; B's is 0.5, so T = 50 + 50 P / 700 from 350 W up and, extrapolated in
 * proportion below, T = 75 P / 350.
 */
#include <stdlib.h>

#include "test.h"

static void
two_jobs(struct pfs_alloc_job j[2], struct pfs_telemetry tel[2], const double pfi[2],
         const double remaining[2], const double deadline[2], const int tier[2])
{
    for (int i = 0; i < 2; i++) {
        j[i] = (struct pfs_alloc_job){.n_gpus = 1,
                                      .min_w = 200,
                                      .max_w = 700,
                                      .ref_w = 700,
                                      .idle_w = 75,
                                      .tier = tier[i],
                                      .deadline_s = deadline[i],
                                      .remaining_tokens = remaining[i],
                                      .now_s = 1000};
        snprintf(j[i].job_id, sizeof j[i].job_id, "%c", 'A' + i);
        memset(&tel[i], 0, sizeof tel[i]);
        pfs__strlcpy(tel[i].job_id, j[i].job_id, sizeof tel[i].job_id);
        tel[i].n_gpus = 1;
        tel[i].tokens_per_s = 100;
        for (int k = 0; k < PFS_N_CUTS; k++)
            tel[i].pfi_given[k] = pfi[i];
    }
}

static int
allocate(const char *policy, double budget, struct pfs_alloc_job j[2], struct pfs_telemetry t[2],
         struct pfs_alloc_decision out[2])
{
    struct pfs_alloc_view v = {.budget_w = budget, .n_jobs = 2, .jobs = j, .telemetry = t};
    struct pfs_diag d = {0};

    return pfs_policy_allocate(pfs_policy_find(policy), &v, out, &d);
}

void
test_deadline_two_jobs(struct test *t)
{
    static const double pfi[2] = {1, 0.5};
    /* A needs 360,000 tokens in 4,500 s: 80 tokens/s, 560 W. B needs 320,000 in 4,000 s:
     * 80 tokens/s, 50 + 50 P / 700 = 80 at 420 W. */
    static const double remaining[2] = {360000, 320000}, deadline[2] = {5500, 5000};
    static const int firm_flex3[2] = {PFS_TIER_FIRM, PFS_TIER_FLEX3};
    static const int flex3_firm[2] = {PFS_TIER_FLEX3, PFS_TIER_FIRM};
    struct pfs_alloc_job j[2];
    struct pfs_telemetry tel[2];
    struct pfs_alloc_decision out[2];

    /* 1,000 W: the floors (560 + 420 W) fit; the 20 W left go to A, whose predicted curve
     * is the steeper above its floor (1/7 against 1/14 tokens/s per W): A 580 W (82.9
     * tokens/s), B 420 W (80): both deadlines kept. */
    two_jobs(j, tel, pfi, remaining, deadline, firm_flex3);
    CHECK_INT(allocate("deadline", 1000, j, tel, out), 0);
    CHECK_NEAR(out[0].cap_w, 580, 1e-6);
    CHECK_NEAR(out[1].cap_w, 420, 1e-6);
    CHECK_INT(out[0].deadline, PFS_DEADLINE_KEPT);
    CHECK_INT(out[1].deadline, PFS_DEADLINE_KEPT);
    /* pfi, blind to deadlines, gives B only what its steep first segment is worth: A 650 W,
     * B 350 W (75 tokens/s < 80): B would miss. equal: 500 W each, A at 71.4 would miss. */
    CHECK_INT(allocate("pfi", 1000, j, tel, out), 0);
    CHECK_NEAR(out[1].cap_w, 350, 1e-6);
    CHECK_INT(allocate("equal", 1000, j, tel, out), 0);
    CHECK_NEAR(out[0].cap_w, 500, 1e-6);

    /* 900 W: the floors need 980 W; the rule gives up the Flex 3 job, B: A keeps 560 W
     * (80 tokens/s, exactly its need), B goes to 200 W and takes the 140 W left on its
     * steep segment: 340 W. */
    CHECK_INT(allocate("deadline", 900, j, tel, out), 0);
    CHECK_NEAR(out[0].cap_w, 560, 1e-6);
    CHECK_NEAR(out[1].cap_w, 340, 1e-6);
    CHECK_INT(out[0].deadline, PFS_DEADLINE_KEPT);
    CHECK_INT(out[1].deadline, PFS_DEADLINE_BUDGET);
    /* The tiers the other way round: A (Flex 3) is given up; B keeps 420 W, and A, from
     * 200 W, takes the 280 W left (its slope 1/7 beats B's 1/14 above 420 W): 480 W. */
    two_jobs(j, tel, pfi, remaining, deadline, flex3_firm);
    CHECK_INT(allocate("deadline", 900, j, tel, out), 0);
    CHECK_NEAR(out[0].cap_w, 480, 1e-6);
    CHECK_NEAR(out[1].cap_w, 420, 1e-6);
    CHECK_INT(out[0].deadline, PFS_DEADLINE_BUDGET);
    CHECK_INT(out[1].deadline, PFS_DEADLINE_KEPT);

    /* A deadline already past, and one full power cannot make (B needs 110 tokens/s): no
     * floor for either, said so; the budget is then divided as pfi would. */
    {
        static const double rem2[2] = {1000, 440000}, dl2[2] = {900, 5000};

        two_jobs(j, tel, pfi, rem2, dl2, firm_flex3);
        CHECK_INT(allocate("deadline", 1000, j, tel, out), 0);
        CHECK_INT(out[0].deadline, PFS_DEADLINE_PAST);
        CHECK_INT(out[1].deadline, PFS_DEADLINE_TOO_SLOW);
        CHECK_NEAR(out[0].cap_w, 650, 1e-6);
        CHECK_NEAR(out[1].cap_w, 350, 1e-6);
    }
    /* The limit is announced to lift at 3,000 s: after it A runs at full power, 100 tokens/s
     * for the 2,500 s to its deadline, so only 360,000 - 250,000 = 110,000 tokens must be
     * done in the 2,000 s before: 55 tokens/s, a floor of 385 W. B: 320,000 - 200,000 =
     * 120,000 in 2,000 s, 60 tokens/s: on its extrapolated segment 75 P / 350 = 60 at 280 W.
     * At 700 W both floors fit (665 W); the 35 W left go to B's steep segment (3/14 per W
     * below 350 W) first: B 315 W, A 385 W. */
    two_jobs(j, tel, pfi, remaining, deadline, firm_flex3);
    j[0].limit_until_s = j[1].limit_until_s = 3000;
    CHECK_INT(allocate("deadline", 700, j, tel, out), 0);
    CHECK_NEAR(out[0].cap_w, 385, 1e-6);
    CHECK_NEAR(out[1].cap_w, 315, 1e-6);
    CHECK_INT(out[0].deadline + out[1].deadline, PFS_DEADLINE_KEPT);
    /* 390 W, below the minimum caps (400 W): both deadlines given up, and still nothing
     * fits; B's deadline could be kept with more power later, so it is not paused for it:
     * infeasible. Were B's deadline already past, B (Flex 3) would be paused (75 W idle) and
     * A, firm and never paused, get the 315 W left. */
    two_jobs(j, tel, pfi, remaining, deadline, firm_flex3);
    CHECK_INT(allocate("deadline", 390, j, tel, out), PFS_EINVAL);
    j[1].deadline_s = 900;
    CHECK_INT(allocate("deadline", 390, j, tel, out), 0);
    CHECK_NEAR(out[0].cap_w, 315, 1e-6);
    CHECK_NEAR(out[1].pause_frac, 1, 0);
    CHECK_INT(out[0].deadline, PFS_DEADLINE_BUDGET);
    CHECK_INT(out[1].deadline, PFS_DEADLINE_PAST);
    /* A job that finishes in time even paused until the limit lifts is paused first, losing
     * nothing: the limit lifts at 1,500 s, B (Flex 3) then needs 320,000 / 100 = 3,200 s
     * plus its 120 s restart, and has 3,500 s. At 650 W with A's floor 560 W (no lift for A:
     * its deadline is before), B's floor at the minimum (200 W) does not fit; paused, it
     * draws 75 W, and A gets 575 W. */
    {
        static const double dl3[2] = {1450, 5000}, rem3[2] = {36000, 320000};

        two_jobs(j, tel, pfi, rem3, dl3, firm_flex3);
        j[0].limit_until_s = j[1].limit_until_s = 1500;
        j[0].restart_s = j[1].restart_s = 120;
        CHECK_INT(allocate("deadline", 650, j, tel, out), 0);
        CHECK_NEAR(out[1].pause_frac, 1, 0);
        CHECK_INT(out[1].deadline, PFS_DEADLINE_KEPT);
        CHECK_NEAR(out[0].cap_w, 575, 1e-6);
        CHECK_INT(out[0].deadline, PFS_DEADLINE_KEPT);
    }
}

void
test_deadline_study_figure(struct test *t)
{
    /* Study 3's figure from a small sweep of its shape: two cuts, one slack, two policies
     * (a day, the warm-up off): one figure, 900 x 520; a database without two cuts is
     * refused with the way out. */
    char args[2048], *out = NULL, *err = NULL;
    const char *base = test_write(t, 0, "base.cfg",
                                  "scenario = { name = \"dl\"; duration_days = 1.0;\n"
                                  "  facility = { gpus = 256; }; dr_events = ();\n"
                                  "  workload = { load = 0.6; slack = [1.2, 1.2]; };\n"
                                  "  dr_generator = { per_year = 365.0; warmup_h = 0.0;\n"
                                  "    duration_h = [4.0, 4.0]; }; };\n");
    char sweep[1024];

    snprintf(sweep, sizeof sweep,
             "sweep = { name = \"dl\"; scenario = \"%s\"; jobs = false;\n"
             "  axes = ( { setting = \"dr_generator.cut\"; values = [0.2, 0.4]; },\n"
             "           { setting = \"policy\"; values = [\"equal\", \"deadline\"]; } ); };\n",
             base);
    snprintf(args, sizeof args, "sweep %s --db %s/dl.db", test_write(t, 1, "dl.cfg", sweep),
             t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "plot %s/dl.db -o %s/figs --only deadlines", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(out && strstr(out, "deadlines-slack1.2.png") != NULL);
    free(out);
    free(err);
    snprintf(args, sizeof args, "%s/figs/deadlines-slack1.2.png", t->tmpdir);
    test_check_png(t, args, 900, 520);
    snprintf(args, sizeof args, "run --days 0.2 --policy equal --db=%s/one.db", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "plot %s/one.db -o %s/figs --only deadlines", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(err && strstr(err, "needs runs at two or more cuts") != NULL);
    free(out);
    free(err);
}
