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
#include <string.h>

#include "policy.h"

/* The room left under every node on job i's way to the root. */
static double
room_of(const struct pfs_alloc_tree *t, const double *left, size_t i)
{
    double room = HUGE_VAL;

    for (int32_t v = (int32_t)t->job_node[i]; v >= 0; v = t->parent[v])
        room = fmin(room, left[v]);
    return room;
}

static void
charge(const struct pfs_alloc_tree *t, double *left, size_t i, double w)
{
    for (int32_t v = (int32_t)t->job_node[i]; v >= 0; v = t->parent[v])
        left[v] -= w;
}

/* Each node's limit, the root's also the budget; PFS_EINVAL where the tree is malformed. */
static int
limits(const char *who, const struct pfs_alloc_tree *t, size_t n, double budget_w, double *left,
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
tightest(const struct pfs_alloc_tree *t, const double *left, size_t i)
{
    size_t best = t->job_node[i];

    for (int32_t v = (int32_t)t->job_node[i]; v >= 0; v = t->parent[v])
        if (left[v] < left[best])
            best = (size_t)v;
    return best;
}

static int
infeasible(const char *who, const struct pfs_alloc_tree *t, const double *left, size_t v,
           struct pfs_diag *diag)
{
    return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "budget",
                         "infeasible for %s: the jobs under %s%s%s need %.0f W more than its "
                         "limit at their lowest caps",
                         who, t->name ? "'" : "node ", t->name ? t->name[v] : "",
                         t->name ? "'" : "", -left[v]);
}

/* Job i's curve segments of positive slope, clipped at its max_w, into s (throughput per
 * watt of GPU power, the GPU power they take); returns how many. The same arithmetic in
 * every call, so that a slope found once is found again bit for bit. */
static size_t
segments_of(const struct pfs_pwl *c, const struct pfs_alloc_job *j, struct pfs__seg *s)
{
    const double top = j->max_w > 0 ? j->max_w : HUGE_VAL;
    size_t m = 0;

    for (size_t k = 1; k < c->n; k++) {
        double x0 = c->x[k - 1], x1 = c->x[k] < top ? c->x[k] : top, dx, dy;

        if (!(x1 > x0))
            break;
        dx = c->x[k] - x0;
        dy = (c->y[k] - c->y[k - 1]) * ((x1 - x0) / dx);
        if (!(dy > 0))
            break; /* concave: nothing steeper follows */
        s[m++] = (struct pfs__seg){dy / ((x1 - x0) * j->n_gpus), (x1 - x0) * j->n_gpus};
    }
    return m;
}

/* Where job i's segment q (of segments_of) ends: its curve's next point, or its max_w. */
static double
seg_end(const struct pfs_pwl *c, const struct pfs_alloc_job *j, size_t q)
{
    const double top = j->max_w > 0 ? j->max_w : HUGE_VAL;

    return c->x[q + 1] < top ? c->x[q + 1] : top;
}

/* A tied segment: at its job's threshold exactly, filled last. */
struct tie {
    double slope, need;
    uint32_t job, k;
};

static int
cmp_tie(const void *a, const void *b)
{
    const struct tie *x = a, *y = b;

    if (x->slope > y->slope)
        return -1;
    if (x->slope < y->slope)
        return 1;
    if (x->job != y->job)
        return x->job < y->job ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* The optimum without sorting every segment: each node's saturation price found bottom up,
 * by the weighted quickselect of pfs__threshold over the segments that reach it (its own
 * jobs', and each child's steeper than the child's price plus one segment at that price for
 * what the child has left: all a saturated child can still take). A job takes every segment
 * steeper than the highest price on its way up; the segments exactly at it share what is
 * left, greedily in order of slope, job and segment, each as far as every node above has
 * room. O(S x depth) expected, and the same answer as the greedy over all S segments sorted
 * (a test checks both against exhaustive search). */
int
pfs__waterfill_tree(const char *who, const struct pfs_pwl *curves, const struct pfs_alloc_job *jobs,
                    size_t n, const struct pfs_alloc_tree *t, double budget_w,
                    struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    const size_t nn = t->n_nodes;
    double *left = malloc((nn + 1) * sizeof *left), *mu = malloc((nn + 1) * sizeof *mu);
    size_t *at = calloc(nn + 2, sizeof *at), *order = malloc((n + 1) * sizeof *order);
    size_t *kid_at = calloc(nn + 2, sizeof *kid_at);
    uint32_t *kids = malloc((nn + 1) * sizeof *kids), *pre = malloc((nn + 1) * sizeof *pre);
    size_t *stk = malloc((nn + 1) * sizeof *stk); /* the walk's, then each list's start */
    struct pfs__seg *buf = NULL, *own = NULL;     /* own: every job's segments, job after job */
    size_t *first = malloc((n + 2) * sizeof *first);
    double *need = malloc((n + 1) * sizeof *need), *tot = malloc((nn + 1) * sizeof *tot);
    struct tie *ties = NULL;
    size_t n_buf = 0, cap_buf = 0, total = 0, n_ties = 0;
    int rc;

    if (!left || !mu || !at || !order || !kid_at || !kids || !pre || !stk) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    if ((rc = limits(who, t, n, budget_w, left, diag)) != 0)
        goto out;
    for (size_t i = 0; i < n; i++) {
        total += curves[i].n;
        out[i] = (struct pfs_alloc_decision){.cap_w = curves[i].x[0]};
        charge(t, left, i, jobs[i].n_gpus * curves[i].x[0]);
        at[t->job_node[i] + 1]++;
    }
    for (size_t i = 0; i < n; i++) {
        size_t v = tightest(t, left, i);

        if (left[v] < -1e-9 * fmax(1, t->limit_w[v] < HUGE_VAL ? t->limit_w[v] : budget_w)) {
            rc = infeasible(who, t, left, v, diag);
            goto out;
        }
    }
    /* the jobs by node (a counting sort), their segments scratch */
    for (size_t v = 0; v < nn; v++)
        at[v + 1] += at[v];
    for (size_t i = 0; i < n; i++)
        order[at[t->job_node[i]]++] = i;
    for (size_t v = nn; v-- > 0;)
        at[v + 1] = at[v];
    at[0] = 0;
    cap_buf = total + nn + 1;
    /* the big arrays in the thread's scratch slots 4-6 (no tree-aware policy uses them):
     * megabytes fresh from the kernel at every decision cost more than the solve */
    if (!first || !need || !tot || !(own = pfs__scratch(4, (total + 1) * sizeof *own)) ||
        !(buf = pfs__scratch(5, cap_buf * sizeof *buf))) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    first[0] = 0;
    for (size_t i = 0; i < n; i++) {
        first[i + 1] = first[i] + segments_of(&curves[i], &jobs[i], own + first[i]);
        need[i] = 0;
        for (size_t q = first[i]; q < first[i + 1]; q++)
            need[i] += own[q].need;
    }
    /* The nodes depth first (each subtree's together), by their children. */
    for (size_t v = 1; v < nn; v++)
        kid_at[t->parent[v] + 1]++;
    for (size_t v = 0; v < nn; v++)
        kid_at[v + 1] += kid_at[v];
    for (size_t v = 1; v < nn; v++)
        kids[kid_at[t->parent[v]]++] = (uint32_t)v;
    for (size_t v = nn; v-- > 0;)
        kid_at[v + 1] = kid_at[v];
    kid_at[0] = 0;
    {
        size_t sp = 0, k = 0;

        stk[sp++] = 0;
        while (sp > 0) {
            const uint32_t v = (uint32_t)stk[--sp];

            pre[k++] = v;
            for (size_t c = kid_at[v + 1]; c-- > kid_at[v];)
                stk[sp++] = kids[c];
        }
    }
    /* Bottom up, in the reverse of that order: when node v comes, its children's lists lie
     * together at the end of buf; its own jobs' segments join them, and the whole is cut at
     * v's price in place. Each list's total need comes up with it (tot, beside stk): a
     * child's is what it kept, its room where it bound, so no pass adds a list up again. */
    for (size_t k = nn, sp = 0; k-- > 0;) {
        const uint32_t v = pre[k];
        const size_t n_kids = kid_at[v + 1] - kid_at[v];
        const size_t from = n_kids ? stk[sp - n_kids] : n_buf;
        double sum = 0, above = 0;

        sp -= n_kids;
        for (size_t c = 0; c < n_kids; c++)
            sum += tot[sp + c];
        for (size_t q = at[v]; q < at[v + 1]; q++) {
            const size_t i = order[q];

            memcpy(buf + n_buf, own + first[i], (first[i + 1] - first[i]) * sizeof *buf);
            n_buf += first[i + 1] - first[i];
            sum += need[i];
        }
        mu[v] = -1; /* nothing binds here */
        if (sum > left[v]) {
            size_t w = from;

            mu[v] = pfs__threshold(buf + from, n_buf - from, left[v]);
            /* keep what is steeper, and one segment at the price for the room it leaves */
            for (size_t q = from; q < n_buf; q++)
                if (buf[q].slope > mu[v]) {
                    above += buf[q].need;
                    buf[w++] = buf[q];
                }
            n_buf = w;
            sum = above;
            if (isfinite(mu[v]) && left[v] - above > 0) {
                buf[n_buf++] = (struct pfs__seg){mu[v], left[v] - above};
                sum = left[v];
            }
        }
        tot[sp] = sum;
        stk[sp++] = from;
    }
    /* Each job: every segment steeper than the highest price above it, whole; those exactly
     * at it wait for the rest. */
    if (!(ties = pfs__scratch(6, (total + 1) * sizeof *ties))) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        double price = -1;
        const struct pfs__seg *mine = own + first[i];
        const size_t m = first[i + 1] - first[i];

        double took = 0;

        for (int32_t v = (int32_t)t->job_node[i]; v >= 0; v = t->parent[v])
            price = fmax(price, mu[v]);
        for (size_t q = 0; q < m; q++) {
            if (mine[q].slope > price) {
                out[i].cap_w = seg_end(&curves[i], &jobs[i], q);
                took += mine[q].need;
                continue;
            }
            for (; q < m && !(mine[q].slope < price); q++)
                ties[n_ties++] =
                    (struct tie){mine[q].slope, mine[q].need, (uint32_t)i, (uint32_t)q};
            break;
        }
        charge(t, left, i, took); /* (its steeper segments, all at once) */
    }
    /* The tied segments share what is left, each as far as every node above has room. */
    qsort(ties, n_ties, sizeof *ties, cmp_tie);
    for (size_t q = 0; q < n_ties; q++) {
        const size_t i = ties[q].job;
        double take;

        if (q > 0 && ties[q - 1].job == i && ties[q - 1].need > 0)
            continue; /* its previous segment was not taken whole */
        take = fmin(ties[q].need, room_of(t, left, i));
        if (take > 0) {
            out[i].cap_w = take < ties[q].need ? out[i].cap_w + take / jobs[i].n_gpus
                                               : seg_end(&curves[i], &jobs[i], ties[q].k);
            charge(t, left, i, take);
        }
        ties[q].need -= take > 0 ? take : 0; /* what it could not take: blocks its next */
    }
    rc = 0;
out:
    free(left);
    free(mu);
    free(at);
    free(order);
    free(kid_at);
    free(kids);
    free(pre);
    free(stk);
    free(first);
    free(need);
    free(tot);
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
                const double *hi, const struct pfs_alloc_tree *t, double budget_w,
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

int
pfs_policy_waterfill_tree(const char *who, const struct pfs_pwl *curves,
                          const struct pfs_alloc_job *jobs, size_t n,
                          const struct pfs_alloc_tree *tree, double budget_w,
                          struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    return pfs__waterfill_tree(who, curves, jobs, n, tree, budget_w, out, diag);
}

int
pfs_policy_level_tree(const char *who, const struct pfs_alloc_job *jobs, size_t n, const double *lo,
                      const double *hi, const struct pfs_alloc_tree *tree, double budget_w,
                      struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    return pfs__level_tree(who, jobs, n, lo, hi, tree, budget_w, out, diag);
}
