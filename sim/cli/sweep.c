/*
 * sim/cli/sweep.c - pfisim sweep (a grid of scenarios into one results database) and pfisim
 * merge (shard databases into one). docs/sweeps.md.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

const char pfs_cli_sweep_help[] =
    "usage: pfisim sweep SWEEP.cfg [-j N] [--shard K/N] [--resume] [--db FILE] [--csv]\n"
    "\n"
    "Runs every point of a sweep (docs/sweeps.md: a base scenario and axes overriding its\n"
    "settings, the first axis varying slowest) with every policy, into one results database.\n"
    "Runs are keyed by their scenario's hash, policy and seed.\n"
    "\n"
    "  -j, --jobs N     N threads, each simulating a point at a time and taking its turn\n"
    "                   at writing (default: the processors online). The database is\n"
    "                   written in sweep order, so its contents do not depend on N\n"
    "  --shard K/N      run only the points i with i mod N = K (0 <= K < N), e.g. one task\n"
    "                   of a Slurm job array (configs/slurm/sweep.sbatch); pfisim merge\n"
    "                   combines the shards' databases\n"
    "  --resume         skip runs the database already holds\n"
    "  --db FILE        the results database (default results/sweep.db)\n"
    "  --list           print this shard's points (index, axis values) and exit\n"
    "  --allow-plugins  load the libraries the base scenario's policy_libs names (their\n"
    "                   code runs); without it such a sweep is refused\n"
    "  --csv            then print every run of this shard (from the database, skipped ones\n"
    "                   too): point,<axis>...,policy,seed,tokens,mean_tps,energy_j,\n"
    "                   tokens_per_j,dr_minutes_over,dr_worst_excess_w,deadline_misses,\n"
    "                   tier_violations,gap_recovered (the summary line goes to stderr)\n";

const char pfs_cli_merge_help[] =
    "usage: pfisim merge OUT.db SHARD.db...\n"
    "\n"
    "Copies every scenario and run of the shard databases into OUT.db, one transaction per\n"
    "shard; a run OUT.db already holds (same scenario hash, policy, seed) is replaced. An\n"
    "OUT.db that does not exist appears at the end with every shard, or not at all. Every\n"
    "database must be a pfisim results database of this schema version.\n";

struct progress {
    struct timespec t0;
    bool shown;
};

static double
since(const struct timespec *t0)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static void
show_progress(void *arg, size_t done, size_t total)
{
    struct progress *p = arg;
    double el = since(&p->t0);

    if (done == 0) {
        fprintf(stderr, "\rpfisim sweep: 0/%zu runs", total);
    } else {
        double eta = el / (double)done * (double)(total - done);

        fprintf(stderr, "\rpfisim sweep: %zu/%zu runs, %.0f s, ETA %.0f s   ", done, total, el,
                eta);
    }
    p->shown = true;
}

static int
parse_shard(const char *spec, int *k, int *n, struct pfs_diag *d)
{
    char *end;
    long a = strtol(spec, &end, 10), b = -1;

    if (end > spec && *end == '/') {
        const char *s = end + 1;

        b = strtol(s, &end, 10);
        if (end == s || *end)
            b = -1;
    }
    if (a < 0 || b < 1 || a >= b || b > 1000000)
        return pfs__diag_set(d, PFS_EINVAL, NULL, 0, 0, "--shard",
                             "--shard takes K/N with 0 <= K < N (shards 0/N to N-1/N), got '%s'",
                             spec);
    *k = (int)a;
    *n = (int)b;
    return 0;
}

/* Every run of the shard's points, as stored, one CSV row each. */
static int
print_runs(const struct pfs_sweep *sw, struct pfs_store *st, const struct pfs_sweep_options *o,
           struct pfs_diag *d)
{
    struct pfs_scenario *sc = malloc(sizeof *sc);
    int rc = 0;

    if (!sc)
        return pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    printf("point");
    for (size_t a = 0; a < pfs_sweep_n_axes(sw); a++)
        printf(",%s", pfs_sweep_axis(sw, a));
    puts(",policy,seed,tokens,mean_tps,energy_j,tokens_per_j,dr_minutes_over,"
         "dr_worst_excess_w,deadline_misses,tier_violations,gap_recovered");
    for (size_t i = (size_t)o->shard_k; i < pfs_sweep_n_items(sw) && rc == 0;
         i += (size_t)o->shard_n) {
        if ((rc = pfs_sweep_scenario(sw, i, sc, d)))
            break;
        for (size_t k = 0; k < pfs_sweep_n_policies(sw) && rc == 0; k++) {
            struct pfs_run_result r;
            bool found;
            char v[96];

            if ((rc = pfs_store_get_summary(st, sc, pfs_sweep_policy(sw, k), &r, &found, d)) ||
                !found)
                continue;
            printf("%zu", i);
            for (size_t a = 0; a < pfs_sweep_n_axes(sw); a++) {
                pfs_sweep_axis_value(sw, i, a, v, sizeof v);
                printf(",%s", v);
            }
            printf(",%s,%lu,%.6e,%.6g,%.6e,%.6g,%.1f,%.1f,%zu,%zu,", r.policy, sc->seed, r.tokens,
                   r.mean_tps, r.energy_j, r.tokens_per_j, r.dr_minutes_over, r.dr_worst_excess_w,
                   r.deadline_misses, r.tier_violations);
            if (isnan(r.gap_recovered))
                puts("");
            else
                printf("%.4f\n", r.gap_recovered);
        }
    }
    free(sc);
    return rc;
}

int
pfs_cli_sweep(int argc, char **argv)
{
    static const struct option opts[] = {{"jobs", required_argument, 0, 'j'},
                                         {"shard", required_argument, 0, 's'},
                                         {"resume", no_argument, 0, 'R'},
                                         {"db", required_argument, 0, 'D'},
                                         {"list", no_argument, 0, 'l'},
                                         {"csv", no_argument, 0, 'c'},
                                         {"help", no_argument, 0, 'h'},
                                         PFS_CLI_ALLOW_OPTION,
                                         {0, 0, 0, 0}};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN); /* (the default -j) */
    struct pfs_sweep_options o = {.jobs = 1, .shard_k = 0, .shard_n = 1};
    const char *db_path = "results/sweep.db";
    struct pfs_sweep_stats stats;
    struct pfs_sweep *sw = NULL;
    struct pfs_store *st = NULL;
    struct progress prog = {0};
    struct pfs_diag d = {0};
    bool list = false, csv = false;
    long jobs;
    int c, rc;

    if (cpus > 1)
        o.jobs = cpus > 1024 ? 1024 : (int)cpus;
    while ((c = getopt_long(argc, argv, "hj:", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            if (!pfs__parse_long(optarg, &jobs) || jobs < 1 || jobs > 1024)
                return pfs_cli_usage("sweep", "-j takes a number of jobs in [1, 1024], got '%s'",
                                     optarg);
            o.jobs = (int)jobs;
            break;
        case 's':
            if ((rc = parse_shard(optarg, &o.shard_k, &o.shard_n, &d)))
                return pfs_cli_report(&d, rc);
            break;
        case 'R':
            o.resume = true;
            break;
        case 'D':
            db_path = optarg;
            break;
        case 'l':
            list = true;
            break;
        case 'c':
            csv = true;
            break;
        case 0x1004:
            pfs_policy_allow_scenario_libs(true);
            break;
        case 'h':
            return fputs(pfs_cli_sweep_help, stdout), EXIT_OK;
        default:
            return pfs_cli_usage("sweep", "%s", "bad option");
        }
    }
    if (argc - optind != 1)
        return pfs_cli_usage("sweep", "%s", "expected one sweep file");
    if (list && (csv || o.resume)) /* (--list runs nothing: each was ignored) */
        return pfs_cli_usage("sweep", "--list runs nothing: not with %s",
                             csv ? "--csv" : "--resume");
    if ((rc = pfs_sweep_load(argv[optind], &sw, &d)))
        return pfs_cli_report(&d, rc);
    if (list) {
        struct pfs_scenario *sc = malloc(sizeof *sc);

        for (size_t i = 0; sc && i < pfs_sweep_n_items(sw) && rc == 0; i++) {
            char what[512];

            if ((i % (size_t)o.shard_n) != (size_t)o.shard_k ||
                (rc = pfs_sweep_scenario(sw, i, sc, &d)) != 0)
                continue;
            pfs_sweep_describe(sw, i, what, sizeof what);
            printf("%zu %s (%d GPUs, %zu DR events, seed %lu, %.4g days)\n", i,
                   what[0] ? what : "(the base)", sc->gpus, sc->n_dr, sc->seed, sc->days);
        }
        free(sc);
        pfs_sweep_free(sw);
        return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
    }
    if ((rc = pfs_store_open(db_path, &st, &d)) == 0) {
        clock_gettime(CLOCK_MONOTONIC, &prog.t0);
        if (isatty(2)) {
            o.progress = show_progress;
            o.arg = &prog;
        }
        rc = pfs_sweep_run(sw, st, &o, &stats, &d);
        if (prog.shown)
            fputc('\n', stderr);
    }
    if (rc == 0)
        fprintf(csv ? stderr : stdout,
                "sweep %s: %zu points x %zu policies; shard %d/%d: %zu points, %zu runs done, "
                "%zu skipped (--resume), %.1f s; database %s\n",
                pfs_sweep_name(sw), pfs_sweep_n_items(sw), pfs_sweep_n_policies(sw), o.shard_k,
                o.shard_n, stats.items, stats.runs_done, stats.runs_skipped, since(&prog.t0),
                db_path);
    if (rc == 0 && csv)
        rc = print_runs(sw, st, &o, &d);
    pfs_store_close(st);
    pfs_sweep_free(sw);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}

int
pfs_cli_merge(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    struct pfs_store *st = NULL;
    struct pfs_diag d = {0};
    int c, rc;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h')
            return fputs(pfs_cli_merge_help, stdout), EXIT_OK;
        return pfs_cli_usage("merge", "%s", "bad option");
    }
    if (argc - optind < 2)
        return pfs_cli_usage("merge", "%s", "expected OUT.db and at least one shard database");
    /* Every shard is checked before OUT is touched: a wrong one fails the whole merge, and
     * OUT itself named as a shard would lose its runs (copying a run replaces it). */
    for (int i = optind + 1; i < argc; i++) {
        struct stat a, b;

        if (stat(argv[optind], &a) == 0 && stat(argv[i], &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino) {
            rc = pfs__diag_set(&d, PFS_EINVAL, argv[i], 0, 0, NULL,
                               "is the output database too; merge shards into another file");
            return pfs_cli_report(&d, rc);
        }
        if ((rc = pfs_store_open_read(argv[i], &st, &d)))
            return pfs_cli_report(&d, rc);
        pfs_store_close(st);
        st = NULL;
    }
    if ((rc = pfs_store_create(argv[optind], &st, &d)))
        return pfs_cli_report(&d, rc);
    for (int i = optind + 1; i < argc && rc == 0; i++)
        rc = pfs_store_merge(st, argv[i], &d);
    if (rc == 0)
        rc = pfs_store_finish(st, &d);
    pfs_store_close(st);
    if (rc)
        return pfs_cli_report(&d, rc);
    printf("merged %d database%s into %s\n", argc - optind - 1, argc - optind - 1 > 1 ? "s" : "",
           argv[optind]);
    return EXIT_OK;
}

const char pfs_cli_grid_help[] =
    "usage: pfisim grid FILE (--threshold X | --top-hours N) [--column NAME] [--cut F]\n"
    "                   [--ramp-min M] [--notice-min M] [--step MIN:CUT]...\n"
    "                   [--baseline instant|average] [--baseline-window-min M]\n"
    "\n"
    "Turns a utility's hourly demand (columns date YYYY-MM-DD, hour 1-24 ending, and the\n"
    "demand column, default \"SRP Actual\" as in emerald-phoenix/SRP_0503.csv) into DR\n"
    "events: each run of consecutive hours above the threshold is one event, from its first\n"
    "hour's start to its last hour's end, t = 0 at the first date's 00:00. Prints them as a\n"
    "scenario's dr_events list (scenario.dr_grid does the same inside a scenario).\n"
    "\n"
    "  --threshold X    demand above X (the column's unit) is an event\n"
    "  --top-hours N    the N highest hours are (the Nth's demand is the threshold)\n"
    "  --cut F          each event's cut from the pre-event baseline (default 0.3 or 30%)\n"
    "  --ramp-min M     ramp down and up over M minutes (default 15)\n"
    "  --notice-min M   announced M minutes ahead (default: known from the start)\n"
    "  --step MIN:CUT   a further level from MIN minutes after the start (repeatable, in\n"
    "                   order): a stepped event, --cut its first level; a step after an\n"
    "                   event's end is left out of that event\n"
    "  --baseline RULE  the events' baseline: instant (default) or average, over\n"
    "  --baseline-window-min M minutes before the start (default 60)\n";

int
pfs_cli_grid(int argc, char **argv)
{
    static const struct option opts[] = {{"threshold", required_argument, 0, 't'},
                                         {"top-hours", required_argument, 0, 'n'},
                                         {"column", required_argument, 0, 'c'},
                                         {"cut", required_argument, 0, 'x'},
                                         {"ramp-min", required_argument, 0, 'r'},
                                         {"notice-min", required_argument, 0, 'N'},
                                         {"step", required_argument, 0, 's'},
                                         {"baseline", required_argument, 0, 'b'},
                                         {"baseline-window-min", required_argument, 0, 'w'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    struct pfs_grid_options o = {
        .column = "SRP Actual", .cut = 0.3, .ramp_s = 900, .notice_s = INFINITY};
    struct pfs_dr_event ev[1024];
    struct pfs_dr_step steps[PFS_MAX_DR_STEPS];
    struct pfs_diag d = {0};
    double v, th = 0, window = 60;
    size_t n = 0, n_steps = 1;
    bool average = false, window_given = false;
    long top;
    int c, rc;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (!pfs__parse_double(optarg, &o.threshold) || !(o.threshold > 0))
                return pfs_cli_usage("grid", "--threshold takes a positive number, got '%s'",
                                     optarg);
            break;
        case 'n':
            if (!pfs__parse_long(optarg, &top) || top < 1 || top > 1000000)
                return pfs_cli_usage("grid", "--top-hours takes a positive integer, got '%s'",
                                     optarg);
            o.top_hours = (int)top;
            break;
        case 'c':
            o.column = optarg;
            break;
        case 'x':
            if (!pfs_cli_parse_frac(optarg, &o.cut) || !(o.cut > 0 && o.cut <= 1))
                return pfs_cli_usage("grid", "--cut takes a fraction in (0, 1], got '%s'", optarg);
            break;
        case 'r':
        case 'N':
            if (!pfs__parse_double(optarg, &v) || !(v >= 0 && v <= 1e6))
                return pfs_cli_usage("grid", "--%s takes minutes >= 0, got '%s'",
                                     c == 'r' ? "ramp-min" : "notice-min", optarg);
            *(c == 'r' ? &o.ramp_s : &o.notice_s) = 60 * v;
            break;
        case 's': {
            char *colon = strchr(optarg, ':'), min[32];
            double at;

            if (!colon || (size_t)(colon - optarg) >= sizeof min || n_steps == PFS_MAX_DR_STEPS)
                return pfs_cli_usage("grid", "--step takes MIN:CUT (at most %d levels), got '%s'",
                                     PFS_MAX_DR_STEPS, optarg);
            memcpy(min, optarg, (size_t)(colon - optarg));
            min[colon - optarg] = '\0';
            if (!pfs__parse_double(min, &at) || !(at > steps[n_steps - 1].at_s / 60) ||
                !pfs_cli_parse_frac(colon + 1, &v) || !(v > 0 && v <= 1))
                return pfs_cli_usage("grid",
                                     "--step takes MIN:CUT, MIN after the level before, CUT in "
                                     "(0, 1], got '%s'",
                                     optarg);
            steps[n_steps++] = (struct pfs_dr_step){.at_s = 60 * at, .cut_frac = v};
            break;
        }
        case 'b':
            if (strcmp(optarg, "instant") != 0 && strcmp(optarg, "average") != 0)
                return pfs_cli_usage("grid", "--baseline takes instant or average, got '%s'",
                                     optarg);
            average = strcmp(optarg, "average") == 0;
            break;
        case 'w':
            if (!pfs__parse_double(optarg, &window) || !(window >= 1 && window <= 1e5))
                return pfs_cli_usage("grid",
                                     "--baseline-window-min takes minutes in [1, 1e5], "
                                     "got '%s'",
                                     optarg);
            window_given = true;
            break;
        case 'h':
            return fputs(pfs_cli_grid_help, stdout), EXIT_OK;
        default:
            return pfs_cli_usage("grid", "%s", "bad option");
        }
    }
    steps[0] = (struct pfs_dr_step){.at_s = 0, .cut_frac = o.cut};
    if (argc - optind != 1)
        return pfs_cli_usage("grid", "%s", "expected one demand file");
    if ((o.threshold > 0) == (o.top_hours > 0))
        return pfs_cli_usage("grid", "%s", "give one of --threshold and --top-hours");
    if (window_given && !average) /* (the instant baseline has no window: it was ignored) */
        return pfs_cli_usage("grid", "%s", "--baseline-window-min goes with --baseline average");
    if ((rc = pfs_grid_events(argv[optind], &o, ev, sizeof ev / sizeof ev[0], &n, &th, &d)))
        return pfs_cli_report(&d, rc);
    if (o.top_hours > 0)
        printf("# %zu event%s from %s: the %d highest hours of %s (%.6g and above)\n", n,
               n == 1 ? "" : "s", argv[optind], o.top_hours, o.column, th);
    else
        printf("# %zu event%s from %s: %s above %.6g\n", n, n == 1 ? "" : "s", argv[optind],
               o.column, th);
    printf("dr_events = (");
    for (size_t k = 0; k < n; k++) {
        printf("%s\n    { start_h = %.6g; end_h = %.6g; ramp_min = %.6g; ", k ? "," : "",
               ev[k].start_s / 3600, ev[k].end_s / 3600, ev[k].ramp_s / 60);
        if (isfinite(ev[k].notice_s))
            printf("notice_min = %.6g; ", ev[k].notice_s / 60);
        if (average)
            printf("baseline = \"average\"; baseline_window_min = %.6g; ", window);
        if (n_steps == 1) {
            printf("cut = %.6g; }", ev[k].cut_frac);
            continue;
        }
        printf("\n      steps = (");
        for (size_t i = 0; i < n_steps; i++)
            if (ev[k].start_s + steps[i].at_s < ev[k].end_s)
                printf("%s{ at_min = %.6g; cut = %.6g; }", i ? ", " : " ", steps[i].at_s / 60,
                       steps[i].cut_frac);
        printf(" ); }");
    }
    printf("\n);\n");
    return EXIT_OK;
}

const char pfs_cli_price_help[] =
    "usage: pfisim price DB [--csv | --json]\n"
    "\n"
    "Prices an interruptible-power training tier from a results database (docs/pricing.md):\n"
    "for every run with per-job results, per tier the throughput delivered as a fraction of\n"
    "uncapped, tier-floor violations, deadline misses, GPU-hours, and the discount that gives\n"
    "a Flex customer the firm tier's tokens per dollar; then the operator's revenue per\n"
    "MW-year with the tier (discounted GPU-hours plus DR capacity and energy payments, from\n"
    "the scenario's pricing settings) and without it (all firm, no DR enrolment).\n"
    "\n"
    "  --csv   one row per run and tier: scenario,hash,policy,seed,tier,jobs,delivered,\n"
    "          floor_violations,deadline_misses,gpu_hours,discount,rev_with,rev_without,\n"
    "          breakeven_discount (revenues in USD per MW-year; the run's columns repeat on\n"
    "          each of its tiers' rows)\n"
    "  --json  the same as one JSON document: a run each with its revenues and its tiers\n";

/* A number for JSON: null for NAN and infinities. */
static void
json_num(const char *name, double v, bool comma)
{
    printf("%s\"%s\": ", comma ? ", " : "", name);
    pfs_cli_json_number(v);
}

/* pfisim price --json: every priced run, its tiers and its revenue, as one document. */
static void
print_price_json(const struct pfs_price_run *runs, size_t n)
{
    printf("{\"runs\": [");
    for (size_t i = 0; i < n; i++) {
        const struct pfs_price_run *r = &runs[i];
        bool first = true;

        printf("%s\n  {\"scenario\": ", i ? "," : "");
        pfs_cli_json_string(r->scenario); /* a scenario's name is the user's: escaped */
        printf(", \"hash\": \"%s\", \"policy\": \"%s\", \"seed\": %lld", r->hash, r->policy,
               r->seed);
        json_num("days", r->days, true);
        json_num("capacity_w", r->capacity_w, true);
        printf(", \"dr_events\": %zu", r->n_events);
        json_num("committed_kw", r->committed_kw, true);
        json_num("compliance", r->compliance, true);
        json_num("rev_compute", r->rev_compute, true);
        json_num("rev_dr_capacity", r->rev_dr_capacity, true);
        json_num("rev_dr_energy", r->rev_dr_energy, true);
        json_num("rev_with", r->rev_with, true);
        json_num("rev_without", r->rev_without, true);
        json_num("breakeven_discount", r->breakeven_discount, true);
        printf(", \"tiers\": [");
        for (int t = 0; t < PFS_N_TIERS; t++) {
            const struct pfs_price_tier *p = &r->tier[t];

            if (p->jobs == 0)
                continue;
            printf("%s{\"tier\": \"%s\", \"jobs\": %zu", first ? "" : ", ", pfs_tier_name(t),
                   p->jobs);
            json_num("delivered", p->delivered, true);
            printf(", \"floor_violations\": %zu, \"deadline_misses\": %zu", p->floor_violations,
                   p->deadline_misses);
            json_num("gpu_hours", p->gpu_hours, true);
            json_num("discount", p->discount, true);
            putchar('}');
            first = false;
        }
        printf("]}");
    }
    printf("\n]}\n");
}

int
pfs_cli_price(int argc, char **argv)
{
    static const struct option opts[] = {{"csv", no_argument, 0, 'c'},
                                         {"json", no_argument, 0, 'J'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    struct pfs_price_run *runs = NULL;
    struct pfs_diag d = {0};
    bool csv = false, json = false;
    size_t n = 0;
    int c, rc;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'c')
            csv = true;
        else if (c == 'J')
            json = true;
        else if (c == 'h')
            return fputs(pfs_cli_price_help, stdout), EXIT_OK;
        else
            return pfs_cli_usage("price", "%s", "bad option");
    }
    if (argc - optind != 1 || (csv && json))
        return pfs_cli_usage("price", "%s",
                             csv && json ? "give --csv or --json, not both"
                                         : "expected one results database");
    if ((rc = pfs_price_db(argv[optind], &runs, &n, &d)))
        return pfs_cli_report(&d, rc);
    if (json) {
        print_price_json(runs, n);
        free(runs);
        return EXIT_OK;
    }
    if (csv)
        puts("scenario,hash,policy,seed,tier,jobs,delivered,floor_violations,deadline_misses,"
             "gpu_hours,discount,rev_with,rev_without,breakeven_discount");
    for (size_t i = 0; i < n; i++) {
        const struct pfs_price_run *r = &runs[i];

        if (!csv) {
            char comp[40] = "no event to comply with";

            if (!isnan(r->compliance))
                snprintf(comp, sizeof comp, "compliance %.3f", r->compliance);
            printf("%s%s (scenario %.8s), policy %s, seed %lld: %.4g days, %.3f MW, %zu DR "
                   "events (%.1f h, %.0f kW each), %s\n"
                   "  %-6s %7s %9s %8s %7s %11s %8s\n",
                   i ? "\n" : "", r->scenario, r->hash, r->policy, r->seed, r->days,
                   r->capacity_w / 1e6, r->n_events, r->event_hours, r->committed_kw, comp, "tier",
                   "jobs", "delivered", "floor_x", "missed", "GPU_hours", "discount");
        }
        for (int t = 0; t < PFS_N_TIERS; t++) {
            const struct pfs_price_tier *p = &r->tier[t];

            if (p->jobs == 0)
                continue;
            if (csv) {
                pfs__csv_put_text(stdout, r->scenario); /* (a name may hold a comma) */
                printf(",%s,%s,%lld,%s,%zu,", r->hash, r->policy, r->seed, pfs_tier_name(t),
                       p->jobs);
                if (isnan(p->delivered))
                    printf(",");
                else
                    printf("%.6f,", p->delivered);
                printf("%zu,%zu,%.3f,", p->floor_violations, p->deadline_misses, p->gpu_hours);
                if (isnan(p->discount))
                    printf(",");
                else
                    printf("%.6f,", p->discount);
                printf("%.2f,%.2f,", r->rev_with, r->rev_without);
                if (isnan(r->breakeven_discount))
                    printf("\n");
                else
                    printf("%.6f\n", r->breakeven_discount);
            } else {
                printf("  %-6s %7zu %9.4f %8zu %7zu %11.1f %7.1f%%\n", pfs_tier_name(t), p->jobs,
                       p->delivered, p->floor_violations, p->deadline_misses, p->gpu_hours,
                       100 * p->discount);
            }
        }
        if (csv)
            continue;
        printf("  revenue per MW-year: with the tier $%.0f (compute $%.0f, DR capacity $%.0f, "
               "DR energy $%.0f); without $%.0f; difference %+.3f%%\n",
               r->rev_with, r->rev_compute, r->rev_dr_capacity, r->rev_dr_energy, r->rev_without,
               100 * (r->rev_with / r->rev_without - 1));
        if (isnan(r->breakeven_discount))
            printf("  no Flex job: no discount to price\n");
        else
            printf("  the operator breaks even at a discount of %.2f%% on every Flex GPU-hour\n",
                   100 * r->breakeven_discount);
    }
    free(runs);
    return EXIT_OK;
}
