/*
 * tests/test_tree.c - dividing power under a tree of limits (issue 58): closed forms by hand,
 * the throughput optimum against exhaustive search on random small trees, the level against
 * the one-node level it generalises.
 */
#include <gsl/gsl_rng.h>
#include <sqlite3.h>
#include <stdlib.h>

#include "../policies/policy.h"
#include "test.h"

static struct pfs_alloc_job
job(int n_gpus)
{
    return (struct pfs_alloc_job){.n_gpus = n_gpus, .min_w = 200, .max_w = 700, .ref_w = 700};
}

/* Two racks under a row: rack A (1200 W) holds a1 and a2 (one GPU each), rack B (2500 W)
 * holds b1 (two GPUs), the row 2500 W. */
static const int32_t two_parent[] = {-1, 0, 0};
static const char *const two_name[] = {"row", "rack-a", "rack-b"};
static const uint32_t two_job_node[] = {1, 1, 2};

void
test_tree_closed(struct test *t)
{
    const double limit[] = {2500, 1200, 2500};
    const struct pfs_alloc_tree tree = {3, two_parent, limit, two_job_node, two_name};
    struct pfs_alloc_job j[3] = {job(1), job(1), job(2)};
    const double lo[3] = {200, 200, 200}, hi[3] = {700, 700, 700};
    struct pfs_alloc_decision out[3];
    struct pfs_diag d = {0};
    /* a1: 1 tokens/s per W over its range; a2: 2 up to 400 W then 0.5; b1 (two GPUs): 3 per
     * W of its cap up to 500 W (1.5 per W of the row's), then nothing */
    struct pfs_pwl c[3] = {{2, {200, 700}, {0, 500}},
                           {3, {200, 400, 700}, {0, 400, 550}},
                           {3, {200, 500, 700}, {0, 900, 900}}};

    /* equal: rack A's two GPUs fill it at 600 W; the row then leaves b1 (2500 - 1200) / 2 =
     * 650 W a GPU */
    CHECK_INT(pfs__level_tree("equal", j, 3, lo, hi, &tree, 1e9, out, &d), 0);
    CHECK_NEAR(out[0].cap_w, 600, 1e-6);
    CHECK_NEAR(out[1].cap_w, 600, 1e-6);
    CHECK_NEAR(out[2].cap_w, 650, 1e-6);
    /* the optimum, by hand: a2 to 400 (2 per W), b1 to 500 (1.5), a1 to 700 (1: rack A has
     * 600 W left, the row 900), a2's flatter part gets what rack A has left, 100 W */
    CHECK_INT(pfs__waterfill_tree("oracle", c, j, 3, &tree, 1e9, out, &d), 0);
    CHECK_NEAR(out[0].cap_w, 700, 1e-9);
    CHECK_NEAR(out[1].cap_w, 500, 1e-9);
    CHECK_NEAR(out[2].cap_w, 500, 1e-9);
    /* a budget below the row's limit binds at the root: of 2100 W, 1300 above the floors, a2
     * and b1 take 800, a1 the 500 left; a2's flatter part nothing */
    CHECK_INT(pfs__waterfill_tree("oracle", c, j, 3, &tree, 2100, out, &d), 0);
    CHECK_NEAR(out[0].cap_w, 700, 1e-9);
    CHECK_NEAR(out[1].cap_w, 400, 1e-9);
    CHECK_NEAR(out[2].cap_w, 500, 1e-9);
    /* floors over a rack's limit: refused, the rack named */
    {
        const double tight[] = {2500, 300, 2500};
        const struct pfs_alloc_tree bad = {3, two_parent, tight, two_job_node, two_name};

        CHECK_INT(pfs__waterfill_tree("oracle", c, j, 3, &bad, 1e9, out, &d), PFS_EINVAL);
        CHECK(strstr(d.message, "'rack-a'") != NULL && strstr(d.message, "100 W") != NULL);
        CHECK_INT(pfs__level_tree("equal", j, 3, lo, hi, &bad, 1e9, out, &d), PFS_EINVAL);
        CHECK(strstr(d.message, "'rack-a'") != NULL);
    }
}

/* One node: the level is pfs__level's, the optimum pfs__waterfill's. */
void
test_tree_one_node(struct test *t)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    const int32_t parent[] = {-1};
    uint32_t node[16] = {0};

    gsl_rng_set(r, 58);
    for (int trial = 0; trial < 50; trial++) {
        struct pfs_alloc_job j[16];
        struct pfs_pwl c[16];
        double lo[16], hi[16], floor = 0, top = 0, budget, limit[1] = {HUGE_VAL};
        struct pfs_alloc_decision a[16], b[16];
        struct pfs_diag d = {0};
        const struct pfs_alloc_tree tree = {1, parent, limit, node, NULL};
        const size_t n = 1 + gsl_rng_uniform_int(r, 16);

        for (size_t i = 0; i < n; i++) {
            double y = 0;

            j[i] = job(1 + (int)gsl_rng_uniform_int(r, 8));
            lo[i] = j[i].min_w;
            hi[i] = j[i].max_w;
            c[i].n = 6;
            for (size_t k = 0; k < 6; k++) {
                c[i].x[k] = 200 + 100 * k;
                y += k ? gsl_rng_uniform(r) * (6 - k) : 0;
                c[i].y[k] = y;
            }
            pfs_pwl_hull(&c[i]);
            floor += j[i].n_gpus * 200.0;
            top += j[i].n_gpus * 700.0;
        }
        budget = floor + gsl_rng_uniform(r) * (top - floor);
        CHECK_INT(pfs__level("equal", j, n, lo, hi, budget, a, &d), 0);
        CHECK_INT(pfs__level_tree("equal", j, n, lo, hi, &tree, budget, b, &d), 0);
        for (size_t i = 0; i < n; i++)
            CHECK_NEAR(b[i].cap_w, a[i].cap_w, 1e-6);
        CHECK_INT(pfs__waterfill("oracle", c, j, n, budget, NULL, a, &d), 0);
        CHECK_INT(pfs__waterfill_tree("oracle", c, j, n, &tree, budget, b, &d), 0);
        {
            double ta = 0, tb = 0;

            for (size_t i = 0; i < n; i++) {
                ta += pfs_pwl_eval(&c[i], a[i].cap_w);
                tb += pfs_pwl_eval(&c[i], b[i].cap_w);
            }
            CHECK_NEAR(tb, ta, 1e-9 * fabs(ta) + 1e-9);
        }
    }
    gsl_rng_free(r);
}

/* The optimum under a tree against exhaustive search: 200 random trees of up to 3 levels and
 * 6 jobs of 1 or 2 GPUs, curves concave with breakpoints every 100 W, limits multiples of
 * 100 W, so that an optimum lies on the grid of 100 W of each job's GPU power (laminar
 * limits: a totally unimodular system) and the grid search is exact. */
static double best;
static int best_ok;

static void
search(const struct pfs_alloc_tree *tr, const struct pfs_alloc_job *j, const struct pfs_pwl *c,
       size_t n, size_t i, double *x, double budget)
{
    if (i == n) {
        double use[8] = {0}, v = 0, total = 0;

        for (size_t q = 0; q < n; q++) {
            for (int32_t u = (int32_t)tr->job_node[q]; u >= 0; u = tr->parent[u])
                use[u] += j[q].n_gpus * x[q];
            v += pfs_pwl_eval(&c[q], x[q]);
            total += j[q].n_gpus * x[q];
        }
        for (size_t u = 0; u < tr->n_nodes; u++)
            if (use[u] > tr->limit_w[u] + 1e-9)
                return;
        if (total > budget + 1e-9)
            return;
        best_ok = 1;
        best = fmax(best, v);
        return;
    }
    /* in the GPU power z = n x every constraint has unit coefficients and integral (100 W)
     * limits and segment lengths: an optimum has z on the 100 W grid */
    for (int k = 0; k <= 5 * j[i].n_gpus; k++) {
        x[i] = 200 + 100.0 * k / j[i].n_gpus;
        search(tr, j, c, n, i + 1, x, budget);
    }
}

void
test_tree_brute_force(struct test *t)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    size_t feasible = 0;

    gsl_rng_set(r, 1958);
    for (int trial = 0; trial < 200; trial++) {
        int32_t parent[8];
        double limit[8], x[6], budget;
        uint32_t node[6];
        struct pfs_alloc_job j[6];
        struct pfs_pwl c[6];
        struct pfs_alloc_decision out[6];
        struct pfs_diag d = {0};
        const size_t n_nodes = 1 + gsl_rng_uniform_int(r, 7), n = 1 + gsl_rng_uniform_int(r, 6);
        const struct pfs_alloc_tree tr = {n_nodes, parent, limit, node, NULL};
        int rc;

        /* up to 3 levels: a node's parent is the root or a child of the root */
        parent[0] = -1;
        for (size_t v = 1; v < n_nodes; v++) {
            int32_t p = (int32_t)gsl_rng_uniform_int(r, v);

            parent[v] = p > 0 && parent[p] > 0 ? parent[p] : p;
        }
        for (size_t v = 0; v < n_nodes; v++)
            limit[v] =
                gsl_rng_uniform(r) < 0.2 ? HUGE_VAL : 100.0 * (2 + gsl_rng_uniform_int(r, 60));
        for (size_t i = 0; i < n; i++) {
            double y = 0;

            node[i] = (uint32_t)gsl_rng_uniform_int(r, n_nodes);
            j[i] = job(gsl_rng_uniform(r) < 0.3 ? 2 : 1);
            c[i].n = 6;
            for (size_t k = 0; k < 6; k++) {
                c[i].x[k] = 200 + 100 * k;
                y += k ? gsl_rng_uniform(r) : 0;
                c[i].y[k] = y;
            }
            pfs_pwl_hull(&c[i]);
        }
        budget = 100.0 * (4 + gsl_rng_uniform_int(r, 80));
        best = -1;
        best_ok = 0;
        search(&tr, j, c, n, 0, x, budget);
        rc = pfs__waterfill_tree("oracle", c, j, n, &tr, budget, out, &d);
        if (!best_ok) {
            CHECK_INT(rc, PFS_EINVAL); /* the floors do not fit: refused */
            continue;
        }
        feasible++;
        CHECK_INT(rc, 0);
        if (rc == 0) {
            double use[8] = {0}, v = 0;

            for (size_t q = 0; q < n; q++) {
                for (int32_t u = (int32_t)node[q]; u >= 0; u = parent[u])
                    use[u] += j[q].n_gpus * out[q].cap_w;
                v += pfs_pwl_eval(&c[q], out[q].cap_w);
            }
            for (size_t u = 0; u < n_nodes; u++)
                CHECK(use[u] <= fmin(limit[u], u ? HUGE_VAL : budget) + 1e-6);
            CHECK_NEAR(v, best, 1e-9 * best + 1e-9);
        }
    }
    /* most of them can be met at all */
    CHECK(feasible > 100);
    gsl_rng_free(r);
}

/* facility.tree: read with its copies, each rack's nodes in its pool's order, nameplates by
 * hand; written back and read again to the same tree; bad trees refused with the setting
 * named; check draws it and warns where a limit is below the capping floor; run refuses it
 * (the engine does not hold it yet) rather than ignore it. */
void
test_tree_scenario(struct test *t)
{
    static const char hall[] =
        "scenario = { name = \"hall\"; duration_days = 1.0;\n"
        "  facility = { gpus = 64; gpus_per_node = 8; gpu = \"h100-sxm\"; node_other_w = 4600.0;\n"
        "    tree = { name = \"feed\"; limit_w = \"60 kW\";\n"
        "      children = ( { name = \"row\"; count = 2; limit_w = \"30 kW\";\n"
        "        children = ( { name = \"rack\"; count = 2; limit_w = \"22 kW\"; nodes = 2; } ); } "
        ");\n"
        "    }; }; };\n";
    struct pfs_scenario *sc = malloc(sizeof *sc), *back = malloc(sizeof *back);
    struct pfs_power_tree *tr = NULL;
    struct pfs_diag d = {0};
    char *text = NULL, *out = NULL, *err = NULL, args[400];
    size_t len = 0;
    FILE *fp;

    CHECK_INT(pfs_scenario_parse(hall, "hall.cfg", sc, &d), 0);
    CHECK_INT(sc->tree.n, 3);
    CHECK_INT(pfs_power_tree_new(sc, &tr, &d), 0);
    if (tr) {
        /* feed, row-1, row-1/rack-1, row-1/rack-2, row-2, ... depth first */
        CHECK_INT(tr->n, 7);
        CHECK_STR(tr->node[0].name, "feed");
        CHECK_STR(tr->node[1].name, "row-1");
        CHECK_STR(tr->node[3].name, "row-1/rack-2");
        CHECK_STR(tr->node[6].name, "row-2/rack-2");
        CHECK_INT(tr->node[6].parent, 4);
        CHECK_INT(tr->node[6].first_node, 6);
        CHECK_NEAR(tr->node[3].limit_w, 22000, 0);
        /* a rack: 2 nodes x (8 x 700 W + 4600 W) = 20.4 kW; floor 2 x (8 x 200 + 4600) */
        CHECK_NEAR(tr->node[3].nameplate_w, 20400, 1e-9);
        CHECK_NEAR(tr->node[3].floor_w, 12400, 1e-9);
        CHECK_NEAR(tr->node[0].nameplate_w, 4 * 20400, 1e-9);
    }
    pfs_power_tree_free(tr);
    /* written back, read again: the same tree, the same text */
    fp = open_memstream(&text, &len);
    pfs_scenario_write(sc, fp);
    fclose(fp);
    CHECK_INT(pfs_scenario_parse(text, "back.cfg", back, &d), 0);
    CHECK_INT(back->tree.n, 3);
    CHECK(memcmp(&back->tree, &sc->tree, sizeof sc->tree) == 0);
    free(text);
    /* bad trees */
    {
        static const struct {
            const char *tree, *says;
        } bad[] = {
            {"tree = { name = \"feed\"; children = ( { name = \"rack\"; nodes = 7; } ); };",
             "its racks hold 7 nodes of pool 'h100-sxm', which has 8"},
            {"tree = { name = \"feed\"; count = 2; children = ( { name = \"r\"; nodes = 8; } ); };",
             "the root is one node"},
            {"tree = { name = \"feed\"; nodes = 4; children = ( { name = \"r\"; nodes = 4; } ); };",
             "not both"},
            {"tree = { name = \"feed\"; children = ( { name = \"r\"; nodes = 4; }, { name = \"r\"; "
             "nodes = 4; } ); };",
             "share a name"},
            {"tree = { name = \"feed\"; children = ( { name = \"r\"; } ); };", "give its nodes"},
            {"tree = { name = \"feed\"; limit_w = \"3 h\"; children = ( { name = \"r\"; nodes = 8; "
             "} "
             "); };",
             "limit_w"},
            {"tree = { name = \"a b\"; children = ( { name = \"r\"; nodes = 8; } ); };",
             "letters, digits"},
            {"tree = { name = \"f\"; children = ( { name = \"r\"; nodes = 8; pool = \"x\"; } ); };",
             "no pool of that name"},
        };

        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            char cfg[800];

            snprintf(cfg, sizeof cfg,
                     "scenario = { facility = { gpus = 64; gpus_per_node = 8; gpu = \"h100-sxm\"; "
                     "%s }; };",
                     bad[k].tree);
            memset(&d, 0, sizeof d);
            CHECK_INT(pfs_scenario_parse(cfg, "bad.cfg", sc, &d), PFS_EINVAL);
            if (!strstr(d.message, bad[k].says))
                test_fail(t, __FILE__, __LINE__, "tree %zu: '%s' does not say '%s'", k, d.message,
                          bad[k].says);
            CHECK(strstr(d.message, "scenario.facility.tree") != NULL);
        }
    }
    /* check draws it; a rack limit under its floor is warned of */
    {
        static const char low[] =
            "scenario = { name = \"low\"; duration_days = 1.0; facility = { gpus = 64; "
            "gpus_per_node = 8; gpu = \"h100-sxm\"; node_other_w = 4600.0; tree = { name = "
            "\"feed\"; children = ( { name = \"rack\"; count = 4; limit_w = \"12 kW\"; nodes = 2; "
            "} ); }; }; };\n";
        const char *path = test_write(t, 0, "hall.cfg", hall);

        snprintf(args, sizeof args, "check %s", path);
        CHECK_INT(test_run(t, args, &out, &err), 0);
        /* by hand: a rack 2 x (8 x 700 + 4600) = 20.4 kW, 0.93 of 22; a row 40.8 over 30 */
        CHECK(strstr(out, "      row                      2        30         40.8  1.36x      24.8"
                          "    362\n") != NULL);
        /* and the cap a rack holds on its 16 GPUs, all busy: (22 - 2 x 4.6 kW) / 16 = 800 W */
        CHECK(strstr(out, "        rack                   4        22         20.4  0.93x      12.4"
                          "    800  2 x h100-sxm\n") != NULL);
        free(out);
        free(err);
        path = test_write(t, 1, "low.cfg", low);
        snprintf(args, sizeof args, "check %s", path);
        CHECK_INT(test_run(t, args, &out, &err), 0);
        CHECK(strstr(out, "warning: tree node rack-1 (and its copies): its limit of 12 kW is below "
                          "its capping floor of 12.4 kW") != NULL);
        free(out);
        free(err);
        snprintf(args, sizeof args, "check --json %s", path);
        CHECK_INT(test_run(t, args, &out, &err), 0);
        CHECK(strstr(out, "\"tree\": [{\"name\": \"feed\", \"first\": \"feed\", \"level\": 0, "
                          "\"copies\": 1, \"limit_w\": null") != NULL);
        CHECK(strstr(out, "\"gpus\": 16, \"other_w\": 9200, \"nodes\": 2}") != NULL);
        free(out);
        free(err);
        /* run holds it: sla, which does not divide under a tree, refused by name */
        snprintf(args, sizeof args, "run %s --policy sla", path);
        CHECK_INT(test_run(t, args, &out, &err), 3);
        CHECK(strstr(err, "policy sla does not divide power under a tree of limits") != NULL);
        free(out);
        free(err);
    }
    free(sc);
    free(back);
}

/* Two racks under a row as files: rack-a (1200 W) takes a1 and a2 (one GPU each), rack-b
 * (2500 W) b1 (two GPUs, packed after rack-a is full), the row 2500 W; one GPU a node, no other
 * draw. The curves' paths into *cv and *sc. */
static void
two_racks(struct test *t, const char **cv, const char **sc)
{
    static const char curves[] = "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                                 "a1,h100-sxm,1,200,0.001,tokens/s,200\n"
                                 "a1,h100-sxm,1,700,500,tokens/s,700\n"
                                 "a2,h100-sxm,1,200,0.001,tokens/s,200\n"
                                 "a2,h100-sxm,1,400,400,tokens/s,400\n"
                                 "a2,h100-sxm,1,700,550,tokens/s,700\n"
                                 "b1,h100-sxm,2,200,0.001,tokens/s,200\n"
                                 "b1,h100-sxm,2,500,900,tokens/s,500\n"
                                 "b1,h100-sxm,2,700,900.001,tokens/s,700\n";
    static const char tree[] =
        "scenario = { facility = { gpus = 4; gpus_per_node = 1; gpu = \"h100-sxm\"; "
        "node_other_w = 0.0; tree = { name = \"row\"; limit_w = 2500.0; children = ( "
        "{ name = \"rack-a\"; limit_w = 1200.0; nodes = 2; }, "
        "{ name = \"rack-b\"; limit_w = 2500.0; nodes = 2; } ); }; }; };\n";

    *cv = test_write(t, 0, "c.csv", curves);
    *sc = test_write(t, 1, "t.cfg", tree);
}

/* The caps equal gives the two racks, by hand: rack-a's two GPUs at 1200 / 2 = 600 W, the
 * row's 2500 W leaving b1 (2500 - 1200) / 2 = 650 W a GPU. */
static void
equal_caps(struct test *t, const char *out)
{
    CHECK(strstr(out, "a1,1,600.000,") != NULL);
    CHECK(strstr(out, "a2,1,600.000,") != NULL);
    CHECK(strstr(out, "b1,2,650.000,") != NULL);
}

/* alloc --tree on the two racks: equal's caps by hand; every node's limit held by every
 * tree-aware answer; the others say they do not divide under a tree. */
void
test_tree_alloc(struct test *t)
{
    const char *cv, *sc;
    char args[1200], *out = NULL, *err = NULL;

    two_racks(t, &cv, &sc);
    snprintf(args, sizeof args, "alloc %s --budget-w 1e6 --tree %s --policy equal --caps", cv, sc);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    equal_caps(t, out);
    free(out);
    free(err);
    snprintf(args, sizeof args, "alloc %s --budget-w 1e6 --tree %s --json", cv, sc);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(out,
                 "\"error\": \"sla does not divide power under a tree of limits (a policy "
                 "does with allocate_tree, policy ABI 3; pfisim's: equal, pfi, oracle)\"") != NULL);
    free(out);
    free(err);
    snprintf(args, sizeof args, "alloc %s --budget-w 1e6 --tree %s", cv, sc);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    /* the table: those that do not, named in one list */
    CHECK(strstr(out, "not under a tree (no allocate_tree, policy ABI 3): static-tag "
                      "fair-headroom sla") != NULL);
    /* the fullest rack-a under equal, pfi and the oracle: at most its 1.2 kW */
    CHECK(strstr(out, "  rack-a                        1.2        1.2        1.2        1.2\n") !=
          NULL);
    CHECK(strstr(out, "binds nothing") == NULL); /* the budget does not, the racks do */
    free(out);
    free(err);
}

/* A job larger than any rack takes whole racks alone, held by their own limits: a 4-GPU job
 * on two racks of 2 GPUs under 1000 W each runs at most 1000 / 2 = 500 W a GPU; under 300 W
 * racks (150 W a GPU, below its 200 W lowest cap) it is refused, named. */
void
test_tree_whole_racks(struct test *t)
{
    static const char curves[] = "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                                 "big,h100-sxm,4,200,1,tokens/s,200\n"
                                 "big,h100-sxm,4,700,10,tokens/s,700\n";
    const char *cv = test_write(t, 0, "wr.csv", curves);
    char cfg[600], args[1400], *out = NULL, *err = NULL;

    for (int tight = 0; tight < 2; tight++) {
        snprintf(cfg, sizeof cfg,
                 "scenario = { facility = { gpus = 4; gpus_per_node = 1; gpu = \"h100-sxm\"; "
                 "node_other_w = 0.0; tree = { name = \"row\"; children = ( { name = \"rack\"; "
                 "count = 2; limit_w = %s; nodes = 2; } ); }; }; };\n",
                 tight ? "300.0" : "1000.0");
        snprintf(args, sizeof args, "alloc %s --budget-w 5000 --tree %s --policy equal --caps", cv,
                 test_write(t, 1, "wr.cfg", cfg));
        if (!tight) {
            CHECK_INT(test_run(t, args, &out, &err), 0);
            CHECK(strstr(out, "big,4,500.000,") != NULL);
        } else {
            CHECK_INT(test_run(t, args, &out, &err), 3);
            CHECK(strstr(err, "job 'big' holds whole racks whose limits leave it 150 W a GPU, "
                              "below its lowest cap of 200 W") != NULL);
        }
        free(out);
        free(err);
    }
}

/* The policy ABI under a tree: the shipped example, an ABI 3 plugin with allocate_tree,
 * divides under it as the built-in equal does; an ABI 2 plugin still divides a budget and is
 * refused under a tree, by name. */
void
test_tree_plugins(struct test *t)
{
    const char *cv, *sc;
    char so3[600], so2[600], args[2000], *out = NULL, *err = NULL;

    if (!test_plugin("equal-plugin.so", so3, sizeof so3) ||
        !test_plugin("test-abi2.so", so2, sizeof so2))
        SKIP("no plugins beside the binary (make plugins)");
    two_racks(t, &cv, &sc);
    snprintf(args, sizeof args,
             "alloc %s --budget-w 1e6 --tree %s --policy-lib %s --policy equal-plugin --caps", cv,
             sc, so3);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    equal_caps(t, out);
    free(out);
    free(err);
    snprintf(args, sizeof args, "alloc %s --budget-w 1e6 --tree %s --policy-lib %s --json", cv, sc,
             so2);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(out, "old-equal does not divide power under a tree of limits (a policy does "
                      "with allocate_tree, policy ABI 3") != NULL);
    free(out);
    free(err);
    /* without a tree the ABI 2 library divides the budget as equal does: 2,100 W over 4 GPUs */
    snprintf(args, sizeof args,
             "alloc %s --budget-w 2100 --policy-lib %s --policy old-equal --caps", cv, so2);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(out, "a1,1,525.000,") != NULL && strstr(out, "b1,2,525.000,") != NULL);
    free(out);
    free(err);
}

/* The external-process protocol under a tree: a program whose handshake says "tree": true is
 * sent the tree with each decision (here it answers every job's lowest cap only when it got
 * the two racks' tree, its top cap otherwise); one that does not say so is refused under a
 * tree by name. */
void
test_tree_exec(struct test *t)
{
    static const char prog[] =
        "import json, sys\n"
        "sys.stdin.readline()\n"
        "print(json.dumps({'protocol': 1, 'name': sys.argv[1], 'tree': sys.argv[1] == 'py-tree'}),"
        " flush=True)\n"
        "for line in sys.stdin:\n"
        "    d = json.loads(line)\n"
        "    t = d.get('tree')\n"
        "    ok = t is not None and t['parent'] == [-1, 0, 0] and t['job_node'] == [1, 1, 2] and "
        "t['name'][1] == 'rack-a' and t['limit_w'][1] == 1200\n"
        "    caps = [j['min_w'] if ok else j['max_w'] for j in d['jobs']]\n"
        "    print(json.dumps({'decision': d['decision'], 'cap_w': caps}), flush=True)\n";
    const char *cv, *sc, *py = test_write(t, 2, "p.py", prog);
    char args[2000], *out = NULL, *err = NULL;

    if (system("command -v python3 >/dev/null 2>&1") != 0)
        SKIP("no python3");
    two_racks(t, &cv, &sc);
    snprintf(args, sizeof args,
             "alloc %s --budget-w 1e6 --tree %s --policy-exec 'python3 %s py-tree' --policy "
             "py-tree --caps",
             cv, sc, py);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(out, "a1,1,200.000,") != NULL && strstr(out, "a2,1,200.000,") != NULL &&
          strstr(out, "b1,2,200.000,") != NULL);
    free(out);
    free(err);
    snprintf(args, sizeof args,
             "alloc %s --budget-w 1e6 --tree %s --policy-exec 'python3 %s py-flat' --json", cv, sc,
             py);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(out, "py-flat does not divide power under a tree of limits") != NULL);
    free(out);
    free(err);
}

/* ----- the engine holding the tree (sim/nodes.c) ----- */

/* A corpus of one curve, c1 on the H200 (one GPU: 100 tokens/s at 200 W rising 0.2 per W to
 * 200 at 700 W, drawing 10 W below its cap; idle 75 W), the workload's jobs, and a scenario
 * of 4 GPUs, one a node with no other draw and a PUE of 1, under the tree of tree_cfg (a
 * facility.tree setting), holding its limits, actuation at once, over hours. */
static void
tree_run_setup(struct test *t, const char *jobs, const char *tree_cfg, double hours,
               struct pfs_scenario *sc)
{
    char text[4096], cfg[2400];
    size_t used = 0;
    struct pfs_diag d = {0};

    used +=
        (size_t)snprintf(text, sizeof text, "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n");
    for (int k = 0; k <= 10; k++) {
        double cap = 200 + 50.0 * k;

        used +=
            (size_t)snprintf(text + used, sizeof text - used, "c1,h200-sxm,1,%g,%g,tokens/s,%g\n",
                             cap, 100 + 0.2 * (cap - 200), cap - 10);
    }
    test_write(t, 0, "curves.csv", text);
    test_write(t, 1, "jobs.csv",
               "job_id,gpu,split,twin_id,n_gpus,family,phase,params_b,active_params_b,seq_len,"
               "micro_batch,tp,pp,dp,ep,power_w,power_frac,sm_clock_mhz,sm_active,tensor_active,"
               "dram_active,nvlink_gbps,net_gbps,tokens_per_s,pfi_10,pfi_20,pfi_30,pfi_40,pfi_50\n"
               "c1,h200-sxm,train,,1,dense,pretrain,7,7,4096,1,1,1,1,1,690,0.9857,1980,0.9,"
               "0.6,0.3,2,0.5,200,,,,,\n");
    test_write(t, 2, "w.csv", jobs);
    snprintf(cfg, sizeof cfg,
             "scenario = { name = \"racks\"; duration_days = %.17g; facility = { gpus = 4; "
             "gpus_per_node = 1; gpu = \"h200-sxm\"; node_other_w = 0.0; pue = 1.0; %s }; "
             "workload = { corpus = \"%s\"; file = \"%s/w.csv\"; }; dr_events = (); "
             "control = { cadence_s = 100.0; event_cadence_s = 100.0; actuation_s = 0.0; "
             "track_power = false; }; };\n",
             hours / 24, tree_cfg, t->tmpdir, t->tmpdir);
    CHECK_INT(pfs_scenario_parse(cfg, "racks.cfg", sc, &d), 0);
    if (d.message[0])
        test_fail(t, __FILE__, __LINE__, "%s", d.message);
}

/* Two racks of two GPUs under 300 W each, three one-GPU jobs of 720,000 tokens at 0 s. By
 * hand: a job's floor is 190 W at 200 W; a rack's other GPU idles at 75. a goes into rack-a
 * (75 + 190 = 265 W fits 300); b does not fit beside it (190 + 190 = 380), so goes on to
 * rack-b; c fits neither and waits. a and b alone in their racks get 300 - 75 = 225 W caps
 * (equal and the oracle alike: one job a rack), 100 + 0.2 x 25 = 105 tokens/s, so finish at
 * 720,000 / 105 = 6,857.14 s. c then starts in rack-a, where at full draw it would not fit
 * (75 + 690 > 300): it waits at idle for the controller's next decision, at 6,900 s (its
 * cadence, 100 s), and runs as long as a and b from there. Every rack's minutes: 75 + 215 =
 * 290 W while its job runs, 150 W idle, never over 300. */
void
test_tree_run_closed(struct test *t)
{
    static const char racks[] =
        "tree = { name = \"row\"; children = ( { name = \"rack-a\"; limit_w = 300.0; nodes = 2; }, "
        "{ name = \"rack-b\"; limit_w = 300.0; nodes = 2; } ); };";
    struct pfs_scenario *sc = malloc(sizeof *sc);
    const double run_s = 720000.0 / 105;
    const char *policies[] = {"equal", "oracle"}; /* (pfi: this corpus gives it no PFI) */

    tree_run_setup(t,
                   "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier\n"
                   "a,0,c1,1,720000,100000,firm\n"
                   "b,0,c1,1,720000,100000,firm\n"
                   "c,0,c1,1,720000,100000,firm\n",
                   racks, 4, sc);
    for (size_t k = 0; k < 2; k++) {
        struct pfs_run_result r;
        struct pfs_job_result j[3];

        if (test_sim_scenario(t, sc, policies[k], &r, j))
            break;
        CHECK_NEAR(j[0].start_s, 0, 0);
        CHECK_NEAR(j[1].start_s, 0, 0);
        CHECK_NEAR(j[0].finish_s, run_s, 2e-6);
        CHECK_NEAR(j[1].finish_s, run_s, 2e-6);
        CHECK_NEAR(j[2].start_s, run_s, 2e-6);
        CHECK_NEAR(j[2].finish_s, 6900 + run_s, 4e-6);
        CHECK_INT(r.jobs_held_back, 1);
        CHECK_INT(r.tree_waits, 0);
        CHECK_INT(r.n_tree, 3);
        if (r.n_tree == 3) {
            CHECK(strcmp(r.tree[1].name, "rack-a") == 0);
            CHECK_NEAR(r.tree[1].peak_w, 290, 1e-6);
            CHECK_NEAR(r.tree[2].peak_w, 290, 1e-6);
            CHECK_NEAR(r.tree[1].minutes_over + r.tree[2].minutes_over, 0, 0);
            /* rack-a: 290 W while a, then c, run; 150 W (two idle GPUs) for the rest, c's
             * launch included */
            CHECK_NEAR(r.tree[1].energy_j, 290 * 2 * run_s + 150 * (4 * 3600 - 2 * run_s), 1e-3);
            /* the facility (PUE 1) is the root: the same energy, integrated otherwise */
            CHECK_NEAR(r.tree[0].energy_j, r.energy_j, 1e-6 * r.energy_j);
            CHECK_NEAR(r.tree[0].energy_j, r.tree[1].energy_j + r.tree[2].energy_j, 1e-3);
        }
        pfs_run_result_free(&r);
    }
    /* spread: the same (each job alone in a rack either way) */
    free(sc);
}

/* Two racks under a row of 700 W, below the feed: caps by hand, held in a run. Jobs a and b,
 * one GPU each, packed into rack-1 (1,000 W: 2 x 690 would not fit, 2 x 265 does); rack-2
 * idles (150 W). The row leaves 700 - 150 = 550 W of caps: equal gives each 275 W, 115
 * tokens/s, and both finish at 1,150,000 / 115 = 10,000 s, the row at 2 x 265 + 150 = 680 W.
 * The oracle, on one linear curve (every split of the row's watts above the floors as good),
 * gives the 150 W above both floors to the first in slot order, its rule for ties: a at 350
 * W (130 tokens/s) finishes at 1,150,000 / 130 = 8,846.15 s; b, at 100 tokens/s until the
 * controller's next decision (8,900 s: its cadence is 100 s), then alone gets all the row
 * allows, 700 - 75 - 150 = 475 W (155 tokens/s, 690 W in the row), and finishes
 * (1,150,000 - 100 x 8,900) / 155 = 1,677.42 s later. */
void
test_tree_run_row(struct test *t)
{
    static const char tree[] =
        "tree = { name = \"feed\"; children = ( { name = \"row\"; limit_w = 700.0; children = ( "
        "{ name = \"rack\"; count = 2; limit_w = 1000.0; nodes = 2; } ); } ); };";
    struct pfs_scenario *sc = malloc(sizeof *sc);
    const char *policies[] = {"equal", "oracle"};

    tree_run_setup(t,
                   "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier\n"
                   "a,0,c1,1,1150000,100000,firm\n"
                   "b,0,c1,1,1150000,100000,firm\n",
                   tree, 4, sc);
    for (size_t k = 0; k < 2; k++) {
        struct pfs_run_result r;
        struct pfs_job_result j[2];

        if (test_sim_scenario(t, sc, policies[k], &r, j))
            break;
        CHECK_INT(r.n_tree, 4);
        if (r.n_tree != 4) {
            pfs_run_result_free(&r);
            break;
        }
        CHECK(strcmp(r.tree[1].name, "row") == 0 && strcmp(r.tree[2].name, "row/rack-1") == 0);
        CHECK_NEAR(r.tree[1].minutes_over, 0, 0);
        CHECK_NEAR(r.tree[3].peak_w, 150, 1e-9); /* rack-2: idle throughout */
        if (k == 0) {
            CHECK_NEAR(j[0].finish_s, 10000, 2e-6);
            CHECK_NEAR(j[1].finish_s, 10000, 2e-6);
            CHECK_NEAR(r.tree[1].peak_w, 680, 1e-6);
        } else {
            double a = 1150000.0 / 130;

            CHECK_NEAR(j[0].finish_s, a, 2e-6);
            CHECK_NEAR(j[1].finish_s, 8900 + (1150000 - 100 * 8900.0) / 155, 4e-6);
            CHECK_NEAR(r.tree[1].peak_w, 690, 1e-6);
        }
        pfs_run_result_free(&r);
    }
    /* spread: b goes to the rack with the most room, rack-2; the same caps (the row binds,
     * not the racks), each rack at 265 + 75 = 340 W where packed had 530 and 150 */
    sc->tree.spread = true;
    {
        struct pfs_run_result r = {0};
        struct pfs_job_result j[2];

        if (test_sim_scenario(t, sc, "equal", &r, j) == 0 && r.n_tree == 4) {
            CHECK_NEAR(j[0].finish_s, 10000, 2e-6);
            CHECK_NEAR(r.tree[2].peak_w, 340, 1e-6);
            CHECK_NEAR(r.tree[3].peak_w, 340, 1e-6);
        }
        pfs_run_result_free(&r);
    }
    free(sc);
}

/* A tree of one node is the facility under its limit as a cap: the same run, byte for byte,
 * as cap_w = limit x PUE without a tree (run --csv), and one with no limit below its root the
 * same numbers as that cap. */
void
test_tree_run_one_node(struct test *t)
{
    static const char base[] =
        "scenario = { name = \"one\"; duration_days = 2.0; facility = { gpus = 256; "
        "gpus_per_node = 8; gpu = \"h100-sxm\"; node_other_w = 4600.0; pue = 1.25; %s }; "
        "policies = [\"equal\", \"pfi\", \"oracle\"]; };\n";
    const char *with[] = {"cap_w = \"300 kW\";",
                          "tree = { name = \"hall\"; limit_w = \"240 kW\"; nodes = 32; };",
                          "tree = { name = \"hall\"; limit_w = \"240 kW\"; children = ( { name = "
                          "\"rack\"; count = 8; nodes = 4; } ); };"};
    char cfg[1200], args[800], *out[3] = {NULL}, *err[3] = {NULL};

    for (int k = 0; k < 3; k++) {
        snprintf(cfg, sizeof cfg, base, with[k]);
        snprintf(args, sizeof args, "run %s --csv", test_write(t, k, "one.cfg", cfg));
        CHECK_INT(test_run(t, args, &out[k], &err[k]), 0);
    }
    CHECK(out[0] && out[1] && strcmp(out[0], out[1]) == 0);
    CHECK(out[0] && out[2] && strcmp(out[0], out[2]) == 0);
    for (int k = 0; k < 3; k++) {
        free(out[k]);
        free(err[k]);
    }
    /* a root below the idle hall (32 nodes at 4.6 kW and more) is refused as such a cap_w is;
     * until 8 December it ran, and no job ever started */
    snprintf(cfg, sizeof cfg, base,
             "tree = { name = \"hall\"; limit_w = \"100 kW\"; nodes = 32; };");
    snprintf(args, sizeof args, "run %s", test_write(t, 3, "low.cfg", cfg));
    CHECK_INT(test_run(t, args, &out[0], &err[0]), 3);
    CHECK(strstr(err[0], "scenario.facility.tree: the root's limit of 100000 W (IT power) is below "
                         "the facility's idle draw") != NULL);
    free(out[0]);
    free(err[0]);
}

/* The shipped hall over its week: every node of the tree at or under its limit in every
 * minute, for equal, pfi and the oracle (run --json), the root's energy the facility's over
 * its PUE, and the rows' the root's; under "report" the same tree may go over. */
void
test_tree_run_hall(struct test *t)
{
    char args[800], *out = NULL, *err = NULL;
    const char *p;
    int runs = 0;

    snprintf(args, sizeof args, "run configs/power-tree.cfg --json --days 2");
    CHECK_INT(test_run(t, args, &out, &err), 0);
    for (p = out; p && (p = strstr(p, "\"minutes_over\": ")) != NULL; p++)
        if (strtod(p + 16, NULL) > 0)
            test_fail(t, __FILE__, __LINE__, "a node over its limit: %.60s", p);
    for (p = out; p && (p = strstr(p, "\"energy_j\": ")) != NULL; p++) {
        /* a run's facility energy, then its tree's root's: IT power, the facility's / PUE */
        double fac = strtod(p + 12, NULL), root;
        const char *r = strstr(p, "\"tree\": [");

        if (!r || !(r = strstr(r, "\"energy_j\": ")))
            break;
        root = strtod(r + 12, NULL);
        CHECK_NEAR(root, fac / 1.3, 1e-9 * fac);
        runs++;
        if (!(p = strstr(r, "]}")))
            break;
    }
    CHECK_INT(runs, 3);
    free(out);
    free(err);
    /* the database: a row per node and run (1 + 4 + 32 nodes, 3 policies), none over; the
     * figure of the tree from it */
    {
        const char *db = test_write(t, 0, "h.db", "");
        char dir[700];
        sqlite3 *h = NULL;
        sqlite3_stmt *q = NULL;

        remove(db);
        snprintf(args, sizeof args, "run configs/power-tree.cfg --days 1 --db %s", db);
        CHECK_INT(test_run(t, args, &out, &err), 0);
        free(out);
        free(err);
        CHECK_INT(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        CHECK_INT(sqlite3_prepare_v2(h,
                                     "SELECT count(*), sum(minutes_over), count(limit_w), "
                                     "max(peak_w / limit_w) FROM tree_result",
                                     -1, &q, NULL),
                  SQLITE_OK);
        if (q && sqlite3_step(q) == SQLITE_ROW) {
            CHECK_INT(sqlite3_column_int(q, 0), 111);
            CHECK_NEAR(sqlite3_column_double(q, 1), 0, 0);
            CHECK_INT(sqlite3_column_int(q, 2), 111); /* every node has a limit */
            CHECK(sqlite3_column_double(q, 3) <= 1 + 1e-9);
        }
        sqlite3_finalize(q);
        sqlite3_close(h);
        snprintf(dir, sizeof dir, "%s/figs", t->tmpdir);
        snprintf(args, sizeof args, "plot %s -o %s --only tree", db, dir);
        CHECK_INT(test_run(t, args, &out, &err), 0);
        CHECK(strstr(out, "/figs/tree.png") != NULL);
        free(out);
        free(err);
        snprintf(args, sizeof args, "report %s -o %s/r.pdf", db, t->tmpdir); /* (its page too) */
        CHECK_INT(test_run(t, args, &out, &err), 0);
        free(out);
        free(err);
    }
}

/* study tree on the shipped hall, a day, one seed: rows of 6 racks (their nameplate 0.98 of
 * the 250 kW busway) never reach the limit, none of 9 goes over it, and 12 (192 nodes idling
 * at 4.6 kW and more each, past the 900 kW feed) is marked past what the tree can run. */
void
test_tree_study(struct test *t)
{
    char args[800], path[700], *out = NULL, *err = NULL, *csv;
    const char *p;
    int rows = 0;

    snprintf(args, sizeof args, "study tree --racks 6,9,12 --seeds 1 --days 1 -o %s", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(out, "past the tree: a job's floor fits no rack, or the feed < idle") != NULL);
    snprintf(path, sizeof path, "%s/study-tree.csv", t->tmpdir);
    csv = test_slurp(path);
    CHECK(csv != NULL);
    for (p = csv; p && (p = strchr(p, '\n')) != NULL && p[1]; p++) {
        long racks = strtol(p + 1, NULL, 10);
        const char *f = p + 1;
        double v[14];
        int k = 0;

        rows++;
        for (; k < 14 && f; k++) { /* the fields, empty ones NAN */
            v[k] = *f == ',' || *f == '\n' ? (double)NAN : strtod(f, NULL);
            f = strchr(f, ',');
            f = f ? f + 1 : NULL;
        }
        if (racks == 6)
            CHECK_NEAR(v[11], 0, 0); /* the rows' minutes at their limit */
        if (racks == 12)
            CHECK(isnan(v[5]));
        else
            CHECK_NEAR(v[13], 0, 0); /* no node over its limit */
    }
    CHECK_INT(rows, 9);
    free(csv);
    free(out);
    free(err);
}
