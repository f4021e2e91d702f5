/*
 * policies/registry.c - the NULL-terminated registry of policies and the one dispatcher.
 *
 * The dispatcher owns a policy's private state (zeroed, state_size bytes), supplies the
 * defaults for optional methods, and checks every answer before anyone sees it: caps inside
 * each job's limits, pause fractions in [0, 1], and the total within the budget (1e-9
 * relative). A policy that breaks these is a bug, reported as PFS_ENUMERIC, never passed on.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

extern const struct pfs_policy_ops pfs_policy_equal, pfs_policy_proportional, pfs_policy_pfi,
    pfs_policy_oracle, pfs_policy_static_tag, pfs_policy_fair_headroom, pfs_policy_sla,
    pfs_policy_pause_greedy, pfs_policy_fair_headroom_pause, pfs_policy_deadline,
    pfs_policy_resize_fair, pfs_policy_pfi_rank, pfs_policy_pfi_share;

static const struct pfs_policy_ops *const registry[] = {
    &pfs_policy_equal,
    &pfs_policy_pfi,
    &pfs_policy_oracle,
    &pfs_policy_static_tag,
    &pfs_policy_fair_headroom,
    &pfs_policy_sla,
    &pfs_policy_proportional,
    &pfs_policy_pause_greedy,
    &pfs_policy_fair_headroom_pause,
    &pfs_policy_deadline,
    &pfs_policy_resize_fair,
    &pfs_policy_pfi_rank,
    &pfs_policy_pfi_share,
    NULL,
};

#define N_BUILTIN (sizeof registry / sizeof registry[0] - 1)

static const struct pfs_policy_ops *added[PFS__MAX_ADDED];
static char added_from[PFS__MAX_ADDED][256];
static atomic_size_t n_added;
static pthread_mutex_t add_lock = PTHREAD_MUTEX_INITIALIZER;

const struct pfs_policy_ops *
pfs_policy_at(size_t i)
{
    if (i < N_BUILTIN)
        return registry[i];
    return i - N_BUILTIN < atomic_load_explicit(&n_added, memory_order_acquire)
               ? added[i - N_BUILTIN]
               : NULL;
}

const struct pfs_policy_ops *
pfs_policy_find(const char *name)
{
    for (size_t k = 0; pfs_policy_at(k); k++)
        if (strcmp(pfs_policy_at(k)->name, name) == 0)
            return pfs_policy_at(k);
    return NULL;
}

bool
pfs_policy_builtin(const struct pfs_policy_ops *ops)
{
    for (size_t k = 0; registry[k]; k++)
        if (registry[k] == ops)
            return true;
    return false;
}

const char *
pfs__policy_nearest(const char *name)
{
    const char *names[N_BUILTIN + PFS__MAX_ADDED];
    size_t n = 0;

    for (; pfs_policy_at(n); n++)
        names[n] = pfs_policy_at(n)->name;
    return pfs__nearest(name, names, n);
}

const char *
pfs__policy_repeated(const char *const *names, size_t n)
{
    for (size_t k = 1; k < n; k++)
        for (size_t q = 0; q < k; q++)
            if (strcmp(names[q], names[k]) == 0)
                return names[k];
    return NULL;
}

int
pfs__policy_name_check(const char *name, const char *from, struct pfs_diag *diag)
{
    size_t n = name ? strlen(name) : 0;
    const struct pfs_policy_ops *taken;

    if (n == 0 || n > 31 || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") != n)
        return pfs__diag_set(diag, PFS_EINVAL, from, 0, 0, "name",
                             "policy name '%s': expected 1 to 31 of a-z, 0-9 and '-'",
                             name ? name : "(null)");
    if ((taken = pfs_policy_find(name)) != NULL) {
        for (size_t k = 0; k < atomic_load(&n_added); k++)
            if (added[k] == taken)
                return pfs__diag_set(diag, PFS_EINVAL, from, 0, 0, "name",
                                     "policy name '%s' is taken (by %s)", name, added_from[k]);
        return pfs__diag_set(diag, PFS_EINVAL, from, 0, 0, "name",
                             "policy name '%s' is taken (by pfisim's own policy)", name);
    }
    return 0;
}

int
pfs__policy_add(const struct pfs_policy_ops *const *ops, size_t n, const char *from,
                struct pfs_diag *diag)
{
    int rc = 0;

    pthread_mutex_lock(&add_lock);
    if (atomic_load(&n_added) + n > PFS__MAX_ADDED)
        rc = pfs__diag_set(diag, PFS_EINVAL, from, 0, 0, NULL,
                           "more than %d policies added to pfisim's own", PFS__MAX_ADDED);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if ((rc = pfs__policy_name_check(ops[i]->name, from, diag)) != 0)
            break;
        for (size_t k = 0; k < i; k++)
            if (strcmp(ops[k]->name, ops[i]->name) == 0)
                rc = pfs__diag_set(diag, PFS_EINVAL, from, 0, 0, "name",
                                   "policy name '%s' given twice", ops[i]->name);
        if (rc == 0 && (!ops[i]->allocate || !ops[i]->summary))
            rc = pfs__diag_set(diag, PFS_EINVAL, from, 0, 0, NULL,
                               "policy '%s': no %s (the descriptor needs one)", ops[i]->name,
                               ops[i]->allocate ? "summary" : "allocate function");
    }
    for (size_t i = 0; rc == 0 && i < n; i++) { /* all or none */
        size_t k = atomic_load(&n_added);

        added[k] = ops[i];
        pfs__strlcpy(added_from[k], from, sizeof added_from[k]);
        atomic_store_explicit(&n_added, k + 1, memory_order_release);
    }
    pthread_mutex_unlock(&add_lock);
    return rc;
}

const char *
pfs_policy_name(const struct pfs_policy_ops *ops)
{
    return ops->name;
}

const char *
pfs_policy_summary(const struct pfs_policy_ops *ops)
{
    return ops->summary;
}

bool
pfs__policy_by_class(const struct pfs_policy_ops *ops)
{
    return ops == &pfs_policy_pfi || ops == &pfs_policy_oracle || ops == &pfs_policy_equal;
}

int
pfs__policy_classes(const struct pfs_policy_ops *ops, const struct pfs_alloc_view *v,
                    const struct pfs__class_set *cs, struct pfs__class_answer *a,
                    struct pfs_diag *diag)
{
    if (ops == &pfs_policy_pfi)
        return pfs__pfi_classes(v, cs, a, diag);
    if (ops == &pfs_policy_oracle)
        return pfs__oracle_classes(v, cs, a, diag);
    if (ops == &pfs_policy_equal)
        return pfs__level_classes("equal", v, cs, a, diag);
    return 1;
}

bool
pfs_policy_memoryless(const struct pfs_policy_ops *ops)
{
    return ops->memoryless;
}

bool
pfs_policy_may_pause(const struct pfs_policy_ops *ops)
{
    return ops->may_pause;
}

int
pfs__policy_answer_ok(const struct pfs_policy_ops *ops, const struct pfs_alloc_job *j,
                      const struct pfs_alloc_decision *d, struct pfs_diag *diag)
{
    if (!(d->pause_frac >= 0 && d->pause_frac <= 1) ||
        (!ops->may_pause && (d->pause_frac > 0 || pfs_alloc_active_gpus(j, d) < j->n_gpus)) ||
        d->n_gpus < 0 ||
        !(d->cap_w >= j->min_w * (1 - 1e-12) && d->cap_w <= j->max_w * (1 + 1e-12)))
        return pfs__diag_set(diag, PFS_ENUMERIC, NULL, 0, 0, NULL,
                             "policy %s gave job '%s' cap %g W, pause %g: outside its limits "
                             "[%g, %g] W, or a pause it may not make (a bug)",
                             ops->name, j->job_id, d->cap_w, d->pause_frac, j->min_w, j->max_w);
    return 0;
}

/* Whether committed, what ops's answers commit, is within budget_w (check's test). */
static int
committed_ok(const struct pfs_policy_ops *ops, double committed, double budget_w,
             struct pfs_diag *diag)
{
    if (committed > budget_w * (1 + 1e-9))
        return pfs__diag_set(diag, PFS_ENUMERIC, NULL, 0, 0, NULL,
                             "policy %s committed %.3f W of a %.3f W budget (%s)", ops->name,
                             committed, budget_w,
                             pfs_policy_builtin(ops) ? "a bug"
                                                     : "a bug of the policy: pfisim policy-check "
                                                       "shows what it breaks");
    return 0;
}

/* The dispatcher's check of a policy's answers d: each within its job's limits (unless not
 * each: answers known to be another path's, bit for bit), and the power they commit, summed
 * in job order into *committed, within the budget. */
static inline int
check(const struct pfs_policy_ops *ops, const struct pfs_alloc_view *v,
      const struct pfs_alloc_decision *d, bool each, double *committed, struct pfs_diag *diag)
{
    double total = 0;

    for (size_t i = 0; i < v->n_jobs; i++) {
        int rc;

        if (each && (rc = pfs__policy_answer_ok(ops, &v->jobs[i], &d[i], diag)) != 0)
            return rc;
        total += pfs_alloc_power_w(&v->jobs[i], &d[i]);
    }
    *committed = total;
    return committed_ok(ops, total, v->budget_w, diag);
}

/* A policy added at run time failed: its own message where it gave one with a code of the
 * table (pfs_policy_fail), else a policy failure that names it and the code it returned (a
 * bare -7 read as PFS_EUSAGE, "invalid usage", exit 2, naming no one; a positive code as
 * "unknown error"). */
static int
unsaid(const struct pfs_policy_ops *ops, int rc, struct pfs_diag *diag)
{
    bool known = rc < 0 && strcmp(pfs_strerror(rc), "unknown error") != 0;
    char said[300] = "";

    if (known && rc != PFS_EUSAGE && diag && diag->code != 0)
        return rc;
    if (diag && diag->code != 0) {
        pfs__strlcpy(said, diag->message, sizeof said);
        pfs_diag_clear(diag);
    }
    return pfs__diag_set(diag, PFS_EPOLICY, NULL, 0, 0, "policy",
                         "policy '%.64s' failed: it returned %d%s%s", ops->name, rc,
                         said[0] ? ": "
                                 : " and said nothing (a policy says why with "
                                   "pfs_policy_fail)",
                         said);
}

/* ops's decision over view (under tree, by its allocate_tree, where tree is not NULL): its
 * state made, out preset to every job's top cap and no pause, init, the decision, fini.
 * Inline: pfs__policy_run, every decision of a simulation, calls it, and out of line it cost
 * 12.6 M instructions of poisson-10k's 20 days (0.9%; docs/benchmarks.md). */
static inline int
run(const struct pfs_policy_ops *ops, const struct pfs_alloc_view *view,
    const struct pfs_alloc_tree *tree, struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    struct pfs_params params = {.ops = ops};
    struct pfs_alloc_view own = *view;
    void *state = NULL;
    int rc = 0;

    if (!pfs_policy_builtin(ops))
        own.truth = NULL; /* the information boundary, for every policy added at run time */
    if (ops->state_size && !(state = calloc(1, ops->state_size)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t i = 0; i < view->n_jobs; i++)
        out[i] = (struct pfs_alloc_decision){.cap_w = view->jobs[i].max_w, .pause_frac = 0};
    if (ops->init)
        rc = ops->init(state, &params, diag);
    if (rc == 0)
        rc = tree ? ops->allocate_tree(state, &own, tree, out, diag)
                  : ops->allocate(state, &own, out, diag);
    if (ops->fini)
        ops->fini(state);
    free(state);
    if (rc != 0 && !pfs_policy_builtin(ops))
        rc = unsaid(ops, rc, diag);
    return rc;
}

int
pfs__policy_run(const struct pfs_policy_ops *ops, const struct pfs_alloc_view *view,
                struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    return run(ops, view, NULL, out, diag);
}

int
pfs__policy_decide(const struct pfs_policy_ops *ops, const struct pfs_alloc_view *view,
                   struct pfs_alloc_decision *out, double *committed, struct pfs_diag *diag)
{
    int rc = pfs__policy_run(ops, view, out, diag);

    return rc == 0 ? check(ops, view, out, true, committed, diag) : rc;
}

bool
pfs__policy_is_sla(const struct pfs_policy_ops *ops)
{
    return ops == &pfs_policy_sla;
}

/* pfs__policy_decide for sla: the policy, then the check's sum of what it commits, in job
 * order. Not pfs__policy_run's answer for every job before the policy's (sla writes every
 * job's), nor the check of each answer against its job's limits: the answers are
 * allocate's, bit for bit (test_policies_sla_kept, where allocate's are checked), and the
 * check was a tenth of sla's cost in an event. */
int
pfs__sla_decide_kept(const struct pfs_alloc_view *view, struct pfs__sla_kept *const kept[2],
                     struct pfs_alloc_decision *out, double *committed, struct pfs_diag *diag)
{
    double total = 0;
    int rc = pfs__sla_allocate_kept(view, kept, out, diag);

    if (rc)
        return rc;
    /* pfs_alloc_power_w summed in job order as check() does, for answers on all of a job's
     * GPUs (sla never resizes: n_gpus 0): its active GPUs are all of them, and the idle
     * ones add 0 x idle_w, nothing (idle_w is finite: models/gpu.c checks it), so the same
     * bits without the test of active GPUs and that term (a tenth of sla's work in an
     * event was this sum) */
    for (size_t i = 0; i < view->n_jobs; i++) {
        const struct pfs_alloc_decision *d = &out[i];

        total += view->jobs[i].n_gpus *
                 (d->pause_frac * view->jobs[i].idle_w + (1 - d->pause_frac) * d->cap_w);
    }
    *committed = total;
    return committed_ok(&pfs_policy_sla, total, view->budget_w, diag);
}

int
pfs_policy_allocate(const struct pfs_policy_ops *ops, const struct pfs_alloc_view *view,
                    struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    double committed;

    return pfs__policy_decide(ops, view, out, &committed, diag);
}

int
pfs__policy_allocate_tree(const struct pfs_policy_ops *ops, const struct pfs_alloc_view *v,
                          const struct pfs_alloc_tree *t, struct pfs_alloc_decision *out,
                          struct pfs_diag *diag)
{
    double *under, committed;
    int rc;

    if (!ops || !ops->allocate_tree)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "policy",
                             "%s does not divide power under a tree of limits (a policy does with "
                             "allocate_tree, policy ABI 3; pfisim's: equal, pfi, oracle)",
                             ops ? ops->name : "(no policy)");
    if (!(under = calloc(t->n_nodes + 1, sizeof *under)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    rc = run(ops, v, t, out, diag);
    /* Each job's answer within its limits, the total within the budget, and every node's
     * jobs within its limit. */
    if (rc == 0)
        rc = check(ops, v, out, true, &committed, diag);
    for (size_t i = 0; rc == 0 && i < v->n_jobs; i++) {
        const double w = pfs_alloc_power_w(&v->jobs[i], &out[i]);

        if (t->job_node[i] >= t->n_nodes) {
            rc = pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "tree",
                               "job %zu hangs under no node of the tree", i);
            break;
        }
        for (int32_t u = (int32_t)t->job_node[i]; u >= 0; u = t->parent[u])
            under[u] += w;
    }
    for (size_t u = 0; rc == 0 && u < t->n_nodes; u++)
        if (under[u] > t->limit_w[u] * (1 + 1e-9) + 1e-6) {
            char node[120];

            if (t->name)
                snprintf(node, sizeof node, "'%.100s'", t->name[u]);
            else
                snprintf(node, sizeof node, "node %zu", u);
            rc = pfs__diag_set(diag, PFS_EPOLICY, NULL, 0, 0, "policy",
                               "policy '%.64s' committed %.3f W under %s, above its limit of "
                               "%.3f W",
                               ops->name, under[u], node, t->limit_w[u]);
        }
    free(under);
    return rc;
}
