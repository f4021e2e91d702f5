/*
 * policies/policy.h - the interface every allocation policy implements (STYLE.md,
 * "Pluggable parts"), and the helpers they share.
 *
 * A policy is one file ending in one const descriptor. The core allocates and zeroes its
 * private state from state_size, calls init once, allocate for every decision, and fini at
 * the end; observe is optional. A policy returns decisions and never touches engine state.
 * What it may know is what struct pfs_alloc_view holds: the jobs, their telemetry, the
 * predictor, and the truth, which is opaque here; only policies/oracle.c includes
 * policies/truth.h, where struct pfs_truth is defined, so no other policy can read a true
 * curve without it showing in its #include lines.
 */
#ifndef PFISIM_POLICIES_H
#define PFISIM_POLICIES_H

#include <math.h>

#include "internal.h"

/* struct pfs_params, struct pfs_policy_ops and the view are the policy ABI's
 * (sim/pfisim/policy.h), the one definition built-in and plugin policies share. */

/* ----- policies/solver.c: shared building blocks ----- */

/* Room for bytes in a policy's working array k (k < PFS__SCRATCH_SLOTS), kept per thread
 * between calls and freed when the thread ends: a policy's arrays over the running jobs,
 * allocated afresh at every decision, came from the kernel once they were large (mmap and a
 * page fault per page, at every decision of an event on 100,000 jobs). Contents undefined;
 * valid until the next call for the same k on this thread. NULL without memory. */
#define PFS__SCRATCH_SLOTS 8
void *pfs__scratch(unsigned k, size_t bytes);

/* fmin(fmax(x, lo), hi) for numbers (no NaN), without two calls into libm: at 20,000 jobs
 * and some 40 bisection steps a decision, the calls were a third of equal's time. */
static inline double
pfs__clamp(double x, double lo, double hi)
{
    x = x < lo ? lo : x;
    return x > hi ? hi : x;
}

/* A segment of the water-filling: its throughput per watt of budget, and the budget it
 * takes, W. */
struct pfs__seg {
    double slope, need;
};

/* The threshold price of budget R over the n segments s (reordered): the slope mu with (the
 * need of the segments steeper than mu) < R <= (that plus the need of those at mu); -1 when
 * all positive slopes fit in R, +inf when R is no budget (nothing is taken). O(n) expected:
 * a weighted quickselect. */
double pfs__threshold(struct pfs__seg *s, size_t n, double R);

/* Maximises sum_i curves[i](x_i) over per-GPU caps x_i in [x_i,0 .. x_i,last] subject to
 * sum_i n_gpus_i x_i <= budget_w, for concave non-decreasing curves (apply pfs_pwl_hull
 * first): start every job at its lowest point, then take curve segments in decreasing order
 * of throughput per watt (greedy is exact for concave separable objectives). Jobs with
 * skip[i] keep x = their current out[i].cap_w and cost fixed_w[i] (may be NULL). Writes
 * out[i].cap_w. Returns 0, PFS_EINVAL (the lowest points exceed the budget; the message
 * names who), PFS_ENOMEM. */
int pfs__waterfill(const char *who, const struct pfs_pwl *curves, const struct pfs_alloc_job *jobs,
                   size_t n, double budget_w, const bool *skip, struct pfs_alloc_decision *out,
                   struct pfs_diag *diag);
/* pfs__waterfill on each curve from from[i] on (from may be NULL: the whole curves): the
 * same answer, bit for bit, as on curves clipped there by pfs__pwl_clip, without clipping
 * a copy of them (the floors of sla and deadline). */
int pfs__waterfill_from(const char *who, const struct pfs_pwl *curves, const double *from,
                        const struct pfs_alloc_job *jobs, size_t n, double budget_w,
                        const bool *skip, struct pfs_alloc_decision *out, struct pfs_diag *diag);

/* pfs__waterfill under the tree's limits as well as budget_w (the root's): every job from
 * its curve's lowest point, then segments in decreasing throughput per watt, each as far as
 * every node above its job has room and the job's max_w allows (exact: laminar limits and
 * boxes form a polymatroid). Writes out[i].cap_w (pause 0). Returns 0, PFS_EINVAL (the lowest
 * points overflow a node, named), PFS_ENOMEM. */
int pfs__waterfill_tree(const char *who, const struct pfs_pwl *curves,
                        const struct pfs_alloc_job *jobs, size_t n, const struct pfs_alloc_tree *t,
                        double budget_w, struct pfs_alloc_decision *out, struct pfs_diag *diag);
/* pfs__level under the tree: one level for every GPU, except where a node's limit holds its
 * GPUs lower (there, the level that fills it), each job clamped into [lo_i, hi_i]; the
 * max-min fair share of per-GPU power. Returns 0, PFS_EINVAL (the floors overflow a node),
 * PFS_ENOMEM. */
int pfs__level_tree(const char *who, const struct pfs_alloc_job *jobs, size_t n, const double *lo,
                    const double *hi, const struct pfs_alloc_tree *t, double budget_w,
                    struct pfs_alloc_decision *out, struct pfs_diag *diag);

/* The tree-aware policies' answers under a tree (policies/equal.c, pfi.c, oracle.c). */
int pfs__equal_tree(const struct pfs_alloc_view *v, const struct pfs_alloc_tree *t,
                    struct pfs_alloc_decision *out, struct pfs_diag *diag);
int pfs__pfi_tree(const struct pfs_alloc_view *v, const struct pfs_alloc_tree *t,
                  struct pfs_alloc_decision *out, struct pfs_diag *diag);
int pfs__oracle_tree(const struct pfs_alloc_view *v, const struct pfs_alloc_tree *t,
                     struct pfs_alloc_decision *out, struct pfs_diag *diag);

/* Where curve i's part from its floor from[i] starts, as pfs__waterfill_from finds it: its
 * value there, and its first point above it (1 where the floor is its lowest point). Kept
 * by a caller that water-fills the same curves from the same floors again. */
struct pfs__from {
    double y0;
    uint32_t k;
};

/* Where curve c's part from lo starts (pfs__waterfill_from's). */
struct pfs__from pfs__from_of(const struct pfs_pwl *c, double lo);
/* pfs__waterfill_fr tries its last price first (on this thread), and finds the price anew
 * where that one does not hold beyond rounding: the answer is the same, bit for bit,
 * whatever was tried. Sets the price it tries next to mu and returns the one it would have
 * tried (the last price; NAN before any): for the tests of that. */
double pfs__waterfill_hint(double mu);

/* ----- sla's decisions with what it kept from the last (sim/sim.c, issue 16) -----
 *
 * A running job's floor, and where its curve's part from it starts, stay the same from one
 * decision of an event to the next unless its tolerance or its deadline moves them. The
 * engine keeps an entry per running job and family of curves (within the predictions,
 * extrapolated), moved with the job's view and cleared (pfs__sla_kept_clear) when its view
 * is built; sla reads and refreshes it. The answer is sla's allocate's, bit for bit. The
 * entries of a family are given only where every job has a kept curve of that family (the
 * engine counts the jobs without one), so that sla need not look at every job's curve. */
struct pfs__sla_kept {
    double loss;         /* the tolerance the tier floor was made for (NAN: none yet) */
    double raw;          /* pfs__floor_cap at loss */
    double x0, y0, top;  /* the curve's lowest point and its top */
    double clear_rate;   /* a rate of work left below which the deadline cannot bind */
    double floor;        /* the floor last water-filled from (NAN: none yet) */
    struct pfs__from fr; /* the curve's part from it */
};

static inline void
pfs__sla_kept_clear(struct pfs__sla_kept *e)
{
    e->loss = e->floor = NAN;
}

/* pfs__waterfill_from with each unskipped curve's part from its floor kept in kept[i] (its
 * floor and fr, made again by pfs__from_of where the floor moved): the same answer, bit for
 * bit, without finding it again. */
int pfs__waterfill_fr(const char *who, const struct pfs_pwl *curves, const double *from,
                      struct pfs__sla_kept *kept, const struct pfs_alloc_job *jobs, size_t n,
                      double budget_w, const bool *skip, struct pfs_alloc_decision *out,
                      struct pfs_diag *diag);

/* policies/sla.c: sla's allocate with kept[e][i] job i's entries (e: within the
 * predictions, extrapolated), read where the view's kept curves are used. */
int pfs__sla_allocate_kept(const struct pfs_alloc_view *v, struct pfs__sla_kept *const kept[2],
                           struct pfs_alloc_decision *out, struct pfs_diag *diag);
/* policies/registry.c: whether ops is sla, and pfs__policy_decide for it with the entries. */
bool pfs__policy_is_sla(const struct pfs_policy_ops *ops);
int pfs__sla_decide_kept(const struct pfs_alloc_view *v, struct pfs__sla_kept *const kept[2],
                         struct pfs_alloc_decision *out, double *committed, struct pfs_diag *diag);

/* pfs__waterfill (no skip) for jobs in classes: cls[i] < n_classes, and jobs of one class
 * have the same curve and GPU count, bit for bit. Each class's segments are priced once,
 * their need times the class's jobs, so the price is found over the classes' segments, not
 * the jobs': the same optimum (ties and rounding crumbs aside) at a fraction of the work when
 * thousands of running jobs share a hundred curves. */
int pfs__waterfill_classes(const char *who, const struct pfs_pwl *curves,
                           const struct pfs_alloc_job *jobs, size_t n, const uint32_t *cls,
                           uint32_t n_classes, double budget_w, struct pfs_alloc_decision *out,
                           struct pfs_diag *diag);

/* ----- Decisions by class: the engine's at scale (sim/sim.c, issue 16) -----
 *
 * The simulator keeps its running jobs by class (the view's classes) and asks pfi and the
 * oracle for one cap per class: a decision costs the classes' segments, not a pass over
 * 20,000 running jobs. The answer is the one the policy's allocate gives, tied jobs included:
 * the budget left at the price goes to the tied classes' jobs in the view's job order. */
struct pfs__class_answer {
    double *cap;   /* per class: its jobs' per-GPU cap (a tied job's before its share) */
    bool *tied;    /* per class: its jobs share left_w, in job order */
    double left_w; /* the budget left at the price */
    const struct pfs_pwl *curves; /* per job of the view: the curves answered on */
    /* the oracle's: a power on the envelope as a decision (NULL: a cap) */
    struct pfs_alloc_decision (*decision)(const struct pfs_pwl *h, const struct pfs_alloc_job *j,
                                          double x);
};

/* The classes an engine keeps its running jobs by: the n_present classes present[] (in
 * that order), class c (c < n_classes) with count[c] jobs, one of them job rep[c]. */
struct pfs__class_set {
    const uint32_t *present;
    uint32_t n_present, n_classes;
    const uint32_t *count, *rep;
    /* the classes' segments kept between decisions, per family of curves a policy answers
     * on (pfi: within the predictions, extrapolated; the oracle: [0]); NULL: none. A run's
     * own: within it a class's curve in a family never changes. */
    struct pfs__class_cache *cache[2];
};

/* A run's cache of its classes' segments for pfs__waterfill_counted (NULL without memory). */
struct pfs__class_cache *pfs__class_cache_new(void);
void pfs__class_cache_free(struct pfs__class_cache *cc);

/* pfs__waterfill_classes's price and class caps for the jobs of the classes cs. Sets
 * cap_of[c] and tied[c] for each present class c, and *left_w, the budget left at the price
 * for the tied jobs (pfs__waterfill_tie, one job at a time in job order). The minimum caps
 * are summed class by class (rounding aside, the same total). Returns 0, PFS_EINVAL
 * (infeasible), PFS_ENOMEM. */
int pfs__waterfill_counted(const char *who, const struct pfs_pwl *curves,
                           const struct pfs_alloc_job *jobs, const struct pfs__class_set *cs,
                           struct pfs__class_cache *cc, double budget_w, double *cap_of, bool *tied,
                           double *left_w, struct pfs_diag *diag);
/* The next tied job of class c, in job order, takes its share of *left_w into *cap (its
 * class's cap before), as pfs__waterfill_classes gives it: this thread's last
 * pfs__waterfill_counted's price. */
void pfs__waterfill_tie(uint32_t c, double *left_w, double *cap);

/* policies/pfi.c, policies/oracle.c: their answers for the view's jobs by class (cs).
 * Return 0, 1 where there is no answer by class (pfi without a kept curve for some class:
 * ask allocate), PFS_EINVAL, PFS_ENOMEM. */
int pfs__pfi_classes(const struct pfs_alloc_view *v, const struct pfs__class_set *cs,
                     struct pfs__class_answer *a, struct pfs_diag *diag);
int pfs__oracle_classes(const struct pfs_alloc_view *v, const struct pfs__class_set *cs,
                        struct pfs__class_answer *a, struct pfs_diag *diag);
/* pfs__level over the classes cs: one level for every GPU, each class's cap in a->cap (none
 * tied). Where the limits are whole watts (every GPU profile's), the level is pfs__level's
 * over the classes' jobs bit for bit: the sums it is made of are exact (unless a limit lies
 * between the two bisections' levels, some 1e-12 apart, where the partitions differ).
 * Returns 0 or PFS_EINVAL (the minimum caps do not fit). */
int pfs__level_classes(const char *who, const struct pfs_alloc_view *v,
                       const struct pfs__class_set *cs, struct pfs__class_answer *a,
                       struct pfs_diag *diag);
/* policies/registry.c: whether ops answers by class (pfi, the oracle), and its answer
 * (1 for every other policy). */
bool pfs__policy_by_class(const struct pfs_policy_ops *ops);
int pfs__policy_classes(const struct pfs_policy_ops *ops, const struct pfs_alloc_view *v,
                        const struct pfs__class_set *cs, struct pfs__class_answer *a,
                        struct pfs_diag *diag);
/* The decision for one job of class c (job rep is one of its class), the next in job order:
 * with left_w (non-NULL) it takes its share of the budget left where its class is tied. */
struct pfs_alloc_decision pfs__class_decision(const struct pfs_alloc_view *v,
                                              const struct pfs__class_answer *a, uint32_t c,
                                              size_t rep, double *left_w);

/* The same per-GPU level for every job, clamped to each job's [lo_i, hi_i]: the level L with
 * sum n_i clamp(L, lo_i, hi_i) = budget (hi when it all fits). Writes out[i].cap_w.
 * Returns 0 or PFS_EINVAL (sum n_i lo_i > budget). */
int pfs__level(const char *who, const struct pfs_alloc_job *jobs, size_t n, const double *lo,
               const double *hi, double budget_w, struct pfs_alloc_decision *out,
               struct pfs_diag *diag);

/* A job's predicted curve from PFI at the cuts (predictor, else the given PFI at the cuts
 * given): points at P0 (1 - c) with T = T0 (1 - c PFI(c)), made non-decreasing and concave.
 * It starts at the deepest known cut; with extrapolate it reaches down to the minimum cap,
 * throughput falling in proportion to power below the known range. Returns 0 or PFS_EINVAL
 * (no way to know PFI for this job). */
int pfs__predicted_curve(const struct pfs_alloc_view *view, size_t i, bool extrapolate,
                         struct pfs_pwl *out, struct pfs_diag *diag);

/* pfs_pwl_eval, the same bits, looking first on the segment *k (where the last x asked
 * was: a cap that moves a little stays on it) and keeping the one found there. */
double pfs__pwl_eval_near(const struct pfs_pwl *c, double x, uint32_t *k);

/* The view's kept predicted curves (struct pfs_alloc_view.predicted), when it has one for
 * every job made with its predictor: for a policy that only reads them; NULL otherwise. */
const struct pfs_pwl *pfs__predicted_kept(const struct pfs_alloc_view *v, bool extrapolate);
/* The same where the caller knows every job has one: the view's tests alone, without a pass
 * over the jobs. */
const struct pfs_pwl *pfs__predicted_given(const struct pfs_alloc_view *v, bool extrapolate);
/* Predicted curves of every job of the view, into *out: the calling thread's own array,
 * which the caller may change and must not free, valid until its next call of this (at 20,000
 * jobs a fresh array was 20 MB from the kernel at every decision). A policy that only reads
 * them takes the kept ones first (pfs__predicted_readonly). Returns 0, PFS_EINVAL (naming the
 * policy when there is no telemetry), PFS_ENOMEM. */
int pfs__predicted_curves(const struct pfs_alloc_view *v, const char *policy, bool extrapolate,
                          struct pfs_pwl **out, struct pfs_diag *diag);
/* The view's kept curves when it has them (pfs__predicted_kept), else
 * pfs__predicted_curves's: for a policy that only reads them. */
int pfs__predicted_readonly(const struct pfs_alloc_view *v, const char *policy, bool extrapolate,
                            const struct pfs_pwl **out, struct pfs_diag *diag);

/* The lowest per-GPU cap at which job i's curve c keeps (1 - loss) of its throughput at its
 * largest cap: the tier floor. */
double pfs__floor_cap(const struct pfs_pwl *c, double loss);

/* policies/fair_headroom.c: each job's tier floor on its predicted curve, within its
 * limits, into floor[n_jobs]. Returns 0 or what pfs__predicted_curves returns. */
int pfs__tier_floors(const struct pfs_alloc_view *v, const char *policy, double *floor,
                     struct pfs_diag *diag);

/* policies/fair_headroom.c: Emerald's "DVFS, Fair" share: each job's tier floor into floor,
 * their total draw into *need, and into out each job's floor plus one fraction of its headroom
 * (the budget left over the floors, 0 when they do not fit). Returns 0 or what
 * pfs__tier_floors returns. The pausing and resizing variants start from it. */
int pfs__fair_headroom(const struct pfs_alloc_view *v, const char *policy, double *floor,
                       struct pfs_alloc_decision *out, double *need, struct pfs_diag *diag);

/* policies/fair_headroom.c: what the pausing and resizing variants shed when the floors do
 * not fit (need > budget): the least fraction *p in [0, hi] at which saved(v, floor, p), the
 * power saved beyond the floors, covers need - budget (bisection, 200 steps). Returns 0, or
 * PFS_EINVAL (pfs__infeasible, naming what) when even saved(hi) does not. */
typedef double (*pfs__saved_fn)(const struct pfs_alloc_view *v, const double *floor, double p);
int pfs__shed_fraction(const struct pfs_alloc_view *v, const double *floor, double need, double hi,
                       pfs__saved_fn saved, const char *policy, const char *what, double *p,
                       struct pfs_diag *diag);

/* c restricted to caps >= lo (a point at lo inserted), for water-filling above a floor. */
void pfs__pwl_clip(struct pfs_pwl *c, double lo);

/* Budget infeasible: the standard message. Returns PFS_EINVAL. */
int pfs__infeasible(struct pfs_diag *diag, const char *policy, double budget_w, double need_w,
                    const char *what);

#endif
