/*
 * policies/sla.c - deadline- and tier-aware: floors first, then PFI-aware for the rest.
 *
 * Each job first gets the power it needs: its tier floor (the cap at which its predicted
 * throughput keeps 1 - L of full power) and, when the simulator gives a deadline and the
 * work left, the cap whose predicted throughput finishes it in time. The budget above the
 * floors is water-filled over the predicted curves, as pfi does. When the floors alone do not
 * fit, interruptible jobs are paused whole: the most tolerant tier first (Flex 3, 2, 1),
 * within a tier the job that frees the most power first; firm jobs are never paused. If even
 * that does not fit, the budget is infeasible.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

/* fmax, inline (a call into libm, at every job of every decision) */
static inline double
max_of(double a, double b)
{
    return a > b || isnan(b) ? a : b;
}

/* The deadline floor of job i on curve c (its cap, or -inf when it has no deadline). */
static double
deadline_floor(const struct pfs_alloc_job *j, const struct pfs_pwl *c)
{
    double left, need, top = c->y[c->n - 1];

    if (!isfinite(j->deadline_s) || !(j->remaining_tokens > 0) || !(top > 0))
        return -HUGE_VAL;
    left = j->deadline_s - j->now_s;
    need = left > 0 ? j->remaining_tokens / left : HUGE_VAL;
    return pfs__floor_cap(c, max_of(0, 1 - need / top));
}

/* The bits of a and b the same (a kept input against today's; NAN matches nothing). */
static inline bool
same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Whether job j's deadline floor is no higher than its tolerance's floor on a curve whose
 * lowest point gives y0 and whose top is top, so that max_of(tolerance's floor,
 * deadline_floor) is the tolerance's, bit for bit. It is where the job has none; where the
 * curve's lowest point meets its need (deadline_floor is then the lowest cap, and the
 * tolerance's floor is never below it); and where the loss its deadline allows is above its
 * tolerance by more than rounding (pfs__floor_cap falls with the loss: a margin of 1e-9 of
 * the loss is some 1e-8 W of cap at the least, where the two could round past each other by
 * 1e-13 at a segment's end). The arithmetic is deadline_floor's and pfs__floor_cap's own. */
static bool
deadline_clear(const struct pfs_alloc_job *j, double y0, double top)
{
    double left, need, loss;

    if (!isfinite(j->deadline_s) || !(j->remaining_tokens > 0) || !(top > 0))
        return true;
    left = j->deadline_s - j->now_s;
    need = left > 0 ? j->remaining_tokens / left : HUGE_VAL;
    loss = max_of(0, 1 - need / top);
    return y0 >= (1 - loss) * top || loss > j->max_loss * (1 + 1e-9) + 1e-12;
}

/* Job j's floor on curve c, as sla_try works it out, with its kept entry e: its tolerance's
 * floor made again only when its tolerance moved, its deadline's only where it may bind. */
static double
kept_floor(struct pfs__sla_kept *e, const struct pfs_alloc_job *j, const struct pfs_pwl *c)
{
    double f, loss;

    if (!same_bits(e->loss, j->max_loss)) {
        e->loss = j->max_loss;
        e->raw = pfs__floor_cap(c, j->max_loss);
        e->x0 = c->x[0];
        e->y0 = c->y[0];
        e->top = c->y[c->n - 1];
        loss = j->max_loss * (1 + 1e-9) + 1e-12; /* (deadline_clear's) */
        /* (none where 1 - loss is too small to hold the margin over rounding) */
        e->clear_rate = 1 - loss > 1e-3 ? e->top * (1 - loss) * (1 - 1e-9) : 0;
    }
    f = e->raw;
    /* Its work left over its time left below clear_rate: the loss its deadline allows is
     * above its tolerance's by far more than rounding, which is deadline_clear's last test
     * (its divisions, at every job of every decision, were a tenth of sla's own work). A
     * job without a deadline passes too (its time left is infinite), one past it does not,
     * nor any NAN; those and the rest are deadline_clear's. */
    if (!(j->remaining_tokens < (j->deadline_s - j->now_s) * e->clear_rate) &&
        !deadline_clear(j, e->y0, e->top))
        f = max_of(f, deadline_floor(j, c));
    return pfs__clamp(f, e->x0, j->max_w); /* (f is a number) */
}

struct order {
    double key1, key2;
    size_t i;
};

static int
cmp_order(const void *a, const void *b)
{
    const struct order *x = a, *y = b;

    if (x->key1 > y->key1 || x->key1 < y->key1)
        return x->key1 > y->key1 ? -1 : 1;
    if (x->key2 > y->key2 || x->key2 < y->key2)
        return x->key2 > y->key2 ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Sifts o[q] down the heap o[0..n) whose top is the first in cmp_order's order. */
static void
sift(struct order *o, size_t n, size_t q)
{
    for (;;) {
        size_t c = 2 * q + 1;
        struct order x;

        if (c >= n)
            return;
        if (c + 1 < n && cmp_order(&o[c + 1], &o[c]) < 0)
            c++;
        if (cmp_order(&o[c], &o[q]) >= 0)
            return;
        x = o[q];
        o[q] = o[c];
        o[c] = x;
        q = c;
    }
}

/* Job i paused whole. */
static void
pause_job(const struct pfs_alloc_view *v, size_t i, bool *paused, struct pfs_alloc_decision *out)
{
    paused[i] = true;
    out[i] = (struct pfs_alloc_decision){.cap_w = v->jobs[i].min_w, .pause_frac = 1.0};
}

/* Pauses the candidates o[0..m) (in job order) as popping them from a heap in cmp_order's
 * order while need exceeds the budget does, without the heap: whole tiers, the most
 * tolerant first, while need stays above the budget after them; in the tier where it
 * crosses, those that free the most first (ties in job order), up to the crossing, found by
 * a weighted selection (pfs__threshold) where the heap popped hundreds of jobs at every
 * decision of a long event (a fifth of sla's run). The sums, taken in another order than
 * the heap's, round differently: where a crossing lies within 1e-9 of the sums of the
 * budget, or a job would free nothing, it decides nothing and returns false (the heap
 * then does). So it does where every candidate is paused and need is still over, unless
 * exact is false (the need left then only tells the caller that it is over). Lowers *need
 * by what the paused jobs free; s: room for m segments. */
static bool
pause_by_tier(const struct pfs_alloc_view *v, const struct order *o, size_t m, bool exact,
              double *need, bool *paused, struct pfs_alloc_decision *out, struct pfs__seg *s)
{
    double sum[PFS_N_TIERS] = {0}, total = 0, left = *need - v->budget_w, margin, mu, took = 0;
    size_t k = 0, ties = 0;
    int at = 0; /* the tier where need crosses the budget */

    for (size_t q = 0; q < m; q++) {
        if (!(o[q].key2 > 0 && o[q].key2 < HUGE_VAL))
            return false;
        sum[(int)o[q].key1] += o[q].key2;
        total += o[q].key2;
    }
    margin = 1e-9 * (*need + total);
    for (int t = PFS_N_TIERS - 1; t > PFS_TIER_FIRM && at == 0; t--) {
        if (sum[t] < left - margin)
            left -= sum[t]; /* the whole tier */
        else if (sum[t] > left + margin)
            at = t;
        else
            return false;
    }
    if (at == 0) { /* every candidate, and still over (by how much, the heap says) */
        if (exact)
            return false;
        for (size_t q = 0; q < m; q++)
            pause_job(v, o[q].i, paused, out);
        *need -= total;
        return true;
    }
    for (size_t q = 0; q < m; q++)
        if ((int)o[q].key1 == at)
            s[k++] = (struct pfs__seg){o[q].key2, o[q].key2};
    mu = pfs__threshold(s, k, left);
    if (!(mu > 0 && mu < HUGE_VAL))
        return false;
    for (size_t q = 0; q < m; q++)
        if ((int)o[q].key1 == at && o[q].key2 > mu)
            took += o[q].key2;
    if (!(left - took > margin)) /* all of them, before need crosses */
        return false;
    /* the ties at mu, in job order, until need crosses the budget (clear of the margin) */
    for (size_t q = 0; q < m && !(left - took < -margin); q++) {
        if ((int)o[q].key1 != at || o[q].key2 < mu || o[q].key2 > mu)
            continue;
        if (!(left - took > margin))
            return false;
        took += o[q].key2;
        ties++;
    }
    if (!(left - took < -margin))
        return false;
    for (size_t q = 0; q < m; q++) {
        int t = (int)o[q].key1;

        if (t < at || (t == at && o[q].key2 < mu))
            continue;
        if (t == at && !(o[q].key2 > mu)) { /* a tie: the first ones only */
            if (ties == 0)
                continue;
            ties--;
        }
        pause_job(v, o[q].i, paused, out);
    }
    *need = v->budget_w + (left - took);
    return true;
}

/* One try of sla's decision, on the curves within the predictions or extrapolated; kept:
 * the jobs' kept entries for that family (NULL: none). */
static int
sla_try(const struct pfs_alloc_view *v, bool extrapolate, struct pfs__sla_kept *kept,
        struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    size_t n = v->n_jobs, m = 0;
    const struct pfs_pwl *c = NULL;
    double *floor = pfs__scratch(0, n * sizeof *floor), need = 0;
    bool *paused = pfs__scratch(1, n * sizeof *paused);
    struct order *o = pfs__scratch(2, n * sizeof *o);
    struct pfs__seg *sg = pfs__scratch(3, n * sizeof *sg);
    int rc;

    if (!floor || !paused || !o || !sg)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    memset(paused, 0, n * sizeof *paused);
    /* (with entries, every job has its kept curve: policy.h) */
    if (!kept || !(c = pfs__predicted_given(v, extrapolate))) {
        if ((rc = pfs__predicted_readonly(v, "sla", extrapolate, &c, diag)) != 0)
            return rc;
        if (c != v->predicted[extrapolate])
            kept = NULL; /* (the entries are the kept curves') */
    }
    for (size_t i = 0; i < n; i++) {
        const struct pfs_alloc_job *j = &v->jobs[i];

        if (kept)
            floor[i] = kept_floor(&kept[i], j, &c[i]);
        else {
            floor[i] = max_of(pfs__floor_cap(&c[i], j->max_loss), deadline_floor(j, &c[i]));
            floor[i] = pfs__clamp(floor[i], c[i].x[0], j->max_w); /* (floor is a number) */
        }
        out[i] = (struct pfs_alloc_decision){.cap_w = floor[i], .pause_frac = 0};
        need += j->n_gpus * floor[i];
        if (j->tier != PFS_TIER_FIRM)
            o[m++] = (struct order){(double)j->tier, j->n_gpus * (floor[i] - j->idle_w), i};
    }
    /* Pause the most tolerant first until the floors of the rest fit: by tier and selection
     * (pause_by_tier), or where its sums cannot tell, taken from a heap in that order, as
     * many as it takes (sorting them all, most never taken, was a quarter of sla's time in a
     * long event). The need left matters only to say whether the rest fit, and by how much
     * in the message of the extrapolated try (the first one's is not kept; nor, with kept
     * entries, the engine's, so there the sums by tier say it: the same answer, a message
     * whose need may differ in its last bits). */
    if (need > v->budget_w && pause_by_tier(v, o, m, extrapolate && !kept, &need, paused, out, sg))
        m = 0; /* decided */
    if (need > v->budget_w)
        for (size_t q = m / 2; q-- > 0;)
            sift(o, m, q);
    for (size_t left = m; left > 0 && need > v->budget_w;) {
        struct order top = o[0];
        const struct pfs_alloc_job *j = &v->jobs[top.i];

        o[0] = o[--left];
        sift(o, left, 0);
        pause_job(v, top.i, paused, out);
        need -= j->n_gpus * (floor[top.i] - j->idle_w);
    }
    if (need > v->budget_w * (1 + 1e-12))
        return pfs__infeasible(diag, "sla", v->budget_w, need,
                               "the firm jobs' floors, every interruptible job paused,");
    /* Above the floors, PFI-aware: on the curves from the floors up (each one's part from
     * its floor found again only where the floor moved). */
    return pfs__waterfill_fr("sla", c, floor, kept, v->jobs, n, v->budget_w, paused, out, diag);
}

/* sla's decision; kept: the jobs' kept entries per family (NULL: none). */
int
pfs__sla_allocate_kept(const struct pfs_alloc_view *v, struct pfs__sla_kept *const kept[2],
                       struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    struct pfs_diag first = {0};
    int rc;

    /* Within the predictions' range first (pausing if need be); extrapolate only when even
     * that cannot meet the budget. */
    rc = sla_try(v, false, kept ? kept[0] : NULL, out, &first);
    if (rc == PFS_EINVAL)
        rc = sla_try(v, true, kept ? kept[1] : NULL, out, diag);
    else if (rc)
        *diag = first;
    return rc;
}

static int
sla_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
             struct pfs_diag *diag)
{
    (void)state;
    return pfs__sla_allocate_kept(v, NULL, out, diag);
}

const struct pfs_policy_ops pfs_policy_sla = {
    .name = "sla",
    .summary = "tier and deadline floors first, then PFI-aware; pauses Flex jobs if needed",
    .state_size = 0,
    .may_pause = true,
    .allocate = sla_allocate,
};
