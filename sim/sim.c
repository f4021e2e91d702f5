/*
 * sim/sim.c - the discrete-event simulator's event loop (DESIGN.md section 5, docs/simulator.md):
 * a run from its first arrival to its end, the events in order, a job's finish, and the API
 * (pfs_sim_run, the run without DR events). The engine's other concerns are files of their own
 * behind sim/engine.h: setup.c, record.c, dr.c, power.c, classes.c, schedule.c, pausing.c,
 * control.c (docs/simulator.md, "Where each concern lives").
 *
 * Time is integer microseconds. Between two events every job's rate and every GPU's draw is
 * constant, so tokens and energy are integrated exactly at each event, never stepped.
 *
 * Events (sim/heap.h): arrivals; finishes (one per running job, moved whenever its rate
 * changes: sim/heap.c's pfs__fheap); control ticks (every cadence_s, every event_cadence_s while a
 * DR event is on, and after every arrival and finish); actuation (a decision takes effect
 * actuation_s after it is made); DR starts and kinks (ramp ends, steps; an event's baseline
 * is taken when a decision first plans for it, by its rule: the power then, the mean over a
 * window before the start, retaken at the start, or a given value); minute boundaries
 * (metrics, DR compliance); the end. At equal times events run in the order they were
 * scheduled.
 *
 * The facility is one or more pools of GPUs (a type, a count, nodes); a job runs within one,
 * on a curve measured on that pool's GPU (its own, or its measured twin). The scheduler is
 * FIFO with EASY backfill over the pools, gang-scheduled (a job starts on all its GPUs at
 * once), and blind to power: a later job may start early only if it does not delay the head
 * job's reservation, judged by run-time estimates (each job's uncapped duration on the pool;
 * a running job's remaining work at its current rate). With admission on, a queued job whose
 * deadline even full power cannot make is refused.
 *
 * Power. A job's per-GPU draw is its measured draw at its cap (or idle while paused); free
 * GPUs idle; every node draws its pool's node_other_w; the facility draws pue times all of
 * it. The policy divides, among running jobs of every pool, the GPU budget left by the
 * facility's limit: the lowest target over the coming control period and actuation delay
 * (the DR signal is known ahead once the event is announced: notice_s before its start, from
 * the beginning by default; a DR target less the controller's margin), divided by the PUE,
 * less the nodes' other draw and the idle draw of free GPUs. Without a limit, or under one
 * the facility meets with every running job at full power, jobs run at full power and no
 * policy is asked.
 *
 * Metrics: tokens and energy in total and per pool; DR compliance per minute against each
 * event's target; the planner's summary at the end (peak and p99 draw, hours a limit bound,
 * events met, missed and beyond capping, the jobs' loss); the cost of DR from a second run
 * of the same workload without events (pfs_sim_run).
 *
 * Throughput of a job under (cap, pause): (1 - pause) x its curve's envelope at the cap x
 * its scale (its GPUs over its curve's), the same yardstick as pfisim alloc (sim/alloc.c).
 */
#include "engine.h"

static void (*progress_fn)(void *arg, double sim_s, size_t events);
static void *progress_arg;

/* Job j, at its slot, finishes. (Its slot from its finish event: not looked up by its index,
 * a cache miss in an array of the workload's jobs.) */
static int
finish(struct sim *s, size_t j, size_t slot)
{
    struct job *jb = &s->live[slot];
    const struct pfs_workload_job *w = &s->in->wl->jobs[j];
    double took, loss;
    int rc;

    assert(jb->slot == slot);
    if (!isnan(jb->ord_in))
        pfs__order_remove(s->ord, jb->pool, j, jb->ord_in);
    if (jb->ord_late) { /* out of the list: the last one takes its place */
        uint32_t last = s->ord_late[--s->n_ord_late];

        s->ord_late[jb->ord_late - 1] = last;
        job_rec(s, last)->ord_late = jb->ord_late;
        jb->ord_late = 0;
    }
    pfs__power_touch(s, j);
    s->total_rate -= jb->rate;
    s->gpu_w_total -= jb->gpu_w;
    s->pool_rate[jb->pool] -= jb->rate;
    s->pool_gpu_w[jb->pool] -= jb->gpu_w;
    s->full_gpu_w -= pfs__power_full_draw_w(s, j);
    s->floor_gpu_w -= pfs__power_floor_draw_w(s, j);
    if (jb->held) { /* (a held job makes no progress: only as the run ends) */
        jb->held = false;
        s->n_held--;
    }
    if (s->nd) { /* its racks free, its draw gone from every node above them */
        const struct pfs_gpu *g = pfs__power_rec_gpu(s, jb);

        pfs__nodes_draw(s, slot, jb->n_gpus, -jb->gpu_w);
        pfs__nodes_release(s, slot, jb->n_gpus, g->idle_w, pfs__power_full_draw_w(s, j),
                           pfs__power_floor_draw_w(s, j));
    }
    jb->rate = jb->gpu_w = 0;
    jb->state = DONE;
    pfs__power_mark(s, j);
    jb->finish_us = s->now_us;
    pfs__fheap_del(&s->fh, (uint32_t)slot);         /* (taken when it came out) */
    for (int e = 0; e < 2 && s->view_ok[slot]; e++) /* (its view goes) */
        s->no_pred[e] -= s->pred[e][slot].n == 0;
    s->running[slot] = s->running[--s->n_running];
    job_rec(s, s->running[slot])->slot = slot;
    s->si[slot] = s->si[s->n_running];
    if (s->nd && slot != s->n_running)
        pfs__nodes_move(s, s->n_running, slot);
    s->epoch++;
    if (s->groups_on) /* (before view_move writes over its class) */
        pfs__class_group_take(s, s->cls[slot], slot);
    if (slot != s->n_running) {
        if (s->view_ok[s->n_running])
            pfs__class_view_move(s, s->n_running, slot);
        s->view_ok[slot] = s->view_ok[s->n_running];
    }
    s->view_ok[s->n_running] = false;
    if (s->groups_on && slot != s->n_running) { /* the last slot's job moved into this one */
        uint32_t k = s->cls[s->n_running];

        pfs__class_group_take(s, k, s->n_running);
        (void)pfs__class_group_put(s, k, slot); /* no memory needed: one was just taken */
        s->cls[slot] = k;
    }
    s->free_gpus[jb->pool] += w->n_gpus;
    s->res->jobs_finished++;
    s->res->pool[jb->pool].jobs_finished++;
    took = (double)(jb->finish_us - jb->start_us) / US;
    if ((double)jb->finish_us / US > w->deadline_s)
        s->res->deadline_misses++;
    loss = took > 0 ? 1 - jb->dur_s / took : 0;
    if (loss > pfs_tier_max_loss(w->tier) + 1e-9)
        s->res->tier_violations++;
    pfs__class_own_curve_end(s, j);
    if (s->jobs)
        pfs__record_put_result(s, j);
    rc = pfs__record_loss(s, j);
    s->live_of[j] = JOB_DONE;
    if (slot != s->n_running) { /* the last slot's record follows its job into this one */
        size_t k = s->running[slot];

        s->live[slot] = s->live[s->n_running];
        s->live_of[k] = (uint32_t)slot + 1;
        pfs__fheap_move(&s->fh, (uint32_t)s->n_running, (uint32_t)slot);
    }
    return rc;
}

/* ----- the run ----- */

static int
cmp_deadline(const void *a, const void *b)
{
    const struct order_key *x = a, *y = b;

    if (x->deadline < y->deadline || x->deadline > y->deadline)
        return x->deadline < y->deadline ? -1 : 1;
    return cmp_arrival_key(&x->a, &y->a);
}

/* Makes the queue index for the inputs in arrival order (edf false) or deadline order, or
 * leaves *out NULL where some job cannot be indexed (one that cannot run on the pool, or a
 * NaN deadline in deadline order). Returns 0 or PFS_ENOMEM. */
static int
index_make(const struct sim *s, bool edf, struct pfs__queue_index **out)
{
    size_t n = s->n_jobs;
    struct qindex *c = s->in->qx;
    bool ranked = edf || s->in->arrival; /* false: queue order is job order */
    struct order_key *key = NULL;
    struct pfs__queue_index *x;
    uint32_t *rank_job;
    double *dur;
    int rc = 0;

    *out = NULL;
    for (size_t j = 0; j < n; j++)
        if (pfs__class_curve_on(s, j, 0) == SIZE_MAX ||
            (edf && isnan(s->in->wl->jobs[j].deadline_s)))
            return 0;
    /* (n < UINT32_MAX: the inputs' arrival order) */
    if (c->pre && c->pre_bytes == pfs__queue_index_bytes(n, ranked)) { /* (made ahead) */
        if (c->pre_on)
            pthread_join(c->pre_th, NULL);
        c->pre_on = false;
        x = pfs__queue_index_alloc_at(c->pre, n, ranked);
        c->pre = x ? NULL : c->pre;
    } else {
        x = pfs__queue_index_alloc(n, ranked);
    }
    if (!x)
        return PFS_ENOMEM;
    dur = pfs__queue_index_dur(x);
    rank_job = pfs__queue_index_rank_job(x);
    for (size_t j = 0; j < n; j++) {
        dur[j] = pfs__class_duration_on(s, j, pfs__class_curve_on(s, j, 0), 0);
        if (isnan(dur[j])) /* (the index's trees order run times: the scan it is) */
            goto out;
    }
    if (edf) { /* ties in deadline keep arrival order: sort by (deadline, arrival) */
        if (!(key = malloc(n * sizeof *key))) {
            rc = PFS_ENOMEM;
            goto out;
        }
        for (size_t r = 0; r < n; r++) /* in arrival order */
            key[r] = (struct order_key){s->in->wl->jobs[arrival_at(s->in, r).job].deadline_s,
                                        {(int64_t)r, arrival_at(s->in, r).job}};
        qsort(key, n, sizeof *key, cmp_deadline);
        for (size_t r = 0; r < n; r++)
            rank_job[r] = key[r].a.job;
    } else
        for (size_t r = 0; rank_job && r < n; r++)
            rank_job[r] = arrival_at(s->in, r).job;
    if ((rc = pfs__queue_index_build(x, n ? &s->in->wl->jobs[0].n_gpus : NULL,
                                     sizeof *s->in->wl->jobs)) == 0) {
        *out = x;
        x = NULL;
    }
out:
    free(key);
    pfs__queue_index_free(x);
    return rc;
}

/* Builds s->iq where the indexed scheduler gives what the scanning one does: one pool, no
 * admission, every job able to run on that pool, and (for the deadline queue) no NaN
 * deadline; otherwise leaves it NULL. Its index is the inputs', made once. Returns 0 or
 * PFS_ENOMEM. */
static int
indexed_queue(struct sim *s)
{
    struct qindex *c = s->in->qx;
    int e = s->sc->edf ? 1 : 0, rc;
    const struct pfs__queue_index *x;

    if (s->reference || s->in->n_pools != 1 || s->sc->admit_deadlines || s->n_jobs == 0)
        return 0;
    pthread_mutex_lock(&c->lock);
    if (!c->made[e]) {
        c->rc[e] = index_make(s, e == 1, &c->x[e]);
        c->made[e] = true;
    }
    rc = c->rc[e];
    x = c->x[e];
    pthread_mutex_unlock(&c->lock);
    return rc == 0 && x ? pfs__queue_new(&s->iq, x) : rc;
}

const struct pfs_policy_ops *
pfs_sim_policy_find(const char *name, bool *shift)
{
    static const char suffix[] = "+sync-shift";
    size_t n = strlen(name), k = sizeof suffix - 1;
    char base[64];

    if (shift)
        *shift = false;
    if (n <= k || strcmp(name + n - k, suffix) != 0)
        return pfs_policy_find(name);
    if (n - k >= sizeof base)
        return NULL;
    memcpy(base, name, n - k);
    base[n - k] = '\0';
    if (shift)
        *shift = true;
    return pfs_policy_find(base);
}

/* facility.variability: every pool's GPUs free in index order, room for the curves of most
 * running jobs, and the scratch for building one. */
static int
own_curves_new(struct sim *s, size_t most)
{
    size_t gpus = 1, points = 1;

    for (size_t p = 0; p < s->in->n_pools; p++) {
        struct gpu_ring *g = &s->ring[p];

        g->cap = (size_t)s->in->pools[p].gpus;
        if (!(g->id = malloc(g->cap * sizeof *g->id)))
            return pfs__diag_set(s->diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        for (size_t i = 0; i < g->cap; i++)
            g->id[i] = (uint32_t)i;
        g->head = 0;
        g->n = g->cap;
        gpus = g->cap > gpus ? g->cap : gpus;
    }
    for (size_t k = 0; k < s->in->n_curves; k++)
        points = s->in->cs->jobs[k].n_points > points ? s->in->cs->jobs[k].n_points : points;
    s->own = calloc(most + 1, sizeof *s->own);
    s->own_free = malloc((most + 1) * sizeof *s->own_free);
    s->eta_buf = malloc(gpus * sizeof *s->eta_buf);
    s->pt_buf = malloc(2 * points * sizeof *s->pt_buf);
    if (!s->own || !s->own_free || !s->eta_buf || !s->pt_buf)
        return pfs__diag_set(s->diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t k = 0; k < most; k++) /* the lowest first */
        s->own_free[k] = (uint32_t)(most - 1 - k);
    s->n_own_free = most;
    return 0;
}

/* The next event: the earlier of the event heap's first and the first finish (inline: its
 * one caller is the loop of every event; out of line it was 0.8% more of a year's work). */
static inline __attribute__((always_inline)) bool
next_event(struct sim *s, struct pfs__event *ev)
{
    const struct pfs__fevent *f = &s->fh.v[0];

    if (s->fh.n > 0 && (s->heap.n == 0 ||
                        pfs__event_before(f->t_us, f->seq, s->heap.v[0].t_us, s->heap.v[0].seq))) {
        *ev = (struct pfs__event){f->t_us, f->seq, PFS__EV_FINISH, f->job, f->rec};
        pfs__fheap_del(&s->fh, f->rec);
        if (s->fh.n > 0) { /* the next finish's records, on their way while this one runs */
            __builtin_prefetch(&s->live[f->rec]);
            __builtin_prefetch(&s->in->wl->jobs[f->job]);
        }
        return true;
    }
    return pfs__heap_pop(&s->heap, ev);
}

/* Holding a tree's limits, a job whose floor fits under no rack's limits even with the rest
 * of the tree idle could never start: the queue would wait behind it for ever. Such a job
 * stops the run before it starts, named (a mistake in the tree, which pfisim check shows
 * with each node's floor). Each pool's verdicts are kept by GPU count: for n GPUs the
 * highest floor known to fit and the lowest known not to (a higher floor fits nowhere a
 * lower one does not), so the racks are tried once per count and curve at most. */
static int
tree_never(struct sim *s)
{
    size_t n = s->in->wl->n_jobs;
    double *ok[PFS_MAX_POOLS] = {0}, *no[PFS_MAX_POOLS] = {0};
    int rc = 0;

    for (size_t p = 0; p < s->in->n_pools; p++) {
        size_t m = (size_t)s->in->pools[p].gpus + 1;

        ok[p] = malloc(m * sizeof *ok[p]);
        no[p] = malloc(m * sizeof *no[p]);
        if (!ok[p] || !no[p]) {
            rc = pfs__diag_set(s->diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            goto out;
        }
        for (size_t k = 0; k < m; k++) {
            ok[p][k] = -HUGE_VAL;
            no[p][k] = HUGE_VAL;
        }
    }
    for (size_t j = 0; j < n && rc == 0; j++) {
        const struct pfs_workload_job *w = &s->in->wl->jobs[j];
        bool fits = !(w->submit_s < s->sc->days * 86400); /* (after the run: not in it) */

        for (size_t p = 0; p < s->in->n_pools && !fits; p++) {
            size_t c = pfs__class_curve_on(s, j, p);
            struct nplace pl;
            double f;

            if (c == SIZE_MAX || w->n_gpus > s->in->pools[p].gpus)
                continue;
            f = s->in->curves[c].floor_w[p] - s->in->gpu[p].idle_w;
            if (f <= ok[p][w->n_gpus])
                fits = true;
            else if (f < no[p][w->n_gpus]) {
                fits = pfs__nodes_place(s, (int)p, w->n_gpus, f, &pl) == 0;
                if (fits)
                    ok[p][w->n_gpus] = f;
                else
                    no[p][w->n_gpus] = f;
            }
        }
        if (!fits)
            rc = pfs__diag_set(s->diag, PFS_EINVAL, NULL, 0, 0, "tree",
                               "job %s (%d GPUs): its GPUs at their lowest limit do not fit under "
                               "the limits of any rack it could run in, even with the rest of the "
                               "tree idle: it could never start (pfisim check shows each node's "
                               "floor; raise the limit, or control.over_limit = \"report\")",
                               w->job_id, w->n_gpus);
    }
out:
    for (size_t p = 0; p < PFS_MAX_POOLS; p++) {
        free(ok[p]);
        free(no[p]);
    }
    return rc;
}

static int
sim_once(const struct pfs_scenario *sc, const struct pfs_sim_inputs *in, const char *policy,
         struct pfs_run_result *out, struct pfs_timeseries *ts, struct pfs_job_results *jobs,
         struct pfs_diag *diag)
{
    struct sim s = {0};
    size_t n = in->wl->n_jobs, most = 0; /* most: jobs that can run at once */
    struct pfs__event ev;
    int rc = 0;

    memset(out, 0, sizeof *out);
    pfs__strlcpy(out->policy, policy, sizeof out->policy);
    out->gap_recovered = NAN;
    s.sc = sc;
    s.cap_w = pfs_scenario_cap_w(sc); /* (a tree's root is the standing cap) */
    s.in = in;
    s.res = out;
    s.ts = ts;
    s.diag = diag;
    s.policy = pfs_sim_policy_find(policy, &s.shift);
    s.needs_truth = s.policy && strcmp(pfs_policy_name(s.policy), "oracle") == 0;
    if (!s.policy)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "policy",
                             "unknown policy '%.64s' (pfisim --list-policies)", policy);
    s.n_jobs = n;
    s.jobs = jobs;
    /* Every job's entry is read at its arrival before its start writes it: faulted in at
     * once, a page read first would fault twice (the kernel's zero page, then a copy that
     * flushes the other cores' TLBs: 124 of a 28-day cap-4k window's pages, issue 16). */
    if ((s.live_of = pfs__lazy_calloc(n + 1, sizeof *s.live_of)) != NULL)
        pfs__populate(s.live_of, (n + 1) * sizeof *s.live_of);
    /* At most one running job per GPU: the per-running-job arrays are sized by that, not by
     * the workload (memory proportional to what can be live at once). */
    {
        for (size_t p = 0; p < in->n_pools; p++)
            most += (size_t)in->pools[p].gpus;
        most = most < n ? most : n;
        s.running = pfs__lazy_calloc(most + 1, sizeof *s.running);
        s.live = pfs__lazy_calloc(most + 1, sizeof *s.live);
        s.aj = pfs__lazy_calloc(most + 1, sizeof *s.aj);
        s.at = pfs__lazy_calloc(most + 1, sizeof *s.at);
        s.ad = pfs__lazy_calloc(most + 1, sizeof *s.ad);
        s.view_ok = pfs__lazy_calloc(most + 1, sizeof *s.view_ok);
        s.land_at = pfs__lazy_calloc(most + 1, sizeof *s.land_at); /* (NULL: sorted) */
        s.land_dec = s.land_at ? malloc((most + 1) * sizeof *s.land_dec) : NULL;
        if (!s.land_dec) { /* (both or neither) */
            pfs__lazy_free(s.land_at);
            s.land_at = NULL;
        }
        s.si = pfs__lazy_calloc(most + 1, sizeof *s.si);
        s.fin = pfs__lazy_calloc(most + 1, sizeof *s.fin);
        /* Every array per slot is sized by the GPUs but touched only up to the most jobs
         * ever running at once (pfs__lazy_calloc); the curves per slot (a kilobyte each)
         * are written when a job takes the slot (view_fill). The true curves only for the
         * oracle, which alone reads them. */
        if (s.needs_truth) {
            s.truth.hull = pfs__lazy_calloc(most + 1, sizeof *s.truth.hull);
            s.truth.power = pfs__lazy_calloc(most + 1, sizeof *s.truth.power);
        }
        /* NULL: no classes, not a failure; none where jobs have curves of their own */
        s.cls = in->fit ? NULL : pfs__lazy_calloc(most + 1, sizeof *s.cls);
        s.pred[0] = pfs__lazy_calloc(most + 1, sizeof *s.pred[0]);
        s.pred[1] = pfs__lazy_calloc(most + 1, sizeof *s.pred[1]);
    }
    if (in->fit && (rc = own_curves_new(&s, most)) != 0)
        goto out;
    /* (without memory for it: every cap evaluated) */
    if ((s.memo = malloc((in->n_curves + 1) * sizeof *s.memo)) != NULL)
        for (size_t k = 0; k < in->n_curves; k++)
            s.memo[k] = (struct curve_memo){-HUGE_VAL, 0, 0, 0, 0};
    s.minute_w = pfs__lazy_calloc((size_t)(sc->days * 1440) + 2, sizeof *s.minute_w);
    s.ev_over_min = calloc(sc->n_dr + 1, sizeof *s.ev_over_min);
    s.ev_floor_over = calloc(sc->n_dr + 1, sizeof *s.ev_floor_over);
    s.dr_by_start = calloc(sc->n_dr + 1, sizeof *s.dr_by_start);
    /* admission by power's marks: only where a limit could hold a job back */
    /* A tree below its root: every node's limit held (sim/nodes.c) by a policy that divides
     * under a tree (allocate_tree). */
    if (sc->tree.n > 0) {
        struct pfs_power_tree *t;

        if ((rc = pfs_power_tree_new(sc, &t, diag)) != 0)
            goto out;
        if (t->n > 1 && !s.policy->allocate_tree) {
            pfs_power_tree_free(t);
            rc = pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "policy",
                               "policy %s does not divide power under a tree of limits (it has "
                               "no allocate_tree: docs/policies.md \"Under a power tree\"); "
                               "scenario.facility.tree needs one",
                               pfs_policy_name(s.policy));
            goto out;
        }
        if (t->n == 1)
            pfs_power_tree_free(t); /* the root alone: the standing cap (cap_w) */
        else if ((rc = pfs__nodes_new(&s, t, most)) != 0) {
            rc = pfs__diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
            goto out;
        }
    }
    if (s.nd && !sc->over_limit_report && (rc = tree_never(&s)) != 0)
        goto out;
    if (!sc->over_limit_report && (s.cap_w > 0 || sc->n_dr > 0 || s.nd) &&
        !(s.held_back = pfs__lazy_calloc(n / 8 + 1, 1))) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    if (!s.live_of || !s.live || !s.running || !s.aj || !s.view_ok || !s.si || !s.at || !s.ad ||
        !s.fin || !s.pred[0] || !s.pred[1] ||
        (s.needs_truth && (!s.truth.hull || !s.truth.power)) || !s.minute_w || !s.ev_over_min ||
        !s.ev_floor_over || !s.dr_by_start) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    for (size_t p = 0; p < in->n_pools; p++) {
        s.free_gpus[p] = in->pools[p].gpus;
        pfs__strlcpy(out->pool[p].name, in->pools[p].name, sizeof out->pool[p].name);
        pfs__strlcpy(out->pool[p].gpu, in->pools[p].gpu, sizeof out->pool[p].gpu);
    }
    out->n_pools = in->n_pools;
    for (size_t k = 0; k < sc->n_dr; k++) { /* by start, then index: an insertion sort */
        size_t q = k;

        for (; q > 0 && sc->dr[s.dr_by_start[q - 1]].start_s > sc->dr[k].start_s; q--)
            s.dr_by_start[q] = s.dr_by_start[q - 1];
        s.dr_by_start[q] = k;
    }
    s.track_k = 1;
    s.planned_w[0] = s.planned_w[1] = NAN;
    s.admit_us = -1;
    for (size_t p = 0; p < in->n_pools; p++)
        s.full_floor_w += in->pools[p].gpus * in->gpu[p].min_limit_w;
    s.full_floor_w = sc->pue * (s.full_floor_w + in->other_w);
    s.end_us = (int64_t)(sc->days * 86400 * US);
    {
        const char *env = getenv("PFISIM_SCAN_BACKFILL");

        s.reference = sc->scan_backfill || (env && strcmp(env, "1") == 0);
    }
    s.by_class =
        !s.reference && !sc->discrete_pauses && s.cls && !s.nd && pfs__policy_by_class(s.policy);
    if (!s.reference && s.policy && pfs__policy_is_sla(s.policy)) { /* (none: job by job) */
        s.sla_kept[0] = malloc((most + 1) * sizeof *s.sla_kept[0]);
        s.sla_kept[1] = malloc((most + 1) * sizeof *s.sla_kept[1]);
        if (!s.sla_kept[0] || !s.sla_kept[1]) {
            free(s.sla_kept[0]);
            free(s.sla_kept[1]);
            s.sla_kept[0] = s.sla_kept[1] = NULL;
        }
    }
    if (s.by_class) /* (without memory: the price found afresh at each decision) */
        for (int f = 0; f < 2; f++)
            s.ccache[f] = pfs__class_cache_new();
    if ((rc = pfs__order_new(&s.ord)) != 0 || (rc = indexed_queue(&s)) != 0 ||
        (rc = pfs__fheap_init(&s.fh, most)) != 0 ||
        (jobs && (rc = pfs__record_jr_begin(jobs, n)) != 0) ||
        (!s.iq && !(s.queue = calloc(n + 1, sizeof *s.queue)))) { /* the scan's FIFO */
        rc = pfs__diag_set(diag, rc ? rc : PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    out->indexed_queue = s.iq != NULL;
    out->jobs_submitted = n;
    /* The schedule of everything known in advance, in a fixed order: the arrivals (job j
     * numbered j), the events' control steps, every minute, the first control step and the
     * end. The arrivals and the minutes are streams: one of each is in the heap at a time,
     * the next pushed when it comes out, numbered as if all had been pushed now. */
    if (n > 0) {
        struct arrival_key a = arrival_at(in, 0);

        rc = pfs__heap_push_seq(&s.heap, a.t_us, PFS__EV_ARRIVAL, a.job, 0, a.job);
    }
    s.heap.next_seq = n;
    /* A control step at every kink of every event: its start (version 1: take the
     * baseline), the end of its ramp down, each step, its end, the end of its ramp up
     * (version 2). */
    for (size_t k = 0; k < sc->n_dr && rc == 0; k++) {
        const struct pfs_dr_event *e = &sc->dr[k];
        double kinks[4 + PFS_MAX_DR_STEPS];
        size_t nk = pfs__dr_kinks(e, kinks);

        if (e->notice_s > 0 && e->start_s - e->notice_s > 0 && isfinite(e->notice_s))
            rc = pfs__heap_push(&s.heap, (int64_t)((e->start_s - e->notice_s) * US),
                                PFS__EV_CONTROL, (uint32_t)k, 2); /* it is announced */
        if (rc == 0)
            rc = pfs__heap_push(&s.heap, (int64_t)(e->start_s * US), PFS__EV_CONTROL, (uint32_t)k,
                                1);
        for (size_t q = 1; q < nk && rc == 0; q++) /* kinks[0] is the start, above */
            if (q == 1 || kinks[q] > kinks[q - 1])
                rc = pfs__heap_push(&s.heap, (int64_t)(kinks[q] * US), PFS__EV_CONTROL, (uint32_t)k,
                                    2);
    }
    s.minute_seq = s.heap.next_seq;
    if (60 * (int64_t)US <= s.end_us && rc == 0)
        rc = pfs__heap_push_seq(&s.heap, 60 * (int64_t)US, PFS__EV_MINUTE, 0, 0, s.minute_seq);
    s.heap.next_seq += (uint64_t)(s.end_us / (60 * (int64_t)US));
    if (rc == 0)
        rc = pfs__heap_push(&s.heap, 0, PFS__EV_CONTROL, 0, 0);
    if (rc == 0)
        rc = pfs__heap_push(&s.heap, s.end_us, PFS__EV_END, 0, 0);
    while (rc == 0 && next_event(&s, &ev)) {
        if (ev.t_us > s.end_us)
            break;
        pfs__power_advance(&s, ev.t_us);
        out->events++;
        while (s.dr_live < sc->n_dr &&
               pfs_dr_over_s(&sc->dr[s.dr_by_start[s.dr_live]]) + 3600 <= (double)s.now_us / US)
            s.dr_live++; /* over an hour ago: no look back reaches it */
        if (ev.type == PFS__EV_ARRIVAL && ++s.n_arrived < n) { /* the stream's next */
            struct arrival_key a = arrival_at(in, s.n_arrived);

            rc = pfs__heap_push_seq(&s.heap, a.t_us, PFS__EV_ARRIVAL, a.job, 0, a.job);
            __builtin_prefetch(&in->wl->jobs[a.job]); /* (read when it arrives) */
        } else if (ev.type == PFS__EV_MINUTE &&
                   (int64_t)(ev.job + 2) * 60 * (int64_t)US <= s.end_us)
            rc = pfs__heap_push_seq(&s.heap, (int64_t)(ev.job + 2) * 60 * (int64_t)US,
                                    PFS__EV_MINUTE, ev.job + 1, 0, s.minute_seq + ev.job + 1);
        if (rc)
            break;
        switch (ev.type) {
        case PFS__EV_ARRIVAL:
            if (s.iq) {
                int p;

                /* Into an empty queue where it fits now: the pass of control's schedule would
                 * take it straight out as the head and start it, so it starts here without
                 * going in (a push and a removal each walk a bucket's tree to its root when
                 * the queue is empty: 10% of a year on 100,000 GPUs). */
                if (pfs__queue_len(s.iq) == 0 && (p = pfs__sched_fit_now(&s, ev.job)) >= 0)
                    rc = pfs__sched_start_job(&s, ev.job, (size_t)p);
                else
                    pfs__queue_push(s.iq, ev.job); /* its place in queue order is its rank */
                if (rc == 0)
                    rc = pfs__control_step(&s, true);
                break;
            }
            s.queue[s.q_head + s.q_len++] = ev.job;
            /* control.queue = "deadline": the queue in order of deadline (ties: arrival), so
             * that the head (and its reservation) is the most urgent job. */
            for (size_t q = s.q_len - 1; sc->edf && q > 0; q--) {
                size_t *a = &s.queue[s.q_head + q - 1], *b = a + 1;

                if (!(in->wl->jobs[*b].deadline_s < in->wl->jobs[*a].deadline_s))
                    break;
                size_t tmp = *a;

                *a = *b;
                *b = tmp;
            }
            rc = pfs__control_step(&s, true);
            break;
        case PFS__EV_FINISH:
            if ((rc = finish(&s, ev.job, ev.version)) == 0) /* (version: its slot) */
                rc = pfs__control_step(&s, true);
            break;
        case PFS__EV_CONTROL: {
            double t = (double)s.now_us / US, next;

            /* A DR event starts: its baseline, unless planning took it before; an average
             * over a window before the start is taken again now that the window is over
             * (planning had only the minutes up to then). */
            if (ev.version == 1 &&
                (!(s.dr_baseline_w[ev.job] > 0) || sc->dr[ev.job].baseline == PFS_BASELINE_AVERAGE))
                s.dr_baseline_w[ev.job] = pfs__dr_baseline(&s, ev.job, t);
            /* (version 3: a discrete pause's replacement, discrete_select) */
            rc = pfs__control_step(&s, false);
            if (ev.version == 0 && rc == 0) { /* the cadence */
                next = pfs__dr_in_event(&s, t) ? sc->event_cadence_s : sc->cadence_s;
                s.next_tick_us = s.now_us + (int64_t)(next * US);
                rc = pfs__heap_push(&s.heap, s.next_tick_us, PFS__EV_CONTROL, 0, 0);
            }
            break;
        }
        case PFS__EV_ACTUATE:
            if (ev.version == UINT32_MAX) /* a resume or checkpoint overhead ends */
                rc = job_state(&s, ev.job) == RUNNING ? pfs__power_set_rate(&s, ev.job) : 0;
            else if (ev.version == UINT32_MAX - 1) { /* a discrete pause's allowance is spent */
                struct job *jb = job_state(&s, ev.job) == RUNNING ? job_rec(&s, ev.job) : NULL;

                if (jb && jb->dpause_until_us == s.now_us) {
                    jb->dpause_until_us = 0;
                    jb->dpause_left_us = 0;
                    rc = pfs__pause_transition(&s, ev.job, jb->cap_w, 0, jb->active);
                }
            } else
                rc = pfs__control_actuate(&s, ev.version);
            break;
        case PFS__EV_MINUTE:
            rc = pfs__record_minute(&s);
            if (rc == 0 && pfs_interrupted()) /* (a signal: the run stops, its outputs go) */
                rc = pfs__diag_set(s.diag, PFS_EINTR, NULL, 0, 0, NULL, "interrupted");
            if (progress_fn && ++s.progress_minutes == 60) { /* every simulated hour */
                progress_fn(progress_arg, 3600.0, out->events - s.progress_events);
                s.progress_minutes = 0;
                s.progress_events = out->events;
            }
            break;
        case PFS__EV_END:
            break;
        }
        if (ev.type == PFS__EV_END)
            break;
    }
    if (rc == 0) {
        double secs = (double)s.end_us / US;

        for (size_t j = 0; j < n; j++) {
            enum job_state st = job_state(&s, j);

            if (st == RUNNING)
                pfs__power_touch(&s, j);
            if (st != DONE && st != REFUSED && in->wl->jobs[j].deadline_s < secs)
                out->deadline_misses++;
            if (st == QUEUED && held_back(&s, j))
                out->held_back_wait_h += (secs - in->wl->jobs[j].submit_s) / 3600;
            if (jobs && st != DONE && st != REFUSED) /* (theirs went in then) */
                pfs__record_put_result(&s, j);
        }
        if (ts && ts->spill && fflush(ts->spill) != 0) { /* (read back positioned: whole) */
            rc = pfs__diag_set(diag, PFS_EIO, NULL, 0, 0, NULL,
                               "the time series' temporary file: %s", strerror(errno));
            goto out;
        }
        if (jobs && pfs__record_jr_end(jobs) != 0) {
            rc = pfs__diag_set(diag, PFS_EIO, NULL, 0, 0, NULL,
                               "cannot write the job results to their temporary file (a full "
                               "disk?)");
            goto out;
        }
        out->tokens = s.tokens;
        out->mean_tps = s.tokens / secs;
        out->energy_j = s.energy_j;
        out->tokens_per_j = s.energy_j > 0 ? s.tokens / s.energy_j : 0;
        if ((rc = pfs__record_summarise(&s)) || (s.nd && (rc = pfs__nodes_results(&s))))
            pfs__diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
    }
out:
    pfs__nodes_free(&s);
    pfs__queue_free(s.iq);
    pfs__order_free(s.ord);
    free(s.ord_late);
    pfs__lazy_free(s.minute_w);
    free(s.ev_over_min);
    free(s.ev_floor_over);
    free(s.dr_by_start);
    pfs__lazy_free(s.held_back);
    free(s.hc);
    free(s.h_aj);
    free(s.h_at);
    free(s.h_ad);
    free(s.h_hull);
    free(s.h_power);
    free(s.h_slot);
    free(s.h_rank);
    pfs__heap_fini(&s.heap);
    pfs__fheap_fini(&s.fh);
    free(s.dq);
    free(s.bq);
    free(s.land);
    free(s.dc);
    pfs__lazy_free(s.live_of);
    pfs__lazy_free(s.live);
    free(s.loss);
    free(s.queue);
    pfs__lazy_free(s.running);
    pfs__lazy_free(s.aj);
    pfs__lazy_free(s.at);
    pfs__lazy_free(s.ad);
    pfs__lazy_free(s.view_ok);
    pfs__lazy_free(s.si);
    pfs__lazy_free(s.fin);
    pfs__lazy_free(s.truth.hull);
    pfs__lazy_free(s.truth.power);
    pfs__lazy_free(s.cls);
    pfs__class_cache_free(s.ccache[0]);
    pfs__class_cache_free(s.ccache[1]);
    free(s.cls_key);
    free(s.cls_id);
    for (uint32_t k = 0; k < s.n_groups; k++)
        free(s.group[k].slot);
    free(s.group);
    free(s.fresh);
    free(s.g_count);
    free(s.g_rep);
    free(s.tie_class);
    free(s.tie_at);
    free(s.g_cap);
    free(s.g_tie);
    free(s.present);
    free(s.c_entry);
    free(s.c_land);
    free(s.cx_n);
    free(s.cx_slot);
    free(s.cx_out);
    free(s.memo);
    pfs__lazy_free(s.land_at);
    free(s.land_dec);
    pfs__lazy_free(s.pred[0]);
    pfs__lazy_free(s.pred[1]);
    free(s.sla_kept[0]);
    free(s.sla_kept[1]);
    for (size_t k = 0; s.own && k < most; k++)
        free(s.own[k].gpu);
    free(s.own);
    free(s.own_free);
    free(s.eta_buf);
    free(s.pt_buf);
    for (size_t p = 0; p < PFS_MAX_POOLS; p++)
        free(s.ring[p].id);
    return rc;
}

/* policy's run of sc without its DR events into *r: on a copy of every field but the
 * events, none of which is read past n_dr, now 0 (pfisim.h; the 4,096 of them are 780 kB,
 * copied whole into fresh memory a fault a page). */
static int
run_without_events(const struct pfs_scenario *sc, const struct pfs_sim_inputs *in,
                   const char *policy, struct pfs_run_result *r, struct pfs_diag *diag)
{
    struct pfs_scenario *nodr = malloc(sizeof *nodr);
    const size_t from = offsetof(struct pfs_scenario, dr), to = from + sizeof sc->dr;
    int rc;

    if (!nodr)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    memcpy(nodr, sc, from);
    memcpy((char *)nodr + to, (const char *)sc + to, sizeof *sc - to);
    nodr->n_dr = 0;
    rc = sim_once(nodr, in, policy, r, NULL, NULL, diag);
    pfs_run_result_free(r); /* (its numbers are what is asked of it: not its tree) */
    free(nodr);
    return rc;
}

/* Under a base cap: policy's run without events, made while c->running, kept as every
 * policy's if the cap never bound in it (no policy was asked), else as policy's own
 * (mine). Made only by the first to ask (one that asks while it is made waits for it). */
static int
nodr_candidate(const struct pfs_scenario *sc, const struct pfs_sim_inputs *in, const char *policy,
               struct pfs_diag *diag)
{
    struct nodr *c = in->nodr;
    struct pfs_run_result r = {0};
    int rc;

    pthread_mutex_lock(&c->lock);
    while (c->running)
        pthread_cond_wait(&c->made, &c->lock);
    if (c->done || c->mine_done) {
        pthread_mutex_unlock(&c->lock);
        return 0;
    }
    c->running = true;
    pthread_mutex_unlock(&c->lock);
    rc = run_without_events(sc, in, policy, &r, diag);
    pthread_mutex_lock(&c->lock);
    if (rc == 0 && r.policy_decisions == 0) {
        c->tokens = r.tokens;
        c->energy_j = r.energy_j;
        c->deadline_misses = (double)r.deadline_misses;
        c->done = true;
    } else if (rc == 0 && pfs__strlcpy(c->mine_policy, policy, sizeof c->mine_policy)) {
        c->mine_tokens = r.tokens;
        c->mine_energy_j = r.energy_j;
        c->mine_misses = (double)r.deadline_misses;
        c->mine_done = true;
    }
    c->running = false;
    pthread_cond_broadcast(&c->made);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* The cost of DR: the same workload and policy without the events. Without a base cap no
 * policy is ever asked then (nothing binds), so that run is the same for every policy and
 * is made once per inputs, under the inputs' lock (sweep threads share nothing else). Under
 * one, the first policy to ask makes it (nodr_candidate): every policy's if the cap never
 * bound in it, else that policy's own, the others making theirs. */
static int
without_dr(const struct pfs_scenario *sc, const struct pfs_sim_inputs *in, const char *policy,
           double *tokens, double *energy_j, double *misses, struct pfs_diag *diag)
{
    struct nodr *c = in->nodr;
    struct pfs_run_result r = {0};
    bool shared = !(pfs_scenario_cap_w(sc) > 0), shift, own;
    int rc;

    /* Power shifted within jobs on GPUs that differ draws less at full power: a run of its
     * own, neither the shared one nor one to share. */
    (void)pfs_sim_policy_find(policy, &shift);
    own = shift && in->fit;
    shared = shared && !own;
    if (!own && !shared && (rc = nodr_candidate(sc, in, policy, diag)))
        return rc;
    if (!own) {
        pthread_mutex_lock(&c->lock);
        if (c->done) {
            *tokens = c->tokens;
            *energy_j = c->energy_j;
            *misses = c->deadline_misses;
            pthread_mutex_unlock(&c->lock);
            return 0;
        }
        if (c->mine_done && strcmp(c->mine_policy, policy) == 0) {
            *tokens = c->mine_tokens;
            *energy_j = c->mine_energy_j;
            *misses = c->mine_misses;
            pthread_mutex_unlock(&c->lock);
            return 0;
        }
        if (!shared)
            pthread_mutex_unlock(&c->lock);
    }
    rc = run_without_events(sc, in, shared ? "equal" : policy, &r, diag);
    if (rc == 0) {
        *tokens = r.tokens;
        *energy_j = r.energy_j;
        *misses = (double)r.deadline_misses;
        if (shared) {
            c->tokens = r.tokens;
            c->energy_j = r.energy_j;
            c->deadline_misses = *misses;
            c->done = true;
        }
    }
    if (shared)
        pthread_mutex_unlock(&c->lock);
    return rc;
}

void
pfs_sim_set_progress(void (*fn)(void *arg, double sim_s, size_t events), void *arg)
{
    progress_fn = fn;
    progress_arg = arg;
}

int
pfs_sim_nodr_prepare(const struct pfs_scenario *sc, const struct pfs_sim_inputs *in,
                     const char *policy, struct pfs_diag *diag)
{
    double tokens, energy_j, misses;
    bool any = false, shift;

    for (size_t k = 0; k < sc->n_dr; k++) /* an event the run holds (summarise's count) */
        any = any || sc->dr[k].start_s < sc->days * 86400;
    if (!any || pfs_sim_policy_find(policy, &shift) == NULL || (shift && in->fit))
        return 0; /* none needed, or policy's own: one shifting power within jobs */
    if (pfs_scenario_cap_w(sc) > 0)
        return nodr_candidate(sc, in, policy, diag);
    return without_dr(sc, in, "equal", &tokens, &energy_j, &misses, diag);
}

int
pfs_sim_run_unpriced(const struct pfs_scenario *sc, const struct pfs_sim_inputs *in,
                     const char *policy, struct pfs_run_result *out, struct pfs_timeseries *ts,
                     struct pfs_job_results *jobs, struct pfs_diag *diag)
{
    int rc = sim_once(sc, in, policy, out, ts, jobs, diag);

    out->nodr_tokens = out->dr_cost_tokens = out->dr_cost_frac = NAN;
    out->dr_cost_per_event = out->dr_cost_per_mwh = out->dr_energy_shed_j = NAN;
    out->nodr_deadline_misses = NAN;
    return rc;
}

int
pfs_sim_price(const struct pfs_scenario *sc, const struct pfs_sim_inputs *in, const char *policy,
              struct pfs_run_result *out, struct pfs_diag *diag)
{
    double tokens, energy_j, misses;
    int rc;

    if (out->dr_events == 0)
        return 0;
    if ((rc = without_dr(sc, in, policy, &tokens, &energy_j, &misses, diag)))
        return rc;
    out->nodr_tokens = tokens;
    out->nodr_deadline_misses = misses;
    out->dr_cost_tokens = tokens - out->tokens;
    out->dr_cost_frac = tokens > 0 ? out->dr_cost_tokens / tokens : (double)NAN;
    out->dr_cost_per_event = out->dr_cost_tokens / (double)out->dr_events;
    out->dr_energy_shed_j = energy_j - out->energy_j;
    out->dr_cost_per_mwh = out->dr_energy_shed_j > 0
                               ? out->dr_cost_tokens / (out->dr_energy_shed_j / 3.6e9)
                               : (double)NAN;
    return 0;
}

int
pfs_sim_run(const struct pfs_scenario *sc, const struct pfs_sim_inputs *in, const char *policy,
            struct pfs_run_result *out, struct pfs_timeseries *ts, struct pfs_job_results *jobs,
            struct pfs_diag *diag)
{
    int rc = pfs_sim_run_unpriced(sc, in, policy, out, ts, jobs, diag);

    return rc ? rc : pfs_sim_price(sc, in, policy, out, diag);
}

void
pfs_gap_recovered(struct pfs_run_result *runs, size_t n)
{
    double eq = NAN, orc = NAN;

    for (size_t k = 0; k < n; k++) {
        if (strcmp(runs[k].policy, "equal") == 0)
            eq = runs[k].tokens;
        if (strcmp(runs[k].policy, "oracle") == 0)
            orc = runs[k].tokens;
    }
    for (size_t k = 0; k < n; k++) {
        struct pfs_run_result *r = &runs[k];

        r->gap_recovered = NAN;
        if (isnan(eq) || isnan(orc))
            snprintf(r->gap_note, sizeof r->gap_note, "needs an equal and an oracle run");
        else if (!(orc - eq > PFS_GAP_MIN_FRAC * eq))
            snprintf(r->gap_note, sizeof r->gap_note,
                     "oracle %+.3g%% against equal: no gap to recover", 100 * (orc - eq) / eq);
        else {
            r->gap_recovered = (r->tokens - eq) / (orc - eq);
            r->gap_note[0] = '\0';
        }
    }
}

void
pfs_run_result_free(struct pfs_run_result *r)
{
    if (!r)
        return;
    free(r->tree);
    r->tree = NULL;
    r->n_tree = 0;
}
