/*
 * policies/tree.c - dividing power under a tree of limits (issue 58, docs/policies.md "Under a
 * power tree").
 *
 * Real power reaches GPUs through a tree: a feed, rows on busways, racks on breakers, each
 * with its own limit. The jobs' GPU power under every node must stay under that node's limit,
 * which makes the budget a laminar family of constraints. Two solvers:
 *
 *   pfs__waterfill_tree  the throughput optimum over concave curves: start every job at its
 *                        lowest point, then take curve segments in decreasing order of
 *                        throughput per watt, each as far as every node above it has room.
 *                        A laminar family of capacities is a polymatroid, where this greedy
 *                        is exact (Edmonds 1970); tests check it against exhaustive search.
 *   pfs__level_tree      the same cap on every GPU as far as the tree allows (max-min fair
 *                        per GPU): each node's saturation level found bottom-up, a job capped
 *                        at the lowest level of the nodes above it and the root's.
 */
#include <stdlib.h>

#include "policy.h"

/* The room left under every node on job i's way to the root. */
static double
room_of(const struct pfs__tree *t, const double *left, size_t i)
{
    double room = HUGE_VAL;

    for (int32_t v = (int32_t)t->job_node[i]; v >= 0; v = t->parent[v])
        room = fmin(room, left[v]);
    return room;
}

static void
charge(const struct pfs__tree *t, double *left, size_t i, double w)
{
    for (int32_t v = (int32_t)t->job_node[i]; v >= 0; v = t->parent[v])
        left[v] -= w;
}

/* Each node's limit, the root's also the budget; PFS_EINVAL where the tree is malformed. */
static int
limits(const char *who, const struct pfs__tree *t, size_t n, double budget_w, double *left,
       struct pfs_diag *diag)
{
    if (t->n_nodes == 0 || t->parent[0] != -1)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "tree", "%s: a tree needs a root", who);
    for (size_t v = 0; v < t->n_nodes; v++) {
        if (v > 0 && !(t->parent[v] >= 0 && (size_t)t->parent[v] < v))
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "tree",
                                 "%s: node %zu's parent must come before it", who, v);
        left[v] = t->limit_w[v];
    }
    left[0] = fmin(left[0], budget_w);
    for (size_t i = 0; i < n; i++)
        if (t->job_node[i] >= t->n_nodes)
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "tree",
                                 "%s: job %zu hangs under no node of the tree", who, i);
    return 0;
}

/* The node whose room is least on job i's way (for messages). */
static size_t
tightest(const struct pfs__tree *t, const double *left, size_t i)
{
    size_t best = t->job_node[i];

    for (int32_t v = (int32_t)t->job_node[i]; v >= 0; v = t->parent[v])
        if (left[v] < left[best])
            best = (size_t)v;
    return best;
}

static int
infeasible(const char *who, const struct pfs__tree *t, const double *left, size_t v,
           struct pfs_diag *diag)
{
    return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "budget",
                         "infeasible for %s: the jobs under %s%s%s need %.0f W more than its "
                         "limit at their lowest caps",
                         who, t->name ? "'" : "node ", t->name ? t->name[v] : "",
                         t->name ? "'" : "", -left[v]);
}

struct tseg {
    double slope, need;
    uint32_t job, k;
};

static int
cmp_tseg(const void *a, const void *b)
{
    const struct tseg *x = a, *y = b;

    if (x->slope > y->slope)
        return -1;
    if (x->slope < y->slope)
        return 1;
    if (x->job != y->job)
        return x->job < y->job ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

int
pfs__waterfill_tree(const char *who, const struct pfs_pwl *curves, const struct pfs_alloc_job *jobs,
                    size_t n, const struct pfs__tree *t, double budget_w,
                    struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    double *left = malloc((t->n_nodes + 1) * sizeof *left);
    bool *blocked = calloc(n + 1, sizeof *blocked);
    struct tseg *s = NULL;
    size_t n_seg = 0, cap = 0;
    int rc;

    if (!left || !blocked) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    if ((rc = limits(who, t, n, budget_w, left, diag)) != 0)
        goto out;
    for (size_t i = 0; i < n; i++) {
        cap += curves[i].n;
        out[i] = (struct pfs_alloc_decision){.cap_w = curves[i].x[0]};
        charge(t, left, i, jobs[i].n_gpus * curves[i].x[0]);
    }
    for (size_t i = 0; i < n; i++) {
        size_t v = tightest(t, left, i);

        if (left[v] < -1e-9 * fmax(1, t->limit_w[v] < HUGE_VAL ? t->limit_w[v] : budget_w)) {
            rc = infeasible(who, t, left, v, diag);
            goto out;
        }
    }
    if (!(s = malloc((cap + 1) * sizeof *s))) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = 1; k < curves[i].n; k++) {
            double dx = curves[i].x[k] - curves[i].x[k - 1],
                   dy = curves[i].y[k] - curves[i].y[k - 1];

            if (dy > 0 && dx > 0)
                s[n_seg++] = (struct tseg){dy / (dx * jobs[i].n_gpus), dx * jobs[i].n_gpus,
                                           (uint32_t)i, (uint32_t)k};
        }
    qsort(s, n_seg, sizeof *s, cmp_tseg);
    for (size_t q = 0; q < n_seg; q++) {
        const size_t i = s[q].job;
        double take;

        if (blocked[i])
            continue;
        take = fmin(s[q].need, room_of(t, left, i));
        if (jobs[i].max_w > 0) /* its own box: a rack it holds alone, say */
            take = fmin(take, (jobs[i].max_w - out[i].cap_w) * jobs[i].n_gpus);
        if (take > 0) {
            /* the segment's end exactly when it is taken whole */
            out[i].cap_w =
                take < s[q].need ? out[i].cap_w + take / jobs[i].n_gpus : curves[i].x[s[q].k];
            charge(t, left, i, take);
        }
        /* a node above is full: this job's flatter segments find no room either */
        blocked[i] = take < s[q].need;
    }
out:
    free(left);
    free(blocked);
    free(s);
    return rc;
}

/* The GPU power of node v's jobs with every GPU at level L, each job held to its own range
 * and to the lowest saturation level below v on its way (sat_below[i]). */
static double
demand(const struct pfs_alloc_job *jobs, const size_t *mine, size_t n_mine, const double *lo,
       const double *hi, const double *sat_below, double L)
{
    double w = 0;

    for (size_t q = 0; q < n_mine; q++) {
        const size_t i = mine[q];

        w += jobs[i].n_gpus * pfs__clamp(fmin(L, sat_below[i]), lo[i], hi[i]);
    }
    return w;
}

int
pfs__level_tree(const char *who, const struct pfs_alloc_job *jobs, size_t n, const double *lo,
                const double *hi, const struct pfs__tree *t, double budget_w,
                struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    double *left = malloc((t->n_nodes + 1) * sizeof *left);
    double *sat = malloc((n + 1) * sizeof *sat); /* per job: the lowest level above it so far */
    size_t *first = calloc(t->n_nodes + 2, sizeof *first), *mine = NULL, depth = 0;
    double top = 0;
    int rc;

    if (!left || !sat || !first) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    if ((rc = limits(who, t, n, budget_w, left, diag)) != 0)
        goto out;
    /* Each node's jobs (its whole subtree's), as runs of one array: first[v] .. first[v+1]. */
    for (size_t i = 0; i < n; i++)
        for (int32_t v = (int32_t)t->job_node[i]; v >= 0; v = t->parent[v], depth++)
            first[v + 1]++;
    for (size_t v = 0; v < t->n_nodes; v++)
        first[v + 1] += first[v];
    if (!(mine = malloc((depth + 1) * sizeof *mine))) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        for (int32_t v = (int32_t)t->job_node[i]; v >= 0; v = t->parent[v])
            mine[first[v]++] = i;
    for (size_t v = t->n_nodes; v-- > 0;) /* back to each run's start */
        first[v + 1] = first[v];
    first[0] = 0;
    for (size_t i = 0; i < n; i++) {
        sat[i] = HUGE_VAL;
        top = fmax(top, hi[i]);
        charge(t, left, i, jobs[i].n_gpus * lo[i]);
    }
    for (size_t v = 0; v < t->n_nodes; v++)
        if (left[v] < -1e-9 * fmax(1, fmin(t->limit_w[v], v ? HUGE_VAL : budget_w))) {
            rc = infeasible(who, t, left, v, diag);
            goto out;
        }
    /* Bottom up (children come after their parents): each node's saturation level, the level
     * at which its jobs, each already held by the nodes below, fill its limit. */
    for (size_t v = t->n_nodes; v-- > 0;) {
        const double lim = v ? t->limit_w[v] : fmin(t->limit_w[0], budget_w);
        const size_t *of = mine + first[v], n_of = first[v + 1] - first[v];
        double a = 0, b = top;

        if (n_of == 0 || !(lim < HUGE_VAL) || demand(jobs, of, n_of, lo, hi, sat, top) <= lim)
            continue; /* never binds */
        for (int it = 0; it < 200 && b - a > 1e-12 * top; it++) {
            double m = 0.5 * (a + b);

            if (demand(jobs, of, n_of, lo, hi, sat, m) <= lim)
                a = m;
            else
                b = m;
        }
        for (size_t q = 0; q < n_of; q++)
            sat[of[q]] = fmin(sat[of[q]], a);
    }
    for (size_t i = 0; i < n; i++)
        out[i] = (struct pfs_alloc_decision){.cap_w = pfs__clamp(sat[i], lo[i], hi[i])};
out:
    free(left);
    free(sat);
    free(first);
    free(mine);
    return rc;
}
