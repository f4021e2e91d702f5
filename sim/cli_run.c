/*
 * sim/cli_run.c - pfisim run: a scenario, every policy of it on the same workload.
 *
 * The inputs (corpus, workload, predictor) are loaded once and shared by the runs; each
 * policy's results are kept in memory and written only when all runs succeeded, so an
 * interrupted or failed run leaves no half-written output.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const char pfs_cli_run_help[] =
    "usage: pfisim run [SCENARIO.cfg] [--policy NAME]... [--seed N] [--days D]\n"
    "                  [--timeseries-csv FILE] [--csv]\n"
    "\n"
    "Replays a scenario (docs/scenarios.md; without one, the embedded default: the H200\n"
    "corpus on 1,024 GPUs for 7 days, arrivals from the model fitted to Microsoft ITP\n"
    "cluster 04 at 90% load, three 3-hour 30% DR events) with every policy it names, on the\n"
    "same workload, and prints one row per\n"
    "policy: policy,tokens,mean_tps,energy_j,tokens_per_j,dr_minutes_over,\n"
    "dr_worst_excess_w,deadline_misses,tier_violations,gap_recovered.\n"
    "\n"
    "  --policy NAME         run this policy (repeatable) instead of the scenario's list\n"
    "  --seed N              the workload's seed\n"
    "  --days D              simulated days\n"
    "  --timeseries-csv FILE one row per simulated minute and policy: t_s,policy,facility_w,\n"
    "                        gpu_w,budget_w,throughput,running_jobs,paused_jobs\n"
    "  --jobs-csv FILE       one row per job and policy: policy,job_id,n_gpus,tier,start_s,\n"
    "                        finish_s,tokens_done,rel_throughput (tokens over what full power\n"
    "                        would have given in its time in the system)\n"
    "  --db[=FILE]           write every run to the results database (docs/results.md;\n"
    "                        default results/pfisim.db), one transaction per run\n"
    "  --resume              with --db: skip runs the database already holds\n";

struct outputs {
    size_t n;
    struct pfs_run_result *res;
    struct pfs_timeseries *ts;
    struct pfs_job_result **jobs; /* per policy, per workload job */
    const struct pfs_sim_inputs *in;
    double end_s;
};

static int
write_jobs(const void *obj, FILE *fp, struct pfs_diag *d)
{
    const struct outputs *o = obj;

    fputs("policy,job_id,n_gpus,tier,start_s,finish_s,tokens_done,rel_throughput\n", fp);
    for (size_t k = 0; k < o->n; k++) {
        for (size_t j = 0; j < pfs_sim_inputs_n_jobs(o->in); j++) {
            const struct pfs_workload_job *w = pfs_sim_inputs_job(o->in, j);
            const struct pfs_job_result *r = &o->jobs[k][j];
            double until = isnan(r->finish_s) ? o->end_s : r->finish_s;
            double rel = isnan(r->start_s) || !(until > r->start_s)
                             ? (double)NAN
                             : r->tokens_done / (w->tokens / w->duration_s * (until - r->start_s));

            fprintf(fp, "%s,%s,%d,%s,", o->res[k].policy, w->job_id, w->n_gpus,
                    pfs_tier_name(w->tier));
            if (isnan(r->start_s))
                fputs(",", fp);
            else
                fprintf(fp, "%.3f,", r->start_s);
            if (isnan(r->finish_s))
                fputs(",", fp);
            else
                fprintf(fp, "%.3f,", r->finish_s);
            fprintf(fp, "%.6g,", r->tokens_done);
            if (!isnan(rel))
                fprintf(fp, "%.6f", rel);
            fputc('\n', fp);
        }
    }
    if (fflush(fp) != 0 || ferror(fp))
        return pfs__diag_set(d, PFS_EIO, NULL, 0, 0, NULL, "write error: %s", strerror(errno));
    return 0;
}

static int
write_ts(const void *obj, FILE *fp, struct pfs_diag *d)
{
    const struct outputs *o = obj;

    fputs("t_s,policy,facility_w,gpu_w,budget_w,throughput,running_jobs,paused_jobs\n", fp);
    for (size_t k = 0; k < o->n; k++) {
        for (size_t i = 0; i < o->ts[k].n; i++) {
            const struct pfs_ts_row *r = &o->ts[k].rows[i];

            fprintf(fp, "%.0f,%s,%.3f,%.3f,", r->t_s, o->res[k].policy, r->facility_w, r->gpu_w);
            if (isnan(r->budget_w))
                fputc(',', fp);
            else
                fprintf(fp, "%.3f,", r->budget_w);
            fprintf(fp, "%.6g,%d,%d\n", r->throughput, r->running_jobs, r->paused_jobs);
        }
    }
    if (fflush(fp) != 0 || ferror(fp))
        return pfs__diag_set(d, PFS_EIO, NULL, 0, 0, NULL, "write error: %s", strerror(errno));
    return 0;
}

int
pfs_cli_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"policy", required_argument, 0, 'p'}, {"seed", required_argument, 0, 's'},
        {"days", required_argument, 0, 'd'},   {"timeseries-csv", required_argument, 0, 't'},
        {"csv", no_argument, 0, 'c'},          {"jobs-csv", required_argument, 0, 'j'},
        {"db", optional_argument, 0, 'D'},     {"resume", no_argument, 0, 'R'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    struct pfs_scenario *sc = malloc(sizeof *sc);
    const char *policies[PFS_MAX_POLICIES], *ts_path = NULL, *jobs_path = NULL, *db_path = NULL;
    struct pfs_store *store = NULL;
    bool resume = false;
    size_t n_pol = 0;
    struct outputs o = {0};
    struct pfs_sim_inputs *in = NULL;
    struct pfs_diag d = {0};
    double days = NAN;
    long seed = -1;
    bool csv = false;
    int c, rc = 0, code = EXIT_OK;

    if (!sc)
        return pfs_cli_report(&d, pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory"));
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (!pfs_policy_find(optarg)) {
                free(sc);
                return pfs_cli_usage("run", "unknown policy '%s' (pfisim --list-policies)", optarg);
            }
            if (n_pol < PFS_MAX_POLICIES)
                policies[n_pol++] = optarg;
            break;
        case 's':
            if (!pfs__parse_long(optarg, &seed) || seed < 0) {
                free(sc);
                return pfs_cli_usage("run", "--seed takes a non-negative integer, got '%s'",
                                     optarg);
            }
            break;
        case 'd':
            if (!pfs__parse_double(optarg, &days) || !(days > 0 && days <= 3660)) {
                free(sc);
                return pfs_cli_usage("run", "--days takes a number in (0, 3660], got '%s'", optarg);
            }
            break;
        case 't':
            ts_path = optarg;
            break;
        case 'j':
            jobs_path = optarg;
            break;
        case 'D':
            db_path = optarg ? optarg : "results/pfisim.db";
            break;
        case 'R':
            resume = true;
            break;
        case 'c':
            csv = true;
            break;
        case 'h':
            free(sc);
            return fputs(pfs_cli_run_help, stdout), EXIT_OK;
        default:
            free(sc);
            return pfs_cli_usage("run", "%s", "bad option");
        }
    }
    if (argc - optind > 1) {
        free(sc);
        return pfs_cli_usage("run", "%s", "expected at most one scenario file");
    }
    rc = pfs_scenario_load_days(optind < argc ? argv[optind] : NULL, days, sc, &d);
    if (rc) {
        free(sc);
        return pfs_cli_report(&d, rc);
    }
    if (seed >= 0)
        sc->seed = (unsigned long)seed;
    if (n_pol == 0)
        for (size_t k = 0; k < sc->n_policies; k++)
            policies[n_pol++] = sc->policies[k];
    o.n = n_pol;
    o.res = calloc(n_pol, sizeof *o.res);
    o.ts = calloc(n_pol, sizeof *o.ts);
    if (!o.res || !o.ts)
        rc = pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (resume && !db_path) {
        free(sc);
        free(o.res);
        free(o.ts);
        return pfs_cli_usage("run", "%s", "--resume needs --db");
    }
    /* The database first: a wrong one must fail before hours of simulation. */
    if (rc == 0 && db_path)
        rc = pfs_store_open(db_path, &store, &d);
    if (rc == 0)
        rc = pfs_sim_inputs_new(sc, &in, &d);
    if (rc == 0 && (jobs_path || db_path)) {
        o.jobs = calloc(n_pol, sizeof *o.jobs);
        for (size_t k = 0; o.jobs && k < n_pol; k++)
            o.jobs[k] = calloc(pfs_sim_inputs_n_jobs(in) + 1, sizeof **o.jobs);
        if (!o.jobs || !o.jobs[n_pol - 1])
            rc = pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    o.in = in;
    o.end_s = sc->days * 86400;
    for (size_t k = 0; rc == 0 && k < n_pol; k++) {
        bool done = false;

        if (resume && (rc = pfs_store_has_run(store, sc, policies[k], &done, &d)) == 0 && done) {
            fprintf(stderr, "pfisim run: %s: already in %s, skipped (--resume)\n", policies[k],
                    db_path);
            pfs__strlcpy(o.res[k].policy, policies[k], sizeof o.res[k].policy);
            o.res[k].tokens = NAN;
            continue;
        }
        if (rc == 0)
            rc = pfs_sim_run(sc, in, policies[k], &o.res[k], ts_path || db_path ? &o.ts[k] : NULL,
                             o.jobs ? o.jobs[k] : NULL, &d);
        if (rc == 0 && store)
            rc = pfs_store_write_run(store, sc, in, &o.res[k], &o.ts[k], o.jobs[k], &d);
        if (isatty(2) && rc == 0)
            fprintf(stderr, "pfisim run: %s done (%zu of %zu)\n", policies[k], k + 1, n_pol);
    }
    if (rc == 0) {
        double eq = NAN, orc = NAN;

        for (size_t k = 0; k < n_pol; k++) {
            if (strcmp(o.res[k].policy, "equal") == 0)
                eq = o.res[k].tokens;
            if (strcmp(o.res[k].policy, "oracle") == 0)
                orc = o.res[k].tokens;
        }
        for (size_t k = 0; k < n_pol; k++)
            o.res[k].gap_recovered = (o.res[k].tokens - eq) / (orc - eq);
        if (store)
            rc = pfs_store_update_gaps(store, sc, &d);
        if (ts_path)
            rc = pfs_cli_write_output(ts_path, write_ts, &o, &d);
        if (rc == 0 && jobs_path)
            rc = pfs_cli_write_output(jobs_path, write_jobs, &o, &d);
    }
    if (rc == 0) {
        int width = 6; /* the policy column: as wide as the longest name */

        for (size_t k = 0; k < n_pol; k++)
            if ((int)strlen(policies[k]) > width)
                width = (int)strlen(policies[k]);
        if (csv)
            puts("policy,tokens,mean_tps,energy_j,tokens_per_j,dr_minutes_over,"
                 "dr_worst_excess_w,deadline_misses,tier_violations,gap_recovered");
        else
            printf("scenario %s: %d GPUs (%s), %.3g days, %zu jobs, %zu DR events, %zu events "
                   "simulated\n"
                   "%-*s %12s %10s %12s %10s %8s %10s %6s %6s %7s\n",
                   sc->name, sc->gpus, sc->gpu, sc->days, o.res[0].jobs_submitted, sc->n_dr,
                   o.res[0].events, width, "policy", "tokens", "tokens/s", "energy_MWh", "tokens/J",
                   "DR_min", "worst_W", "missed", "tier", "gap");
        for (size_t k = 0; k < n_pol; k++) {
            const struct pfs_run_result *r = &o.res[k];

            if (isnan(r->tokens)) /* skipped by --resume */
                continue;
            if (csv) {
                printf("%s,%.6e,%.6g,%.6e,%.6g,%.1f,%.1f,%zu,%zu,", r->policy, r->tokens,
                       r->mean_tps, r->energy_j, r->tokens_per_j, r->dr_minutes_over,
                       r->dr_worst_excess_w, r->deadline_misses, r->tier_violations);
                if (isnan(r->gap_recovered))
                    puts("");
                else
                    printf("%.4f\n", r->gap_recovered);
            } else {
                char gap[16] = "-"; /* no equal or oracle run to measure it against */

                if (!isnan(r->gap_recovered))
                    snprintf(gap, sizeof gap, "%.4f", r->gap_recovered);
                printf("%-*s %12.5g %10.5g %12.4f %10.4g %8.1f %10.0f %6zu %6zu %7s\n", width,
                       r->policy, r->tokens, r->mean_tps, r->energy_j / 3.6e9, r->tokens_per_j,
                       r->dr_minutes_over, r->dr_worst_excess_w, r->deadline_misses,
                       r->tier_violations, gap);
            }
        }
        if (ts_path && !csv)
            printf("time series: %s\n", ts_path);
    } else {
        code = pfs_cli_report(&d, rc);
    }
    for (size_t k = 0; k < n_pol && o.ts; k++)
        pfs_timeseries_free(&o.ts[k]);
    for (size_t k = 0; k < n_pol && o.jobs; k++)
        free(o.jobs[k]);
    free(o.jobs);
    free(o.ts);
    free(o.res);
    pfs_sim_inputs_free(in);
    pfs_store_close(store);
    free(sc);
    return code;
}
