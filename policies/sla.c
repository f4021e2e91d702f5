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

#include "policy.h"

/* The deadline floor of job i on curve c (its cap, or -inf when it has no deadline). */
static double
deadline_floor(const struct pfs_alloc_job *j, const struct pfs_pwl *c)
{
    double left, need, top = c->y[c->n - 1];

    if (!isfinite(j->deadline_s) || !(j->remaining_tokens > 0) || !(top > 0))
        return -HUGE_VAL;
    left = j->deadline_s - j->now_s;
    need = left > 0 ? j->remaining_tokens / left : HUGE_VAL;
    return pfs__floor_cap(c, fmax(0, 1 - need / top));
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

static int
sla_try(const struct pfs_alloc_view *v, bool extrapolate, struct pfs_alloc_decision *out,
        struct pfs_diag *diag)
{
    size_t n = v->n_jobs, m = 0;
    struct pfs_pwl *c = NULL;
    double *floor = malloc((n + 1) * sizeof *floor), need = 0;
    bool *paused = calloc(n + 1, sizeof *paused);
    struct order *o = malloc((n + 1) * sizeof *o);
    int rc;

    if (!floor || !paused || !o) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    if ((rc = pfs__predicted_curves(v, "sla", extrapolate, &c, diag)) != 0)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const struct pfs_alloc_job *j = &v->jobs[i];

        floor[i] = fmax(pfs__floor_cap(&c[i], j->max_loss), deadline_floor(j, &c[i]));
        floor[i] = fmin(fmax(floor[i], c[i].x[0]), j->max_w);
        out[i] = (struct pfs_alloc_decision){.cap_w = floor[i], .pause_frac = 0};
        need += j->n_gpus * floor[i];
        if (j->tier != PFS_TIER_FIRM)
            o[m++] = (struct order){(double)j->tier, j->n_gpus * (floor[i] - j->idle_w), i};
    }
    /* Pause the most tolerant first until the floors of the rest fit: taken from a heap in
     * that order, as many as it takes (sorting them all, most never taken, was a quarter of
     * sla's time in a long event). */
    if (need > v->budget_w)
        for (size_t q = m / 2; q-- > 0;)
            sift(o, m, q);
    for (size_t left = m; left > 0 && need > v->budget_w;) {
        struct order top = o[0];
        const struct pfs_alloc_job *j = &v->jobs[top.i];

        o[0] = o[--left];
        sift(o, left, 0);
        paused[top.i] = true;
        out[top.i] = (struct pfs_alloc_decision){.cap_w = j->min_w, .pause_frac = 1.0};
        need -= j->n_gpus * (floor[top.i] - j->idle_w);
    }
    if (need > v->budget_w * (1 + 1e-12)) {
        rc = pfs__infeasible(diag, "sla", v->budget_w, need,
                             "the firm jobs' floors, every interruptible job paused,");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        pfs__pwl_clip(&c[i], floor[i]);
    rc = pfs__waterfill("sla", c, v->jobs, n, v->budget_w, paused, out, diag);
out:
    free(floor);
    free(paused);
    free(o);
    return rc;
}

static int
sla_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
             struct pfs_diag *diag)
{
    struct pfs_diag first = {0};
    int rc;

    (void)state;
    /* Within the predictions' range first (pausing if need be); extrapolate only when even
     * that cannot meet the budget. */
    rc = sla_try(v, false, out, &first);
    if (rc == PFS_EINVAL)
        rc = sla_try(v, true, out, diag);
    else if (rc)
        *diag = first;
    return rc;
}

const struct pfs_policy_ops pfs_policy_sla = {
    .name = "sla",
    .summary = "tier and deadline floors first, then PFI-aware; pauses Flex jobs if needed",
    .state_size = 0,
    .may_pause = true,
    .allocate = sla_allocate,
};
