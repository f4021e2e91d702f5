/*
 * bench/bench_model.c - how fast the model's hot paths are: the clock solve under a cap
 * (what the simulator and the allocators call in their inner loops), curve evaluation of
 * both kinds, and a whole job fit. Wall-clock timing lives here, never in a test.
 *
 * Prints one line per case: name, iterations, ns per call (best of 5 repetitions).
 */
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pfisim.h"

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static volatile double sink;

static void
report(const char *name, long n, double best_s)
{
    printf("%-28s %10ld  %10.1f ns/call\n", name, n, 1e9 * best_s / (double)n);
}

int
main(void)
{
    struct pfs_gpu g;
    struct pfs_dvfs_job j = {12000, 0.85, 0.95, 60, 0.97};
    struct pfs_curve *model = NULL, *sampled = NULL;
    const long n_eval = 2000000, n_fit = 200;
    double caps[11], tput[11], pw[11], best;

    gsl_set_error_handler_off();
    if (pfs_gpu_find("h200-sxm", &g, NULL) != 0)
        return 1;
    for (int i = 0; i < 11; i++) {
        struct pfs_dvfs_point pt;

        caps[i] = 200 + 50.0 * i;
        pfs_dvfs_eval(&g, &j, caps[i], &pt);
        tput[i] = pt.throughput;
        pw[i] = pt.power_w;
    }
    if (pfs_curve_model_new(&g, &j, &model, NULL) != 0 ||
        pfs_curve_sampled_new(caps, tput, pw, 11, &sampled, NULL) != 0)
        return 1;

    best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_s(), acc = 0;

        for (long i = 0; i < n_eval; i++) {
            struct pfs_dvfs_point pt;

            pfs_dvfs_eval(&g, &j, 200 + 500.0 * (double)(i % 1000) / 1000, &pt);
            acc += pt.throughput;
        }
        sink = acc;
        best = fmin(best, now_s() - t0);
    }
    report("dvfs_eval (clock solve)", n_eval, best);

    for (int k = 0; k < 2; k++) {
        struct pfs_curve *c = k ? sampled : model;

        best = 1e9;
        for (int rep = 0; rep < 5; rep++) {
            double t0 = now_s(), acc = 0;

            for (long i = 0; i < n_eval; i++) {
                struct pfs_curve_point p;

                pfs_curve_eval(c, 200 + 500.0 * (double)(i % 1000) / 1000, &p);
                acc += p.throughput;
            }
            sink = acc;
            best = fmin(best, now_s() - t0);
        }
        report(k ? "curve_eval sampled (11 pts)" : "curve_eval model", n_eval, best);
    }

    best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        struct pfs_job_curve jc = {.job_id = (char *)"bench", .n_gpus = 8, .n_points = 11};
        double t0 = now_s();

        jc.cap_w = caps;
        jc.throughput = tput;
        jc.power_w = pw;
        for (long i = 0; i < n_fit; i++) {
            struct pfs_fit f;

            if (pfs_fit_job(&g, &jc, &f, NULL) != 0)
                return 1;
            sink = f.rmse_throughput;
        }
        best = fmin(best, now_s() - t0);
    }
    report("fit_job (11 pts, 16 starts)", n_fit, best);
    pfs_curve_free(model);
    pfs_curve_free(sampled);
    return 0;
}
