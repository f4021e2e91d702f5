/*
 * sim/engine.h - the engine's private header: struct sim and the run's other types, shared by
 * the engine's files (sim/sim.c, setup.c, record.c, dr.c, power.c, classes.c, schedule.c,
 * pausing.c, control.c), and each file's functions that another calls.
 *
 * Layers within the engine, bottom up (a file calls only those before it; make layers checks
 * it): setup, nodes, power, dr, record, classes, schedule, pausing, control, sim (the loop).
 * Nothing outside these files includes this header: the rest of pfisim sees the engine through
 * sim/pfisim.h (pfs_sim_*) alone.
 */
#ifndef PFISIM_ENGINE_H
#define PFISIM_ENGINE_H

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../policies/truth.h"
#include "heap.h"
#include "order.h"
#include "queue.h"

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

static inline int
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
    uint32_t *job_on; /* n_jobs x n_pools: pfs__class_curve_on() for job j on pool p, UINT32_MAX for
                       * SIZE_MAX (one read where there were three, at every start and
                       * backfill test) */
    size_t *curve_on; /* n_curves x n_pools: the curve a job of curve k runs on pool p (k
                       * itself on its own GPU, its measured twin on another), SIZE_MAX: it
                       * cannot run there */
    struct nodr *nodr; /* the run without DR events, when the same for every policy */
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
    /* Holding a limit (control.over_limit = "hold"): paused by the engine now (held), ever
     * (held_ever); and, started under a limit its floor did not fit at once, when its
     * launch ends: until then it draws idle and makes no progress, while the decision that
     * makes room for it takes effect (0: none). */
    bool held, held_ever;
    int64_t launch_until_us;
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

/* The power tree during a run (sim/nodes.c, issue 58). A running job sits in one rack, or,
 * larger than any rack of its pool, on whole racks it holds alone (its node: the lowest one
 * above them all). Every node's IT power is kept as it moves (w: its nodes' other draw, its
 * free GPUs' idle draw and its share of each job's draw) and integrated lazily, node by
 * node, to the minute. */
struct nplace { /* a placement: where a job goes, or went */
    uint32_t node, n_racks;
    uint32_t *racks; /* n_racks racks (one: &rack) */
    int *mine;       /* its GPUs in each */
    uint32_t rack;
    int one;      /* its GPUs, when in one rack */
    double box_w; /* per-GPU cap its whole racks' limits allow (HUGE_VAL: none) */
};
struct nodes {
    struct pfs_power_tree *t; /* facility.tree expanded (sim/tree.c): the run's */
    bool limited;             /* some node below the root has a limit */
    size_t n;
    bool spread;
    /* per node: IT power now, W; this minute's energy up to t_us, J; what its GPUs no job
     * holds and its nodes' other draw take (fixed); its jobs' GPUs at their top and at their
     * lowest limits */
    double *w, *e, *fixed, *jfull, *jfloor, *lim;
    int64_t *t_us;
    double *add; /* scratch: a placement's share per node (0 outside one) */
    /* per rack: its free GPUs, its GPUs, the job + 1 holding it alone (0: none) */
    int *room, *cap;
    uint32_t *owner;
    uint32_t *racks_of[PFS_MAX_POOLS]; /* each pool's racks, in the tree's order */
    size_t n_racks_of[PFS_MAX_POOLS];
    int max_cap[PFS_MAX_POOLS];
    /* per node, over the run */
    double *peak, *at_min, *over_min, *worst, *energy;
    uint32_t *hist; /* n x NODE_BINS minute means */
    /* per running slot, moved with it: where it sits (node_of: the decision's job_node) */
    struct nplace *slot;
    uint32_t *node_of;
    /* placement's scratch */
    uint32_t *p_racks;
    int *p_mine;
    size_t p_cap;
    /* a decision's: per node the GPU budget (lim), names, parents */
    int32_t *parent;
    const char **name;
    uint32_t *h_node; /* hold_decide's job_node for the jobs not held */
    uint8_t *waited;  /* per workload job, a bit: it waited for a place (counted once) */
};
enum { NODE_BINS = 1024 };

/* The progress hook (pfs_sim_set_progress): told every simulated hour of every run. */

struct hcand;

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
    /* Holding a limit (sim/pausing.c, pfs__pause_hold): the running jobs held paused, the
     * hold's scratch, and per workload job a bit: admission by power held it back */
    size_t n_held;
    struct hcand *hc;
    size_t hc_cap;
    uint8_t *held_back;
    double admit_lim; /* admission by power's limit (sim/schedule.c, hold_limit) at admit_us, the
                       * instant it was worked out for (-1: none): a pass of the scheduler
                       * tries many jobs at one instant */
    int64_t admit_us;
    double full_floor_w; /* the facility at full occupancy, every GPU at its lowest limit
                          * (check's capping floor): a limit above it capping alone holds */
    /* the policy's view of the jobs not held, while some are (control's, hold_view) */
    struct pfs_alloc_job *h_aj;
    struct pfs_telemetry *h_at;
    struct pfs_alloc_decision *h_ad;
    struct pfs_pwl *h_hull, *h_power;
    size_t *h_slot, h_cap;
    struct pfs_truth h_truth;
    double *h_rank; /* the policy's pause_rank per slot (hold_rank) */
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
    struct nodes *nd;     /* the power tree's limits held (below its root), or NULL */
    int64_t next_tick_us; /* the cadence's next control step (a start under a tree waits
                           * for it where it does not fit: sim/schedule.c) */
    double cap_w;         /* the standing cap held, W (0: none): pfs_scenario_cap_w */
};

enum { JOB_REFUSED = UINT32_MAX - 1, JOB_DONE = UINT32_MAX };

/* Running job j's record (s->live); job_state() says whether it has one. (No assert
 * here: it is on every path of the event loop, and cost 4% of a run on 100,000 GPUs.) */
static inline struct job *
job_rec(const struct sim *s, size_t j)
{
    return &s->live[s->live_of[j] - 1];
}

/* Whether admission by power has held job j back (its bit in sim.held_back). */
static inline bool
held_back(const struct sim *s, size_t j)
{
    return s->held_back && (s->held_back[j / 8] >> (j % 8) & 1);
}

static inline enum job_state
job_state(const struct sim *s, size_t j)
{
    uint32_t l = s->live_of[j];

    return l == 0 ? QUEUED : l == JOB_DONE ? DONE : l == JOB_REFUSED ? REFUSED : RUNNING;
}

/* A running job in the scheduler's reservation: its estimated finish, index and GPUs
 * (sim/schedule.c; the array is the run's, s->fin). */
struct fin {
    double key;
    size_t job;
    int gpus;
};

/* ----- each file's functions that another file of the engine calls ----- */

/* sim/setup.c */
int pfs__setup_tabulate(struct corpus_curve *cc, const struct pfs_job_curve *jc,
                        const struct pfs_gpu *g, struct pfs_diag *diag);

/* sim/nodes.c */
int pfs__nodes_new(struct sim *s, struct pfs_power_tree *t, size_t most);
void pfs__nodes_free(struct sim *s);
int pfs__nodes_place(struct sim *s, int p, int n, double floor_w, struct nplace *pl);
bool pfs__nodes_fit(const struct sim *s, const struct nplace *pl, int n, double per_gpu_w);
int pfs__nodes_take(struct sim *s, size_t slot, const struct nplace *pl, int n, double idle_w,
                    double full_w, double floor_w);
void pfs__nodes_release(struct sim *s, size_t slot, int n, double idle_w, double full_w,
                        double floor_w);
void pfs__nodes_move(struct sim *s, size_t from, size_t to);
void pfs__nodes_draw(struct sim *s, size_t slot, int n, double dw);
bool pfs__nodes_bind(const struct sim *s);
int pfs__nodes_room(const struct sim *s, int p);
void pfs__nodes_budgets(struct sim *s, double root_w);
void pfs__nodes_minute(struct sim *s, double len);
int pfs__nodes_results(struct sim *s);

/* sim/record.c */
int pfs__record_jr_begin(struct pfs_job_results *jr, size_t n);
int pfs__record_jr_end(struct pfs_job_results *jr);
int pfs__record_minute(struct sim *s);
void pfs__record_put_result(struct sim *s, size_t j);
int pfs__record_loss(struct sim *s, size_t j);
int pfs__record_summarise(struct sim *s);

/* sim/dr.c */
size_t pfs__dr_kinks(const struct pfs_dr_event *e, double *out);
double pfs__dr_baseline(const struct sim *s, size_t k, double t);
double pfs__dr_event_length(const struct sim *s, double t);
bool pfs__dr_in_event(const struct sim *s, double t);
long pfs__dr_event_at(const struct sim *s, double t);
double pfs__dr_limit_lifts(const struct sim *s, double t);
double pfs__dr_facility_budget(const struct sim *s, double t);
double pfs__dr_budget_ahead(const struct sim *s, double t, double period, double actuation);

/* sim/power.c */
const struct corpus_curve *pfs__power_rec_curve(const struct sim *s, const struct job *jb);
const struct corpus_curve *pfs__power_job_curve(const struct sim *s, size_t j);
const struct pfs_gpu *pfs__power_rec_gpu(const struct sim *s, const struct job *jb);
const struct pfs_gpu *pfs__power_job_gpu(const struct sim *s, size_t j);
void pfs__power_curve_at(struct sim *s, const struct job *jb, const struct corpus_curve *c,
                         double cap, double *env, double *power);
double pfs__power_free_idle_w(const struct sim *s);
double pfs__power_facility_w(const struct sim *s);
void pfs__power_advance(struct sim *s, int64_t to_us);
void pfs__power_touch(struct sim *s, size_t j);
double pfs__power_finish_key(const struct sim *s, size_t j);
double pfs__power_rate_of(const struct corpus_curve *c, double env, double pause, int active,
                          int n_gpus);
double pfs__power_draw_of(double power, double idle_w, double pause, int active, int n_gpus);
int pfs__power_set_rate_rec(struct sim *s, size_t j, struct job *jb);
int pfs__power_set_rate(struct sim *s, size_t j);
double pfs__power_full_draw_w(const struct sim *s, size_t j);
double pfs__power_floor_draw_w(const struct sim *s, size_t j);
void pfs__power_set_reduced(struct sim *s, struct job *jb, bool reduced);
void pfs__power_mark_rec(struct sim *s, struct job *jb);
void pfs__power_mark(struct sim *s, size_t j);

/* sim/classes.c */
size_t pfs__class_curve_on(const struct sim *s, size_t j, size_t p);
double pfs__class_duration_on(const struct sim *s, size_t j, size_t c, size_t p);
uint32_t pfs__class_of(struct sim *s, size_t c, int n);
void pfs__class_view_fill(struct sim *s, size_t r);
void pfs__class_view_move(struct sim *s, size_t from, size_t to);
int pfs__class_groups_reserve(struct sim *s);
int pfs__class_group_put(struct sim *s, uint32_t k, size_t slot);
void pfs__class_group_take(struct sim *s, uint32_t k, size_t slot);
void pfs__class_groups_off(struct sim *s);
int pfs__class_own_curve_start(struct sim *s, size_t j, size_t p);
void pfs__class_own_curve_end(struct sim *s, size_t j);

/* sim/schedule.c */
int pfs__sched_start_job(struct sim *s, size_t j, size_t p);
int pfs__sched_fit_now(struct sim *s, size_t j);
int pfs__sched_pass(struct sim *s);

/* sim/pausing.c */
bool pfs__pause_moves(const struct job *jb, double pause, int active);
int pfs__pause_transition_rec(struct sim *s, size_t j, struct job *jb, double cap, double pause,
                              int active);
int pfs__pause_transition(struct sim *s, size_t j, double cap, double pause, int active);
int pfs__pause_apply(struct sim *s, uint32_t round);
int pfs__pause_hold(struct sim *s, double limit_w, const double *(*rank)(struct sim *s),
                    double *held_w);
void pfs__pause_hold_off(struct sim *s);

/* sim/control.c */
int pfs__control_actuate(struct sim *s, uint32_t round);
int pfs__control_step(struct sim *s, bool after_event);

/* ----- the hot path of a change of rate, inline in every file that changes one (sim/power.c,
 * sim/control.c): a call of its own cost 87 M more instructions on equal's 20-event run
 * (docs/benchmarks.md) ----- */

/* Brings the progress of the job of record jb up to now. */
static inline void
touch_rec(struct sim *s, struct job *jb)
{
    jb->done += jb->rate * (double)(s->now_us - jb->last_us) / US;
    jb->last_us = s->now_us;
    if (jb->state == RUNNING)
        s->si[jb->slot].done = jb->done;
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
static inline double
finish_key_left(const struct sim *s, size_t j, const struct job *jb, double left)
{
    return left / (jb->rate > 0 ? jb->rate : s->in->wl->jobs[j].tokens / jb->dur_s);
}

/* Job j (of record jb) at rate and draw gw from now: its progress brought up to now, the
 * totals, its key in the finish order and its finish event moved. Inlined in both its
 * callers whatever the compiler would choose (a call of its own: 87 M more instructions
 * on equal's 20-event run, docs/benchmarks.md). */
static inline __attribute__((always_inline)) int
pfs__power_rate_commit(struct sim *s, size_t j, struct job *jb, double rate, double gw)
{
    double left;

    touch_rec(s, jb);
    if (s->nd) /* (its share of every node's power above it) */
        pfs__nodes_draw(s, jb->slot, jb->n_gpus, gw - jb->gpu_w);
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

#endif
