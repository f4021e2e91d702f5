/*
 * policies/pfi.c - PFI-aware: maximise the predicted total throughput.
 *
 * Each job's curve is predicted from its telemetry (the predictor of models/predict.c: the
 * view's, or the model file given in the parameters) or, when the operator measured it, from
 * its given PFI; then the budget is water-filled over the predicted curves, exactly as the
 * oracle does over the true ones. It keeps jobs within the cuts its predictions cover (down
 * to 50%) unless the budget cannot be met that way: then it extrapolates, cautiously. The policy
 * never sees a true curve: its view has none it could open (policies/policy.h).
 */
#include <stdlib.h>

#include "policy.h"

struct pfi_state {
    struct pfs_predictor *own; /* loaded from params->model_path, or NULL */
};

static int
pfi_init(void *state, const struct pfs_params *p, struct pfs_diag *diag)
{
    struct pfi_state *s = state;

    if (p->model_path)
        return pfs_predictor_load(p->model_path, &s->own, diag);
    return 0;
}

static int
pfi_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
             struct pfs_diag *diag)
{
    struct pfi_state *s = state;
    struct pfs_alloc_view mine = *v;
    int rc;

    if (s->own)
        mine.predictor = s->own;
    /* Within what the predictions cover first; below it only if the budget demands. The
     * curves are only read: the engine's kept ones serve as they are. */
    for (int extrapolate = 0; extrapolate < 2; extrapolate++) {
        struct pfs_diag first = {0};
        const struct pfs_pwl *c = pfs__predicted_kept(&mine, extrapolate);
        struct pfs_pwl *made = NULL;

        rc = c ? 0 : pfs__predicted_curves(&mine, "pfi", extrapolate, &made, diag);
        if (rc == 0 && c && v->classes) /* the kept curves, the same in each class */
            rc = pfs__waterfill_classes("pfi", c, v->jobs, v->n_jobs, v->classes, v->n_classes,
                                        v->budget_w, out, extrapolate ? diag : &first);
        else if (rc == 0)
            rc = pfs__waterfill("pfi", c ? c : made, v->jobs, v->n_jobs, v->budget_w, NULL, out,
                                extrapolate ? diag : &first);
        if (rc != PFS_EINVAL || extrapolate)
            break;
    }
    return rc;
}

int
pfs__pfi_classes(const struct pfs_alloc_view *v, const struct pfs__class_set *cs,
                 struct pfs__class_answer *a, struct pfs_diag *diag)
{
    int rc = 1;

    /* As pfi_allocate on the kept curves, which every class must have (else allocate says
     * why, or predicts them itself). */
    for (int extrapolate = 0; extrapolate < 2; extrapolate++) {
        const struct pfs_pwl *c = v->predicted[extrapolate];
        struct pfs_diag first = {0};

        if (!c || v->predicted_by != v->predictor || !v->telemetry)
            return 1;
        for (uint32_t u = 0; u < cs->n_present; u++)
            if (c[cs->rep[cs->present[u]]].n == 0)
                return 1;
        a->curves = c;
        a->decision = NULL;
        rc = pfs__waterfill_counted("pfi", c, v->jobs, cs, cs->cache[extrapolate], v->budget_w,
                                    a->cap, a->tied, &a->left_w, extrapolate ? diag : &first);
        if (rc != PFS_EINVAL)
            break;
    }
    return rc;
}

int
pfs__pfi_tree(const struct pfs_alloc_view *v, const struct pfs_alloc_tree *t,
              struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    int rc = 0;

    /* As pfi_allocate: within the cuts the predictions cover first. */
    for (int extrapolate = 0; extrapolate < 2; extrapolate++) {
        struct pfs_diag first = {0};
        const struct pfs_pwl *c = NULL;

        rc = pfs__predicted_readonly(v, "pfi", extrapolate, &c, diag);
        if (rc == 0)
            rc = pfs__waterfill_tree("pfi", c, v->jobs, v->n_jobs, t, v->budget_w, out,
                                     extrapolate ? diag : &first);
        if (rc != PFS_EINVAL || extrapolate)
            break;
    }
    return rc;
}

static int
pfi_allocate_tree(void *state, const struct pfs_alloc_view *v, const struct pfs_alloc_tree *t,
                  struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    struct pfi_state *s = state;
    struct pfs_alloc_view mine = *v;

    if (s->own)
        mine.predictor = s->own;
    return pfs__pfi_tree(&mine, t, out, diag);
}

static void
pfi_fini(void *state)
{
    struct pfi_state *s = state;

    pfs_predictor_free(s->own);
}

const struct pfs_policy_ops pfs_policy_pfi = {
    .name = "pfi",
    .summary = "maximise predicted throughput: PFI from telemetry (or given), water-filled",
    .state_size = sizeof(struct pfi_state),
    .may_pause = false,
    .memoryless = true,
    .init = pfi_init,
    .allocate = pfi_allocate,
    .fini = pfi_fini,
    .allocate_tree = pfi_allocate_tree,
};
