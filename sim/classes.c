/*
 * sim/classes.c - the running jobs by class and the policy's views of them: each job's curve
 * and duration on a pool, the classes of jobs with bit-identical kept curves (decide_by_class),
 * their slots, and the jobs' own curves under variability.
 *
 * It keeps the view arrays and the class groups in step with the running jobs; it decides
 * nothing and schedules nothing.
 * The engine's room, its files and their layers: docs/simulator.md, "Where each concern lives".
 */
#include "engine.h"

/* ----- scheduling ----- */

/* The curve job j runs on pool p, SIZE_MAX when it cannot run there (another GPU with no
 * measured twin, or too few GPUs). */
size_t
pfs__class_curve_on(const struct sim *s, size_t j, size_t p)
{
    uint32_t c = s->in->job_on[j * s->in->n_pools + p];

    return c == UINT32_MAX ? SIZE_MAX : c;
}

/* Job j's uncapped run time on curve c of pool p (the expression of place_jobs). */
double
pfs__class_duration_on(const struct sim *s, size_t j, size_t c, size_t p)
{
    const struct pfs_workload_job *w = &s->in->wl->jobs[j];

    return w->tokens / (s->in->curves[c].top_rate[p] * w->n_gpus / s->in->curves[c].n_gpus);
}

/* The class of a job running curve c on n GPUs (sim.cls_key); UINT32_MAX without memory. */
uint32_t
pfs__class_of(struct sim *s, size_t c, int n)
{
    uint64_t key = ((uint64_t)c << 32 | (uint32_t)n) + 1;
    size_t h;

    if (2 * ((size_t)s->n_classes + 1) > s->cls_cap) { /* grow: rehash into twice */
        size_t cap = s->cls_cap ? 2 * s->cls_cap : 256;
        uint64_t *k = calloc(cap, sizeof *k);
        uint32_t *v = calloc(cap, sizeof *v);

        if (!k || !v) {
            free(k);
            free(v);
            return UINT32_MAX;
        }
        for (size_t i = 0; i < s->cls_cap; i++) {
            if (!s->cls_key[i])
                continue;
            for (h = (size_t)(s->cls_key[i] * 0x9E3779B97F4A7C15u) & (cap - 1); k[h];
                 h = (h + 1) & (cap - 1))
                ;
            k[h] = s->cls_key[i];
            v[h] = s->cls_id[i];
        }
        free(s->cls_key);
        free(s->cls_id);
        s->cls_key = k;
        s->cls_id = v;
        s->cls_cap = cap;
    }
    for (h = (size_t)(key * 0x9E3779B97F4A7C15u) & (s->cls_cap - 1); s->cls_key[h];
         h = (h + 1) & (s->cls_cap - 1))
        if (s->cls_key[h] == key)
            return s->cls_id[h];
    s->cls_key[h] = key;
    return s->cls_id[h] = s->n_classes++;
}

/* The static part of running slot r's view (its job just started there): the job's limits,
 * tier, deadline and name, its telemetry scaled to its GPUs, its predicted curves (as
 * pfs__predicted_curve makes them; n = 0 where it has none, so that the policy reports why)
 * and, for the oracle, its true curve. */
void
pfs__class_view_fill(struct sim *s, size_t r)
{
    size_t j = s->running[r];
    const struct pfs_workload_job *w = &s->in->wl->jobs[j];
    const struct corpus_curve *c = &s->in->curves[job_rec(s, j)->curve],
                              *tc = pfs__power_job_curve(s, j);
    const struct pfs_gpu *g = pfs__power_job_gpu(s, j);
    double scale = (double)w->n_gpus / c->n_gpus, tscale = (double)w->n_gpus / tc->n_gpus;

    s->aj[r] = (struct pfs_alloc_job){.n_gpus = w->n_gpus,
                                      .min_w = g->min_limit_w,
                                      .max_w = g->max_limit_w,
                                      .ref_w = g->default_limit_w,
                                      .idle_w = g->idle_w,
                                      .tier = w->tier,
                                      .deadline_s = w->deadline_s,
                                      .restart_s = s->sc->resume_s,
                                      .max_loss = NAN}; /* (at its first decision: control) */
    pfs__strlcpy(s->aj[r].job_id, w->job_id, sizeof s->aj[r].job_id);
    s->at[r] = c->tel;
    s->at[r].n_gpus = w->n_gpus;
    s->at[r].tokens_per_s = c->tel.tokens_per_s * scale;
    for (int e = 0; e < 2; e++) {
        struct pfs_alloc_view one = {0,    1,    &s->aj[r], &s->at[r], NULL, NULL, {NULL, NULL},
                                     NULL, NULL, 0};
        struct pfs_diag quiet = {0};

        /* (none for the oracle, which reads the true curves only: making them was 1.5% of
         * its Poisson year) */
        if (s->needs_truth || pfs__predicted_curve(&one, 0, e == 1, &s->pred[e][r], &quiet) != 0)
            s->pred[e][r].n = 0;
        s->no_pred[e] += s->pred[e][r].n == 0;
        if (s->sla_kept[e])
            pfs__sla_kept_clear(&s->sla_kept[e][r]);
    }
    if (s->needs_truth) {           /* opaque to every other policy: built for the oracle */
        s->truth.hull[r] = tc->env; /* the job's true curve: on its own GPUs where they differ */
        s->truth.power[r] = tc->power;
        for (size_t k = 0; k < s->truth.hull[r].n; k++)
            s->truth.hull[r].y[k] *= tscale;
    }
    if (s->cls) { /* without memory for the classes: every job its own */
        uint32_t k = pfs__class_of(s, job_rec(s, j)->curve, w->n_gpus);

        if (k == UINT32_MAX) {
            pfs__lazy_free(s->cls);
            s->cls = NULL;
        } else
            s->cls[r] = k;
    }
}

/* Slot from's view moves to slot to (the job there finished; the last took its place). */
void
pfs__class_view_move(struct sim *s, size_t from, size_t to)
{
    s->aj[to] = s->aj[from];
    s->at[to] = s->at[from];
    s->pred[0][to] = s->pred[0][from];
    s->pred[1][to] = s->pred[1][from];
    for (int e = 0; s->sla_kept[0] && e < 2; e++)
        s->sla_kept[e][to] = s->sla_kept[e][from];
    if (s->needs_truth) {
        s->truth.hull[to] = s->truth.hull[from];
        s->truth.power[to] = s->truth.power[from];
    }
    if (s->cls)
        s->cls[to] = s->cls[from];
}

/* ----- the running jobs by class (decide_by_class) ----- */

/* Room for every class's group and per-class arrays. Returns 0 or PFS_ENOMEM. */
int
pfs__class_groups_reserve(struct sim *s)
{
    uint32_t n = s->n_groups;
    struct group *g;

    if (s->n_classes <= n)
        return 0;
    n = s->n_classes > 2 * n ? s->n_classes : 2 * n;
    n = n > 64 ? n : 64;
    if (!(g = realloc(s->group, n * sizeof *g)))
        return PFS_ENOMEM;
    memset(g + s->n_groups, 0, (n - s->n_groups) * sizeof *g);
    s->group = g;
#define REGROW(a)                                                                                  \
    do {                                                                                           \
        void *p_ = realloc((a), n * sizeof *(a));                                                  \
        if (!p_)                                                                                   \
            return PFS_ENOMEM;                                                                     \
        (a) = p_;                                                                                  \
    } while (0)
    REGROW(s->g_count);
    REGROW(s->g_rep);
    REGROW(s->tie_class);
    REGROW(s->tie_at);
    REGROW(s->g_cap);
    REGROW(s->g_tie);
    REGROW(s->present);
    REGROW(s->c_entry);
    REGROW(s->c_land);
#undef REGROW
    memset(s->c_entry + s->n_groups, 0, (n - s->n_groups) * sizeof *s->c_entry);
    for (size_t k = s->n_groups; k < n; k++)
        s->c_land[k].rate = NAN;
    s->n_groups = n;
    return 0;
}

/* The first of group g's slots at or above slot (g->n: none). */
static uint32_t
group_find(const struct group *g, size_t slot)
{
    uint32_t lo = 0, hi = g->n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (g->slot[mid] < slot)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Puts slot into class k's group, in order (at the end, for a job just started). Returns
 * 0 or PFS_ENOMEM. */
int
pfs__class_group_put(struct sim *s, uint32_t k, size_t slot)
{
    struct group *g = &s->group[k];
    uint32_t at;

    if (g->n == g->cap) {
        uint32_t cap = g->cap ? 2 * g->cap : 16;
        uint32_t *v = realloc(g->slot, cap * sizeof *v);

        if (!v)
            return PFS_ENOMEM;
        g->slot = v;
        g->cap = cap;
    }
    if (g->n == 0) { /* the class is present again: into the list, in order */
        uint32_t p = s->n_present;

        for (; p > 0 && s->present[p - 1] > k; p--)
            s->present[p] = s->present[p - 1];
        s->present[p] = k;
        s->n_present++;
    }
    at = g->n == 0 || g->slot[g->n - 1] < slot ? g->n : group_find(g, slot); /* (the end) */
    memmove(g->slot + at + 1, g->slot + at, (g->n - at) * sizeof *g->slot);
    g->slot[at] = (uint32_t)slot;
    g->n++;
    return 0;
}

/* Takes slot out of class k's group. */
void
pfs__class_group_take(struct sim *s, uint32_t k, size_t slot)
{
    struct group *g = &s->group[k];
    uint32_t at = group_find(g, slot);

    assert(at < g->n && g->slot[at] == slot);
    memmove(g->slot + at, g->slot + at + 1, (g->n - at - 1) * sizeof *g->slot);
    if (--g->n == 0) { /* out of the classes present */
        uint32_t p = 0;

        while (s->present[p] != k)
            p++;
        memmove(s->present + p, s->present + p + 1, (s->n_present - p - 1) * sizeof *s->present);
        s->n_present--;
    }
}

/* No limit binds: the groups are emptied, and built again when one does. */
void
pfs__class_groups_off(struct sim *s)
{
    for (uint32_t k = 0; k < s->n_groups; k++)
        s->group[k].n = 0;
    s->groups_on = false;
    s->n_fresh = 0;
    s->n_present = 0;
}

/* facility.variability: job j, starting on pool p, takes its GPUs (the longest free first)
 * and gets its own curve on them: its corpus curve with every step waiting for the slowest
 * of its GPUs, power shifted within it under "+sync-shift" (docs/model.md section 6). */
int
pfs__class_own_curve_start(struct sim *s, size_t j, size_t p)
{
    struct job *jb = job_rec(s, j);
    const struct pfs_workload_job *w = &s->in->wl->jobs[j];
    const struct pfs_job_curve *jc = &s->in->cs->jobs[jb->curve];
    struct gpu_ring *ring = &s->ring[p];
    struct pfs_sync_gpus *set = NULL;
    struct own_curve *oc;
    struct pfs_job_curve on;
    size_t n = (size_t)w->n_gpus;
    uint32_t id;
    int rc;

    if (s->n_own_free == 0 || ring->n < n)
        return pfs__diag_set(s->diag, PFS_EINVAL, NULL, 0, 0, NULL,
                             "internal: no GPUs to give job %zu", j); /* (cannot happen) */
    id = s->own_free[--s->n_own_free];
    oc = &s->own[id];
    if (!(oc->gpu = malloc(n * sizeof *oc->gpu)))
        return pfs__diag_set(s->diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        oc->gpu[i] = ring->id[ring->head];
        ring->head = (ring->head + 1) % ring->cap;
        s->eta_buf[i] = s->in->eta[p][oc->gpu[i]];
    }
    ring->n -= n;
    jb->own = id + 1;
    on = *jc;
    on.n_gpus = w->n_gpus;
    on.throughput = s->pt_buf;
    on.power_w = s->pt_buf + jc->n_points;
    if ((rc = pfs_sync_gpus_new(s->eta_buf, n, &set, s->diag)) == 0)
        rc = pfs_job_curve_sync(&s->in->fit_gpu[jb->curve], jc, &s->in->fit[jb->curve], set,
                                s->shift, true, on.throughput, on.power_w, s->diag);
    pfs_sync_gpus_free(set);
    if (rc == 0) {
        const struct corpus_curve *base = &s->in->curves[jb->curve];

        oc->cc = *base;
        rc = pfs__setup_tabulate(&oc->cc, &on, &s->in->gpu[p], s->diag);
        for (size_t q = 0; q < s->in->n_pools && rc == 0; q++) {
            oc->cc.top_rate[q] = pfs_pwl_eval(&oc->cc.env, s->in->gpu[q].max_limit_w);
            oc->cc.top_w[q] = pfs_pwl_eval(&oc->cc.power, s->in->gpu[q].max_limit_w);
            oc->cc.floor_w[q] = pfs_pwl_eval(&oc->cc.power, s->in->gpu[q].min_limit_w);
        }
    }
    return rc;
}

/* Job j gives its GPUs back (to the tail of its pool's free GPUs) and its own curve. */
void
pfs__class_own_curve_end(struct sim *s, size_t j)
{
    struct job *jb = job_rec(s, j);
    struct own_curve *oc;
    struct gpu_ring *ring;

    if (!jb->own)
        return;
    oc = &s->own[jb->own - 1];
    ring = &s->ring[jb->pool];
    for (int i = 0; i < s->in->wl->jobs[j].n_gpus; i++) {
        ring->id[(ring->head + ring->n) % ring->cap] = oc->gpu[i];
        ring->n++;
    }
    free(oc->gpu);
    oc->gpu = NULL;
    s->own_free[s->n_own_free++] = jb->own - 1;
    jb->own = 0;
}
