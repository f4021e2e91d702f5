/*
 * sim/schedule.c - the scheduler: the queue, EASY backfill with its reservation over the
 * pools, admission (refusing a job no power can make on time), and a job's start.
 *
 * It starts jobs and refuses them; it never sets a running job's cap (control) and never
 * ends one (the event loop's finish). Blind to power, as the scheduler it models.
 * The engine's room, its files and their layers: docs/simulator.md, "Where each concern lives".
 */
#include "engine.h"

/* Whether a decision with entries is in flight (made, not yet landed). */
static bool
in_flight(const struct sim *s)
{
    for (size_t b = s->bq_head; b < s->bq_head + s->bq_len; b++)
        if (s->bq[b].n > 0)
            return true;
    return false;
}

/* The facility's draw until the decisions in flight have landed, at most: each running job
 * at the larger of its draw now and its draw under its latest decision (now_w itself where
 * no decision with entries is in flight). A start under the feed compares its own draw with
 * the room this leaves, not with the room now: a decision made before it, landing, would
 * lift the others into the room it took. O(running jobs), and only then. */
static double
pending_w(struct sim *s, double now_w)
{
    double w = 0;
    if (!in_flight(s))
        return now_w;
    for (size_t r = 0; r < s->n_running; r++) {
        struct job *jb = job_rec(s, s->running[r]);
        const struct slot_info *si = &s->si[r];
        double env, power, d;

        pfs__power_curve_at(s, jb, pfs__power_rec_curve(s, jb), si->cap, &env, &power);
        d = pfs__power_draw_of(power, pfs__power_rec_gpu(s, jb)->idle_w, si->pause, si->active,
                               jb->n_gpus);
        w += d > jb->gpu_w ? d : jb->gpu_w;
    }
    return s->sc->pue * (w + pfs__power_free_idle_w(s) + s->in->other_w);
}

/* Where job j goes in pool p's racks now (pfs__nodes_place, into *pl): 0 placed, 1 no rack
 * with room for it (counted once a job), 2 room, but its floor fits under no rack's limits
 * (admission by power, per node: marked held back as under the feed). Holding limits, the
 * floor is its curve's draw at the lowest limit; reporting them, none is asked. */
static int
placed(struct sim *s, size_t j, size_t p, struct nplace *pl)
{
    struct nodes *nd = s->nd;
    double floor_w =
        s->sc->over_limit_report
            ? (double)NAN
            : s->in->curves[pfs__class_curve_on(s, j, p)].floor_w[p] - s->in->gpu[p].idle_w;
    int rc = pfs__nodes_place(s, (int)p, s->in->wl->jobs[j].n_gpus, floor_w, pl);

    if (rc == 1 && !(nd->waited[j / 8] >> (j % 8) & 1)) {
        nd->waited[j / 8] |= (uint8_t)(1u << (j % 8));
        s->res->tree_waits++;
    }
    if (rc == 2 && !held_back(s, j)) {
        s->held_back[j / 8] |= (uint8_t)(1u << (j % 8));
        s->res->jobs_held_back++;
    }
    return rc;
}

/* Job j (record jb, not yet in its slot) into its racks (admission found it a place). It
 * starts at its highest limit where every job under each node above its racks, it included,
 * fits there at full draw (no decision can then take a node over); else at its lowest and,
 * holding limits, waiting at idle for its launch until the controller's next decision (at
 * its cadence: sim/control.c) has landed, its cap and the others' together. A start then
 * takes no node over, whatever is in flight; a real job's launch (its containers, its
 * checkpoint read) takes as long. */
static int
start_in_racks(struct sim *s, size_t j, struct job *jb, const struct pfs_gpu *g)
{
    struct nplace pl;
    int n = jb->n_gpus;

    if (placed(s, j, (size_t)jb->pool, &pl) != 0) /* (admission placed it: a bug) */
        return pfs__diag_set(s->diag, PFS_ENUMERIC, NULL, 0, 0, NULL,
                             "job %zu: no place in the racks at its start (a bug)", j + 1);
    if (!pfs__nodes_fit(s, &pl, n, (s->in->curves[jb->curve].top_w[jb->pool] - g->idle_w))) {
        int64_t until = (s->next_tick_us > s->now_us ? s->next_tick_us : s->now_us) +
                        (int64_t)(s->sc->actuation_s * US);

        jb->cap_w = g->min_limit_w;
        if (!s->sc->over_limit_report && until > s->now_us && jb->launch_until_us < until)
            jb->launch_until_us = until;
    }
    return pfs__nodes_take(s, s->n_running, &pl, n, g->idle_w, pfs__power_full_draw_w(s, j),
                           pfs__power_floor_draw_w(s, j));
}

int
pfs__sched_start_job(struct sim *s, size_t j, size_t p)
{
    const struct pfs_gpu *g = &s->in->gpu[p];
    struct job *jb;
    int rc;

    /* at most one running job per GPU, and s->live has a record for each: at its slot */
    assert(s->live_of[j] == 0);
    s->live_of[j] = (uint32_t)s->n_running + 1;
    jb = job_rec(s, j);
    *jb = (struct job){0};

    jb->pool = (int)p;
    jb->curve = pfs__class_curve_on(s, j, p);
    if (s->in->fit) {
        if ((rc = pfs__class_own_curve_start(s, j, p)))
            return rc;
        jb->dur_s = s->in->wl->jobs[j].tokens / pfs__power_job_curve(s, j)->top_rate[p];
    } else
        jb->dur_s = pfs__class_duration_on(s, j, jb->curve, p);
    jb->state = RUNNING;
    jb->start_us = s->now_us;
    jb->last_us = s->now_us;
    jb->cap_w = g->max_limit_w;
    jb->pause = 0;
    jb->active = jb->pend_active = jb->n_gpus = s->in->wl->jobs[j].n_gpus;
    jb->start_round = s->round;
    jb->cls = UINT32_MAX;
    jb->ord_in = NAN; /* (into the finish order at the next order_flush) */
    /* Under a limit, a job whose GPUs at full draw would not fit starts at the floor cap
     * until the policy's decision on it takes effect (a launcher's safe start), rather than
     * overrunning the limit for the actuation delay. Holding a limit, the job waits at idle,
     * with no progress, for the decision that makes room for it (its launch) where it does
     * not fit: under the standing cap, the feed, where its draw at that cap does not fit
     * beside the others' draw until the decisions in flight have landed (pending_w); under a
     * DR target, settled in minute means, where the target lies below the capping floor at
     * full occupancy and its floor does not fit now. Where nothing would go over, starts are
     * as they were (docs/scenarios.md, "Limits that hold"). */
    {
        double lim = pfs__dr_facility_budget(s, (double)s->now_us / US), now_w = 0;
        bool feed = s->cap_w > 0 && lim >= s->cap_w;

        if (isfinite(lim) && (now_w = pfs__power_facility_w(s)) +
                                     s->sc->pue * jb->n_gpus * (g->max_limit_w - g->idle_w) >
                                 lim)
            jb->cap_w = g->min_limit_w;
        if (isfinite(lim) && !s->sc->over_limit_report && s->sc->actuation_s > 0) {
            double env, power;
            bool over;

            if (feed) { /* its draw at the cap it starts at, beside the draw still to come */
                pfs__power_curve_at(s, jb, pfs__power_rec_curve(s, jb), jb->cap_w, &env, &power);
                over = pending_w(s, now_w) + s->sc->pue * jb->n_gpus * (power - g->idle_w) >
                       lim * (1 + 1e-12);
            } else {
                over = lim < s->full_floor_w &&
                       now_w + s->sc->pue * jb->n_gpus *
                                   (s->in->curves[jb->curve].floor_w[p] - g->idle_w) >
                           lim * (1 + 1e-12);
            }
            if (over)
                jb->launch_until_us = s->now_us + (int64_t)(s->sc->actuation_s * US);
        }
    }
    if (s->nd && (rc = start_in_racks(s, j, jb, g)) != 0)
        return rc;
    if (held_back(s, j))
        s->res->held_back_wait_h += ((double)s->now_us / US - s->in->wl->jobs[j].submit_s) / 3600;
    jb->slot = s->n_running;
    s->running[s->n_running++] = j;
    s->si[jb->slot] = (struct slot_info){
        jb->dur_s, s->in->wl->jobs[j].tokens, jb->done, jb->cap_w, 0, jb->active, jb->n_gpus};
    s->epoch++;
    s->view_ok[jb->slot] = false; /* built when a policy is asked (control) */
    if (s->groups_on) { /* in its class's group, its view and decision at the next decision */
        uint32_t k = pfs__class_of(s, jb->curve, s->in->wl->jobs[j].n_gpus);
        uint32_t *f;

        if (k == UINT32_MAX || pfs__class_groups_reserve(s) ||
            pfs__class_group_put(s, k, jb->slot) ||
            !(f = pfs__grow(s->fresh, &s->fresh_cap, s->n_fresh, sizeof *s->fresh, 256)))
            return pfs__diag_set(s->diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        s->fresh = f;
        s->fresh[s->n_fresh++] = (uint32_t)j;
        s->cls[jb->slot] = k;
        jb->cls = k;
    }
    s->full_gpu_w += pfs__power_full_draw_w(s, j);
    s->floor_gpu_w += pfs__power_floor_draw_w(s, j);
    s->free_gpus[p] -= s->in->wl->jobs[j].n_gpus;
    s->res->jobs_started++;
    s->res->pool[p].jobs_started++;
    if (jb->launch_until_us > 0 && (rc = pfs__heap_push(&s->heap, jb->launch_until_us,
                                                        PFS__EV_ACTUATE, (uint32_t)j, UINT32_MAX)))
        return rc;
    return pfs__power_set_rate(s, j);
}

/* The limit admission by power holds a start to: the lowest over the job's first control
 * period, now until the next decision takes effect (HUGE_VAL where none binds). */
static double
hold_limit(const struct sim *s)
{
    double t = (double)s->now_us / US,
           period = pfs__dr_in_event(s, t) ? s->sc->event_cadence_s : s->sc->cadence_s;

    return fmin(pfs__dr_facility_budget(s, t),
                pfs__dr_budget_ahead(s, t, fmin(period, 3600), s->sc->actuation_s));
}

/* Admission by power under the facility's limits: whether job j's GPUs at their floor (its
 * curve's draw at the lowest limit) fit beside every running job's floor, held ones included
 * (they resume first), under the limit over its first control period (hold_limit). A job
 * held back is marked, once, and counted. */
static bool
feed_admits(struct sim *s, size_t j, size_t p)
{
    const struct pfs_gpu *g = &s->in->gpu[p];
    int n = s->in->wl->jobs[j].n_gpus;
    double need;

    if (s->sc->over_limit_report || !s->held_back)
        return true;
    if (s->admit_us != s->now_us) { /* (once an instant: a pass tries many jobs) */
        s->admit_lim = hold_limit(s);
        s->admit_us = s->now_us;
    }
    if (!isfinite(s->admit_lim)) /* (no limit: most of a run, and no floor to add up) */
        return true;
    need = s->sc->pue * (s->floor_gpu_w + pfs__power_free_idle_w(s) + s->in->other_w +
                         n * (s->in->curves[pfs__class_curve_on(s, j, p)].floor_w[p] - g->idle_w));
    if (need <= s->admit_lim * (1 + 1e-12))
        return true;
    if (!held_back(s, j)) {
        s->held_back[j / 8] |= (uint8_t)(1u << (j % 8));
        s->res->jobs_held_back++;
    }
    return false;
}

/* Admission by power: under a power tree a place in the racks whose limits take its floor
 * (placed), then the facility's (feed_admits). */
static bool
power_admits(struct sim *s, size_t j, size_t p)
{
    struct nplace pl;

    return (!s->nd || placed(s, j, p, &pl) == 0) && feed_admits(s, j, p);
}

/* The first pool, in the facility's order, with the GPUs job j needs free now; -1 if none. */
static int
gpus_free(const struct sim *s, size_t j)
{
    for (size_t p = 0; p < s->in->n_pools; p++)
        if (pfs__class_curve_on(s, j, p) != SIZE_MAX &&
            s->in->wl->jobs[j].n_gpus <= s->free_gpus[p])
            return (int)p;
    return -1;
}

/* The first pool, in the facility's order, where job j can start now: -1 if none has the
 * GPUs (or, under a power tree, a place in its racks), -2 where one has them and admission
 * by power holds it back. */
int
pfs__sched_fit_now(struct sim *s, size_t j)
{
    int p = gpus_free(s, j), rc;
    struct nplace pl;

    /* (no place in the racks: as without the GPUs, the head reserving and later jobs
     * backfilled where they find one; a head that waited for one place would hold up the
     * whole facility behind a large job waiting for racks the small ones keep taking) */
    if (p >= 0 && s->nd) { /* (placed once: then the facility's admission alone) */
        if ((rc = placed(s, j, (size_t)p, &pl)) != 0)
            return -rc;
        return feed_admits(s, j, (size_t)p) ? p : -2;
    }
    return p < 0 ? -1 : power_admits(s, j, (size_t)p) ? p : -2;
}

static int
cmp_fin(const void *a, const void *b)
{
    const struct fin *x = a, *y = b;

    if (x->key < y->key || x->key > y->key)
        return x->key < y->key ? -1 : 1;
    return (x->job > y->job) - (x->job < y->job);
}

/* Puts the jobs whose key changed into the finish order, at their latest keys: the order
 * is then what moving each one at every change would have made (a treap's order is its
 * keys', whatever the order of the moves). Returns 0 or PFS_ENOMEM. */
static double
ord_key_of(void *s, uint32_t j)
{
    return job_rec(s, j)->ord_key;
}

static int
order_flush(struct sim *s)
{
    /* An eighth of the running jobs or more moved (a level moved them all): every pool's
     * order re-keyed in place, some 25 instructions a job, where a job's removal and
     * insertion were some 470 (the jobs whose key did not change keep it: ord_key is
     * ord_in). Jobs started since go in one by one either way. */
    size_t moved = 0;
    bool rekey;

    for (size_t q = 0; 8 * s->n_ord_late >= s->n_running && q < s->n_ord_late; q++)
        moved += !isnan(job_rec(s, s->ord_late[q])->ord_in);
    rekey = 8 * moved >= s->n_running;

    for (size_t p = 0; rekey && p < s->in->n_pools; p++)
        if (pfs__order_rekey(s->ord, (int)p, ord_key_of, s) != 0)
            return PFS_ENOMEM;
    for (size_t q = 0; q < s->n_ord_late; q++) {
        size_t j = s->ord_late[q];
        struct job *jb = job_rec(s, j);

        jb->ord_late = 0;
        if (rekey && !isnan(jb->ord_in)) { /* (in the order already, at its key) */
            jb->ord_in = jb->ord_key;
            continue;
        }
        if (!isnan(jb->ord_in))
            pfs__order_remove(s->ord, jb->pool, j, jb->ord_in);
        jb->ord_in = NAN;
        if (pfs__order_insert(s->ord, jb->pool, j, jb->ord_key, jb->n_gpus) != 0)
            return PFS_ENOMEM;
        jb->ord_in = jb->ord_key;
    }
    s->n_ord_late = 0;
    return 0;
}

/* The head job's reservation: the pool where enough GPUs come free soonest, that time (the
 * shadow time), and the GPUs it leaves over then. The running jobs are taken in order of
 * their estimated finish (ties by job index); the shadow time is the estimated finish of the
 * job that brings the free GPUs to the head's need. The straightforward way sorts them at
 * every pass (the reference scheduler); otherwise sim/order.c keeps them in that order (the
 * jobs whose key changed put in first: order_flush) and finds that job in O(log n). */
static int
reserve(struct sim *s, size_t head, int *pool, double *shadow, int *extra)
{
    int need = s->in->wl->jobs[head].n_gpus;
    double now = (double)s->now_us / US;
    struct fin *fin = s->fin;

    *pool = -1;
    *shadow = HUGE_VAL;
    *extra = 0;
    for (size_t p = 0; p < s->in->n_pools; p++) {
        int avail = s->free_gpus[p];
        double sh = HUGE_VAL;

        if (pfs__class_curve_on(s, head, p) == SIZE_MAX)
            continue;
        if (s->reference) {
            size_t m = 0, n = 0;

            for (size_t r = 0; r < s->n_running; r++) {
                size_t j = s->running[r];

                if (job_rec(s, j)->pool == (int)p)
                    fin[n++] =
                        (struct fin){pfs__power_finish_key(s, j), j, s->in->wl->jobs[j].n_gpus};
            }
            qsort(fin, n, sizeof *fin, cmp_fin);
            for (; m < n && avail < need; m++)
                avail += fin[m].gpus;
            if (avail >= need && m > 0)
                sh = now + fin[m - 1].key;
        } else if (avail < need) {
            double key;
            int64_t freed;
            int rc = order_flush(s);

            if (rc)
                return rc;
            if (pfs__order_reach(s->ord, (int)p, need - avail, &key, &freed) != SIZE_MAX) {
                sh = now + key;
                avail += (int)freed;
            } else
                avail += (int)pfs__order_total(s->ord, (int)p);
        }
        if (*pool < 0 || sh < *shadow) {
            *pool = (int)p;
            *shadow = sh;
            *extra = avail - need;
        }
    }
    return 0;
}

/* Admission (control.admission = "deadline"): a queued job whose deadline even full power
 * from now, on the fastest pool that can run it, cannot make is refused: it never starts,
 * frees the queue, and is counted as refused rather than as a miss. Full power is the most
 * it could get, so only jobs certain to miss are refused. */
static bool
refuse(struct sim *s, size_t j)
{
    const struct pfs_workload_job *w = &s->in->wl->jobs[j];
    double now = (double)s->now_us / US, best = HUGE_VAL;

    if (!s->sc->admit_deadlines || !isfinite(w->deadline_s))
        return false;
    for (size_t p = 0; p < s->in->n_pools; p++) {
        size_t c = pfs__class_curve_on(s, j, p);

        if (c != SIZE_MAX)
            best = fmin(best, pfs__class_duration_on(s, j, c, p));
    }
    if (!(now + best > w->deadline_s))
        return false;
    s->live_of[j] = JOB_REFUSED;
    s->res->jobs_refused++;
    if (s->jobs)
        pfs__record_put_result(s, j); /* (final now: out of the window's way) */
    return true;
}

enum { TREE_BACKFILL_TRIES = 100 };

/* The most GPUs a job can start on now in the one pool: its free GPUs, or under a power
 * tree the most a job finds a place for (pfs__nodes_room), so that the index hands backfill
 * no job that could only fail for want of a rack (a year's queue, tried at every event). */
static int
room_for(const struct sim *s)
{
    int room = s->nd ? pfs__nodes_room(s, 0) : s->free_gpus[0];

    return room < s->free_gpus[0] ? room : s->free_gpus[0];
}

/* FIFO with EASY backfill, over the pools: a job starts on the first pool (in the
 * facility's order) that can run it and has the GPUs; the head of the queue holds a
 * reservation on the pool that frees enough GPUs for it soonest, and a later job may start
 * before it only where it cannot delay that reservation. With one pool this is EASY as
 * usual. */
/* EASY backfill as pfs__sched_pass() below, on the indexed queue (sim/queue.c): the same jobs
 * started in the same order, without a scan of the queue. Used where schedule_ok() holds:
 * one pool (a job's run time then does not depend on where it runs) and no admission (no
 * queued job to refuse on the way). */
static int
schedule_indexed(struct sim *s)
{
    int rc = 0, p = -1, res_pool, extra, room;
    double shadow, now;
    size_t head, after, j, refused = 0;

    if (s->free_gpus[0] <= 0 || pfs__queue_len(s->iq) == 0)
        return 0;
    while ((head = pfs__queue_head(s->iq)) != SIZE_MAX) {
        if ((p = pfs__sched_fit_now(s, head)) < 0)
            break;
        pfs__queue_remove(s->iq, head);
        if ((rc = pfs__sched_start_job(s, head, (size_t)p)))
            return rc;
    }
    if (p == -2)
        return 0; /* the head waits for power: any job started before it would take some */
    room = room_for(s);
    if (pfs__queue_len(s->iq) < 2 || !pfs__queue_any_within(s->iq, room, head))
        return 0; /* nothing to backfill: no later job fits in the free GPUs now */
    if ((rc = reserve(s, head, &res_pool, &shadow, &extra)))
        return rc;
    now = (double)s->now_us / US;
    after = pfs__queue_rank(s->iq, head);
    /* The candidates in queue order: every later job that fits now and either fits in the
     * GPUs the head will not need (extra) or may end before the shadow time. The index
     * finds them with a bound a little wider than the scheduler's test, which is then made
     * exactly as pfs__sched_pass() makes it. Under a power tree a pass gives up after
     * TREE_BACKFILL_TRIES jobs that had the GPUs but no rack whose limits took their floor
     * (Slurm's bf_max_job_test, for the same reason: a year's queue tried at every event). */
    for (unsigned slot = 0;
         rc == 0 && refused < TREE_BACKFILL_TRIES &&
         (j = pfs__queue_next(s->iq, after, room, extra, (shadow - now) * (1 + 1e-12) + 1e-6,
                              slot)) != SIZE_MAX;
         slot = 1) {
        const struct pfs_workload_job *w = &s->in->wl->jobs[j];
        bool ends_before =
            now + pfs__class_duration_on(s, j, pfs__class_curve_on(s, j, 0), 0) <= shadow;

        after = pfs__queue_rank(s->iq, j);
        if (!ends_before && w->n_gpus > extra)
            continue;
        if (!power_admits(s, j, 0)) {
            refused += s->nd != NULL;
            continue;
        }
        if (!ends_before)
            extra -= w->n_gpus;
        pfs__queue_remove(s->iq, j);
        if ((rc = pfs__sched_start_job(s, j, 0)) == 0)
            room = room_for(s);
    }
    return rc;
}

int
pfs__sched_pass(struct sim *s)
{
    int rc = 0, p, res_pool, extra;
    double shadow;
    bool any_free = false;

    if (s->iq)
        return schedule_indexed(s);

    for (size_t q = 0; q < s->in->n_pools; q++)
        any_free = any_free || s->free_gpus[q] > 0;
    if (!any_free || s->q_len == 0)
        return 0;
    while (s->q_len > 0) {
        size_t head = s->queue[s->q_head];

        if (refuse(s, head)) {
            s->q_head++;
            s->q_len--;
            continue;
        }
        if ((p = pfs__sched_fit_now(s, head)) < 0) {
            if (p == -2)
                return 0; /* the head waits for power: any job started before it would take
                           * some */
            break;
        }
        s->q_head++;
        s->q_len--;
        if ((rc = pfs__sched_start_job(s, head, (size_t)p)))
            return rc;
    }
    if (s->q_len > 1) {
        bool fits = false;

        /* Nothing to backfill unless some later job fits in the free GPUs now. */
        for (size_t q = 1; q < s->q_len && !fits; q++)
            fits = gpus_free(s, s->queue[s->q_head + q]) >= 0; /* (as the index's test) */
        if (!fits)
            return 0;
    }
    if (s->q_len > 1) {
        if ((rc = reserve(s, s->queue[s->q_head], &res_pool, &shadow, &extra)))
            return rc;
        /* Later jobs that fit now and end before the shadow time, or use only the GPUs the
         * head will not need then, or run on another pool than the head's reservation.
         * Queue order is kept for the ones left. */
        for (size_t q = 1; q < s->q_len && rc == 0; q++) {
            size_t j = s->queue[s->q_head + q];
            const struct pfs_workload_job *w = &s->in->wl->jobs[j];
            int on = -1;
            bool ends_before = false;

            if (refuse(s, j)) {
                memmove(&s->queue[s->q_head + q], &s->queue[s->q_head + q + 1],
                        (s->q_len - q - 1) * sizeof *s->queue);
                s->q_len--;
                q--;
                continue;
            }

            for (size_t pp = 0; pp < s->in->n_pools && on < 0; pp++) {
                size_t c = pfs__class_curve_on(s, j, pp);

                if (c == SIZE_MAX || w->n_gpus > s->free_gpus[pp])
                    continue;
                if ((int)pp != res_pool) {
                    if (power_admits(s, j, pp)) {
                        on = (int)pp;
                        break;
                    }
                    continue;
                }
                ends_before =
                    (double)s->now_us / US + pfs__class_duration_on(s, j, c, pp) <= shadow;
                if ((ends_before || w->n_gpus <= extra) && power_admits(s, j, pp))
                    on = (int)pp;
            }
            if (on < 0)
                continue;
            if (on == res_pool && !ends_before)
                extra -= w->n_gpus;
            memmove(&s->queue[s->q_head + q], &s->queue[s->q_head + q + 1],
                    (s->q_len - q - 1) * sizeof *s->queue);
            s->q_len--;
            q--;
            rc = pfs__sched_start_job(s, j, (size_t)on);
        }
    }
    return rc;
}
