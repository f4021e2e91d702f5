/*
 * sim/cli/check.c - pfisim check SCENARIO.cfg: is the scenario valid, and what does it mean
 * in words (issue 18, docs/scenarios.md).
 *
 * It reads the scenario and builds its inputs as a run would (the corpus, the workload from
 * its arrivals), simulates nothing, and says: the GPUs of each pool; the facility's draw
 * idle and at most (every GPU at its highest limit), against the cap; each DR event inside
 * the run and the level it asks for; the jobs the arrivals give and the GPU time they ask
 * against what the facility has. Warnings: a cap the facility can never reach (it binds
 * nothing: the run is as without it), an event whose level is at or below the idle draw, a
 * run large enough to take long or to write a large database. Exit 0 when valid (warnings
 * included), 3 when not, with the reader's file:line message.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char pfs_cli_check_help[] =
    "usage: pfisim check [SCENARIO.cfg] [--days D] [--json] [--allow-plugins]\n"
    "\n"
    "Validates a scenario and says what it means: GPUs per pool, the facility's draw idle\n"
    "and at most against its cap, the DR events inside the run, the jobs the arrivals give.\n"
    "Warns when the cap can never bind, when an event asks for less than the idle draw, and\n"
    "when a run will be very large. Simulates nothing. Without SCENARIO: the default.\n"
    "\n"
    "  --days D   as pfisim run --days\n"
    "  --json     the same as one JSON document\n"
    "  --allow-plugins  load the libraries its policy_libs names (their code runs; without\n"
    "             it such a scenario is refused, unloaded: checking runs no code)\n";

struct warning {
    char text[420];
};

/* Event e's lowest absolute target (facility W), or 0 where a level of it is a cut (a cut is
 * taken from the draw at its start, so it binds whatever the facility draws). */
static double
lowest_target(const struct pfs_dr_event *e)
{
    double lo = HUGE_VAL;

    if (e->n_steps == 0)
        return e->target_w > 0 ? e->target_w : 0;
    for (size_t i = 0; i < e->n_steps; i++) {
        if (!(e->steps[i].target_w > 0))
            return 0;
        lo = fmin(lo, e->steps[i].target_w);
    }
    return lo;
}

/* The most GPUs that can be busy at their lowest limit, every other GPU idle, with the
 * facility under its standing cap: the cheapest busy GPUs first (the least over idle).
 * idle_w: the facility's idle draw (nodes and PUE in it). */
static long
busy_under(const struct pfs_scenario *sc, const struct pfs_pool *pools, size_t n_pools,
           double idle_w)
{
    double room = (pfs_scenario_cap_w(sc) - idle_w) / sc->pue, step[PFS_MAX_POOLS];
    bool used[PFS_MAX_POOLS] = {false};
    long busy = 0;

    for (size_t p = 0; p < n_pools; p++) {
        struct pfs_gpu g;

        step[p] =
            pfs_scenario_gpu(sc, pools[p].gpu, &g, NULL) == 0 ? g.min_limit_w - g.idle_w : HUGE_VAL;
    }
    for (size_t round = 0; round < n_pools && room > 0; round++) {
        size_t best = n_pools;

        for (size_t p = 0; p < n_pools; p++)
            if (!used[p] && (best == n_pools || step[p] < step[best]))
                best = p;
        if (best == n_pools || !(step[best] > 0) || !isfinite(step[best]))
            break;
        used[best] = true;
        {
            double fit = floor(room / step[best]);
            long take = fit < pools[best].gpus ? (long)fit : pools[best].gpus;

            busy += take;
            room -= (double)take * step[best];
        }
    }
    return busy;
}

/* The power tree as written, each kind of node once with its copies: its limit, the nameplate
 * of its nodes (every GPU at its top limit and each node's other draw), their ratio (the
 * oversubscription), and what capping can hold (every GPU busy at its lowest limit). */
static void
print_tree(const struct pfs_scenario *sc, const struct pfs_power_node *const *first,
           const size_t *copies)
{
    struct pfs_pool pools[PFS_MAX_POOLS];

    pfs_scenario_pools(sc, pools);
    printf("  power tree, IT power of each node (nameplate: every GPU at its top limit; floor:\n"
           "  every GPU busy at its lowest; W/GPU: the cap its limit holds on every GPU under it,\n"
           "  all busy; a rack holds nodes x pool):\n");
    printf("    %-20s %7s %9s %12s %6s %9s %6s  %s\n", "node", "copies", "limit kW", "nameplate kW",
           "ratio", "floor kW", "W/GPU", "holds");
    for (size_t k = 0; k < sc->tree.n; k++) {
        const struct pfs_power_node *n = first[k];
        char label[64], lim[24], ratio[16], per[24];

        if (!n)
            continue;
        snprintf(label, sizeof label, "%*s%s", 2 * n->level, "", sc->tree.node[k].name);
        if (n->limit_w < HUGE_VAL) {
            snprintf(lim, sizeof lim, "%.4g", n->limit_w / 1e3);
            snprintf(ratio, sizeof ratio, "%.2fx", n->nameplate_w / n->limit_w);
            /* the cap it holds on every GPU under it, all busy */
            snprintf(per, sizeof per, "%.0f", (n->limit_w - n->other_w) / (double)n->gpus);
        } else {
            pfs__strlcpy(lim, "none", sizeof lim);
            pfs__strlcpy(ratio, "-", sizeof ratio);
            pfs__strlcpy(per, "-", sizeof per);
        }
        printf("    %-20s %7zu %9s %12.4g %6s %9.4g %6s", label, copies[k], lim,
               n->nameplate_w / 1e3, ratio, n->floor_w / 1e3, per);
        if (n->nodes > 0)
            printf("  %d x %s", n->nodes, pools[n->pool].name);
        printf("\n");
    }
}

int
pfs_cli_check(int argc, char **argv)
{
    double cap_w = 0; /* the standing cap: cap_w, or the tree's root (pfs_scenario_cap_w) */
    static const struct option opts[] = {{"days", required_argument, 0, 'd'},
                                         {"json", no_argument, 0, 'J'},
                                         {"help", no_argument, 0, 'h'},
                                         PFS_CLI_ALLOW_OPTION,
                                         {0, 0, 0, 0}};
    struct pfs_scenario *sc = malloc(sizeof *sc);
    struct pfs_pool pools[PFS_MAX_POOLS];
    struct pfs_sim_inputs *in = NULL;
    struct pfs_diag d = {0};
    struct warning warn[16] = {{""}}; /* (at most 7, then four more, then the tree's) */
    struct pfs_power_tree *tree = NULL;
    const struct pfs_power_node *first[PFS_MAX_TREE_SPEC] = {NULL}; /* each entry's first copy */
    size_t copies[PFS_MAX_TREE_SPEC] = {0};
    size_t n_pools, n_warn = 0, n_jobs, n_events = 0;
    double days = NAN, idle_w = 0, peak_w = 0, floor_w = 0, gpu_h_asked = 0, gpu_h_have = 0;
    long busy_most = 0; /* GPUs that can run at their lowest limit under the cap, the rest idle */
    long total_gpus = 0;
    bool json = false;
    int c, rc;

    if (!sc)
        return pfs_cli_report(&d, pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory"));
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'd') {
            if (!pfs__parse_double(optarg, &days) || !(days >= 1.0 / 1440 && days <= 3660)) {
                free(sc);
                return pfs_cli_usage("check", "--days takes 1/1440 to 3660 days, got '%s'", optarg);
            }
        } else if (c == 'J') {
            json = true;
        } else if (c == 0x1004) {
            pfs_policy_allow_scenario_libs(true);
        } else if (c == 'h') {
            free(sc);
            return fputs(pfs_cli_check_help, stdout), EXIT_OK;
        } else {
            free(sc);
            return pfs_cli_usage("check", "%s", "bad option");
        }
    }
    if (argc - optind > 1) {
        free(sc);
        return pfs_cli_usage("check", "%s", "expected at most one scenario file");
    }
    if ((rc = pfs_scenario_load_days(optind < argc ? argv[optind] : NULL, days, sc, &d)) ||
        (rc = pfs_sim_inputs_new(sc, &in, &d)) || (rc = pfs_power_tree_new(sc, &tree, &d))) {
        pfs_sim_inputs_free(in);
        free(sc);
        return pfs_cli_report(&d, rc);
    }
    cap_w = pfs_scenario_cap_w(sc);
    for (size_t v = 0; tree && v < tree->n; v++) {
        const struct pfs_power_node *n = &tree->node[v];

        if (copies[n->spec]++ == 0)
            first[n->spec] = n;
    }

    /* The facility: each pool's GPUs and nodes, its draw idle and at most. */
    n_pools = pfs_scenario_pools(sc, pools);
    for (size_t p = 0; p < n_pools; p++) {
        struct pfs_gpu g;
        long nodes = (pools[p].gpus + pools[p].gpus_per_node - 1) / pools[p].gpus_per_node;

        if (pfs_scenario_gpu(sc, pools[p].gpu, &g, NULL) != 0)
            continue; /* the reader checked it */
        total_gpus += pools[p].gpus;
        idle_w += sc->pue * (pools[p].gpus * g.idle_w + (double)nodes * pools[p].node_other_w);
        peak_w += sc->pue * (pools[p].gpus * g.max_limit_w + (double)nodes * pools[p].node_other_w);
        floor_w +=
            sc->pue * (pools[p].gpus * g.min_limit_w + (double)nodes * pools[p].node_other_w);
    }
    if (cap_w > 0 && cap_w < floor_w)
        busy_most = busy_under(sc, pools, n_pools, idle_w);
    gpu_h_have = (double)total_gpus * sc->days * 24;
    n_jobs = pfs_sim_inputs_n_jobs(in);
    for (size_t j = 0; j < n_jobs; j++) {
        const struct pfs_workload_job *wj = pfs_sim_inputs_job(in, j);

        gpu_h_asked += wj->n_gpus * wj->duration_s / 3600;
    }
    for (size_t k = 0; k < sc->n_dr; k++)
        n_events += sc->dr[k].start_s < sc->days * 86400;

    if (cap_w > 0 && peak_w <= cap_w)
        snprintf(warn[n_warn++].text, sizeof warn[0].text,
                 "the cap of %.4g MW can never bind: every GPU at its highest limit and every "
                 "node's other draw come to %.4g MW; the run is as without a cap",
                 cap_w / 1e6, peak_w / 1e6);
    if (cap_w > 0 && cap_w < idle_w)
        snprintf(warn[n_warn++].text, sizeof warn[0].text,
                 "the cap of %.4g MW is below the idle draw of %.4g MW: no run can meet it",
                 cap_w / 1e6, idle_w / 1e6);
    else if (cap_w > 0 && cap_w < floor_w)
        snprintf(warn[n_warn++].text, sizeof warn[0].text,
                 "the cap of %.4g MW is below the capping floor of %.4g MW (every GPU busy at its "
                 "lowest limit): capping alone holds it with at most %ld of the %ld GPUs busy; "
                 "%s",
                 cap_w / 1e6, floor_w / 1e6, busy_most, total_gpus,
                 sc->over_limit_report
                     ? "control.over_limit = \"report\": a run with more busy goes over it, and "
                       "run counts the minutes over (cap_minutes_over)"
                     : "control.over_limit = \"hold\": jobs start only while their floors fit "
                       "under it, and running ones are paused when a limit falls (run counts "
                       "them: jobs_held_back, jobs_paused_hold)");
    for (size_t k = 0; k < sc->n_dr && n_warn < 6; k++) {
        const struct pfs_dr_event *e = &sc->dr[k];
        double level = e->target_w > 0 ? e->target_w : (1 - e->cut_frac) * peak_w;

        if (!(e->start_s < sc->days * 86400))
            continue;
        if (e->target_w > 0 && level <= idle_w)
            snprintf(warn[n_warn++].text, sizeof warn[0].text,
                     "event %zu asks for %.4g MW, at or below the idle draw of %.4g MW", k + 1,
                     level / 1e6, idle_w / 1e6);
        else if (lowest_target(e) < floor_w && lowest_target(e) > idle_w)
            snprintf(warn[n_warn++].text, sizeof warn[0].text,
                     "event %zu asks for as little as %.4g MW, below the capping floor of %.4g MW "
                     "(every GPU busy at its lowest limit): %s",
                     k + 1, lowest_target(e) / 1e6, floor_w / 1e6,
                     sc->over_limit_report
                         ? "control.over_limit = \"report\": with more busy than capping can "
                           "hold, its minutes over count as missed"
                         : "control.over_limit = \"hold\": with more busy than capping can hold, "
                           "jobs are paused and held back for it");
        else if (lowest_target(e) >= peak_w)
            snprintf(warn[n_warn++].text, sizeof warn[0].text,
                     "event %zu asks for no less than %.4g MW, at or above the most the facility "
                     "can draw (%.4g MW): it can never bind, and counts as met",
                     k + 1, lowest_target(e) / 1e6, peak_w / 1e6);
    }
    if (isnan(days) && pfs_sim_inputs_n_after(in) > 0)
        pfs_cli_left_out(warn[n_warn++].text, sizeof warn[0].text, pfs_sim_inputs_n_after(in), true,
                         sc->days);
    if (isnan(days) && sc->n_dr_after > 0)
        pfs_cli_left_out(warn[n_warn++].text, sizeof warn[0].text, sc->n_dr_after, false, sc->days);
    if (sc->workload_unread[0])
        pfs__strlcpy(warn[n_warn++].text, sc->workload_unread, sizeof warn[0].text);
    /* The tree's nodes that capping cannot hold (one warning a kind of node, at most 4). */
    for (size_t k = 0; tree && k < sc->tree.n && n_warn < 16; k++) {
        const struct pfs_power_node *n = first[k];

        if (!n || !(n->limit_w < n->nameplate_w))
            continue;
        if (n->limit_w < n->idle_w)
            snprintf(warn[n_warn++].text, sizeof warn[0].text,
                     "tree node %s%s: its limit of %.4g kW is below its nodes' idle draw of "
                     "%.4g kW: no run can meet it",
                     n->name, copies[k] > 1 ? " (and its copies)" : "", n->limit_w / 1e3,
                     n->idle_w / 1e3);
        else if (n->limit_w < n->floor_w)
            snprintf(warn[n_warn++].text, sizeof warn[0].text,
                     "tree node %s%s: its limit of %.4g kW is below its capping floor of %.4g kW "
                     "(every GPU under it busy at its lowest limit): capping alone cannot hold "
                     "it with all of them busy",
                     n->name, copies[k] > 1 ? " (and its copies)" : "", n->limit_w / 1e3,
                     n->floor_w / 1e3);
    }
    if (n_jobs > 1000000 || sc->days * total_gpus > 365.0 * 100000)
        snprintf(warn[n_warn++].text, sizeof warn[0].text,
                 "a large run: %zu jobs over %.4g days on %ld GPUs (docs/benchmarks.md has what "
                 "such runs take); a database with time series holds %.3g rows per policy",
                 n_jobs, sc->days, total_gpus, sc->days * 1440);

    if (json) {
        printf("{\"scenario\": ");
        pfs_cli_json_string(sc->name);
        printf(", \"valid\": true, \"days\": %.17g, \"gpus\": %ld, \"pools\": [", sc->days,
               total_gpus);
        for (size_t p = 0; p < n_pools; p++) {
            printf("%s{\"name\": ", p ? ", " : "");
            pfs_cli_json_string(pools[p].name);
            printf(", \"gpu\": ");
            pfs_cli_json_string(pools[p].gpu);
            printf(", \"gpus\": %d}", pools[p].gpus);
        }
        printf("], \"idle_w\": %.17g, \"peak_w\": %.17g, \"cap_w\": %.17g, \"cap_can_bind\": %s, "
               "\"dr_events\": %zu, \"jobs\": %zu, \"gpu_hours_asked\": %.17g, "
               "\"gpu_hours_available\": %.17g, \"warnings\": [",
               idle_w, peak_w, cap_w, cap_w > 0 && peak_w > cap_w ? "true" : "false", n_events,
               n_jobs, gpu_h_asked, gpu_h_have);
        for (size_t w = 0; w < n_warn; w++) {
            printf("%s", w ? ", " : "");
            pfs_cli_json_string(warn[w].text);
        }
        printf("]");
        if (tree) {
            printf(", \"tree\": [");
            for (size_t k = 0; k < sc->tree.n; k++) {
                const struct pfs_power_node *n = first[k];

                printf("%s{\"name\": ", k ? ", " : "");
                pfs_cli_json_string(sc->tree.node[k].name);
                printf(", \"first\": ");
                pfs_cli_json_string(n->name);
                printf(", \"level\": %d, \"copies\": %zu, \"limit_w\": ", n->level, copies[k]);
                pfs_cli_json_number(n->limit_w < HUGE_VAL ? n->limit_w : (double)NAN);
                printf(", \"nameplate_w\": %.17g, \"floor_w\": %.17g, \"idle_w\": %.17g, "
                       "\"gpus\": %ld, \"other_w\": %.17g, \"nodes\": %d}",
                       n->nameplate_w, n->floor_w, n->idle_w, n->gpus, n->other_w, n->nodes);
            }
            printf("]");
        }
        printf("}\n");
    } else {
        printf("scenario %s: valid. %.4g days.\n", sc->name, sc->days);
        printf("facility: %ld GPUs in %zu pool%s:", total_gpus, n_pools, n_pools == 1 ? "" : "s");
        for (size_t p = 0; p < n_pools; p++)
            printf("%s %d x %s (%s)", p ? "," : "", pools[p].gpus, pools[p].gpu, pools[p].name);
        printf(".\n  draw: %.4g MW idle, at most %.4g MW (PUE %.3g).\n", idle_w / 1e6, peak_w / 1e6,
               sc->pue);
        if (cap_w > 0)
            printf("  cap: %.4g MW%s, %s.\n", cap_w / 1e6,
                   cap_w < sc->base_cap_w || !(sc->base_cap_w > 0)
                       ? " (the tree's root: its limit x PUE)"
                       : "",
                   peak_w > cap_w ? "it binds when the facility draws more" : "it never binds");
        else
            printf("  cap: none outside DR events.\n");
        if (tree)
            print_tree(sc, first, copies);
        if (pfs_variability_on(&sc->var))
            printf("  GPUs differ: efficiency sd %.3g, %.3g%% outliers at %.3g (seed %lu); a "
                   "job waits at every step for its slowest GPU.\n",
                   sc->var.eta_sd, 100 * sc->var.outlier_frac, sc->var.outlier_eta, sc->var_seed);
        printf("DR events inside the run: %zu.\n", n_events);
        for (size_t k = 0; k < sc->n_dr; k++) {
            const struct pfs_dr_event *e = &sc->dr[k];

            if (e->start_s >= sc->days * 86400)
                continue;
            printf("  %zu: hours %.4g-%.4g, ", k + 1, e->start_s / 3600, e->end_s / 3600);
            if (e->target_w > 0)
                printf("to %.4g MW", e->target_w / 1e6);
            else
                printf("a %.3g%% cut of the draw at its start", 100 * e->cut_frac);
            if (isfinite(e->notice_s))
                printf(", announced %.3g h ahead", e->notice_s / 3600);
            printf(".\n");
        }
        printf("workload: %zu jobs asking %.4g GPU-hours, %.3g%% of the %.4g the facility has "
               "in the run.\n",
               n_jobs, gpu_h_asked, gpu_h_have > 0 ? 100 * gpu_h_asked / gpu_h_have : 0,
               gpu_h_have);
        for (size_t w = 0; w < n_warn; w++)
            printf("warning: %s.\n", warn[w].text);
    }
    pfs_sim_inputs_free(in);
    pfs_power_tree_free(tree);
    free(sc);
    return EXIT_OK;
}
