/*
 * sim/pausing.c - a job's change of cap, pause and active GPUs (transition), discrete pausing:
 * which jobs to pause for an event and their allowance, and applying a decision's round.
 *
 * It changes the jobs' caps and pauses as decided; what to decide is control's.
 * The engine's room, its files and their layers: docs/simulator.md, "Where each concern lives".
 */
#include "engine.h"

/* ----- control ----- */

/* Whether (pause, active) moves the pause or the GPUs of the job of record jb. */
bool
pfs__pause_moves(const struct job *jb, double pause, int active)
{
    return pause < jb->pause || pause > jb->pause || active != jb->active;
}

/* Moves job j to (cap, pause), charging the overheads of a change of pausing: a job that
 * starts pausing (or stops running altogether) checkpoints once, one that stops pausing (or
 * runs again at all) restarts once. */
int
pfs__pause_transition_rec(struct sim *s, size_t j, struct job *jb, double cap, double pause,
                          int active)
{
    /* (its cap alone, mostly: every job at every decision of an event under equal) */
    bool same_pause = !pfs__pause_moves(jb, pause, active);
    int rc;

    if (same_pause && !(cap < jb->cap_w) && !(cap > jb->cap_w))
        return 0; /* unchanged: its rate and finish time stand */
    if (!same_pause) {
        if (active != jb->active) {
            /* A resize: it checkpoints and restarts on its new GPUs (resume_s, no progress). */
            jb->resume_until_us = s->now_us + (int64_t)(s->sc->resume_s * US);
            jb->ckpt_until_us = 0;
            jb->active = active;
        } else if ((jb->pause >= 1 && pause < 1) || (jb->pause > 0 && !(pause > 0))) {
            jb->resume_until_us = s->now_us + (int64_t)(s->sc->resume_s * US);
            jb->ckpt_until_us = 0; /* resumed while checkpointing: the write is abandoned */
        } else if (((jb->pause < 1 && pause >= 1) || (!(jb->pause > 0) && pause > 0)) &&
                   s->sc->checkpoint_s > 0) {
            jb->ckpt_until_us = s->now_us + (int64_t)(s->sc->checkpoint_s * US);
            jb->ckpt_gpu_w = jb->gpu_w;
        }
    }
    jb->cap_w = cap;
    jb->pause = pause;
    pfs__power_mark_rec(s, jb);
    rc = pfs__power_set_rate_rec(s, j, jb);
    if (rc == 0 && jb->resume_until_us > s->now_us)
        rc =
            pfs__heap_push(&s->heap, jb->resume_until_us, PFS__EV_ACTUATE, (uint32_t)j, UINT32_MAX);
    if (rc == 0 && jb->ckpt_until_us > s->now_us)
        rc = pfs__heap_push(&s->heap, jb->ckpt_until_us, PFS__EV_ACTUATE, (uint32_t)j, UINT32_MAX);
    return rc;
}

int
pfs__pause_transition(struct sim *s, size_t j, double cap, double pause, int active)
{
    return pfs__pause_transition_rec(s, j, job_rec(s, j), cap, pause, active);
}

/* Discrete pausing's effective pause of job j now: whole (1) inside its pause, none (0)
 * outside it. */
static double
discrete_pause(const struct sim *s, size_t j)
{
    return job_rec(s, j)->dpause_until_us > s->now_us ? 1 : 0;
}

/* A job that may pause under discrete pausing: what pausing it saves in its policy's own
 * accounting (its active GPUs from the decided cap to idle, as pfs_alloc_power_w counts),
 * and the fluid share the policy gave it. */
struct dcand {
    size_t j;
    double save_w, p;
    double tolerance; /* its tier's tolerated loss (pfs_tier_max_loss) */
};

static int
cmp_dcand_add(const struct dcand *x, const struct dcand *y, const struct sim *s)
{
    int64_t lx = job_rec(s, x->j)->dpause_left_us, ly = job_rec(s, y->j)->dpause_left_us;

    if (x->p > y->p || x->p < y->p)
        return x->p > y->p ? -1 : 1; /* the policy's own preference first */
    if (x->tolerance > y->tolerance || x->tolerance < y->tolerance)
        return x->tolerance > y->tolerance ? -1 : 1; /* then the most tolerant tier */
    if (lx != ly)
        return lx > ly ? -1 : 1; /* in turns: the most allowance left */
    if (x->save_w > y->save_w || x->save_w < y->save_w)
        return x->save_w > y->save_w ? -1 : 1; /* fewer jobs to stop */
    return (x->j > y->j) - (x->j < y->j);
}

/* The events of job j's discrete pause: its allowance ends (PFS__EV_ACTUATE, UINT32_MAX - 1,
 * ignored unless it is still the job's end), and a decision made one actuation delay before,
 * so that its replacement stops as it restarts. */
static int
dpause_events(struct sim *s, size_t j)
{
    int64_t until = job_rec(s, j)->dpause_until_us,
            early = until - (int64_t)(s->sc->actuation_s * US);
    int rc = pfs__heap_push(&s->heap, until, PFS__EV_ACTUATE, (uint32_t)j, UINT32_MAX - 1);

    if (rc == 0 && s->sc->actuation_s > 0 && early > s->now_us)
        rc = pfs__heap_push(&s->heap, early, PFS__EV_CONTROL, 0, 3);
    return rc;
}

/* Discrete pausing (control.pausing = "discrete", issue 14): the decision's pause fractions
 * become whole jobs paused in turns, compliance first. The fluid answer saves D = sum of
 * p_j x save_j; the jobs paused now must save at least that. Those paused stay paused while
 * they have allowance (no churn of checkpoints and restarts at every decision); if they save
 * too little, jobs are added until they save D: those the policy pauses most first, then
 * (when those have spent their allowance) others it may pause, the most tolerant tier first,
 * then the most allowance left; if they save more than D, those with the least allowance left
 * resume while the rest still save D. A job's allowance is its tier's: the fraction of the
 * time until the limit lifts that it may lose (max_loss, the view's), counted from the first
 * decision for that limit; under a standing cap, which never lifts, its tier's fraction of
 * each clock hour, renewed at the hour (a job paused across it stays paused, on the new
 * hour's allowance). A job whose allowance runs out resumes (PFS__EV_ACTUATE, UINT32_MAX - 1)
 * and a decision is made in time for its replacement to pause as it resumes. Whole jobs
 * save in steps, so the facility sheds more than the fluid answer (over-delivers) unless the
 * steps fit the deficit exactly; when the allowances left cannot save D, the target is missed
 * and the DR metrics show it. */
static int
discrete_select(struct sim *s, uint32_t round)
{
    double now = (double)s->now_us / US, lift = pfs__dr_limit_lifts(s, now), need = 0, saved = 0;
    bool may = pfs_policy_may_pause(s->policy), standing = !isfinite(lift);
    struct dcand *g, c;
    size_t m = 0, q;
    int rc = 0;

    /* A standing cap never lifts: its allowance is an hour's, renewed every clock hour. */
    if (standing)
        lift = (floor(now / 3600) + 1) * 3600;

    for (size_t r = 0; r < s->n_running; r++) {
        size_t j = s->running[r];
        struct job *jb = job_rec(s, j);
        double p = jb->pend_pause, save;

        if (jb->pend_round != round)
            continue;
        if (!(fabs(jb->dpause_lift_s - lift) <= 1e-6)) {
            /* A new limit (or a standing cap's new hour): the job's allowance anew, its
             * tier's tolerance over the span (for an event scaled to its run as pfs__control_step()
             * scales it for the policy, which sees an unscaled tier before an event starts). */
            double span = lift > now ? lift - now : s->sc->event_cadence_s;
            double loss = pfs_tier_max_loss(s->in->wl->jobs[j].tier);

            if (!standing && loss > 0 && jb->dur_s > span)
                loss = fmin(0.95, loss * jb->dur_s / span);
            jb->dpause_left_us = (int64_t)(loss * span * US);
            jb->dpause_lift_s = lift;
            if (jb->dpause_until_us > s->now_us) { /* paused on: until the new allowance ends */
                jb->dpause_until_us = s->now_us + jb->dpause_left_us;
                jb->dpause_left_us = 0;
                if ((rc = dpause_events(s, j)))
                    return rc;
            }
        }
        /* Not the controller's to place: a whole pause or none decided, or a job the policy
         * does not pause and may not (no pausing policy, a firm tier, no allowance). */
        if (p >= 1 ||
            !(p > 0 || (may && (jb->dpause_until_us > s->now_us || jb->dpause_left_us > 0)))) {
            if (jb->dpause_until_us > s->now_us)
                jb->dpause_left_us = jb->dpause_until_us - s->now_us;
            jb->dpause_until_us = 0;
            continue;
        }
        save = jb->pend_active * (jb->pend_cap - pfs__power_job_gpu(s, j)->idle_w);
        if (!(save > 0))
            continue;
        if (!(g = pfs__grow(s->dc, &s->dc_cap, m, sizeof *s->dc, 64)))
            return PFS_ENOMEM;
        s->dc = g;
        /* In the order jobs are added (a few jobs: an insertion sort). */
        c = (struct dcand){j, save, p, pfs_tier_max_loss(s->in->wl->jobs[j].tier)};
        for (q = m++; q > 0 && cmp_dcand_add(&c, &s->dc[q - 1], s) < 0; q--)
            s->dc[q] = s->dc[q - 1];
        s->dc[q] = c;
        need += p * save;
        if (jb->dpause_until_us > s->now_us)
            saved += save;
    }
    if (m == 0)
        return 0;
    /* Add jobs until they save what the fluid answer saves. */
    for (q = 0; q < m && saved < need * (1 - 1e-9); q++) {
        struct job *jb = job_rec(s, s->dc[q].j);

        if (jb->dpause_until_us > s->now_us || jb->dpause_left_us <= 0)
            continue;
        jb->dpause_until_us = s->now_us + jb->dpause_left_us;
        jb->dpause_left_us = 0;
        saved += s->dc[q].save_w;
        if ((rc = dpause_events(s, s->dc[q].j)))
            return rc;
    }
    /* Resume those not needed, the least allowance left first (the list backwards is not
     * that order: the paused jobs' allowance left is until - now). */
    for (bool more = saved > need; more;) {
        size_t best = m;
        int64_t best_left = INT64_MAX;

        more = false;
        for (size_t k = 0; k < m; k++) {
            const struct job *jb = job_rec(s, s->dc[k].j);
            int64_t left = jb->dpause_until_us - s->now_us;

            if (left > 0 && saved - s->dc[k].save_w >= need * (1 - 1e-9) && left < best_left) {
                best = k;
                best_left = left;
            }
        }
        if (best < m) {
            struct job *jb = job_rec(s, s->dc[best].j);

            jb->dpause_left_us = best_left;
            jb->dpause_until_us = 0;
            saved -= s->dc[best].save_w;
            more = true;
        }
    }
    return 0;
}

int
pfs__pause_apply(struct sim *s, uint32_t round)
{
    int rc = 0;

    if (s->sc->discrete_pauses && (rc = discrete_select(s, round)))
        return rc;
    for (size_t r = 0; r < s->n_running && rc == 0; r++) {
        size_t j = s->running[r];
        struct job *jb = job_rec(s, j);
        double pause = jb->pend_pause;

        if (jb->pend_round != round)
            continue;
        jb->pend_round = 0;
        if (s->sc->discrete_pauses && pause < 1 && (pause > 0 || jb->dpause_until_us > 0))
            pause = discrete_pause(s, j); /* discrete_select's */
        rc = pfs__pause_transition(s, j, jb->pend_cap, pause, jb->pend_active);
    }
    return rc;
}

/* ----- holding a limit (control.over_limit = "hold") ----- */

/* A running job the hold may pause or resume: what its GPUs draw idle, what pausing it saves
 * below its floor (its GPUs from their draw at the lowest limit to idle), and its place in
 * the order. */
struct hcand {
    double idle_w, save_w;
    double rank;      /* the policy's (pause_rank), 0 without one: lowest first */
    double tol;       /* its tier's tolerated loss: the most tolerant first */
    int64_t start_us; /* then the latest started */
    size_t j;
};

/* The order in which the hold pauses jobs (and the reverse, in which it resumes them): the
 * policy's rank, lowest first; then the most tolerant tier (the lowest: Flex 3 before Firm);
 * then the latest started (the least time it has held its GPUs); then the highest index. */
static int
cmp_hold(const void *a, const void *b)
{
    const struct hcand *x = a, *y = b;

    if (x->rank < y->rank || x->rank > y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->tol > y->tol || x->tol < y->tol)
        return x->tol > y->tol ? -1 : 1;
    if (x->start_us != y->start_us)
        return x->start_us > y->start_us ? -1 : 1;
    return (x->j < y->j) - (x->j > y->j);
}

static void
hold_set(struct sim *s, struct job *jb, bool held)
{
    if (held && !jb->held) {
        s->n_held++;
        s->res->hold_pauses++;
        if (!jb->held_ever)
            s->res->jobs_paused_hold++;
        jb->held_ever = true;
    } else if (!held && jb->held)
        s->n_held--;
    jb->held = held;
}

/* Capping alone cannot go below every running job at its floor (its draw at its lowest
 * limit); where that floor is above limit_w (the facility's lowest limit until a pause
 * decided now has taken effect, its checkpoint written), jobs are held paused, in the
 * order of cmp_hold, until the floor of the rest and the idle draw of those held fit;
 * where it fits with room, held jobs resume, in the reverse order, while each fits. rank:
 * asked only then, the policy's order per slot (it returns NULL: none, or no memory). Sets
 * *held_w to what the held jobs' GPUs draw (idle). Returns 0 or PFS_ENOMEM. */
int
pfs__pause_hold(struct sim *s, double limit_w, const double *(*rank_of)(struct sim *s),
                double *held_w)
{
    double room = limit_w / s->sc->pue - s->in->other_w - pfs__power_free_idle_w(s), floor_w = 0;
    const double *rank;
    struct hcand *g;
    size_t m = 0;

    *held_w = 0;
    if (s->n_held == 0 && s->floor_gpu_w <= room * (1 + 1e-12))
        return 0; /* capping holds it: the common case, no pass over the jobs */
    if (!(g = pfs__grow(s->hc, &s->hc_cap, s->n_running, sizeof *s->hc, 64)))
        return PFS_ENOMEM;
    s->hc = g;
    rank = rank_of ? rank_of(s) : NULL;
    for (size_t r = 0; r < s->n_running; r++) {
        size_t j = s->running[r];
        const struct job *jb = job_rec(s, j);
        double idle = pfs__power_job_gpu(s, j)->idle_w * jb->n_gpus,
               fl = pfs__power_floor_draw_w(s, j);

        floor_w += jb->held ? idle : fl;
        *held_w += jb->held ? idle : 0;
        s->hc[m++] = (struct hcand){
            idle,         fl - idle, rank ? rank[r] : 0, pfs_tier_max_loss(s->in->wl->jobs[j].tier),
            jb->start_us, j};
    }
    qsort(s->hc, m, sizeof *s->hc, cmp_hold);
    if (floor_w > room * (1 + 1e-12)) { /* pause, in order, until the floor fits */
        for (size_t q = 0; q < m && floor_w > room * (1 + 1e-12); q++) {
            struct job *jb = job_rec(s, s->hc[q].j);

            if (jb->held || !(s->hc[q].save_w > 0))
                continue;
            hold_set(s, jb, true);
            floor_w -= s->hc[q].save_w;
            *held_w += s->hc[q].idle_w;
        }
    } else { /* resume, in the reverse order, each that fits */
        for (size_t q = m; q-- > 0 && s->n_held > 0;) {
            struct job *jb = job_rec(s, s->hc[q].j);

            if (jb->held && floor_w + s->hc[q].save_w <= room * (1 + 1e-12)) {
                hold_set(s, jb, false);
                floor_w += s->hc[q].save_w;
                *held_w -= s->hc[q].idle_w;
            }
        }
    }
    return 0;
}

/* No limit binds: every held job is free to run again (the caller decides them). */
void
pfs__pause_hold_off(struct sim *s)
{
    for (size_t r = 0; r < s->n_running && s->n_held > 0; r++)
        hold_set(s, job_rec(s, s->running[r]), false);
}
