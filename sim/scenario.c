/*
 * sim/scenario.c - scenarios: the embedded default and the libconfig reader
 * (docs/scenarios.md has an annotated example, setting by setting).
 *
 * A file gives only what differs from the default. Every setting is checked for its type and
 * range, and a name the reader does not know is an error too (a typo must not silently leave
 * a default in place); messages are `file:line: setting.path: message`, libconfig knowing
 * lines but not columns.
 */
#include <errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <libconfig.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

void
pfs_scenario_default(struct pfs_scenario *sc)
{
    /* all but the events: the three below are set whole, the rest never read (pfisim.h) */
    memset(sc, 0, offsetof(struct pfs_scenario, dr));
    memset(&sc->dr[PFS_MAX_DR], 0, sizeof *sc - offsetof(struct pfs_scenario, dr) - sizeof sc->dr);
    pfs__strlcpy(sc->name, "default", sizeof sc->name);
    sc->gpus = 1024;
    sc->gpus_per_node = 8;
    pfs__strlcpy(sc->gpu, "h200-sxm", sizeof sc->gpu);
    sc->node_other_w = 1500; /* CPUs, memory, NICs, fans of an 8-GPU node (docs/simulator.md) */
    sc->pue = 1.3;
    sc->base_cap_w = 0;
    sc->var = (struct pfs_variability){0, 0, 1.0 / 1.5};
    sc->var_seed = 1;
    if (pfs__resolve_path(NULL, "traces/h200-h100", sc->corpus, sizeof sc->corpus) != 0)
        pfs__strlcpy(sc->corpus, "traces/h200-h100", sizeof sc->corpus);
    pfs_workload_defaults(&sc->arrivals);
    /* Microsoft ITP cluster 04's fitted model: many concurrent training jobs of 1-64 GPUs, at
     * 90% offered load (docs/simulator.md says why not Kalos). */
    pfs__strlcpy(sc->arrivals_source, "fitted:itp:cluster04", sizeof sc->arrivals_source);
    sc->arrivals.load = 0.9;
    sc->days = 7;
    sc->seed = 1;
    /* Three 3-hour 30% cuts in the evening peak (17:00-20:00) of days 2, 4 and 6. */
    for (int k = 0; k < 3; k++) {
        double day = 1 + 2 * k;

        sc->dr[k] = (struct pfs_dr_event){.start_s = (day * 24 + 17) * 3600,
                                          .end_s = (day * 24 + 20) * 3600,
                                          .ramp_s = 15 * 60,
                                          .cut_frac = 0.3,
                                          .notice_s = INFINITY};
    }
    sc->n_dr = 3;
    sc->cadence_s = 300;
    sc->event_cadence_s = 60;
    sc->actuation_s = 30;
    sc->resume_s = 120;
    sc->track_power = false; /* budget caps: complies, at some throughput (docs/simulator.md) */
    sc->n_policies = 4;
    pfs__strlcpy(sc->policies[0], "equal", sizeof sc->policies[0]);
    pfs__strlcpy(sc->policies[1], "pfi", sizeof sc->policies[1]);
    pfs__strlcpy(sc->policies[2], "oracle", sizeof sc->policies[2]);
    pfs__strlcpy(sc->policies[3], "sla", sizeof sc->policies[3]);
    /* Assumptions, not measurements (docs/pricing.md says where each comes from). */
    sc->price.gpu_hour_usd = 2.5;
    sc->price.capacity_usd_kw_year = 60;
    sc->price.energy_usd_mwh = 200;
}

struct reader {
    const char *file;
    struct pfs_diag *diag;
    bool stored; /* the text of a stored run (pfs_scenario_parse): data, never code */
};

/* "unknown GPU profile 'x'; did you mean 'y'? (pfisim gpus)" (a static buffer). */
static const char *
unknown_gpu(const char *name)
{
    static char msg[160];
    char hint[80];

    snprintf(msg, sizeof msg, "unknown GPU profile '%.40s'%s (pfisim gpus)", name,
             pfs__did_you_mean(pfs__gpu_nearest(name), hint, sizeof hint));
    return msg;
}

static int
bad(const struct reader *r, const config_setting_t *s, const char *path, const char *msg)
{
    return pfs__diag_set(r->diag, PFS_EINVAL, r->file, s ? config_setting_source_line(s) : 0, 0,
                         path, "%s: %s", path, msg);
}

/* A number setting (int or float) within [lo, hi]; absent leaves *out. */
static int
number(const struct reader *r, const config_setting_t *g, const char *name, const char *path,
       double lo, double hi, double *out)
{
    config_setting_t *s = config_setting_get_member(g, name);

    return s ? pfs__config_number(s, path, lo, hi, out, r->file, r->diag) : 0;
}

static int
string(const struct reader *r, const config_setting_t *g, const char *name, const char *path,
       char *dst, size_t size)
{
    config_setting_t *s = config_setting_get_member(g, name);

    if (!s)
        return 0;
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
        return bad(r, s, path, "expected a string");
    if (!pfs__strlcpy(dst, config_setting_get_string(s), size))
        return bad(r, s, path, "too long");
    return 0;
}

/* Rejects members of g not in names (a NULL-terminated list). */
static int
only(const struct reader *r, const config_setting_t *g, const char *prefix,
     const char *const *names)
{
    return pfs__config_only(g, prefix, names, r->file, r->diag);
}

/* A whole number setting within [lo, hi]; absent leaves *out. */
static int
whole(const struct reader *r, const config_setting_t *g, const char *name, const char *path,
      double lo, double hi, int *out)
{
    double v = *out;
    int rc = number(r, g, name, path, lo, hi, &v);

    if (rc == 0 && floor(v) < v)
        return bad(r, config_setting_get_member(g, name), path, "expected a whole number");
    *out = (int)v;
    return rc;
}

/* facility.pools: ( { name; gpu; gpus; gpus_per_node; node_other_w; }, ... ). */
static int
read_pools(const struct reader *r, const config_setting_t *l, struct pfs_scenario *sc)
{
    static const char *const names[] = {"name",          "gpu",          "gpus",
                                        "gpus_per_node", "node_other_w", NULL};
    int total = 0;

    if (!config_setting_is_list(l) || config_setting_length(l) < 1 ||
        config_setting_length(l) > PFS_MAX_POOLS)
        return bad(r, l, "scenario.facility.pools", "expected a list of 1 to 8 pools ( {...}, )");
    sc->n_pools = 0;
    for (int i = 0; i < config_setting_length(l); i++) {
        const config_setting_t *e = config_setting_get_elem(l, (unsigned)i);
        struct pfs_pool *p = &sc->pools[sc->n_pools];
        char path[64], sub[96];
        struct pfs_gpu g;
        int rc;

        snprintf(path, sizeof path, "scenario.facility.pools.[%d]", i);
        *p =
            (struct pfs_pool){.gpus_per_node = sc->gpus_per_node, .node_other_w = sc->node_other_w};
        if (!config_setting_is_group(e))
            return bad(r, e, path, "expected a group");
#define SUB(n) (snprintf(sub, sizeof sub, "%s.%s", path, n), sub)
        if ((rc = only(r, e, path, names)) ||
            (rc = string(r, e, "name", SUB("name"), p->name, sizeof p->name)) ||
            (rc = string(r, e, "gpu", SUB("gpu"), p->gpu, sizeof p->gpu)) ||
            (rc = whole(r, e, "gpus", SUB("gpus"), 1, 1e7, &p->gpus)) ||
            (rc = whole(r, e, "gpus_per_node", SUB("gpus_per_node"), 1, 64, &p->gpus_per_node)) ||
            (rc = number(r, e, "node_other_w", SUB("node_other_w"), 0, 1e5, &p->node_other_w)))
            return rc;
        if (!p->gpu[0] || p->gpus < 1)
            return bad(r, e, path, "a pool needs gpu and gpus");
        if (pfs_gpu_find(p->gpu, &g, NULL) != 0)
            return bad(r, config_setting_get_member(e, "gpu"), SUB("gpu"), unknown_gpu(p->gpu));
#undef SUB
        if (!p->name[0])
            pfs__strlcpy(p->name, p->gpu, sizeof p->name);
        for (size_t k = 0; k < sc->n_pools; k++)
            if (strcmp(sc->pools[k].name, p->name) == 0)
                return bad(r, e, path, "two pools of the same name (give each a name)");
        total += p->gpus;
        sc->n_pools++;
    }
    sc->gpus = total;
    pfs__strlcpy(sc->gpu, sc->pools[0].gpu, sizeof sc->gpu);
    return 0;
}

/* facility.variability = { eta_sd; outliers; outlier_eta; seed; } (docs/model.md section 6). */
static int
read_variability(const struct reader *r, const config_setting_t *v, struct pfs_scenario *sc)
{
    static const char *const names[] = {"eta_sd", "outliers", "outlier_eta", "seed", NULL};
    double seed = (double)sc->var_seed;
    int rc;

    if (!config_setting_is_group(v))
        return bad(r, v, "scenario.facility.variability", "expected a group { eta_sd = ...; }");
    if ((rc = only(r, v, "scenario.facility.variability", names)) ||
        (rc = number(r, v, "eta_sd", "scenario.facility.variability.eta_sd", 0, 0.1,
                     &sc->var.eta_sd)) ||
        (rc = number(r, v, "outliers", "scenario.facility.variability.outliers", 0, 1,
                     &sc->var.outlier_frac)) ||
        (rc = number(r, v, "outlier_eta", "scenario.facility.variability.outlier_eta", 0.5, 1,
                     &sc->var.outlier_eta)) ||
        (rc = number(r, v, "seed", "scenario.facility.variability.seed", 0, 4294967295.0, &seed)))
        return rc;
    if (floor(seed) < seed)
        return bad(r, config_setting_get_member(v, "seed"), "scenario.facility.variability.seed",
                   "expected a whole number");
    sc->var_seed = (unsigned long)seed;
    return 0;
}

/* One entry of facility.tree and, depth first, its children (docs/scenarios.md, "The power
 * tree"). */
static int
read_tree_node(const struct reader *r, const config_setting_t *g, struct pfs_scenario *sc,
               int parent, const char *path, int depth)
{
    static const char *const names[] = {"name", "limit_w",  "count", "nodes",
                                        "pool", "children", NULL};
    const config_setting_t *kids = config_setting_get_member(g, "children");
    char sub[200], pool[32] = "";
    struct pfs_tree_spec_node *n;
    int me, rc;

    if (!config_setting_is_group(g))
        return bad(r, g, path, "expected a group { name; limit_w; children or nodes; }");
    if (sc->tree.n == PFS_MAX_TREE_SPEC)
        return bad(r, g, path, "at most 32 entries (count = N makes N copies of one)");
    if (depth >= 8)
        return bad(r, g, path, "at most 8 levels");
    me = (int)sc->tree.n++;
    n = &sc->tree.node[me];
    *n = (struct pfs_tree_spec_node){.count = 1, .parent = parent};
#define SUB(x) (snprintf(sub, sizeof sub, "%s.%s", path, x), sub)
    if ((rc = only(r, g, path, names)) ||
        (rc = string(r, g, "name", SUB("name"), n->name, sizeof n->name)) ||
        (rc = number(r, g, "limit_w", SUB("limit_w"), 1, 1e12, &n->limit_w)) ||
        (rc = whole(r, g, "count", SUB("count"), 1, 10000, &n->count)) ||
        (rc = whole(r, g, "nodes", SUB("nodes"), 1, 1e6, &n->nodes)) ||
        (rc = string(r, g, "pool", SUB("pool"), pool, sizeof pool)))
        return rc;
    if (!n->name[0] || strspn(n->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789._-") != strlen(n->name))
        return bad(r, g, SUB("name"), "a node needs a name of letters, digits, '.', '_', '-'");
    if (parent < 0 && n->count != 1)
        return bad(r, g, SUB("count"), "the root is one node");
    if (kids && n->nodes > 0)
        return bad(r, g, path,
                   "a node holds nodes (a rack) or has children (a row, a feed), not both");
    if (!kids && n->nodes == 0)
        return bad(r, g, path, "a node without children is a rack: give its nodes = N");
    if (pool[0] && kids)
        return bad(r, g, SUB("pool"), "only a rack holds nodes of a pool");
    if (pool[0]) {
        struct pfs_pool pools[PFS_MAX_POOLS];
        size_t np = pfs_scenario_pools(sc, pools);

        for (n->pool = 0; (size_t)n->pool < np && strcmp(pools[n->pool].name, pool) != 0; n->pool++)
            ;
        if ((size_t)n->pool == np)
            return bad(r, config_setting_get_member(g, "pool"), SUB("pool"),
                       "no pool of that name in the facility");
    }
    for (int k = 0; k < me; k++)
        if (sc->tree.node[k].parent == parent && strcmp(sc->tree.node[k].name, n->name) == 0)
            return bad(r, g, SUB("name"), "two nodes of one parent share a name");
#undef SUB
    if (kids) {
        if (!config_setting_is_list(kids) || config_setting_length(kids) < 1)
            return bad(r, kids, path, "children: expected a list ( {...}, {...} )");
        for (int i = 0; i < config_setting_length(kids); i++) {
            char kp[200];

            snprintf(kp, sizeof kp, "%s.children.[%d]", path, i);
            if ((rc = read_tree_node(r, config_setting_get_elem(kids, (unsigned)i), sc, me, kp,
                                     depth + 1)) != 0)
                return rc;
        }
    }
    return 0;
}

/* facility.tree: read, then its racks must hold the facility's nodes, each pool's all. */
static int
read_tree(const struct reader *r, const config_setting_t *g, struct pfs_scenario *sc)
{
    struct pfs_pool pools[PFS_MAX_POOLS];
    size_t np = pfs_scenario_pools(sc, pools);
    double held[PFS_MAX_POOLS] = {0};
    int rc;

    sc->tree.n = 0;
    if ((rc = read_tree_node(r, g, sc, -1, "scenario.facility.tree", 0)) != 0)
        return rc;
    for (size_t k = 0; k < sc->tree.n; k++) {
        const struct pfs_tree_spec_node *n = &sc->tree.node[k];
        double copies = 1;

        for (int u = (int)k; u >= 0; u = sc->tree.node[u].parent)
            copies *= sc->tree.node[u].count;
        if (n->nodes > 0)
            held[n->pool] += copies * n->nodes;
    }
    for (size_t p = 0; p < np; p++) {
        long nodes = (pools[p].gpus + pools[p].gpus_per_node - 1) / pools[p].gpus_per_node;

        if (fabs(held[p] - (double)nodes) > 0) {
            char msg[200];

            snprintf(msg, sizeof msg,
                     "its racks hold %.0f nodes of pool '%s', which has %ld (%d GPUs, %d a node)",
                     held[p], pools[p].name, nodes, pools[p].gpus, pools[p].gpus_per_node);
            return bad(r, g, "scenario.facility.tree", msg);
        }
    }
    return 0;
}

static int
read_facility(const struct reader *r, const config_setting_t *f, struct pfs_scenario *sc)
{
    static const char *const names[] = {"gpus", "gpus_per_node", "gpu",   "node_other_w",
                                        "pue",  "cap_w",         "pools", "variability",
                                        "tree", "placement",     NULL};
    double gpus = sc->gpus, per = sc->gpus_per_node;
    config_setting_t *pools = config_setting_get_member(f, "pools"), *pl;
    struct pfs_gpu g;
    int rc;

    if ((rc = only(r, f, "scenario.facility", names)) ||
        (rc = number(r, f, "gpus", "scenario.facility.gpus", 1, 1e7, &gpus)) ||
        (rc = number(r, f, "gpus_per_node", "scenario.facility.gpus_per_node", 1, 64, &per)) ||
        (rc = string(r, f, "gpu", "scenario.facility.gpu", sc->gpu, sizeof sc->gpu)) ||
        (rc = number(r, f, "node_other_w", "scenario.facility.node_other_w", 0, 1e5,
                     &sc->node_other_w)) ||
        (rc = number(r, f, "pue", "scenario.facility.pue", 1, 3, &sc->pue)) ||
        (rc = number(r, f, "cap_w", "scenario.facility.cap_w", 0, 1e12, &sc->base_cap_w)))
        return rc;
    if (fabs(gpus - floor(gpus)) > 0 || fabs(per - floor(per)) > 0)
        return bad(r, f, "scenario.facility", "gpus and gpus_per_node must be whole numbers");
    sc->gpus = (int)gpus;
    sc->gpus_per_node = (int)per;
    if (config_setting_get_member(f, "variability") &&
        (rc = read_variability(r, config_setting_get_member(f, "variability"), sc)))
        return rc;
    if (pfs_gpu_find(sc->gpu, &g, NULL) != 0)
        return bad(r, config_setting_get_member(f, "gpu"), "scenario.facility.gpu",
                   unknown_gpu(sc->gpu));
    if (pools) {
        /* gpus_per_node and node_other_w given beside pools are the pools' defaults; gpus
         * and gpu would say the facility twice. */
        if (config_setting_get_member(f, "gpus") || config_setting_get_member(f, "gpu"))
            return bad(r, pools, "scenario.facility.pools",
                       "give either pools or gpus and gpu, not both");
        if ((rc = read_pools(r, pools, sc)) != 0)
            return rc;
    } else {
        sc->n_pools = 0;
    }
    sc->tree.n = 0;
    sc->tree.spread = false;
    if (config_setting_get_member(f, "tree") &&
        (rc = read_tree(r, config_setting_get_member(f, "tree"), sc)))
        return rc;
    if ((pl = config_setting_get_member(f, "placement")) != NULL) {
        const char *v = config_setting_get_string(pl);

        if (!v || (strcmp(v, "packed") != 0 && strcmp(v, "spread") != 0))
            return bad(r, pl, "scenario.facility.placement", "expected \"packed\" or \"spread\"");
        if (sc->tree.n == 0)
            return bad(r, pl, "scenario.facility.placement",
                       "placement is in the racks of a tree: give facility.tree");
        sc->tree.spread = strcmp(v, "spread") == 0;
    }
    return 0;
}

/* The workload settings given in w that the scenario's source of jobs does not read, said
 * in sc->workload_unread: beside a workload file, the arrivals and what shapes them (the
 * file has each job's submit time, size, tier and deadline); with arrivals other than
 * fitted:SOURCE, load (poisson:RATE has its rate, a real trace its own). Each did nothing
 * without a word. */
static void
unread_settings(const config_setting_t *w, struct pfs_scenario *sc)
{
    static const char *const beside_file[] = {"arrivals", "load", "tiers", "slack", "gpu_scale"};
    const char *given[5];
    size_t used = 0, n = 0;

    sc->workload_unread[0] = '\0';
    if (sc->workload[0]) {
        for (size_t k = 0; k < 5; k++)
            if (config_setting_get_member(w, beside_file[k]))
                given[n++] = beside_file[k];
        for (size_t k = 0; k < n && used < sizeof sc->workload_unread; k++)
            used += (size_t)snprintf(sc->workload_unread + used, sizeof sc->workload_unread - used,
                                     "%s%s",
                                     k == 0      ? "scenario.workload."
                                     : k + 1 < n ? ", "
                                                 : " and ",
                                     given[k]);
        if (n > 0 && used < sizeof sc->workload_unread)
            snprintf(sc->workload_unread + used, sizeof sc->workload_unread - used,
                     " %s nothing beside a workload file, which gives each job's submit time, "
                     "size, tier and deadline",
                     n > 1 ? "do" : "does");
    } else if (config_setting_get_member(w, "load") &&
               strncmp(sc->arrivals_source, "fitted:", 7) != 0) {
        snprintf(sc->workload_unread, sizeof sc->workload_unread,
                 "scenario.workload.load does nothing with arrivals '%s': only fitted:SOURCE "
                 "arrivals are scaled to a load",
                 sc->arrivals_source);
    }
}

static int
read_workload(const struct reader *r, const config_setting_t *w, struct pfs_scenario *sc)
{
    static const char *const names[] = {"corpus", "file",  "arrivals",  "load",
                                        "tiers",  "slack", "gpu_scale", NULL};
    double scale = sc->arrivals.gpu_scale;
    static const char *const tiers[] = {"firm", "flex1", "flex2", "flex3", NULL};
    config_setting_t *t, *sl;
    int rc;

    if ((rc = only(r, w, "scenario.workload", names)) ||
        (rc = string(r, w, "corpus", "scenario.workload.corpus", sc->corpus, sizeof sc->corpus)) ||
        (rc = string(r, w, "file", "scenario.workload.file", sc->workload, sizeof sc->workload)) ||
        (rc = string(r, w, "arrivals", "scenario.workload.arrivals", sc->arrivals_source,
                     sizeof sc->arrivals_source)) ||
        (rc = number(r, w, "load", "scenario.workload.load", 0, 10, &sc->arrivals.load)) ||
        (rc = number(r, w, "gpu_scale", "scenario.workload.gpu_scale", 1, 4096, &scale)))
        return rc;
    if (floor(scale) < scale)
        return bad(r, config_setting_get_member(w, "gpu_scale"), "scenario.workload.gpu_scale",
                   "expected a whole number");
    sc->arrivals.gpu_scale = (int)scale;
    if ((t = config_setting_get_member(w, "tiers")) != NULL) {
        double sum = 0;

        if (!config_setting_is_group(t))
            return bad(r, t, "scenario.workload.tiers", "expected a group of tier shares");
        if ((rc = only(r, t, "scenario.workload.tiers", tiers)))
            return rc;
        for (int k = 0; k < PFS_N_TIERS; k++) {
            char path[64];

            snprintf(path, sizeof path, "scenario.workload.tiers.%s", tiers[k]);
            sc->arrivals.tier_mix[k] = 0;
            if ((rc = number(r, t, tiers[k], path, 0, 1, &sc->arrivals.tier_mix[k])))
                return rc;
            sum += sc->arrivals.tier_mix[k];
        }
        if (fabs(sum - 1) > 1e-6)
            return bad(r, t, "scenario.workload.tiers", "shares must add up to 1");
    }
    if ((sl = config_setting_get_member(w, "slack")) != NULL) {
        if (!config_setting_is_array(sl) || config_setting_length(sl) != 2)
            return bad(r, sl, "scenario.workload.slack", "expected [low, high]");
        sc->arrivals.slack_lo = config_setting_get_float_elem(sl, 0);
        sc->arrivals.slack_hi = config_setting_get_float_elem(sl, 1);
        if (!(sc->arrivals.slack_lo >= 1 && sc->arrivals.slack_hi >= sc->arrivals.slack_lo))
            return bad(r, sl, "scenario.workload.slack", "need 1 <= low <= high (floats)");
    }
    unread_settings(w, sc);
    return 0;
}

/* One level: exactly one of cut and target_w. */
static int
level(const struct reader *r, const config_setting_t *g, const char *p, double *cut, double *target)
{
    int rc;

    *cut = *target = 0;
    if ((rc = number(r, g, "cut", p, 0, 1, cut)) ||
        (rc = number(r, g, "target_w", p, 0, 1e12, target)))
        return rc;
    if ((*cut > 0) == (*target > 0))
        return bad(r, g, p, "give exactly one of cut and target_w");
    return 0;
}

/* An event's steps: ( { at_min; cut | target_w; }, ... ), the first at 0, in time order,
 * each within the hold. */
static int
read_steps(const struct reader *r, const config_setting_t *l, const char *p, struct pfs_dr_event *e)
{
    static const char *const names[] = {"at_min", "cut", "target_w", NULL};
    char sp[96];

    snprintf(sp, sizeof sp, "%s.steps", p);
    if (!config_setting_is_list(l) || config_setting_length(l) < 1 ||
        config_setting_length(l) > PFS_MAX_DR_STEPS)
        return bad(r, l, sp, "expected a list of 1 to 4 steps ( { at_min; cut; }, ... )");
    for (int i = 0; i < config_setting_length(l); i++) {
        const config_setting_t *g = config_setting_get_elem(l, (unsigned)i);
        struct pfs_dr_step *st = &e->steps[i];
        double at = -1;
        char q[112];
        int rc;

        snprintf(q, sizeof q, "%s.[%d]", sp, i);
        if (!config_setting_is_group(g))
            return bad(r, g, q, "expected a group");
        if ((rc = only(r, g, q, names)) || (rc = number(r, g, "at_min", q, 0, 1e7, &at)) ||
            (rc = level(r, g, q, &st->cut_frac, &st->target_w)))
            return rc;
        st->at_s = at * 60;
        if (i == 0 && !(fabs(at) < 1e-12))
            return bad(r, g, q, "the first step is at_min = 0 (the event's start)");
        if (i > 0 && !(st->at_s > e->steps[i - 1].at_s))
            return bad(r, g, q, "steps must be in time order");
        if (!(e->start_s + st->at_s < e->end_s))
            return bad(r, g, q, "a step must start before the event's end_h");
    }
    e->n_steps = (size_t)config_setting_length(l);
    e->target_w = e->steps[0].target_w;
    e->cut_frac = e->steps[0].cut_frac;
    return 0;
}

static int
read_events(const struct reader *r, const config_setting_t *l, struct pfs_scenario *sc)
{
    static const char *const names[] = {
        "start_h",    "end_h",    "ramp_min",   "ramp_down_min", "ramp_up_min",
        "cut",        "target_w", "notice_min", "baseline",      "baseline_window_min",
        "baseline_w", "steps",    NULL};

    if (!config_setting_is_list(l))
        return bad(r, l, "scenario.dr_events", "expected a list ( {...}, ... )");
    if (config_setting_length(l) > PFS_MAX_DR) {
        char msg[96];

        snprintf(msg, sizeof msg, "%d events; at most %d", config_setting_length(l), PFS_MAX_DR);
        return bad(r, l, "scenario.dr_events", msg);
    }
    sc->n_dr = 0;
    for (int i = 0; i < config_setting_length(l); i++) {
        const config_setting_t *e = config_setting_get_elem(l, (unsigned)i);
        const config_setting_t *steps = config_setting_get_member(e, "steps");
        const config_setting_t *bl = config_setting_get_member(e, "baseline");
        double start = -1, end = -1, ramp = 0, down = NAN, up = NAN, notice = INFINITY;
        double window = 60, given = 0;
        struct pfs_dr_event ev = {0};
        char p[64], f[96];
        int rc;

        snprintf(p, sizeof p, "scenario.dr_events.[%d]", i);
        if (!config_setting_is_group(e))
            return bad(r, e, p, "expected a group");
#define F(n) (snprintf(f, sizeof f, "%s.%s", p, n), f)
        if ((rc = only(r, e, p, names)) || (rc = number(r, e, "start_h", p, 0, 1e6, &start)) ||
            (rc = number(r, e, "end_h", p, 0, 1e6, &end)) ||
            (rc = number(r, e, "ramp_min", F("ramp_min"), 0, 1e4, &ramp)) ||
            (rc = number(r, e, "ramp_down_min", F("ramp_down_min"), 0, 1e4, &down)) ||
            (rc = number(r, e, "ramp_up_min", F("ramp_up_min"), 0, 1e4, &up)) ||
            (rc = number(r, e, "notice_min", F("notice_min"), 0, 1e6, &notice)) ||
            (rc = number(r, e, "baseline_window_min", F("baseline_window_min"), 1, 1e5, &window)) ||
            (rc = number(r, e, "baseline_w", F("baseline_w"), 0, 1e12, &given)))
            return rc;
        if (!(start >= 0 && end > start))
            return bad(r, e, p, "needs start_h < end_h");
        ev.start_s = start * 3600;
        ev.end_s = end * 3600;
        ev.ramp_s = (isnan(down) ? ramp : down) * 60;
        ev.ramp_up_given = !isnan(up);
        ev.ramp_up_s = isnan(up) ? 0 : up * 60;
        ev.notice_s = notice * 60;
        ev.baseline_window_s = window * 60;
        if (ev.start_s + ev.ramp_s > ev.end_s)
            return bad(r, e, p, "the ramp down must end by end_h");
        if (bl) {
            const char *v = config_setting_get_string(bl);

            if (v && strcmp(v, "instant") == 0)
                ev.baseline = PFS_BASELINE_INSTANT;
            else if (v && strcmp(v, "average") == 0)
                ev.baseline = PFS_BASELINE_AVERAGE;
            else if (v && strcmp(v, "given") == 0)
                ev.baseline = PFS_BASELINE_GIVEN;
            else
                return bad(r, bl, F("baseline"), "expected \"instant\", \"average\" or \"given\"");
        }
        if ((ev.baseline == PFS_BASELINE_GIVEN) != (given > 0))
            return bad(r, e, F("baseline_w"), "give baseline_w exactly with baseline = \"given\"");
        if (ev.baseline != PFS_BASELINE_AVERAGE &&
            config_setting_get_member(e, "baseline_window_min"))
            return bad(r, config_setting_get_member(e, "baseline_window_min"),
                       F("baseline_window_min"),
                       "goes with baseline = \"average\" (no other baseline has a window)");
        ev.baseline_w = given;
#undef F
        if (steps) {
            if (config_setting_get_member(e, "cut") || config_setting_get_member(e, "target_w"))
                return bad(r, steps, p, "give steps or one cut / target_w, not both");
            if ((rc = read_steps(r, steps, p, &ev)))
                return rc;
        } else if ((rc = level(r, e, p, &ev.cut_frac, &ev.target_w))) {
            return rc;
        }
        sc->dr[sc->n_dr++] = ev;
    }
    return 0;
}

static int
read_control(const struct reader *r, const config_setting_t *c, struct pfs_scenario *sc)
{
    static const char *const names[] = {"cadence_s",   "event_cadence_s", "actuation_s", "resume_s",
                                        "track_power", "checkpoint_s",    "admission",   "margin",
                                        "pausing",     "queue",           "over_limit",  NULL};
    config_setting_t *tp = config_setting_get_member(c, "track_power");
    config_setting_t *ad = config_setting_get_member(c, "admission");
    config_setting_t *pz = config_setting_get_member(c, "pausing");
    config_setting_t *qu = config_setting_get_member(c, "queue");
    config_setting_t *ol = config_setting_get_member(c, "over_limit");
    int rc;

    if (tp) {
        if (config_setting_type(tp) != CONFIG_TYPE_BOOL)
            return bad(r, tp, "scenario.control.track_power", "expected true or false");
        sc->track_power = config_setting_get_bool(tp) != 0;
    }
    if (ad) {
        const char *v = config_setting_get_string(ad);

        if (!v || (strcmp(v, "none") != 0 && strcmp(v, "deadline") != 0))
            return bad(r, ad, "scenario.control.admission", "expected \"none\" or \"deadline\"");
        sc->admit_deadlines = strcmp(v, "deadline") == 0;
    }
    if (pz) {
        const char *v = config_setting_get_string(pz);

        if (!v || (strcmp(v, "fluid") != 0 && strcmp(v, "discrete") != 0))
            return bad(r, pz, "scenario.control.pausing", "expected \"fluid\" or \"discrete\"");
        sc->discrete_pauses = strcmp(v, "discrete") == 0;
    }
    if (qu) {
        const char *v = config_setting_get_string(qu);

        if (!v || (strcmp(v, "fifo") != 0 && strcmp(v, "deadline") != 0))
            return bad(r, qu, "scenario.control.queue", "expected \"fifo\" or \"deadline\"");
        sc->edf = strcmp(v, "deadline") == 0;
    }
    if (ol) {
        const char *v = config_setting_get_string(ol);

        if (!v || (strcmp(v, "hold") != 0 && strcmp(v, "report") != 0))
            return bad(r, ol, "scenario.control.over_limit", "expected \"hold\" or \"report\"");
        sc->over_limit_report = strcmp(v, "report") == 0;
    }

    if ((rc = only(r, c, "scenario.control", names)) ||
        (rc = number(r, c, "cadence_s", "scenario.control.cadence_s", 1, 86400, &sc->cadence_s)) ||
        (rc = number(r, c, "event_cadence_s", "scenario.control.event_cadence_s", 1, 86400,
                     &sc->event_cadence_s)) ||
        (rc = number(r, c, "actuation_s", "scenario.control.actuation_s", 0, 3600,
                     &sc->actuation_s)) ||
        (rc = number(r, c, "resume_s", "scenario.control.resume_s", 0, 86400, &sc->resume_s)) ||
        (rc = number(r, c, "checkpoint_s", "scenario.control.checkpoint_s", 0, 86400,
                     &sc->checkpoint_s)) ||
        (rc = number(r, c, "margin", "scenario.control.margin", 0, 0.5, &sc->margin)))
        return rc;
    return 0;
}

/* uncertainty = { draws = N; draw = D; seed = S; } (docs/scenarios.md). */
static int
read_uncertainty(const struct reader *r, const config_setting_t *g, struct pfs_scenario *sc)
{
    static const char *const names[] = {"draws", "draw", "seed", NULL};
    double draws = 1, draw = 0, seed = 1;
    int rc;

    if (!config_setting_is_group(g))
        return bad(r, g, "scenario.uncertainty", "expected a group { draws; draw; seed; }");
    if ((rc = only(r, g, "scenario.uncertainty", names)) ||
        (rc = number(r, g, "draws", "scenario.uncertainty.draws", 1, 10000, &draws)) ||
        (rc = number(r, g, "draw", "scenario.uncertainty.draw", 0, 9999, &draw)) ||
        (rc = number(r, g, "seed", "scenario.uncertainty.seed", 0, 4e9, &seed)))
        return rc;
    if (draws > floor(draws) || draw > floor(draw) || seed > floor(seed) || !(draw < draws))
        return bad(r, g, "scenario.uncertainty",
                   "draws, draw and seed are integers, 0 <= draw < draws");
    sc->unc_draws = (size_t)draws;
    sc->unc_draw = (size_t)draw;
    sc->unc_seed = (unsigned long)seed;
    return 0;
}

/* policy_libs: each found as the scenario's other files are (beside it, then here, then
 * among the shipped files) and loaded now, so that policies may name what they hold. Loading
 * runs the library's code, so it happens only where the command line allowed it
 * (pfs_policy_allow_scenario_libs); a stored scenario's paths are kept as names alone (the
 * run's key holds each library's hash, scenario.inputs) and never loaded. */
static int
read_policy_libs(const struct reader *r, const config_setting_t *p, struct pfs_scenario *sc)
{
    char base[PATH_MAX], *slash;

    if (!config_setting_is_array(p) || config_setting_length(p) > PFS_MAX_POLICY_LIBS)
        return bad(r, p, "scenario.policy_libs", "expected an array of at most 4 file names");
    pfs__strlcpy(base, r->file ? r->file : "", sizeof base);
    if ((slash = strrchr(base, '/')) != NULL)
        *slash = '\0';
    else
        base[0] = '\0';
    sc->n_policy_libs = 0;
    for (int i = 0; i < config_setting_length(p); i++) {
        const char *path = config_setting_get_string_elem(p, i);
        char found[PATH_MAX], msg[700];
        struct pfs_diag d = {0};

        if (!path || !path[0])
            return bad(r, p, "scenario.policy_libs", "expected an array of file names");
        if (r->stored) {
            if (!pfs__strlcpy(sc->policy_libs[sc->n_policy_libs++], path,
                              sizeof sc->policy_libs[0]))
                return bad(r, p, "scenario.policy_libs", "a path longer than 255 bytes");
            continue;
        }
        if (pfs__resolve_path(base, path, found, sizeof found) != 0 ||
            !pfs__strlcpy(sc->policy_libs[sc->n_policy_libs], found, sizeof sc->policy_libs[0]))
            return bad(r, p, "scenario.policy_libs", "a path longer than 255 bytes");
        /* (one the command line named with --policy-lib is loaded already, with consent) */
        if (!pfs_policy_scenario_libs_allowed() && !pfs__policy_lib_loaded(found)) {
            snprintf(msg, sizeof msg,
                     "'%.200s' is a library of code, and loading it runs it: pfisim loads a "
                     "scenario's libraries only when asked (--allow-plugins, or the library "
                     "named with --policy-lib; docs/policies.md)",
                     path);
            return bad(r, p, "scenario.policy_libs", msg);
        }
        if (pfs_policy_load(found, NULL, &d) != 0) {
            snprintf(msg, sizeof msg, "%.250s: %.400s", found, d.message);
            return bad(r, p, "scenario.policy_libs", msg);
        }
        sc->n_policy_libs++;
    }
    return 0;
}

/* Whether name could be a plugin's policy: [a-z0-9-], 1 to 31 bytes (the registry's rule). */
static bool
plugin_name(const char *name)
{
    size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-");

    return n > 0 && n < 32 && name[n] == '\0';
}

static int
read_policies(const struct reader *r, const config_setting_t *p, struct pfs_scenario *sc)
{
    if (!config_setting_is_array(p) || config_setting_length(p) < 1 ||
        config_setting_length(p) > PFS_MAX_POLICIES)
        return bad(r, p, "scenario.policies", "expected an array of 1 to 16 policy names");
    sc->n_policies = 0;
    for (int i = 0; i < config_setting_length(p); i++) {
        const char *name = config_setting_get_string_elem(p, i);

        /* A stored run's policies were checked when it ran; a plugin's are not registered
         * now, since a stored scenario loads no library: its name is taken as a name. */
        if (r->stored && name && !pfs_sim_policy_find(name, NULL) && plugin_name(name)) {
            pfs__strlcpy(sc->policies[sc->n_policies++], name, sizeof sc->policies[0]);
            continue;
        }
        if (!name || !pfs_sim_policy_find(name, NULL)) {
            char msg[160], hint[80];

            snprintf(msg, sizeof msg, "unknown policy '%.64s'%s (pfisim --list-policies)",
                     name ? name : "?",
                     pfs__did_you_mean(name ? pfs__policy_nearest(name) : NULL, hint, sizeof hint));
            return bad(r, p, "scenario.policies", msg);
        }
        pfs__strlcpy(sc->policies[sc->n_policies++], name, sizeof sc->policies[0]);
    }
    {
        const char *names[PFS_MAX_POLICIES], *twice;
        char msg[96];

        for (size_t k = 0; k < sc->n_policies; k++)
            names[k] = sc->policies[k];
        if ((twice = pfs__policy_repeated(names, sc->n_policies)) != NULL) {
            snprintf(msg, sizeof msg, "policy '%s' named twice", twice);
            return bad(r, p, "scenario.policies", msg);
        }
    }
    return 0;
}

/* Event times drawn by the generator (dr_generator, docs/scenarios.md): exactly
 * round(per_year x (days - warm-up) / 365) events, so that sweeps compare like with like;
 * none starts in the warm-up (warmup_h, default 72 h: from empty, the default workload
 * reaches 90% of its steady draw at 51 h and 97% at 68 h, and an event on a half-empty
 * facility measures the filling, not the policy). Each falls on a day drawn by its month's
 * weight (t = 0 is 1 January 00:00, a 365-day year, repeating), at a whole hour drawn by its
 * hour's weight, lasting U(duration) hours, announced U(notice) hours ahead; no two overlap
 * (ramps included). Seeded by the generator's own seed, so that the workload's seed and the
 * events' draw vary apart. */
static int
generate_events(const struct reader *r, const config_setting_t *g, struct pfs_scenario *sc,
                const struct pfs_dr_generator *gen)
{
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    double open_days = fmax(0, sc->days - gen->warmup_h / 24);
    size_t n = (size_t)floor(gen->per_year * open_days / 365 + 0.5), placed = 0;
    int n_days = (int)ceil(sc->days), tries = 0;
    double *dw, hw_sum = 0;
    gsl_rng *rng;

    if (n == 0)
        return 0;
    if (sc->n_dr + n > PFS_MAX_DR) {
        char msg[160];

        snprintf(msg, sizeof msg,
                 "it draws %lu events%s; a run holds at most %d (fewer per_year, or a shorter "
                 "run)",
                 (unsigned long)n, sc->n_dr ? " beside the listed ones" : "", PFS_MAX_DR);
        return bad(r, g, "scenario.dr_generator", msg);
    }
    dw = malloc((size_t)n_days * sizeof *dw);
    rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!dw || !rng) {
        free(dw);
        gsl_rng_free(rng);
        return pfs__diag_set(r->diag, PFS_ENOMEM, r->file, 0, 0, NULL, "out of memory");
    }
    gsl_rng_set(rng, gen->seed);
    for (int d = 0, m = 0, dom = 0; d < n_days; d++) {
        dw[d] = gen->month_w[m] * (d + 1 <= sc->days ? 1 : sc->days - d); /* a partial last day */
        if (++dom == mdays[m])
            dom = 0, m = (m + 1) % 12;
    }
    for (int h = 0; h < 24; h++)
        hw_sum += gen->hour_w[h];
    {
        gsl_ran_discrete_t *days = gsl_ran_discrete_preproc((size_t)n_days, dw);
        gsl_ran_discrete_t *hours = gsl_ran_discrete_preproc(24, gen->hour_w);

        while (days && hours && hw_sum > 0 && placed < n && tries++ < 100000) {
            double start = (double)gsl_ran_discrete(rng, days) * 86400 +
                           (double)gsl_ran_discrete(rng, hours) * 3600;
            double len = gsl_ran_flat(rng, gen->duration_h[0], gen->duration_h[1]) * 3600;
            double notice = gsl_ran_flat(rng, gen->notice_h[0], gen->notice_h[1]) * 3600;
            struct pfs_dr_event e = {.start_s = start,
                                     .end_s = start + 60 * floor(len / 60 + 0.5),
                                     .ramp_s = gen->ramp_s,
                                     .cut_frac = gen->cut,
                                     .notice_s = 60 * floor(notice / 60 + 0.5)};
            bool clash = e.start_s >= sc->days * 86400 || e.end_s <= e.start_s ||
                         e.start_s < gen->warmup_h * 3600;

            for (size_t k = 0; k < sc->n_dr && !clash; k++)
                clash =
                    e.start_s < pfs_dr_over_s(&sc->dr[k]) && sc->dr[k].start_s < pfs_dr_over_s(&e);
            if (!clash)
                sc->dr[sc->n_dr++] = e, placed++;
        }
        gsl_ran_discrete_free(days);
        gsl_ran_discrete_free(hours);
    }
    gsl_rng_free(rng);
    free(dw);
    if (placed < n) {
        char msg[160];

        snprintf(msg, sizeof msg,
                 "cannot place %zu events without overlap in %g days with these weights", n,
                 sc->days);
        return bad(r, g, "scenario.dr_generator", msg);
    }
    return 0;
}

/* A fixed-length array of non-negative weights, at least one positive. */
static int
weights(const struct reader *r, const config_setting_t *g, const char *name, const char *path,
        double *w, int n)
{
    config_setting_t *s = config_setting_get_member(g, name);
    double sum = 0;

    if (!s)
        return 0;
    if (!config_setting_is_array(s) || config_setting_length(s) != n) {
        char msg[64];

        snprintf(msg, sizeof msg, "expected an array of %d numbers", n);
        return bad(r, s, path, msg);
    }
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

        w[i] = config_setting_type(e) == CONFIG_TYPE_FLOAT ? config_setting_get_float(e)
                                                           : (double)config_setting_get_int64(e);
        if (!(w[i] >= 0 && isfinite(w[i])))
            return bad(r, s, path, "weights must be finite and non-negative");
        sum += w[i];
    }
    if (!(sum > 0))
        return bad(r, s, path, "at least one weight must be positive");
    return 0;
}

/* A [low, high] pair of numbers within [lo, hi]. */
static int
range(const struct reader *r, const config_setting_t *g, const char *name, const char *path,
      double lo, double hi, double out[2])
{
    config_setting_t *s = config_setting_get_member(g, name);

    if (!s)
        return 0;
    if (!config_setting_is_array(s) || config_setting_length(s) != 2)
        return bad(r, s, path, "expected [low, high]");
    for (int i = 0; i < 2; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

        out[i] = config_setting_type(e) == CONFIG_TYPE_FLOAT ? config_setting_get_float(e)
                                                             : (double)config_setting_get_int64(e);
    }
    if (!(out[0] >= lo && out[1] >= out[0] && out[1] <= hi)) {
        char msg[96];

        snprintf(msg, sizeof msg, "need %g <= low <= high <= %g", lo, hi);
        return bad(r, s, path, msg);
    }
    return 0;
}

static int
read_generator(const struct reader *r, const config_setting_t *g, struct pfs_scenario *sc)
{
    static const char *const names[] = {"per_year", "duration_h", "notice_h",     "ramp_min",
                                        "cut",      "seed",       "hour_weights", "month_weights",
                                        "warmup_h", NULL};
    struct pfs_dr_generator gen = {.duration_h = {3, 3},
                                   .notice_h = {24, 24},
                                   .cut = 0.3,
                                   .seed = 1,
                                   .warmup_h = PFS_DR_WARMUP_H};
    double ramp_min = 15, seed = 1;
    int rc;

    for (int h = 0; h < 24; h++)
        gen.hour_w[h] = 1;
    for (int m = 0; m < 12; m++)
        gen.month_w[m] = 1;
    if (!config_setting_is_group(g))
        return bad(r, g, "scenario.dr_generator", "expected a group");
    if ((rc = only(r, g, "scenario.dr_generator", names)) ||
        (rc = number(r, g, "per_year", "scenario.dr_generator.per_year", 0, 2000, &gen.per_year)) ||
        (rc = range(r, g, "duration_h", "scenario.dr_generator.duration_h", 1.0 / 60, 24,
                    gen.duration_h)) ||
        (rc = range(r, g, "notice_h", "scenario.dr_generator.notice_h", 0, 168, gen.notice_h)) ||
        (rc = number(r, g, "ramp_min", "scenario.dr_generator.ramp_min", 0, 600, &ramp_min)) ||
        (rc = number(r, g, "cut", "scenario.dr_generator.cut", 0.001, 1, &gen.cut)) ||
        (rc = number(r, g, "seed", "scenario.dr_generator.seed", 0, 4e9, &seed)) ||
        (rc =
             number(r, g, "warmup_h", "scenario.dr_generator.warmup_h", 0, 87600, &gen.warmup_h)) ||
        (rc =
             weights(r, g, "hour_weights", "scenario.dr_generator.hour_weights", gen.hour_w, 24)) ||
        (rc = weights(r, g, "month_weights", "scenario.dr_generator.month_weights", gen.month_w,
                      12)))
        return rc;
    gen.ramp_s = ramp_min * 60;
    gen.seed = (unsigned long)seed;
    /* An event's ramp down ends by its end, as for events given one by one (fuzz-scenario:
     * a drawn 4-hour event with a 430-minute ramp was accepted, and its written-back form
     * refused). */
    if (gen.ramp_s > gen.duration_h[0] * 3600)
        return bad(r, config_setting_get_member(g, "ramp_min"), "scenario.dr_generator.ramp_min",
                   "longer than the shortest event (duration_h): the ramp down must end by the "
                   "event's end");
    return generate_events(r, g, sc, &gen);
}

/* Events from a utility's hourly demand (traces/grid.c). The file is read as given, or from
 * the data directory when no such file is here (as emerald-phoenix/SRP_0503.csv). */
static int
read_grid(const struct reader *r, const config_setting_t *g, struct pfs_scenario *sc)
{
    static const char *const names[] = {"file", "column",   "threshold",  "top_hours",
                                        "cut",  "ramp_min", "notice_min", NULL};
    char file[256] = "", column[64] = "SRP Actual", path[PATH_MAX + 300];
    double top = 0, ramp = 15, notice = INFINITY;
    struct pfs_grid_options o = {.cut = 0.3};
    size_t n = 0;
    int rc;

    if (!config_setting_is_group(g))
        return bad(r, g, "scenario.dr_grid", "expected a group");
    if ((rc = only(r, g, "scenario.dr_grid", names)) ||
        (rc = string(r, g, "file", "scenario.dr_grid.file", file, sizeof file)) ||
        (rc = string(r, g, "column", "scenario.dr_grid.column", column, sizeof column)) ||
        (rc = number(r, g, "threshold", "scenario.dr_grid.threshold", 0, 1e12, &o.threshold)) ||
        (rc = number(r, g, "top_hours", "scenario.dr_grid.top_hours", 0, 1e6, &top)) ||
        (rc = number(r, g, "cut", "scenario.dr_grid.cut", 0.001, 1, &o.cut)) ||
        (rc = number(r, g, "ramp_min", "scenario.dr_grid.ramp_min", 0, 600, &ramp)) ||
        (rc = number(r, g, "notice_min", "scenario.dr_grid.notice_min", 0, 1e6, &notice)))
        return rc;
    if (!file[0])
        return bad(r, g, "scenario.dr_grid.file", "missing");
    if ((o.threshold > 0) == (top > 0))
        return bad(r, g, "scenario.dr_grid", "give exactly one of threshold and top_hours");
    o.column = column;
    o.top_hours = (int)top;
    o.ramp_s = ramp * 60;
    o.notice_s = notice * 60;
    {
        char base[PATH_MAX], *slash, near[PATH_MAX + 300];

        pfs__strlcpy(base, r->file ? r->file : "", sizeof base);
        if ((slash = strrchr(base, '/')) != NULL) {
            *slash = '\0';
            snprintf(near, sizeof near, "%s/%s", base, file);
        } else {
            near[0] = '\0';
        }
        if (file[0] == '/' || access(file, R_OK) == 0)
            snprintf(path, sizeof path, "%s", file);
        else if (near[0] && access(near, R_OK) == 0)
            snprintf(path, sizeof path, "%s", near);
        else
            snprintf(path, sizeof path, "%s/%s", pfs_data_dir(), file);
    }
    if ((rc = pfs_grid_events(path, &o, sc->dr + sc->n_dr, PFS_MAX_DR - sc->n_dr, &n, NULL,
                              r->diag)))
        return rc;
    for (size_t k = sc->n_dr; k < sc->n_dr + n; k++)
        if (sc->dr[k].start_s + sc->dr[k].ramp_s > sc->dr[k].end_s)
            return bad(r, config_setting_get_member(g, "ramp_min"), "scenario.dr_grid.ramp_min",
                       "longer than an event the demand gives (events are whole hours): the "
                       "ramp down must end by the event's end");
    sc->n_dr += n;
    return 0;
}

static int
read_pricing(const struct reader *r, const config_setting_t *p, struct pfs_scenario *sc)
{
    static const char *const names[] = {"gpu_hour_usd", "dr_capacity_usd_per_kw_year",
                                        "dr_energy_usd_per_mwh", NULL};
    int rc;

    if (!config_setting_is_group(p))
        return bad(r, p, "scenario.pricing", "expected a group");
    if ((rc = only(r, p, "scenario.pricing", names)) ||
        (rc = number(r, p, "gpu_hour_usd", "scenario.pricing.gpu_hour_usd", 0, 1e4,
                     &sc->price.gpu_hour_usd)) ||
        (rc = number(r, p, "dr_capacity_usd_per_kw_year",
                     "scenario.pricing.dr_capacity_usd_per_kw_year", 0, 1e5,
                     &sc->price.capacity_usd_kw_year)) ||
        (rc = number(r, p, "dr_energy_usd_per_mwh", "scenario.pricing.dr_energy_usd_per_mwh", 0,
                     1e6, &sc->price.energy_usd_mwh)))
        return rc;
    return 0;
}

static int scenario_read(const config_setting_t *root, const char *file, bool stored,
                         struct pfs_scenario *sc, struct pfs_diag *diag);

int
pfs__scenario_read(const config_setting_t *root, const char *file, struct pfs_scenario *sc,
                   struct pfs_diag *diag)
{
    return scenario_read(root, file, false, sc, diag);
}

static int
scenario_read(const config_setting_t *root, const char *file, bool stored, struct pfs_scenario *sc,
              struct pfs_diag *diag)
{
    static const char *const names[] = {"name",     "facility",    "workload",     "duration_days",
                                        "seed",     "dr_events",   "dr_generator", "control",
                                        "policies", "predictor",   "pricing",      "dr_grid",
                                        "seeds",    "policy_libs", "uncertainty",  NULL};
    struct reader r = {file, diag, stored};
    config_setting_t *g;
    double days, seed;
    int rc;

    pfs_scenario_default(sc);
    days = sc->days;
    seed = (double)sc->seed;
    if (!root || !config_setting_is_group(root))
        return pfs__diag_set(diag, PFS_EINVAL, file, 0, 0, "scenario",
                             "scenario: missing group (see docs/scenarios.md)");
    if ((rc = only(&r, root, "scenario", names)) ||
        (rc = string(&r, root, "name", "scenario.name", sc->name, sizeof sc->name)) ||
        (rc = number(&r, root, "duration_days", "scenario.duration_days", 1.0 / 1440, 3660,
                     &days)) ||
        (rc = number(&r, root, "seed", "scenario.seed", 0, 4e9, &seed)) ||
        (rc = string(&r, root, "predictor", "scenario.predictor", sc->predictor,
                     sizeof sc->predictor)))
        return rc;
    sc->days = days;
    sc->seed = (unsigned long)seed;
    if ((g = config_setting_get_member(root, "seeds"))) {
        if (!config_setting_is_array(g) || config_setting_length(g) < 1 ||
            config_setting_length(g) > PFS_MAX_SEEDS)
            return bad(&r, g, "scenario.seeds", "expected an array of 1 to 256 seeds");
        for (int i = 0; i < config_setting_length(g); i++) {
            const config_setting_t *e = config_setting_get_elem(g, (unsigned)i);
            long long v = config_setting_type(e) == CONFIG_TYPE_INT ||
                                  config_setting_type(e) == CONFIG_TYPE_INT64
                              ? config_setting_get_int64(e)
                              : -1;

            if (v < 0 || v > 4000000000LL)
                return bad(&r, g, "scenario.seeds", "seeds are integers in [0, 4e9]");
            for (size_t q = 0; q < sc->n_seeds; q++)
                if (sc->seeds[q] == (unsigned long)v) { /* (it would weigh twice) */
                    char msg[64];

                    snprintf(msg, sizeof msg, "seed %lld given twice", v);
                    return bad(&r, g, "scenario.seeds", msg);
                }
            sc->seeds[sc->n_seeds++] = (unsigned long)v;
        }
    }
    if ((g = config_setting_get_member(root, "facility")) && (rc = read_facility(&r, g, sc)))
        return rc;
    if ((g = config_setting_get_member(root, "workload")) && (rc = read_workload(&r, g, sc)))
        return rc;
    if ((g = config_setting_get_member(root, "dr_events")) && (rc = read_events(&r, g, sc)))
        return rc;
    if ((g = config_setting_get_member(root, "dr_grid")) && (rc = read_grid(&r, g, sc)))
        return rc;
    if ((g = config_setting_get_member(root, "control")) && (rc = read_control(&r, g, sc)))
        return rc;
    if ((g = config_setting_get_member(root, "uncertainty")) && (rc = read_uncertainty(&r, g, sc)))
        return rc;
    if ((g = config_setting_get_member(root, "policy_libs")) && (rc = read_policy_libs(&r, g, sc)))
        return rc;
    /* Under a tree the default policies are those that divide under one (sla does not) */
    if (sc->tree.n > 0 && !config_setting_get_member(root, "policies"))
        sc->n_policies = 3;
    if ((g = config_setting_get_member(root, "policies")) && (rc = read_policies(&r, g, sc)))
        return rc;
    if ((g = config_setting_get_member(root, "pricing")) && (rc = read_pricing(&r, g, sc)))
        return rc;
    /* Last: the generator needs the duration and adds to the explicit events. */
    if ((g = config_setting_get_member(root, "dr_generator")) && (rc = read_generator(&r, g, sc)))
        return rc;
    if (sc->unc_draws > 0 && (rc = pfs_scenario_apply_draw(sc, diag)) != 0) {
        if (diag && !diag->file[0])
            pfs__strlcpy(diag->file, file ? file : "", sizeof diag->file);
        return rc;
    }
    pfs_scenario_set_days(sc, sc->days);
    /* Relative paths are found beside the scenario file, else in the current folder, else
     * among the shipped files (pfs__resolve_path, docs/scenarios.md). */
    {
        char base[PATH_MAX], *slash;
        char *paths[] = {sc->corpus, sc->workload, sc->predictor};
        size_t sizes[] = {sizeof sc->corpus, sizeof sc->workload, sizeof sc->predictor};

        pfs__strlcpy(base, file ? file : "", sizeof base);
        if ((slash = strrchr(base, '/')) != NULL)
            *slash = '\0';
        else
            base[0] = '\0';
        for (size_t k = 0; k < 3; k++) {
            char found[PATH_MAX];

            if (pfs__resolve_path(base, paths[k], found, sizeof found) != 0 ||
                !pfs__strlcpy(paths[k], found, sizes[k]))
                return pfs__diag_set(diag, PFS_EINVAL, file, 0, 0, "workload",
                                     "the path '%s', found at '%s', is longer than %zu bytes",
                                     paths[k], found, sizes[k] - 1);
        }
    }
    /* In time order, given, imported and drawn alike (a stable insertion sort): the
     * canonical text lists them so. */
    for (size_t i = 1; i < sc->n_dr; i++)
        for (size_t k = i; k > 0 && sc->dr[k].start_s < sc->dr[k - 1].start_s; k--) {
            struct pfs_dr_event t = sc->dr[k];

            sc->dr[k] = sc->dr[k - 1];
            sc->dr[k - 1] = t;
        }
    /* No two overlap, ramps included (the generator places its events so): where they did,
     * two were judged on the same minutes and shared one cost of DR, and one starting inside
     * another took its baseline under the other's caps, its cut compounding the other's. A
     * deeper cut within an event is a step of it. Back to back is fine. */
    for (size_t k = 1, last = 0; k < sc->n_dr; k++) {
        if (sc->dr[k].start_s < pfs_dr_over_s(&sc->dr[last])) {
            const config_setting_t *grid = config_setting_get_member(root, "dr_grid");
            char msg[240];

            snprintf(msg, sizeof msg,
                     "the DR events starting at hours %g and %g overlap (ramps included): give "
                     "a deeper cut within an event as its steps%s",
                     sc->dr[last].start_s / 3600, sc->dr[k].start_s / 3600,
                     grid ? ", or dr_grid a ramp_min shorter than the hours between its events"
                          : "");
            if ((g = config_setting_get_member(root, "dr_events")) && config_setting_length(g) == 0)
                g = NULL; /* (dr_events = (); beside a dr_grid) */
            return bad(&r, g ? g : grid, g ? "scenario.dr_events" : "scenario.dr_grid", msg);
        }
        if (pfs_dr_over_s(&sc->dr[k]) > pfs_dr_over_s(&sc->dr[last]))
            last = k;
    }
    return 0;
}

void
pfs_scenario_set_days(struct pfs_scenario *sc, double days)
{
    size_t m = 0;

    sc->days = days;
    for (size_t k = 0; k < sc->n_dr; k++)
        if (sc->dr[k].start_s < days * 86400)
            sc->dr[m++] = sc->dr[k];
    sc->n_dr_after += sc->n_dr - m;
    sc->n_dr = m;
}

int
pfs_scenario_load(const char *path, struct pfs_scenario *sc, struct pfs_diag *diag)
{
    config_t cfg;
    int rc = pfs__config_read(&cfg, path, diag);

    if (rc == 0)
        rc = pfs__scenario_read(config_lookup(&cfg, "scenario"), path, sc, diag);
    config_destroy(&cfg);
    return rc;
}

int
pfs_scenario_load_days(const char *path, double days, struct pfs_scenario *sc,
                       struct pfs_diag *diag)
{
    config_t cfg;
    config_setting_t *root, *d;
    int rc;

    if (!path) {
        pfs_scenario_default(sc);
        if (!isnan(days))
            pfs_scenario_set_days(sc, days);
        return 0;
    }
    if ((rc = pfs__config_read(&cfg, path, diag)) == 0) {
        root = config_lookup(&cfg, "scenario");
        /* The duration goes into the file's settings before they are read, so that drawn
         * events are drawn over the run that will be simulated. */
        if (!isnan(days) && root && config_setting_is_group(root)) {
            if ((d = config_setting_get_member(root, "duration_days")) &&
                config_setting_type(d) != CONFIG_TYPE_FLOAT)
                config_setting_remove(root, "duration_days"), d = NULL;
            if (!d)
                d = config_setting_add(root, "duration_days", CONFIG_TYPE_FLOAT);
            if (!d || !config_setting_set_float(d, days))
                rc = pfs__diag_set(diag, PFS_EINVAL, path, d ? config_setting_source_line(d) : 0, 0,
                                   "scenario.duration_days",
                                   "scenario.duration_days: expected a float to override");
        }
        if (rc == 0)
            rc = pfs__scenario_read(root, path, sc, diag);
    }
    config_destroy(&cfg);
    return rc;
}

int
pfs_scenario_parse(const char *text, const char *name, struct pfs_scenario *sc,
                   struct pfs_diag *diag)
{
    config_t cfg;
    int rc = 0;

    config_init(&cfg);
    if (config_read_string(&cfg, text) == CONFIG_FALSE)
        rc = pfs__diag_set(diag, PFS_EINVAL, name, config_error_line(&cfg), 0, NULL, "%s",
                           config_error_text(&cfg));
    else
        rc = scenario_read(config_lookup(&cfg, "scenario"), name, true, sc, diag);
    config_destroy(&cfg);
    return rc;
}

/* A double as libconfig reads it back as a float: 17 significant digits, always a point. */
static const char *
num(char *buf, size_t size, double v)
{
    snprintf(buf, size, "%.17g", v);
    if (!strpbrk(buf, ".eEn"))
        strncat(buf, ".0", size - strlen(buf) - 1);
    return buf;
}

/* A string as a libconfig string literal's contents: \\ and \" escaped, control bytes as
 * \xNN, so that any name or path reads back as it was (issue 17). buf holds 4 x the string. */
static const char *
str(char *buf, size_t size, const char *v)
{
    size_t n = 0;

    for (; *v && n + 5 < size; v++) {
        unsigned char c = (unsigned char)*v;

        if (c == '"' || c == '\\') {
            buf[n++] = '\\';
            buf[n++] = (char)c;
        } else if (c < 0x20 || c == 0x7f)
            n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
        else
            buf[n++] = (char)c;
    }
    buf[n] = '\0';
    return buf;
}

/* facility.tree's entry k and its children, as written back (canonical: every setting). */
static void
write_tree_node(const struct pfs_scenario *sc, int k, int indent, FILE *fp)
{
    const struct pfs_tree_spec_node *n = &sc->tree.node[k];
    struct pfs_pool pools[PFS_MAX_POOLS];
    char b[40], q[200];
    bool kids = false;

    pfs_scenario_pools(sc, pools);
    fprintf(fp, "{ name = \"%s\";", str(q, sizeof q, n->name));
    if (n->limit_w > 0) /* (none: no setting, which reads back as none) */
        fprintf(fp, " limit_w = %s;", num(b, sizeof b, n->limit_w));
    fprintf(fp, " count = %d;", n->count);
    if (n->nodes > 0)
        fprintf(fp, " nodes = %d; pool = \"%s\";", n->nodes, str(q, sizeof q, pools[n->pool].name));
    for (size_t c = (size_t)k + 1; c < sc->tree.n; c++)
        if (sc->tree.node[c].parent == k) {
            fprintf(fp, "%s\n%*s", kids ? "," : " children = (", indent + 4, "");
            write_tree_node(sc, (int)c, indent + 4, fp);
            kids = true;
        }
    fprintf(fp, "%s }", kids ? " )" : "");
}

int
pfs_scenario_write(const struct pfs_scenario *sc, FILE *fp)
{
    char b[12][40], q[4][1100], var[300] = "";

    fprintf(fp, "scenario = {\n    name = \"%s\";\n    duration_days = %s;\n",
            str(q[0], sizeof q[0], sc->name), num(b[0], 40, sc->days));
    if (pfs_variability_on(&sc->var)) /* (only when on: scenarios without keep their keys) */
        snprintf(var, sizeof var,
                 "\n        variability = { eta_sd = %s; outliers = %s; outlier_eta = %s; "
                 "seed = %lu; };",
                 num(b[4], 40, sc->var.eta_sd), num(b[5], 40, sc->var.outlier_frac),
                 num(b[6], 40, sc->var.outlier_eta), sc->var_seed);
    if (sc->n_pools == 0) {
        fprintf(fp,
                "    facility = { gpus = %d; gpus_per_node = %d; gpu = \"%s\"; node_other_w = %s; "
                "pue = %s; cap_w = %s;%s",
                sc->gpus, sc->gpus_per_node, str(q[0], sizeof q[0], sc->gpu),
                num(b[1], 40, sc->node_other_w), num(b[2], 40, sc->pue),
                num(b[3], 40, sc->base_cap_w), var);
    } else {
        fprintf(fp, "    facility = { pue = %s; cap_w = %s;\n        pools = (",
                num(b[2], 40, sc->pue), num(b[3], 40, sc->base_cap_w));
        for (size_t k = 0; k < sc->n_pools; k++) {
            const struct pfs_pool *p = &sc->pools[k];

            fprintf(fp,
                    "%s\n            { name = \"%s\"; gpu = \"%s\"; gpus = %d; gpus_per_node = %d; "
                    "node_other_w = %s; }",
                    k ? "," : "", str(q[0], sizeof q[0], p->name), str(q[1], sizeof q[1], p->gpu),
                    p->gpus, p->gpus_per_node, num(b[1], 40, p->node_other_w));
        }
        fprintf(fp, "\n        );%s", var);
    }
    if (sc->tree.n > 0) { /* (only when given: scenarios without keep their keys) */
        fprintf(fp, "\n        tree = ");
        write_tree_node(sc, 0, 8, fp);
        fprintf(fp, ";%s", sc->tree.spread ? " placement = \"spread\";" : "");
    }
    fprintf(fp, " };\n");

    fprintf(fp,
            "    workload = { corpus = \"%s\"; file = \"%s\"; arrivals = \"%s\"; load = %s;\n"
            "                 gpu_scale = %d;\n"
            "                 tiers = { firm = %s; flex1 = %s; flex2 = %s; flex3 = %s; };\n"
            "                 slack = [%s, %s]; };\n",
            str(q[0], sizeof q[0], sc->corpus), str(q[1], sizeof q[1], sc->workload),
            str(q[2], sizeof q[2], sc->arrivals_source), num(b[0], 40, sc->arrivals.load),
            sc->arrivals.gpu_scale, num(b[1], 40, sc->arrivals.tier_mix[0]),
            num(b[2], 40, sc->arrivals.tier_mix[1]), num(b[3], 40, sc->arrivals.tier_mix[2]),
            num(b[4], 40, sc->arrivals.tier_mix[3]), num(b[5], 40, sc->arrivals.slack_lo),
            num(b[6], 40, sc->arrivals.slack_hi));
    fprintf(fp,
            "    control = { cadence_s = %s; event_cadence_s = %s; actuation_s = %s; "
            "resume_s = %s; checkpoint_s = %s;\n"
            "                track_power = %s; admission = \"%s\"; margin = %s;\n"
            "                pausing = \"%s\"; queue = \"%s\";%s };\n"
            "    predictor = \"%s\";\n"
            "    pricing = { gpu_hour_usd = %s; dr_capacity_usd_per_kw_year = %s;\n"
            "                dr_energy_usd_per_mwh = %s; };\n"
            "    dr_events = (",
            num(b[0], 40, sc->cadence_s), num(b[1], 40, sc->event_cadence_s),
            num(b[2], 40, sc->actuation_s), num(b[3], 40, sc->resume_s),
            num(b[4], 40, sc->checkpoint_s), sc->track_power ? "true" : "false",
            sc->admit_deadlines ? "deadline" : "none", num(b[8], 40, sc->margin),
            sc->discrete_pauses ? "discrete" : "fluid", sc->edf ? "deadline" : "fifo",
            sc->over_limit_report ? " over_limit = \"report\";" : "",
            str(q[0], sizeof q[0], sc->predictor), num(b[5], 40, sc->price.gpu_hour_usd),
            num(b[6], 40, sc->price.capacity_usd_kw_year), num(b[7], 40, sc->price.energy_usd_mwh));
    for (size_t k = 0; k < sc->n_dr; k++) {
        static const char *const bl[] = {"instant", "average", "given"};
        const struct pfs_dr_event *e = &sc->dr[k];

        fprintf(fp, "%s\n        { start_h = %s; end_h = %s; ramp_down_min = %s; ", k ? "," : "",
                num(b[0], 40, e->start_s / 3600), num(b[1], 40, e->end_s / 3600),
                num(b[2], 40, e->ramp_s / 60));
        if (e->ramp_up_given)
            fprintf(fp, "ramp_up_min = %s; ", num(b[5], 40, e->ramp_up_s / 60));
        if (isfinite(e->notice_s))
            fprintf(fp, "notice_min = %s; ", num(b[4], 40, e->notice_s / 60));
        fprintf(fp, "baseline = \"%s\"; ", bl[e->baseline]);
        if (e->baseline == PFS_BASELINE_AVERAGE)
            fprintf(fp, "baseline_window_min = %s; ", num(b[6], 40, e->baseline_window_s / 60));
        if (e->baseline == PFS_BASELINE_GIVEN)
            fprintf(fp, "baseline_w = %s; ", num(b[6], 40, e->baseline_w));
        if (e->n_steps > 0) {
            fprintf(fp, "steps = (");
            for (size_t i = 0; i < e->n_steps; i++) {
                const struct pfs_dr_step *st = &e->steps[i];

                fprintf(fp, "%s{ at_min = %s; ", i ? ", " : " ", num(b[7], 40, st->at_s / 60));
                if (st->target_w > 0)
                    fprintf(fp, "target_w = %s; }", num(b[3], 40, st->target_w));
                else
                    fprintf(fp, "cut = %s; }", num(b[3], 40, st->cut_frac));
            }
            fprintf(fp, " ); }");
        } else if (e->target_w > 0) {
            fprintf(fp, "target_w = %s; }", num(b[3], 40, e->target_w));
        } else {
            fprintf(fp, "cut = %s; }", num(b[3], 40, e->cut_frac));
        }
    }
    fprintf(fp, "\n    );\n");
    if (sc->unc_draws > 0) /* (only when given: scenarios without keep their keys) */
        fprintf(fp, "    uncertainty = { draws = %zu; draw = %zu; seed = %lu; };\n", sc->unc_draws,
                sc->unc_draw, sc->unc_seed);
    if (sc->n_policy_libs > 0) { /* (only when given: scenarios without keep their keys) */
        fprintf(fp, "    policy_libs = [");
        for (size_t k = 0; k < sc->n_policy_libs; k++)
            fprintf(fp, "%s\"%s\"", k ? ", " : "", str(q[0], sizeof q[0], sc->policy_libs[k]));
        fprintf(fp, "];\n");
    }
    fprintf(fp, "};\n");
    return ferror(fp) ? PFS_EIO : 0;
}

size_t
pfs_scenario_uncertain_gpus(const struct pfs_scenario *sc, struct pfs_gpu *out)
{
    struct pfs_pool pools[PFS_MAX_POOLS];
    size_t n = pfs_scenario_pools(sc, pools), m = 0;

    for (size_t p = 0; p < n; p++) {
        bool seen = false;

        for (size_t u = 0; u < m; u++)
            seen |= strcmp(out[u].name, pools[p].gpu) == 0;
        if (!seen && pfs_gpu_find(pools[p].gpu, &out[m], NULL) == 0 && pfs_gpu_uncertain(&out[m]))
            m++;
    }
    return m;
}

int
pfs_scenario_apply_draw(struct pfs_scenario *sc, struct pfs_diag *diag)
{
    struct pfs_gpu unc[PFS_MAX_POOLS];
    size_t n;
    int rc;

    sc->n_gpu_drawn = 0;
    if (sc->unc_draws == 0)
        return 0;
    if ((n = pfs_scenario_uncertain_gpus(sc, unc)) == 0)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "uncertainty",
                             "scenario.uncertainty: no GPU profile of the facility has a range "
                             "to draw from (pfisim gpus: the extrapolated ones)");
    for (size_t u = 0; u < n; u++)
        if ((rc = pfs_gpu_draw(&unc[u], sc->unc_draws, sc->unc_draw, sc->unc_seed,
                               &sc->gpu_drawn[u], diag)))
            return rc;
    sc->n_gpu_drawn = n;
    return 0;
}
