/*
 * sim/control.c - the control step: the policy's view of the running jobs, its decision (by
 * job, or by class of identical jobs), the decision's landing on the jobs' slots, and its
 * actuation after the actuation delay.
 *
 * It asks the policy and writes the decisions; it starts no job (it may ask the scheduler to
 * run) and records nothing.
 * The engine's room, its files and their layers: docs/simulator.md, "Where each concern lives".
 */
#include "engine.h"

/* ----- decisions in flight ----- */

/* Opens a decision: its entries start at the end of dq. The entries of decisions already in
 * effect are dropped first when they are at least half of it. */
static size_t
batch_open(struct sim *s)
{
    if (s->dq_head > 0 && s->dq_head >= s->dq_len - s->dq_head) {
        memmove(s->dq, s->dq + s->dq_head, (s->dq_len - s->dq_head) * sizeof *s->dq);
        for (size_t b = s->bq_head; b < s->bq_head + s->bq_len; b++)
            s->bq[b].from -= s->dq_head;
        s->dq_len -= s->dq_head;
        s->dq_head = 0;
    }
    s->n_cx = s->n_cx_slot = 0;
    s->cx_many = false;
    return s->dq_len;
}

/* The GPUs decision a has slot si's job run on: pfs_alloc_active_gpus, with the job's own
 * count from the slot (its view's is the same, in a larger record). */
static inline int
slot_active(const struct slot_info *si, const struct pfs_alloc_decision *a)
{
    return a->n_gpus > 0 && a->n_gpus < si->n_gpus ? a->n_gpus : si->n_gpus;
}

/* Whether decision a's cap and pause are slot si's, bit for bit: then they are also as
 * unchanged() compares them (two integer compares for its four of doubles). */
static inline bool
same_bits(const struct slot_info *si, const struct pfs_alloc_decision *a)
{
    uint64_t x[2], y[2]; /* (one copy each: the pairs lie side by side, asserted here) */

    _Static_assert(offsetof(struct pfs_alloc_decision, pause_frac) ==
                       offsetof(struct pfs_alloc_decision, cap_w) + sizeof(double),
                   "cap_w, pause_frac");
    _Static_assert(offsetof(struct slot_info, pause) ==
                       offsetof(struct slot_info, cap) + sizeof(double),
                   "cap, pause");
    memcpy(x, (const char *)a + offsetof(struct pfs_alloc_decision, cap_w), sizeof x);
    memcpy(y, (const char *)si + offsetof(struct slot_info, cap), sizeof y);
    return ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
}

/* Whether a decision for slot si's job is the one it already has. */
static inline bool
unchanged(const struct slot_info *si, double cap, double pause, int active)
{
    return !(cap < si->cap) && !(cap > si->cap) && !(pause < si->pause) && !(pause > si->pause) &&
           active == si->active;
}

/* The open decision sets the job of slot r to (cap, pause) on active GPUs. Outside discrete
 * pausing only a change is kept: a job the decision leaves as the latest one had it would
 * be a no-op when it takes effect (transition), and at 20,000 running jobs one decision
 * held 20,000 entries for a few dozen changes, each costing a cache miss to apply. */
static int
decide(struct sim *s, size_t r, double cap, double pause, int active)
{
    struct slot_info *si = &s->si[r];
    size_t j = s->running[r];
    struct decided *g;

    if (!s->reference && !s->sc->discrete_pauses && unchanged(si, cap, pause, active))
        return 0; /* (the straightforward engine keeps them all: the check of this) */
    si->cap = cap;
    si->pause = pause;
    si->active = active;
    if (!(g = pfs__grow(s->dq, &s->dq_cap, s->dq_len, sizeof *s->dq, 1024)))
        return PFS_ENOMEM;
    s->dq = g;
    s->dq[s->dq_len++] = (struct decided){(uint32_t)j, active, cap, pause};
    return 0;
}

/* How many changed jobs a decision lands by a pass over every slot rather than by sorting
 * its changes (actuate): 33, or an eighth of those running if more; class entries that
 * change fewer are made job entries again (class_entries_few). */
static size_t
pass_limit(const struct sim *s)
{
    return s->n_running / 8 > 32 ? s->n_running / 8 : 33;
}

/* The open decision sets every job of class k's group to (cap, pause) on active GPUs: one
 * entry for the class (DQ_CLASS), applied to each of its jobs still running when it takes
 * effect, where an entry per changed job cost the decision and its landing some 110
 * instructions a job (equal's level moves every job's cap at every decision of an event).
 * The jobs whose latest decision this already was get it again when it lands: a no-op
 * (transition), as decide() leaving them out is: their latest decision is in effect by
 * then, the decisions taking effect in order. */
static int
decide_class(struct sim *s, uint32_t k, double cap, double pause, int active)
{
    const struct group *g = &s->group[k];
    struct decided *e;
    size_t *x, from = s->n_cx_slot, changed = 0, keep = pass_limit(s);
    uint32_t *c;
    int rc = 0;

    if (s->reference || s->sc->discrete_pauses) { /* (pfs__pause_apply() goes job by job) */
        for (uint32_t i = 0; rc == 0 && i < g->n; i++)
            rc = decide(s, g->slot[i], cap, pause, active);
        return rc;
    }
    if (s->cx_many) {
        keep = 0; /* none kept: too many already */
    } else {      /* room for as many as are kept */
        if (!(c = pfs__grow(s->cx_slot, &s->cx_slot_cap, keep, sizeof *c, 256)))
            return PFS_ENOMEM;
        s->cx_slot = c;
    }
    for (uint32_t i = 0; i < g->n; i++) {
        struct slot_info *si = &s->si[g->slot[i]];

        if (!(cap < si->cap) && !(cap > si->cap) && !(pause < si->pause) && !(pause > si->pause) &&
            active == si->active)
            continue;
        si->cap = cap;
        si->pause = pause;
        si->active = active;
        if (from + changed < keep)
            s->cx_slot[from + changed] = g->slot[i];
        changed++;
    }
    if (changed == 0)
        return 0;
    s->n_cx_slot = from + changed;
    s->cx_many = s->n_cx_slot >= keep;
    if (!(e = pfs__grow(s->dq, &s->dq_cap, s->dq_len, sizeof *s->dq, 1024)))
        return PFS_ENOMEM;
    s->dq = e;
    if (!(x = pfs__grow(s->cx_n, &s->cx_cap, s->n_cx, sizeof *x, 64)))
        return PFS_ENOMEM;
    s->cx_n = x;
    s->cx_n[s->n_cx++] = changed;
    s->dq[s->dq_len++] = (struct decided){DQ_CLASS | k, active, cap, pause};
    return 0;
}

/* The open decision's class entries, where together they change few jobs (32 or fewer, or
 * under an eighth of those running: where actuate would sort the changes rather than pass
 * over every slot), made the entries of the jobs they changed, in their place: what decide()
 * would have kept. pfi's and the oracle's decisions by class move a few classes at a time,
 * and their pass over every slot cost them 5% more than the entries. Returns 0 or
 * PFS_ENOMEM. */
static int
class_entries_few(struct sim *s, size_t from)
{
    size_t total = s->n_cx_slot, m = 0, c = 0;
    struct decided *o;

    if (s->n_cx == 0 || s->cx_many)
        return 0;
    if (!(o = pfs__grow(s->cx_out, &s->cx_out_cap, s->dq_len - from + total, sizeof *o, 256)))
        return PFS_ENOMEM;
    s->cx_out = o;
    for (size_t q = from, at = 0; q < s->dq_len; q++) { /* (at: the class's first slot kept) */
        const struct decided *e = &s->dq[q];

        if (!(e->job & DQ_CLASS)) {
            o[m++] = *e;
            continue;
        }
        for (size_t i = 0; i < s->cx_n[c]; i++)
            o[m++] = (struct decided){(uint32_t)s->running[s->cx_slot[at + i]], e->active, e->cap,
                                      e->pause};
        at += s->cx_n[c++];
    }
    if (!(o = pfs__grow(s->dq, &s->dq_cap, from + m, sizeof *o, 1024)))
        return PFS_ENOMEM;
    s->dq = o;
    memcpy(s->dq + from, s->cx_out, m * sizeof *o);
    s->dq_len = from + m;
    s->n_cx = s->n_cx_slot = 0;
    return 0;
}

/* Closes the decision opened at entry from, as round s->round. */
static int
batch_close(struct sim *s, size_t from)
{
    struct batch *g;
    int rc;

    if ((rc = class_entries_few(s, from)))
        return rc;

    if (s->bq_head > 0 && s->bq_head + s->bq_len == s->bq_cap) {
        memmove(s->bq, s->bq + s->bq_head, s->bq_len * sizeof *s->bq);
        s->bq_head = 0;
    }
    if (!(g = pfs__grow(s->bq, &s->bq_cap, s->bq_head + s->bq_len, sizeof *s->bq, 64)))
        return PFS_ENOMEM;
    s->bq = g;
    s->bq[s->bq_head + s->bq_len++] =
        (struct batch){s->round,         from,
                       s->dq_len - from, s->dq_len - from - s->n_cx + s->n_cx_slot,
                       s->planned_w[0],  s->planned_tight[0]};
    return 0;
}

static int
cmp_landing(const void *a, const void *b)
{
    const struct landing *x = a, *y = b;

    if (x->slot != y->slot)
        return (x->slot > y->slot) - (x->slot < y->slot);
    return (x->q > y->q) - (x->q < y->q); /* (a slot's entries in the order decided) */
}

/* Marks the slots of actuate's m landings in land_at (each its index + 1), each one's
 * decision copied to land_dec at its slot (read in slot order after, where the entries
 * are in the order they were decided: a cache miss each): true, or false (none marked)
 * where a slot comes twice, which a sort keeps in order and a mark would not. */
static bool
land_by_slot(struct sim *s, size_t m)
{
    for (size_t q = 0; q < m; q++) {
        size_t r = s->land[q].slot;

        if (s->land_at[r]) {
            while (q-- > 0)
                s->land_at[s->land[q].slot] = 0;
            return false;
        }
        s->land_at[r] = (uint32_t)q + 1;
        s->land_dec[r] = s->dq[s->land[q].q];
    }
    return true;
}

/* Sorts actuate's m landings by slot, those of a slot in the order they were decided. */
static void
land_sort(struct sim *s, size_t m)
{
    if (m > 32) {
        qsort(s->land, m, sizeof *s->land, cmp_landing);
        return;
    }
    for (size_t q = 1; q < m; q++) { /* (a handful, mostly: glibc's qsort cost 3,000 a call) */
        struct landing x = s->land[q];
        size_t p = q;

        for (; p > 0 && s->land[p - 1].slot > x.slot; p--)
            s->land[p] = s->land[p - 1];
        s->land[p] = x;
    }
}

/* Job j (of record jb, running), of a class whose entry e lands: transition_rec, with the
 * rate and draw worked out once for the class where only its cap moves (equal's case: every
 * job at every decision of an event). Those are set_rate_rec's, bit for bit: the same
 * expressions of the same class curve, GPU count, pause and GPUs (no job has a curve of its
 * own where there are classes); a job checkpointing or resuming, and a change of pausing or
 * GPUs, take transition_rec's way. (No assert of those: one costs 6 instructions a job.) */
static int
land_class(struct sim *s, size_t j, struct job *jb, const struct decided *e)
{
    const int64_t now = s->now_us;
    struct class_land *cl = &s->c_land[jb->cls];
    const struct pfs_gpu *g = pfs__power_rec_gpu(s, jb);
    double pause = e->pause;

    if (now < jb->ckpt_until_us || now < jb->resume_until_us ||
        pfs__pause_moves(jb, pause, e->active))
        return pfs__pause_transition_rec(s, j, jb, e->cap, e->pause, e->active);
    /* unchanged: its rate and finish time stand (told by the bits: caps are checked to lie
     * within the GPU's limits, which models/gpu.c keeps above 0, and positive doubles are
     * equal exactly where their bits are) */
    if (memcmp(&e->cap, &jb->cap_w, sizeof e->cap) == 0)
        return 0;
    jb->cap_w = e->cap;
    jb->pause = pause;
    if (isnan(cl->rate)) {
        const struct corpus_curve *c = pfs__power_rec_curve(s, jb);
        double env;

        pfs__power_curve_at(s, jb, c, e->cap, &env, &cl->power);
        cl->rate = pfs__power_rate_of(c, env, pause, jb->active, jb->n_gpus);
        cl->gpu = NULL;
    }
    if (g != cl->gpu) { /* (mark_rec's test and set_rate_rec's draw, on this GPU) */
        cl->gpu = g;
        cl->gw = pfs__power_draw_of(cl->power, g->idle_w, pause, jb->active, jb->n_gpus);
        cl->reduced = e->cap < g->max_limit_w || pause > 0;
    }
    pfs__power_set_reduced(s, jb, cl->reduced);
    return pfs__power_rate_commit(s, j, jb, cl->rate, cl->gw);
}

/* Batch b takes effect in a pass over the slots, with its m job entries (landings) and, if
 * classes, its class entries marked in c_entry: a slot's job takes its class's entry where
 * it ran when b was decided (it started in an earlier round), then its own entries, in the
 * order decided (a class's entries come first: decide_by_class decides the jobs of classes
 * not tied, by class, before the rest). */
static int
land_pass(struct sim *s, const struct batch *b, size_t m, bool classes)
{
    bool marked = m > 0 && s->land_at && land_by_slot(s, m); /* (none: no slot to look at) */
    size_t q = 0;
    int rc = 0;

    if (!marked)
        land_sort(s, m);
    s->res->slot_passes++;
    if (3 * b->changes >= s->n_running) /* most finish events move: the heap made once */
        pfs__fheap_hold(&s->fh);
    for (size_t r = 0; r < s->n_running; r++) {
        struct job *jb = &s->live[r]; /* (the record at its slot) */
        size_t j = s->running[r];

        if (classes && jb->start_round < b->round && jb->cls < s->n_groups && s->c_entry[jb->cls]) {
            const struct decided *e = &s->dq[s->c_entry[jb->cls] - 1];

            if (rc == 0)
                rc = land_class(s, j, jb, e);
        }
        if (marked && s->land_at[r]) {
            s->land_at[r] = 0; /* (all of them, whatever rc) */
            if (rc == 0)
                rc = pfs__pause_transition(s, j, s->land_dec[r].cap, s->land_dec[r].pause,
                                           s->land_dec[r].active);
        }
        for (; !marked && q < m && s->land[q].slot == r; q++) {
            const struct decided *e = &s->dq[s->land[q].q];

            if (rc == 0)
                rc = pfs__pause_transition(s, j, e->cap, e->pause, e->active);
        }
    }
    pfs__fheap_settle(&s->fh);
    for (size_t k = 0; classes && k < b->n; k++) /* the marks off */
        if (s->dq[b->from + k].job & DQ_CLASS) {
            s->c_entry[s->dq[b->from + k].job & ~DQ_CLASS] = 0;
            s->c_land[s->dq[b->from + k].job & ~DQ_CLASS].rate = NAN;
        }
    return rc;
}

/* The decisions up to round take effect, oldest first. A decision made while an earlier one
 * was still in flight waits its own actuation delay; an earlier version kept one pending
 * decision per job, which the next decision overwrote, so that with decisions closer
 * together than the delay none ever took effect (test_sim_actuation_overlap). */
int
pfs__control_actuate(struct sim *s, uint32_t round)
{
    int rc = 0;

    while (rc == 0 && s->bq_len > 0 && s->bq[s->bq_head].round <= round) {
        struct batch b = s->bq[s->bq_head++];

        s->bq_len--;
        s->planned_w[1] = b.planned_w;
        s->planned_tight[1] = b.tight;
        s->applied_round = b.round;
        if (!s->reference && !s->sc->discrete_pauses) {
            /* The changes only (decide), job by job in the order of their slots now: the
             * order in which pfs__pause_apply() would meet them going through every running job. */
            size_t m = 0, classes = 0;

            for (size_t q = 0; q < b.n; q++) {
                size_t j = s->dq[b.from + q].job;
                struct landing *g;

                if (j & DQ_CLASS) { /* (class entries: land_classes) */
                    s->c_entry[j & ~DQ_CLASS] = (uint32_t)(b.from + q) + 1;
                    classes++;
                    continue;
                }
                if (job_state(s, j) != RUNNING)
                    continue; /* finished since */
                if (!(g = pfs__grow(s->land, &s->land_cap, m, sizeof *s->land, 256)))
                    return PFS_ENOMEM;
                s->land = g;
                s->land[m++] = (struct landing){s->live_of[j] - 1, b.from + q}; /* (its slot) */
            }
            if (classes > 0 || (s->land_at && m >= pass_limit(s))) {
                /* classes, or many of the running jobs: by a pass over the slots */
                rc = land_pass(s, &b, m, classes > 0);
                s->dq_head = b.from + b.n;
                continue;
            }
            land_sort(s, m);
            for (size_t q = 0; q < m && rc == 0; q++) {
                const struct decided *e = &s->dq[s->land[q].q];

                rc = pfs__pause_transition(s, e->job, e->cap, e->pause, e->active);
            }
            s->dq_head = b.from + b.n;
            continue;
        }
        for (size_t q = 0; q < b.n; q++) {
            const struct decided *e = &s->dq[b.from + q];
            struct job *jb;

            if (job_state(s, e->job) != RUNNING)
                continue; /* finished since */
            jb = job_rec(s, e->job);
            jb->pend_cap = e->cap;
            jb->pend_pause = e->pause;
            jb->pend_active = e->active;
            jb->pend_round = b.round;
        }
        s->dq_head = b.from + b.n;
        rc = pfs__pause_apply(s, b.round);
    }
    if (s->bq_len == 0)
        s->bq_head = s->dq_head = s->dq_len = 0;
    return rc;
}

/* Whether sim.no_pred counts what it says, and each built view's GPUs are its slot's
 * (slot_active reads them there): the straightforward engine checks it at every decision;
 * the other trusts it. */
static bool
no_pred_ok(const struct sim *s)
{
    for (size_t r = 0; r < s->n_running; r++)
        if (s->view_ok[r] && s->aj[r].n_gpus != s->si[r].n_gpus)
            return false;
    for (int e = 0; e < 2; e++) {
        size_t n = 0;

        for (size_t r = 0; r < s->n_running; r++)
            n += s->view_ok[r] && s->pred[e][r].n == 0;
        if (n != s->no_pred[e])
            return false;
    }
    return true;
}

/* Every running job's view, built where it is not yet (view_fill). */
static void
views_fill(struct sim *s)
{
    for (size_t r = 0; r < s->n_running; r++) {
        if (!s->view_ok[r]) {
            pfs__class_view_fill(s, r);
            s->view_ok[r] = true;
        }
    }
    s->views_any = true;
    assert(!s->reference || no_pred_ok(s));
}

/* The policy's view of the running jobs under gpu_budget: the reference's without classes
 * or kept curves (job by job). */
static struct pfs_alloc_view
alloc_view(struct sim *s, double gpu_budget)
{
    s->truth.n_jobs = s->n_running;
    s->truth.cls = s->reference ? NULL : s->cls;
    s->truth.n_classes = s->n_classes;
    return (struct pfs_alloc_view){
        gpu_budget,
        s->n_running,
        s->aj,
        s->at,
        s->needs_truth ? &s->truth : NULL,
        NULL,
        {s->reference ? NULL : s->pred[0], s->reference ? NULL : s->pred[1]},
        NULL,
        s->reference ? NULL : s->cls,
        s->n_classes};
}

/* A decision by class, for a policy that answers so (pfs__policy_by_class): the same
 * decision as its allocate's over every running job, at the cost of the classes and of the
 * jobs whose cap moves. Every class is priced once; a class given the same as at the last
 * decision by class is not gone through, only its jobs started since (fresh); the tied
 * classes' jobs (the price's) take the budget left in order of slot, as the view's job
 * order has it. Sets *committed (pfs_alloc_power_w summed, by class). Returns 0, 1 where
 * the policy must be asked job by job this time (no answer by class, or an infeasible
 * budget, which pfs__control_step() handles), or an error. */
static int
decide_by_class(struct sim *s, double gpu_budget, double *committed)
{
    struct pfs__class_answer a = {0};
    struct pfs_alloc_decision ok = {0};
    struct pfs__class_set cs;
    struct pfs_alloc_view v;
    struct pfs_diag d = {0};
    double total = 0, left;
    uint32_t n_tied = 0;
    int rc;

    if (!s->groups_on) { /* a limit binds again: every running job's view, by class */
        views_fill(s);
        if (!s->cls) { /* no memory for the classes (view_fill): job by job from now on */
            s->by_class = false;
            return 1;
        }
        if (pfs__class_groups_reserve(s))
            return pfs__diag_set(s->diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        for (size_t r = 0; r < s->n_running; r++) {
            if (pfs__class_group_put(s, s->cls[r], r))
                return pfs__diag_set(s->diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            s->live[r].cls = s->cls[r]; /* (the record at its slot) */
        }
        for (uint32_t k = 0; k < s->n_classes; k++)
            s->group[k].uniform = false;
        s->groups_on = true;
        s->n_fresh = 0;
    } else {
        for (size_t q = 0; q < s->n_fresh; q++) {
            size_t j = s->fresh[q], r;

            if (job_state(s, j) != RUNNING)
                continue;
            r = job_rec(s, j)->slot;
            if (!s->view_ok[r]) {
                pfs__class_view_fill(s, r);
                s->view_ok[r] = true;
            }
        }
        if (!s->cls) {
            pfs__class_groups_off(s);
            s->by_class = false;
            return 1;
        }
    }
    for (uint32_t u = 0; u < s->n_present; u++) {
        uint32_t k = s->present[u];

        s->g_count[k] = s->group[k].n;
        s->g_rep[k] = s->group[k].slot[0];
    }
    v = alloc_view(s, gpu_budget);
    a.cap = s->g_cap;
    a.tied = s->g_tie;
    cs = (struct pfs__class_set){s->present, s->n_present, s->n_classes,
                                 s->g_count, s->g_rep,     {s->ccache[0], s->ccache[1]}};
    rc = pfs__policy_classes(s->policy, &v, &cs, &a, &d);
    if (rc == 1 || rc == PFS_EINVAL)
        return 1;
    if (rc)
        return pfs__diag_set(s->diag, rc, NULL, 0, 0, NULL, "%s", d.message);
    s->res->policy_decisions++;
    s->res->class_decisions++;
    /* The classes not tied: one answer for all of a class's jobs. */
    for (uint32_t u = 0; u < s->n_present; u++) {
        uint32_t k = s->present[u];
        struct group *g = &s->group[k];
        const struct pfs_alloc_job *rep = &s->aj[s->g_rep[k]];
        struct pfs_alloc_decision dk;

        if (a.tied[k]) {
            s->tie_class[n_tied] = k;
            s->tie_at[n_tied++] = 0;
            g->uniform = false;
            continue;
        }
        if (g->uniform && !(a.cap[k] < g->in_cap) && !(a.cap[k] > g->in_cap)) {
            /* the same cap as its jobs' decision came from: that decision, checked then (a
             * class's decision is its curve's and limits', the same for each of its jobs) */
            total += (double)g->n * g->power_w;
            continue;
        }
        dk = pfs__class_decision(&v, &a, k, s->g_rep[k], NULL);
        if ((rc = pfs__policy_answer_ok(s->policy, rep, &dk, s->diag)))
            return rc;
        g->in_cap = a.cap[k];
        g->power_w = pfs_alloc_power_w(rep, &dk);
        total += (double)g->n * g->power_w;
        if (g->uniform && !(dk.cap_w < g->cap_w) && !(dk.cap_w > g->cap_w) &&
            !(dk.pause_frac < g->pause) && !(dk.pause_frac > g->pause))
            continue; /* as its jobs have it, all but the fresh ones */
        if ((rc = decide_class(s, k, dk.cap_w, dk.pause_frac, pfs_alloc_active_gpus(rep, &dk))))
            return rc;
        g->uniform = true;
        g->cap_w = dk.cap_w;
        g->pause = dk.pause_frac;
    }
    for (size_t q = 0; q < s->n_fresh; q++) {
        size_t j = s->fresh[q], r;
        const struct group *g;

        if (job_state(s, j) != RUNNING)
            continue;
        r = job_rec(s, j)->slot;
        g = &s->group[s->cls[r]];
        if (g->uniform && (rc = decide(s, r, g->cap_w, g->pause, s->aj[r].n_gpus)))
            return rc;
    }
    s->n_fresh = 0;
    /* The tied classes' jobs, merged in order of slot: each takes its share of what is
     * left at the price until nothing is. */
    left = a.left_w;
    for (uint32_t ok_k = UINT32_MAX;;) {
        uint32_t best = UINT32_MAX, r = UINT32_MAX;
        struct pfs_alloc_decision dj;

        for (uint32_t t = 0; t < n_tied; t++) {
            const struct group *g = &s->group[s->tie_class[t]];

            if (s->tie_at[t] < g->n && g->slot[s->tie_at[t]] < r) {
                r = g->slot[s->tie_at[t]];
                best = t;
            }
        }
        if (best == UINT32_MAX)
            break;
        s->tie_at[best]++;
        dj = pfs__class_decision(&v, &a, s->tie_class[best], r, &left);
        /* (checked once per answer and class: most of a tied class's jobs get one of two) */
        if (ok_k != s->tie_class[best] || memcmp(&dj, &ok, sizeof dj) != 0) {
            if ((rc = pfs__policy_answer_ok(s->policy, &s->aj[r], &dj, s->diag)))
                return rc;
            ok_k = s->tie_class[best];
            ok = dj;
        }
        total += pfs_alloc_power_w(&s->aj[r], &dj);
        if ((rc = decide(s, r, dj.cap_w, dj.pause_frac, pfs_alloc_active_gpus(&s->aj[r], &dj))))
            return rc;
    }
    *committed = total;
    if (total > gpu_budget * (1 + 1e-9))
        return pfs__diag_set(s->diag, PFS_ENUMERIC, NULL, 0, 0, NULL,
                             "policy %s committed %.3f W of a %.3f W budget (a bug)",
                             pfs_policy_name(s->policy), total, gpu_budget);
    return 0;
}

/* The policy's decision over the running jobs that are not held (pfs__pause_hold), under
 * gpu_budget, into s->ad by slot, the held ones paused whole at their lowest limit: the
 * policy sees a view of those jobs alone (no kept curves or classes: it makes its own), as
 * if the held ones were not there. Returns what pfs__policy_decide returns. */
static int
hold_decide(struct sim *s, double gpu_budget, double *committed, struct pfs_diag *d)
{
    size_t m = 0, n = s->n_running;
    struct pfs_alloc_view v;
    int rc;

    if (n >= s->h_cap) { /* (every array to the same capacity: each from h_cap, doubling) */
        size_t cap = s->h_cap;
        void *g;

#define HOLD_GROW(a)                                                                               \
    do {                                                                                           \
        cap = s->h_cap;                                                                            \
        if (!(g = pfs__grow(s->a, &cap, n, sizeof *s->a, 64)))                                     \
            return PFS_ENOMEM;                                                                     \
        s->a = g;                                                                                  \
    } while (0)
        HOLD_GROW(h_aj);
        HOLD_GROW(h_at);
        HOLD_GROW(h_ad);
        HOLD_GROW(h_slot);
        if (s->needs_truth) {
            HOLD_GROW(h_hull);
            HOLD_GROW(h_power);
        }
#undef HOLD_GROW
        s->h_cap = cap;
    }
    for (size_t r = 0; r < n; r++) {
        const struct job *jb = job_rec(s, s->running[r]);

        if (jb->held) {
            s->ad[r] = (struct pfs_alloc_decision){.cap_w = s->aj[r].min_w, .pause_frac = 1};
            continue;
        }
        s->h_slot[m] = r;
        s->h_aj[m] = s->aj[r];
        s->h_at[m] = s->at[r];
        if (s->needs_truth) {
            s->h_hull[m] = s->truth.hull[r];
            s->h_power[m] = s->truth.power[r];
        }
        m++;
    }
    *committed = 0;
    if (m == 0)
        return 0;
    s->h_truth = (struct pfs_truth){m, s->h_hull, s->h_power, NULL, NULL, 0};
    v = (struct pfs_alloc_view){
        gpu_budget,   m,    s->h_aj, s->h_at, s->needs_truth ? &s->h_truth : NULL, NULL,
        {NULL, NULL}, NULL, NULL,    0};
    if (s->nd) { /* under the tree: each job's node, as tree_decide gives it */
        for (size_t k = 0; k < m; k++)
            s->nd->h_node[k] = s->nd->node_of[s->h_slot[k]];
        rc = pfs__policy_allocate_tree(s->policy, &v,
                                       &(struct pfs_alloc_tree){s->nd->n, s->nd->parent, s->nd->lim,
                                                                s->nd->h_node, s->nd->name},
                                       s->h_ad, d);
        for (size_t k = 0; rc == 0 && k < m; k++)
            *committed += pfs_alloc_power_w(&s->h_aj[k], &s->h_ad[k]);
    } else
        rc = pfs__policy_decide(s->policy, &v, s->h_ad, committed, d);
    if (rc)
        return rc;
    for (size_t k = 0; k < m; k++)
        s->ad[s->h_slot[k]] = s->h_ad[k];
    return 0;
}

/* The policy's decision under the power tree (sim/nodes.c), into s->ad by slot: each node's
 * GPU budget its limit less what does not move under it (its nodes' other draw, its free
 * GPUs idle, its held jobs' GPUs idle), the root's the facility's (gpu_budget); every
 * running job under its rack, or under the node above its whole racks with its top cap what
 * those racks allow. The held jobs are left out as hold_decide leaves them. Sets *committed;
 * returns what pfs__policy_allocate_tree returns. */
static int
tree_decide(struct sim *s, double gpu_budget, double *committed, struct pfs_diag *d)
{
    struct nodes *nd = s->nd;
    struct pfs_alloc_view v;
    int rc;

    if (!isfinite(gpu_budget)) { /* (no facility limit: the root's budget every top cap) */
        gpu_budget = 0;
        for (size_t r = 0; r < s->n_running; r++)
            gpu_budget += s->aj[r].max_w * s->aj[r].n_gpus;
    }
    pfs__nodes_budgets(s, gpu_budget);
    for (size_t r = 0; r < s->n_running; r++) {
        const struct nplace *pl = &nd->slot[r];
        const struct job *jb;

        if (pl->box_w < s->aj[r].max_w)
            s->aj[r].max_w = pl->box_w > s->aj[r].min_w ? pl->box_w : s->aj[r].min_w;
        if (s->n_held == 0 || !(jb = job_rec(s, s->running[r]))->held)
            continue;
        for (uint32_t q = 0; q < pl->n_racks; q++) /* (the root's: in gpu_budget) */
            for (int32_t u = (int32_t)pl->racks[q]; u > 0; u = nd->parent[u])
                nd->lim[u] -= pl->mine[q] * s->aj[r].idle_w;
    }
    if (s->n_held > 0)
        return hold_decide(s, gpu_budget, committed, d);
    v = alloc_view(s, gpu_budget);
    rc = pfs__policy_allocate_tree(
        s->policy, &v, &(struct pfs_alloc_tree){nd->n, nd->parent, nd->lim, nd->node_of, nd->name},
        s->ad, d);
    *committed = 0;
    for (size_t r = 0; rc == 0 && r < s->n_running; r++)
        *committed += pfs_alloc_power_w(&s->aj[r], &s->ad[r]);
    return rc;
}

/* The policy's pause_rank of every running job, per slot (pfs__pause_hold asks for it only
 * when it pauses or resumes): NULL where the policy gives none or without memory (the
 * engine's order then). */
static const double *
hold_rank(struct sim *s)
{
    struct pfs_alloc_view v;
    double *g;

    if (!s->policy->pause_rank)
        return NULL;
    if (!(g = realloc(s->h_rank, (s->n_running + 1) * sizeof *g)))
        return NULL;
    s->h_rank = g;
    for (size_t r = 0; r < s->n_running; r++)
        g[r] = NAN;
    views_fill(s);
    v = alloc_view(s, 0);
    s->policy->pause_rank(&v, g);
    return g;
}

/* A control step: the scheduler's pass, then a decision where a limit binds. after_event: the
 * step after an arrival or a finish, which under a tree with limits below its root only
 * schedules (the controller decides at its cadence: docs/scenarios.md). */
int
pfs__control_step(struct sim *s, bool after_event)
{
    double t = (double)s->now_us / US, period, fac, gpu_budget, until = HUGE_VAL, ev_len, committed;
    bool reuse, stepped, by_class, all_loss, nodes;
    size_t from;
    int rc;

    s->admit_us = -1; /* (admission's limit worked out anew: sim/schedule.c, power_admits) */
    if ((rc = pfs__sched_pass(s)))
        return rc;
    /* Under a tree the controller decides at its cadence: a start or a finish between two
     * decisions changes no cap (a job starts where it fits at full draw, or waits for the
     * next decision: sim/schedule.c, start_in_racks). */
    if (s->n_running == 0 || (s->nd && s->nd->limited && after_event))
        return 0;
    period = pfs__dr_in_event(s, t) ? s->sc->event_cadence_s : s->sc->cadence_s;
    /* An event's baseline is the facility's power when the event first enters the window
     * this decision plans for (at its start at the latest): before any cap it causes. */
    for (size_t q = s->dr_live; q < s->sc->n_dr; q++) {
        size_t k = s->dr_by_start[q];
        const struct pfs_dr_event *e = &s->sc->dr[k];

        if (!(e->start_s < t + fmin(period, 3600) + s->sc->actuation_s))
            break; /* it and every later one start after the window */
        if (!(s->dr_baseline_w[k] > 0) && t >= e->start_s - e->notice_s && t < pfs_dr_over_s(e))
            s->dr_baseline_w[k] = pfs__dr_baseline(s, k, t);
    }
    fac = pfs__dr_budget_ahead(s, t, fmin(period, 3600), s->sc->actuation_s);
    s->admit_us = -1; /* (and again: the baselines may have moved) */
    /* Holding a limit where capping cannot (the running jobs' floor above it): a pause takes
     * effect after its checkpoint too, so the decision plans for the limit that far ahead
     * (pfs__pause_hold pauses for it); where capping can, as without checkpoints. */
    if (!s->sc->over_limit_report && s->sc->checkpoint_s > 0) {
        double ahead = pfs__dr_budget_ahead(s, t, fmin(period, 3600),
                                            s->sc->actuation_s + s->sc->checkpoint_s);

        if (ahead < fac &&
            s->sc->pue * (s->floor_gpu_w + pfs__power_free_idle_w(s) + s->in->other_w) > ahead)
            fac = ahead;
    }
    s->round++;
    /* A limit the facility meets with every running job at full power does not bind: as
     * without one, no policy is asked (a policy must not change a job's power when nothing
     * needs saving, and asking it costs work at every step). */
    if (isfinite(fac) &&
        s->sc->pue * (s->full_gpu_w + pfs__power_free_idle_w(s) + s->in->other_w) <= fac)
        fac = HUGE_VAL;
    nodes = s->nd && pfs__nodes_bind(s); /* (a node below the root binds) */
    from = batch_open(s);
    if (!isfinite(fac) && !nodes) {
        /* No binding limit: full power, no policy asked; only jobs not there yet change. */
        bool any = false;

        s->track_k = 1;
        s->planned_w[0] = NAN;
        pfs__pause_hold_off(s); /* (the loop below resumes them) */
        s->planned_round = s->round;
        s->memo_ok = false; /* the caps in effect are no longer the last decision's */
        if (s->views_any) { /* no policy until a limit binds again: stop moving views */
            memset(s->view_ok, 0, s->n_running * sizeof *s->view_ok);
            s->no_pred[0] = s->no_pred[1] = 0;
            s->views_any = false;
            pfs__class_groups_off(s);
        }
        if (s->n_reduced == 0)
            return 0;
        for (size_t r = 0; r < s->n_running; r++) {
            struct job *jb = job_rec(s, s->running[r]);
            const struct pfs_gpu *g = pfs__power_job_gpu(s, s->running[r]);

            if (jb->cap_w >= g->max_limit_w && !(jb->pause > 0) &&
                jb->active == s->in->wl->jobs[s->running[r]].n_gpus)
                continue;
            if ((rc = decide(s, r, g->max_limit_w, 0, s->in->wl->jobs[s->running[r]].n_gpus)))
                return rc;
            any = true;
        }
        if (!any)
            return 0;
    } else {
        struct pfs_alloc_view v;
        struct pfs_diag d = {0};
        double held_w = 0;

        /* Holding the limit: where capping alone cannot, jobs held paused */
        if (!s->sc->over_limit_report && (rc = pfs__pause_hold(s, fac, hold_rank, &held_w)))
            return pfs__diag_set(s->diag, rc, NULL, 0, 0, NULL, "out of memory");
        gpu_budget = fac / s->sc->pue - s->in->other_w - pfs__power_free_idle_w(s);
        until = pfs__dr_limit_lifts(s, t);
        /* Tracking metered power: GPUs draw below their caps, so a budget of caps alone
         * over-complies. An integral controller scales the caps' budget by k: from 1 when a
         * limit starts to bind, then by the ratio of the limit the caps in effect were set
         * for to the power metered now (at most 10% a step, k in [0.75, 1.25]). Comparing
         * with the limit *now* instead winds up: planning ahead has already cut to a lower
         * target, the meter reads below the current limit, and k sends the jobs back up. So
         * k moves only when the caps in effect are the latest decision's (none pending) and
         * that decision was made under a binding limit; below 1 it corrects a policy that
         * leaves power above its budget (floors, checkpoints, starts between decisions). */
        if (s->sc->track_power) {
            double metered = pfs__power_facility_w(s), set_for = s->planned_w[1];

            if (!isfinite(s->planned_w[0]))
                s->track_k = 1; /* the limit starts to bind now */
            else if (s->applied_round != s->k_round && isfinite(set_for) && metered > 0 &&
                     (set_for < metered || s->planned_tight[1]))
                s->track_k =
                    fmin(1.25, fmax(0.75, s->track_k * fmin(1.1, fmax(0.9, set_for / metered))));
            s->k_round = s->applied_round; /* once per decision that took effect */
            gpu_budget *= s->track_k;
        }
        gpu_budget -= held_w; /* (the held jobs' GPUs draw idle) */
        s->planned_w[0] = fac;
        s->planned_round = s->round;
        ev_len = pfs__dr_event_length(s, t);
        reuse = !s->reference && !s->nd && s->memo_ok && s->n_held == 0 &&
                pfs_policy_memoryless(s->policy) && s->memo_epoch == s->epoch &&
                !(s->memo_budget < gpu_budget) && !(s->memo_budget > gpu_budget) &&
                !(s->memo_ev_len < ev_len) && !(s->memo_ev_len > ev_len);
        /* What the decision commits (pfs_alloc_power_w over the jobs): the policy's check
         * adds it up; a reused decision's is the one it was made with. */
        committed = s->memo_committed;
        stepped = false;
        by_class = false;
        if (!reuse && s->by_class && s->n_held == 0) {
            rc = decide_by_class(s, gpu_budget, &committed);
            if (rc < 0) {
                s->memo_ok = false;
                return rc;
            }
            by_class = rc == 0;
        }
        if (!by_class) {
            /* (a reused decision needs no view, outside discrete pausing: no job came since
             * it was made, and none is gone through again) */
            if (!reuse || s->sc->discrete_pauses)
                views_fill(s);
            /* A job's tolerance moves only with the event's length: worked out for every job
             * when that moves, else for the jobs whose view is new (NAN). */
            all_loss = s->reference || memcmp(&s->loss_ev_len, &ev_len, sizeof ev_len) != 0;
            s->loss_ev_len = ev_len;
            for (size_t r = 0; !reuse && r < s->n_running; r++) {
                if (all_loss || isnan(s->aj[r].max_loss)) {
                    double loss = pfs_tier_max_loss(s->aj[r].tier);

                    /* A Flex job's tolerance is an average over its whole run: during an
                     * event of length E it may lose up to L x (its run / E), as the Emerald
                     * pseudocode has it. */
                    if (ev_len > 0 && loss > 0) { /* fmin and fmax: calls into libm */
                        double f = s->si[r].dur_s / ev_len;

                        loss *= f > 1 ? f : 1;
                        loss = loss < 0.95 ? loss : 0.95;
                    }
                    s->aj[r].max_loss = loss;
                }
                s->aj[r].remaining_tokens = s->si[r].tokens - s->si[r].done;
                s->aj[r].now_s = t;
                s->aj[r].limit_until_s = until;
            }
            if (!reuse) {
                v = alloc_view(s, gpu_budget);
                s->res->policy_decisions++;
                /* (a family's entries where every job has its curve: policy.h) */
                struct pfs__sla_kept *const kept[2] = {s->no_pred[0] ? NULL : s->sla_kept[0],
                                                       s->no_pred[1] ? NULL : s->sla_kept[1]};

                rc = s->nd            ? tree_decide(s, gpu_budget, &committed, &d)
                     : s->n_held > 0  ? hold_decide(s, gpu_budget, &committed, &d)
                     : s->sla_kept[0] ? pfs__sla_decide_kept(&v, kept, s->ad, &committed, &d)
                                      : pfs__policy_decide(s->policy, &v, s->ad, &committed, &d);
            }
            if (rc == PFS_EINVAL) {
                /* The budget cannot be met with this policy: everyone at the minimum cap
                 * (the held jobs paused); the overrun shows in the limit's compliance. */
                committed = 0;
                for (size_t r = 0; r < s->n_running; r++) {
                    s->ad[r] = (struct pfs_alloc_decision){
                        .cap_w = pfs__power_job_gpu(s, s->running[r])->min_limit_w,
                        .pause_frac = job_rec(s, s->running[r])->held ? 1 : 0};
                    committed += pfs_alloc_power_w(&s->aj[r], &s->ad[r]);
                }
                rc = 0;
            }
            if (rc) {
                s->memo_ok = false;
                return pfs__diag_set(s->diag, rc, NULL, 0, 0, NULL, "%s", d.message);
            }
            /* A reused decision is the one made for these jobs in these slots, which
             * decide() recorded then: each job's would be a no-op now (outside discrete
             * pausing, where an unchanged pause still schedules), so the pass is skipped.
             * Conditional integration (anti-windup): k may grow only while the policy
             * commits the budget it is given. A policy that pauses whole jobs leaves some
             * unused; raising k then would only store up power released all at once later. */
            bool discrete = s->sc->discrete_pauses, quick = !s->reference && !discrete;

            for (size_t r = 0; (!reuse || discrete) && r < s->n_running; r++) {
                const struct pfs_alloc_decision *a = &s->ad[r];

                /* decide()'s test of an unchanged decision, here: most of sla's jobs keep
                 * theirs at every decision of an event: the same bits, else unchanged() */
                if (quick && a->deadline != PFS_DEADLINE_BUDGET &&
                    slot_active(&s->si[r], a) == s->si[r].active &&
                    (same_bits(&s->si[r], a) ||
                     unchanged(&s->si[r], a->cap_w, a->pause_frac, s->si[r].active)))
                    continue;
                /* Discrete pausing carries a fractional pause out with whole jobs, which
                 * save in steps and leave budget unused: such a decision does not commit
                 * its budget. */
                stepped |= discrete && a->pause_frac > 0 && a->pause_frac < 1;
                if (s->ad[r].deadline == PFS_DEADLINE_BUDGET) { /* (its record: a cache miss) */
                    struct job *jb = job_rec(s, s->running[r]);

                    if (!jb->given_up) {
                        jb->given_up = true;
                        s->res->deadlines_given_up++;
                    }
                }
                if ((rc = decide(s, r, s->ad[r].cap_w, s->ad[r].pause_frac,
                                 pfs_alloc_active_gpus(&s->aj[r], &s->ad[r]))))
                    return rc;
            }
            if (!reuse && s->groups_on) { /* decided job by job: no group's answer holds */
                for (uint32_t k = 0; k < s->n_classes; k++)
                    s->group[k].uniform = false;
                s->n_fresh = 0;
            }
        }
        s->memo_ok = s->n_held == 0; /* (a decision with jobs held is not reused) */
        s->memo_epoch = s->epoch;
        s->memo_budget = gpu_budget;
        s->memo_ev_len = ev_len;
        s->memo_committed = committed;
        s->planned_tight[0] = !stepped && committed >= 0.99 * gpu_budget;
    }
    if ((rc = batch_close(s, from)))
        return rc;
    if (s->sc->actuation_s <= 0)
        return pfs__control_actuate(s, s->round);
    return pfs__heap_push(&s->heap, s->now_us + (int64_t)(s->sc->actuation_s * US), PFS__EV_ACTUATE,
                          0, s->round);
}
