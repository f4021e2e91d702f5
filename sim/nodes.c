/*
 * sim/nodes.c - the power tree during a run (issue 58, docs/scenarios.md "The power tree"):
 * where each job sits, every node's IT power as it moves, and each node's minutes against
 * its limit.
 *
 * Placement. A job that fits a rack of its pool goes whole into one: the first in the tree's
 * order with room (packed, the default) or the one with the most room (spread). A job larger
 * than any rack of its pool takes whole free racks, first in the tree's order, and holds them
 * alone: their spare GPUs idle, no other job's. A job with no such place waits (the
 * scheduler treats it as a job without its GPUs: sim/schedule.c). Holding limits, a rack
 * takes a job only where the job's floor fits under it and every node above it (admission by
 * power, per node): the job goes on to the next rack, or waits where none has room for it. These
 * are pfisim alloc --tree's rules (pfs_power_tree_place), so that one decision and a run's agree.
 *
 * Power. Every node keeps its IT power now: its nodes' other draw, its free GPUs' idle draw
 * (fixed) and its share of each job's draw under it (a job on whole racks: each rack its
 * GPUs' share). A change of a job's draw walks up from its racks, each node's energy first
 * integrated to now (so a node's minute is exact, as the facility's is); a minute's end
 * closes every node's. jfull and jfloor are its jobs' GPUs at their top and lowest limits:
 * a node binds where its jobs at full draw would go over its limit, and a job is admitted
 * where its floor fits beside theirs under every node it would use.
 */
#include "engine.h"

static void *
zalloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

int
pfs__nodes_new(struct sim *s, struct pfs_power_tree *t, size_t most)
{
    struct nodes *nd = calloc(1, sizeof *nd);
    size_t n = t->n;

    if (!nd) {
        pfs_power_tree_free(t);
        return PFS_ENOMEM;
    }
    s->nd = nd;
    nd->t = t;
    nd->n = n;
    nd->spread = s->sc->tree.spread;
    nd->w = zalloc(n, sizeof *nd->w);
    nd->e = zalloc(n, sizeof *nd->e);
    nd->fixed = zalloc(n, sizeof *nd->fixed);
    nd->jfull = zalloc(n, sizeof *nd->jfull);
    nd->jfloor = zalloc(n, sizeof *nd->jfloor);
    nd->lim = zalloc(n, sizeof *nd->lim);
    nd->t_us = zalloc(n, sizeof *nd->t_us);
    nd->add = zalloc(n, sizeof *nd->add);
    nd->room = zalloc(n, sizeof *nd->room);
    nd->cap = zalloc(n, sizeof *nd->cap);
    nd->owner = zalloc(n, sizeof *nd->owner);
    nd->peak = zalloc(n, sizeof *nd->peak);
    nd->at_min = zalloc(n, sizeof *nd->at_min);
    nd->over_min = zalloc(n, sizeof *nd->over_min);
    nd->worst = zalloc(n, sizeof *nd->worst);
    nd->energy = zalloc(n, sizeof *nd->energy);
    nd->hist = zalloc(n * NODE_BINS, sizeof *nd->hist);
    nd->parent = zalloc(n, sizeof *nd->parent);
    nd->name = zalloc(n, sizeof *nd->name);
    nd->slot = zalloc(most + 1, sizeof *nd->slot);
    nd->node_of = zalloc(most + 1, sizeof *nd->node_of);
    nd->h_node = zalloc(most + 1, sizeof *nd->h_node);
    nd->waited = zalloc(s->n_jobs / 8 + 1, 1);
    if (!nd->w || !nd->e || !nd->fixed || !nd->jfull || !nd->jfloor || !nd->lim || !nd->t_us ||
        !nd->add || !nd->room || !nd->cap || !nd->owner || !nd->peak || !nd->at_min ||
        !nd->over_min || !nd->worst || !nd->energy || !nd->hist || !nd->parent || !nd->name ||
        !nd->slot || !nd->node_of || !nd->h_node || !nd->waited)
        return PFS_ENOMEM;
    for (size_t v = 0; v < n; v++) {
        const struct pfs_power_node *r = &t->node[v];

        nd->w[v] = nd->fixed[v] = r->idle_w; /* every GPU free */
        nd->limited |= v > 0 && r->limit_w < HUGE_VAL;
        nd->parent[v] = r->parent;
        nd->name[v] = r->name;
        if (r->nodes > 0) {
            size_t p = (size_t)r->pool;
            uint32_t *g = realloc(nd->racks_of[p], (nd->n_racks_of[p] + 1) * sizeof *g);

            if (!g)
                return PFS_ENOMEM;
            nd->racks_of[p] = g;
            g[nd->n_racks_of[p]++] = (uint32_t)v;
            nd->room[v] = nd->cap[v] = (int)r->gpus;
            if (nd->cap[v] > nd->max_cap[p])
                nd->max_cap[p] = nd->cap[v];
        }
    }
    return 0;
}

void
pfs__nodes_free(struct sim *s)
{
    struct nodes *nd = s->nd;

    if (!nd)
        return;
    for (size_t r = 0; nd->slot && r < s->n_running; r++)
        if (nd->slot[r].n_racks > 1) {
            free(nd->slot[r].racks);
            free(nd->slot[r].mine);
        }
    for (size_t p = 0; p < PFS_MAX_POOLS; p++)
        free(nd->racks_of[p]);
    free(nd->w), free(nd->e), free(nd->fixed), free(nd->jfull), free(nd->jfloor), free(nd->lim);
    free(nd->t_us), free(nd->add), free(nd->room), free(nd->cap), free(nd->owner);
    free(nd->peak), free(nd->at_min), free(nd->over_min), free(nd->worst), free(nd->energy);
    free(nd->hist), free(nd->parent), free(nd->name), free(nd->slot), free(nd->node_of);
    free(nd->h_node), free(nd->p_racks), free(nd->p_mine), free(nd->waited);
    pfs_power_tree_free(nd->t);
    free(nd);
    s->nd = NULL;
}

/* The lowest node above both a and b. */
static uint32_t
common(const struct pfs_power_tree *t, uint32_t a, uint32_t b)
{
    while (a != b) {
        if (t->node[a].level >= t->node[b].level)
            a = (uint32_t)t->node[a].parent;
        else
            b = (uint32_t)t->node[b].parent;
    }
    return a;
}

/* Whether n GPUs of a job in placement pl, each adding per_gpu_w, fit under every node above
 * its racks below the root (held as the facility's cap): beside the jobs' floors or their
 * full draw (and the node's fixed draw). */
enum fit { FIT_FLOOR, FIT_FULL };
static bool fits(const struct sim *s, const struct nplace *pl, int n, enum fit by,
                 double per_gpu_w);

int
pfs__nodes_place(struct sim *s, int p, int n, double floor_w, struct nplace *pl)
{
    struct nodes *nd = s->nd;
    const uint32_t *rk = nd->racks_of[p];
    size_t nr = nd->n_racks_of[p];
    bool room = false;
    int left = n;

    *pl = (struct nplace){.box_w = HUGE_VAL};
    if (n <= nd->max_cap[p]) { /* whole into one rack, its floor under it */
        int32_t best = -1;

        for (size_t q = 0; q < nr; q++) {
            uint32_t v = rk[q];
            struct nplace one = {v, 1, NULL, NULL, v, n, HUGE_VAL};

            if (nd->owner[v] || nd->room[v] < n)
                continue;
            room = true;
            one.racks = &one.rack;
            one.mine = &one.one;
            if (!isnan(floor_w) && !fits(s, &one, n, FIT_FLOOR, floor_w))
                continue;
            if (best < 0 || (nd->spread && nd->room[v] > nd->room[best]))
                best = (int32_t)v;
            if (!nd->spread)
                break;
        }
        if (best < 0)
            return room ? 2 : 1;
        pl->rack = pl->node = (uint32_t)best;
        pl->n_racks = 1;
        pl->racks = &pl->rack;
        pl->one = n;
        pl->mine = &pl->one;
        return 0;
    }
    if (nd->p_cap < nr) { /* whole free racks, held alone */
        uint32_t *a = realloc(nd->p_racks, nr * sizeof *a);
        int *b = a ? realloc(nd->p_mine, nr * sizeof *b) : NULL;

        if (a)
            nd->p_racks = a;
        if (!b)
            return 1; /* (no memory: it waits) */
        nd->p_mine = b;
        nd->p_cap = nr;
    }
    for (size_t q = 0; q < nr && left > 0; q++) {
        uint32_t v = rk[q];
        const struct pfs_power_node *r = &nd->t->node[v];
        int mine;

        if (nd->owner[v] || nd->room[v] < nd->cap[v])
            continue;
        mine = left < nd->cap[v] ? left : nd->cap[v];
        left -= mine;
        nd->p_racks[pl->n_racks] = v;
        nd->p_mine[pl->n_racks++] = mine;
        pl->node = pl->n_racks == 1 ? v : common(nd->t, pl->node, v);
        if (r->limit_w < HUGE_VAL) /* its GPUs' share of the rack, the rest idle */
            pl->box_w =
                fmin(pl->box_w,
                     (r->limit_w - r->other_w - (nd->cap[v] - mine) * s->in->gpu[p].idle_w) / mine);
    }
    pl->racks = nd->p_racks;
    pl->mine = nd->p_mine;
    if (left > 0)
        return 1;
    return !isnan(floor_w) && !fits(s, pl, n, FIT_FLOOR, floor_w) ? 2 : 0;
}

/* Adds w x (its GPUs there / n) of placement pl to every node above each of its racks, in
 * nd->add; the nodes touched are those on the racks' ways up. */
static void
share(struct nodes *nd, const struct nplace *pl, int n, double w)
{
    for (uint32_t q = 0; q < pl->n_racks; q++) {
        double d = w * pl->mine[q] / n;

        for (int32_t v = (int32_t)pl->racks[q]; v >= 0; v = nd->parent[v])
            nd->add[v] += d;
    }
}

static void
unshare(struct nodes *nd, const struct nplace *pl)
{
    for (uint32_t q = 0; q < pl->n_racks; q++)
        for (int32_t v = (int32_t)pl->racks[q]; v >= 0; v = nd->parent[v])
            nd->add[v] = 0;
}

static bool
fits(const struct sim *s, const struct nplace *pl, int n, enum fit by, double per_gpu_w)
{
    struct nodes *nd = s->nd;
    bool fits = true;

    share(nd, pl, n, n * per_gpu_w);
    for (uint32_t q = 0; q < pl->n_racks && fits; q++) /* (the root: the facility's cap) */
        for (int32_t v = (int32_t)pl->racks[q]; v > 0 && fits; v = nd->parent[v]) {
            double have = (by == FIT_FLOOR ? nd->jfloor[v] : nd->jfull[v]) + nd->fixed[v];

            fits = have + nd->add[v] <= nd->t->node[v].limit_w * (1 + 1e-12);
        }
    unshare(nd, pl);
    return fits;
}

/* Integrates node v's energy up to now, then moves its power by dw. */
static inline void
move(struct nodes *nd, int32_t v, int64_t now_us, double dw)
{
    nd->e[v] += nd->w[v] * (double)(now_us - nd->t_us[v]) / US;
    nd->t_us[v] = now_us;
    nd->w[v] += dw;
}

bool
pfs__nodes_fit(const struct sim *s, const struct nplace *pl, int n, double per_gpu_w)
{
    return fits(s, pl, n, FIT_FULL, per_gpu_w);
}

/* Moves every node above placement pl's racks by w in proportion to its GPUs in each, and
 * jfull, jfloor and fixed by full, floor and fixed alike. */
static void
walk(struct sim *s, const struct nplace *pl, int n, double w, double full, double floor,
     double fixed)
{
    struct nodes *nd = s->nd;

    for (uint32_t q = 0; q < pl->n_racks; q++) {
        double f = (double)pl->mine[q] / n;

        for (int32_t v = (int32_t)pl->racks[q]; v >= 0; v = nd->parent[v]) {
            move(nd, v, s->now_us, w * f);
            nd->jfull[v] += full * f;
            nd->jfloor[v] += floor * f;
            nd->fixed[v] += fixed * f;
        }
    }
}

int
pfs__nodes_take(struct sim *s, size_t slot, const struct nplace *pl, int n, double idle_w,
                double full_w, double floor_w)
{
    struct nodes *nd = s->nd;
    struct nplace *me = &nd->slot[slot];

    *me = *pl;
    if (pl->n_racks > 1) { /* its own copy of the racks (the placement's are scratch) */
        me->racks = malloc(pl->n_racks * sizeof *me->racks);
        me->mine = malloc(pl->n_racks * sizeof *me->mine);
        if (!me->racks || !me->mine) {
            free(me->racks);
            free(me->mine);
            me->n_racks = 0;
            return PFS_ENOMEM;
        }
        memcpy(me->racks, pl->racks, pl->n_racks * sizeof *me->racks);
        memcpy(me->mine, pl->mine, pl->n_racks * sizeof *me->mine);
    } else {
        me->racks = &me->rack;
        me->mine = &me->one;
    }
    nd->node_of[slot] = me->node;
    for (uint32_t q = 0; q < me->n_racks; q++) {
        uint32_t v = me->racks[q];

        nd->room[v] -= me->mine[q];
        if (me->n_racks > 1)
            nd->owner[v] = (uint32_t)slot + 1; /* (alone: no other job's) */
    }
    /* its GPUs no longer idle free: the job's draw comes with its rate (pfs__nodes_draw) */
    walk(s, me, n, -n * idle_w, full_w, floor_w, -n * idle_w);
    return 0;
}

void
pfs__nodes_release(struct sim *s, size_t slot, int n, double idle_w, double full_w, double floor_w)
{
    struct nodes *nd = s->nd;
    struct nplace *me = &nd->slot[slot];

    walk(s, me, n, n * idle_w, -full_w, -floor_w, n * idle_w);
    for (uint32_t q = 0; q < me->n_racks; q++) {
        nd->room[me->racks[q]] += me->mine[q];
        nd->owner[me->racks[q]] = 0;
    }
    if (me->n_racks > 1) {
        free(me->racks);
        free(me->mine);
    }
    *me = (struct nplace){0};
}

void
pfs__nodes_move(struct sim *s, size_t from, size_t to)
{
    struct nodes *nd = s->nd;
    struct nplace *a = &nd->slot[from];

    nd->slot[to] = *a;
    if (a->n_racks == 1) { /* (its rack held in the record itself) */
        nd->slot[to].racks = &nd->slot[to].rack;
        nd->slot[to].mine = &nd->slot[to].one;
    }
    for (uint32_t q = 0; q < a->n_racks; q++)
        if (nd->owner[a->racks[q]] == from + 1)
            nd->owner[a->racks[q]] = (uint32_t)to + 1;
    nd->node_of[to] = nd->node_of[from];
    *a = (struct nplace){0};
}

void
pfs__nodes_draw(struct sim *s, size_t slot, int n, double dw)
{
    walk(s, &s->nd->slot[slot], n, dw, 0, 0, 0);
}

/* The most GPUs one job of pool p finds a place for now: the most room in one rack, or the
 * whole free racks' GPUs where those exceed a rack (an upper bound where racks differ in
 * size: a job between them may find none). */
int
pfs__nodes_room(const struct sim *s, int p)
{
    const struct nodes *nd = s->nd;
    int best = 0, whole = 0;

    for (size_t q = 0; q < nd->n_racks_of[p]; q++) {
        uint32_t v = nd->racks_of[p][q];

        if (nd->owner[v])
            continue;
        whole += nd->room[v] == nd->cap[v] ? nd->cap[v] : 0;
        best = nd->room[v] > best ? nd->room[v] : best;
    }
    return whole > nd->max_cap[p] ? whole : best;
}

bool
pfs__nodes_bind(const struct sim *s)
{
    const struct nodes *nd = s->nd;

    for (size_t v = 1; v < nd->n; v++) /* (the root: the facility's cap) */
        if (nd->jfull[v] + nd->fixed[v] > nd->t->node[v].limit_w)
            return true;
    return false;
}

void
pfs__nodes_budgets(struct sim *s, double root_w)
{
    struct nodes *nd = s->nd;

    nd->lim[0] = root_w;
    for (size_t v = 1; v < nd->n; v++)
        nd->lim[v] = nd->t->node[v].limit_w - nd->fixed[v];
}

void
pfs__nodes_minute(struct sim *s, double len)
{
    struct nodes *nd = s->nd;

    for (size_t v = 0; v < nd->n; v++) {
        const struct pfs_power_node *r = &nd->t->node[v];
        double mean, b;

        move(nd, (int32_t)v, s->now_us, 0);
        mean = nd->e[v] / len;
        nd->energy[v] += nd->e[v];
        nd->e[v] = 0;
        nd->peak[v] = fmax(nd->peak[v], mean);
        b = floor(mean / r->nameplate_w * NODE_BINS);
        nd->hist[v * NODE_BINS + (size_t)(b < 0 ? 0 : b >= NODE_BINS ? NODE_BINS - 1 : b)]++;
        if (mean > r->limit_w * (1 + 1e-9)) {
            nd->over_min[v] += len / 60;
            nd->worst[v] = fmax(nd->worst[v], mean - r->limit_w);
        } else if (mean >= 0.99 * r->limit_w)
            nd->at_min[v] += len / 60;
    }
}

int
pfs__nodes_results(struct sim *s)
{
    struct nodes *nd = s->nd;
    struct pfs_node_result *out = calloc(nd->n, sizeof *out);
    size_t minutes = s->n_minutes;

    if (!out)
        return PFS_ENOMEM;
    for (size_t v = 0; v < nd->n; v++) {
        const struct pfs_power_node *r = &nd->t->node[v];
        struct pfs_node_result *o = &out[v];
        size_t need = (size_t)ceil(0.99 * (double)minutes), seen = 0, b = 0;

        pfs__strlcpy(o->name, r->name, sizeof o->name);
        o->level = r->level;
        o->limit_w = r->limit_w;
        o->nameplate_w = r->nameplate_w;
        o->peak_w = nd->peak[v];
        for (; b < NODE_BINS && minutes > 0; b++)
            if ((seen += nd->hist[v * NODE_BINS + b]) >= need)
                break;
        o->p99_w =
            minutes > 0 ? fmin(nd->peak[v], (double)(b + 1) / NODE_BINS * r->nameplate_w) : 0;
        o->minutes_at = nd->at_min[v];
        o->minutes_over = nd->over_min[v];
        o->worst_excess_w = nd->worst[v];
        o->energy_j = nd->energy[v];
    }
    s->res->tree = out;
    s->res->n_tree = nd->n;
    return 0;
}
