/*
 * sim/pfisim/policy.h - what an allocation policy may see: the policy ABI (docs/policies.md,
 * "Your own policy"). Installed as <pfisim/policy.h>; sim/pfisim.h includes it.
 *
 * A policy sees a view of the running jobs and a GPU power budget (struct pfs_alloc_view) and
 * returns a per-GPU cap for each job and, where it says it may, a fraction of time paused
 * (struct pfs_alloc_decision). It is described by one struct pfs_policy_ops, the descriptor
 * pfisim's own policies use. A policy built outside pfisim goes in a shared library that
 * exports one function, PFS_POLICY_ENTRY ("pfisim_policy_plugin"), returning a struct
 * pfs_policy_plugin whose abi is the PFS_POLICY_ABI it was compiled with; pfisim refuses a
 * library of another ABI, naming both (pfisim run --policy-lib, policies/plugin.c). Nothing of
 * the engine is here: the true curves are an opaque type only the built-in oracle reads, and a
 * plugin's view never holds them (truth is NULL), so a plugin knows what pfi knows.
 *
 * The helpers a policy may call (water-filling, the equal level, predicted curves, tier
 * floors, errors) are exported by the pfisim executable for its plugins, so a plugin links
 * against nothing: build it with cc -shared -fPIC -I$(PREFIX)/include.
 *
 * The ABI version moves whenever a struct here changes layout or a descriptor field's
 * meaning changes; fields are only ever appended.
 */
#ifndef PFISIM_POLICY_H
#define PFISIM_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The policy ABI this header describes. */
#define PFS_POLICY_ABI 3

/* ---------------------------------------------------------------------------------------
 * Errors
 */

/* The one table of error codes and their messages; pfs_strerror() and the CLI's exit codes
 * are generated from it. Codes are negative so that 0 means success. */
#define PFS_ERRORS(X)                                                                              \
    X(PFS_EINVAL, -1, "invalid input")                                                             \
    X(PFS_EIO, -2, "input/output error")                                                           \
    X(PFS_ENOMEM, -3, "out of memory")                                                             \
    X(PFS_ENUMERIC, -4, "numerical failure")                                                       \
    X(PFS_ERANGE, -5, "value outside the domain")                                                  \
    X(PFS_ENOTFOUND, -6, "not found")                                                              \
    X(PFS_EUSAGE, -7, "invalid usage")                                                             \
    X(PFS_EPOLICY, -8, "policy failure")                                                           \
    X(PFS_EINTR, -9, "interrupted")

enum pfs_error {
    PFS_OK = 0,
#define PFS__ERR_ENUM(name, value, text) name = value,
    PFS_ERRORS(PFS__ERR_ENUM)
#undef PFS__ERR_ENUM
};

/* Returns a static, human-readable message for a PFS_E* code (or "unknown error"). */
const char *pfs_strerror(int code);

/* Where and why something failed. Zero-initialise it (or call pfs_diag_clear) before use;
 * the first error recorded wins, later ones are ignored. */
struct pfs_diag {
    int code;          /* PFS_E* of the first error, 0 while none */
    char file[256];    /* input file, "" when the error has none */
    long line;         /* 1-based line in file, 0 when not applicable */
    long column;       /* 1-based byte column in that line, 0 when not applicable */
    char field[64];    /* column name or setting path, "" when not applicable */
    char message[512]; /* the message, without file/line prefix */
    char text[256];    /* the offending input line (for a caret display), "" if none */
};

void pfs_diag_clear(struct pfs_diag *diag);

/* ---------------------------------------------------------------------------------------
 * Tiers and cuts
 */

/* Tiers: firm, or Flex 1/2/3 tolerating 10/25/50% throughput loss over the job. */
enum pfs_tier { PFS_TIER_FIRM, PFS_TIER_FLEX1, PFS_TIER_FLEX2, PFS_TIER_FLEX3, PFS_N_TIERS };
const char *pfs_tier_name(int tier);
double pfs_tier_max_loss(int tier);

#define PFS_N_CUTS 5 /* PFI is reported at cuts of 10, 20, 30, 40 and 50% */

/* The cut of index k, 0.1 * (k + 1). */
double pfs_cut(size_t k);

/* ---------------------------------------------------------------------------------------
 * The view and the decision (policies/, sim/alloc.c, docs/policies.md): dividing a GPU power
 * budget among running jobs. A policy sees a struct pfs_alloc_view and returns a cap per GPU
 * of each job and, where it may, the fraction of time the job is paused.
 */

/* What an operator observes of a running job: its identity and the telemetry at its uncapped
 * operating point, never a label. Policies and the predictor see this, not pfs_corpus_job. */
struct pfs_telemetry {
    char job_id[32];
    char gpu[32];
    int n_gpus;
    char family[8], phase[16]; /* "" when unknown */
    double power_w, power_frac, sm_clock_mhz, sm_active, tensor_active, dram_active;
    double nvlink_gbps, net_gbps; /* NAN when unknown, as in jobs.csv */
    double tokens_per_s;          /* observed uncapped throughput of the job */
    double pfi_given[PFS_N_CUTS]; /* PFI the operator measured by a sweep, NAN if none */
};

/* The telemetry-to-PFI predictor (models/predict.c), opaque: a policy uses it through
 * pfs_policy_predicted_curve. */
struct pfs_predictor;

/* A piecewise-linear curve: throughput of the whole job against the per-GPU cap. */
#define PFS_PWL_MAX 64
struct pfs_pwl {
    size_t n;              /* points, 1 .. PFS_PWL_MAX */
    double x[PFS_PWL_MAX]; /* per-GPU cap, W, strictly increasing */
    double y[PFS_PWL_MAX]; /* whole-job throughput */
};

/* The value of a pwl at x (clamped into its range; linear between points). */
double pfs_pwl_eval(const struct pfs_pwl *c, double x);

/* Replaces c by its least concave majorant (upper hull) after making it non-decreasing:
 * what a controller can reach by time-sharing between caps (docs/policies.md). */
void pfs_pwl_hull(struct pfs_pwl *c);

/* A job as every policy sees it. */
struct pfs_alloc_job {
    int n_gpus;              /* the fields a decision reads of every job first: in one cache line */
    double min_w, max_w;     /* per-GPU settable limits of its GPU type, W */
    double ref_w;            /* per-GPU reference power (the default limit), W */
    double idle_w;           /* per-GPU draw while paused, W */
    int tier;                /* enum pfs_tier */
    double max_loss;         /* throughput loss it may take now, 0..1: its tier's
                              * (pfs_tier_max_loss), or more during a short DR event */
    double deadline_s;       /* absolute, s; NAN when none (or not simulating) */
    double remaining_tokens; /* NAN unless the simulator provides it */
    double now_s;            /* the decision's time, s (0 in a one-shot allocation) */
    double limit_until_s;    /* when the limit this decision is under is announced to lift
                              * (the end of the DR event's ramp up), s; INFINITY under a
                              * standing cap, or when not known (and in a one-shot
                              * allocation, where 0 is read as not known) */
    double restart_s;        /* a paused job's restart overhead, s (0 when not known) */
    char job_id[32];
};

/* The true curves, opaque: only the oracle (policies/oracle.c) can look inside. */
struct pfs_truth;

struct pfs_alloc_view {
    double budget_w; /* for all GPUs of these jobs, W */
    size_t n_jobs;
    const struct pfs_alloc_job *jobs;      /* n_jobs */
    const struct pfs_telemetry *telemetry; /* n_jobs; NAN fields where unknown */
    const struct pfs_truth *truth;         /* for the oracle; NULL when unknown */
    const struct pfs_predictor *predictor; /* the pfi policy's model; may be NULL */
    /* Optional, from an engine that keeps them: each job's predicted curve (as
     * pfs__predicted_curve makes it) within the predictions [0] and extrapolated [1], made
     * with predicted_by (they stand in only while that is the view's predictor); a curve
     * with n = 0 is made afresh. NULL: none kept. */
    const struct pfs_pwl *predicted[2];
    const struct pfs_predictor *predicted_by;
    /* Optional, with the kept curves: each job's class below n_classes, jobs of one class
     * having the same kept curves and GPU count, bit for bit, so that a policy may
     * water-fill a class at once (pfs__waterfill_classes). NULL: none. */
    const uint32_t *classes;
    uint32_t n_classes;
};

/* What a deadline-aware policy says of a job's deadline (the others leave it KEPT). */
enum pfs_deadline_status {
    PFS_DEADLINE_KEPT = 0, /* kept, or no deadline to keep */
    PFS_DEADLINE_PAST,     /* already past: nothing to keep */
    PFS_DEADLINE_TOO_SLOW, /* not even full power makes it */
    PFS_DEADLINE_BUDGET,   /* given up: the floors of all did not fit the budget */
};

struct pfs_alloc_decision {
    double cap_w;      /* per-GPU cap while running, W */
    double pause_frac; /* fraction of time paused (drawing idle_w), 0..1 */
    int deadline;      /* enum pfs_deadline_status */
    int n_gpus;        /* GPUs it runs on: 0 (or its own count) all of them; fewer: resized, the
                        * rest idle (resize-fair), throughput in proportion */
};

/* The GPUs decision d runs job j on (its own count unless resized). */
static inline int
pfs_alloc_active_gpus(const struct pfs_alloc_job *j, const struct pfs_alloc_decision *d)
{
    return d->n_gpus > 0 && d->n_gpus < j->n_gpus ? d->n_gpus : j->n_gpus;
}

/* A policy's power commitment for job j: its active GPUs x (pause x idle + (1 - pause) x cap),
 * and idle for the GPUs a resize set free. */
double pfs_alloc_power_w(const struct pfs_alloc_job *j, const struct pfs_alloc_decision *d);

/* ---------------------------------------------------------------------------------------
 * The descriptor (STYLE.md, "Pluggable parts")
 */

struct pfs_policy_ops;

struct pfs_params {
    const char *model_path; /* the pfi policy's predictor file (NULL: the view's, or given PFI) */
    /* The descriptor being run: a policy made at run time (an external program's,
     * policies/exec.c) finds its own data through it. */
    const struct pfs_policy_ops *ops;
};

/* A tree of power limits over a view's jobs (ABI 3; a feed, rows, racks: docs/scenarios.md,
 * "The power tree"): node 0 the root, every other node's parent before it; the jobs' GPU
 * power under node v (its whole subtree) at most limit_w[v] (HUGE_VAL: none), the root's
 * also the view's budget. Job i hangs under node job_node[i]. */
struct pfs_alloc_tree {
    size_t n_nodes;
    const int32_t *parent;    /* parent[0] = -1 */
    const double *limit_w;    /* W */
    const uint32_t *job_node; /* per job */
    const char *const *name;  /* per node, for messages; may be NULL */
};

typedef int (*pfs_policy_init_fn)(void *state, const struct pfs_params *p, struct pfs_diag *diag);
typedef int (*pfs_policy_allocate_fn)(void *state, const struct pfs_alloc_view *view,
                                      struct pfs_alloc_decision *out, struct pfs_diag *diag);
typedef void (*pfs_policy_observe_fn)(void *state, const struct pfs_telemetry *t);
typedef void (*pfs_policy_fini_fn)(void *state);
/* The order in which the engine pauses whole jobs to hold a limit capping cannot hold
 * (control.over_limit = "hold", docs/scenarios.md): rank[i] for view->jobs[i], the lowest
 * paused first and resumed last (ties, and NaN, in the engine's own order: the most
 * tolerant tier, then the latest started, then the highest index). The view's budget is 0:
 * it ranks, it does not allocate. */
typedef void (*pfs_policy_pause_rank_fn)(const struct pfs_alloc_view *view, double *rank);
/* The decision under a tree of limits (ABI 3): as allocate, with every node's limit held as
 * well as the budget (pfisim checks each node's total). */
typedef int (*pfs_policy_allocate_tree_fn)(void *state, const struct pfs_alloc_view *view,
                                           const struct pfs_alloc_tree *tree,
                                           struct pfs_alloc_decision *out, struct pfs_diag *diag);

/* For every decision the core zeroes state_size bytes of private state, calls init (when
 * given), allocate with out[i] preset to each job's top cap and no pause, then fini; the
 * answer is checked against every job's limits and the budget before anyone sees it. */
struct pfs_policy_ops {
    const char *name;        /* unique, [a-z0-9-]+ (at most 31), as typed on the command line */
    const char *summary;     /* one line for --list-policies */
    size_t state_size;       /* private state, zeroed by the core */
    bool may_pause;          /* may return pause_frac > 0 (or fewer GPUs) */
    bool memoryless;         /* its decision depends on the budget and the jobs' fields other than
                              * remaining_tokens, now_s, limit_until_s, restart_s and deadline_s, and
                              * on nothing it remembers: the simulator may reuse a decision when
                              * none of that changed (pfisim policy-check checks the claim) */
    pfs_policy_init_fn init; /* optional */
    pfs_policy_allocate_fn allocate;     /* required: decide caps */
    pfs_policy_observe_fn observe;       /* optional */
    pfs_policy_fini_fn fini;             /* optional */
    pfs_policy_pause_rank_fn pause_rank; /* optional (ABI 2): the jobs to pause first to hold a
                                          * limit; NULL: the engine's order */
    pfs_policy_allocate_tree_fn allocate_tree; /* optional (ABI 3): decide under a tree of
                                                * limits; NULL: it divides a budget alone, and
                                                * is refused under a tree */
};

/* What a plugin library's entry point returns. */
struct pfs_policy_plugin {
    int abi;                                      /* PFS_POLICY_ABI it was compiled with */
    const struct pfs_policy_ops *const *policies; /* its policies, NULL-terminated */
};

/* The entry point's name, and a plugin's one exported definition of it:
 *     PFS_POLICY_PLUGIN(&my_policy, &my_other_policy)
 */
#define PFS_POLICY_ENTRY "pfisim_policy_plugin"
const struct pfs_policy_plugin *pfisim_policy_plugin(void);
#define PFS_POLICY_PLUGIN(...)                                                                     \
    const struct pfs_policy_plugin *pfisim_policy_plugin(void)                                     \
    {                                                                                              \
        static const struct pfs_policy_ops *const list[] = {__VA_ARGS__, NULL};                    \
        static const struct pfs_policy_plugin plugin = {PFS_POLICY_ABI, list};                     \
        return &plugin;                                                                            \
    }

/* ---------------------------------------------------------------------------------------
 * Helpers a policy may call (policies/solver.c)
 */

/* Records an error into diag (the first wins) and returns code (a PFS_E*): a policy's way to
 * fail with a message, `return pfs_policy_fail(diag, PFS_EINVAL, "...", ...)`. */
int pfs_policy_fail(struct pfs_diag *diag, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The budget is infeasible for policy: the standard message ("infeasible for POLICY: the
 * budget of B W is below the N W that WHAT need"). Returns PFS_EINVAL. */
int pfs_policy_infeasible(struct pfs_diag *diag, const char *policy, double budget_w, double need_w,
                          const char *what);

/* The same per-GPU level for every job, clamped to each job's [lo_i, hi_i]: the level L with
 * sum n_i clamp(L, lo_i, hi_i) = budget (hi when it all fits). Writes out[i].cap_w. Returns
 * 0 or PFS_EINVAL (sum n_i lo_i > budget). */
int pfs_policy_level(const char *who, const struct pfs_alloc_job *jobs, size_t n, const double *lo,
                     const double *hi, double budget_w, struct pfs_alloc_decision *out,
                     struct pfs_diag *diag);

/* Maximises sum_i curves[i](x_i) over per-GPU caps x_i subject to sum_i n_gpus_i x_i <=
 * budget_w, for concave non-decreasing curves (apply pfs_pwl_hull first): exact water-filling
 * on the marginal throughput per watt. Writes out[i].cap_w. Returns 0, PFS_EINVAL (the
 * lowest points exceed the budget), PFS_ENOMEM. */
int pfs_policy_waterfill(const char *who, const struct pfs_pwl *curves,
                         const struct pfs_alloc_job *jobs, size_t n, double budget_w,
                         struct pfs_alloc_decision *out, struct pfs_diag *diag);

/* Job i's predicted curve, as the pfi policy makes it: from the view's predictor (else the
 * PFI given in its telemetry) at the cuts, T = T0 (1 - c PFI(c)) at P0 (1 - c), made
 * non-decreasing and concave; with extrapolate it reaches down to the minimum cap, throughput
 * falling in proportion to power below the known range. Returns 0 or PFS_EINVAL (no way to
 * know PFI for this job). */
int pfs_policy_predicted_curve(const struct pfs_alloc_view *view, size_t i, bool extrapolate,
                               struct pfs_pwl *out, struct pfs_diag *diag);

/* pfs_policy_waterfill under a tree of limits as well as budget_w (ABI 3): the exact
 * optimum, every job within its max_w. Returns 0, PFS_EINVAL (the lowest points overflow a
 * node, named), PFS_ENOMEM. */
int pfs_policy_waterfill_tree(const char *who, const struct pfs_pwl *curves,
                              const struct pfs_alloc_job *jobs, size_t n,
                              const struct pfs_alloc_tree *tree, double budget_w,
                              struct pfs_alloc_decision *out, struct pfs_diag *diag);

/* pfs_policy_level under a tree (ABI 3): one level for every GPU except where a node's limit
 * holds its GPUs lower, each job within [lo_i, hi_i] (max-min fair per GPU). Returns 0,
 * PFS_EINVAL (the floors overflow a node), PFS_ENOMEM. */
int pfs_policy_level_tree(const char *who, const struct pfs_alloc_job *jobs, size_t n,
                          const double *lo, const double *hi, const struct pfs_alloc_tree *tree,
                          double budget_w, struct pfs_alloc_decision *out, struct pfs_diag *diag);

/* The lowest per-GPU cap at which curve c keeps (1 - loss) of its throughput at its largest
 * cap: a tier floor. */
double pfs_policy_floor_cap(const struct pfs_pwl *c, double loss);

/* Job i's PFI at cut (a share of its reference power, 0..1): from the view's predictor, else
 * the PFI given in its telemetry, at the cuts known (pfs_cut), linear between them and the
 * nearest outside them; NAN when no PFI is known for it. The one number per job the source
 * study's scheduler reads (policies/pfi_number.c). */
double pfs_policy_pfi_at(const struct pfs_alloc_view *view, size_t i, double cut);

#endif
