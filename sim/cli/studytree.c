/*
 * sim/cli/studytree.c - pfisim study tree: oversubscription where it is decided (issue 58,
 * docs/results.md "Oversubscribing rows").
 *
 * An operator adds racks to a row whose busway keeps its limit, and to a hall whose feed
 * keeps its own: each rack more is more GPUs, and more of them capped. The study takes a
 * scenario with a power tree (the DGX-H100-like hall of configs/power-tree.cfg by default),
 * sets the racks under every row to each count asked, and runs each policy over seeds,
 * every node's limit held: tokens a day, the tier floors kept, deadlines, and where the
 * power went (the rows' minutes at their limit, starts held back for power).
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char pfs_cli_study_tree_help[] =
    "usage: pfisim study tree [SCENARIO] [--racks LIST] [--seeds LIST] [--days D]\n"
    "                        [--policy NAME]... [-o|--output DIR]\n"
    "\n"
    "Oversubscription where it is decided: a scenario with a power tree (default\n"
    "configs/power-tree.cfg: 4 rows on 250 kW busways under a 900 kW feed, racks of four\n"
    "8-GPU nodes under 38 kW) run with each count of racks under every row (its GPUs grow\n"
    "with them; the limits stay), each policy and seed, every node's limit held. Prints per\n"
    "count and policy the tokens a day (mean and the seeds' min-max), the share of finished\n"
    "jobs within their tier's floor, deadline misses, the busiest row's minutes at its limit\n"
    "and the starts held back for power; writes DIR/study-tree.csv (a row per count, seed and\n"
    "policy). Same arguments, same bytes.\n"
    "\n"
    "  --racks LIST   racks under each row (default 6..12); A..B or A,B,C\n"
    "  --seeds LIST   workload seeds (default 1..3)\n"
    "  --days D       simulated days (default the scenario's)\n"
    "  --policy NAME  a policy (repeatable; default equal, pfi, oracle)\n"
    "  -o, --output DIR  where to write (default results)\n";

enum { MAX_RACKS = 32, MAX_SEEDS = 32, MAX_POL = 8 };

struct cell {
    long racks, seed;
    int gpus;
    double row_ratio; /* a row's nameplate over its limit */
    char policy[32];
    double tokens_day, tier_kept, misses, finished, held_back, waits;
    double row_at_min, row_worst, over_min;
    bool never; /* some job could never start: past what the rows can run */
};

struct study {
    struct cell *c;
    size_t n;
};

/* The racks' rows of the tree: every rack entry's count set to racks; returns the nodes
 * the tree then holds (its racks' nodes, copies counted). */
static long
set_racks(struct pfs_scenario *sc, long racks)
{
    long nodes = 0;

    for (size_t k = 0; k < sc->tree.n; k++) {
        struct pfs_tree_spec_node *n = &sc->tree.node[k];
        long copies = 1;

        if (n->nodes <= 0)
            continue;
        if (n->parent > 0) /* (a rack under the root itself stays as it is) */
            n->count = (int)racks;
        for (int u = (int)k; u >= 0; u = sc->tree.node[u].parent)
            copies *= sc->tree.node[u].count;
        nodes += copies * n->nodes;
    }
    return nodes;
}

static int
write_csv(const void *obj, FILE *fp, struct pfs_diag *d)
{
    const struct study *s = obj;

    (void)d;
    fprintf(fp, "racks_per_row,gpus,row_nameplate_over_limit,seed,policy,tokens_per_day,"
                "tier_floors_kept,deadline_misses,jobs_finished,jobs_held_back,tree_waits,"
                "row_minutes_at_limit,row_worst_peak_over_limit,node_minutes_over\n");
    for (size_t i = 0; i < s->n; i++) {
        const struct cell *c = &s->c[i];

        if (c->never) {
            fprintf(fp, "%ld,%d,%.4f,%ld,%s,,,,,,,,,\n", c->racks, c->gpus, c->row_ratio, c->seed,
                    c->policy);
            continue;
        }
        fprintf(fp, "%ld,%d,%.4f,%ld,%s,%.6e,%.4f,%.0f,%.0f,%.0f,%.0f,%.1f,%.4f,%.1f\n", c->racks,
                c->gpus, c->row_ratio, c->seed, c->policy, c->tokens_day, c->tier_kept, c->misses,
                c->finished, c->held_back, c->waits, c->row_at_min, c->row_worst, c->over_min);
    }
    return ferror(fp) ? PFS_EIO : 0;
}

/* One count of racks, one seed: every policy's run into s. */
static int
one(struct study *s, struct pfs_scenario *sc, long racks, long seed, const char *const *pol,
    size_t n_pol, struct pfs_diag *d)
{
    struct pfs_sim_inputs *in = NULL;
    long nodes = set_racks(sc, racks);
    double nameplate = 0, limit = 0;
    struct pfs_power_tree *t = NULL;
    bool past;
    int rc;

    sc->gpus = (int)(nodes * sc->gpus_per_node);
    sc->seed = (unsigned long)seed;
    if ((rc = pfs_power_tree_new(sc, &t, d)) != 0)
        return rc;
    for (size_t v = 0; t && v < t->n; v++) /* the first row's nameplate over its limit */
        if (t->node[v].level == 1 && isfinite(t->node[v].limit_w)) {
            nameplate = t->node[v].nameplate_w;
            limit = t->node[v].limit_w;
            break;
        }
    pfs_power_tree_free(t);
    rc = pfs_sim_inputs_new(sc, &in, d);
    past = rc == PFS_EINVAL && strcmp(d->field, "tree") == 0; /* (the feed's idle draw) */
    if (rc && !past)
        return rc;
    for (size_t k = 0; k < n_pol && (rc == 0 || past); k++) {
        struct pfs_run_result r;
        struct cell *c, *g = realloc(s->c, (s->n + 1) * sizeof *s->c);

        if (!g) {
            rc = pfs__diag_set(d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            break;
        }
        s->c = g;
        if (!past)
            rc = pfs_sim_run(sc, in, pol[k], &r, NULL, NULL, d);
        c = &s->c[s->n++];
        *c = (struct cell){.racks = racks,
                           .seed = seed,
                           .gpus = sc->gpus,
                           .row_ratio = limit > 0 ? nameplate / limit : (double)NAN};
        pfs__strlcpy(c->policy, pol[k], sizeof c->policy);
        if (past || (rc == PFS_EINVAL && strcmp(d->field, "tree") == 0)) {
            /* a job no rack can ever take at its floor, or the feed below the hall's idle
             * draw: the count is past what the tree can run (its row marked) */
            c->never = true;
            c->tier_kept = c->misses = c->finished = c->held_back = c->waits = NAN;
            c->row_at_min = c->row_worst = c->over_min = NAN;
            if (k + 1 == n_pol) /* (the last: the message gone with it) */
                memset(d, 0, sizeof *d);
            rc = 0;
            continue;
        }
        if (rc)
            break;
        c->tokens_day = r.tokens / sc->days;
        c->finished = (double)r.jobs_finished;
        c->tier_kept =
            r.jobs_finished ? 1 - (double)r.tier_violations / (double)r.jobs_finished : (double)NAN;
        c->misses = (double)r.deadline_misses;
        c->held_back = (double)r.jobs_held_back;
        c->waits = (double)r.tree_waits;
        for (size_t v = 0; v < r.n_tree; v++) {
            const struct pfs_node_result *nr = &r.tree[v];

            c->over_min += nr->minutes_over;
            if (nr->level == 1 && isfinite(nr->limit_w)) {
                c->row_at_min = fmax(c->row_at_min, nr->minutes_at);
                c->row_worst = fmax(c->row_worst, nr->peak_w / nr->limit_w);
            }
        }
        pfs_run_result_free(&r);
    }
    pfs_sim_inputs_free(in);
    return rc;
}

static void
print_table(const struct study *s, const long *racks, size_t n_racks, const char *const *pol,
            size_t n_pol)
{
    printf("racks  GPUs  row  policy    tokens/day [min, max]       tiers kept  misses  "
           "row min   held\n");
    printf(" /row         x                                                             at "
           "limit   back\n");
    for (size_t a = 0; a < n_racks; a++)
        for (size_t k = 0; k < n_pol; k++) {
            double sum = 0, lo = HUGE_VAL, hi = -HUGE_VAL, kept = 0, miss = 0, at = 0, held = 0;
            size_t m = 0, never = 0;
            int gpus = 0;
            double ratio = NAN;

            for (size_t i = 0; i < s->n; i++) {
                const struct cell *c = &s->c[i];

                if (c->racks != racks[a] || strcmp(c->policy, pol[k]) != 0)
                    continue;
                gpus = c->gpus;
                ratio = c->row_ratio;
                if (c->never) {
                    never++;
                    continue;
                }
                sum += c->tokens_day;
                lo = fmin(lo, c->tokens_day);
                hi = fmax(hi, c->tokens_day);
                kept += c->tier_kept;
                miss += c->misses;
                at += c->row_at_min;
                held += c->held_back;
                m++;
            }
            if (never > 0) {
                printf("%5ld %5d %4.2f  %-8s  past the tree: a job's floor fits no rack, or the "
                       "feed < idle\n",
                       racks[a], gpus, ratio, pol[k]);
                continue;
            }
            if (m == 0)
                continue;
            printf("%5ld %5d %4.2f  %-8s  %.4g [%.4g, %.4g]  %9.1f%%  %6.0f  %7.0f  %5.0f\n",
                   racks[a], gpus, ratio, pol[k], sum / m, lo, hi, 100 * kept / m, miss / m, at / m,
                   held / m);
        }
}

int
pfs_cli_study_tree(int argc, char **argv)
{
    static const struct option opts[] = {{"racks", required_argument, 0, 'r'},
                                         {"seeds", required_argument, 0, 's'},
                                         {"days", required_argument, 0, 'd'},
                                         {"policy", required_argument, 0, 'p'},
                                         {"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    long racks[MAX_RACKS] = {6, 7, 8, 9, 10, 11, 12}, seeds[MAX_SEEDS] = {1, 2, 3};
    size_t n_racks = 7, n_seeds = 3, n_pol = 0;
    const char *pol[MAX_POL], *dir = "results", *path = NULL;
    double days = NAN;
    char csv[1024];
    struct pfs_scenario *sc = NULL;
    struct study s = {0};
    struct pfs_diag d = {0};
    int c, rc = 0;

    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
            if ((n_racks = pfs_cli_parse_list(optarg, racks, MAX_RACKS, 1)) == 0)
                return pfs_cli_usage("study", "--racks takes up to %d counts, got '%s'", MAX_RACKS,
                                     optarg);
            for (size_t i = 0; i < n_racks; i++)
                if (racks[i] < 1 || racks[i] > 64)
                    return pfs_cli_usage("study", "--racks: each from 1 to 64, got %ld", racks[i]);
            break;
        case 's':
            if ((n_seeds = pfs_cli_parse_list(optarg, seeds, MAX_SEEDS, 1)) == 0)
                return pfs_cli_usage("study", "--seeds takes up to %d seeds, got '%s'", MAX_SEEDS,
                                     optarg);
            break;
        case 'd':
            if (!(pfs_cli_parse_frac(optarg, &days) && days > 0 && days <= 3660))
                return pfs_cli_usage("study", "--days takes days in (0, 3660], got '%s'", optarg);
            break;
        case 'p':
            if (n_pol == MAX_POL)
                return pfs_cli_usage("study", "at most %d policies", MAX_POL);
            pol[n_pol++] = optarg;
            break;
        case 'o':
            dir = optarg;
            break;
        case 'h':
            return fputs(pfs_cli_study_tree_help, stdout), EXIT_OK;
        default:
            return pfs_cli_usage("study", "%s", "bad option");
        }
    }
    if (optind + 1 < argc)
        return pfs_cli_usage("study", "%s", "unexpected arguments");
    path = optind < argc ? argv[optind] : pfs_cli_shipped("configs/power-tree.cfg");
    if (n_pol == 0) {
        pol[n_pol++] = "equal";
        pol[n_pol++] = "pfi";
        pol[n_pol++] = "oracle";
    }
    if (snprintf(csv, sizeof csv, "%s/study-tree.csv", dir) >= (int)sizeof csv)
        return pfs_cli_usage("study", "%s", "the output folder's name is too long");
    if (!(sc = malloc(sizeof *sc)))
        return pfs_cli_report(&d, pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory"));
    if ((rc = pfs_scenario_load_days(path, days, sc, &d)) == 0) {
        if (sc->tree.n < 2 || sc->n_pools > 0)
            rc = pfs__diag_set(&d, PFS_EINVAL, path, 0, 0, "tree",
                               "study tree takes a scenario of one pool with a power tree of "
                               "rows of racks (facility.tree)");
    }
    for (size_t i = 0; i < n_pol && rc == 0; i++)
        if (!pfs_sim_policy_find(pol[i], NULL))
            rc = pfs__diag_set(&d, PFS_EINVAL, NULL, 0, 0, "policy", "unknown policy '%s'", pol[i]);
    if (rc == 0)
        printf("study tree: %s, %g days, %zu rack counts x %zu seeds x %zu policies (SYNTHETIC "
               "workload where the scenario's is)\n\n",
               path, sc->days, n_racks, n_seeds, n_pol);
    for (size_t a = 0; a < n_racks && rc == 0; a++)
        for (size_t i = 0; i < n_seeds && rc == 0; i++)
            rc = one(&s, sc, racks[a], seeds[i], pol, n_pol, &d);
    if (rc == 0 && pfs__mkdir_parents(csv) != 0)
        rc = pfs__diag_set(&d, PFS_EIO, dir, 0, 0, NULL, "cannot create the folder");
    if (rc == 0 && (rc = pfs_cli_write_output(csv, write_csv, &s, &d)) == 0) {
        print_table(&s, racks, n_racks, pol, n_pol);
        printf("\nwrote %s\n", csv);
    }
    free(s.c);
    free(sc);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}
