/*
 * sim/cli/run.c - pfisim run: a scenario, every policy of it on the same workload, under one
 * workload seed or several.
 *
 * The inputs (corpus, workload, predictor) are loaded once per seed and shared by the runs
 * of that seed; each policy's results are kept in memory and written only when all runs
 * succeeded, so an interrupted or failed run leaves no half-written output. The printed
 * tables name their columns as the CSV and the results database do (units in the names).
 */
#include <errno.h>
#include <getopt.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

const char pfs_cli_run_help[] =
    "usage: pfisim run [SCENARIO.cfg] [--policy NAME]... [--seed N | --seeds LIST] [--days D]\n"
    "                  [--timeseries-csv FILE] [--jobs-csv FILE] [--db[=FILE]] [--resume]\n"
    "                  [--csv | --json] [--threads N] [--uncertainty N [--uncertainty-seed S]]\n"
    "                  [--policy-lib FILE]...\n"
    "                  [--policy-exec CMD]... [--policy-timeout SEC]\n"
    "\n"
    "Replays a scenario (docs/scenarios.md; without one, the embedded default: the H200\n"
    "corpus on 1,024 GPUs for 7 days, arrivals from the model fitted to Microsoft ITP\n"
    "cluster 04 at 90% load, three 3-hour 30% DR events) with every policy it names, on the\n"
    "same workload, and prints per policy its outcomes, the planner's summary (peak and p99\n"
    "facility draw, hours a limit binds, DR events called / met / missed / beyond capping,\n"
    "the cost of DR against the same run without events, the jobs' loss) and, with several\n"
    "GPU pools, each pool's share (docs/results.md defines every column).\n"
    "\n"
    "  --policy NAME         run this policy (repeatable, or NAME,NAME...; at most 16, each\n"
    "                        once) instead of the scenario's list\n"
    "  --seed N              the workload's seed\n"
    "  --seeds LIST          run every policy under each workload seed: A..B or A,B,C, distinct\n"
    "                        (or the scenario's `seeds`); prints means, the 95% interval and\n"
    "                        min-max, and each policy against equal seed by seed\n"
    "  --days D              simulated days, 1/1440 (a minute) to 3660 (events are drawn and\n"
    "                        counted within them)\n"
    "  --timeseries-csv FILE one row per simulated minute and policy: t_s,policy,facility_w,\n"
    "                        gpu_w,budget_w,throughput,running_jobs,paused_jobs (one seed;\n"
    "                        FILE - is standard output, and the summary goes to standard\n"
    "                        error, as with --jobs-csv -)\n"
    "  --jobs-csv FILE       one row per job and policy: policy,job_id,n_gpus,tier,start_s,\n"
    "                        finish_s,tokens_done,rel_throughput,pool,curve_id (tokens over\n"
    "                        what full power on its pool would have given in its time in the\n"
    "                        system; one seed)\n"
    "  --db[=FILE]           write every run to the results database (docs/results.md;\n"
    "                        default results/pfisim.db), one transaction per run; a new\n"
    "                        file appears at the end, whole, or not at all\n"
    "  --resume              with --db: skip runs the database already holds (a new file\n"
    "                        is then written in place, keeping what an interrupted run stored)\n"
    "  --threads N           simulate up to N policies at once (default: the CPUs online),\n"
    "                        a thread to spare making the run without DR events beside\n"
    "                        them; the outputs are the same bytes for every N\n"
    "  --csv                 one seed: policy,tokens,mean_tps,energy_j,tokens_per_j,\n"
    "                        dr_minutes_over,dr_worst_excess_w,deadline_misses,\n"
    "                        tier_violations,gap_recovered, then gap_note and the planner's\n"
    "                        columns; several: policy,metric,n_seeds,mean,ci95,min,max\n"
    "  --json                the same as one JSON document: the scenario, then one run per\n"
    "                        policy and seed with every column (null where undefined); the\n"
    "                        process's peak memory goes to standard error (as on a\n"
    "                        terminal), so that the document is the same bytes every run\n"
    "  --uncertainty N       run the scenario once per draw of its GPU profiles' ranges\n"
    "                        (pfisim gpus NAME: the extrapolated Blackwell profiles; a\n"
    "                        centred Latin hypercube) and print each metric's median and\n"
    "                        range over the N draws and how often each ranking of the\n"
    "                        policies by tokens holds (one seed; --json: every run, with\n"
    "                        \"draw\", and each draw's parameters). N = 1 is the point\n"
    "                        profile, every range at its midpoint: the plain run's results\n"
    "  --uncertainty-seed S  the draws' seed (default 1)\n" PFS_CLI_PLUGIN_HELP
    "                        Without --policy, the policies these add run after the\n"
    "                        scenario's. A program that fails mid-run ends the run with\n"
    "                        exit status 1 and nothing written; one that cannot be used\n"
    "                        (not loaded, another ABI or protocol) exits 3 before any run.\n";

/* The outcome and planner columns, in CSV order, with how each is printed. */
struct column {
    const char *name;
    size_t off; /* offsetof(struct pfs_run_result, ...) */
    char kind;  /* 'd' double, 'z' size_t */
    char conv;  /* the CSV's conversion of a double: e, g or f ... */
    int prec;   /* ... with this precision */
};

/* clang-format off */
#define COL(n, k, conv, prec) {#n, offsetof(struct pfs_run_result, n), k, conv, prec}
/* clang-format on */
static const struct column outcome_cols[] = {
    COL(tokens, 'd', 'e', 6),          COL(mean_tps, 'd', 'g', 6),
    COL(energy_j, 'd', 'e', 6),        COL(tokens_per_j, 'd', 'g', 6),
    COL(dr_minutes_over, 'd', 'f', 1), COL(dr_worst_excess_w, 'd', 'f', 1),
    COL(deadline_misses, 'z', 'g', 0), COL(tier_violations, 'z', 'g', 0),
    COL(gap_recovered, 'd', 'f', 4),   COL(deadlines_given_up, 'z', 'g', 0),
    COL(jobs_refused, 'z', 'g', 0),
};
static const struct column planner_cols[] = {
    COL(cap_w, 'd', 'g', 6),
    COL(peak_facility_w, 'd', 'g', 6),
    COL(p99_facility_w, 'd', 'g', 6),
    COL(cap_binding_h, 'd', 'g', 4),
    COL(dr_events, 'z', 'g', 0),
    COL(dr_events_met, 'z', 'g', 0),
    COL(dr_events_missed, 'z', 'g', 0),
    COL(dr_events_uncappable, 'z', 'g', 0),
    COL(dr_floor_excess_w, 'd', 'g', 6),
    COL(cap_minutes_over, 'd', 'f', 1),
    COL(cap_worst_excess_w, 'd', 'f', 1),
    COL(cap_mean_excess_w, 'd', 'f', 1),
    COL(cap_energy_over_j, 'd', 'e', 6),
    COL(jobs_held_back, 'z', 'g', 0),
    COL(held_back_wait_h, 'd', 'g', 6),
    COL(jobs_paused_hold, 'z', 'g', 0),
    COL(hold_pauses, 'z', 'g', 0),
    COL(dr_energy_shed_j, 'd', 'e', 6),
    COL(nodr_tokens, 'd', 'e', 6),
    COL(nodr_deadline_misses, 'd', 'g', 6),
    COL(dr_cost_tokens, 'd', 'e', 6),
    COL(dr_cost_frac, 'd', 'f', 6),
    COL(dr_cost_per_event, 'd', 'e', 6),
    COL(dr_cost_per_mwh, 'd', 'e', 6),
    COL(job_loss_mean, 'd', 'f', 6),
    COL(job_loss_p50, 'd', 'f', 6),
    COL(job_loss_p95, 'd', 'f', 6),
    COL(job_loss_max, 'd', 'f', 6),
};
#undef COL
#define N_COLS(a) (sizeof(a) / sizeof((a)[0]))

/* The outcome or planner column called name, or NULL. */
static const struct column *
column_named(const char *name)
{
    for (size_t i = 0; i < N_COLS(outcome_cols); i++)
        if (strcmp(outcome_cols[i].name, name) == 0)
            return &outcome_cols[i];
    for (size_t i = 0; i < N_COLS(planner_cols); i++)
        if (strcmp(planner_cols[i].name, name) == 0)
            return &planner_cols[i];
    return NULL;
}

static double
col_value(const struct pfs_run_result *r, const struct column *c)
{
    const char *p = (const char *)r + c->off;

    if (c->kind == 'z') {
        size_t v;

        memcpy(&v, p, sizeof v);
        return (double)v;
    }
    {
        double v;

        memcpy(&v, p, sizeof v);
        return v;
    }
}

/* A cell as the human table shows it: counts whole, others with 5 significant digits, NAN
 * as "-". */
static void
cell(char *buf, size_t size, const struct pfs_run_result *r, const struct column *c)
{
    double v = col_value(r, c);

    if (isnan(v))
        snprintf(buf, size, "-");
    else if (c->kind == 'z')
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.5g", v);
}

static void
csv_cells(const struct pfs_run_result *r, const struct column *cols, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double v = col_value(r, &cols[i]);

        if (i)
            putchar(',');
        if (cols[i].kind == 'z')
            printf("%.0f", v);
        else if (!isnan(v) && cols[i].conv == 'e')
            printf("%.*e", cols[i].prec, v);
        else if (!isnan(v) && cols[i].conv == 'f')
            printf("%.*f", cols[i].prec, v);
        else if (!isnan(v))
            printf("%.*g", cols[i].prec, v);
    }
}

/* The process's peak resident memory so far, MiB (getrusage: the kernel's high-water mark,
 * every thread's), for the size of a run (issue 16). */
static double
peak_rss_mb(void)
{
    struct rusage ru;

    return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024 : (double)NAN;
}

/* The draws of --uncertainty (n > 0: one run set a draw; its profiles' parameters). */
struct draws {
    size_t n;
    const struct pfs_gpu *unc;
    size_t n_unc;
    unsigned long seed;
};

/* The runs as one JSON document: the scenario, then a run per policy and seed with every
 * column of the summary (null where the table shows "-"), numbers to 17 digits; under
 * --uncertainty each run's draw and each draw's parameters. */

static void
json_report(const struct pfs_scenario *sc, const struct pfs_run_result *all, size_t n_seeds,
            size_t n_pol, const unsigned long *seeds, const struct draws *dr)
{
    const struct column *sets[] = {outcome_cols, planner_cols};
    const size_t n_set[] = {N_COLS(outcome_cols), N_COLS(planner_cols)};
    bool first = true;

    printf("{\"scenario\": ");
    pfs_cli_json_string(sc->name);
    printf(", \"gpus\": %d, \"days\": %.17g, \"runs\": [", sc->gpus, sc->days);
    for (size_t i = 0; i < n_seeds; i++)
        for (size_t k = 0; k < n_pol; k++) {
            const struct pfs_run_result *r = &all[i * n_pol + k];

            if (isnan(r->tokens))
                continue; /* skipped (--resume) */
            printf("%s\n  {\"policy\": ", first ? "" : ",");
            pfs_cli_json_string(r->policy);
            printf(", \"seed\": %lu", seeds[i]);
            if (dr->n > 0)
                printf(", \"draw\": %zu", i + 1);
            printf(", \"jobs_submitted\": %zu, \"events\": %zu", r->jobs_submitted, r->events);
            for (size_t t = 0; t < 2; t++)
                for (size_t c = 0; c < n_set[t]; c++) {
                    double v = col_value(r, &sets[t][c]);

                    printf(", \"%s\": ", sets[t][c].name);
                    pfs_cli_json_number(v);
                }
            printf(", \"gap_note\": ");
            pfs_cli_json_string(r->gap_note);
            if (r->n_tree > 0) {
                printf(", \"tree_waits\": %zu, \"tree\": [", r->tree_waits);
                for (size_t v = 0; v < r->n_tree; v++) {
                    const struct pfs_node_result *t = &r->tree[v];

                    printf("%s{\"name\": ", v ? ", " : "");
                    pfs_cli_json_string(t->name);
                    printf(", \"level\": %d, \"limit_w\": ", t->level);
                    pfs_cli_json_number(isfinite(t->limit_w) ? t->limit_w : (double)NAN);
                    printf(", \"nameplate_w\": %.17g, \"peak_w\": %.17g, \"p99_w\": %.17g, "
                           "\"minutes_at\": %.17g, \"minutes_over\": %.17g, "
                           "\"worst_excess_w\": %.17g, \"energy_j\": %.17g}",
                           t->nameplate_w, t->peak_w, t->p99_w, t->minutes_at, t->minutes_over,
                           t->worst_excess_w, t->energy_j);
                }
                putchar(']');
            }
            putchar('}');
            first = false;
        }
    printf("\n]");
    if (dr->n > 0) { /* each draw's parameters, per uncertain profile */
        printf(", \"uncertainty\": {\"draws\": %zu, \"seed\": %lu, \"profiles\": [", dr->n,
               dr->seed);
        for (size_t u = 0; u < dr->n_unc; u++) {
            printf("%s\n  {\"gpu\": ", u ? "," : "");
            pfs_cli_json_string(dr->unc[u].name);
            for (size_t k = 0; k < PFS_GPU_N_PARAMS; k++) {
                if (!(dr->unc[u].hi[k] > dr->unc[u].lo[k]))
                    continue;
                printf(", \"%s\": [", pfs_gpu_param_name(k));
                for (size_t i = 0; i < dr->n; i++) {
                    struct pfs_gpu g;

                    if (pfs_gpu_draw(&dr->unc[u], dr->n, i, dr->seed, &g, NULL) == 0)
                        printf("%s%.17g", i ? ", " : "", pfs_gpu_param(&g, k));
                }
                putchar(']');
            }
            putchar('}');
        }
        printf("\n]}");
    }
    printf("}\n"); /* (the peak memory goes to standard error: it differs run to run) */
}

/* The power tree's nodes, level by level (the root, then each level's worst node by peak
 * over limit), per policy: IT power in minute means (docs/scenarios.md "The power tree"). */
static void
tree_table(const struct pfs_run_result *res, size_t n, int width)
{
    printf("\nthe power tree (IT power, minute means; a level: its nodes, the worst by peak/limit,"
           "\nminutes at (within 1%% below) and over every node's limit summed):\n");
    printf("%-*s %5s %5s %8s %8s %8s %10s %9s %9s %10s\n", width, "policy", "level", "nodes",
           "limit_kW", "peak_kW", "p99_kW", "peak/limit", "min_at", "min_over", "energy_MWh");
    for (size_t k = 0; k < n; k++) {
        const struct pfs_run_result *r = &res[k];
        int top = 0;

        for (size_t v = 0; v < r->n_tree; v++)
            top = r->tree[v].level > top ? r->tree[v].level : top;
        for (int l = 0; l <= top && r->n_tree > 0 && !isnan(r->tokens); l++) {
            const struct pfs_node_result *worst = NULL;
            double at = 0, over = 0, e = 0;
            char lim_s[24], ratio[24];
            size_t nodes = 0;

            for (size_t v = 0; v < r->n_tree; v++) {
                const struct pfs_node_result *t = &r->tree[v];
                double lim = isfinite(t->limit_w) ? t->limit_w : t->nameplate_w;

                if (t->level != l)
                    continue;
                nodes++;
                at += t->minutes_at;
                over += t->minutes_over;
                e += t->energy_j;
                if (!worst || t->peak_w / lim > worst->peak_w / (isfinite(worst->limit_w)
                                                                     ? worst->limit_w
                                                                     : worst->nameplate_w))
                    worst = t;
            }
            if (!worst)
                continue;
            if (isfinite(worst->limit_w)) {
                snprintf(lim_s, sizeof lim_s, "%.1f", worst->limit_w / 1e3);
                snprintf(ratio, sizeof ratio, "%.3f", worst->peak_w / worst->limit_w);
            } else {
                snprintf(lim_s, sizeof lim_s, "-");
                snprintf(ratio, sizeof ratio, "-");
            }
            printf("%-*s %5d %5zu %8s %8.1f %8.1f %10s %9.0f %9.0f %10.2f\n", width, r->policy, l,
                   nodes, lim_s, worst->peak_w / 1e3, worst->p99_w / 1e3, ratio, at, over,
                   e / 3.6e9);
        }
    }
    if (n > 0 && res[0].tree_waits > 0)
        for (size_t k = 0; k < n; k++)
            printf("%s: %zu starts waited for a rack with room in one piece\n", res[k].policy,
                   res[k].tree_waits);
}

/* A human table: policy, then the columns, each as wide as its name or widest cell. */
static void
table(const struct pfs_run_result *res, size_t n, const struct column *cols, size_t n_cols,
      int width)
{
    int w[32];
    char buf[64];

    for (size_t i = 0; i < n_cols; i++) {
        w[i] = (int)strlen(cols[i].name);
        for (size_t k = 0; k < n; k++) {
            cell(buf, sizeof buf, &res[k], &cols[i]);
            if ((int)strlen(buf) > w[i])
                w[i] = (int)strlen(buf);
        }
    }
    /* In blocks of as many columns as fit in 100 characters beside the policy (a terminal's
     * width: a planner reads it there), each with its header. */
    for (size_t from = 0, to; from < n_cols; from = to) {
        int used = width + 1 + w[from];

        for (to = from + 1; to < n_cols && used + 1 + w[to] <= 100; to++)
            used += 1 + w[to];
        printf("%-*s", width, "policy");
        for (size_t i = from; i < to; i++)
            printf(" %*s", w[i], cols[i].name);
        putchar('\n');
        for (size_t k = 0; k < n; k++) {
            if (isnan(res[k].tokens)) /* skipped by --resume */
                continue;
            printf("%-*s", width, res[k].policy);
            for (size_t i = from; i < to; i++) {
                cell(buf, sizeof buf, &res[k], &cols[i]);
                printf(" %*s", w[i], buf);
            }
            putchar('\n');
        }
    }
}

struct outputs {
    size_t n;
    bool skipped[PFS_MAX_POLICIES]; /* --resume: already in the database, not simulated */
    struct pfs_run_result *res;
    struct pfs_timeseries *ts;
    struct pfs_job_results *jobs; /* per policy (NULL: none wanted) */
    const struct pfs_sim_inputs *in;
    double end_s;
    size_t threads; /* for writing the CSVs: pieces formatted at once (write_rows) */
};

/* The policies of one seed, simulated by up to `threads` threads (they share the inputs,
 * which pfs_sim_run allows); each writes only its own result slots. */
struct run_pool {
    const struct pfs_scenario *sc;
    const struct pfs_sim_inputs *in;
    const char *const *policies;
    struct outputs *o; /* o->skipped: the runs --resume found stored */
    bool want_ts;
    size_t next, n;
    pthread_mutex_t lock;
    pthread_cond_t ran_cond;
    signed char ran[PFS_MAX_POLICIES]; /* the policy's run: 0 not over, 1 over, -1 failed */
    int rc;                            /* the first failure, in policy order */
    size_t failed;                     /* its policy */
    struct pfs_diag d;
};

/* Takes the pool's work in order: every policy's run, then every run's pricing against the
 * run without events (pfs_sim_price), so that a thread that finds that run being made by
 * another waits only when no run is left to make. */
static void *
run_worker(void *arg)
{
    struct run_pool *rp = arg;

    for (;;) {
        struct pfs_diag d = {0};
        size_t k;
        bool price;
        int rc;

        pthread_mutex_lock(&rp->lock);
        k = rp->next++;
        pthread_mutex_unlock(&rp->lock);
        if (k >= 2 * rp->n)
            return NULL;
        price = k >= rp->n;
        k %= rp->n;
        if (rp->o->skipped[k])
            continue;
        if (price) {
            /* The run without events first, which needs no run's result (a no-op once
             * made), then, the policy's run over, its pricing. */
            struct pfs_diag dp = {0};
            bool failed;

            (void)pfs_sim_nodr_prepare(rp->sc, rp->in, rp->policies[k], &dp);
            pthread_mutex_lock(&rp->lock);
            while (rp->ran[k] == 0)
                pthread_cond_wait(&rp->ran_cond, &rp->lock);
            failed = rp->ran[k] < 0; /* (nothing to price) */
            pthread_mutex_unlock(&rp->lock);
            if (failed)
                continue;
            rc = pfs_sim_price(rp->sc, rp->in, rp->policies[k], &rp->o->res[k], &d);
        } else {
            rc = pfs_sim_run_unpriced(rp->sc, rp->in, rp->policies[k], &rp->o->res[k],
                                      rp->want_ts ? &rp->o->ts[k] : NULL,
                                      rp->o->jobs ? &rp->o->jobs[k] : NULL, &d);
        }
        pthread_mutex_lock(&rp->lock);
        if (rc && (rp->rc == 0 || k < rp->failed)) {
            rp->rc = rc;
            rp->failed = k;
            rp->d = d;
        }
        if (!price) {
            rp->ran[k] = rc ? -1 : 1;
            pthread_cond_broadcast(&rp->ran_cond);
        }
        pthread_mutex_unlock(&rp->lock);
    }
}

/* The run without events that prices DR, made on a thread of its own (a failure there is
 * pfs_sim_run's to report: it makes the run itself then). */
static void *
nodr_worker(void *arg)
{
    struct run_pool *rp = arg;
    struct pfs_diag d = {0};

    (void)pfs_sim_nodr_prepare(rp->sc, rp->in, rp->policies[0], &d);
    return NULL;
}

/* Runs the pool's policies on n_threads threads, this one among them (it takes runs too, as
 * soon as the others are started, instead of waiting for them). A thread more than the
 * policies need makes the run without events beside them, when it is shared (it would
 * otherwise follow the first run to end: a single policy's run took twice its own time on a
 * 2-core machine with a core idle). Returns the first failure in policy order, its message
 * in *d. */
static int
run_policies(struct run_pool *rp, size_t n_threads, struct pfs_diag *d)
{
    pthread_t th[64], nodr;
    size_t started = 0;
    bool spare = false;

    pthread_mutex_init(&rp->lock, NULL);
    pthread_cond_init(&rp->ran_cond, NULL);
    if (n_threads > rp->n && rp->sc->n_dr > 0)
        spare = pthread_create(&nodr, NULL, nodr_worker, rp) == 0;
    if (n_threads > rp->n)
        n_threads = rp->n;
    if (n_threads > sizeof th / sizeof th[0])
        n_threads = sizeof th / sizeof th[0];
    for (; started + 1 < n_threads; started++)
        if (pthread_create(&th[started], NULL, run_worker, rp) != 0)
            break;
    run_worker(rp);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (spare)
        pthread_join(nodr, NULL);
    pthread_mutex_destroy(&rp->lock);
    pthread_cond_destroy(&rp->ran_cond);
    if (rp->rc)
        *d = rp->d;
    return rp->rc;
}

/* Rows [from, to) of policy k's part of an output CSV, to fp: 0, or PFS_EIO where its
 * temporary file cannot be read back. */
typedef int (*rows_fn)(const struct outputs *o, size_t k, size_t from, size_t to, FILE *fp);

/* A piece of an output CSV (write_rows): rows [from, to) of policy k's part, formatted into a
 * temporary file of its own (tmp), or, the first piece, straight into the output. */
struct rows_piece {
    size_t k, from, to;
    FILE *tmp;
};

/* The pieces, taken in order by write_rows's threads. */
struct rows_work {
    const struct outputs *o;
    rows_fn rows;
    FILE *fp;
    struct rows_piece *piece;
    size_t n, next;
    pthread_mutex_t mu;
    int rc; /* the first failure */
};

#define PIECE_MIN 4096 /* rows: fewer are not worth a temporary file */

static void *
rows_work_run(void *arg)
{
    struct rows_work *w = arg;

    for (;;) {
        struct rows_piece *p;
        int rc;

        pthread_mutex_lock(&w->mu);
        p = w->next < w->n && w->rc == 0 ? &w->piece[w->next++] : NULL;
        pthread_mutex_unlock(&w->mu);
        if (!p)
            return NULL;
        if ((rc = w->rows(w->o, p->k, p->from, p->to, p->tmp ? p->tmp : w->fp))) {
            pthread_mutex_lock(&w->mu);
            w->rc = w->rc ? w->rc : rc;
            pthread_mutex_unlock(&w->mu);
        }
    }
}

/* write_rows's failure rc, in d: out of memory, or what of files (its temporary ones) says. */
static int
rows_failed(struct pfs_diag *d, int rc, const char *files)
{
    if (rc == PFS_ENOMEM)
        return pfs__diag_set(d, rc, NULL, 0, 0, NULL, "out of memory");
    if (rc == PFS_EINTR)
        return pfs__diag_set(d, rc, NULL, 0, 0, NULL, "interrupted");
    return pfs__diag_set(d, PFS_EIO, NULL, 0, 0, NULL, "%s: %s", files, strerror(errno));
}

/* Every policy's rows (count(o, k) of policy k's), in policy order, to fp: in pieces of at
 * least PIECE_MIN rows, each policy's rows in up to o->threads of them, formatted on that
 * many threads, every piece but the first into a temporary file of its own, then copied in
 * order (printf's float formatting is most of a large CSV's time: 36 s of the 100,000-GPU
 * year's 20 M job rows). In turn, straight to fp, where one thread is asked for or a
 * temporary file cannot be made. Returns 0, PFS_EIO or PFS_ENOMEM. */
static int
write_rows(const struct outputs *o, rows_fn rows, size_t (*count)(const struct outputs *, size_t),
           FILE *fp)
{
    size_t t = o->threads < 64 ? o->threads : 64, n = 0, started = 0;
    struct rows_work w = {.o = o, .rows = rows, .fp = fp};
    pthread_t th[64];
    char buf[1 << 16];
    int rc = 0;

    if (!(w.piece = calloc(o->n * (t ? t : 1) + 1, sizeof *w.piece)))
        return PFS_ENOMEM;
    for (size_t k = 0; k < o->n; k++) {
        size_t all = o->skipped[k] ? 0 : count(o, k), per = t > 1 ? (all + t - 1) / t : all;

        per = per > PIECE_MIN ? per : PIECE_MIN;
        for (size_t from = 0; from < all; from += per)
            w.piece[n++] = (struct rows_piece){k, from, all - from > per ? from + per : all, NULL};
    }
    w.n = n;
    for (size_t i = 1; t > 1 && i < n; i++)
        if (!(w.piece[i].tmp = tmpfile()))
            t = 1;
    if (t <= 1 || n <= 1) {
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = rows(o, w.piece[i].k, w.piece[i].from, w.piece[i].to, fp);
        goto out;
    }
    pthread_mutex_init(&w.mu, NULL);
    for (; started + 1 < t && started + 1 < n; started++)
        if (pthread_create(&th[started], NULL, rows_work_run, &w) != 0)
            break;
    rows_work_run(&w);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&w.mu);
    rc = w.rc;
    for (size_t i = 1; i < n && rc == 0; i++) {
        FILE *tmp = w.piece[i].tmp;
        size_t got;

        if (fflush(tmp) != 0 || fseeko(tmp, 0, SEEK_SET) != 0)
            rc = PFS_EIO;
        while (rc == 0 && (got = fread(buf, 1, sizeof buf, tmp)) > 0)
            if (fwrite(buf, 1, got, fp) != got)
                rc = PFS_EIO;
        if (rc == 0 && ferror(tmp))
            rc = PFS_EIO;
    }
out:
    for (size_t i = 0; i < n; i++)
        if (w.piece[i].tmp)
            fclose(w.piece[i].tmp);
    free(w.piece);
    return rc;
}

static size_t
jobs_count(const struct outputs *o, size_t k)
{
    return o->jobs[k].n;
}

/* Rows [from, to) of policy k's part of the jobs CSV. */
static int
jobs_rows(const struct outputs *o, size_t k, size_t from, size_t to, FILE *fp)
{
    struct pfs_job_result rows[256];
    size_t got;
    int err = 0;

    for (size_t j = from;
         j < to &&
         (got = pfs_job_results_read(&o->jobs[k], j, rows, to - j < 256 ? to - j : 256, &err)) > 0;
         j += got) {
        if (pfs_interrupted())
            return PFS_EINTR;
        for (size_t g = 0; g < got; g++) {
            const struct pfs_workload_job *w = pfs_sim_inputs_job(o->in, j + g);
            const struct pfs_job_result *r = &rows[g];
            double until = isnan(r->finish_s) ? o->end_s : r->finish_s;
            double rel = isnan(r->start_s) || !(until > r->start_s)
                             ? (double)NAN
                             : r->tokens_done / (w->tokens / r->duration_s * (until - r->start_s));

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
            fprintf(fp, ",%s,%s\n",
                    r->pool >= 0 && (size_t)r->pool < o->res[k].n_pools
                        ? o->res[k].pool[r->pool].name
                        : "",
                    pfs_sim_inputs_curve(o->in, r->curve)->job_id);
        }
    }
    return err;
}

static int
write_jobs(const void *obj, FILE *fp, struct pfs_diag *d)
{
    const struct outputs *o = obj;
    int rc;

    fputs("policy,job_id,n_gpus,tier,start_s,finish_s,tokens_done,rel_throughput,pool,curve_id\n",
          fp);
    if ((rc = write_rows(o, jobs_rows, jobs_count, fp)))
        return rows_failed(d, rc, "the job results' temporary files");
    if (fflush(fp) != 0 || ferror(fp))
        return pfs__diag_set(d, PFS_EIO, NULL, 0, 0, NULL, "write error: %s", strerror(errno));
    return 0;
}

static size_t
ts_count(const struct outputs *o, size_t k)
{
    return o->ts[k].n;
}

/* Rows [from, to) of policy k's part of the time series CSV. */
static int
ts_rows(const struct outputs *o, size_t k, size_t from, size_t to, FILE *fp)
{
    struct pfs_ts_row rows[256];
    size_t got;
    int err = 0;

    for (size_t i = from;
         i < to &&
         (got = pfs_timeseries_read(&o->ts[k], i, rows, to - i < 256 ? to - i : 256, &err)) > 0;
         i += got) {
        if (pfs_interrupted()) /* (a signal: the file goes, unfinished) */
            return PFS_EINTR;
        for (size_t g = 0; g < got; g++) {
            const struct pfs_ts_row *r = &rows[g];

            fprintf(fp, "%.0f,%s,%.3f,%.3f,", r->t_s, o->res[k].policy, r->facility_w, r->gpu_w);
            if (isnan(r->budget_w))
                fputc(',', fp);
            else
                fprintf(fp, "%.3f,", r->budget_w);
            fprintf(fp, "%.6g,%d,%d\n", r->throughput, r->running_jobs, r->paused_jobs);
        }
    }
    return err;
}

static int
write_ts(const void *obj, FILE *fp, struct pfs_diag *d)
{
    const struct outputs *o = obj;
    int rc;

    fputs("t_s,policy,facility_w,gpu_w,budget_w,throughput,running_jobs,paused_jobs\n", fp);
    if ((rc = write_rows(o, ts_rows, ts_count, fp)))
        return rows_failed(d, rc, "the time series' temporary files");
    if (fflush(fp) != 0 || ferror(fp))
        return pfs__diag_set(d, PFS_EIO, NULL, 0, 0, NULL, "write error: %s", strerror(errno));
    return 0;
}

/* A warning for each policy whose facility drew above its standing cap (the highest minute
 * over the seeds): under control.over_limit = "report" wherever capping alone cannot hold it
 * (check says when); held, where even that could not (GPUs' idle draw above it, a start or a
 * checkpoint within the minute). The cap was exceeded, not met. */
static void
over_cap_warning(const struct pfs_run_result *all, size_t n_seeds, size_t n_pol, bool report)
{
    for (size_t k = 0; k < n_pol; k++) {
        double cap = NAN, peak = 0;

        for (size_t i = 0; i < n_seeds; i++) {
            const struct pfs_run_result *r = &all[i * n_pol + k];

            if (r->cap_w > 0 && r->peak_facility_w > peak) {
                cap = r->cap_w;
                peak = r->peak_facility_w;
            }
        }
        if (cap > 0 && peak > cap * (1 + 1e-9))
            fprintf(stderr,
                    "pfisim run: warning: %s: the facility drew up to %.5g MW in its highest "
                    "minute, %.2f%% over its cap of %.4g MW: the cap was not held (%s; "
                    "cap_minutes_over counts the minutes)\n",
                    all[k].policy, peak / 1e6, 100 * (peak / cap - 1), cap / 1e6,
                    report ? "control.over_limit = \"report\""
                           : "held, it was still exceeded: docs/scenarios.md, \"Limits that "
                             "hold\", says where holding stops");
    }
}

/* --seeds A..B or A,B,C (pfs_cli_parse_list, stepping by one). */
static bool
parse_seeds(const char *s, unsigned long *seeds, size_t *n)
{
    long v[PFS_MAX_SEEDS];

    *n = pfs_cli_parse_list(s, v, PFS_MAX_SEEDS, 1);
    for (size_t i = 0; i < *n; i++)
        seeds[i] = (unsigned long)v[i];
    return *n > 0;
}

/* Mean, 95% interval half-width (Student's t over the seeds), min and max of n values. */
struct spread {
    double mean, ci95, min, max;
    size_t n;
};

static struct spread
spread_of(const double *v, size_t n)
{
    struct spread s = {0, NAN, HUGE_VAL, -HUGE_VAL, 0};
    double ss = 0;

    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        s.mean += v[i];
        s.min = fmin(s.min, v[i]);
        s.max = fmax(s.max, v[i]);
        s.n++;
    }
    if (s.n == 0)
        return (struct spread){NAN, NAN, NAN, NAN, 0};
    s.mean /= (double)s.n;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            ss += (v[i] - s.mean) * (v[i] - s.mean);
    if (s.n > 1)
        s.ci95 = gsl_cdf_tdist_Pinv(0.975, (double)(s.n - 1)) * sqrt(ss / (double)(s.n - 1)) /
                 sqrt((double)s.n);
    return s;
}

/* The multi-seed report: per policy and metric the spread over seeds; each policy's tokens
 * against equal's seed by seed (paired), marked when the difference is within its spread;
 * and the gap recovered of the means where the oracle's lead over equal exceeds its own
 * spread. res is n_seeds x n_pol. */
static void
seeds_report(const struct pfs_run_result *res, size_t n_seeds, size_t n_pol, bool csv)
{
    static const char *const metrics[] = {"tokens",
                                          "mean_tps",
                                          "energy_j",
                                          "tokens_per_j",
                                          "dr_minutes_over",
                                          "deadline_misses",
                                          "tier_violations",
                                          "dr_cost_frac",
                                          "job_loss_mean",
                                          "job_loss_p95",
                                          NULL};
    double *v = malloc((n_seeds + 1) * sizeof *v);
    long eq = -1, orc = -1;
    int width = 6;

    if (!v)
        return;
    for (size_t k = 0; k < n_pol; k++) {
        if (strcmp(res[k].policy, "equal") == 0)
            eq = (long)k;
        if (strcmp(res[k].policy, "oracle") == 0)
            orc = (long)k;
        if ((int)strlen(res[k].policy) > width)
            width = (int)strlen(res[k].policy);
    }
    if (csv)
        puts("policy,metric,n_seeds,mean,ci95,min,max");
    else
        printf("%-*s %-22s %6s %13s %13s %13s %13s\n", width, "policy", "metric", "seeds", "mean",
               "ci95", "min", "max");
    for (size_t k = 0; k < n_pol; k++) {
        for (size_t m = 0; metrics[m] || (eq >= 0 && metrics[m - 1]); m++) {
            const char *name = metrics[m] ? metrics[m] : "tokens_vs_equal";
            const struct column *c = column_named(name);
            struct spread sp;

            for (size_t i = 0; i < n_seeds; i++) {
                const struct pfs_run_result *r = &res[i * n_pol + k];

                v[i] = metrics[m] ? col_value(r, c) : r->tokens - res[i * n_pol + eq].tokens;
            }
            sp = spread_of(v, n_seeds);
            if (csv) {
                printf("%s,%s,%zu,", res[k].policy, name, sp.n);
                printf(isnan(sp.mean) ? "," : "%.6g,", sp.mean);
                printf(isnan(sp.ci95) ? "," : "%.6g,", sp.ci95);
                printf(isnan(sp.min) ? "," : "%.6g,", sp.min);
                printf(isnan(sp.max) ? "\n" : "%.6g\n", sp.max);
            } else {
                printf("%-*s %-22s %6zu %13.5g %13.5g %13.5g %13.5g%s\n", width, res[k].policy,
                       name, sp.n, sp.mean, sp.ci95, sp.min, sp.max,
                       !metrics[m] && (long)k != eq && !(fabs(sp.mean) > sp.ci95)
                           ? "  (within the seed spread)"
                           : "");
            }
            if (!metrics[m])
                break;
        }
    }
    /* The gap of the means, where the oracle's lead over equal stands out of the spread. */
    if (eq >= 0 && orc >= 0) {
        struct spread d;

        for (size_t i = 0; i < n_seeds; i++)
            v[i] = res[i * n_pol + orc].tokens - res[i * n_pol + eq].tokens;
        d = spread_of(v, n_seeds);
        for (size_t k = 0; k < n_pol; k++) {
            struct spread p;
            double mean_eq = 0;

            for (size_t i = 0; i < n_seeds; i++) {
                v[i] = res[i * n_pol + k].tokens - res[i * n_pol + eq].tokens;
                mean_eq += res[i * n_pol + eq].tokens / (double)n_seeds;
            }
            p = spread_of(v, n_seeds);
            if (d.mean > d.ci95 && d.mean > PFS_GAP_MIN_FRAC * mean_eq) {
                if (csv)
                    printf("%s,gap_recovered,%zu,%.6g,,,\n", res[k].policy, n_seeds,
                           p.mean / d.mean);
                else
                    printf("%-*s %-22s %6zu %13.5g\n", width, res[k].policy, "gap_recovered",
                           n_seeds, p.mean / d.mean);
            } else if (csv) {
                printf("%s,gap_recovered,%zu,,,,\n", res[k].policy, n_seeds);
            } else if (k == 0) {
                printf("gap_recovered: not defined: oracle - equal is %.5g tokens, 95%% interval "
                       "+-%.5g over %zu seeds (it must exceed both that and %.1f%% of equal)\n",
                       d.mean, d.ci95, n_seeds, 100 * PFS_GAP_MIN_FRAC);
            }
        }
    }
    free(v);
}

/* The --uncertainty report: the profiles' ranges, then per policy each metric's median and
 * range over the draws, and how often each ranking by tokens holds. res is n_draws x n_pol. */
static void
draws_of_runs(const struct pfs_run_result *res, size_t n_draws, size_t n_pol,
              const char *const *policies, const struct pfs_gpu *unc, size_t n_unc,
              unsigned long seed, bool csv)
{
    static const char *const names[] = {"tokens",          "tokens_per_j",    "energy_j",
                                        "dr_minutes_over", "deadline_misses", "tier_violations",
                                        "gap_recovered",   "dr_cost_frac"};
    struct pfs_cli_draw_metric m[sizeof names / sizeof names[0]];
    size_t n_m = sizeof names / sizeof names[0];
    double *v = malloc((n_m * n_draws * n_pol + 1) * sizeof *v);

    if (!v)
        return;
    for (size_t i = 0; i < n_m; i++) {
        const struct column *c = column_named(names[i]);

        for (size_t e = 0; e < n_draws * n_pol; e++)
            v[i * n_draws * n_pol + e] = c ? col_value(&res[e], c) : (double)NAN;
        m[i] = (struct pfs_cli_draw_metric){names[i], v + i * n_draws * n_pol};
    }
    if (!csv)
        pfs_cli_draws_header(unc, n_unc, n_draws, seed);
    pfs_cli_draws_report(policies, n_pol, n_draws, m, n_m, 0, csv);
    free(v);
}

/* Progress on a terminal (never on a pipe): simulated days done of all the runs, events a
 * second and the time left, redrawn at most twice a second. */
struct progress {
    pthread_mutex_t mu;
    struct timespec t0, last;
    double sim_s, total_s;
    size_t events;
    bool shown;
};

static double
seconds_between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + 1e-9 * (double)(b->tv_nsec - a->tv_nsec);
}

static void
show_progress(void *arg, double sim_s, size_t events)
{
    struct progress *p = arg;
    struct timespec now;

    pthread_mutex_lock(&p->mu);
    p->sim_s += sim_s;
    p->events += events;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (seconds_between(&p->last, &now) >= 0.5) {
        double el = seconds_between(&p->t0, &now), frac = fmin(p->sim_s / p->total_s, 0.99);

        fprintf(stderr,
                "\rpfisim run: %.1f of %.0f simulated days (%.0f%%), %.3g events/s, about %.0f s "
                "left   ",
                p->sim_s / 86400, p->total_s / 86400, 100 * frac,
                el > 0 ? (double)p->events / el : 0, frac > 0 ? el * (1 - frac) / frac : 0);
        p->last = now;
        p->shown = true;
    }
    pthread_mutex_unlock(&p->mu);
}

int
pfs_cli_run(int argc, char **argv)
{
    static const struct option opts[] = {{"policy", required_argument, 0, 'p'},
                                         {"seed", required_argument, 0, 's'},
                                         {"days", required_argument, 0, 'd'},
                                         {"timeseries-csv", required_argument, 0, 't'},
                                         {"csv", no_argument, 0, 'c'},
                                         {"jobs-csv", required_argument, 0, 'j'},
                                         {"db", optional_argument, 0, 'D'},
                                         {"resume", no_argument, 0, 'R'},
                                         {"seeds", required_argument, 0, 'S'},
                                         {"threads", required_argument, 0, 'T'},
                                         {"json", no_argument, 0, 'J'},
                                         {"help", no_argument, 0, 'h'},
                                         {"uncertainty", required_argument, 0, 'U'},
                                         {"uncertainty-seed", required_argument, 0, 'V'},
                                         PFS_CLI_PLUGIN_OPTIONS,
                                         {0, 0, 0, 0}};
    struct pfs_cli_plugins plugins = {0};
    struct pfs_gpu unc[PFS_MAX_POOLS];
    size_t n_draws = 0, n_unc = 0;
    unsigned long useed = 1;
    bool useed_given = false; /* (--uncertainty-seed alone was ignored) */
    struct pfs_scenario *sc = malloc(sizeof *sc);
    const char *policies[PFS_MAX_POLICIES], *ts_path = NULL, *jobs_path = NULL, *db_path = NULL;
    const char *twice;
    unsigned long *seeds = calloc(PFS_MAX_SEEDS, sizeof *seeds);
    struct pfs_store *store = NULL;
    struct pfs_run_result *all = NULL; /* n_seeds x n_pol */
    bool resume = false, csv = false, json = false;
    size_t n_pol = 0, n_seeds = 0, n_stored = 0;
    struct outputs o = {0};
    struct progress prog = {.mu = PTHREAD_MUTEX_INITIALIZER};
    struct pfs_sim_inputs *in = NULL;
    struct pfs_diag d = {0};
    double days = NAN;
    long seed = -1, threads = sysconf(_SC_NPROCESSORS_ONLN);
    int c, rc = 0, code = EXIT_OK;

    if (!sc || !seeds) {
        free(sc);
        free(seeds);
        return pfs_cli_report(&d, pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory"));
    }
    /* --db takes its file as the next word too (--db FILE as --db=FILE), unless that word is
     * an option or a scenario (.cfg): --db alone means results/pfisim.db. */
    argv = pfs_cli_join_optional(argc, argv, "--db", ".cfg", &argc);
    if (!argv) {
        free(sc);
        free(seeds);
        return pfs_cli_report(&d, pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory"));
    }
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            /* one name, or a comma list: --policy equal,pfi (checked once the policies of
             * --policy-lib and --policy-exec are there) */
            for (char *name = optarg, *comma; name; name = comma ? comma + 1 : NULL) {
                if ((comma = strchr(name, ',')) != NULL)
                    *comma = '\0';
                if (n_pol == PFS_MAX_POLICIES) {
                    code = pfs_cli_usage("run", "at most %d policies, got '%s' as well",
                                         PFS_MAX_POLICIES, name);
                    goto usage_out;
                }
                policies[n_pol++] = name;
            }
            break;
        case 's':
            if (!pfs__parse_long(optarg, &seed) || seed < 0) {
                code =
                    pfs_cli_usage("run", "--seed takes a non-negative integer, got '%s'", optarg);
                goto usage_out;
            }
            break;
        case 'S':
            if (!parse_seeds(optarg, seeds, &n_seeds)) {
                code = pfs_cli_usage("run",
                                     "--seeds takes A..B or A,B,C (at most 256 distinct "
                                     "non-negative seeds), got '%s'",
                                     optarg);
                goto usage_out;
            }
            break;
        case 'T':
            if (!pfs__parse_long(optarg, &threads) || threads < 1 || threads > 64) {
                code =
                    pfs_cli_usage("run", "--threads takes an integer in [1, 64], got '%s'", optarg);
                goto usage_out;
            }
            break;
        case 'd':
            /* At least a minute, as scenario.duration_days (issue 17: 1e-300 ran, and printed
             * a run of nothing). */
            if (!pfs__parse_double(optarg, &days) || !(days >= 1.0 / 1440 && days <= 3660)) {
                code = pfs_cli_usage(
                    "run", "--days takes a number of days from 1/1440 (a minute) to 3660, got '%s'",
                    optarg);
                goto usage_out;
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
        case 'J':
            json = true;
            break;
        case 'U': {
            unsigned long n;

            if (!pfs_cli_parse_count(optarg, &n) || n < 1 || n > PFS_MAX_SEEDS) {
                code = pfs_cli_usage("run", "--uncertainty takes 1 to %d draws, got '%s'",
                                     PFS_MAX_SEEDS, optarg);
                goto usage_out;
            }
            n_draws = n;
            break;
        }
        case 'V':
            if (!pfs_cli_parse_count(optarg, &useed)) {
                code = pfs_cli_usage("run",
                                     "--uncertainty-seed takes a non-negative integer, "
                                     "got '%s'",
                                     optarg);
                goto usage_out;
            }
            useed_given = true;
            break;
        case 'h':
            free(sc);
            free(seeds);
            return fputs(pfs_cli_run_help, stdout), EXIT_OK;
        default:
            if ((code = pfs_cli_plugins_option(&plugins, "run", c, optarg)) == 1) {
                code = EXIT_OK;
                break;
            }
            code = code == 2 ? EXIT_USAGE : pfs_cli_usage("run", "%s", "bad option");
            goto usage_out;
        }
    }
    if ((code = pfs_cli_plugins_load(&plugins)) != EXIT_OK)
        goto usage_out;
    for (size_t k = 0; k < n_pol; k++)
        if (!pfs_sim_policy_find(policies[k], NULL)) {
            code = pfs_cli_usage("run", "unknown policy '%.64s'%s (pfisim --list-policies)",
                                 policies[k], pfs_cli_suggest_policy(policies[k]));
            goto usage_out;
        }
    if ((twice = pfs__policy_repeated(policies, n_pol)) != NULL) {
        code = pfs_cli_usage("run", "policy '%s' named twice", twice);
        goto usage_out;
    }
    if (argc - optind > 1 || (resume && !db_path) || (seed >= 0 && n_seeds > 0) || (csv && json) ||
        (useed_given && n_draws == 0)) {
        code = pfs_cli_usage("run", "%s",
                             argc - optind > 1          ? "expected at most one scenario file"
                             : seed >= 0 && n_seeds > 0 ? "give --seed or --seeds, not both"
                             : csv && json              ? "give --csv or --json, not both"
                             : useed_given              ? "--uncertainty-seed needs --uncertainty N"
                                                        : "--resume needs --db");
        goto usage_out;
    }
    rc = pfs_scenario_load_days(optind < argc ? argv[optind] : NULL, days, sc, &d);
    if (rc) {
        free(sc);
        free(seeds);
        return pfs_cli_report(&d, rc);
    }
    /* No output onto another or onto an input: --timeseries-csv onto --db's file replaced
     * the database with the CSV, and onto --jobs-csv's lost the time series. */
    {
        const char *out[3] = {ts_path, jobs_path, db_path};
        const char *input[2] = {optind < argc ? argv[optind] : NULL, sc->workload};
        static const char *const opt[3] = {"--timeseries-csv", "--jobs-csv", "--db"};

        for (size_t a = 0; a < 3 && code == EXIT_OK; a++) {
            for (size_t b = a + 1; b < 3 && code == EXIT_OK; b++)
                if (out[a] && out[b] && pfs_cli_same_file(out[a], out[b]))
                    code = pfs_cli_usage("run", "%s and %s name one file, '%s'", opt[a], opt[b],
                                         out[a]);
            if (code == EXIT_OK)
                code = pfs_cli_not_over("run", opt[a], out[a], input, sc->workload[0] ? 2 : 1);
        }
        if (code != EXIT_OK) {
            free(sc);
            free(seeds);
            return code;
        }
    }
    if (isnan(days) && sc->n_dr_after > 0) { /* (with --days, asked for) */
        char said[200];

        pfs_cli_left_out(said, sizeof said, sc->n_dr_after, false, sc->days);
        fprintf(stderr, "pfisim run: warning: %s\n", said);
    }
    if (sc->workload_unread[0])
        fprintf(stderr, "pfisim run: warning: %s\n", sc->workload_unread);
    if (seed >= 0)
        sc->seed = (unsigned long)seed;
    if (n_seeds == 0 && seed < 0 && sc->n_seeds > 0) {
        n_seeds = sc->n_seeds;
        memcpy(seeds, sc->seeds, n_seeds * sizeof *seeds);
    }
    if (n_seeds == 0)
        seeds[n_seeds++] = sc->seed;
    /* --uncertainty N: the runs of one seed, once per draw of the uncertain profiles (in
     * the loop over seeds, each draw the same seed). */
    if (n_draws > 0) {
        const char *why = n_seeds > 1            ? "one seed (not --seeds)"
                          : ts_path || jobs_path ? "no --timeseries-csv or --jobs-csv"
                                                 : NULL;

        if (!why && (n_unc = pfs_scenario_uncertain_gpus(sc, unc)) == 0)
            why = "a GPU profile with ranges in the facility (pfisim gpus: the extrapolated ones)";
        if (why) {
            free(sc);
            free(seeds);
            return pfs_cli_usage("run", "--uncertainty takes %s", why);
        }
        for (size_t i = 1; i < n_draws; i++)
            seeds[i] = seeds[0];
        n_seeds = n_draws;
    }
    if (n_seeds > 1 && (ts_path || jobs_path)) {
        free(sc);
        free(seeds);
        return pfs_cli_usage("run", "%s",
                             "--timeseries-csv and --jobs-csv take one seed; with several, "
                             "--db keeps every run");
    }
    /* Without --policy: the scenario's, then those the options added (your policy beside
     * equal, pfi and the oracle). */
    if (n_pol == 0) {
        for (size_t k = 0; k < sc->n_policies; k++)
            policies[n_pol++] = sc->policies[k];
        for (size_t k = 0; k < plugins.n_added; k++) {
            bool listed = false;

            for (size_t q = 0; q < n_pol; q++)
                listed |= strcmp(policies[q], plugins.added[k]) == 0;
            if (listed)
                continue;
            if (n_pol == PFS_MAX_POLICIES) { /* (none left out unsaid) */
                free(sc);
                free(seeds);
                return pfs_cli_usage("run",
                                     "the scenario's policies and those the options add come "
                                     "to more than %d: name the ones to run with --policy",
                                     PFS_MAX_POLICIES);
            }
            policies[n_pol++] = plugins.added[k];
        }
    }
    o.n = n_pol;
    all = calloc(n_seeds * n_pol, sizeof *all);
    o.ts = calloc(n_pol, sizeof *o.ts);
    if (!all || !o.ts)
        rc = pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    /* The database first: a wrong one must fail before hours of simulation. A new one is
     * there whole at the end or not at all (pfs_store_create), but under --resume, whose
     * point is to keep the runs stored before an interruption. */
    if (rc == 0 && db_path)
        rc = resume ? pfs_store_open(db_path, &store, &d) : pfs_store_create(db_path, &store, &d);
    if (rc == 0 && (db_path || ts_path)) {
        /* A size warning before a run that writes a very large time series (a row per
         * simulated minute and policy, about 80 bytes each in the database). */
        double rows = sc->days * 1440 * (double)(n_pol * n_seeds);

        if (rows > 5e6)
            fprintf(stderr,
                    "pfisim run: warning: this writes %.3g per-minute rows (about %.2g GB%s%s)\n",
                    rows, rows * 80 / 1e9, db_path ? " into " : "", db_path ? db_path : "");
    }
    if (rc == 0 && isatty(2)) {
        /* every policy and seed, and again without events where there are some (a guess:
         * runs whose policies nothing asks share theirs) */
        prog.total_s = sc->days * 86400 * (double)(n_pol * n_seeds) * (sc->n_dr > 0 ? 2 : 1);
        clock_gettime(CLOCK_MONOTONIC, &prog.t0);
        prog.last = prog.t0;
        prog.last.tv_sec -= 1; /* the first simulated hour shows at once */
        pfs_sim_set_progress(show_progress, &prog);
    }
    for (size_t i = 0; rc == 0 && i < n_seeds; i++) {
        if (pfs_interrupted()) { /* (between seeds: the runs stored so far are kept below) */
            rc = pfs__diag_set(&d, PFS_EINTR, NULL, 0, 0, NULL, "interrupted");
            break;
        }
        sc->seed = seeds[i];
        o.res = &all[i * n_pol];
        pfs_sim_inputs_free(in);
        in = NULL;
        if (n_draws > 0) { /* the scenario's uncertainty group, draw i */
            sc->unc_draws = n_draws;
            sc->unc_draw = i;
            sc->unc_seed = useed;
            rc = pfs_scenario_apply_draw(sc, &d);
        }
        if (rc || (rc = pfs_sim_inputs_new(sc, &in, &d)))
            break;
        if (i == 0 && isnan(days) && pfs_sim_inputs_n_after(in) > 0) { /* (--days: asked for) */
            char said[200];

            pfs_cli_left_out(said, sizeof said, pfs_sim_inputs_n_after(in), true, sc->days);
            fprintf(stderr, "pfisim run: warning: %s\n", said);
        }
        if (!o.jobs && (jobs_path || db_path)) {
            o.jobs = calloc(n_pol, sizeof *o.jobs);
            if (!o.jobs)
                rc = pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        }
        o.in = in;
        o.end_s = sc->days * 86400;
        o.threads = (size_t)threads;
        {
            /* Which runs the database already holds; the others simulated (in parallel),
             * then written in policy order: the same bytes whatever the threads. */
            struct run_pool rp = {.sc = sc,
                                  .in = in,
                                  .policies = policies,
                                  .o = &o,
                                  .want_ts = ts_path || db_path,
                                  .n = n_pol};

            for (size_t k = 0; rc == 0 && k < n_pol; k++) {
                bool done = false;

                o.skipped[k] = false; /* this seed's: set anew for each */

                if (resume && (rc = pfs_store_has_run(store, sc, policies[k], &done, &d)) == 0 &&
                    done) {
                    fprintf(stderr, "pfisim run: %s, seed %lu: already in %s, skipped (--resume)\n",
                            policies[k], seeds[i], db_path);
                    pfs__strlcpy(o.res[k].policy, policies[k], sizeof o.res[k].policy);
                    o.res[k].tokens = NAN;
                    o.skipped[k] = true;
                }
                /* Each run's minutes into a temporary file as they come (in memory where
                 * none can be made). */
                if (rp.want_ts && !o.skipped[k])
                    (void)pfs_timeseries_spill(&o.ts[k]);
                else
                    pfs_timeseries_free(&o.ts[k]);
                /* and its jobs' results as they finish (ditto) */
                if (o.jobs && !o.skipped[k])
                    (void)pfs_job_results_spill(&o.jobs[k]);
                else if (o.jobs)
                    pfs_job_results_free(&o.jobs[k]);
            }
            if (rc == 0)
                rc = run_policies(&rp, (size_t)threads, &d);
            for (size_t k = 0; rc == 0 && k < n_pol; k++) {
                if (o.skipped[k])
                    continue;
                if (store && (rc = pfs_store_write_run(store, sc, in, &o.res[k], &o.ts[k],
                                                       o.jobs ? &o.jobs[k] : NULL, &d)) == 0)
                    n_stored++;
                if (isatty(2) && rc == 0)
                    fprintf(stderr, "\rpfisim run: %s, seed %lu done (%zu of %zu)%*s\n",
                            policies[k], seeds[i], i * n_pol + k + 1, n_seeds * n_pol, 40, "");
            }
        }
        if (rc == 0) {
            pfs_gap_recovered(o.res, n_pol);
            if (store)
                rc = pfs_store_update_gaps(store, sc, &d);
        }
    }
    if (rc == 0) {
        rc = pfs_store_finish(store, &d);
    } else if (rc == PFS_EINTR && n_stored > 0) {
        /* Stopped by a signal: a new database keeps the runs it finished, as a sweep's does
         * (each was stored in its own transaction, its gaps with its seed's), so that
         * --resume goes on from them. */
        struct pfs_diag d2 = {0};

        if (pfs_store_finish(store, &d2) == 0)
            fprintf(stderr, "pfisim run: %zu finished run%s kept in %s (--resume goes on)\n",
                    n_stored, n_stored == 1 ? "" : "s", db_path);
        else
            pfs_cli_report(&d2, PFS_EIO);
    }
    pfs_sim_set_progress(NULL, NULL);
    if (prog.shown)
        fprintf(stderr, "\r%*s\r", 100, ""); /* the progress line goes */
    if (rc == 0 && (isatty(2) || json))
        fprintf(stderr, "pfisim run: peak memory %.0f MiB\n", peak_rss_mb());
    if (rc == 0)
        over_cap_warning(all, n_seeds, n_pol, sc->over_limit_report);
    if (rc == 0 && n_seeds == 1) {
        if (ts_path)
            rc = pfs_cli_write_output(ts_path, write_ts, &o, &d);
        if (rc == 0 && jobs_path)
            rc = pfs_cli_write_output(jobs_path, write_jobs, &o, &d);
    }
    /* A CSV to standard output ("-") is the data asked for there: the summary, which
     * followed it as a second table no CSV reader takes, goes to standard error. */
    if (rc == 0 &&
        ((ts_path && strcmp(ts_path, "-") == 0) || (jobs_path && strcmp(jobs_path, "-") == 0))) {
        fflush(stdout);
        if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
            rc =
                pfs__diag_set(&d, PFS_EIO, NULL, 0, 0, NULL, "standard error: %s", strerror(errno));
    }
    if (rc == 0) {
        int width = 6; /* the policy column: as wide as the longest name */
        const struct pfs_run_result *r0 = &all[0];

        for (size_t k = 0; k < n_pol; k++)
            if ((int)strlen(policies[k]) > width)
                width = (int)strlen(policies[k]);
        struct draws dr = {n_draws, unc, n_unc, useed};

        if (json) {
            json_report(sc, all, n_seeds, n_pol, seeds, &dr);
        } else if (n_draws > 0) {
            draws_of_runs(all, n_draws, n_pol, policies, unc, n_unc, useed, csv);
        } else if (!csv) {
            printf("scenario %s: %d GPUs (", sc->name, sc->gpus);
            for (size_t p = 0; p < r0->n_pools; p++)
                printf("%s%s", p ? ", " : "", r0->pool[p].gpu);
            printf("), %.3g days, %zu jobs, %zu DR events, %zu events simulated, ", sc->days,
                   r0->jobs_submitted, r0->dr_events, r0->events);
            if (n_seeds == 1)
                printf("seed %lu\n", seeds[0]);
            else
                printf("%zu seeds (%lu..%lu)\n", n_seeds, seeds[0], seeds[n_seeds - 1]);
        }
        if (json || n_draws > 0) {
            /* the document, or the draws' report, is all */
        } else if (n_seeds > 1) {
            seeds_report(all, n_seeds, n_pol, csv);
        } else if (csv) {
            fputs("policy", stdout);
            for (size_t i = 0; i < N_COLS(outcome_cols); i++)
                printf(",%s", outcome_cols[i].name);
            fputs(",gap_note", stdout);
            for (size_t i = 0; i < N_COLS(planner_cols); i++)
                printf(",%s", planner_cols[i].name);
            putchar('\n');
            for (size_t k = 0; k < n_pol; k++) {
                const struct pfs_run_result *r = &all[k];

                if (isnan(r->tokens))
                    continue;
                printf("%s,", r->policy);
                csv_cells(r, outcome_cols, N_COLS(outcome_cols));
                printf(",%s,", r->gap_note);
                csv_cells(r, planner_cols, N_COLS(planner_cols));
                putchar('\n');
            }
        } else {
            table(all, n_pol, outcome_cols, N_COLS(outcome_cols), width);
            if (isnan(all[0].gap_recovered) && all[0].gap_note[0])
                printf("gap_recovered: not defined: %s\n", all[0].gap_note);
            printf("\nthe planner's summary (docs/results.md):\n");
            table(all, n_pol, planner_cols, N_COLS(planner_cols), width);
            for (size_t k = 0; k < n_pol; k++)
                if (!isnan(all[k].tokens) && all[k].dr_events_uncappable > 0)
                    printf("%s: %zu of %zu DR events could not be met by capping alone: every "
                           "running job at its minimum cap drew up to %.5g W above the target "
                           "(only pausing could meet it)\n",
                           all[k].policy, all[k].dr_events_uncappable, all[k].dr_events,
                           all[k].dr_floor_excess_w);
            if (r0->n_tree > 0)
                tree_table(all, n_pol, width);
            if (r0->n_pools > 1) {
                printf("\nper pool:\n%-*s %-12s %-10s %12s %12s %12s %12s %13s\n", width, "policy",
                       "pool", "gpu", "tokens", "energy_j", "busy_gpu_h", "jobs_started",
                       "jobs_finished");
                for (size_t k = 0; k < n_pol; k++)
                    for (size_t p = 0; p < all[k].n_pools && !isnan(all[k].tokens); p++) {
                        const struct pfs_pool_result *pr = &all[k].pool[p];

                        printf("%-*s %-12s %-10s %12.5g %12.5g %12.5g %12zu %13zu\n", width,
                               all[k].policy, pr->name, pr->gpu, pr->tokens, pr->energy_j,
                               pr->busy_gpu_h, pr->jobs_started, pr->jobs_finished);
                    }
            }
        }
        if (ts_path && !csv && !json)
            printf("time series: %s\n", ts_path);
    } else {
        code = pfs_cli_report(&d, rc);
    }
    for (size_t k = 0; k < n_pol && o.ts; k++)
        pfs_timeseries_free(&o.ts[k]);
    for (size_t k = 0; k < n_pol && o.jobs; k++)
        pfs_job_results_free(&o.jobs[k]);
    free(o.jobs);
    free(o.ts);
    for (size_t i = 0; all && i < n_seeds * n_pol; i++)
        pfs_run_result_free(&all[i]);
    free(all);
    free(seeds);
    pfs_sim_inputs_free(in);
    pfs_store_close(store);
    free(sc);
    return code;
usage_out:
    free(sc);
    free(seeds);
    return code;
}
