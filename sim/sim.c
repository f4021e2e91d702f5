/*
 * sim/sim.c - the discrete-event simulator (DESIGN.md section 5, docs/simulator.md).
 *
 * Time is integer microseconds. Between two events every job's rate and every GPU's draw is
 * constant, so tokens and energy are integrated exactly at each event, never stepped.
 *
 * Events (sim/sim.h): arrivals; finishes (one per running job, moved whenever its rate
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
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../policies/truth.h"
#include "sim.h"

#define US 1000000.0

enum job_state { QUEUED, RUNNING, DONE, REFUSED };

struct corpus_curve {
    struct pfs_pwl env, power; /* envelope (with the paused point) and draw, per GPU cap */
    struct pfs_telemetry tel;  /* what the corpus job shows an operator */
    int n_gpus;                /* the curve's own GPU count */
    int gpu;                   /* the pool whose GPU it was measured on; -1: none */
    /* per pool, at its GPU's top and bottom limits: throughput (env) and draw (power) per
     * GPU, looked up at every start and backfill test instead of evaluated */
    double top_rate[PFS_MAX_POOLS], top_w[PFS_MAX_POOLS], floor_w[PFS_MAX_POOLS];
};

/* The run without DR events when it is the same for every policy (no base cap, or a base
 * cap that never bound in it), made once: behind a pointer, so that runs may fill it in through
 * their const inputs. Under a base cap the first policy to ask makes a candidate (nodr_candidate;
 * running while it does): every policy's where the cap never bound, else that policy's
 * alone (mine). */
struct nodr {
    pthread_mutex_t lock;
    pthread_cond_t made; /* a candidate is done */
    bool done, running, mine_done;
    double tokens, energy_j, deadline_misses;
    char mine_policy[128];
    double mine_tokens, mine_energy_j, mine_misses;
};

/* A job's arrival: the inputs' arrival order is the order of the arrival events, by time
 * and then job index (the event heap's order for events pushed in job order). */
struct arrival_key {
    int64_t t_us;
    uint32_t job;
};

static int
cmp_arrival_key(const void *a, const void *b)
{
    const struct arrival_key *x = a, *y = b;

    if (x->t_us != y->t_us)
        return x->t_us < y->t_us ? -1 : 1;
    return (x->job > y->job) - (x->job < y->job);
}

/* Deadline order, for control.queue = "deadline": by deadline, ties in arrival order (the
 * arrival key's time then being the job's place in arrival order). */
struct order_key {
    double deadline;
    struct arrival_key a;
};

struct pfs_sim_inputs {
    struct arrival_key *arrival; /* the jobs in order of arrival, for every run (sorted once);
                                  * NULL: job order is arrival order (arrival_at) */
    size_t n_pools;
    struct pfs_pool pools[PFS_MAX_POOLS];
    struct pfs_gpu gpu[PFS_MAX_POOLS]; /* each pool's GPU profile */
    int nodes[PFS_MAX_POOLS];          /* each pool's nodes */
    double other_w;                    /* every node's non-GPU draw, W */
    struct pfs_curveset *cs;
    struct pfs_jobset *js;
    struct pfs_predictor *pred;
    struct pfs_workload *wl;
    size_t n_after; /* the workload's jobs submitted after the run's end: left out of it */
    size_t n_curves;
    struct corpus_curve *curves;
    uint32_t *job_curve; /* workload job -> its curve (n_curves < UINT32_MAX) */
    int *job_pool;       /* workload job -> the pool it names, -1: the scheduler's choice */
    uint32_t *job_on;    /* n_jobs x n_pools: curve_on() for job j on pool p, UINT32_MAX for
                          * SIZE_MAX (one read where there were three, at every start and
                          * backfill test) */
    size_t *curve_on;    /* n_curves x n_pools: the curve a job of curve k runs on pool p (k
                          * itself on its own GPU, its measured twin on another), SIZE_MAX: it
                          * cannot run there */
    struct nodr *nodr;   /* the run without DR events, when the same for every policy */
    /* The indexed queue's index (sim/queue.c) in arrival [0] and deadline [1] order: made by
     * the first run that asks for it, shared by the rest (it depends on the inputs alone) */
    struct qindex {
        pthread_mutex_t lock;
        bool made[2];
        int rc[2];
        struct pfs__queue_index *x[2]; /* NULL (rc 0): the order cannot be indexed */
        /* a block of pre_bytes for the index of the scenario's queue order, faulted in on
         * pre_th while the inputs are finished (pfs_sim_inputs_new) */
        void *pre;
        size_t pre_bytes;
        pthread_t pre_th;
        bool pre_on;
    } * qx;
    /* facility.variability (issue 19): each curve's DVFS parameters fitted on its own GPU,
     * and each pool's GPUs' efficiencies; NULL when the GPUs are identical */
    struct pfs_dvfs_job *fit;
    struct pfs_gpu *fit_gpu; /* [n_curves] the profile each was fitted on */
    double *eta[PFS_MAX_POOLS];
};

/* Job j's arrival time, us (its submit time, as the event heap keeps it). */
static inline int64_t
arrival_us(const struct pfs_sim_inputs *in, size_t j)
{
    return (int64_t)(in->wl->jobs[j].submit_s * US);
}

/* The r-th arrival: in->arrival's, or job r's where the workload is in arrival order. */
static inline struct arrival_key
arrival_at(const struct pfs_sim_inputs *in, size_t r)
{
    return in->arrival ? in->arrival[r] : (struct arrival_key){arrival_us(in, r), (uint32_t)r};
}

struct job {
    enum job_state state;
    double done, rate, gpu_w; /* tokens done, tokens/s now, its draw now (all its GPUs) */
    double cap_w, pause;      /* the decision in effect */
    double pend_cap, pend_pause;
    uint32_t pend_round; /* the control round of the pending decision, 0: none */
    int64_t last_us, start_us, finish_us, resume_until_us, ckpt_until_us;
    double ckpt_gpu_w; /* the job's draw while it checkpoints (its draw before the pause) */
    size_t slot;       /* index in the running list */
    bool reduced;      /* below full power or paused */
    int pool;          /* where it runs (set at its start) */
    size_t curve;      /* the curve it runs there */
    double dur_s;      /* its uncapped run time there, s */
    bool given_up;     /* the policy gave up its deadline (PFS_DEADLINE_BUDGET) at some decision */
    uint32_t own;      /* facility.variability: its curve on its own GPUs, sim.own[own - 1]; 0: the
                        * corpus curve (here, in the hole before the int64s: no larger a job) */
    /* Discrete pausing: while paused, when its allowance runs out (0: not paused); while
     * not, the allowance it has left, us; the lift of the limit that allowance is for. */
    int64_t dpause_left_us, dpause_until_us;
    double dpause_lift_s;
    int active, pend_active; /* GPUs it runs on (fewer than its own when resized), and pending */
    int n_gpus;              /* its own (the workload's, kept here: set_rate reads no workload) */
    uint32_t start_round;    /* the control round it started in (before that round's decision) */
    uint32_t cls;            /* its class, set while the groups are on (decide_by_class) */
    /* Its key in the finish order (finish_key when its rate last changed), and its place + 1
     * in the list of those not yet put in the order (0: in it as it is). */
    double ord_key;
    uint32_t ord_late;
    double ord_in; /* its key in the order now (NaN: not in it) */
};

/* facility.variability: a running job's curve on the GPUs it holds (in the order taken). */
struct own_curve {
    struct corpus_curve cc;
    uint32_t *gpu;
};

/* A pool's free GPUs in the order they came free: a job takes from the head, one that
 * finishes gives its GPUs back at the tail. */
struct gpu_ring {
    uint32_t *id;
    size_t head, n, cap;
};

/* A decision in flight: what it set for one job, and the decisions themselves, in the order
 * they were made (the order their caps take effect: the actuation delay is one constant). */
struct decided {
    uint32_t job; /* or DQ_CLASS | k: every job of class k running when it was decided */
    int active;
    double cap, pause;
};
enum { DQ_CLASS = 0x80000000u };

struct batch {
    uint32_t round;
    size_t from, n;   /* its entries in sim.dq */
    size_t changes;   /* the jobs they change (a class entry's, each) */
    double planned_w; /* the facility limit it planned for (NAN: none binding) */
    bool tight;       /* whether it committed its whole caps' budget */
};

/* The progress hook (pfs_sim_set_progress): told every simulated hour of every run. */
static void (*progress_fn)(void *arg, double sim_s, size_t events);
static void *progress_arg;

struct sim {
    unsigned progress_minutes; /* minutes since progress_fn was last told */
    size_t progress_events;    /* out->events when it was */
    const struct pfs_scenario *sc;
    const struct pfs_sim_inputs *in;
    const struct pfs_policy_ops *policy;
    struct pfs__heap heap;
    struct pfs__fheap fh; /* the running jobs' finish events, one each */
    /* Job state is kept per live job, not per job of the workload (a year on 100,000 GPUs
     * is 20 M jobs, a few thousand running at once): live[live_of[j] - 1] is running job j's
     * record, kept at its slot (live_of[j] - 1 == its slot), so that a pass over the slots
     * (a decision's changes, in slot order) reads the records in memory order; when a job
     * finishes, the last slot's record moves into its place as the job does. live_of[j] is
     * 0 before it starts, JOB_DONE after, JOB_REFUSED when admission refused it. */
    struct job *live;
    uint32_t *live_of;
    size_t n_jobs;
    /* the finished jobs' throughput loss (summarise), recorded as each finishes: those
     * above zero kept, the zeros (most jobs, outside events) counted */
    double *loss;
    size_t n_loss, loss_cap, n_loss_zero;
    struct pfs_job_results *jobs; /* the caller's, or NULL */
    size_t *queue, q_head, q_len; /* queued job indices, FIFO (the scanning scheduler) */
    struct pfs__queue *iq;        /* the indexed queue, or NULL: scan (indexed_queue) */
    struct pfs__order *ord;       /* running jobs in order of estimated finish, per pool */
    /* The jobs whose key in the finish order changed since the order was last asked
     * (order_flush): the order is only read to reserve GPUs for a queue's head, which a
     * facility that seldom queues never does, while every change of rate moved a job in it
     * (20% of a 100,000-GPU run, for no reservation at all). */
    uint32_t *ord_late;
    size_t n_ord_late, ord_late_cap;
    size_t n_arrived;
    uint64_t minute_seq; /* the first minute event's sequence number (the minute stream) */
    bool reference;      /* the straightforward engine (scan_backfill): the queue scanned,
                          * the running jobs sorted, the policy asked at every decision and
                          * left to predict its curves itself */
    /* A memoryless policy's last decision (pfs_policy_memoryless), reused while the running
     * jobs (epoch: every start and finish), the GPU budget and the event length it was made
     * for stay the same: the policy would decide the same again. */
    uint64_t epoch, memo_epoch;
    double memo_budget, memo_ev_len, memo_committed;
    bool memo_ok;
    size_t *running, n_running;
    int free_gpus[PFS_MAX_POOLS];
    int64_t now_us, end_us;
    uint32_t round;
    double track_k;      /* the cap budget's scale that makes metered power meet the limit */
    double planned_w[2]; /* facility limit the latest decision planned for, and the one whose
                          * caps are in effect now (NAN: none, or no binding limit) */
    uint32_t planned_round, applied_round; /* their control rounds */
    uint32_t k_round; /* the applied round the tracking controller last moved k on */
    /* The decisions in flight (made, not yet in effect), oldest first: every decision takes
     * effect actuation_s after it was made, however soon the next one follows. */
    struct decided *dq;
    size_t dq_head, dq_len, dq_cap;
    struct batch *bq;
    size_t bq_head, bq_len, bq_cap;
    struct landing {
        size_t slot, q;
    } * land; /* actuate's scratch: a decision's entries by the slots of their jobs now */
    size_t land_cap;
    uint32_t *land_at;        /* actuate's: per slot, its landing's index + 1 (0: none) */
    struct decided *land_dec; /* actuate's: per slot, its landing's decision (land_at) */
    struct dcand *dc;         /* discrete_select's scratch: the jobs it may pause */
    size_t dc_cap;
    bool planned_tight[2]; /* whether those decisions committed their whole caps' budget */
    size_t n_reduced;      /* running jobs below full power or paused: what "no limit" must undo */
    /* facility.variability (in->fit): the pools' free GPUs, the running jobs' own curves
     * (own_free: the unused entries of own), and scratch for building one */
    struct gpu_ring ring[PFS_MAX_POOLS];
    struct own_curve *own;
    uint32_t *own_free;
    size_t n_own_free;
    double *eta_buf, *pt_buf;
    bool shift;                     /* the policy's "+sync-shift": power shifted within each job */
    bool needs_truth;               /* the policy is the oracle */
    double total_rate, gpu_w_total; /* sums over running jobs */
    double pool_rate[PFS_MAX_POOLS], pool_gpu_w[PFS_MAX_POOLS]; /* the same per pool */
    double full_gpu_w; /* what the running jobs' GPUs draw at full power (the metered draw of
                        * each at its top cap): a limit above the facility's draw with it
                        * does not bind, and no policy is asked */
    double dr_baseline_w[PFS_MAX_DR];
    /* The events in order of start (ties: index), and the first of them that may still
     * matter: those before it were over an hour before now. Every look at the limits starts
     * there and stops at the first event that starts too late to count, where it went over
     * all 50 events of a year at every arrival (half the control step's own time in a
     * Poisson year on 10,000 GPUs). */
    size_t *dr_by_start, dr_live;
    double floor_gpu_w; /* what the running jobs' GPUs draw at their minimum caps */
    /* the planner's summary */
    struct fin *fin;  /* reserve()'s scratch (the reference scheduler): every running job */
    double *minute_w; /* every minute's mean facility power */
    size_t n_minutes;
    double *ev_over_min;   /* per event: minutes over target */
    double *ev_floor_over; /* per event: the most the capping floor exceeded the target, W */
    /* accumulators */
    double tokens, energy_j;
    double m_energy, m_gpu_energy, m_tokens; /* this minute */
    int64_t m_start_us;
    /* allocation scratch */
    /* The policy's view, per running job in running order (slot): built when the job starts
     * (view_fill), moved with it (view_move), only its time-varying fields set per decision */
    struct pfs_alloc_job *aj;
    /* Views are built when a policy is first asked about the job (control's binding branch),
     * not at every start: the view is some 4 kB, and a year on 10,000 GPUs started and moved
     * 900,000 of them that no policy read (no limit binding, or the run without events). */
    bool *view_ok;
    /* What every decision reads of each running job, per slot (moved with it, always): its
     * run time, its tokens and those done at its last progress update, so that a decision
     * over 20,000 jobs reads three sequential arrays, not two structs per job scattered over
     * millions (a cache miss each: a third of a run on 100,000 GPUs). */
    struct slot_info {
        double dur_s, tokens, done;
        double cap, pause; /* the latest decision for it (at its start: how it started) */
        int active;
        int n_gpus; /* its own (its view's): a decision's active GPUs read here, not there */
    } * si;
    bool views_any;          /* some view_ok is set */
    struct pfs_pwl *pred[2]; /* its predicted curve, within the predictions / extrapolated */
    /* sla's entries per job (its floor and its curve's part from it, per family of curves),
     * moved with the view and cleared when it is built: NULL for every other policy, and
     * for the reference, which asks sla's allocate itself */
    struct pfs__sla_kept *sla_kept[2];
    size_t no_pred[2];  /* running slots with a built view and no pred[e] curve (n 0) */
    double loss_ev_len; /* the event length the views' max_loss were worked out for */
    struct pfs_telemetry *at;
    struct pfs_alloc_decision *ad;
    struct pfs_truth truth;
    /* The jobs' classes (the view's classes, the truth's cls): jobs that run the same curve
     * on the same number of GPUs have the same envelope and predicted curves, bit for bit.
     * Per slot, NULL without memory; the map's keys are curve << 32 | GPUs, plus 1. */
    uint32_t *cls, n_classes;
    uint64_t *cls_key;
    uint32_t *cls_id;
    size_t cls_cap;
    /* Decisions by class (decide_by_class): a policy that answers by class (pfi, the
     * oracle) is asked for a cap per class, and only the classes whose answer moved are
     * gone through, job by job. While a limit binds (groups_on) every running job is in its
     * class's group, by slot; a group's cap_w and pause are what the last decision by class
     * gave all of its jobs where uniform; fresh holds the jobs started since it. */
    bool by_class, groups_on;
    struct group {
        uint32_t *slot; /* its running jobs' slots, ascending */
        uint32_t n, cap;
        double cap_w, pause;
        double in_cap, power_w; /* where uniform: the policy's cap it came from, and a job's draw */
        bool uniform;
    } * group;
    uint32_t n_groups;
    uint32_t *fresh;
    size_t n_fresh, fresh_cap;
    uint32_t *g_count, *g_rep, *tie_class, *tie_at; /* per class: the policy's input, the merge's */
    uint32_t *c_entry; /* per class: actuate's, its entry in the decision landing + 1 (0: none) */
    /* per class, while its entry lands (land_class): its jobs' rate and per-GPU draw there
     * (rate NAN: not yet worked out), and on the GPU of the last one met, their draw and
     * whether they are reduced */
    struct class_land {
        double rate, power, gw;
        const struct pfs_gpu *gpu;
        bool reduced;
    } * c_land;
    /* The open decision's class entries (decide_class), in order: how many slots each
     * changed, those slots one class after another in cx_slot, for batch_close to make them
     * job entries again where they change few jobs (class_entries_few). */
    size_t *cx_n, n_cx, cx_cap;
    uint32_t *cx_slot;
    size_t n_cx_slot, cx_slot_cap;
    bool cx_many;           /* they change too many jobs to be made job entries: not kept */
    struct decided *cx_out; /* class_entries_few's scratch */
    size_t cx_out_cap;
    uint32_t *present, n_present; /* the classes with running jobs, ascending: the classes of
                                   * a year are thousands, those running at once a few hundred */
    double *g_cap;
    bool *g_tie;
    struct pfs__class_cache *ccache[2]; /* the classes' segments, per family of curves */
    struct curve_memo {
        double cap, env, power;
        uint32_t k_env, k_power; /* the segments they were on */
    } * memo; /* curve_at's: per corpus curve, the last cap asked and its values (NULL: none) */
    struct pfs_run_result *res;
    struct pfs_timeseries *ts;
    struct pfs_diag *diag;
};

enum { JOB_REFUSED = UINT32_MAX - 1, JOB_DONE = UINT32_MAX };

/* Running job j's record (s->live); job_state() says whether it has one. (No assert
 * here: it is on every path of the event loop, and cost 4% of a run on 100,000 GPUs.) */
static inline struct job *
job_rec(const struct sim *s, size_t j)
{
    return &s->live[s->live_of[j] - 1];
}

static inline enum job_state
job_state(const struct sim *s, size_t j)
{
    uint32_t l = s->live_of[j];

    return l == 0 ? QUEUED : l == JOB_DONE ? DONE : l == JOB_REFUSED ? REFUSED : RUNNING;
}

/* ----- inputs ----- */

static int
tabulate(struct corpus_curve *cc, const struct pfs_job_curve *jc, const struct pfs_gpu *g,
         struct pfs_diag *diag)
{
    struct pfs_curve *c = NULL;
    struct pfs_alloc_job aj = {.min_w = g->min_limit_w,
                               .max_w = g->max_limit_w,
                               .idle_w = g->idle_w,
                               .n_gpus = jc->n_gpus};
    const struct pfs_curve *one[1];
    struct pfs_truth *t = NULL;
    int rc;

    pfs__strlcpy(aj.job_id, jc->job_id, sizeof aj.job_id);
    if ((rc =
             pfs_curve_sampled_new(jc->cap_w, jc->throughput, jc->power_w, jc->n_points, &c, diag)))
        return rc;
    one[0] = c;
    rc = pfs_truth_new(one, &aj, 1, &t, diag);
    if (rc == 0) {
        cc->env = t->hull[0];
        cc->power = t->power[0];
    }
    pfs_truth_free(t);
    pfs_curve_free(c);
    cc->n_gpus = jc->n_gpus;
    return rc;
}

/* Whether corpus jobs a and b are twins (one's twin_id names the other). */
static bool
twins(const struct pfs_jobset *js, const char *a, const char *b)
{
    const struct pfs_corpus_job *x = js ? pfs_jobset_find(js, a) : NULL;
    const struct pfs_corpus_job *y = js ? pfs_jobset_find(js, b) : NULL;

    return (x && strcmp(x->twin_id, b) == 0) || (y && strcmp(y->twin_id, a) == 0);
}

/* The facility: its pools, their profiles and nodes; a limit below its idle draw stops the
 * scenario before anything is simulated. */
static int
facility_new(struct pfs_sim_inputs *in, const struct pfs_scenario *sc, struct pfs_diag *diag)
{
    double idle_fac_w = 0;
    int rc;

    in->n_pools = pfs_scenario_pools(sc, in->pools);
    for (size_t p = 0; p < in->n_pools; p++) {
        const struct pfs_pool *pl = &in->pools[p];

        if ((rc = pfs_scenario_gpu(sc, pl->gpu, &in->gpu[p], diag)))
            return rc;
        in->nodes[p] = (pl->gpus + pl->gpus_per_node - 1) / pl->gpus_per_node;
        in->other_w += in->nodes[p] * pl->node_other_w;
        idle_fac_w += in->nodes[p] * pl->node_other_w + pl->gpus * in->gpu[p].idle_w;
    }
    idle_fac_w *= sc->pue;
    if (sc->base_cap_w > 0 && sc->base_cap_w < idle_fac_w)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "facility.cap_w",
                             "scenario.facility.cap_w: %.0f W is below the facility's idle draw "
                             "of %.0f W",
                             sc->base_cap_w, idle_fac_w);
    for (size_t k = 0; k < sc->n_dr; k++)
        if (sc->dr[k].target_w > 0 && sc->dr[k].target_w < idle_fac_w)
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "dr_events",
                                 "scenario.dr_events.[%zu]: the target of %.0f W is below the "
                                 "facility's idle draw of %.0f W",
                                 k, sc->dr[k].target_w, idle_fac_w);
    return 0;
}

/* What an operator knows of curve i: the corpus job's telemetry (and the PFI the predictor
 * gives for it), or, without a jobs.csv row, the top of the curve and its sweep's PFI. */
static int
observe_curve(struct pfs_sim_inputs *in, size_t i, const struct pfs_gpu *g, struct pfs_diag *diag)
{
    const struct pfs_job_curve *jc = &in->cs->jobs[i];
    const struct pfs_corpus_job *cj = in->js ? pfs_jobset_find(in->js, jc->job_id) : NULL;
    struct pfs_telemetry *t = &in->curves[i].tel;
    struct pfs_curve *c = NULL;
    int rc;

    if (cj) {
        pfs_telemetry_of(cj, t);
        /* A job's telemetry does not change while it runs, so neither does its predicted
         * PFI: predict once per curve here, not at every control step, and hand the
         * policies the result as the PFI known for the job. */
        if (in->pred) {
            double pfi[PFS_N_CUTS];
            struct pfs_diag quiet = {0};

            if (pfs_predictor_pfi(in->pred, t, pfi, &quiet) == 0)
                memcpy(t->pfi_given, pfi, sizeof pfi);
        }
        return 0;
    }
    memset(t, 0, sizeof *t);
    pfs__strlcpy(t->job_id, jc->job_id, sizeof t->job_id);
    pfs__strlcpy(t->gpu, jc->gpu, sizeof t->gpu);
    t->n_gpus = jc->n_gpus;
    t->power_w = jc->power_w[jc->n_points - 1];
    t->power_frac = t->power_w / g->default_limit_w;
    t->tokens_per_s = jc->throughput[jc->n_points - 1];
    t->sm_clock_mhz = t->sm_active = t->tensor_active = t->dram_active = NAN;
    t->nvlink_gbps = t->net_gbps = NAN;
    if ((rc =
             pfs_curve_sampled_new(jc->cap_w, jc->throughput, jc->power_w, jc->n_points, &c, diag)))
        return rc;
    for (size_t k = 0; k < PFS_N_CUTS; k++)
        if (pfs_pfi(c, g->default_limit_w, pfs_cut(k), &t->pfi_given[k]))
            t->pfi_given[k] = NAN;
    pfs_curve_free(c);
    return 0;
}

/* Every workload job gets its curve and at least one pool it can run on: one of the curve's
 * GPU, or of a GPU its measured twin ran on, with enough GPUs for it. */
static int
place_jobs(struct pfs_sim_inputs *in, struct pfs_diag *diag)
{
    for (size_t j = 0; j < in->wl->n_jobs; j++) {
        const struct pfs_workload_job *w = &in->wl->jobs[j];
        const struct pfs_job_curve *jc = pfs_curveset_find(in->cs, w->curve_id);
        size_t i = jc ? (size_t)(jc - in->cs->jobs) : in->n_curves, p, own = SIZE_MAX;
        int biggest = 0;

        if (i >= in->n_curves) /* by the curves' index: a search per job cost 2% of a run */
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "curve_id",
                                 "workload job '%s' runs curve '%s', which the corpus lacks",
                                 w->job_id, w->curve_id);
        in->job_curve[j] = (uint32_t)i;
        in->job_pool[j] = -1;
        if (w->pool && w->pool[0]) {
            char names[PFS_MAX_POOLS * 34] = "";

            for (p = 0; p < in->n_pools && strcmp(in->pools[p].name, w->pool) != 0; p++)
                ;
            for (size_t q = 0, used = 0; q < in->n_pools; q++)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", q ? ", " : "",
                                         in->pools[q].name);
            if (p == in->n_pools)
                return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "pool",
                                     "workload job '%s' names pool '%s', which the facility "
                                     "lacks (its pools: %s)",
                                     w->job_id, w->pool, names);
            if (in->curve_on[i * in->n_pools + p] == SIZE_MAX)
                return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "pool",
                                     "workload job '%s' names pool '%s' (%s), where its curve "
                                     "'%s', measured on %s, has no measured twin",
                                     w->job_id, w->pool, in->pools[p].gpu, w->curve_id,
                                     in->cs->jobs[i].gpu);
            in->job_pool[j] = (int)p;
        }
        for (p = 0; p < in->n_pools; p++) {
            if (in->curve_on[i * in->n_pools + p] == SIZE_MAX ||
                (in->job_pool[j] >= 0 && (size_t)in->job_pool[j] != p))
                continue;
            if (in->pools[p].gpus > biggest)
                biggest = in->pools[p].gpus;
            if (in->curve_on[i * in->n_pools + p] == i && own == SIZE_MAX)
                own = p;
        }
        if (biggest == 0) {
            char types[PFS_MAX_POOLS * 34] = "";

            for (size_t q = 0, used = 0; q < in->n_pools; q++)
                used += (size_t)snprintf(types + used, sizeof types - used, "%s%s", q ? ", " : "",
                                         in->pools[q].gpu);
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "curve_id",
                                 "workload job '%s' runs curve '%s', measured on %s, and the "
                                 "facility has only %s with no measured twin of it there: "
                                 "add a pool of %s, or give the job a curve of the facility's GPUs",
                                 w->job_id, w->curve_id, in->cs->jobs[i].gpu, types,
                                 in->cs->jobs[i].gpu);
        }
        if (w->n_gpus > biggest)
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "n_gpus",
                                 "workload job '%s' needs %d GPUs; the facility has %d%s",
                                 w->job_id, w->n_gpus, biggest,
                                 in->n_pools > 1 ? " in the largest pool it can run on" : "");
        /* A job's uncapped run time, here, is its tokens at its curve's full-power rate: the
         * rate the simulation gives it (the workload's own duration came from the corpus's
         * telemetry, a separate measurement one percent off). On a pool of another GPU it
         * runs its twin's curve and takes that curve's time (struct job's dur_s). */
        {
            size_t c = own != SIZE_MAX ? i : in->curve_on[i * in->n_pools + 0];
            int gp = own != SIZE_MAX ? (int)own : 0;

            for (p = 0; own == SIZE_MAX && p < in->n_pools; p++)
                if (in->curve_on[i * in->n_pools + p] != SIZE_MAX &&
                    (in->job_pool[j] < 0 || (size_t)in->job_pool[j] == p)) {
                    c = in->curve_on[i * in->n_pools + p];
                    gp = (int)p;
                    break;
                }
            in->wl->jobs[j].duration_s =
                w->tokens / (in->curves[c].top_rate[gp] * w->n_gpus / in->curves[c].n_gpus);
        }
    }
    return 0;
}

/* facility.variability: the curves' DVFS parameters (a job's GPUs then give it a curve of
 * its own at its start, sync_curve) and the efficiency of every GPU of every pool, drawn
 * from a stream per pool (the facility's seed and the pool's index). */
static int
variability_new(struct pfs_sim_inputs *in, const struct pfs_scenario *sc, struct pfs_diag *diag)
{
    int rc;

    if (!pfs_variability_on(&sc->var))
        return 0;
    if (!(in->fit = calloc(in->n_curves + 1, sizeof *in->fit)) ||
        !(in->fit_gpu = calloc(in->n_curves + 1, sizeof *in->fit_gpu)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t k = 0; k < in->n_curves; k++) {
        const struct pfs_job_curve *jc = &in->cs->jobs[k];
        struct pfs_fit f;

        if (in->curves[k].gpu >= 0)
            in->fit_gpu[k] = in->gpu[in->curves[k].gpu];
        else if ((rc = pfs_scenario_gpu(sc, jc->gpu, &in->fit_gpu[k], diag)))
            return rc;
        if (jc->n_points < PFS_FIT_MIN_POINTS)
            return pfs__diag_set(diag, PFS_EINVAL, in->cs->path, jc->line, 0, "cap_w",
                                 "facility.variability: job '%s' has %zu measured caps; its "
                                 "model needs at least %d",
                                 jc->job_id, jc->n_points, PFS_FIT_MIN_POINTS);
        if (jc->cap_w[0] < in->fit_gpu[k].min_limit_w ||
            jc->cap_w[jc->n_points - 1] > in->fit_gpu[k].max_limit_w)
            return pfs__diag_set(diag, PFS_EINVAL, in->cs->path, jc->line, 0, "cap_w",
                                 "facility.variability: job '%s' was measured at %g-%g W, "
                                 "outside the %s limits [%g, %g] W",
                                 jc->job_id, jc->cap_w[0], jc->cap_w[jc->n_points - 1],
                                 in->fit_gpu[k].name, in->fit_gpu[k].min_limit_w,
                                 in->fit_gpu[k].max_limit_w);
        if ((rc = pfs_fit_job(&in->fit_gpu[k], jc, &f, diag)))
            return rc;
        in->fit[k] = f.job;
    }
    for (size_t p = 0; p < in->n_pools; p++) {
        size_t n = (size_t)in->pools[p].gpus;

        if (!(in->eta[p] = malloc((n + 1) * sizeof *in->eta[p])))
            return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        if ((rc = pfs_eta_draw(&sc->var, sc->var_seed * 1000003ul + p, n, in->eta[p], diag)))
            return rc;
    }
    return 0;
}

/* corpus = "synth:GPU[:SEED]": the corpus generated on GPU's profile for this scenario. */
static int
synth_corpus(struct pfs_sim_inputs *in, const struct pfs_scenario *sc, struct pfs_diag *diag)
{
    struct pfs_synth_options o;
    struct pfs_gpu g;
    char name[32];
    unsigned long seed;
    int rc;

    if (!pfs_synth_spec(sc->corpus, name, sizeof name, &seed))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "workload.corpus",
                             "scenario.workload.corpus: expected synth:GPU or synth:GPU:SEED, "
                             "got '%s'",
                             sc->corpus);
    if ((rc = pfs_scenario_gpu(sc, name, &g, diag)))
        return rc;
    pfs_synth_defaults(&o, seed);
    o.gpu = &g;
    return pfs_synth(&o, &in->js, &in->cs, diag);
}

/* Curve i's own GPU (in->curves[i].gpu set): the facility's pool of that GPU, or the
 * profile itself for a curve no pool can run (it may still be a twin's). */
static int
curve_gpu(const struct pfs_sim_inputs *in, const struct pfs_scenario *sc, size_t i,
          struct pfs_gpu *own, struct pfs_diag *diag)
{
    if (in->curves[i].gpu >= 0) {
        *own = in->gpu[in->curves[i].gpu];
        return 0;
    }
    return pfs_scenario_gpu(sc, in->cs->jobs[i].gpu, own, diag);
}

/* Every corpus curve tabulated on its own GPU's limits (in->curves). */
static int
tabulate_curves(struct pfs_sim_inputs *in, const struct pfs_scenario *sc, struct pfs_diag *diag)
{
    int rc = 0;

    in->n_curves = in->cs->n_jobs;
    if (!(in->curves = pfs__huge_calloc(in->n_curves + 1, sizeof *in->curves)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t i = 0; i < in->n_curves && rc == 0; i++) {
        struct corpus_curve *cc = &in->curves[i];
        struct pfs_gpu own;

        cc->gpu = -1;
        for (size_t p = 0; p < in->n_pools && cc->gpu < 0; p++)
            if (strcmp(in->pools[p].gpu, in->cs->jobs[i].gpu) == 0)
                cc->gpu = (int)p;
        if ((rc = curve_gpu(in, sc, i, &own, diag)) == 0)
            rc = tabulate(cc, &in->cs->jobs[i], &own, diag);
    }
    return rc;
}

/* Writes a byte into every page of the index's block ahead (pre_th): a write, where
 * pfs__populate would leave 4.5-5 us of each page's fault to its first write here. */
static void *
touch_run(void *arg)
{
    struct qindex *c = arg;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);

    for (size_t at = 0; at < c->pre_bytes; at += page)
        ((volatile char *)c->pre)[at] = 0;
    return NULL;
}

/* A corpus directory's curves, read and tabulated on a thread of their own while the caller
 * reads its jobs and makes the workload, which need nothing of them (a week's set-up: 9.3 ->
 * 7.1 ms). Failures keep the order of doing it all in turn: the curves file's before the
 * caller's, the caller's before the tabulation's. */
struct curves_job {
    struct pfs_sim_inputs *in;
    const struct pfs_scenario *sc;
    char path[600];
    int read_rc, tab_rc;
    struct pfs_diag read_d, tab_d;
};

static void *
curves_run(void *arg)
{
    struct curves_job *cj = arg;

    if ((cj->read_rc = pfs_curveset_read(cj->path, &cj->in->cs, &cj->read_d)) == 0)
        cj->tab_rc = tabulate_curves(cj->in, cj->sc, &cj->tab_d);
    return NULL;
}

int
pfs_sim_inputs_new(const struct pfs_scenario *sc, struct pfs_sim_inputs **out,
                   struct pfs_diag *diag)
{
    struct pfs_sim_inputs *in = calloc(1, sizeof *in);
    struct curves_job cj = {0};
    pthread_t curves_th;
    bool beside = false; /* the curves made on curves_th */
    char path[600];
    int rc;

    *out = NULL;
    if (!in)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (!(in->nodr = calloc(1, sizeof *in->nodr))) {
        free(in);
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    pthread_mutex_init(&in->nodr->lock, NULL);
    pthread_cond_init(&in->nodr->made, NULL);
    if (!(in->qx = calloc(1, sizeof *in->qx))) {
        pfs_sim_inputs_free(in);
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    pthread_mutex_init(&in->qx->lock, NULL);
    if ((rc = facility_new(in, sc, diag)))
        goto fail;
    if (strncmp(sc->corpus, "import:", 7) == 0) {
        /* import:FORMAT:GPU:PATH - real curves read from the data directory at run time,
         * with no jobs.csv: what an operator knows comes from each curve (below). */
        char fmt[32], gpu[32], rel[400];
        const struct pfs_importer_ops *imp;

        if (sscanf(sc->corpus + 7, "%31[^:]:%31[^:]:%399s", fmt, gpu, rel) != 3 ||
            !(imp = pfs_importer_find(fmt))) {
            rc = pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "workload.corpus",
                               "scenario.workload.corpus: expected import:FORMAT:GPU:PATH with "
                               "FORMAT perseus, zeus or emerald, got '%s'",
                               sc->corpus);
            goto fail;
        }
        snprintf(path, sizeof path, "%s/%s", pfs_data_dir(), rel);
        if ((rc = pfs_curveset_new(&in->cs)) ||
            (rc = pfs_import_read(imp, path, gpu, in->cs, diag)))
            goto fail;
    } else if (strncmp(sc->corpus, "synth:", 6) == 0) {
        /* synth:GPU[:SEED] - the synthetic corpus's configurations measured on that GPU's
         * profile (its draw under --uncertainty), made now (traces/synth.c). */
        if ((rc = synth_corpus(in, sc, diag)))
            goto fail;
    } else {
        cj = (struct curves_job){.in = in, .sc = sc};
        snprintf(cj.path, sizeof cj.path, "%s/curves.csv", sc->corpus);
        if (!(beside = pthread_create(&curves_th, NULL, curves_run, &cj) == 0))
            curves_run(&cj); /* (in turn, then) */
        snprintf(path, sizeof path, "%s/jobs.csv", sc->corpus);
        rc = pfs_jobset_read(path, &in->js, diag);
    }
    /* The predictor: the scenario's, else the corpus's when it has one (a synth: corpus
     * has the shipped one, trained on the H200 corpus: no Blackwell data to train on). */
    if (strncmp(sc->corpus, "synth:", 6) == 0)
        pfs__resolve_path("", "traces/h200-h100/predictor.cfg", path, sizeof path);
    else
        snprintf(path, sizeof path, "%s/predictor.cfg", sc->corpus);
    if (rc == 0 && (sc->predictor[0] || access(path, R_OK) == 0))
        rc = pfs_predictor_load(sc->predictor[0] ? sc->predictor : path, &in->pred, diag);
    if (rc == 0 && sc->workload[0]) {
        rc = pfs_workload_read(sc->workload, &in->wl, diag);
    } else if (rc == 0 && !in->js) {
        rc = pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "workload.file",
                           "scenario.workload.file: an imported corpus has no jobs to draw "
                           "arrivals from; give a workload file");
    } else if (rc == 0) {
        struct pfs_workload_options o = sc->arrivals;

        o.arrivals = sc->arrivals_source;
        o.facility_gpus = 0; /* the largest pool: a job runs within one */
        for (size_t p = 0; p < in->n_pools; p++) {
            bool seen = false;

            o.facility_gpus =
                in->pools[p].gpus > o.facility_gpus ? in->pools[p].gpus : o.facility_gpus;
            for (size_t q = 0; q < o.n_gpu_types; q++)
                seen = seen || strcmp(o.gpu_types[q], in->pools[p].gpu) == 0;
            if (!seen)
                pfs__strlcpy(o.gpu_types[o.n_gpu_types++], in->pools[p].gpu, sizeof o.gpu_types[0]);
        }
        o.days = sc->days;
        o.seed = sc->seed;
        rc = pfs_workload_generate(&o, in->js, &in->wl, diag);
    }
    if (rc == 0) {
        /* A job submitted after the run's end never arrives (an arrival at the end itself
         * still does): it is not part of the run, its jobs submitted, its per-job rows or
         * the GPU time asked (a workload file longer than the scenario's days counted
         * them all). */
        int64_t end_us = (int64_t)(sc->days * 86400 * US);
        size_t m = 0;

        for (size_t j = 0; j < in->wl->n_jobs; j++)
            if (arrival_us(in, j) <= end_us)
                in->wl->jobs[m++] = in->wl->jobs[j];
        in->n_after = in->wl->n_jobs - m;
        in->wl->n_jobs = m;
    }
    if (beside)
        pthread_join(curves_th, NULL);
    if (cj.read_rc) { /* (before the jobs' failure: in turn, the curves were read first) */
        *diag = cj.read_d;
        rc = cj.read_rc;
    } else if (rc == 0 && cj.tab_rc) {
        *diag = cj.tab_d;
        rc = cj.tab_rc;
    } else if (rc == 0 && !cj.in) { /* an imported or synthetic corpus: its curves now */
        rc = tabulate_curves(in, sc, diag);
    }
    if (rc)
        goto fail;
    { /* a workload in submit order (what the readers and generators give) is in order: its
       * arrival order is job order, and no array of keys is needed (44 MB of a Poisson year,
       * written once and each of its pages faulted in) */
        size_t j = 1;

        while (j < in->wl->n_jobs && arrival_us(in, j - 1) <= arrival_us(in, j))
            j++;
        if (j < in->wl->n_jobs) {
            if (!(in->arrival = pfs__huge_calloc(in->wl->n_jobs + 1, sizeof *in->arrival))) {
                rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
                goto fail;
            }
            for (j = 0; j < in->wl->n_jobs; j++)
                in->arrival[j] = (struct arrival_key){arrival_us(in, j), (uint32_t)j};
            qsort(in->arrival, in->wl->n_jobs, sizeof *in->arrival, cmp_arrival_key);
        }
    }
    /* The queue index is made at the runs' start, by one thread while the others wait for
     * it; its block is faulted in now, beside what is left to do here (a 28-day cap-4k
     * window's index was 373 page faults, some 4 ms: the window's wall time 115.7 -> 108.8
     * ms, the least of 15). Not where the scenario rules the index out (indexed_queue; a
     * run under the test switch PFISIM_SCAN_BACKFILL leaves it unused, and the inputs free
     * it). */
    if (in->n_pools == 1 && !sc->admit_deadlines && !sc->scan_backfill && in->wl->n_jobs > 0) {
        struct qindex *c = in->qx;

        c->pre_bytes = pfs__queue_index_bytes(in->wl->n_jobs, sc->edf || in->arrival);
        if (c->pre_bytes && (c->pre = pfs__huge_malloc(c->pre_bytes)) != NULL)
            c->pre_on = pthread_create(&c->pre_th, NULL, touch_run, c) == 0;
    }
    in->job_curve = pfs__huge_calloc(in->wl->n_jobs + 1, sizeof *in->job_curve);
    in->job_pool = pfs__huge_calloc(in->wl->n_jobs + 1, sizeof *in->job_pool);
    in->curve_on = calloc(in->n_curves * in->n_pools + 1, sizeof *in->curve_on);
    if (!in->job_curve || !in->curve_on || !in->job_pool) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < in->n_curves; i++) {
        struct pfs_gpu own;

        if ((rc = curve_gpu(in, sc, i, &own, diag)) || (rc = observe_curve(in, i, &own, diag)))
            goto fail;
        for (size_t p = 0; p < in->n_pools; p++) {
            struct corpus_curve *cc = &in->curves[i];

            cc->top_rate[p] = pfs_pwl_eval(&cc->env, in->gpu[p].max_limit_w);
            cc->top_w[p] = pfs_pwl_eval(&cc->power, in->gpu[p].max_limit_w);
            cc->floor_w[p] = pfs_pwl_eval(&cc->power, in->gpu[p].min_limit_w);
        }
    }
    /* Which curve a job of curve k runs on pool p: k on a pool of its GPU; else a measured
     * twin of k on p's GPU (the corpus's twin_id, either way round); else none. */
    for (size_t k = 0; k < in->n_curves; k++)
        for (size_t p = 0; p < in->n_pools; p++) {
            size_t *on = &in->curve_on[k * in->n_pools + p];

            *on = SIZE_MAX;
            if (strcmp(in->cs->jobs[k].gpu, in->pools[p].gpu) == 0)
                *on = k;
            for (size_t m = 0; m < in->n_curves && *on == SIZE_MAX && in->js; m++)
                if (strcmp(in->cs->jobs[m].gpu, in->pools[p].gpu) == 0 &&
                    twins(in->js, in->cs->jobs[k].job_id, in->cs->jobs[m].job_id))
                    *on = m;
        }
    if ((rc = place_jobs(in, diag)) || (rc = variability_new(in, sc, diag)))
        goto fail;
    if (in->n_curves >= UINT32_MAX ||
        !(in->job_on = pfs__huge_malloc((in->wl->n_jobs * in->n_pools + 1) * sizeof *in->job_on))) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto fail;
    }
    for (size_t j = 0; j < in->wl->n_jobs; j++) {
        for (size_t p = 0; p < in->n_pools; p++) {
            size_t c = in->wl->jobs[j].n_gpus > in->pools[p].gpus ||
                               (in->job_pool[j] >= 0 && (size_t)in->job_pool[j] != p)
                           ? SIZE_MAX
                           : in->curve_on[in->job_curve[j] * in->n_pools + p];

            in->job_on[j * in->n_pools + p] = c == SIZE_MAX ? UINT32_MAX : (uint32_t)c;
        }
    }
    if (in->wl->n_jobs >= UINT32_MAX) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto fail;
    }
    *out = in;
    return 0;
fail:
    pfs_sim_inputs_free(in);
    return rc;
}

size_t
pfs_sim_inputs_n_jobs(const struct pfs_sim_inputs *in)
{
    return in->wl->n_jobs;
}

size_t
pfs_sim_inputs_n_after(const struct pfs_sim_inputs *in)
{
    return in->n_after;
}

const struct pfs_workload_job *
pfs_sim_inputs_job(const struct pfs_sim_inputs *in, size_t j)
{
    return &in->wl->jobs[j];
}

size_t
pfs_sim_inputs_n_curves(const struct pfs_sim_inputs *in)
{
    return in->n_curves;
}

const struct pfs_job_curve *
pfs_sim_inputs_curve(const struct pfs_sim_inputs *in, size_t k)
{
    return &in->cs->jobs[k];
}

const struct pfs_corpus_job *
pfs_sim_inputs_curve_job(const struct pfs_sim_inputs *in, size_t k)
{
    return in->js ? pfs_jobset_find(in->js, in->cs->jobs[k].job_id) : NULL;
}

double
pfs_sim_inputs_curve_pfi(const struct pfs_sim_inputs *in, size_t k, size_t cut)
{
    return cut < PFS_N_CUTS ? in->curves[k].tel.pfi_given[cut] : (double)NAN;
}

void
pfs_sim_inputs_free(struct pfs_sim_inputs *in)
{
    if (!in)
        return;
    free(in->arrival);
    free(in->curves);
    free(in->job_curve);
    free(in->job_pool);
    free(in->job_on);
    free(in->curve_on);
    free(in->fit);
    free(in->fit_gpu);
    for (size_t p = 0; p < PFS_MAX_POOLS; p++)
        free(in->eta[p]);
    pthread_mutex_destroy(&in->nodr->lock);
    pthread_cond_destroy(&in->nodr->made);
    free(in->nodr);
    if (in->qx) {
        if (in->qx->pre_on)
            pthread_join(in->qx->pre_th, NULL);
        free(in->qx->pre);
        pfs__queue_index_free(in->qx->x[0]);
        pfs__queue_index_free(in->qx->x[1]);
        pthread_mutex_destroy(&in->qx->lock);
        free(in->qx);
    }
    pfs_workload_free(in->wl);
    pfs_predictor_free(in->pred);
    pfs_jobset_free(in->js);
    pfs_curveset_free(in->cs);
    free(in);
}

/* Writes bytes of buf at offset at of fp's file (positioned: the stream's own position and
 * buffer are not used). Returns 0 or PFS_EIO. */
static int
write_at(FILE *fp, const void *buf, size_t bytes, size_t at)
{
    const char *p = buf;

    while (bytes > 0) {
        ssize_t w = pwrite(fileno(fp), p, bytes, (off_t)at);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return PFS_EIO;
        p += w;
        bytes -= (size_t)w;
        at += (size_t)w;
    }
    return 0;
}

/* Reads bytes into buf from offset at of fp's file (positioned, as write_at: threads may
 * read one file at once). Returns 0 or PFS_EIO. */
static int
read_at(FILE *fp, void *buf, size_t bytes, size_t at)
{
    char *p = buf;

    while (bytes > 0) {
        ssize_t r = pread(fileno(fp), p, bytes, (off_t)at);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return PFS_EIO;
        p += r;
        bytes -= (size_t)r;
        at += (size_t)r;
    }
    return 0;
}

void
pfs_timeseries_free(struct pfs_timeseries *ts)
{
    if (!ts)
        return;
    free(ts->rows);
    if (ts->spill)
        fclose(ts->spill); /* (tmpfile's: gone with it) */
    ts->rows = NULL;
    ts->spill = NULL;
    ts->n = ts->cap = 0;
}

int
pfs_timeseries_spill(struct pfs_timeseries *ts)
{
    pfs_timeseries_free(ts);
    return (ts->spill = tmpfile()) != NULL ? 0 : PFS_EIO;
}

size_t
pfs_timeseries_read(const struct pfs_timeseries *ts, size_t from, struct pfs_ts_row *buf,
                    size_t max, int *err)
{
    size_t n = from < ts->n ? ts->n - from : 0;

    n = n < max ? n : max;
    if (n == 0)
        return 0;
    if (!ts->spill) {
        memcpy(buf, ts->rows + from, n * sizeof *buf);
        return n;
    }
    if (read_at(ts->spill, buf, n * sizeof *buf, from * sizeof *buf)) {
        *err = PFS_EIO;
        return 0;
    }
    return n;
}

/* Appends a minute's row: to the spill file, or to the rows in memory. */
static int
ts_append(struct pfs_timeseries *ts, const struct pfs_ts_row *row)
{
    if (ts->spill) {
        if (fwrite(row, sizeof *row, 1, ts->spill) != 1)
            return PFS_EIO;
    } else {
        if (ts->n == ts->cap) {
            size_t cap = ts->cap ? 2 * ts->cap : 1024;
            struct pfs_ts_row *r = realloc(ts->rows, cap * sizeof *r);

            if (!r)
                return PFS_ENOMEM;
            ts->rows = r;
            ts->cap = cap;
        }
        ts->rows[ts->n] = *row;
    }
    ts->n++;
    return 0;
}

void
pfs_job_results_free(struct pfs_job_results *jr)
{
    if (!jr)
        return;
    free(jr->rows);
    free(jr->win);
    free(jr->late);
    if (jr->spill)
        fclose(jr->spill); /* (tmpfile's: gone with it) */
    *jr = (struct pfs_job_results){.window = jr->window, .late_max = jr->late_max}; /* (settings) */
}

void
pfs_job_results_spill(struct pfs_job_results *jr)
{
    pfs_job_results_free(jr);
    jr->to_spill = true;
}

size_t
pfs_job_results_read(const struct pfs_job_results *jr, size_t from, struct pfs_job_result *buf,
                     size_t max, int *err)
{
    size_t n = from < jr->n ? jr->n - from : 0;

    n = n < max ? n : max;
    if (n == 0)
        return 0;
    if (jr->rows) {
        memcpy(buf, jr->rows + from, n * sizeof *buf);
        return n;
    }
    if (!jr->spill || jr->err || read_at(jr->spill, buf, n * sizeof *buf, from * sizeof *buf)) {
        *err = PFS_EIO;
        return 0;
    }
    if (jr->n_late > 0) { /* the late results in [from, from + n), in their places */
        size_t lo = 0, hi = jr->n_late;

        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;

            if (jr->late[mid].j < from)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < jr->n_late && jr->late[lo].j < from + n; lo++)
            buf[jr->late[lo].j - from] = jr->late[lo].r;
    }
    return n;
}

static int
cmp_late(const void *a, const void *b)
{
    size_t x = ((const struct pfs_job_late *)a)->j, y = ((const struct pfs_job_late *)b)->j;

    return (x > y) - (x < y);
}

/* Makes jr ready for a run of n jobs: their rows in memory, or, to be spilled with more jobs
 * than its window, that window and the file (one from an earlier run is written over: the
 * run writes all n records). Returns 0 or PFS_ENOMEM. */
static int
jr_begin(struct pfs_job_results *jr, size_t n)
{
    size_t w = jr->window ? jr->window + (jr->window & 1) : PFS_JOB_WINDOW;

    free(jr->rows);
    free(jr->win);
    free(jr->late);
    jr->rows = jr->win = NULL;
    jr->late = NULL;
    jr->n = n;
    jr->base = jr->late_total = jr->n_late = jr->late_cap = 0;
    jr->err = 0;
    if (jr->to_spill && n > w && (jr->spill || (jr->spill = tmpfile()) != NULL)) {
        jr->window = w;
        jr->win = calloc(w, sizeof *jr->win);
        return jr->win ? 0 : PFS_ENOMEM;
    }
    if (jr->spill) { /* (from an earlier run) */
        fclose(jr->spill);
        jr->spill = NULL;
    }
    return (jr->rows = calloc(n + 1, sizeof *jr->rows)) != NULL ? 0 : PFS_ENOMEM;
}

/* Writes the window's first half, jobs [base, base + window / 2) (those of the workload), to
 * the spill in one write, and moves the window on past it. The entries of jobs not yet over
 * hold what an earlier lap left there: their late results are put in their places later
 * (pfs_job_results_read, jr_late_write). One write a half: writing only the entries set, a
 * write for each stretch between the jobs not over, made the 100,000-GPU year's 307 halves
 * some 740,000 writes (docs/benchmarks.md, "Late job results"). */
static void
jr_write_half(struct pfs_job_results *jr)
{
    size_t half = jr->window / 2, at = jr->base % jr->window;
    size_t m = jr->base >= jr->n ? 0 : jr->n - jr->base < half ? jr->n - jr->base : half;

    if (m > 0 && jr->err == 0)
        jr->err =
            write_at(jr->spill, jr->win + at, m * sizeof *jr->win, jr->base * sizeof *jr->win);
    jr->base += half;
}

/* Writes the late results held to their places in the spill, in job order, one write each,
 * and lets them go: where more than late_max would be held. */
static void
jr_late_write(struct pfs_job_results *jr)
{
    qsort(jr->late, jr->n_late, sizeof *jr->late, cmp_late);
    for (size_t k = 0; k < jr->n_late && jr->err == 0; k++)
        jr->err = write_at(jr->spill, &jr->late[k].r, sizeof jr->late[k].r,
                           jr->late[k].j * sizeof jr->late[k].r);
    jr->n_late = 0;
}

/* Job j's result r: into its row, or into the window (moved on until it holds j), or, its
 * half already written, held as late (written to its place at once where no memory is to
 * be had: 768,893 such writes, one a late job, took some 7 s of the 100,000-GPU year). */
static void
jr_put(struct pfs_job_results *jr, size_t j, const struct pfs_job_result *r)
{
    if (jr->rows) {
        jr->rows[j] = *r;
        return;
    }
    if (j < jr->base) {
        struct pfs_job_late *l;

        jr->late_total++;
        if (jr->n_late == (jr->late_max ? jr->late_max : PFS_JOB_LATE))
            jr_late_write(jr);
        l = pfs__grow(jr->late, &jr->late_cap, jr->n_late, sizeof *l, 1024);
        if (!l) {
            if (jr->err == 0)
                jr->err = write_at(jr->spill, r, sizeof *r, j * sizeof *r);
            return;
        }
        jr->late = l;
        l[jr->n_late].j = j;
        memcpy(&l[jr->n_late++].r, r, sizeof *r); /* (its zeroed padding too: jr_late_write) */
        return;
    }
    while (j >= jr->base + jr->window)
        jr_write_half(jr);
    memcpy(&jr->win[j % jr->window], r, sizeof *r);
}

/* The run is over (every job's result put): what the window holds is written. Returns 0 or
 * PFS_EIO. */
static int
jr_end(struct pfs_job_results *jr)
{
    if (!jr->rows) {
        jr_write_half(jr);
        jr_write_half(jr);
        free(jr->win);
        jr->win = NULL;
        if (jr->n_late > 1) /* in job order, for pfs_job_results_read to find */
            qsort(jr->late, jr->n_late, sizeof *jr->late, cmp_late);
    }
    return jr->err;
}

/* ----- the budget timeline ----- */

static double facility_w(const struct sim *s);

/* An event's kinks, where its target changes slope or steps: its start, the end of its ramp
 * down, each later step, its end, the end of its ramp up. Writes at most 4 +
 * PFS_MAX_DR_STEPS times, in order; returns their number. */
static size_t
dr_kinks(const struct pfs_dr_event *e, double *out)
{
    size_t n = 0;

    out[n++] = e->start_s;
    out[n++] = e->start_s + e->ramp_s;
    for (size_t i = 1; i < e->n_steps; i++)
        if (e->start_s + e->steps[i].at_s > out[n - 1])
            out[n++] = e->start_s + e->steps[i].at_s;
    out[n++] = e->end_s;
    out[n++] = pfs_dr_over_s(e);
    return n;
}

/* The level event k asks for at t (facility W): its step in force at t (the first during the
 * ramp down), absolute or cut from base; NAN for a cut while base is unknown. */
static double
dr_level(const struct pfs_dr_event *e, double base, double t)
{
    double target = e->target_w, cut = e->cut_frac;

    for (size_t i = 0; i < e->n_steps; i++)
        if (i == 0 || e->start_s + e->steps[i].at_s <= t)
            target = e->steps[i].target_w, cut = e->steps[i].cut_frac;
    if (target > 0)
        return target;
    return base > 0 ? (1 - cut) * base : (double)NAN;
}

/* The DR target of event k at time t (facility W), or +inf outside it. The event is
 * [start, end + ramp up): ramping down over [start, start + ramp down) to its first level,
 * holding its levels (each step from its time on) until end, ramping back up to the baseline
 * over [end, end + ramp up). */
static double
dr_target(const struct sim *s, size_t k, double t)
{
    const struct pfs_dr_event *e = &s->sc->dr[k];
    double base = s->dr_baseline_w[k], target, f, up = pfs_dr_ramp_up_s(e);

    if (t < e->start_s || t >= pfs_dr_over_s(e))
        return HUGE_VAL;
    target = dr_level(e, base, fmin(t, e->end_s));
    if (isnan(target))
        return HUGE_VAL; /* a cut before its baseline is known */
    if (t < e->start_s + e->ramp_s) {
        f = (t - e->start_s) / e->ramp_s;
        return base > 0 ? base + f * (target - base) : target;
    }
    if (t < e->end_s)
        return target;
    f = up > 0 ? (t - e->end_s) / up : 1;
    return base > 0 ? target + f * (base - target) : HUGE_VAL;
}

/* Event k's baseline, taken at the first decision that plans for it (t): the facility's
 * power now (instantaneous); the mean of the minutes of its window before the start that
 * are over by now (average base load; now itself when none is); or the announced value. */
static double
dr_baseline(const struct sim *s, size_t k, double t)
{
    const struct pfs_dr_event *e = &s->sc->dr[k];
    double energy = 0, secs = 0, from = e->start_s - e->baseline_window_s;
    double until = fmin(t, e->start_s), m0 = (double)s->m_start_us / US;

    if (e->baseline == PFS_BASELINE_GIVEN)
        return e->baseline_w;
    if (e->baseline == PFS_BASELINE_AVERAGE) {
        for (size_t i = 0; i < s->n_minutes; i++)
            if (60.0 * (double)i >= from - 1e-9 && 60.0 * (double)(i + 1) <= until + 1e-9)
                energy += 60 * s->minute_w[i], secs += 60;
        /* The minute in progress (its end may be now, its row not yet written). */
        if (m0 >= from - 1e-9 && t <= until + 1e-9 && t > m0)
            energy += s->m_energy, secs += t - m0;
    }
    return secs > 0 ? energy / secs : facility_w(s);
}

/* The length of the DR event in progress at t (start to end of ramp up), 0 if none. */
static long event_at(const struct sim *s, double t);

static double
event_length(const struct sim *s, double t)
{
    long k = event_at(s, t);

    return k < 0 ? 0 : pfs_dr_over_s(&s->sc->dr[k]) - s->sc->dr[k].start_s;
}

static bool
in_event(const struct sim *s, double t)
{
    return event_at(s, t) >= 0;
}

/* The DR event in progress at t (start to the end of its ramp up), -1 if none. */
static long
event_at(const struct sim *s, double t)
{
    long at = -1;

    for (size_t q = s->dr_live; q < s->sc->n_dr; q++) {
        size_t k = s->dr_by_start[q];
        const struct pfs_dr_event *e = &s->sc->dr[k];

        if (e->start_s > t)
            break;
        if (t < pfs_dr_over_s(e) && (at < 0 || (long)k < at))
            at = (long)k; /* the first in index order, where events overlap */
    }
    return at;
}

/* When the limit a decision at t plans for is announced to lift: the end of the ramp up of
 * the DR event on at t or starting within the hour ahead (what a decision plans into), and
 * of every announced event that starts before that end (they chain); INFINITY under a base
 * cap, which does not lift, or when no such event is known. */
static double
limit_lifts(const struct sim *s, double t)
{
    double until = -HUGE_VAL;
    bool more = true;

    if (s->sc->base_cap_w > 0)
        return HUGE_VAL;
    while (more) {
        more = false;
        for (size_t q = s->dr_live; q < s->sc->n_dr; q++) {
            const struct pfs_dr_event *e = &s->sc->dr[s->dr_by_start[q]];
            double end = pfs_dr_over_s(e);
            bool starts = isfinite(until) ? e->start_s <= until : e->start_s < t + 3600;

            if (t >= e->start_s - e->notice_s && end > t && end > until && starts) {
                until = end;
                more = true;
            }
        }
    }
    return isfinite(until) ? until : HUGE_VAL;
}

/* The facility's power limit at t: the base cap and every event's target. */
static double
facility_budget(const struct sim *s, double t)
{
    double b = s->sc->base_cap_w > 0 ? s->sc->base_cap_w : HUGE_VAL;

    for (size_t q = s->dr_live; q < s->sc->n_dr; q++) {
        size_t k = s->dr_by_start[q];

        if (s->sc->dr[k].start_s > t)
            break; /* it and every later one: no limit yet */
        b = fmin(b, dr_target(s, k, t));
    }
    return b;
}

/* The lowest limit while a decision made at t is in effect: from t + actuation until the
 * next decision takes effect, at the next control step (t + period, or the next kink of a DR
 * event, each of which has its own step) plus the actuation delay. The window is half-open:
 * the limit at its end is the next decision's business. Sampled every second and just
 * before its end. */
static double
budget_ahead(const struct sim *s, double t, double period, double actuation)
{
    double next = t + period, lo, hi, b;

    for (size_t i = s->dr_live; i < s->sc->n_dr; i++) {
        const struct pfs_dr_event *e = &s->sc->dr[s->dr_by_start[i]];
        double kinks[4 + PFS_MAX_DR_STEPS];
        size_t nk;

        if (e->start_s >= next)
            break; /* its kinks, and every later event's, are all at or after next */
        if (t < e->start_s - e->notice_s)
            continue; /* not announced yet */
        nk = dr_kinks(e, kinks);
        for (size_t q = 0; q < nk; q++)
            if (kinks[q] > t && kinks[q] < next)
                next = kinks[q];
    }
    lo = t + actuation;
    hi = next + actuation;
    /* Each limit is piecewise linear in time between its kinks (steps included), so its lowest
     * value on [lo, hi) is at lo, just before hi, or at a kink in between: exact, and
     * O(events). */
    b = s->sc->base_cap_w > 0 ? s->sc->base_cap_w : HUGE_VAL;
    for (size_t i = s->dr_live; i < s->sc->n_dr; i++) {
        size_t k = s->dr_by_start[i];
        const struct pfs_dr_event *e = &s->sc->dr[k];
        double kinks[4 + PFS_MAX_DR_STEPS];
        size_t nk;

        if (hi <= e->start_s)
            break; /* it and every later one start after the window */
        if (lo >= pfs_dr_over_s(e) || t < e->start_s - e->notice_s)
            continue; /* no overlap, or not announced yet */
        nk = dr_kinks(e, kinks);
        /* The controller aims control.margin below an event's target. */
        b = fmin(b, dr_target(s, k, lo) * (1 - s->sc->margin));
        b = fmin(b, dr_target(s, k, fmax(lo, hi - 1e-6)) * (1 - s->sc->margin));
        for (size_t q = 0; q < nk; q++)
            if (kinks[q] > lo && kinks[q] < hi)
                b = fmin(b, dr_target(s, k, kinks[q]) * (1 - s->sc->margin));
    }
    return b;
}

/* ----- progress and power ----- */

/* The curve the job of record jb runs on: its own on its GPUs (facility.variability), else
 * the corpus's. */
static inline const struct corpus_curve *
rec_curve(const struct sim *s, const struct job *jb)
{
    return jb->own ? &s->own[jb->own - 1].cc : &s->in->curves[jb->curve];
}

static const struct corpus_curve *
job_curve(const struct sim *s, size_t j)
{
    return rec_curve(s, job_rec(s, j));
}

static inline const struct pfs_gpu *
rec_gpu(const struct sim *s, const struct job *jb)
{
    return &s->in->gpu[jb->pool];
}

static const struct pfs_gpu *
job_gpu(const struct sim *s, size_t j)
{
    return rec_gpu(s, job_rec(s, j));
}

/* Job jb's curve c at cap, per GPU: its throughput on the curve's GPUs (*env) and a GPU's draw
 * (*power). A decision by class gives one cap to every job of a class: each corpus curve's
 * last cap and values are kept, and a job on a curve at the cap last asked of it costs no
 * evaluation (a job's own curves are rewritten in place when it goes: never kept). */
static inline void
curve_at(struct sim *s, const struct job *jb, const struct corpus_curve *c, double cap, double *env,
         double *power)
{
    struct curve_memo *m = s->memo && !jb->own ? &s->memo[jb->curve] : NULL;

    if (m && !(m->cap < cap) && !(m->cap > cap)) { /* (caps are finite; none kept: -inf) */
        *env = m->env;
        *power = m->power;
        return;
    }
    if (!m) {
        *env = pfs_pwl_eval(&c->env, cap);
        *power = pfs_pwl_eval(&c->power, cap);
        return;
    }
    /* (the last cap's segments first: a level moves a little from one decision to the next) */
    *env = pfs__pwl_eval_near(&c->env, cap, &m->k_env);
    *power = pfs__pwl_eval_near(&c->power, cap, &m->k_power);
    m->cap = cap;
    m->env = *env;
    m->power = *power;
}

/* What the free GPUs of every pool draw, W. */
static double
free_idle_w(const struct sim *s)
{
    double w = 0;

    for (size_t p = 0; p < s->in->n_pools; p++)
        w += s->free_gpus[p] * s->in->gpu[p].idle_w;
    return w;
}

static double
facility_w(const struct sim *s)
{
    return s->sc->pue * (s->gpu_w_total + free_idle_w(s) + s->in->other_w);
}

/* Integrates the facility up to now (tokens and energy, with the minute's share; per pool). */
static void
advance(struct sim *s, int64_t to_us)
{
    double dt = (double)(to_us - s->now_us) / US, p = facility_w(s);

    if (dt <= 0)
        return;
    s->tokens += s->total_rate * dt;
    s->energy_j += p * dt;
    s->m_energy += p * dt;
    s->m_gpu_energy += (s->gpu_w_total + free_idle_w(s)) * dt;
    s->m_tokens += s->total_rate * dt;
    if (s->n_reduced > 0)
        s->res->cap_binding_h += dt / 3600;
    for (size_t q = 0; q < s->in->n_pools; q++) {
        struct pfs_pool_result *pr = &s->res->pool[q];

        pr->tokens += s->pool_rate[q] * dt;
        pr->energy_j += s->sc->pue *
                        (s->pool_gpu_w[q] + s->free_gpus[q] * s->in->gpu[q].idle_w +
                         s->in->nodes[q] * s->in->pools[q].node_other_w) *
                        dt;
        pr->busy_gpu_h += (s->in->pools[q].gpus - s->free_gpus[q]) * dt / 3600;
    }
    s->now_us = to_us;
}

/* Brings the progress of the job of record jb up to now. */
static inline void
touch_rec(struct sim *s, struct job *jb)
{
    jb->done += jb->rate * (double)(s->now_us - jb->last_us) / US;
    jb->last_us = s->now_us;
    if (jb->state == RUNNING)
        s->si[jb->slot].done = jb->done;
}

/* Brings job j's progress up to now. */
static void
touch(struct sim *s, size_t j)
{
    touch_rec(s, job_rec(s, j));
}

/* (int64_t)ceil(x) for x >= 0 and below 2^63, inline: ceil is a call into libm, at every
 * change of a running job's rate. */
static inline int64_t
ceil_us(double x)
{
    int64_t i = (int64_t)x;

    return i + ((double)i < x);
}

/* What the running job of record jb has left to do, tokens: its slot's tokens, not the
 * workload's (a cache miss at every change of rate); fmax(0, ...) inline (a call into libm). */
static inline double
tokens_left(const struct sim *s, const struct job *jb)
{
    double left = s->si[jb->slot].tokens - jb->done;

    return left > 0 ? left : 0;
}

/* Job j's (of record jb) estimated time to finish from its last progress update, its tokens
 * left: over its rate (its full-power rate while it has none). Its estimated finish is now
 * plus this; the key stays as it is until the job's rate changes (set_rate), which is what
 * lets sim/order.c keep the running jobs in order. */
static double
finish_key_left(const struct sim *s, size_t j, const struct job *jb, double left)
{
    return left / (jb->rate > 0 ? jb->rate : s->in->wl->jobs[j].tokens / jb->dur_s);
}

static double
finish_key(const struct sim *s, size_t j)
{
    const struct job *jb = job_rec(s, j);

    return finish_key_left(s, j, jb, tokens_left(s, jb));
}

/* Job j (of record jb) at rate and draw gw from now: its progress brought up to now, the
 * totals, its key in the finish order and its finish event moved. Inlined in both its
 * callers whatever the compiler would choose (a call of its own: 87 M more instructions
 * on equal's 20-event run, docs/benchmarks.md). */
static inline __attribute__((always_inline)) int
rate_commit(struct sim *s, size_t j, struct job *jb, double rate, double gw)
{
    double left;

    touch_rec(s, jb);
    s->total_rate += rate - jb->rate;
    s->gpu_w_total += gw - jb->gpu_w;
    s->pool_rate[jb->pool] += rate - jb->rate;
    s->pool_gpu_w[jb->pool] += gw - jb->gpu_w;
    jb->rate = rate;
    jb->gpu_w = gw;
    left = tokens_left(s, jb);
    /* into the finish order when it is next asked; with a rate, the time to finish */
    jb->ord_key = finish_key_left(s, j, jb, left);
    if (!jb->ord_late) {
        uint32_t *g = pfs__grow(s->ord_late, &s->ord_late_cap, s->n_ord_late, sizeof *g, 1024);

        if (!g)
            return PFS_ENOMEM;
        s->ord_late = g;
        s->ord_late[s->n_ord_late++] = (uint32_t)j;
        jb->ord_late = (uint32_t)s->n_ord_late;
    }
    if (rate > 0) { /* its finish event, moved (the sequence number a new one would get) */
        int64_t t = s->now_us + ceil_us(jb->ord_key * US); /* (left / rate * US) */

        pfs__fheap_set(&s->fh, (uint32_t)jb->slot, (uint32_t)j, t, s->heap.next_seq++);
    } else
        pfs__fheap_del(&s->fh, (uint32_t)jb->slot); /* (its record's index: its slot) */
    return 0;
}

/* A running job's throughput on curve c at envelope env, under its pause on active of its
 * n_gpus GPUs. */
static inline double
rate_of(const struct corpus_curve *c, double env, double pause, int active, int n_gpus)
{
    return (1 - pause) * env * n_gpus / c->n_gpus * active / n_gpus;
}

/* Its draw, all its GPUs, at per-GPU draw power and GPU idle draw idle_w: a resized job's
 * GPUs set free idle (docs/policies.md, resize-fair). */
static inline double
draw_of(double power, double idle_w, double pause, int active, int n_gpus)
{
    return (pause * idle_w + (1 - pause) * power) * active + (n_gpus - active) * idle_w;
}

/* Sets job j's (of record jb) rate and draw from its decision and reschedules its finish. */
static inline int
set_rate_rec(struct sim *s, size_t j, struct job *jb)
{
    const struct corpus_curve *c = rec_curve(s, jb);
    const int64_t now = s->now_us;
    const double idle_w = rec_gpu(s, jb)->idle_w;
    bool ckpt = now < jb->ckpt_until_us;
    double env = 0, power = 0, rate, gw, pause = jb->pause;

    if (!ckpt) /* (checkpointing: no progress, the draw it had) */
        curve_at(s, jb, c, jb->cap_w, &env, &power);
    rate = now < jb->resume_until_us || ckpt ? 0 : rate_of(c, env, pause, jb->active, jb->n_gpus);
    gw = ckpt ? jb->ckpt_gpu_w : draw_of(power, idle_w, pause, jb->active, jb->n_gpus);
    return rate_commit(s, j, jb, rate, gw);
}

/* Sets job j's rate and draw from its decision and reschedules its finish. */
static int
set_rate(struct sim *s, size_t j)
{
    return set_rate_rec(s, j, job_rec(s, j));
}

/* Job j's draw, all its GPUs, at full power. */
static double
full_draw_w(const struct sim *s, size_t j)
{
    const struct job *jb = job_rec(s, j);
    const struct corpus_curve *c = job_curve(s, j);

    return c->top_w[jb->pool] * jb->n_gpus;
}

/* Job j's draw, all its GPUs, at its minimum cap: what capping alone cannot go below. */
static double
floor_draw_w(const struct sim *s, size_t j)
{
    const struct job *jb = job_rec(s, j);
    const struct corpus_curve *c = job_curve(s, j);

    return c->floor_w[jb->pool] * jb->n_gpus;
}

/* The job of record jb marked reduced or not, the count of reduced jobs kept in step. */
static inline void
set_reduced(struct sim *s, struct job *jb, bool reduced)
{
    if (reduced != jb->reduced) {
        s->n_reduced += reduced ? 1 : (size_t)-1;
        jb->reduced = reduced;
    }
}

/* Keeps the count of reduced jobs in step with the decision of the job of record jb. */
static inline void
mark_rec(struct sim *s, struct job *jb)
{
    set_reduced(s, jb,
                jb->state == RUNNING && (jb->cap_w < rec_gpu(s, jb)->max_limit_w || jb->pause > 0));
}

/* Keeps the count of reduced jobs in step with job j's decision. */
static void
mark(struct sim *s, size_t j)
{
    mark_rec(s, job_rec(s, j));
}

/* ----- scheduling ----- */

/* The curve job j runs on pool p, SIZE_MAX when it cannot run there (another GPU with no
 * measured twin, or too few GPUs). */
static size_t
curve_on(const struct sim *s, size_t j, size_t p)
{
    uint32_t c = s->in->job_on[j * s->in->n_pools + p];

    return c == UINT32_MAX ? SIZE_MAX : c;
}

/* Job j's uncapped run time on curve c of pool p (the expression of place_jobs). */
static double
duration_on(const struct sim *s, size_t j, size_t c, size_t p)
{
    const struct pfs_workload_job *w = &s->in->wl->jobs[j];

    return w->tokens / (s->in->curves[c].top_rate[p] * w->n_gpus / s->in->curves[c].n_gpus);
}

/* The class of a job running curve c on n GPUs (sim.cls_key); UINT32_MAX without memory. */
static uint32_t
class_of(struct sim *s, size_t c, int n)
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
static void
view_fill(struct sim *s, size_t r)
{
    size_t j = s->running[r];
    const struct pfs_workload_job *w = &s->in->wl->jobs[j];
    const struct corpus_curve *c = &s->in->curves[job_rec(s, j)->curve], *tc = job_curve(s, j);
    const struct pfs_gpu *g = job_gpu(s, j);
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
        uint32_t k = class_of(s, job_rec(s, j)->curve, w->n_gpus);

        if (k == UINT32_MAX) {
            pfs__lazy_free(s->cls);
            s->cls = NULL;
        } else
            s->cls[r] = k;
    }
}

/* Slot from's view moves to slot to (the job there finished; the last took its place). */
static void
view_move(struct sim *s, size_t from, size_t to)
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
static int
groups_reserve(struct sim *s)
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
static int
group_put(struct sim *s, uint32_t k, size_t slot)
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
static void
group_take(struct sim *s, uint32_t k, size_t slot)
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
static void
groups_off(struct sim *s)
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
static int
own_curve_start(struct sim *s, size_t j, size_t p)
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
        rc = tabulate(&oc->cc, &on, &s->in->gpu[p], s->diag);
        for (size_t q = 0; q < s->in->n_pools && rc == 0; q++) {
            oc->cc.top_rate[q] = pfs_pwl_eval(&oc->cc.env, s->in->gpu[q].max_limit_w);
            oc->cc.top_w[q] = pfs_pwl_eval(&oc->cc.power, s->in->gpu[q].max_limit_w);
            oc->cc.floor_w[q] = pfs_pwl_eval(&oc->cc.power, s->in->gpu[q].min_limit_w);
        }
    }
    return rc;
}

/* Job j gives its GPUs back (to the tail of its pool's free GPUs) and its own curve. */
static void
own_curve_end(struct sim *s, size_t j)
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

static int
start_job(struct sim *s, size_t j, size_t p)
{
    const struct pfs_gpu *g = &s->in->gpu[p];
    struct job *jb;

    /* at most one running job per GPU, and s->live has a record for each: at its slot */
    assert(s->live_of[j] == 0);
    s->live_of[j] = (uint32_t)s->n_running + 1;
    jb = job_rec(s, j);
    *jb = (struct job){0};

    jb->pool = (int)p;
    jb->curve = curve_on(s, j, p);
    if (s->in->fit) {
        int rc = own_curve_start(s, j, p);

        if (rc)
            return rc;
        jb->dur_s = s->in->wl->jobs[j].tokens / job_curve(s, j)->top_rate[p];
    } else
        jb->dur_s = duration_on(s, j, jb->curve, p);
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
     * overrunning the limit for the actuation delay. */
    {
        double lim = facility_budget(s, (double)s->now_us / US);

        if (isfinite(lim) &&
            facility_w(s) + s->sc->pue * s->in->wl->jobs[j].n_gpus * (g->max_limit_w - g->idle_w) >
                lim)
            jb->cap_w = g->min_limit_w;
    }
    jb->slot = s->n_running;
    s->running[s->n_running++] = j;
    s->si[jb->slot] = (struct slot_info){
        jb->dur_s, s->in->wl->jobs[j].tokens, jb->done, jb->cap_w, 0, jb->active, jb->n_gpus};
    s->epoch++;
    s->view_ok[jb->slot] = false; /* built when a policy is asked (control) */
    if (s->groups_on) { /* in its class's group, its view and decision at the next decision */
        uint32_t k = class_of(s, jb->curve, s->in->wl->jobs[j].n_gpus);
        uint32_t *f;

        if (k == UINT32_MAX || groups_reserve(s) || group_put(s, k, jb->slot) ||
            !(f = pfs__grow(s->fresh, &s->fresh_cap, s->n_fresh, sizeof *s->fresh, 256)))
            return pfs__diag_set(s->diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        s->fresh = f;
        s->fresh[s->n_fresh++] = (uint32_t)j;
        s->cls[jb->slot] = k;
        jb->cls = k;
    }
    s->full_gpu_w += full_draw_w(s, j);
    s->floor_gpu_w += floor_draw_w(s, j);
    s->free_gpus[p] -= s->in->wl->jobs[j].n_gpus;
    s->res->jobs_started++;
    s->res->pool[p].jobs_started++;
    return set_rate(s, j);
}

/* The first pool, in the facility's order, where job j can start now; -1 if none. */
static int
fit_now(const struct sim *s, size_t j)
{
    for (size_t p = 0; p < s->in->n_pools; p++)
        if (curve_on(s, j, p) != SIZE_MAX && s->in->wl->jobs[j].n_gpus <= s->free_gpus[p])
            return (int)p;
    return -1;
}

struct fin {
    double key;
    size_t job;
    int gpus;
};

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

        if (curve_on(s, head, p) == SIZE_MAX)
            continue;
        if (s->reference) {
            size_t m = 0, n = 0;

            for (size_t r = 0; r < s->n_running; r++) {
                size_t j = s->running[r];

                if (job_rec(s, j)->pool == (int)p)
                    fin[n++] = (struct fin){finish_key(s, j), j, s->in->wl->jobs[j].n_gpus};
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

static void put_result(struct sim *s, size_t j);

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
        size_t c = curve_on(s, j, p);

        if (c != SIZE_MAX)
            best = fmin(best, duration_on(s, j, c, p));
    }
    if (!(now + best > w->deadline_s))
        return false;
    s->live_of[j] = JOB_REFUSED;
    s->res->jobs_refused++;
    if (s->jobs)
        put_result(s, j); /* (final now: out of the window's way) */
    return true;
}

/* FIFO with EASY backfill, over the pools: a job starts on the first pool (in the
 * facility's order) that can run it and has the GPUs; the head of the queue holds a
 * reservation on the pool that frees enough GPUs for it soonest, and a later job may start
 * before it only where it cannot delay that reservation. With one pool this is EASY as
 * usual. */
/* EASY backfill as schedule() below, on the indexed queue (sim/queue.c): the same jobs
 * started in the same order, without a scan of the queue. Used where schedule_ok() holds:
 * one pool (a job's run time then does not depend on where it runs) and no admission (no
 * queued job to refuse on the way). */
static int
schedule_indexed(struct sim *s)
{
    int rc = 0, p, res_pool, extra;
    double shadow, now;
    size_t head, after, j;

    if (s->free_gpus[0] <= 0 || pfs__queue_len(s->iq) == 0)
        return 0;
    while ((head = pfs__queue_head(s->iq)) != SIZE_MAX) {
        if ((p = fit_now(s, head)) < 0)
            break;
        pfs__queue_remove(s->iq, head);
        if ((rc = start_job(s, head, (size_t)p)))
            return rc;
    }
    if (pfs__queue_len(s->iq) < 2 || !pfs__queue_any_within(s->iq, s->free_gpus[0], head))
        return 0; /* nothing to backfill: no later job fits in the free GPUs now */
    if ((rc = reserve(s, head, &res_pool, &shadow, &extra)))
        return rc;
    now = (double)s->now_us / US;
    after = pfs__queue_rank(s->iq, head);
    /* The candidates in queue order: every later job that fits now and either fits in the
     * GPUs the head will not need (extra) or may end before the shadow time. The index
     * finds them with a bound a little wider than the scheduler's test, which is then made
     * exactly as schedule() makes it. */
    for (unsigned slot = 0;
         rc == 0 && (j = pfs__queue_next(s->iq, after, s->free_gpus[0], extra,
                                         (shadow - now) * (1 + 1e-12) + 1e-6, slot)) != SIZE_MAX;
         slot = 1) {
        const struct pfs_workload_job *w = &s->in->wl->jobs[j];
        bool ends_before = now + duration_on(s, j, curve_on(s, j, 0), 0) <= shadow;

        after = pfs__queue_rank(s->iq, j);
        if (!ends_before && w->n_gpus > extra)
            continue;
        if (!ends_before)
            extra -= w->n_gpus;
        pfs__queue_remove(s->iq, j);
        rc = start_job(s, j, 0);
    }
    return rc;
}

static int
schedule(struct sim *s)
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
        if ((p = fit_now(s, head)) < 0)
            break;
        s->q_head++;
        s->q_len--;
        if ((rc = start_job(s, head, (size_t)p)))
            return rc;
    }
    if (s->q_len > 1) {
        bool fits = false;

        /* Nothing to backfill unless some later job fits in the free GPUs now. */
        for (size_t q = 1; q < s->q_len && !fits; q++)
            fits = fit_now(s, s->queue[s->q_head + q]) >= 0;
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
                size_t c = curve_on(s, j, pp);

                if (c == SIZE_MAX || w->n_gpus > s->free_gpus[pp])
                    continue;
                if ((int)pp != res_pool) {
                    on = (int)pp;
                    break;
                }
                ends_before = (double)s->now_us / US + duration_on(s, j, c, pp) <= shadow;
                if (ends_before || w->n_gpus <= extra)
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
            rc = start_job(s, j, (size_t)on);
        }
    }
    return rc;
}

/* ----- control ----- */

/* Whether (pause, active) moves the pause or the GPUs of the job of record jb. */
static inline bool
pausing_moves(const struct job *jb, double pause, int active)
{
    return pause < jb->pause || pause > jb->pause || active != jb->active;
}

/* Moves job j to (cap, pause), charging the overheads of a change of pausing: a job that
 * starts pausing (or stops running altogether) checkpoints once, one that stops pausing (or
 * runs again at all) restarts once. */
static int
transition_rec(struct sim *s, size_t j, struct job *jb, double cap, double pause, int active)
{
    /* (its cap alone, mostly: every job at every decision of an event under equal) */
    bool same_pause = !pausing_moves(jb, pause, active);
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
    mark_rec(s, jb);
    rc = set_rate_rec(s, j, jb);
    if (rc == 0 && jb->resume_until_us > s->now_us)
        rc =
            pfs__heap_push(&s->heap, jb->resume_until_us, PFS__EV_ACTUATE, (uint32_t)j, UINT32_MAX);
    if (rc == 0 && jb->ckpt_until_us > s->now_us)
        rc = pfs__heap_push(&s->heap, jb->ckpt_until_us, PFS__EV_ACTUATE, (uint32_t)j, UINT32_MAX);
    return rc;
}

static int
transition(struct sim *s, size_t j, double cap, double pause, int active)
{
    return transition_rec(s, j, job_rec(s, j), cap, pause, active);
}

/* Discrete pausing's effective pause of job j now: whole (1) inside its pause, none (0)
 * outside it. */
static double
discrete_pause(const struct sim *s, size_t j)
{
    return job_rec(s, j)->dpause_until_us > s->now_us ? 1 : 0;
}

static double limit_lifts(const struct sim *s, double t);

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
    double now = (double)s->now_us / US, lift = limit_lifts(s, now), need = 0, saved = 0;
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
             * tier's tolerance over the span (for an event scaled to its run as control()
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
        save = jb->pend_active * (jb->pend_cap - job_gpu(s, j)->idle_w);
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

static int
apply(struct sim *s, uint32_t round)
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
        rc = transition(s, j, jb->pend_cap, pause, jb->pend_active);
    }
    return rc;
}

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

    if (s->reference || s->sc->discrete_pauses) { /* (apply() goes job by job) */
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
    const struct pfs_gpu *g = rec_gpu(s, jb);
    double pause = e->pause;

    if (now < jb->ckpt_until_us || now < jb->resume_until_us || pausing_moves(jb, pause, e->active))
        return transition_rec(s, j, jb, e->cap, e->pause, e->active);
    /* unchanged: its rate and finish time stand (told by the bits: caps are checked to lie
     * within the GPU's limits, which models/gpu.c keeps above 0, and positive doubles are
     * equal exactly where their bits are) */
    if (memcmp(&e->cap, &jb->cap_w, sizeof e->cap) == 0)
        return 0;
    jb->cap_w = e->cap;
    jb->pause = pause;
    if (isnan(cl->rate)) {
        const struct corpus_curve *c = rec_curve(s, jb);
        double env;

        curve_at(s, jb, c, e->cap, &env, &cl->power);
        cl->rate = rate_of(c, env, pause, jb->active, jb->n_gpus);
        cl->gpu = NULL;
    }
    if (g != cl->gpu) { /* (mark_rec's test and set_rate_rec's draw, on this GPU) */
        cl->gpu = g;
        cl->gw = draw_of(cl->power, g->idle_w, pause, jb->active, jb->n_gpus);
        cl->reduced = e->cap < g->max_limit_w || pause > 0;
    }
    set_reduced(s, jb, cl->reduced);
    return rate_commit(s, j, jb, cl->rate, cl->gw);
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
                rc = transition(s, j, s->land_dec[r].cap, s->land_dec[r].pause,
                                s->land_dec[r].active);
        }
        for (; !marked && q < m && s->land[q].slot == r; q++) {
            const struct decided *e = &s->dq[s->land[q].q];

            if (rc == 0)
                rc = transition(s, j, e->cap, e->pause, e->active);
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
static int
actuate(struct sim *s, uint32_t round)
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
             * order in which apply() would meet them going through every running job. */
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

                rc = transition(s, e->job, e->cap, e->pause, e->active);
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
        rc = apply(s, b.round);
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
            view_fill(s, r);
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
 * budget, which control() handles), or an error. */
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
        if (groups_reserve(s))
            return pfs__diag_set(s->diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        for (size_t r = 0; r < s->n_running; r++) {
            if (group_put(s, s->cls[r], r))
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
                view_fill(s, r);
                s->view_ok[r] = true;
            }
        }
        if (!s->cls) {
            groups_off(s);
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

static int
control(struct sim *s)
{
    double t = (double)s->now_us / US, period, fac, gpu_budget, until = HUGE_VAL, ev_len, committed;
    bool reuse, stepped, by_class, all_loss;
    size_t from;
    int rc;

    if ((rc = schedule(s)))
        return rc;
    if (s->n_running == 0)
        return 0;
    period = in_event(s, t) ? s->sc->event_cadence_s : s->sc->cadence_s;
    /* An event's baseline is the facility's power when the event first enters the window
     * this decision plans for (at its start at the latest): before any cap it causes. */
    for (size_t q = s->dr_live; q < s->sc->n_dr; q++) {
        size_t k = s->dr_by_start[q];
        const struct pfs_dr_event *e = &s->sc->dr[k];

        if (!(e->start_s < t + fmin(period, 3600) + s->sc->actuation_s))
            break; /* it and every later one start after the window */
        if (!(s->dr_baseline_w[k] > 0) && t >= e->start_s - e->notice_s && t < pfs_dr_over_s(e))
            s->dr_baseline_w[k] = dr_baseline(s, k, t);
    }
    fac = budget_ahead(s, t, fmin(period, 3600), s->sc->actuation_s);
    s->round++;
    /* A limit the facility meets with every running job at full power does not bind: as
     * without one, no policy is asked (a policy must not change a job's power when nothing
     * needs saving, and asking it costs work at every step). */
    if (isfinite(fac) && s->sc->pue * (s->full_gpu_w + free_idle_w(s) + s->in->other_w) <= fac)
        fac = HUGE_VAL;
    from = batch_open(s);
    if (!isfinite(fac)) {
        /* No binding limit: full power, no policy asked; only jobs not there yet change. */
        bool any = false;

        s->track_k = 1;
        s->planned_w[0] = NAN;
        s->planned_round = s->round;
        s->memo_ok = false; /* the caps in effect are no longer the last decision's */
        if (s->views_any) { /* no policy until a limit binds again: stop moving views */
            memset(s->view_ok, 0, s->n_running * sizeof *s->view_ok);
            s->no_pred[0] = s->no_pred[1] = 0;
            s->views_any = false;
            groups_off(s);
        }
        if (s->n_reduced == 0)
            return 0;
        for (size_t r = 0; r < s->n_running; r++) {
            struct job *jb = job_rec(s, s->running[r]);
            const struct pfs_gpu *g = job_gpu(s, s->running[r]);

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

        gpu_budget = fac / s->sc->pue - s->in->other_w - free_idle_w(s);
        until = limit_lifts(s, t);
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
            double metered = facility_w(s), set_for = s->planned_w[1];

            if (!isfinite(s->planned_w[0]))
                s->track_k = 1; /* the limit starts to bind now */
            else if (s->applied_round != s->k_round && isfinite(set_for) && metered > 0 &&
                     (set_for < metered || s->planned_tight[1]))
                s->track_k =
                    fmin(1.25, fmax(0.75, s->track_k * fmin(1.1, fmax(0.9, set_for / metered))));
            s->k_round = s->applied_round; /* once per decision that took effect */
            gpu_budget *= s->track_k;
        }
        s->planned_w[0] = fac;
        s->planned_round = s->round;
        ev_len = event_length(s, t);
        reuse = !s->reference && s->memo_ok && pfs_policy_memoryless(s->policy) &&
                s->memo_epoch == s->epoch && !(s->memo_budget < gpu_budget) &&
                !(s->memo_budget > gpu_budget) && !(s->memo_ev_len < ev_len) &&
                !(s->memo_ev_len > ev_len);
        /* What the decision commits (pfs_alloc_power_w over the jobs): the policy's check
         * adds it up; a reused decision's is the one it was made with. */
        committed = s->memo_committed;
        stepped = false;
        by_class = false;
        if (!reuse && s->by_class) {
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

                rc = s->sla_kept[0] ? pfs__sla_decide_kept(&v, kept, s->ad, &committed, &d)
                                    : pfs__policy_decide(s->policy, &v, s->ad, &committed, &d);
            }
            if (rc == PFS_EINVAL) {
                /* The budget cannot be met with this policy: everyone at the minimum cap;
                 * the overrun shows in DR compliance. */
                committed = 0;
                for (size_t r = 0; r < s->n_running; r++) {
                    s->ad[r] = (struct pfs_alloc_decision){
                        .cap_w = job_gpu(s, s->running[r])->min_limit_w};
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
        s->memo_ok = true;
        s->memo_epoch = s->epoch;
        s->memo_budget = gpu_budget;
        s->memo_ev_len = ev_len;
        s->memo_committed = committed;
        s->planned_tight[0] = !stepped && committed >= 0.99 * gpu_budget;
    }
    if ((rc = batch_close(s, from)))
        return rc;
    if (s->sc->actuation_s <= 0)
        return actuate(s, s->round);
    return pfs__heap_push(&s->heap, s->now_us + (int64_t)(s->sc->actuation_s * US), PFS__EV_ACTUATE,
                          0, s->round);
}

/* ----- metrics ----- */

static int
minute(struct sim *s)
{
    double t1 = (double)s->now_us / US, t0 = (double)s->m_start_us / US, len = t1 - t0;
    double p = len > 0 ? s->m_energy / len : facility_w(s);
    double target = facility_budget(s, t0 + len / 2);
    long ev = event_at(s, t0 + len / 2);

    if (ev >= 0 && isfinite(target)) {
        /* Capping alone cannot go below every running job at its minimum cap: a target
         * under that floor needs pausing (or is missed). */
        double floor = s->sc->pue * (s->floor_gpu_w + free_idle_w(s) + s->in->other_w);

        if (floor > target * (1 + 1e-9))
            s->ev_floor_over[ev] = fmax(s->ev_floor_over[ev], floor - target);
        if (p > target * (1 + 1e-9)) {
            s->res->dr_minutes_over += len / 60;
            s->res->dr_worst_excess_w = fmax(s->res->dr_worst_excess_w, p - target);
            s->res->dr_energy_over_j += (p - target) * len;
            s->ev_over_min[ev] += len / 60;
        }
    }
    if (len > 0)
        s->minute_w[s->n_minutes++] = p;
    if (s->ts && len > 0) {
        int paused = 0, rc;

        /* (none where no job is reduced, a paused one being reduced: most minutes, outside
         * events, skip the pass over the running jobs, 15% of a year's run with its time
         * series) */
        for (size_t r = 0; s->n_reduced > 0 && r < s->n_running; r++)
            paused += job_rec(s, s->running[r])->pause >= 1;
        rc = ts_append(s->ts,
                       &(struct pfs_ts_row){t0, p, s->m_gpu_energy / len,
                                            isfinite(target) ? target : (double)NAN,
                                            s->m_tokens / len, (int)s->n_running - paused, paused});
        if (rc == PFS_EIO)
            return pfs__diag_set(s->diag, rc, NULL, 0, 0, NULL,
                                 "the time series' temporary file: %s", strerror(errno));
        if (rc)
            return pfs__diag_set(s->diag, rc, NULL, 0, 0, NULL, "out of memory");
    }
    s->m_energy = s->m_gpu_energy = s->m_tokens = 0;
    s->m_start_us = s->now_us;
    return 0;
}

/* Job j's row of the per-job results, now, into the run's results (a finished or refused
 * job's is final): from its record while it has one (running, or finishing now), from the
 * workload if it never started. */
static void
put_result(struct sim *s, size_t j)
{
    enum job_state st = job_state(s, j);
    struct pfs_job_result r;

    memset(&r, 0, sizeof r); /* (its padding too: the bytes go to the spill) */
    if (st == QUEUED || st == REFUSED) {
        r.start_s = r.finish_s = NAN;
        r.pool = -1;
        r.curve = s->in->job_curve[j];
        r.duration_s = s->in->wl->jobs[j].duration_s;
        r.refused = st == REFUSED;
    } else {
        const struct job *jb = job_rec(s, j);

        r.start_s = (double)jb->start_us / US;
        r.finish_s = jb->state == DONE ? (double)jb->finish_us / US : (double)NAN;
        r.tokens_done = jb->done;
        r.pool = jb->pool;
        r.curve = jb->curve;
        r.duration_s = jb->dur_s;
        r.given_up = jb->given_up;
    }
    jr_put(s->jobs, j, &r);
}

/* Records started job j's throughput loss for summarise(): 1 - its tokens over what full
 * power on its pool would have given it in its time in the run, up to its finish or, still
 * running, the end (pauses, caps and restarts all count). A finished job's record goes at
 * its finish, so the loss is kept as it finishes. Returns 0 or PFS_ENOMEM. */
static int
record_loss(struct sim *s, size_t j)
{
    const struct job *jb = job_rec(s, j);
    double from = (double)jb->start_us / US, loss, *g;
    double until = jb->state == DONE ? (double)jb->finish_us / US : (double)s->end_us / US;

    if (!(until > from))
        return 0;
    loss = 1 - jb->done / (s->in->wl->jobs[j].tokens / jb->dur_s * (until - from));
    loss = fabs(loss) < 1e-9 ? 0 : fmax(0, loss); /* rounding, not loss */
    if (!(loss > 0)) {                            /* most jobs: counted, not kept */
        s->n_loss_zero++;
        return 0;
    }
    if (!(g = pfs__grow(s->loss, &s->loss_cap, s->n_loss, sizeof *s->loss, 4096)))
        return PFS_ENOMEM;
    s->loss = g;
    s->loss[s->n_loss++] = loss;
    return 0;
}

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
    touch(s, j);
    s->total_rate -= jb->rate;
    s->gpu_w_total -= jb->gpu_w;
    s->pool_rate[jb->pool] -= jb->rate;
    s->pool_gpu_w[jb->pool] -= jb->gpu_w;
    s->full_gpu_w -= full_draw_w(s, j);
    s->floor_gpu_w -= floor_draw_w(s, j);
    jb->rate = jb->gpu_w = 0;
    jb->state = DONE;
    mark(s, j);
    jb->finish_us = s->now_us;
    pfs__fheap_del(&s->fh, (uint32_t)slot);         /* (taken when it came out) */
    for (int e = 0; e < 2 && s->view_ok[slot]; e++) /* (its view goes) */
        s->no_pred[e] -= s->pred[e][slot].n == 0;
    s->running[slot] = s->running[--s->n_running];
    job_rec(s, s->running[slot])->slot = slot;
    s->si[slot] = s->si[s->n_running];
    s->epoch++;
    if (s->groups_on) /* (before view_move writes over its class) */
        group_take(s, s->cls[slot], slot);
    if (slot != s->n_running) {
        if (s->view_ok[s->n_running])
            view_move(s, s->n_running, slot);
        s->view_ok[slot] = s->view_ok[s->n_running];
    }
    s->view_ok[s->n_running] = false;
    if (s->groups_on && slot != s->n_running) { /* the last slot's job moved into this one */
        uint32_t k = s->cls[s->n_running];

        group_take(s, k, s->n_running);
        (void)group_put(s, k, slot); /* no memory needed: one was just taken */
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
    own_curve_end(s, j);
    if (s->jobs)
        put_result(s, j);
    rc = record_loss(s, j);
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

/* The q-quantile of `zeros` zeros followed by the n sorted values v (linear between order
 * statistics, as GSL's gsl_stats_quantile_from_sorted_data over all of them). */
static double
quantile(const double *v, size_t zeros, size_t n, double q)
{
    double h = (double)(zeros + n - 1) * q, a, b;
    size_t i = (size_t)floor(h);

    if (zeros + n == 0)
        return NAN;
    a = i < zeros ? 0 : v[i - zeros];
    if (i + 1 >= zeros + n)
        return a;
    b = i + 1 < zeros ? 0 : v[i + 1 - zeros];
    return a + (h - (double)i) * (b - a);
}

/* The planner's summary of a finished run (docs/results.md): peak and p99 facility draw,
 * each event met or missed and whether capping alone could meet it, and the distribution
 * of the jobs' throughput loss. Sorts s->minute_w. */
static int
summarise(struct sim *s)
{
    struct pfs_run_result *out = s->res;
    double end_s = (double)s->end_us / US, *loss;
    size_t n = 0, zeros;

    out->cap_w = s->sc->base_cap_w > 0 ? s->sc->base_cap_w : (double)NAN;
    pfs__sort_doubles(s->minute_w, s->n_minutes);
    out->peak_facility_w = s->n_minutes ? s->minute_w[s->n_minutes - 1] : (double)NAN;
    out->p99_facility_w = quantile(s->minute_w, 0, s->n_minutes, 0.99);
    for (size_t k = 0; k < s->sc->n_dr; k++) {
        if (!(s->sc->dr[k].start_s < end_s))
            continue;
        out->dr_events++;
        if (s->ev_over_min[k] > 0)
            out->dr_events_missed++;
        else
            out->dr_events_met++;
        if (s->ev_floor_over[k] > 0) {
            out->dr_events_uncappable++;
            out->dr_floor_excess_w = fmax(out->dr_floor_excess_w, s->ev_floor_over[k]);
        }
    }
    /* the jobs still running (the finished ones' went in at their finish) */
    for (size_t r = 0; r < s->n_running; r++) {
        int rc = record_loss(s, s->running[r]);

        if (rc)
            return rc;
    }
    /* In order: the zeros first (each adds nothing to the mean), then the losses kept. */
    loss = s->loss;
    n = s->n_loss;
    zeros = s->n_loss_zero;
    pfs__sort_doubles(loss, n);
    out->job_loss_mean = 0;
    for (size_t i = 0; i < n; i++)
        out->job_loss_mean += loss[i] / (double)(zeros + n);
    if (zeros + n == 0)
        out->job_loss_mean = NAN;
    out->job_loss_p50 = quantile(loss, zeros, n, 0.5);
    out->job_loss_p95 = quantile(loss, zeros, n, 0.95);
    out->job_loss_max = n ? loss[n - 1] : zeros ? 0 : (double)NAN;
    return 0;
}

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
        if (curve_on(s, j, 0) == SIZE_MAX || (edf && isnan(s->in->wl->jobs[j].deadline_s)))
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
        dur[j] = duration_on(s, j, curve_on(s, j, 0), 0);
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
    s.end_us = (int64_t)(sc->days * 86400 * US);
    {
        const char *env = getenv("PFISIM_SCAN_BACKFILL");

        s.reference = sc->scan_backfill || (env && strcmp(env, "1") == 0);
    }
    s.by_class = !s.reference && !sc->discrete_pauses && s.cls && pfs__policy_by_class(s.policy);
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
        (rc = pfs__fheap_init(&s.fh, most)) != 0 || (jobs && (rc = jr_begin(jobs, n)) != 0) ||
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
        size_t nk = dr_kinks(e, kinks);

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
        advance(&s, ev.t_us);
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
                if (pfs__queue_len(s.iq) == 0 && (p = fit_now(&s, ev.job)) >= 0)
                    rc = start_job(&s, ev.job, (size_t)p);
                else
                    pfs__queue_push(s.iq, ev.job); /* its place in queue order is its rank */
                if (rc == 0)
                    rc = control(&s);
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
            rc = control(&s);
            break;
        case PFS__EV_FINISH:
            if ((rc = finish(&s, ev.job, ev.version)) == 0) /* (version: its slot) */
                rc = control(&s);
            break;
        case PFS__EV_CONTROL: {
            double t = (double)s.now_us / US, next;

            /* A DR event starts: its baseline, unless planning took it before; an average
             * over a window before the start is taken again now that the window is over
             * (planning had only the minutes up to then). */
            if (ev.version == 1 &&
                (!(s.dr_baseline_w[ev.job] > 0) || sc->dr[ev.job].baseline == PFS_BASELINE_AVERAGE))
                s.dr_baseline_w[ev.job] = dr_baseline(&s, ev.job, t);
            rc = control(&s); /* version 3: a discrete pause's replacement (discrete_select) */
            if (ev.version == 0 && rc == 0) { /* the cadence */
                next = in_event(&s, t) ? sc->event_cadence_s : sc->cadence_s;
                rc =
                    pfs__heap_push(&s.heap, s.now_us + (int64_t)(next * US), PFS__EV_CONTROL, 0, 0);
            }
            break;
        }
        case PFS__EV_ACTUATE:
            if (ev.version == UINT32_MAX) /* a resume or checkpoint overhead ends */
                rc = job_state(&s, ev.job) == RUNNING ? set_rate(&s, ev.job) : 0;
            else if (ev.version == UINT32_MAX - 1) { /* a discrete pause's allowance is spent */
                struct job *jb = job_state(&s, ev.job) == RUNNING ? job_rec(&s, ev.job) : NULL;

                if (jb && jb->dpause_until_us == s.now_us) {
                    jb->dpause_until_us = 0;
                    jb->dpause_left_us = 0;
                    rc = transition(&s, ev.job, jb->cap_w, 0, jb->active);
                }
            } else
                rc = actuate(&s, ev.version);
            break;
        case PFS__EV_MINUTE:
            rc = minute(&s);
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
                touch(&s, j);
            if (st != DONE && st != REFUSED && in->wl->jobs[j].deadline_s < secs)
                out->deadline_misses++;
            if (jobs && st != DONE && st != REFUSED) /* (theirs went in then) */
                put_result(&s, j);
        }
        if (ts && ts->spill && fflush(ts->spill) != 0) { /* (read back positioned: whole) */
            rc = pfs__diag_set(diag, PFS_EIO, NULL, 0, 0, NULL,
                               "the time series' temporary file: %s", strerror(errno));
            goto out;
        }
        if (jobs && jr_end(jobs) != 0) {
            rc = pfs__diag_set(diag, PFS_EIO, NULL, 0, 0, NULL,
                               "cannot write the job results to their temporary file (a full "
                               "disk?)");
            goto out;
        }
        out->tokens = s.tokens;
        out->mean_tps = s.tokens / secs;
        out->energy_j = s.energy_j;
        out->tokens_per_j = s.energy_j > 0 ? s.tokens / s.energy_j : 0;
        if ((rc = summarise(&s)))
            pfs__diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
    }
out:
    pfs__queue_free(s.iq);
    pfs__order_free(s.ord);
    free(s.ord_late);
    pfs__lazy_free(s.minute_w);
    free(s.ev_over_min);
    free(s.ev_floor_over);
    free(s.dr_by_start);
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
    bool shared = !(sc->base_cap_w > 0), shift, own;
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
    if (sc->base_cap_w > 0)
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
