/*
 * sim/tree.c - the power tree of a scenario, every copy its own node (issue 58,
 * docs/scenarios.md "The power tree").
 *
 * facility.tree is written once per kind of node, with counts; this expands it depth first,
 * so that a node's parent comes before it and a rack's nodes follow the racks before it in
 * its pool's node order. A copy is named by its path below the root: row-3/rack-7.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct expand {
    const struct pfs_scenario *sc;
    struct pfs_pool pools[PFS_MAX_POOLS];
    struct pfs_gpu gpu[PFS_MAX_POOLS];
    int next_node[PFS_MAX_POOLS];
    struct pfs_power_tree *t;
    size_t cap;
};

static int
add(struct expand *e, int spec, int32_t parent, int copy, struct pfs_diag *diag)
{
    const struct pfs_tree_spec_node *s = &e->sc->tree.node[spec];
    struct pfs_power_node *n;
    size_t me;

    if (e->t->n == PFS_MAX_TREE_NODES)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "tree",
                             "scenario.facility.tree: more than %d nodes once its copies are made",
                             PFS_MAX_TREE_NODES);
    if (!(n = pfs__grow(e->t->node, &e->cap, e->t->n, sizeof *n, 64)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    e->t->node = n;
    me = e->t->n++;
    n = &e->t->node[me];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->spec = spec;
    n->pool = -1;
    n->level = parent < 0 ? 0 : e->t->node[parent].level + 1;
    n->limit_w = s->limit_w > 0 ? s->limit_w : HUGE_VAL;
    if (parent <= 0) /* the root, and its children: their own names */
        snprintf(n->name, sizeof n->name, s->count > 1 ? "%s-%d" : "%s", s->name, copy);
    else
        snprintf(n->name, sizeof n->name, s->count > 1 ? "%s/%s-%d" : "%s/%s",
                 e->t->node[parent].name, s->name, copy);
    if (s->nodes > 0) {
        const struct pfs_pool *p = &e->pools[s->pool];
        const struct pfs_gpu *g = &e->gpu[s->pool];

        n->nodes = s->nodes;
        n->pool = s->pool;
        n->first_node = e->next_node[s->pool];
        e->next_node[s->pool] += s->nodes;
        n->nameplate_w = s->nodes * (p->gpus_per_node * g->max_limit_w + p->node_other_w);
        n->floor_w = s->nodes * (p->gpus_per_node * g->min_limit_w + p->node_other_w);
        n->idle_w = s->nodes * (p->gpus_per_node * g->idle_w + p->node_other_w);
        n->gpus = (long)s->nodes * p->gpus_per_node;
        n->other_w = s->nodes * p->node_other_w;
    }
    for (size_t k = (size_t)spec + 1; k < e->sc->tree.n; k++)
        if (e->sc->tree.node[k].parent == spec)
            for (int c = 1; c <= e->sc->tree.node[k].count; c++) {
                int rc = add(e, (int)k, (int32_t)me, c, diag);

                if (rc)
                    return rc;
            }
    /* (n may have moved with the array) */
    if (parent >= 0) {
        e->t->node[parent].nameplate_w += e->t->node[me].nameplate_w;
        e->t->node[parent].floor_w += e->t->node[me].floor_w;
        e->t->node[parent].idle_w += e->t->node[me].idle_w;
        e->t->node[parent].gpus += e->t->node[me].gpus;
        e->t->node[parent].other_w += e->t->node[me].other_w;
    }
    return 0;
}

int
pfs_power_tree_new(const struct pfs_scenario *sc, struct pfs_power_tree **out,
                   struct pfs_diag *diag)
{
    struct expand e = {.sc = sc};
    size_t np;
    int rc;

    *out = NULL;
    if (sc->tree.n == 0)
        return 0;
    np = pfs_scenario_pools(sc, e.pools);
    for (size_t p = 0; p < np; p++)
        if ((rc = pfs_scenario_gpu(sc, e.pools[p].gpu, &e.gpu[p], diag)) != 0)
            return rc;
    if (!(e.t = calloc(1, sizeof *e.t)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if ((rc = add(&e, 0, -1, 1, diag)) != 0) {
        pfs_power_tree_free(e.t);
        return rc;
    }
    *out = e.t;
    return 0;
}

void
pfs_power_tree_free(struct pfs_power_tree *t)
{
    if (t)
        free(t->node);
    free(t);
}

/* The lowest node above both a and b. */
static int32_t
common(const struct pfs_power_tree *t, int32_t a, int32_t b)
{
    while (a != b) {
        if (t->node[a].level >= t->node[b].level)
            a = t->node[a].parent;
        else
            b = t->node[b].parent;
    }
    return a;
}

int
pfs_power_tree_place(const struct pfs_power_tree *t, const struct pfs_pool *pools,
                     const double *idle_w, const int *pool, const int *gpus, size_t n, bool spread,
                     uint32_t *node, double *max_w, double *fixed_w, struct pfs_diag *diag)
{
    int *room = calloc(t->n + 1, sizeof *room);    /* a rack's GPUs no job holds */
    bool *alone = calloc(t->n + 1, sizeof *alone); /* held whole by one job */
    int rc = 0;

    if (!room || !alone) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    for (size_t v = 0; v < t->n; v++)
        if (t->node[v].nodes > 0)
            room[v] = t->node[v].nodes * pools[t->node[v].pool].gpus_per_node;
    for (size_t i = 0; i < n && rc == 0; i++) {
        int32_t best = -1, biggest = 0;

        max_w[i] = HUGE_VAL;
        for (size_t v = 0; v < t->n; v++) {
            const struct pfs_power_node *r = &t->node[v];

            if (r->nodes == 0 || r->pool != pool[i] || alone[v])
                continue;
            biggest = r->nodes * pools[r->pool].gpus_per_node > biggest
                          ? r->nodes * pools[r->pool].gpus_per_node
                          : biggest;
            if (room[v] >= gpus[i] && (best < 0 || (spread && room[v] > room[best])))
                best = (int32_t)v;
            if (best >= 0 && !spread)
                break;
        }
        if (best >= 0) {
            node[i] = (uint32_t)best;
            room[best] -= gpus[i];
        } else if (gpus[i] > biggest) { /* whole racks, held alone */
            int left = gpus[i];
            int32_t top = -1;

            for (size_t v = 0; v < t->n && left > 0; v++) {
                const struct pfs_power_node *r = &t->node[v];
                int cap = r->nodes * (r->pool >= 0 ? pools[r->pool].gpus_per_node : 0), mine;

                if (r->nodes == 0 || r->pool != pool[i] || alone[v] || room[v] < cap)
                    continue;
                mine = left < cap ? left : cap;
                left -= mine;
                room[v] = cap - mine; /* idle, and no other job's */
                alone[v] = true;
                top = top < 0 ? (int32_t)v : common(t, top, (int32_t)v);
                /* its own limit: this job's GPUs, the rack's other draw and its spare GPUs idle */
                if (r->limit_w < HUGE_VAL)
                    max_w[i] = fmin(max_w[i], (r->limit_w - r->nodes * pools[r->pool].node_other_w -
                                               (cap - mine) * idle_w[r->pool]) /
                                                  mine);
            }
            if (left > 0)
                rc = pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "tree",
                                   "job %zu (%d GPUs): not enough whole racks of pool '%s' free "
                                   "for it",
                                   i + 1, gpus[i], pools[pool[i]].name);
            else
                node[i] = (uint32_t)top;
        } else {
            rc = pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "tree",
                               "job %zu (%d GPUs): no rack of pool '%s' has room for it (the "
                               "racks are full or split among smaller jobs)",
                               i + 1, gpus[i], pools[pool[i]].name);
        }
    }
    /* What does not move under every node: its nodes' other draw and the idle draw of its
     * GPUs no job holds, summed up the tree (children after parents). */
    for (size_t v = 0; rc == 0 && v < t->n; v++)
        fixed_w[v] = 0;
    for (size_t v = t->n; rc == 0 && v-- > 0;) {
        const struct pfs_power_node *r = &t->node[v];

        if (r->nodes > 0)
            fixed_w[v] += r->nodes * pools[r->pool].node_other_w + room[v] * idle_w[r->pool];
        if (r->parent >= 0)
            fixed_w[r->parent] += fixed_w[v];
    }
out:
    free(room);
    free(alone);
    return rc;
}
