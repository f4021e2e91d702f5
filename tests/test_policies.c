/*
 * tests/test_policies.c - every policy of the registry against the rules, on 1,000 seeded
 * random instances, and the oracle against brute force.
 *
 * Instances mix concave curves (the DVFS model with random job parameters) and
 * measured-like ones (the model sampled at 11 caps with 1% noise, made non-decreasing: not
 * concave), 1 to 200 jobs of 1 to 8 GPUs, budgets from the sum of minimum caps to above the
 * sum of maxima. Brute force: exhaustive search on a 5 W grid of average per-GPU power, from
 * paused (idle) to the maximum cap, for up to 4 single-GPU jobs (the last job takes the
 * largest that fits, which dominates), and dynamic programming over the budget in 5 W units
 * for up to 30. Both score a job by its envelope (pfs_truth_envelope), the yardstick every
 * policy is scored by, so equality is exact up to rounding.
 */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "../policies/policy.h"
#include "test.h"

struct instance {
    size_t n;
    struct pfs_alloc_job jobs[200];
    struct pfs_telemetry tel[200];
    struct pfs_curve *curves[200];
    struct pfs_truth *truth;
    double budget_w, min_total_w;
};

static void
instance_free(struct instance *in)
{
    for (size_t i = 0; i < in->n; i++)
        pfs_curve_free(in->curves[i]);
    pfs_truth_free(in->truth);
}

/* Builds a random instance; single_gpu and budget_step 5 for the brute-force cases. Each
 * job is the conformance rules' kind (pfs__policy_instance_job), half of them on sampled
 * curves, idle 75 W on both types so that every envelope breakpoint is on the 5 W grid. */
static int
instance_make(struct test *t, gsl_rng *r, size_t n, bool single_gpu, struct instance *in)
{
    struct pfs_gpu g[2];
    const struct pfs_gpu *gp[2] = {&g[0], &g[1]};
    struct pfs_diag d = {0};
    double max_total = 0;

    memset(in, 0, sizeof *in);
    pfs_gpu_find("h200-sxm", &g[0], &d);
    pfs_gpu_find("h100-sxm", &g[1], &d);
    in->n = n;
    for (size_t i = 0; i < n; i++) {
        struct pfs_alloc_job *j = &in->jobs[i];
        bool sampled = gsl_rng_uniform(r) < 0.5;

        if (pfs__policy_instance_job(r, gp, i, single_gpu, sampled, 75, j, &in->tel[i],
                                     &in->curves[i], &d) != 0) {
            test_fail(t, __FILE__, __LINE__, "curve: %s", d.message);
            in->n = i;
            return -1;
        }
        in->min_total_w += j->n_gpus * j->min_w;
        max_total += j->n_gpus * j->max_w;
    }
    if (pfs_truth_new((const struct pfs_curve *const *)in->curves, in->jobs, n, &in->truth, &d)) {
        test_fail(t, __FILE__, __LINE__, "truth: %s", d.message);
        return -1;
    }
    in->budget_w = in->min_total_w + gsl_rng_uniform(r) * (1.1 * max_total - in->min_total_w);
    if (single_gpu)
        in->budget_w = 5 * floor(in->budget_w / 5);
    return 0;
}

static double
total(const struct instance *in, const struct pfs_alloc_decision *d)
{
    double s = 0;

    for (size_t i = 0; i < in->n; i++)
        s += pfs_truth_throughput(in->truth, i, &d[i]);
    return s;
}

/* Exhaustive search on the 5 W grid of average power, up to 4 single-GPU jobs. */
static double
brute_force(const struct instance *in)
{
    size_t n = in->n;
    long steps[4], idx[4] = {0, 0, 0, 0};
    double best = -1;

    for (size_t i = 0; i < n; i++)
        steps[i] = lround((in->jobs[i].max_w - in->jobs[i].idle_w) / 5) + 1;
    for (;;) {
        double used = 0, value = 0;

        for (size_t i = 0; i + 1 < n; i++) {
            double x = in->jobs[i].idle_w + 5.0 * (double)idx[i];

            used += x;
            value += pfs_truth_envelope(in->truth, i, x);
        }
        {
            const struct pfs_alloc_job *last = &in->jobs[n - 1];
            double room = in->budget_w - used;

            if (room >= last->idle_w - 1e-9) {
                double x =
                    fmin(last->max_w, last->idle_w + 5 * floor((room - last->idle_w) / 5 + 1e-9));

                best = fmax(best, value + pfs_truth_envelope(in->truth, n - 1, x));
            }
        }
        size_t k = 0;

        while (k + 1 < n && ++idx[k] == steps[k])
            idx[k++] = 0;
        if (k + 1 >= n)
            break;
    }
    return best;
}

/* Dynamic programming over the budget above everyone's idle draw, in 5 W units. */
static double
dynamic_programming(const struct instance *in)
{
    double idle_total = 0, *v, *w, best;
    long units;

    for (size_t i = 0; i < in->n; i++)
        idle_total += in->jobs[i].idle_w;
    units = lround(floor((in->budget_w - idle_total) / 5 + 1e-9));
    v = calloc((size_t)units + 1, sizeof *v);
    w = calloc((size_t)units + 1, sizeof *w);
    for (size_t i = 0; i < in->n; i++) {
        const struct pfs_alloc_job *j = &in->jobs[i];
        long steps = lround((j->max_w - j->idle_w) / 5);

        for (long b = 0; b <= units; b++) {
            double m = -HUGE_VAL;

            for (long s = 0; s <= steps && s <= b; s++)
                m = fmax(m,
                         v[b - s] + pfs_truth_envelope(in->truth, i, j->idle_w + 5.0 * (double)s));
            w[b] = m;
        }
        memcpy(v, w, ((size_t)units + 1) * sizeof *v);
    }
    best = v[units];
    free(v);
    free(w);
    return best;
}

void
test_policies_properties(struct test *t)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    struct pfs_alloc_decision d[200], od[200];
    size_t n_brute = 0, n_dp = 0;

    gsl_rng_set(r, 2026);
    for (int inst = 0; inst < 1000 && t->failures < 20; inst++) {
        struct instance in;
        struct pfs_alloc_view v;
        struct pfs_diag diag = {0};
        bool small = inst % 5 == 0, medium = inst % 5 == 1;
        size_t n = small    ? 1 + gsl_rng_uniform_int(r, 4)
                   : medium ? 5 + gsl_rng_uniform_int(r, 26)
                            : 1 + gsl_rng_uniform_int(r, 200);
        double best;

        if (instance_make(t, r, n, small || medium, &in) != 0) {
            instance_free(&in);
            break;
        }
        v = (struct pfs_alloc_view){in.budget_w, in.n,         in.jobs, in.tel, in.truth,
                                    NULL,        {NULL, NULL}, NULL,    NULL,   0};
        CHECK_INT(pfs_policy_allocate(pfs_policy_find("oracle"), &v, od, &diag), 0);
        best = total(&in, od);
        /* Its decisions realise the envelope at the power they commit. */
        for (size_t i = 0; i < in.n; i++) {
            double avg =
                od[i].pause_frac * in.jobs[i].idle_w + (1 - od[i].pause_frac) * od[i].cap_w;

            CHECK_NEAR(pfs_truth_throughput(in.truth, i, &od[i]),
                       pfs_truth_envelope(in.truth, i, avg), 1e-9 * (1 + best));
        }
        for (size_t k = 0; pfs_policy_at(k); k++) {
            const struct pfs_policy_ops *ops = pfs_policy_at(k);
            const char *name = pfs_policy_name(ops);
            double used = 0;
            int rc;

            pfs_diag_clear(&diag);
            rc = pfs_policy_allocate(ops, &v, d, &diag);
            if (rc == PFS_EINVAL) {
                /* Only policies with floors or pauses may refuse a budget above the minimum
                 * caps, and then they say so. */
                if (strcmp(name, "equal") == 0 || strcmp(name, "pfi") == 0 ||
                    strcmp(name, "oracle") == 0 || strcmp(name, "proportional") == 0 ||
                    strcmp(name, "static-tag") == 0)
                    test_fail(t, __FILE__, __LINE__, "%s refused a feasible budget: %s", name,
                              diag.message);
                CHECK(strncmp(diag.message, "infeasible for ", 15) == 0);
                continue;
            }
            if (rc != 0)
                test_fail(t, __FILE__, __LINE__, "instance %d: %s: %s", inst, name, diag.message);
            for (size_t i = 0; rc == 0 && i < in.n; i++) {
                const struct pfs_alloc_job *j = &in.jobs[i];

                CHECK(d[i].cap_w >= j->min_w * (1 - 1e-12) && d[i].cap_w <= j->max_w * (1 + 1e-12));
                CHECK(d[i].pause_frac >= 0 && d[i].pause_frac <= 1);
                CHECK(pfs_policy_may_pause(ops) || !(d[i].pause_frac > 0));
                /* A resized job (resize-fair) runs on fewer GPUs; the rest idle. */
                CHECK(d[i].n_gpus >= 0 && d[i].n_gpus <= j->n_gpus);
                {
                    int on = d[i].n_gpus > 0 ? d[i].n_gpus : j->n_gpus;

                    used +=
                        on * (d[i].pause_frac * j->idle_w + (1 - d[i].pause_frac) * d[i].cap_w) +
                        (j->n_gpus - on) * j->idle_w;
                }
            }
            CHECK(used <= in.budget_w * (1 + 1e-9));
            /* A policy that says it is memoryless decides the same again, and the same
             * whatever the time-varying fields say (the simulator reuses its decisions). */
            if (rc == 0 && pfs_policy_memoryless(ops)) {
                struct pfs_alloc_job *moved = malloc((in.n + 1) * sizeof *moved);
                struct pfs_alloc_view mv = v;
                struct pfs_alloc_decision again[200];

                memcpy(moved, in.jobs, in.n * sizeof *moved);
                for (size_t i = 0; i < in.n; i++) {
                    moved[i].remaining_tokens = 1e6 * gsl_rng_uniform(r);
                    moved[i].now_s = 86400 * gsl_rng_uniform(r);
                    moved[i].limit_until_s = moved[i].now_s + 3600 * gsl_rng_uniform(r);
                    moved[i].restart_s = 600 * gsl_rng_uniform(r);
                    moved[i].deadline_s = moved[i].now_s + 7200 * gsl_rng_uniform(r);
                }
                mv.jobs = moved;
                CHECK_INT(pfs_policy_allocate(ops, &mv, again, &diag), 0);
                if (memcmp(again, d, in.n * sizeof *d) != 0)
                    test_fail(t, __FILE__, __LINE__,
                              "instance %d: %s says it is memoryless but "
                              "decides differently",
                              inst, name);
                free(moved);
            }
            /* The oracle is never beaten. */
            if (total(&in, d) > best * (1 + 1e-9) + 1e-9)
                test_fail(t, __FILE__, __LINE__, "instance %d: %s %.9g beats the oracle %.9g", inst,
                          name, total(&in, d), best);
        }
        if (small) {
            CHECK_NEAR(best, brute_force(&in), 1e-6 * best);
            n_brute++;
        } else if (medium) {
            CHECK_NEAR(best, dynamic_programming(&in), 1e-6 * best);
            n_dp++;
        }
        instance_free(&in);
    }
    CHECK_INT(n_brute, 200);
    CHECK_INT(n_dp, 200);
    gsl_rng_free(r);
}

void
test_policies_infeasible(struct test *t)
{
    /* A budget below the minimum caps: policies that may pause do so by tier (Flex first,
     * firm never); the others say it is infeasible. Never a silent overrun. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    struct instance in;
    struct pfs_alloc_decision d[200];

    gsl_rng_set(r, 11);
    if (instance_make(t, r, 40, false, &in) == 0) {
        struct pfs_alloc_view v;
        double budget = 0;

        /* Two firm jobs, the rest Flex: full power for the firm ones and idle for the rest fits;
         * the minimum caps of all do not. */
        for (size_t i = 0; i < in.n; i++) {
            in.jobs[i].tier = i < 2 ? PFS_TIER_FIRM : PFS_TIER_FLEX1 + (int)(i % 3);
            in.jobs[i].max_loss = pfs_tier_max_loss(in.jobs[i].tier);
            budget += in.jobs[i].n_gpus * (i < 2 ? in.jobs[i].max_w : in.jobs[i].idle_w);
        }
        budget = fmin(budget * 1.05, 0.9 * in.min_total_w);
        v = (struct pfs_alloc_view){budget, in.n,         in.jobs, in.tel, in.truth,
                                    NULL,   {NULL, NULL}, NULL,    NULL,   0};
        for (size_t k = 0; pfs_policy_at(k); k++) {
            const struct pfs_policy_ops *ops = pfs_policy_at(k);
            struct pfs_diag diag = {0};
            int rc = pfs_policy_allocate(ops, &v, d, &diag);

            if (!pfs_policy_may_pause(ops)) {
                CHECK_INT(rc, PFS_EINVAL);
                CHECK(strncmp(diag.message, "infeasible for ", 15) == 0);
                CHECK(strstr(diag.message, pfs_policy_name(ops)) != NULL);
                continue;
            }
            if (rc != 0) {
                CHECK_INT(rc, PFS_EINVAL);
                continue;
            }
            /* The oracle is the throughput ceiling, blind to tiers by design; the pausing
             * policies proper never pause a firm job. */
            if (strcmp(pfs_policy_name(ops), "oracle") == 0)
                continue;
            for (size_t i = 0; i < in.n; i++)
                if (in.jobs[i].tier == PFS_TIER_FIRM)
                    CHECK(!(d[i].pause_frac > 0));
        }
        /* sla pauses whole Flex jobs and meets the budget here. */
        {
            struct pfs_diag diag = {0};
            size_t n_paused = 0;

            CHECK_INT(pfs_policy_allocate(pfs_policy_find("sla"), &v, d, &diag), 0);
            for (size_t i = 0; i < in.n; i++)
                n_paused += d[i].pause_frac >= 1;
            CHECK(n_paused > 0);
        }
    }
    instance_free(&in);
    gsl_rng_free(r);
}

void
test_policies_views(struct test *t)
{
    /* What a policy may know is what its view holds: without true curves the oracle refuses,
     * without telemetry the PFI-aware policies do; equal needs neither. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    struct instance in;
    struct pfs_alloc_decision d[200];
    struct pfs_diag diag = {0};

    gsl_rng_set(r, 5);
    if (instance_make(t, r, 10, false, &in) == 0) {
        struct pfs_alloc_view v = {in.min_total_w * 1.2, in.n, in.jobs, NULL, NULL, NULL,
                                   {NULL, NULL},         NULL, NULL,    0};

        CHECK_INT(pfs_policy_allocate(pfs_policy_find("oracle"), &v, d, &diag), PFS_EINVAL);
        CHECK_STR(diag.message, "the oracle needs the jobs' true curves");
        pfs_diag_clear(&diag);
        CHECK_INT(pfs_policy_allocate(pfs_policy_find("pfi"), &v, d, &diag), PFS_EINVAL);
        CHECK_STR(diag.message, "the pfi policy needs each job's telemetry");
        pfs_diag_clear(&diag);
        CHECK_INT(pfs_policy_allocate(pfs_policy_find("equal"), &v, d, &diag), 0);
        /* equal: one level for all (all H100/H200 share limits here). */
        for (size_t i = 1; i < in.n; i++)
            CHECK_NEAR(d[i].cap_w, d[0].cap_w, 1e-9);
    }
    instance_free(&in);
    gsl_rng_free(r);
}

void
test_alloc_cli(struct test *t)
{
    char *out, *err, args[800];
    const char *curves, *map;

    /* Three single-GPU H200 jobs, measured at 200, 450 and 700 W. */
    curves = test_write(t, 0, "curves.csv",
                        "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                        "a,h200-sxm,1,200,40,tokens/s,195\n"
                        "a,h200-sxm,1,450,85,tokens/s,440\n"
                        "a,h200-sxm,1,700,100,tokens/s,650\n"
                        "b,h200-sxm,1,200,90,tokens/s,195\n"
                        "b,h200-sxm,1,450,99,tokens/s,420\n"
                        "b,h200-sxm,1,700,100,tokens/s,430\n"
                        "c,h200-sxm,2,200,100,tokens/s,195\n"
                        "c,h200-sxm,2,450,170,tokens/s,440\n"
                        "c,h200-sxm,2,700,200,tokens/s,690\n");
    /* Every policy, a 30% cut of 4 x 700 W: 1960 W. */
    snprintf(args, sizeof args, "alloc %s --cut 30%% --csv", curves);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strncmp(out,
                  "policy,total_throughput,unit,delta_vs_equal,gap_recovered,"
                  "mean_gain_per_job,min_rel_throughput\nequal,",
                  96) == 0);
    CHECK(strstr(out, "\noracle,") != NULL && strstr(out, ",1.0000,") != NULL);
    free(out);
    free(err);
    /* One policy's caps: equal gives every GPU 1960 / 4 = 490 W. */
    snprintf(args, sizeof args, "alloc %s --budget-w 1960 --policy equal --caps", curves);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strncmp(out, "job_id,n_gpus,cap_w,throughput,power_w,pause_frac\na,1,490.000,", 62) == 0);
    CHECK(strstr(out, "\nc,2,490.000,") != NULL);
    free(out);
    free(err);
    /* The nvidia-smi commands for a map of GPUs. */
    map = test_write(t, 1, "map.csv",
                     "job_id,host,gpu_index\na,node1,0\nb,node1,1\nc,node2,0\nc,node2,1\n");
    snprintf(args, sizeof args, "alloc %s --budget-w 1960 --policy equal --nvidia-smi %s", curves,
             map);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK_STR(out, "ssh node1 nvidia-smi -i 0 -pl 490\n"
                   "ssh node1 nvidia-smi -i 1 -pl 490\n"
                   "ssh node2 nvidia-smi -i 0 -pl 490\n"
                   "ssh node2 nvidia-smi -i 1 -pl 490\n");
    free(out);
    free(err);
    /* A budget below the minimum caps (4 x 200 W): exit 3, said clearly. */
    snprintf(args, sizeof args, "alloc %s --budget-w 700 --policy equal", curves);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK_STR(err, "pfisim: error: infeasible for equal: the budget of 700 W is below the 800 W "
                   "that the minimum caps need\n");
    free(out);
    free(err);
    snprintf(args, sizeof args, "alloc %s --budget-w 700", curves);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(strstr(err, "infeasible without pausing") != NULL);
    free(out);
    free(err);
    /* A one-point curve and one with no throughput (issue 17: the first failed naming
     * neither file nor job, the second printed -nan): refused, naming both. */
    {
        const char *one = test_write(t, 2, "one.csv",
                                     "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                                     "a,h200-sxm,1,300,5,tokens/s,290\n");
        const char *zero = test_write(t, 3, "zero.csv",
                                      "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                                      "b,h200-sxm,1,300,5,tokens/s,290\n"
                                      "b,h200-sxm,1,700,10,tokens/s,650\n"
                                      "a,h200-sxm,1,300,0,tokens/s,290\n"
                                      "a,h200-sxm,1,700,0,tokens/s,650\n");

        snprintf(args, sizeof args, "alloc %s --cut 30%%", one);
        CHECK_INT(test_run(t, args, &out, &err), 3);
        CHECK(err && strstr(err, "one.csv:2: error: job 'a': 1 measured point; a curve needs at "
                                 "least 2 caps") != NULL);
        free(out);
        free(err);
        snprintf(args, sizeof args, "alloc %s --cut 30%%", zero);
        CHECK_INT(test_run(t, args, &out, &err), 3);
        CHECK(err && strstr(err, "zero.csv:4: error: job 'a': no throughput at its highest cap "
                                 "(700 W)") != NULL);
        free(out);
        free(err);
    }
    snprintf(args, sizeof args, "alloc %s --cut 30%% --policy nosuch", curves);
    CHECK_INT(test_run(t, args, &out, &err), 2);
    CHECK(strncmp(err, "pfisim alloc: unknown policy 'nosuch' (known: equal pfi oracle", 62) == 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "alloc %s --cut 130%%", curves);
    CHECK_INT(test_run(t, args, &out, &err), 2);
    free(out);
    free(err);
    CHECK_INT(test_run(t, "--list-policies", &out, &err), 0);
    CHECK(strncmp(out, "equal ", 6) == 0 && strstr(out, "\noracle ") != NULL);
    free(out);
    free(err);
}

/* Water-filling by classes (pfs__waterfill_classes, what the oracle uses in the simulator)
 * against water-filling job by job, on random views where jobs share a few curves and GPU
 * counts, budgets from the minimum caps to more than everything: the same throughput to 1e-9,
 * never over the budget, and every job's cap the same within 1e-6 W (jobs of one class have
 * the same slopes, bit for bit, either way, and both give the budget left at the price to
 * them in job order: only the rounding of what is left may differ). */
void
test_waterfill_classes(struct test *t)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);

    gsl_rng_set(r, 91);
    for (int inst = 0; inst < 200 && t->failures < 10; inst++) {
        size_t n = 1 + gsl_rng_uniform_int(r, 400), n_cls = 1 + gsl_rng_uniform_int(r, 12);
        struct pfs_pwl *proto = calloc(n_cls, sizeof *proto), *c = calloc(n, sizeof *c);
        struct pfs_alloc_job *jobs = calloc(n, sizeof *jobs);
        struct pfs_alloc_decision *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
        uint32_t *cls = calloc(n, sizeof *cls);
        int *gpus = calloc(n_cls, sizeof *gpus);
        double lo = 0, hi = 0, budget, got_a = 0, got_b = 0, used = 0;
        struct pfs_diag d = {0};
        size_t differ = 0;

        for (size_t k = 0; k < n_cls; k++) {
            double s = 1;

            gpus[k] = 1 << gsl_rng_uniform_int(r, 5);
            proto[k].n = 2 + gsl_rng_uniform_int(r, 10);
            for (size_t q = 0; q < proto[k].n; q++) {
                proto[k].x[q] = 200 + 50.0 * (double)q;
                proto[k].y[q] = q == 0 ? 100 * gsl_rng_uniform_pos(r)
                                       : proto[k].y[q - 1] + 50 * (s *= gsl_rng_uniform_pos(r));
            }
        }
        for (size_t i = 0; i < n; i++) {
            cls[i] = (uint32_t)gsl_rng_uniform_int(r, n_cls);
            c[i] = proto[cls[i]];
            jobs[i].n_gpus = gpus[cls[i]];
            lo += jobs[i].n_gpus * c[i].x[0];
            hi += jobs[i].n_gpus * c[i].x[c[i].n - 1];
        }
        budget = lo + (hi - lo) * 1.1 * gsl_rng_uniform(r);
        CHECK_INT(pfs__waterfill("test", c, jobs, n, budget, NULL, a, &d), 0);
        CHECK_INT(pfs__waterfill_classes("test", c, jobs, n, cls, (uint32_t)n_cls, budget, b, &d),
                  0);
        for (size_t i = 0; i < n; i++) {
            got_a += pfs_pwl_eval(&c[i], a[i].cap_w);
            got_b += pfs_pwl_eval(&c[i], b[i].cap_w);
            used += jobs[i].n_gpus * b[i].cap_w;
            differ += fabs(a[i].cap_w - b[i].cap_w) > 1e-6;
        }
        CHECK_NEAR(got_b, got_a, 1e-9 * got_a);
        if (!(used <= budget * (1 + 1e-12)))
            test_fail(t, __FILE__, __LINE__, "instance %d: %.6f W of a %.6f W budget", inst, used,
                      budget);
        if (differ)
            test_fail(t, __FILE__, __LINE__, "instance %d: %zu of %zu jobs' caps differ", inst,
                      differ, n);
        free(proto);
        free(c);
        free(jobs);
        free(a);
        free(b);
        free(cls);
        free(gpus);
    }
    gsl_rng_free(r);
}

/* A random envelope for the water-filling tests: 2 to 1 + most points 50 W apart from 200 W,
 * rising by whole units (exact sums) or, not exact, by a fraction more; made concave. */
static void
random_envelope(gsl_rng *r, size_t most, bool exact, struct pfs_pwl *c)
{
    c->n = 2 + gsl_rng_uniform_int(r, most);
    for (size_t p = 0; p < c->n; p++) {
        double u = gsl_rng_uniform_pos(r);

        c->x[p] = 200 + 50.0 * (double)p;
        c->y[p] = p == 0 ? floor(100 * u) : c->y[p - 1] + floor(60 * u) + 1;
        if (!exact)
            c->y[p] += u;
    }
    pfs_pwl_hull(c);
}

/* The engine's decisions by class (pfs__waterfill_counted, then the tied jobs one by one
 * in job order: pfs__class_decision) against pfs__waterfill_classes over the same jobs in a
 * random order. Curves with whole numbers of watts and tokens, and a whole-watt budget, add
 * up exactly in any order: there every job's cap must be the same bits. Classes share a
 * curve scaled by their GPU counts, so that their slopes are the same bits and several
 * classes are tied at the price at once, their jobs interleaved. Elsewhere (fractional
 * throughputs) the caps may differ by the rounding of the sums only. Then pfi's answer by
 * class (pfs__pfi_classes, on the kept curves of a view) against its allocate. */
void
test_waterfill_counted(struct test *t)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    int tied_several = 0, tied_any = 0;

    gsl_rng_set(r, 93);
    for (int inst = 0; inst < 400 && t->failures < 10; inst++) {
        bool exact = inst % 2 == 0;
        size_t n = 1 + gsl_rng_uniform_int(r, 300), n_cls = 1 + gsl_rng_uniform_int(r, 10);
        size_t n_base = 1 + gsl_rng_uniform_int(r, 3);
        struct pfs_pwl *base = calloc(n_base, sizeof *base), *c = calloc(n, sizeof *c);
        struct pfs_alloc_job *jobs = calloc(n, sizeof *jobs);
        struct pfs_alloc_decision *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
        uint32_t *cls = calloc(n, sizeof *cls), *count = calloc(n_cls, sizeof *count);
        uint32_t *rep = calloc(n_cls, sizeof *rep), *present = calloc(n_cls, sizeof *present);
        uint32_t n_present = 0;
        struct pfs__class_set cs;
        int *gpus = calloc(n_cls, sizeof *gpus);
        size_t *of = calloc(n_cls, sizeof *of);
        double *cap = calloc(n_cls, sizeof *cap);
        bool *tied = calloc(n_cls, sizeof *tied);
        double lo = 0, hi = 0, budget, left;
        struct pfs__class_answer ans = {cap, tied, 0, c, NULL};
        struct pfs_diag d = {0};
        size_t differ = 0, n_tied = 0;

        for (size_t q = 0; q < n_base; q++)
            random_envelope(r, 8, exact, &base[q]);
        for (size_t k = 0; k < n_cls; k++) {
            gpus[k] = 1 << gsl_rng_uniform_int(r, 4);
            of[k] = gsl_rng_uniform_int(r, n_base);
        }
        for (size_t i = 0; i < n; i++) {
            size_t k = gsl_rng_uniform_int(r, n_cls);

            cls[i] = (uint32_t)k;
            c[i] = base[of[k]];
            for (size_t p = 0; p < c[i].n; p++)
                c[i].y[p] *= gpus[k];
            jobs[i].n_gpus = gpus[k];
            jobs[i].min_w = 200;
            jobs[i].max_w = c[i].x[c[i].n - 1];
            if (count[k]++ == 0)
                rep[k] = (uint32_t)i;
            lo += jobs[i].n_gpus * c[i].x[0];
            hi += jobs[i].n_gpus * c[i].x[c[i].n - 1];
        }
        budget = floor(lo + (hi - lo) * 1.1 * gsl_rng_uniform(r));
        if (budget < lo)
            budget = lo;
        CHECK_INT(pfs__waterfill_classes("test", c, jobs, n, cls, (uint32_t)n_cls, budget, a, &d),
                  0);
        for (size_t k = 0; k < n_cls; k++)
            if (count[k] > 0)
                present[n_present++] = (uint32_t)k;
        cs = (struct pfs__class_set){present, n_present, (uint32_t)n_cls, count, rep, {NULL, NULL}};
        CHECK_INT(
            pfs__waterfill_counted("test", c, jobs, &cs, NULL, budget, cap, tied, &ans.left_w, &d),
            0);
        left = ans.left_w;
        for (size_t i = 0; i < n; i++) /* the engine's walk: each job in job order */
            b[i] = pfs__class_decision(NULL, &ans, cls[i], i, &left);
        for (size_t k = 0; k < n_cls; k++)
            n_tied += count[k] > 0 && tied[k];
        tied_any += n_tied > 0;
        tied_several += n_tied > 1;
        for (size_t i = 0; i < n; i++)
            differ += exact ? memcmp(&a[i].cap_w, &b[i].cap_w, sizeof a[i].cap_w) != 0
                            : fabs(a[i].cap_w - b[i].cap_w) > 1e-6;
        if (differ)
            test_fail(t, __FILE__, __LINE__, "instance %d (%s): %zu of %zu jobs' caps differ", inst,
                      exact ? "exact" : "rounded", differ, n);
        if (exact) { /* pfi by class, on the view's kept curves, against its allocate */
            struct pfs_telemetry *tl = calloc(n, sizeof *tl);
            struct pfs_alloc_view v = {.budget_w = budget,
                                       .n_jobs = n,
                                       .jobs = jobs,
                                       .telemetry = tl,
                                       .predicted = {c, c},
                                       .classes = cls,
                                       .n_classes = (uint32_t)n_cls};

            CHECK_INT(pfs_policy_allocate(pfs_policy_find("pfi"), &v, a, &d), 0);
            CHECK_INT(pfs__policy_classes(pfs_policy_find("pfi"), &v, &cs, &ans, &d), 0);
            CHECK_INT(pfs__policy_classes(pfs_policy_find("sla"), &v, &cs, &ans, &d), 1);
            left = ans.left_w;
            for (size_t i = 0; i < n; i++) {
                b[i] = pfs__class_decision(&v, &ans, cls[i], i, &left);
                if (memcmp(&a[i], &b[i], sizeof a[i]) != 0) {
                    test_fail(t, __FILE__, __LINE__, "instance %d: pfi's job %zu differs", inst, i);
                    break;
                }
            }
            free(tl);
        }
        free(base);
        free(c);
        free(jobs);
        free(a);
        free(b);
        free(cls);
        free(count);
        free(rep);
        free(present);
        free(gpus);
        free(of);
        free(cap);
        free(tied);
    }
    CHECK(tied_any > 100);    /* the tie walk was exercised */
    CHECK(tied_several > 10); /* with several classes tied at once */
    gsl_rng_free(r);
}

/* test_policies_sla_kept's sequence: its curves to draw from, its time, its tolerances'
 * stretch, and the view's arrays (slot i: its job, its curves, its entries). */
struct sla_seq {
    gsl_rng *r;
    const struct pfs_pwl *base;
    size_t n_base;
    double now, stretch;
    struct pfs_pwl *c0, *c1; /* within the predictions, extrapolated */
    struct pfs_alloc_job *jobs;
    struct pfs__sla_kept *k0, *k1;
};

/* A new job in slot i: its curves (extrapolated: a point 100 W below, at 70% of the
 * lowest), limits, tier and deadline; its entries cleared. */
static void
sla_seq_start(struct sla_seq *q, size_t i)
{
    struct pfs_alloc_job *j = &q->jobs[i];
    struct pfs_pwl *c0 = &q->c0[i], *c1 = &q->c1[i];
    int g = 1 << gsl_rng_uniform_int(q->r, 3);

    *c0 = q->base[gsl_rng_uniform_int(q->r, q->n_base)];
    for (size_t p = 0; p < c0->n; p++)
        c0->y[p] *= g;
    *c1 = *c0;
    memmove(&c1->x[1], &c1->x[0], c1->n * sizeof c1->x[0]);
    memmove(&c1->y[1], &c1->y[0], c1->n * sizeof c1->y[0]);
    c1->x[0] = c1->x[1] - 100;
    c1->y[0] = 0.7 * c1->y[1];
    c1->n++;
    pfs_pwl_hull(c1);
    memset(j, 0, sizeof *j);
    j->n_gpus = g;
    j->min_w = 100;
    j->max_w = c0->x[c0->n - 1];
    j->idle_w = 75;
    j->tier = (int)gsl_rng_uniform_int(q->r, PFS_N_TIERS);
    j->max_loss = fmin(0.95, pfs_tier_max_loss(j->tier) * q->stretch);
    j->deadline_s =
        gsl_rng_uniform(q->r) < 0.3 ? (double)NAN : q->now + 7200 * gsl_rng_uniform(q->r);
    j->remaining_tokens = c0->y[c0->n - 1] * 7200 * gsl_rng_uniform(q->r);
    j->limit_until_s = INFINITY;
    pfs__sla_kept_clear(&q->k0[i]);
    pfs__sla_kept_clear(&q->k1[i]);
}

/* sla with the entries the engine keeps per running job (pfs__sla_allocate_kept) against its
 * allocate, over sequences of decisions on one view as an event has them: time moving (the
 * deadline floors with it, some binding), work done, tolerances changed (a new event's
 * length), budgets anywhere from above the floors to below what pausing every Flex job
 * reaches (some infeasible within the predictions, some on both tries), jobs finishing
 * (the last slot's job and entries moved into the freed slot) and starting (entries
 * cleared). The extrapolated curves reach below the predicted ones. The same return and
 * the same bits at every decision. */
void
test_policies_sla_kept(struct test *t)
{
    enum { MOST = 160 };
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    struct pfs_pwl *base = calloc(4, sizeof *base), *c0 = calloc(MOST, sizeof *c0),
                   *c1 = calloc(MOST, sizeof *c1);
    struct pfs_alloc_job *jobs = calloc(MOST, sizeof *jobs);
    struct pfs_telemetry *tel = calloc(MOST, sizeof *tel);
    struct pfs__sla_kept *k0 = calloc(MOST, sizeof *k0), *k1 = calloc(MOST, sizeof *k1);
    struct pfs__sla_kept *const kept[2] = {k0, k1};
    struct pfs_alloc_decision a[MOST], b[MOST];
    int decisions = 0, infeasible = 0, extrapolated = 0, binding = 0, moved = 0;

    gsl_rng_set(r, 61);
    for (int seq = 0; seq < 60 && t->failures < 10; seq++) {
        size_t n = 1 + gsl_rng_uniform_int(r, MOST - 1), n_base = 1 + gsl_rng_uniform_int(r, 4);
        struct sla_seq q = {r, base, n_base, 1000, 1, c0, c1, jobs, k0, k1};

        for (size_t p = 0; p < n_base; p++)
            random_envelope(r, 8, seq % 2 == 0, &base[p]);
        for (size_t i = 0; i < n; i++)
            sla_seq_start(&q, i);
        for (int step = 0; step < 40 && t->failures < 10; step++) {
            struct pfs_alloc_view v = {
                .n_jobs = n, .jobs = jobs, .telemetry = tel, .predicted = {c0, c1}};
            double floors = 0, lowest = 0;
            struct pfs_diag d = {0};
            int ra, rb;

            q.now += 60 * gsl_rng_uniform(r);
            if (step % 13 == 12) { /* a new event's length: every Flex tolerance moves */
                q.stretch = 1 + 3 * gsl_rng_uniform(r);
                for (size_t i = 0; i < n; i++)
                    jobs[i].max_loss = fmin(0.95, pfs_tier_max_loss(jobs[i].tier) * q.stretch);
            }
            for (size_t i = 0; i < n; i++) {
                jobs[i].now_s = q.now;
                if (gsl_rng_uniform(r) < 0.2) /* work done since */
                    jobs[i].remaining_tokens *= 0.9 + 0.1 * gsl_rng_uniform(r);
                floors += jobs[i].n_gpus * jobs[i].max_w;
                lowest += jobs[i].n_gpus * (jobs[i].tier == PFS_TIER_FIRM ? c1[i].x[0] : 75);
            }
            if (n > 1 && gsl_rng_uniform(r) < 0.2) { /* a job finishes: the last moves in */
                size_t i = gsl_rng_uniform_int(r, n);

                n--;
                jobs[i] = jobs[n];
                c0[i] = c0[n];
                c1[i] = c1[n];
                k0[i] = k0[n];
                k1[i] = k1[n];
                v.n_jobs = n;
                moved++;
            }
            if (n < MOST && gsl_rng_uniform(r) < 0.2) { /* a job starts in the next slot */
                sla_seq_start(&q, n);
                n++;
                v.n_jobs = n;
            }
            /* from a little below what every Flex job paused leaves to above full power */
            v.budget_w = lowest * 0.95 + (floors * 1.05 - lowest * 0.95) * gsl_rng_uniform(r);
            ra = pfs__sla_allocate_kept(&v, kept, a, &d);
            rb = pfs_policy_allocate(pfs_policy_find("sla"), &v, b, &d);
            decisions++;
            infeasible += rb == PFS_EINVAL;
            CHECK_INT(ra, rb);
            for (size_t i = 0; i < n; i++) {
                double lf = jobs[i].deadline_s - q.now;

                binding +=
                    isfinite(lf) && lf > 0 &&
                    jobs[i].remaining_tokens / lf > (1 - jobs[i].max_loss) * c0[i].y[c0[i].n - 1];
            }
            for (size_t i = 0; ra == 0 && rb == 0 && i < n; i++) {
                extrapolated += b[i].cap_w < c0[i].x[0];
                if (memcmp(&a[i], &b[i], sizeof a[i]) != 0) {
                    test_fail(t, __FILE__, __LINE__,
                              "sequence %d, step %d, job %zu: cap %.17g pause %g, allocate's "
                              "%.17g pause %g",
                              seq, step, i, a[i].cap_w, a[i].pause_frac, b[i].cap_w,
                              b[i].pause_frac);
                    break;
                }
            }
        }
    }
    /* the sequences went where they must */
    CHECK(decisions == 60 * 40);
    CHECK(infeasible > 50);
    CHECK(extrapolated > 50);
    CHECK(binding > 1000);
    CHECK(moved > 200);
    free(base);
    free(c0);
    free(c1);
    free(jobs);
    free(tel);
    free(k0);
    free(k1);
    gsl_rng_free(r);
}

/* equal by class (pfs__level_classes, the engine's decisions by class) against equal's
 * allocate over every job, on random classes of GPUs with whole-watt limits that differ
 * (some jobs clamped low, some high, some free): the same cap for every job, bit for bit,
 * the same all-fit answer (every job at its highest limit) and the same refusal below the
 * minimum caps. */
void
test_level_classes(struct test *t)
{
    static const double lims[][2] = {{200, 700}, {100, 400}, {150, 300}, {240, 700}, {300, 1000}};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    int clamped = 0, fits = 0, refused = 0;

    gsl_rng_set(r, 17);
    for (int inst = 0; inst < 300 && t->failures < 10; inst++) {
        size_t n = 1 + gsl_rng_uniform_int(r, 400), n_cls = 1 + gsl_rng_uniform_int(r, 12);
        struct pfs_alloc_job *jobs = calloc(n, sizeof *jobs);
        struct pfs_alloc_decision *a = calloc(n, sizeof *a);
        uint32_t *cls = calloc(n, sizeof *cls), *count = calloc(n_cls, sizeof *count);
        uint32_t *rep = calloc(n_cls, sizeof *rep), *present = calloc(n_cls, sizeof *present);
        int *gpus = calloc(n_cls, sizeof *gpus);
        size_t *lim = calloc(n_cls, sizeof *lim);
        double *cap = calloc(n_cls, sizeof *cap);
        bool *tied = calloc(n_cls, sizeof *tied);
        double lo = 0, hi = 0, budget;
        uint32_t n_present = 0;
        struct pfs__class_answer ans = {cap, tied, 0, NULL, NULL};
        struct pfs__class_set cs;
        struct pfs_alloc_view v;
        struct pfs_diag d1 = {0}, d2 = {0};
        int rc1, rc2;

        for (size_t k = 0; k < n_cls; k++) {
            gpus[k] = 1 + (int)gsl_rng_uniform_int(r, 8);
            lim[k] = gsl_rng_uniform_int(r, sizeof lims / sizeof lims[0]);
        }
        for (size_t i = 0; i < n; i++) {
            size_t k = gsl_rng_uniform_int(r, n_cls);

            cls[i] = (uint32_t)k;
            jobs[i].n_gpus = gpus[k];
            jobs[i].min_w = lims[lim[k]][0];
            jobs[i].max_w = lims[lim[k]][1];
            if (count[k]++ == 0)
                rep[k] = (uint32_t)i;
            lo += jobs[i].n_gpus * jobs[i].min_w;
            hi += jobs[i].n_gpus * jobs[i].max_w;
        }
        for (size_t k = 0; k < n_cls; k++)
            if (count[k] > 0)
                present[n_present++] = (uint32_t)k;
        /* from below the minimum caps to above every limit; budgets in fractions of a watt */
        budget = lo + (hi - lo) * (1.2 * gsl_rng_uniform(r) - 0.1);
        v = (struct pfs_alloc_view){.budget_w = budget, .n_jobs = n, .jobs = jobs};
        cs = (struct pfs__class_set){present, n_present, (uint32_t)n_cls, count, rep, {NULL, NULL}};
        rc1 = pfs_policy_allocate(pfs_policy_find("equal"), &v, a, &d1);
        rc2 = pfs__policy_classes(pfs_policy_find("equal"), &v, &cs, &ans, &d2);
        CHECK_INT(rc2, rc1);
        refused += rc1 == PFS_EINVAL;
        fits += rc1 == 0 && budget >= hi;
        for (size_t i = 0; rc1 == 0 && rc2 == 0 && i < n; i++) {
            struct pfs_alloc_decision b = pfs__class_decision(&v, &ans, cls[i], i, NULL);

            clamped += i == 0 && budget < hi &&
                       (a[i].cap_w <= jobs[i].min_w || a[i].cap_w >= jobs[i].max_w);
            if (memcmp(&a[i].cap_w, &b.cap_w, sizeof b.cap_w) != 0 || b.pause_frac > 0) {
                test_fail(t, __FILE__, __LINE__, "instance %d: job %zu: %.17g by class, %.17g",
                          inst, i, b.cap_w, a[i].cap_w);
                break;
            }
        }
        free(jobs);
        free(a);
        free(cls);
        free(count);
        free(rep);
        free(present);
        free(gpus);
        free(lim);
        free(cap);
        free(tied);
    }
    CHECK(refused > 10); /* each case was met */
    CHECK(fits > 10);
    CHECK(clamped > 10);
    gsl_rng_free(r);
}

/* pfs__waterfill_counted with a run's cache of its classes' segments (sim/sim.c keeps one per
 * run) over a sequence of decisions: classes come, go and change in number from one to the
 * next, as jobs start and finish. Every decision must be the job-by-job water-filling's
 * (pfs__waterfill_classes), bit for bit where the arithmetic is exact (integer throughputs,
 * caps 50 W apart, GPUs a power of two), and the same as without the cache, budget left
 * included. A third of the budgets sit exactly on a breakpoint. */
void
test_waterfill_cached(struct test *t)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    int came_back = 0, tied_any = 0;

    gsl_rng_set(r, 2026);
    for (int inst = 0; inst < 40 && t->failures < 10; inst++) {
        bool exact = inst % 4 != 3;
        size_t n_cls = 1 + gsl_rng_uniform_int(r, 60), n_max = 5 * n_cls;
        struct pfs__class_cache *cc = pfs__class_cache_new();
        struct pfs_pwl *cls_curve = calloc(n_cls, sizeof *cls_curve), *c = calloc(n_max, sizeof *c);
        int *gpus = calloc(n_cls, sizeof *gpus);
        struct pfs_alloc_job *jobs = calloc(n_max, sizeof *jobs);
        struct pfs_alloc_decision *a = calloc(n_max, sizeof *a), *b = calloc(n_max, sizeof *b);
        uint32_t *cls = calloc(n_max, sizeof *cls), *count = calloc(n_cls, sizeof *count);
        uint32_t *rep = calloc(n_cls, sizeof *rep), *present = calloc(n_cls, sizeof *present);
        double *cap = calloc(n_cls, sizeof *cap), *cap2 = calloc(n_cls, sizeof *cap2);
        bool *tied = calloc(n_cls, sizeof *tied), *tied2 = calloc(n_cls, sizeof *tied2);
        bool *was = calloc(n_cls, sizeof *was);

        for (size_t k = 0; k < n_cls; k++) {
            gpus[k] = 1 << gsl_rng_uniform_int(r, 4);
            random_envelope(r, 10, exact, &cls_curve[k]);
            for (size_t p = 0; p < cls_curve[k].n; p++) /* (a power of two: exact) */
                cls_curve[k].y[p] *= gpus[k];
        }
        for (int round = 0; round < 30 && t->failures < 10; round++) {
            size_t n = 0;
            uint32_t n_present = 0;
            double lo = 0, hi = 0, budget, left, left2;
            struct pfs__class_answer ans = {cap, tied, 0, c, NULL};
            struct pfs__class_set cs;
            struct pfs_diag d = {0};
            size_t differ = 0;

            for (size_t k = 0; k < n_cls; k++) { /* about a third of the classes absent */
                count[k] = gsl_rng_uniform(r) < 0.35 ? 0 : (uint32_t)gsl_rng_uniform_int(r, 5);
                came_back += count[k] > 0 && !was[k] && round > 0;
                was[k] = count[k] > 0;
            }
            for (size_t k = 0; k < n_cls; k++)
                for (uint32_t q = 0; q < count[k]; q++)
                    cls[n++] = (uint32_t)k;
            if (n == 0)
                continue;
            for (size_t i = n; i > 1; i--) { /* classes interleaved in job order */
                size_t j = gsl_rng_uniform_int(r, i);
                uint32_t tmp = cls[i - 1];

                cls[i - 1] = cls[j];
                cls[j] = tmp;
            }
            for (size_t k = 0; k < n_cls; k++)
                rep[k] = UINT32_MAX;
            for (size_t i = 0; i < n; i++) {
                size_t k = cls[i];

                c[i] = cls_curve[k];
                jobs[i] = (struct pfs_alloc_job){
                    .n_gpus = gpus[k], .min_w = 200, .max_w = c[i].x[c[i].n - 1]};
                rep[k] = rep[k] == UINT32_MAX ? (uint32_t)i : rep[k];
                lo += gpus[k] * c[i].x[0];
                hi += gpus[k] * c[i].x[c[i].n - 1];
            }
            for (size_t i = 0; i < n; i++) /* present in order of their first job */
                if (rep[cls[i]] == i)
                    present[n_present++] = cls[i];
            budget = floor(lo + (hi - lo) * 1.1 * gsl_rng_uniform(r));
            if (round % 3 == 0) { /* on a breakpoint: every segment steeper than one's */
                size_t i0 = gsl_rng_uniform_int(r, n), s0 = gsl_rng_uniform_int(r, c[i0].n - 1);
                double mu0 = (c[i0].y[s0 + 1] - c[i0].y[s0]) /
                             (jobs[i0].n_gpus * (c[i0].x[s0 + 1] - c[i0].x[s0]));

                budget = lo;
                for (size_t i = 0; i < n; i++)
                    for (size_t p = 0; p + 1 < c[i].n; p++)
                        if ((c[i].y[p + 1] - c[i].y[p]) /
                                (jobs[i].n_gpus * (c[i].x[p + 1] - c[i].x[p])) >
                            mu0)
                            budget += jobs[i].n_gpus * (c[i].x[p + 1] - c[i].x[p]);
            }
            budget = budget < lo ? lo : budget;
            CHECK_INT(
                pfs__waterfill_classes("test", c, jobs, n, cls, (uint32_t)n_cls, budget, a, &d), 0);
            cs = (struct pfs__class_set){present, n_present, (uint32_t)n_cls,
                                         count,   rep,       {cc, NULL}};
            CHECK_INT(
                pfs__waterfill_counted("test", c, jobs, &cs, NULL, budget, cap2, tied2, &left2, &d),
                0);
            CHECK_INT(pfs__waterfill_counted("test", c, jobs, &cs, cc, budget, cap, tied,
                                             &ans.left_w, &d),
                      0);
            left = ans.left_w;
            for (size_t i = 0; i < n; i++)
                b[i] = pfs__class_decision(NULL, &ans, cls[i], i, &left);
            for (uint32_t u = 0; u < n_present; u++) {
                uint32_t k = present[u];

                tied_any += tied[k];
                if (exact && (memcmp(&cap[k], &cap2[k], sizeof cap[k]) != 0 || tied[k] != tied2[k]))
                    differ++;
            }
            if (exact && memcmp(&ans.left_w, &left2, sizeof left2) != 0)
                differ++;
            for (size_t i = 0; i < n; i++)
                differ += exact ? memcmp(&a[i].cap_w, &b[i].cap_w, sizeof a[i].cap_w) != 0
                                : fabs(a[i].cap_w - b[i].cap_w) > 1e-6;
            if (differ)
                test_fail(t, __FILE__, __LINE__,
                          "instance %d round %d (%s): %zu caps differ from the job-by-job or the "
                          "uncached answer",
                          inst, round, exact ? "exact" : "rounded", differ);
        }
        pfs__class_cache_free(cc);
        free(cls_curve);
        free(c);
        free(gpus);
        free(jobs);
        free(a);
        free(b);
        free(cls);
        free(count);
        free(rep);
        free(present);
        free(cap);
        free(cap2);
        free(tied);
        free(tied2);
        free(was);
    }
    CHECK(came_back > 100); /* classes left the cache's list and joined it again */
    CHECK(tied_any > 50);
    gsl_rng_free(r);
}

/* pfs__pwl_eval_near against pfs_pwl_eval, bit for bit: random curves of 1 to 64 points,
 * x at and between breakpoints and outside the curve, hints right, one off, stale (past the
 * curve's end) and wrong; afterwards a hint for an x inside the curve names its segment. */
void
test_pwl_eval_near(struct test *t)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    struct pfs_pwl c;
    size_t checks = 0, kept = 0;

    gsl_rng_set(r, 29);
    for (int round = 0; round < 2000 && t->failures < 5; round++) {
        uint32_t k = (uint32_t)gsl_rng_uniform_int(r, 70);

        c.n = 1 + gsl_rng_uniform_int(r, PFS_PWL_MAX);
        for (size_t i = 0; i < c.n; i++) {
            c.x[i] = (i ? c.x[i - 1] : 100) + 1 + 20 * gsl_rng_uniform(r);
            c.y[i] = 1000 * gsl_rng_uniform(r);
        }
        for (int q = 0; q < 40; q++) {
            double u = gsl_rng_uniform(r),
                   x = u < 0.3   ? c.x[gsl_rng_uniform_int(r, c.n)] /* on a breakpoint */
                       : u < 0.4 ? c.x[0] - 5 + 10 * gsl_rng_uniform(r)
                       : u < 0.5 ? c.x[c.n - 1] - 5 + 10 * gsl_rng_uniform(r)
                                 : c.x[0] + (c.x[c.n - 1] - c.x[0]) * gsl_rng_uniform(r);
            double want = pfs_pwl_eval(&c, x), got;
            uint32_t before = k;

            if (gsl_rng_uniform(r) < 0.3)
                k = (uint32_t)gsl_rng_uniform_int(r, 70);
            got = pfs__pwl_eval_near(&c, x, &k);
            if (memcmp(&got, &want, sizeof got) != 0)
                test_fail(t, __FILE__, __LINE__, "round %d: %.17g at x %.17g, should be %.17g",
                          round, got, x, want);
            if (x > c.x[0] && x < c.x[c.n - 1] && !(c.x[k] <= x && x < c.x[k + 1]))
                test_fail(t, __FILE__, __LINE__, "round %d: hint %u misses x %.17g", round, k, x);
            kept += k == before;
            checks++;
        }
    }
    CHECK(checks == 80000);
    CHECK(kept > 1000); /* (hints that were right already) */
    gsl_rng_free(r);
}

/* Water-filling with the budget exactly at a breakpoint: the minimum caps plus the segments
 * steeper than some price, summed in another order than the solver sums them, so that what
 * is left after taking them is a rounding crumb of either sign. A solver that takes the crumb
 * for "everything fits" overcommits (the sweeps found this: 897 kW of a 606 kW budget). The
 * right answer is known in closed form: exactly those segments, their gains summed. */
void
test_waterfill_breakpoints(struct test *t)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);

    gsl_rng_set(r, 77);
    for (int inst = 0; inst < 300 && t->failures < 10; inst++) {
        size_t n = 50 + gsl_rng_uniform_int(r, 300), n_seg = 0, k;
        struct pfs_pwl *c = calloc(n, sizeof *c);
        struct pfs_alloc_job *jobs = calloc(n, sizeof *jobs);
        struct pfs_alloc_decision *out = calloc(n, sizeof *out);
        double *slope = calloc(n * 6, sizeof *slope), *need = calloc(n * 6, sizeof *need);
        double *gain = calloc(n * 6, sizeof *gain), mu, budget = 0, want = 0, got = 0, used = 0;
        struct pfs_diag d = {0};

        for (size_t i = 0; i < n; i++) {
            double y = 50 + 100 * gsl_rng_uniform(r), s = 1;

            /* Caps at 700 W x (1 - cut) for cuts 50% .. 0% in 10% steps, as the predicted
             * curves have them: floating point, not quite a 70 W grid. */
            jobs[i].n_gpus = 1 + (int)gsl_rng_uniform_int(r, 8);
            c[i].n = 6;
            for (k = 0; k < 6; k++)
                c[i].x[k] = 700 * (1 - 0.1 * (double)(5 - k));
            c[i].y[0] = y;
            budget += jobs[i].n_gpus * 350.0;
            for (k = 1; k < c[i].n; k++) { /* concave: each slope below the one before */
                double dx = c[i].x[k] - c[i].x[k - 1];

                s *= 0.3 + 0.69 * gsl_rng_uniform(r);
                c[i].y[k] = c[i].y[k - 1] + s * dx;
                need[n_seg] = jobs[i].n_gpus * 70.0; /* exact: the budget is on the grid */
                gain[n_seg] = c[i].y[k] - c[i].y[k - 1];
                slope[n_seg] = gain[n_seg] / need[n_seg];
                n_seg++;
            }
        }
        /* The price: a random segment's slope; the budget: everything steeper, and the
         * throughput the optimum has there (minimum-cap throughput plus those gains). */
        mu = slope[gsl_rng_uniform_int(r, n_seg)];
        for (size_t q = n_seg; q-- > 0;) /* backwards: another summation order */
            if (slope[q] > mu) {
                budget += need[q];
                want += gain[q];
            }
        for (size_t i = 0; i < n; i++)
            want += c[i].y[0];
        CHECK_INT(pfs__waterfill("test", c, jobs, n, budget, NULL, out, &d), 0);
        for (size_t i = 0; i < n; i++) {
            used += jobs[i].n_gpus * out[i].cap_w;
            got += pfs_pwl_eval(&c[i], out[i].cap_w);
        }
        if (!(used <= budget * (1 + 1e-12)))
            test_fail(t, __FILE__, __LINE__, "instance %d: %.6f W of a %.6f W budget", inst, used,
                      budget);
        CHECK_NEAR(got, want, 1e-9 * want);
        free(c);
        free(jobs);
        free(out);
        free(slope);
        free(need);
        free(gain);
    }
    gsl_rng_free(r);
}

/* A policy that gives every job its top cap: it breaks the budget whenever the budget binds. */
static int
top_caps(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
         struct pfs_diag *diag)
{
    (void)state;
    (void)diag;
    for (size_t i = 0; i < v->n_jobs; i++)
        out[i].cap_w = v->jobs[i].max_w;
    return 0;
}

/* A policy whose answer depends on how often it was asked: not deterministic. */
static int
drifting(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
         struct pfs_diag *diag)
{
    static unsigned calls;

    (void)state;
    (void)diag;
    calls++;
    for (size_t i = 0; i < v->n_jobs; i++)
        out[i].cap_w = v->jobs[i].min_w + (calls % 2);
    return 0;
}

void
test_policies_conformance(struct test *t)
{
    /* Every policy of the registry keeps every rule (the rules pfisim policy-check runs on
     * a user's policy), and the checker catches a policy that does not. */
    static const struct pfs_policy_ops greedy = {
        .name = "greedy", .summary = "top caps", .memoryless = true, .allocate = top_caps};
    static const struct pfs_policy_ops drift = {
        .name = "drift", .summary = "drifts", .allocate = drifting};
    struct pfs_conformance rep;
    struct pfs_diag d = {0};

    for (size_t k = 0; pfs_policy_at(k); k++) {
        const struct pfs_policy_ops *ops = pfs_policy_at(k);

        CHECK_INT(pfs_policy_conformance(ops, 7, 100, &rep, &d), 0);
        CHECK_INT(rep.instances, 100);
        for (size_t i = 0; i < rep.n; i++)
            if (rep.checks[i].failed)
                test_fail(t, __FILE__, __LINE__, "%s breaks %s: %s", pfs_policy_name(ops),
                          rep.checks[i].name, rep.checks[i].first);
    }
    CHECK_INT(pfs_policy_conformance(&greedy, 7, 100, &rep, &d), 0);
    CHECK(rep.n_failed == 2); /* the budget, and the infeasible budgets answered */
    CHECK(strcmp(rep.checks[2].name, "budget") == 0 && rep.checks[2].failed > 0);
    CHECK(strncmp(rep.checks[2].first, "instance 0: committed ", 22) == 0);
    CHECK(strcmp(rep.checks[3].name, "infeasible") == 0 && rep.checks[3].failed == 20);
    CHECK_INT(pfs_policy_conformance(&drift, 7, 10, &rep, &d), 0);
    CHECK(strcmp(rep.checks[4].name, "determinism") == 0 && rep.checks[4].failed == 10);
}

/* pfs__waterfill_from against what it stands for: copies of the curves clipped at the floors
 * (pfs__pwl_clip), water-filled whole. Floors below the first point, on breakpoints, between
 * them and past the last; some jobs skipped; budgets from below the floors to above the
 * tops. The same return and the same bits for every job. */
void
test_waterfill_from(struct test *t)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    struct pfs_pwl *c = calloc(120, sizeof *c), *clipped = calloc(120, sizeof *clipped);
    struct pfs_alloc_job jobs[120];
    struct pfs_alloc_decision a[120], b[120];
    double from[120];
    bool skip[120];
    int ok = 0, hinted = 0;

    gsl_rng_set(r, 71);
    for (int inst = 0; inst < 500 && t->failures < 10; inst++) {
        size_t n = 1 + gsl_rng_uniform_int(r, 120);
        double lo = 0, hi = 0, budget;
        struct pfs_diag da = {0}, db = {0};
        int ra, rb;

        for (size_t i = 0; i < n; i++) {
            struct pfs_pwl *ci = &c[i];
            size_t at;

            random_envelope(r, 8, inst % 2 == 0, ci);
            at = gsl_rng_uniform_int(r, ci->n);
            switch (gsl_rng_uniform_int(r, 5)) {
            case 0:
                from[i] = ci->x[0] - 10;
                break; /* below: the whole */
            case 1:
                from[i] = ci->x[at];
                break; /* on a breakpoint */
            case 2:
                from[i] = ci->x[ci->n - 1] + 5;
                break; /* past the last */
            default:
                from[i] = ci->x[0] + 400 * gsl_rng_uniform(r); /* anywhere */
            }
            memset(&jobs[i], 0, sizeof jobs[i]);
            jobs[i].n_gpus = 1 << gsl_rng_uniform_int(r, 4);
            jobs[i].min_w = 200;
            jobs[i].max_w = ci->x[ci->n - 1];
            jobs[i].idle_w = 75;
            skip[i] = gsl_rng_uniform(r) < 0.2;
            a[i] = b[i] = (struct pfs_alloc_decision){.cap_w = 200, .pause_frac = skip[i]};
            clipped[i] = *ci;
            pfs__pwl_clip(&clipped[i], from[i]);
            lo += skip[i] ? jobs[i].n_gpus * 75.0 : jobs[i].n_gpus * clipped[i].x[0];
            hi += jobs[i].n_gpus * fmax(ci->x[ci->n - 1], from[i]);
        }
        budget = lo * 0.98 + (hi * 1.05 - lo * 0.98) * gsl_rng_uniform(r);
        ra = pfs__waterfill_from("test", c, from, jobs, n, budget, skip, a, &da);
        rb = pfs__waterfill("test", clipped, jobs, n, budget, skip, b, &db);
        CHECK_INT(ra, rb);
        ok += ra == 0;
        for (size_t i = 0; ra == 0 && i < n; i++)
            if (memcmp(&a[i].cap_w, &b[i].cap_w, sizeof a[i].cap_w) ||
                memcmp(&a[i].pause_frac, &b[i].pause_frac, sizeof a[i].pause_frac))
                test_fail(t, __FILE__, __LINE__, "instance %d, job %zu: cap %.17g, clipped %.17g",
                          inst, i, a[i].cap_w, b[i].cap_w);
        /* The price tried first (pfs__waterfill_hint): the one just found (taken, where it
         * still holds beyond rounding), a hair's breadth off it, another job's slope or
         * nothing: the same answer each time. */
        if (ra == 0) {
            double mu = pfs__waterfill_hint(NAN), slope0 = 0, last;
            const double tries[] = {mu, mu * (1 + 1e-15), mu * (1 - 1e-15), NAN};

            if (!skip[0] && clipped[0].n > 1)
                slope0 = (clipped[0].y[1] - clipped[0].y[0]) /
                         (jobs[0].n_gpus * (clipped[0].x[1] - clipped[0].x[0]));
            for (size_t k = 0; k <= sizeof tries / sizeof tries[0]; k++) {
                struct pfs_alloc_decision e[120];

                for (size_t i = 0; i < n; i++)
                    e[i] = (struct pfs_alloc_decision){.cap_w = 200, .pause_frac = skip[i]};
                pfs__waterfill_hint(k < sizeof tries / sizeof tries[0] ? tries[k] : slope0);
                CHECK_INT(pfs__waterfill_from("test", c, from, jobs, n, budget, skip, e, &da), 0);
                last = pfs__waterfill_hint(NAN); /* (the price it ended with: the same) */
                hinted += k == 0 && mu > 0 && memcmp(&last, &mu, sizeof mu) == 0;
                for (size_t i = 0; i < n; i++)
                    if (memcmp(&a[i], &e[i], sizeof a[i]))
                        test_fail(t, __FILE__, __LINE__,
                                  "instance %d, try %zu, job %zu: cap %.17g, first %.17g", inst, k,
                                  i, e[i].cap_w, a[i].cap_w);
            }
        }
    }
    CHECK(ok > 300);     /* most budgets fit the floors */
    CHECK(hinted > 100); /* a price to try, kept */
    free(c);
    free(clipped);
    gsl_rng_free(r);
}

/* The level as pfs__level first found it, the reference for its early end: bisected to
 * 1e-12, then the level the partition at the bisected end gives, kept where consistent. */
static double
level_ref(size_t n, const double *gpus, const double *lo, const double *hi, double budget)
{
    double need_hi = 0, a = HUGE_VAL, b = -HUGE_VAL, fixed = 0, free_gpus = 0, l;
    bool same = true;

    for (size_t i = 0; i < n; i++) {
        need_hi += gpus[i] * hi[i];
        a = fmin(a, lo[i]);
        b = fmax(b, hi[i]);
    }
    if (need_hi <= budget)
        return HUGE_VAL;
    for (int it = 0; it < 200 && b - a > 1e-12 * fmax(1, b); it++) {
        double mid = 0.5 * (a + b), tot = 0;

        for (size_t i = 0; i < n; i++)
            tot += gpus[i] * pfs__clamp(mid, lo[i], hi[i]);
        *(tot <= budget ? &a : &b) = mid;
    }
    for (size_t i = 0; i < n; i++) {
        if (a <= lo[i])
            fixed += gpus[i] * lo[i];
        else if (a >= hi[i])
            fixed += gpus[i] * hi[i];
        else
            free_gpus += gpus[i];
    }
    l = free_gpus > 0 ? (budget - fixed) / free_gpus : a;
    for (size_t i = 0; i < n; i++)
        same = same && (a <= lo[i]) == (l <= lo[i]) && (a >= hi[i]) == (l >= hi[i]);
    return (l >= a && l <= b) || (free_gpus > 0 && same) ? l : a;
}

/* pfs__level, which ends its bisection at the first midpoint whose partition gives a level
 * inside it, against the bisection to the end (level_ref): the same bits for every job.
 * Limits from a few whole watts (as GPU types have them: one pair, or several) or any real
 * numbers; budgets anywhere between the floors and the tops, on a breakpoint's total, and
 * within 1e-10 to 1e-15 of one, where the early end must not be taken. */
void
test_level_early(struct test *t)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    static const double pairs[][2] = {{200, 700}, {200, 700}, {100, 350}, {150, 400}, {200, 600}};
    struct pfs_alloc_job jobs[300];
    struct pfs_alloc_decision out[300];
    double gpus[300], lo[300], hi[300];
    int feasible = 0;

    gsl_rng_set(r, 5);
    for (int inst = 0; inst < 3000 && t->failures < 10; inst++) {
        size_t n = 1 + gsl_rng_uniform_int(r, inst % 3 == 0 ? 4 : 300), kinds = 1 + inst % 5;
        double need_lo = 0, need_hi = 0, budget, ref;
        struct pfs_diag d = {0};
        int rc;

        for (size_t i = 0; i < n; i++) {
            memset(&jobs[i], 0, sizeof jobs[i]);
            jobs[i].n_gpus = 1 + (int)gsl_rng_uniform_int(r, 64);
            gpus[i] = jobs[i].n_gpus;
            if (inst % 7 == 6) { /* any real numbers */
                lo[i] = 50 + 300 * gsl_rng_uniform(r);
                hi[i] = lo[i] + 400 * gsl_rng_uniform(r);
            } else {
                size_t k = gsl_rng_uniform_int(r, kinds);

                lo[i] = pairs[k][0];
                hi[i] = pairs[k][1];
            }
            need_lo += gpus[i] * lo[i];
            need_hi += gpus[i] * hi[i];
        }
        switch (inst % 4) {
        case 0:
        case 1:
            budget = need_lo + (need_hi - need_lo) * gsl_rng_uniform(r);
            break;
        default: { /* a breakpoint's total, or just off it */
            size_t i = gsl_rng_uniform_int(r, n);
            double bp = gsl_rng_uniform(r) < 0.5 ? lo[i] : hi[i];

            budget = 0;
            for (size_t q = 0; q < n; q++)
                budget += gpus[q] * pfs__clamp(bp, lo[q], hi[q]);
            if (inst % 4 == 3) /* off by 1e-10 to 1e-15 (closer than the bisection ends) */
                budget *= 1 + (gsl_rng_uniform(r) < 0.5 ? -1 : 1) *
                                  pow(10, -10 - (double)gsl_rng_uniform_int(r, 6));
        }
        }
        rc = pfs__level("test", jobs, n, lo, hi, budget, out, &d);
        if (need_lo > budget * (1 + 1e-12)) {
            CHECK_INT(rc, PFS_EINVAL);
            continue;
        }
        CHECK_INT(rc, 0);
        feasible++;
        ref = level_ref(n, gpus, lo, hi, budget);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            double want = pfs__clamp(ref, lo[i], hi[i]);

            if (memcmp(&out[i].cap_w, &want, sizeof want) != 0) {
                test_fail(t, __FILE__, __LINE__,
                          "instance %d, job %zu of %zu: cap %.17g, want %.17g", inst, i, n,
                          out[i].cap_w, want);
                break;
            }
        }
    }
    CHECK(feasible > 2500);
    gsl_rng_free(r);
}

/* sla as it was first written, the reference for its faster answer (policies/sla.c), on
 * the view's kept curves: the floors, the candidates for pausing sorted whole (most tolerant tier,
 * then the most power freed, then job order) and paused one by one while the floors exceed the
 * budget, the curves clipped at the floors in copies, water-filled; within the predictions, then
 * extrapolated if that is infeasible. */
static const struct pfs_alloc_job *sla_ref_jobs;
static const double *sla_ref_floor;

static int
cmp_sla_ref(const void *pa, const void *pb)
{
    size_t x = *(const size_t *)pa, y = *(const size_t *)pb;
    const struct pfs_alloc_job *jx = &sla_ref_jobs[x], *jy = &sla_ref_jobs[y];
    double fx = jx->n_gpus * (sla_ref_floor[x] - jx->idle_w),
           fy = jy->n_gpus * (sla_ref_floor[y] - jy->idle_w);

    if (jx->tier != jy->tier)
        return jx->tier > jy->tier ? -1 : 1;
    if (fx > fy || fx < fy)
        return fx > fy ? -1 : 1;
    return (x > y) - (x < y);
}

static int
sla_reference_try(const struct pfs_alloc_view *v, bool extrapolate, struct pfs_pwl *c,
                  double *floor, bool *paused, size_t *ord, struct pfs_alloc_decision *out)
{
    double need = 0;
    size_t m = 0;
    struct pfs_diag d = {0};

    for (size_t i = 0; i < v->n_jobs; i++) {
        const struct pfs_alloc_job *j = &v->jobs[i];
        double dl = -HUGE_VAL, top;

        c[i] = v->predicted[extrapolate][i]; /* (the view's kept curves) */
        top = c[i].y[c[i].n - 1];
        if (isfinite(j->deadline_s) && j->remaining_tokens > 0 && top > 0) {
            double left = j->deadline_s - j->now_s;
            double rate = left > 0 ? j->remaining_tokens / left : HUGE_VAL;

            dl = pfs_policy_floor_cap(&c[i], fmax(0, 1 - rate / top));
        }
        floor[i] = fmax(pfs_policy_floor_cap(&c[i], j->max_loss), dl);
        floor[i] = fmin(fmax(floor[i], c[i].x[0]), j->max_w);
        out[i] = (struct pfs_alloc_decision){.cap_w = floor[i]};
        paused[i] = false;
        need += j->n_gpus * floor[i];
        if (j->tier != PFS_TIER_FIRM)
            ord[m++] = i;
    }
    sla_ref_jobs = v->jobs;
    sla_ref_floor = floor;
    qsort(ord, m, sizeof *ord, cmp_sla_ref);
    for (size_t q = 0; q < m && need > v->budget_w; q++) {
        const struct pfs_alloc_job *j = &v->jobs[ord[q]];

        paused[ord[q]] = true;
        out[ord[q]] = (struct pfs_alloc_decision){.cap_w = j->min_w, .pause_frac = 1};
        need -= j->n_gpus * (floor[ord[q]] - j->idle_w);
    }
    if (need > v->budget_w * (1 + 1e-12))
        return PFS_EINVAL;
    for (size_t i = 0; i < v->n_jobs; i++)
        pfs__pwl_clip(&c[i], floor[i]);
    return pfs__waterfill("sla", c, v->jobs, v->n_jobs, v->budget_w, paused, out, &d);
}

/* sla against its reference above on random views of kept curves: jobs that share a curve,
 * a GPU count and a tier (ties in the order of pausing, broken by job order), every tier,
 * deadlines that bind and that do not; budgets anywhere from above the floors to below what
 * pausing every Flex job reaches, and budgets exactly at a crossing (the floors less what
 * the first p jobs in order free, subtracted in that order: where the faster answer's own
 * sums cannot tell, and it must leave the answer to the one-by-one order). The same return
 * and the same bits. */
void
test_policies_sla_pausing(struct test *t)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    struct pfs_pwl *base = calloc(4, sizeof *base), *c = calloc(200, sizeof *c),
                   *work = calloc(200, sizeof *work);
    struct pfs_alloc_job *jobs = calloc(200, sizeof *jobs);
    struct pfs_telemetry *tel = calloc(200, sizeof *tel);
    struct pfs_alloc_decision a[200], b[200];
    double floor_w[200];
    bool paused[200];
    size_t ord[200];
    int paused_some = 0, exact_cross = 0;

    gsl_rng_set(r, 29);
    for (int inst = 0; inst < 800 && t->failures < 10; inst++) {
        size_t n = 1 + gsl_rng_uniform_int(r, 200), n_base = 1 + gsl_rng_uniform_int(r, 4);
        int mode = inst % 3, ra, rb, n_paused = 0;
        struct pfs_alloc_view v = {
            .n_jobs = n, .jobs = jobs, .telemetry = tel, .predicted = {c, c}};
        struct pfs_diag d = {0};

        for (size_t q = 0; q < n_base; q++)
            random_envelope(r, 8, inst % 2 == 0, &base[q]);
        for (size_t i = 0; i < n; i++) {
            struct pfs_alloc_job *j = &jobs[i];
            int g = 1 << gsl_rng_uniform_int(r, 3);

            c[i] = base[gsl_rng_uniform_int(r, n_base)];
            for (size_t p = 0; p < c[i].n; p++)
                c[i].y[p] *= g;
            memset(j, 0, sizeof *j);
            j->n_gpus = g;
            j->min_w = 200;
            j->max_w = c[i].x[c[i].n - 1];
            j->idle_w = 75;
            j->tier = (int)gsl_rng_uniform_int(r, PFS_N_TIERS);
            j->max_loss = pfs_tier_max_loss(j->tier);
            j->now_s = 1000;
            j->deadline_s =
                gsl_rng_uniform(r) < 0.5 ? (double)NAN : 1000 + 7200 * gsl_rng_uniform(r);
            j->remaining_tokens = c[i].y[c[i].n - 1] * 7200 * gsl_rng_uniform(r);
            j->limit_until_s = INFINITY;
        }
        /* The budget, from the reference's floors and its order of pausing (ord, sorted). */
        v.budget_w = HUGE_VAL;
        CHECK_INT(sla_reference_try(&v, false, work, floor_w, paused, ord, b), 0);
        {
            double need = 0, freed = 0, at;
            size_t m = 0, p;

            for (size_t i = 0; i < n; i++) {
                need += jobs[i].n_gpus * floor_w[i];
                if (jobs[i].tier != PFS_TIER_FIRM)
                    freed += jobs[i].n_gpus * (floor_w[i] - 75), m++;
            }
            p = m > 0 ? gsl_rng_uniform_int(r, m) + 1 : 0;
            at = need;
            for (size_t q = 0; q < p; q++)
                at -= jobs[ord[q]].n_gpus * (floor_w[ord[q]] - 75);
            v.budget_w = mode == 0   ? need - 1.2 * freed * gsl_rng_uniform(r)
                         : mode == 1 ? at
                                     : need * (1 + 0.3 * gsl_rng_uniform(r));
            exact_cross += mode == 1 && p > 0;
        }
        rb = sla_reference_try(&v, false, work, floor_w, paused, ord, b);
        if (rb == PFS_EINVAL)
            rb = sla_reference_try(&v, true, work, floor_w, paused, ord, b);
        ra = pfs_policy_allocate(pfs_policy_find("sla"), &v, a, &d);
        CHECK_INT(ra, rb);
        for (size_t i = 0; ra == 0 && rb == 0 && i < n; i++) {
            n_paused += b[i].pause_frac >= 1;
            if (memcmp(&a[i].cap_w, &b[i].cap_w, sizeof a[i].cap_w) ||
                memcmp(&a[i].pause_frac, &b[i].pause_frac, sizeof a[i].pause_frac))
                test_fail(t, __FILE__, __LINE__,
                          "instance %d (mode %d), job %zu: cap %.17g pause %g, reference %.17g "
                          "pause %g",
                          inst, mode, i, a[i].cap_w, a[i].pause_frac, b[i].cap_w, b[i].pause_frac);
        }
        paused_some += n_paused > 0;
    }
    CHECK(paused_some > 300);
    CHECK(exact_cross > 200);
    free(base);
    free(c);
    free(work);
    free(jobs);
    free(tel);
    gsl_rng_free(r);
}
