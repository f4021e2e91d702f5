/*
 * sim/cli/capacity.c - pfisim capacity SCENARIO.cfg --gpus LIST: how many GPUs fit behind
 * this facility's cap, with and without DR, per policy (issue 18, docs/results.md).
 *
 * Built on sweeps: the scenario is the base, the axes are the GPU count, the DR frequency
 * (0 and N events a year, drawn by the scenario's dr_generator, when --dr-per-year N is
 * given), the seed and the policy; the runs go into a results database (--db, else a
 * temporary one). Then per DR frequency, size and policy: tokens a day (mean over seeds and
 * their range), the share of event minutes over target (worst seed), the share of jobs below
 * their tier's floor (worst seed), the peak over the cap, why a size fails, and the verdict.
 * A size "meets DR" when under every seed the facility's mean power was over its target in at
 * most 1% of event minutes (an event's minutes from its start to its end plus its ramp back
 * up), the oversubscription study's criterion; it "holds the cap" when no minute's mean went
 * above the standing cap (the engine holds it by admission and pausing unless the scenario
 * says control.over_limit = "report"; a race of one actuation delay can still go over, and
 * counts); it "keeps the floors" when at most --max-floors (1%) of the jobs started broke
 * their tier's floor under every seed. The answer per policy is the size with the most tokens
 * a day among those that do all three, and the largest size that does. --csv and --json give
 * the rows (and the answers). --plot FILE draws tokens a day against GPUs, one line per policy
 * and DR frequency (dashed: with DR), means over the seeds; the table gives their range.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define MAX_SIZES 64

const char pfs_cli_capacity_help[] =
    "usage: pfisim capacity SCENARIO.cfg --gpus LIST [--dr-per-year N] [--seeds LIST]\n"
    "                       [--policy NAME[,NAME...]] [--days D] [--db FILE] [-j N]\n"
    "                       [--max-floors PCT] [--csv | --json] [--plot FILE.png|svg|pdf]\n"
    "\n"
    "How many GPUs fit behind the scenario's cap: it runs the scenario at each GPU count\n"
    "(a sweep), with and without DR, and prints per size and policy the tokens a day,\n"
    "the share of DR event minutes over target, the share of jobs below their tier's floor,\n"
    "the peak over the cap and why a size fails; and per policy the size with the most\n"
    "tokens a day among those that hold the cap (no minute over it), meet every DR target\n"
    "(at most 1% of event minutes over) and keep the floors (at most --max-floors of the\n"
    "jobs started below their tier's floor), under every seed, and the largest that does\n"
    "(docs/results.md). The scenario's control.over_limit rule applies: held by default.\n"
    "\n"
    "  --gpus LIST        GPU counts: A..B:STEP or A,B,C (at most 64, distinct)\n"
    "  --dr-per-year N    also with N events a year from the scenario's dr_generator (and\n"
    "                     0); without it, the scenario's own events only\n"
    "  --seeds LIST       workload seeds, A..B or A,B,C, distinct (default: the scenario's seed)\n"
    "  --policy LIST      policies (default: the scenario's)\n"
    "  --days D           as pfisim run --days\n"
    "  --db FILE          keep the runs (and --resume them later with pfisim sweep)\n"
    "  -j, --jobs N       simulations at once (default: the CPUs online)\n"
    "  --max-floors PCT   the most jobs (% of those started) below their tier's floor a size\n"
    "                     may have (default 1)\n"
    "  --csv              one row per DR frequency, size and policy, shares as fractions\n"
    "  --json             those rows and each policy's answer\n"
    "  --plot FILE        the figure: tokens a day against GPUs\n"
    "  --allow-plugins    load the libraries the scenario's policy_libs names (their code\n"
    "                     runs); without it such a scenario is refused\n";

/* Progress on a terminal: runs done of all. */
static void
show_progress(void *arg, size_t done, size_t total)
{
    (void)arg;
    fprintf(stderr, "\rpfisim capacity: %zu of %zu runs   ", done, total);
    if (done == total)
        fprintf(stderr, "\r%*s\r", 40, "");
}

/* v as a libconfig float (with a point: a bare 40 would be an integer). */
static const char *
cfg_float(double v, char buf[40])
{
    snprintf(buf, 40, "%.17g", v);
    if (!strpbrk(buf, ".e"))
        strncat(buf, ".0", 39 - strlen(buf));
    return buf;
}

/* One cell: a (DR frequency, size, policy) over the seeds. */
struct cell {
    double tokens_day_sum, tokens_day_min, tokens_day_max;
    double worst_over;   /* the largest share of event minutes over target, over the seeds */
    double worst_peak;   /* the highest peak over the standing cap, as a share of it (0: held) */
    double cap_minutes;  /* the most minutes over the standing cap, over the seeds */
    double floors_frac;  /* tier floors broken / jobs started, summed over seeds */
    double worst_floors; /* the largest share of jobs below their tier's floor, over the seeds */
    double held_back;    /* jobs admission by power held back, summed over seeds */
    size_t n;            /* seeds found */
    size_t events;       /* DR events in the run (the first seed's) */
};

/* Event minutes of a scenario's DR events inside the run (start to end plus ramp up). */
static double
event_minutes(const struct pfs_scenario *sc)
{
    double m = 0;

    for (size_t k = 0; k < sc->n_dr; k++)
        if (sc->dr[k].start_s < sc->days * 86400)
            m += (fmin(pfs_dr_over_s(&sc->dr[k]), sc->days * 86400) - sc->dr[k].start_s) / 60;
    return m;
}

static bool
meets_dr(const struct cell *c)
{
    return c->n > 0 && (c->events == 0 || c->worst_over <= 0.01);
}

/* Whether the facility stayed under its standing cap under every seed: a feed it draws above
 * is not met, whatever DR did (the breaker trips; issue 56): no minute over it, no peak above
 * it. The engine holds a cap by holding jobs back and pausing them (control.over_limit =
 * "hold"); under "report", or where the GPUs' idle draw alone is above it, it is exceeded. */
static bool
meets_cap(const struct cell *c)
{
    return c->n > 0 && !(c->worst_peak > 1e-9) && !(c->cap_minutes > 0);
}

/* Whether, under every seed, at most max_floors of the jobs started broke their tier's floor
 * (--max-floors, 1% by default): a size whose power is so short that its jobs run below the
 * slowdown their tier promises is not one a planner can sell. */
static bool
meets_floors(const struct cell *c, double max_floors)
{
    return c->n > 0 && c->worst_floors <= max_floors;
}

static bool
meets(const struct cell *c, double max_floors)
{
    return meets_dr(c) && meets_cap(c) && meets_floors(c, max_floors);
}

/* Why a size fails, "cap", "DR", "floors" joined by '+', or "-" where it meets all. */
static const char *
fails(const struct cell *c, double max_floors, char buf[32])
{
    snprintf(buf, 32, "%s%s%s%s%s", !meets_cap(c) ? "cap" : "",
             !meets_cap(c) && !meets_dr(c) ? "+" : "", !meets_dr(c) ? "DR" : "",
             (!meets_cap(c) || !meets_dr(c)) && !meets_floors(c, max_floors) ? "+" : "",
             !meets_floors(c, max_floors) ? "floors" : "");
    return buf[0] ? buf : "-";
}

/* A sweep file's opening, named name, on the scenario at cfg (its quotes and backslashes
 * escaped), up to its axes' list. */
static void
sweep_head(FILE *fp, const char *name, const char *cfg)
{
    fprintf(fp, "sweep = {\n    name = \"%s\";\n    scenario = \"", name);
    for (const char *p = cfg; *p; p++)
        fprintf(fp, *p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
    fprintf(fp, "\";\n    jobs = false;\n    axes = (\n");
}

/* The scenario at cfg with dr_generator.per_year set to per_year (and its duration to days
 * unless NAN) into *sc: read as a sweep's point is, from a one-point sweep written in dir. */
static int
drawn_events(const char *dir, const char *cfg, double per_year, double days,
             struct pfs_scenario *sc, struct pfs_diag *d)
{
    char path[600], num[2][40];
    struct pfs_sweep *sw = NULL;
    FILE *fp;
    int rc;

    snprintf(path, sizeof path, "%s/drawn.cfg", dir);
    if (!(fp = fopen(path, "w")))
        return pfs__diag_set(d, PFS_EIO, path, 0, 0, NULL, "cannot write");
    sweep_head(fp, "drawn", cfg);
    fprintf(fp, "        { setting = \"dr_generator.per_year\"; values = [%s]; }",
            cfg_float(per_year, num[0]));
    if (!isnan(days))
        fprintf(fp, ",\n        { setting = \"duration_days\"; values = [%s]; }",
                cfg_float(days, num[1]));
    fprintf(fp, "\n    );\n};\n");
    if (fclose(fp) != 0)
        return pfs__diag_set(d, PFS_EIO, path, 0, 0, NULL, "cannot write");
    if ((rc = pfs_sweep_load(path, &sw, d)) == 0)
        rc = pfs_sweep_scenario(sw, 0, sc, d);
    pfs_sweep_free(sw);
    return rc;
}

/* Policy k's answer over one DR frequency's cells (sizes x policies): the size with the
 * most tokens a day among those that meet every criterion, and the largest such (-1: none). */
static void
answer(const struct cell *cells, size_t n_pol, size_t k, const long *sizes, size_t n_sizes,
       double max_floors, long *best, double *best_tpd, long *largest)
{
    for (size_t s = 0; s < n_sizes; s++) {
        const struct cell *cl = &cells[s * n_pol + k];

        if (!meets(cl, max_floors))
            continue;
        if (sizes[s] > *largest)
            *largest = sizes[s];
        if (cl->tokens_day_sum / (double)cl->n > *best_tpd) {
            *best_tpd = cl->tokens_day_sum / (double)cl->n;
            *best = sizes[s];
        }
    }
}

/* --csv (format 'c'): one row per DR frequency, size and policy; --json ('j'): those rows and
 * each policy's answer per DR frequency. Shares are fractions, not percentages; the DR
 * frequency is empty (null) for the scenario's own events. */
static void
print_machine(int format, const struct cell *cells, size_t n_freq, double per_year,
              const long *sizes, size_t n_sizes, const struct pfs_sweep *sw, double max_floors)
{
    size_t n_pol = pfs_sweep_n_policies(sw);
    bool first = true;

    if (format == 'c')
        printf("dr_per_year,gpus,policy,seeds,tokens_day,tokens_day_min,tokens_day_max,events,"
               "dr_minutes_over_share,floors_share,over_cap_share,cap_minutes_over,"
               "jobs_held_back,meets,fails\n");
    else
        printf("{\n  \"max_floors\": %.17g,\n  \"sizes\": [", max_floors); /* (finite: an option) */
    for (size_t f = 0; f < n_freq; f++)
        for (size_t s = 0; s < n_sizes; s++)
            for (size_t k = 0; k < n_pol; k++) {
                const struct cell *cl = &cells[(f * n_sizes + s) * n_pol + k];
                char why[32], fq[40];
                double n;

                if (!cl->n)
                    continue;
                n = (double)cl->n;
                if (format == 'c') { /* (the DR frequency empty for the scenario's own events) */
                    snprintf(fq, sizeof fq, "%.17g", f ? per_year : 0.0);
                    if (n_freq == 1)
                        fq[0] = 0;
                    printf("%s,%ld,%s,%zu,%.6e,%.6e,%.6e,%zu,%.6g,%.6g,%.6g,%.6g,%.6g,%s,%s\n", fq,
                           sizes[s], pfs_sweep_policy(sw, k), cl->n, cl->tokens_day_sum / n,
                           cl->tokens_day_min, cl->tokens_day_max, cl->events, cl->worst_over,
                           cl->worst_floors, fmax(cl->worst_peak, 0), cl->cap_minutes,
                           cl->held_back / n, meets(cl, max_floors) ? "yes" : "no",
                           fails(cl, max_floors, why));
                } else {
                    const struct {
                        const char *name;
                        double v;
                    } col[] = {{"dr_per_year", n_freq == 1 ? (double)NAN
                                               : f         ? per_year
                                                           : 0},
                               {"gpus", (double)sizes[s]},
                               {"seeds", n},
                               {"tokens_day", cl->tokens_day_sum / n},
                               {"tokens_day_min", cl->tokens_day_min},
                               {"tokens_day_max", cl->tokens_day_max},
                               {"events", (double)cl->events},
                               {"dr_minutes_over_share", cl->worst_over},
                               {"floors_share", cl->worst_floors},
                               {"over_cap_share", fmax(cl->worst_peak, 0)},
                               {"cap_minutes_over", cl->cap_minutes},
                               {"jobs_held_back", cl->held_back / n}};

                    printf("%s\n    {\"policy\": ", first ? "" : ",");
                    pfs_cli_json_string(pfs_sweep_policy(sw, k));
                    for (size_t q = 0; q < sizeof col / sizeof col[0]; q++) {
                        printf(", \"%s\": ", col[q].name);
                        pfs_cli_json_number(col[q].v);
                    }
                    printf(", \"meets\": %s, \"fails\": \"%s\"}",
                           meets(cl, max_floors) ? "true" : "false", fails(cl, max_floors, why));
                }
                first = false;
            }
    if (format == 'c')
        return;
    printf("\n  ],\n  \"answers\": [");
    first = true;
    for (size_t f = 0; f < n_freq; f++)
        for (size_t k = 0; k < n_pol; k++) {
            long best = -1, largest = -1;
            double best_tpd = -HUGE_VAL;

            answer(cells + f * n_sizes * n_pol, n_pol, k, sizes, n_sizes, max_floors, &best,
                   &best_tpd, &largest);
            printf("%s\n    {\"policy\": ", first ? "" : ",");
            pfs_cli_json_string(pfs_sweep_policy(sw, k));
            printf(", \"dr_per_year\": ");
            pfs_cli_json_number(n_freq == 1 ? (double)NAN : f ? per_year : 0);
            printf(", \"most_tokens_gpus\": ");
            pfs_cli_json_number(best < 0 ? (double)NAN : (double)best);
            printf(", \"most_tokens_day\": ");
            pfs_cli_json_number(best < 0 ? (double)NAN : best_tpd);
            printf(", \"largest_gpus\": ");
            pfs_cli_json_number(best < 0 ? (double)NAN : (double)largest);
            putchar('}');
            first = false;
        }
    printf("\n  ]\n}\n");
}

int
pfs_cli_capacity(int argc, char **argv)
{
    static const struct option opts[] = {{"gpus", required_argument, 0, 'g'},
                                         {"dr-per-year", required_argument, 0, 'r'},
                                         {"seeds", required_argument, 0, 'S'},
                                         {"policy", required_argument, 0, 'p'},
                                         {"days", required_argument, 0, 'd'},
                                         {"db", required_argument, 0, 'D'},
                                         {"plot", required_argument, 0, 'P'},
                                         {"jobs", required_argument, 0, 'j'},
                                         {"max-floors", required_argument, 0, 'F'},
                                         {"csv", no_argument, 0, 'c'},
                                         {"json", no_argument, 0, 'J'},
                                         {"help", no_argument, 0, 'h'},
                                         PFS_CLI_ALLOW_OPTION,
                                         {0, 0, 0, 0}};
    long sizes[MAX_SIZES], seeds[PFS_MAX_SEEDS];
    size_t n_sizes = 0, n_seeds = 0, n_freq = 1, n_pol;
    const char *policy_list = NULL, *db_path = NULL, *plot = NULL;
    double per_year = NAN, days = NAN, max_floors = 0.01;
    int format = 0; /* 'c' --csv, 'j' --json, 0 the table */
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    char tmp_dir[] = "/tmp/pfisim-capacity-XXXXXX", sweep_path[600], tmp_db[600], abs_cfg[4096];
    struct pfs_scenario *sc = malloc(sizeof *sc);
    struct pfs_sweep *sw = NULL;
    struct pfs_store *st = NULL;
    struct pfs_diag d = {0};
    struct cell *cells = NULL;
    bool made_tmp = false, per_year_draws = false;
    int c, rc = 0, code = EXIT_OK;

    if (!sc)
        return pfs_cli_report(&d, pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory"));
    while ((c = getopt_long(argc, argv, "hj:", opts, NULL)) != -1) {
        switch (c) {
        case 'g':
            if (!(n_sizes = pfs_cli_parse_list(optarg, sizes, MAX_SIZES, 0)) || sizes[0] < 1) {
                free(sc);
                return pfs_cli_usage(
                    "capacity", "--gpus takes A..B:STEP or A,B,C (distinct), got '%s'", optarg);
            }
            break;
        case 'r':
            if (!pfs__parse_double(optarg, &per_year) || !(per_year > 0 && per_year <= 1000)) {
                free(sc);
                return pfs_cli_usage("capacity", "--dr-per-year takes (0, 1000], got '%s'", optarg);
            }
            n_freq = 2;
            break;
        case 'S':
            if (!(n_seeds = pfs_cli_parse_list(optarg, seeds, PFS_MAX_SEEDS, 1))) {
                free(sc);
                return pfs_cli_usage("capacity", "--seeds takes A..B or A,B,C (distinct), got '%s'",
                                     optarg);
            }
            break;
        case 'p':
            policy_list = optarg;
            break;
        case 'd':
            if (!pfs__parse_double(optarg, &days) || !(days >= 1.0 / 1440 && days <= 3660)) {
                free(sc);
                return pfs_cli_usage("capacity", "--days takes 1/1440 to 3660, got '%s'", optarg);
            }
            break;
        case 'D':
            db_path = optarg;
            break;
        case 'F':
            if (!pfs__parse_double(optarg, &max_floors) ||
                !(max_floors >= 0 && max_floors <= 100)) {
                free(sc);
                return pfs_cli_usage("capacity",
                                     "--max-floors takes a percentage, 0 to 100, got "
                                     "'%s'",
                                     optarg);
            }
            max_floors /= 100;
            break;
        case 'c':
        case 'J':
            if (format) {
                free(sc);
                return pfs_cli_usage("capacity", "%s", "give --csv or --json, not both");
            }
            format = c == 'c' ? 'c' : 'j';
            break;
        case 0x1004:
            pfs_policy_allow_scenario_libs(true);
            break;
        case 'P':
            if (pfs_cli_plot_format(optarg) < 0) {
                free(sc);
                return pfs_cli_usage("capacity", "--plot takes a .png, .svg or .pdf file, got '%s'",
                                     optarg);
            }
            plot = optarg;
            break;
        case 'j':
            if (!pfs__parse_long(optarg, &jobs) || jobs < 1 || jobs > 256) {
                free(sc);
                return pfs_cli_usage("capacity", "-j takes 1 to 256, got '%s'", optarg);
            }
            break;
        case 'h':
            free(sc);
            return fputs(pfs_cli_capacity_help, stdout), EXIT_OK;
        default:
            free(sc);
            return pfs_cli_usage("capacity", "%s", "bad option");
        }
    }
    if (argc - optind != 1 || n_sizes == 0) {
        free(sc);
        return pfs_cli_usage("capacity", "%s",
                             n_sizes == 0 ? "--gpus LIST is required" : "expected one scenario");
    }
    /* The scenario as given, checked first: its errors name its own file and line. */
    if ((rc = pfs_scenario_load_days(argv[optind], days, sc, &d)) != 0) {
        free(sc);
        return pfs_cli_report(&d, rc);
    }
    {
        const char *inputs[2] = {argv[optind], db_path};

        if ((code = pfs_cli_not_over("capacity", "--plot", plot, inputs, 2)) != EXIT_OK) {
            free(sc);
            return code;
        }
    }
    if (!realpath(argv[optind], abs_cfg)) {
        free(sc);
        return pfs_cli_report(
            &d, pfs__diag_set(&d, PFS_EIO, argv[optind], 0, 0, NULL, "cannot read the scenario"));
    }
    if (!mkdtemp(tmp_dir)) {
        free(sc);
        return pfs_cli_report(
            &d, pfs__diag_set(&d, PFS_EIO, tmp_dir, 0, 0, NULL, "cannot make a temporary folder"));
    }
    made_tmp = true;

    /* The DR frequency asked for draws round(N x (days - warm-up) / 365) events: none in a
     * short run, whose points would be those without DR (the sweep refused them as one
     * scenario twice, naming this command's temporary file). */
    if (!isnan(per_year)) {
        size_t n_none;

        if ((rc = drawn_events(tmp_dir, abs_cfg, 0, days, sc, &d)) != 0)
            goto out;
        n_none = sc->n_dr; /* (the scenario's own, if any) */
        if ((rc = drawn_events(tmp_dir, abs_cfg, per_year, days, sc, &d)) != 0)
            goto out;
        if (sc->n_dr > n_none)
            per_year_draws = true;
    }
    if (!isnan(per_year) && !per_year_draws) {
        rc = pfs__diag_set(&d, PFS_EINVAL, NULL, 0, 0, NULL,
                           "--dr-per-year %g draws no DR event in these %.4g days (the "
                           "scenario's dr_generator: round(N x (days - warm-up) / 365) events): "
                           "its runs would be those without DR; give more --days or more events",
                           per_year, sc->days);
        goto out;
    }
    /* The sweep, written out and read as any sweep is. */
    snprintf(sweep_path, sizeof sweep_path, "%s/capacity.cfg", tmp_dir);
    {
        FILE *fp = fopen(sweep_path, "w");
        char num[2][40];

        if (!fp) {
            rc = pfs__diag_set(&d, PFS_EIO, sweep_path, 0, 0, NULL, "cannot write");
            goto out;
        }
        sweep_head(fp, "capacity", abs_cfg);
        if (!isnan(per_year))
            fprintf(fp, "        { setting = \"dr_generator.per_year\"; values = [0.0, %s]; },\n",
                    cfg_float(per_year, num[0]));
        if (!isnan(days))
            fprintf(fp, "        { setting = \"duration_days\"; values = [%s]; },\n",
                    cfg_float(days, num[1]));
        fprintf(fp, "        { setting = \"facility.gpus\"; values = [");
        for (size_t i = 0; i < n_sizes; i++)
            fprintf(fp, "%s%ld", i ? ", " : "", sizes[i]);
        fprintf(fp, "]; }");
        if (n_seeds) {
            fprintf(fp, ",\n        { setting = \"seed\"; values = [");
            for (size_t i = 0; i < n_seeds; i++)
                fprintf(fp, "%s%ld", i ? ", " : "", seeds[i]);
            fprintf(fp, "]; }");
        }
        if (policy_list) {
            char buf[512], *name, *save = NULL;
            const char *names[PFS_MAX_POLICIES];

            fprintf(fp, ",\n        { setting = \"policy\"; values = [");
            pfs__strlcpy(buf, policy_list, sizeof buf);
            for (size_t i = 0; (name = strtok_r(i ? NULL : buf, ",", &save)) != NULL; i++) {
                if (!pfs_sim_policy_find(name, NULL)) {
                    fclose(fp);
                    code = pfs_cli_usage("capacity", "unknown policy '%.64s'%s", name,
                                         pfs_cli_suggest_policy(name));
                    goto out;
                }
                if (i < PFS_MAX_POLICIES)
                    names[i] = name;
                if (i == PFS_MAX_POLICIES || pfs__policy_repeated(names, i + 1)) {
                    fclose(fp);
                    code = i == PFS_MAX_POLICIES
                               ? pfs_cli_usage("capacity", "at most %d policies", PFS_MAX_POLICIES)
                               : pfs_cli_usage("capacity", "policy '%s' named twice", name);
                    goto out;
                }
                fprintf(fp, "%s\"%s\"", i ? ", " : "", name);
            }
            fprintf(fp, "]; }");
        }
        fprintf(fp, "\n    );\n};\n");
        if (fclose(fp) != 0) {
            rc = pfs__diag_set(&d, PFS_EIO, sweep_path, 0, 0, NULL, "cannot write");
            goto out;
        }
    }
    if ((rc = pfs_sweep_load(sweep_path, &sw, &d)))
        goto out;
    snprintf(tmp_db, sizeof tmp_db, "%s/capacity.db", tmp_dir);
    if ((rc = pfs_store_open(db_path ? db_path : tmp_db, &st, &d)))
        goto out;
    {
        struct pfs_sweep_options o = {.jobs = (int)jobs,
                                      .shard_n = 1,
                                      .resume = db_path != NULL,
                                      .progress = isatty(2) ? show_progress : NULL};
        struct pfs_sweep_stats stats;

        fprintf(stderr,
                "pfisim capacity: %zu runs (%zu sizes, %zu DR frequenc%s, %zu seed%s, %zu "
                "polic%s)\n",
                pfs_sweep_n_items(sw) * pfs_sweep_n_policies(sw), n_sizes, n_freq,
                n_freq == 1 ? "y" : "ies", n_seeds ? n_seeds : 1, n_seeds > 1 ? "s" : "",
                pfs_sweep_n_policies(sw), pfs_sweep_n_policies(sw) == 1 ? "y" : "ies");
        if ((rc = pfs_sweep_run(sw, st, &o, &stats, &d)))
            goto out;
    }

    /* The cells: items run freq (slowest), sizes, seeds; then the policies at each. */
    n_pol = pfs_sweep_n_policies(sw);
    if (!(cells = calloc(n_freq * n_sizes * n_pol, sizeof *cells))) {
        rc = pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < pfs_sweep_n_items(sw) && rc == 0; i++) {
        size_t per_freq = pfs_sweep_n_items(sw) / n_freq, f = i / per_freq;
        size_t s = (i % per_freq) / (n_seeds ? n_seeds : 1);
        double ev_min;

        if ((rc = pfs_sweep_scenario(sw, i, sc, &d)))
            break;
        ev_min = event_minutes(sc);
        for (size_t k = 0; k < n_pol && rc == 0; k++) {
            struct cell *cl = &cells[(f * n_sizes + s) * n_pol + k];
            struct pfs_run_result r;
            bool found;
            double tpd, over;

            if ((rc = pfs_store_get_summary(st, sc, pfs_sweep_policy(sw, k), &r, &found, &d)) ||
                !found)
                continue;
            tpd = r.tokens / sc->days;
            over = ev_min > 0 ? r.dr_minutes_over / ev_min : 0;
            if (cl->n == 0) {
                cl->tokens_day_min = cl->tokens_day_max = tpd;
                cl->events = r.dr_events;
            }
            cl->tokens_day_sum += tpd;
            cl->tokens_day_min = fmin(cl->tokens_day_min, tpd);
            cl->tokens_day_max = fmax(cl->tokens_day_max, tpd);
            cl->worst_over = fmax(cl->worst_over, over);
            if (r.cap_w > 0)
                cl->worst_peak = fmax(cl->worst_peak, r.peak_facility_w / r.cap_w - 1);
            if (r.cap_w > 0 && r.cap_minutes_over > 0)
                cl->cap_minutes = fmax(cl->cap_minutes, r.cap_minutes_over);
            {
                double fl = r.jobs_started ? (double)r.tier_violations / (double)r.jobs_started : 0;

                cl->floors_frac += fl;
                cl->worst_floors = fmax(cl->worst_floors, fl);
            }
            cl->held_back += (double)r.jobs_held_back;
            cl->n++;
        }
    }
    if (rc)
        goto out;

    if (format == 'c' || format == 'j') {
        print_machine(format, cells, n_freq, per_year, sizes, n_sizes, sw, max_floors);
    } else {
        for (size_t f = 0; f < n_freq; f++) {
            if (n_freq == 1)
                printf("the scenario's own DR events\n");
            else if (f == 0)
                printf("no DR events drawn (dr_generator.per_year = 0)\n");
            else
                printf("\n%.4g DR events a year drawn by the scenario's dr_generator\n", per_year);
            /* (under 100 columns: a planner reads it in a terminal) */
            printf("%7s %-12s %10s %20s %6s %8s %7s %8s %-10s\n", "GPUs", "policy", "tokens/day",
                   "(seeds' range)", "events", "min over", "floors", "over cap", "fails");
            for (size_t s = 0; s < n_sizes; s++)
                for (size_t k = 0; k < n_pol; k++) {
                    const struct cell *cl = &cells[(f * n_sizes + s) * n_pol + k];
                    char why[32];

                    if (!cl->n)
                        continue;
                    printf("%7ld %-12s %10.4g %9.4g..%-9.4g %6zu %7.2f%% %6.1f%% %7.2f%% %-10s\n",
                           sizes[s], pfs_sweep_policy(sw, k), cl->tokens_day_sum / (double)cl->n,
                           cl->tokens_day_min, cl->tokens_day_max, cl->events, 100 * cl->worst_over,
                           100 * cl->worst_floors, 100 * fmax(cl->worst_peak, 0),
                           fails(cl, max_floors, why));
                }
            for (size_t k = 0; k < n_pol; k++) {
                long best = -1, largest = -1;
                double best_tpd = -HUGE_VAL;

                answer(cells + f * n_sizes * n_pol, n_pol, k, sizes, n_sizes, max_floors, &best,
                       &best_tpd, &largest);
                if (best < 0)
                    printf("%s: no size holds the cap, every DR target and the floors\n",
                           pfs_sweep_policy(sw, k));
                else
                    printf("%s: the most tokens a day at %ld GPUs (%.4g); the largest meeting "
                           "all three: %ld\n",
                           pfs_sweep_policy(sw, k), best, best_tpd, largest);
            }
        }
        printf("fails: cap: the facility drew above its cap in some minute under some seed; DR: "
               "more\n  than 1%% of DR event minutes over target under some seed; floors: more "
               "than %.3g%% of\n  the jobs started broke their tier's floor under some seed "
               "(--max-floors)\n",
               100 * max_floors);
    }

    if (plot) {
        struct pfs_series *series = calloc(n_freq * n_pol, sizeof *series);
        double *xs = calloc(n_freq * n_pol * n_sizes, sizeof *xs);
        double *ys = calloc(n_freq * n_pol * n_sizes, sizeof *ys);
        char(*labels)[64] = calloc(n_freq * n_pol, sizeof *labels);
        enum pfs_plot_format fmt = (enum pfs_plot_format)pfs_cli_plot_format(plot);

        if (!series || !xs || !ys || !labels) {
            rc = pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        } else {
            for (size_t f = 0; f < n_freq; f++)
                for (size_t k = 0; k < n_pol; k++) {
                    size_t q = f * n_pol + k;

                    for (size_t s = 0; s < n_sizes; s++) {
                        const struct cell *cl = &cells[(f * n_sizes + s) * n_pol + k];

                        xs[q * n_sizes + s] = (double)sizes[s];
                        ys[q * n_sizes + s] =
                            cl->n ? cl->tokens_day_sum / (double)cl->n / 1e9 : (double)NAN;
                    }
                    snprintf(labels[q], sizeof labels[q], "%s%s", pfs_sweep_policy(sw, k),
                             n_freq == 1 ? ""
                             : f         ? ", with DR"
                                         : ", no DR");
                    series[q] = (struct pfs_series){labels[q],
                                                    xs + q * n_sizes,
                                                    ys + q * n_sizes,
                                                    n_sizes,
                                                    f ? PFS_SERIES_FIT : PFS_SERIES_LINE,
                                                    (int)k,
                                                    true,
                                                    NULL,
                                                    NULL};
                }
            {
                struct pfs_chart ch = {.title = "Tokens a day against GPUs installed",
                                       .x_label = "GPUs installed",
                                       .y_label = "tokens a day (billions, mean over seeds)",
                                       .series = series,
                                       .n_series = n_freq * n_pol};

                if ((rc = pfs_chart_write(&ch, plot, fmt, &d)) == 0)
                    printf("figure: %s\n", plot);
            }
        }
        free(series);
        free(xs);
        free(ys);
        free(labels);
    }
out:
    if (rc)
        code = pfs_cli_report(&d, rc);
    free(cells);
    pfs_store_close(st);
    pfs_sweep_free(sw);
    free(sc);
    if (made_tmp) {
        static const char *const names[] = {"capacity.cfg", "capacity.db", "capacity.db-wal",
                                            "capacity.db-shm", "drawn.cfg"};
        char p[700];

        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            snprintf(p, sizeof p, "%s/%s", tmp_dir, names[i]);
            unlink(p);
        }
        rmdir(tmp_dir);
    }
    return code;
}
