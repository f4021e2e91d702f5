/*
 * policies/registry.c - the NULL-terminated registry of policies and the one dispatcher.
 *
 * The dispatcher owns a policy's private state (zeroed, state_size bytes), supplies the
 * defaults for optional methods, and checks every answer before anyone sees it: caps inside
 * each job's limits, pause fractions in [0, 1], and the total within the budget (1e-9
 * relative). A policy that breaks these is a bug, reported as PFS_ENUMERIC, never passed on.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

extern const struct pfs_policy_ops pfs_policy_equal, pfs_policy_proportional, pfs_policy_pfi,
    pfs_policy_oracle, pfs_policy_static_tag, pfs_policy_fair_headroom, pfs_policy_sla,
    pfs_policy_pause_greedy, pfs_policy_fair_headroom_pause, pfs_policy_deadline,
    pfs_policy_resize_fair;

static const struct pfs_policy_ops *const registry[] = {
    &pfs_policy_equal,        &pfs_policy_pfi,           &pfs_policy_oracle,
    &pfs_policy_static_tag,   &pfs_policy_fair_headroom, &pfs_policy_sla,
    &pfs_policy_proportional, &pfs_policy_pause_greedy,  &pfs_policy_fair_headroom_pause,
    &pfs_policy_deadline,     &pfs_policy_resize_fair,   NULL,
};

const struct pfs_policy_ops *
pfs_policy_at(size_t i)
{
    for (size_t k = 0; registry[k]; k++)
        if (k == i)
            return registry[k];
    return NULL;
}

const struct pfs_policy_ops *
pfs_policy_find(const char *name)
{
    for (size_t k = 0; registry[k]; k++)
        if (strcmp(registry[k]->name, name) == 0)
            return registry[k];
    return NULL;
}

const char *
pfs__policy_nearest(const char *name)
{
    const char *names[sizeof registry / sizeof registry[0]];
    size_t n = 0;

    for (; registry[n]; n++)
        names[n] = registry[n]->name;
    return pfs__nearest(name, names, n);
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
pfs_policy_memoryless(const struct pfs_policy_ops *ops)
{
    return ops->memoryless;
}

bool
pfs_policy_may_pause(const struct pfs_policy_ops *ops)
{
    return ops->may_pause;
}

static int
check(const struct pfs_policy_ops *ops, const struct pfs_alloc_view *v,
      const struct pfs_alloc_decision *d, struct pfs_diag *diag)
{
    double total = 0;

    for (size_t i = 0; i < v->n_jobs; i++) {
        const struct pfs_alloc_job *j = &v->jobs[i];

        if (!(d[i].pause_frac >= 0 && d[i].pause_frac <= 1) ||
            (!ops->may_pause &&
             (d[i].pause_frac > 0 || pfs_alloc_active_gpus(j, &d[i]) < j->n_gpus)) ||
            d[i].n_gpus < 0 ||
            !(d[i].cap_w >= j->min_w * (1 - 1e-12) && d[i].cap_w <= j->max_w * (1 + 1e-12)))
            return pfs__diag_set(diag, PFS_ENUMERIC, NULL, 0, 0, NULL,
                                 "policy %s gave job '%s' cap %g W, pause %g: outside its "
                                 "limits [%g, %g] W (a bug)",
                                 ops->name, j->job_id, d[i].cap_w, d[i].pause_frac, j->min_w,
                                 j->max_w);
        total += pfs_alloc_power_w(j, &d[i]);
    }
    if (total > v->budget_w * (1 + 1e-9))
        return pfs__diag_set(diag, PFS_ENUMERIC, NULL, 0, 0, NULL,
                             "policy %s committed %.3f W of a %.3f W budget (a bug)", ops->name,
                             total, v->budget_w);
    return 0;
}

int
pfs_policy_allocate(const struct pfs_policy_ops *ops, const struct pfs_alloc_view *view,
                    struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    struct pfs_params params = {0};
    void *state = NULL;
    int rc = 0;

    if (ops->state_size && !(state = calloc(1, ops->state_size)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t i = 0; i < view->n_jobs; i++)
        out[i] = (struct pfs_alloc_decision){.cap_w = view->jobs[i].max_w, .pause_frac = 0};
    if (ops->init)
        rc = ops->init(state, &params, diag);
    if (rc == 0)
        rc = ops->allocate(state, view, out, diag);
    if (rc == 0)
        rc = check(ops, view, out, diag);
    if (ops->fini)
        ops->fini(state);
    free(state);
    return rc;
}
