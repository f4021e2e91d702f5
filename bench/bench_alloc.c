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

#include "pfisim.h"

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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
    for (size_t i = 0; i < cs->n_jobs; i++)
        pfs_curve_free(base[i]);
    free(base);
    pfs_predictor_free(pred);
    pfs_jobset_free(js);
    pfs_curveset_free(cs);
    pfs_policy_exec_close_all();
    return 0;
}
