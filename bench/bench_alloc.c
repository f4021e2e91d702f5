/*
 * bench/bench_alloc.c - allocation time per policy for 100 to 100,000 jobs.
 *
 *     bench_alloc [--policy-lib FILE]... [--policy-exec CMD]...
 *
 * times pfisim's own policies and those the options add (a plugin's decisions cost what a
 * built-in's do plus a call through a pointer; an external program's, the JSON both ways).
 *
 * Jobs cycle through the shipped corpus (traces/h200-h100): its measured curves as the
 * truth, its telemetry and the shipped predictor for the PFI-aware policies, Flex tiers in
 * turn, a 30% cut. Timed: one pfs_policy_allocate call (best of 5), not building the curves,
 * which a simulator does once. Run from the repository root (make bench).
 */
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Under a power tree (issue 58): 10,000 one-GPU jobs in a hall of 16 rows of 10 racks of 64
 * GPUs (8 nodes of 8), each rack's GPUs held to 600 W each, each row to 300 kW (less than
 * its racks' 384 kW), a 30% cut at the feed; one allocation by each tree-aware policy
 * (pfs__policy_allocate_tree, best of 5), and the same jobs' flat allocation beside it. */
static void
tree_bench(const struct pfs_curveset *cs, const struct pfs_jobset *js,
           const struct pfs_predictor *pred, struct pfs_curve *const *base)
{
    enum { N = 10000, ROWS = 16, RACKS = 10, PER_RACK = 64 };
    static const char *const names[] = {"equal", "pfi", "oracle"};
    const size_t n_nodes = 1 + ROWS + ROWS * RACKS;
    struct pfs_alloc_job *jobs = calloc(N, sizeof *jobs);
    struct pfs_telemetry *tel = calloc(N, sizeof *tel);
    const struct pfs_curve **curves = calloc(N, sizeof *curves);
    struct pfs_alloc_decision *out = calloc(N, sizeof *out);
    int32_t *parent = calloc(n_nodes, sizeof *parent);
    double *limit = calloc(n_nodes, sizeof *limit), ref = 0;
    uint32_t *node = calloc(N, sizeof *node);
    struct pfs_truth *truth = NULL;
    struct pfs_diag d = {0};
    struct pfs_gpu g;

    parent[0] = -1;
    limit[0] = HUGE_VAL;
    for (size_t r = 0; r < ROWS; r++) {
        parent[1 + r] = 0;
        limit[1 + r] = 300e3;
        for (size_t k = 0; k < RACKS; k++) {
            parent[1 + ROWS + r * RACKS + k] = (int32_t)(1 + r);
            limit[1 + ROWS + r * RACKS + k] = PER_RACK * 600.0;
        }
    }
    for (size_t i = 0; i < N; i++) {
        size_t c = i % cs->n_jobs;

        pfs_gpu_find(cs->jobs[c].gpu, &g, NULL);
        jobs[i] = (struct pfs_alloc_job){.n_gpus = 1,
                                         .min_w = g.min_limit_w,
                                         .max_w = g.max_limit_w,
                                         .ref_w = g.default_limit_w,
                                         .idle_w = g.idle_w,
                                         .tier = 2,
                                         .max_loss = pfs_tier_max_loss(2),
                                         .deadline_s = NAN,
                                         .remaining_tokens = NAN};
        snprintf(jobs[i].job_id, sizeof jobs[i].job_id, "t%zu", i);
        pfs_telemetry_of(pfs_jobset_find(js, cs->jobs[c].job_id), &tel[i]);
        tel[i].n_gpus = 1;
        curves[i] = base[c];
        node[i] = (uint32_t)(1 + ROWS + i / PER_RACK);
        ref += jobs[i].ref_w;
    }
    printf("\nunder a power tree: %d one-GPU jobs, 16 rows of 10 racks of 64 GPUs (rows at 300 "
           "kW, racks at 600 W a GPU), a 30%% cut (ms per allocation, best of 5):\n",
           N);
    printf("%-20s %12s %12s\n", "policy", "tree", "flat");
    if (jobs && tel && curves && out && parent && limit && node &&
        pfs_truth_new(curves, jobs, N, &truth, &d) == 0) {
        const struct pfs_alloc_tree t = {n_nodes, parent, limit, node, NULL};
        struct pfs_alloc_view v = {0.7 * ref,    N,    jobs, tel, truth, pred,
                                   {NULL, NULL}, NULL, NULL, 0};

        for (size_t k = 0; k < 3; k++) {
            const struct pfs_policy_ops *ops = pfs_policy_find(names[k]);
            double best[2] = {HUGE_VAL, HUGE_VAL};
            int rc = 0;

            for (int flat = 0; flat < 2; flat++)
                for (int rep = 0; rep < 5 && rc == 0; rep++) {
                    double t0 = now_s();

                    rc = flat ? pfs_policy_allocate(ops, &v, out, &d)
                              : pfs__policy_allocate_tree(ops, &v, &t, out, &d);
                    best[flat] = fmin(best[flat], now_s() - t0);
                }
            if (rc)
                printf("%-20s %s\n", names[k], d.message);
            else
                printf("%-20s %12.3f %12.3f\n", names[k], 1e3 * best[0], 1e3 * best[1]);
        }
    }
    pfs_truth_free(truth);
    free(jobs);
    free(tel);
    free(curves);
    free(out);
    free(parent);
    free(limit);
    free(node);
}

int
main(int argc, char **argv)
{
    static const size_t sizes[] = {100, 1000, 10000, 100000};
    struct pfs_curveset *cs = NULL;
    struct pfs_jobset *js = NULL;
    struct pfs_predictor *pred = NULL;
    struct pfs_diag d = {0};
    struct pfs_curve **base;
    struct pfs_gpu g;

    gsl_set_error_handler_off();
    for (int a = 1; a + 1 < argc; a += 2) {
        const struct pfs_policy_ops *ops;
        int rc = strcmp(argv[a], "--policy-lib") == 0 ? pfs_policy_load(argv[a + 1], NULL, &d)
                 : strcmp(argv[a], "--policy-exec") == 0
                     ? pfs_policy_exec_start(argv[a + 1], 600, &ops, &d)
                     : PFS_EUSAGE;

        if (rc) {
            fprintf(stderr, "bench_alloc: %s: %s\n", argv[a + 1],
                    d.message[0] ? d.message : "usage: [--policy-lib FILE] [--policy-exec CMD]");
            return 2;
        }
    }
    if (pfs_curveset_read("traces/h200-h100/curves.csv", &cs, &d) ||
        pfs_jobset_read("traces/h200-h100/jobs.csv", &js, &d) ||
        pfs_predictor_load("traces/h200-h100/predictor.cfg", &pred, &d)) {
        fprintf(stderr, "bench_alloc: %s\n", d.message);
        return 1;
    }
    base = calloc(cs->n_jobs, sizeof *base);
    for (size_t i = 0; i < cs->n_jobs; i++) {
        const struct pfs_job_curve *jc = &cs->jobs[i];

        pfs_curve_sampled_new(jc->cap_w, jc->throughput, jc->power_w, jc->n_points, &base[i], &d);
    }
    printf("%-20s", "policy \\ jobs");
    for (size_t s = 0; s < 4; s++)
        printf(" %12zu", sizes[s]);
    printf("   (ms per allocation, best of 5)\n");
    for (size_t k = 0; pfs_policy_at(k); k++) {
        const struct pfs_policy_ops *ops = pfs_policy_at(k);

        printf("%-20s", pfs_policy_name(ops));
        for (size_t s = 0; s < 4; s++) {
            size_t n = sizes[s];
            struct pfs_alloc_job *jobs = calloc(n, sizeof *jobs);
            struct pfs_telemetry *tel = calloc(n, sizeof *tel);
            const struct pfs_curve **curves = calloc(n, sizeof *curves);
            struct pfs_alloc_decision *out = calloc(n, sizeof *out);
            struct pfs_truth *truth = NULL;
            double ref = 0, best = HUGE_VAL;
            int rc = 0;

            for (size_t i = 0; i < n; i++) {
                size_t c = i % cs->n_jobs;
                const struct pfs_corpus_job *cj = pfs_jobset_find(js, cs->jobs[c].job_id);

                pfs_gpu_find(cs->jobs[c].gpu, &g, NULL);
                jobs[i] = (struct pfs_alloc_job){.n_gpus = cs->jobs[c].n_gpus,
                                                 .min_w = g.min_limit_w,
                                                 .max_w = g.max_limit_w,
                                                 .ref_w = g.default_limit_w,
                                                 .idle_w = g.idle_w,
                                                 .tier = 1 + (int)(i % 3),
                                                 .max_loss = pfs_tier_max_loss(1 + (int)(i % 3)),
                                                 .deadline_s = NAN,
                                                 .remaining_tokens = NAN};
                snprintf(jobs[i].job_id, sizeof jobs[i].job_id, "b%zu", i);
                pfs_telemetry_of(cj, &tel[i]);
                curves[i] = base[c];
                ref += jobs[i].n_gpus * jobs[i].ref_w;
            }
            if (pfs_truth_new(curves, jobs, n, &truth, &d) == 0) {
                struct pfs_alloc_view v = {0.7 * ref,    n,    jobs, tel, truth, pred,
                                           {NULL, NULL}, NULL, NULL, 0};

                for (int rep = 0; rep < 5 && rc == 0; rep++) {
                    double t0 = now_s();

                    rc = pfs_policy_allocate(ops, &v, out, &d);
                    best = fmin(best, now_s() - t0);
                }
            }
            if (rc)
                printf(" %12s", "infeasible");
            else
                printf(" %12.3f", 1e3 * best);
            fflush(stdout);
            pfs_truth_free(truth);
            free(jobs);
            free(tel);
            free(curves);
            free(out);
        }
        putchar('\n');
    }
    tree_bench(cs, js, pred, base);
    for (size_t i = 0; i < cs->n_jobs; i++)
        pfs_curve_free(base[i]);
    free(base);
    pfs_predictor_free(pred);
    pfs_jobset_free(js);
    pfs_curveset_free(cs);
    pfs_policy_exec_close_all();
    return 0;
}
