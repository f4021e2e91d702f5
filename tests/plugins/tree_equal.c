/*
 * tests/plugins/tree_equal.c - a policy library of policy ABI 3 that divides under a power
 * tree (allocate_tree) with the helper pfisim exports, pfs_policy_level_tree: under a tree its
 * caps are the built-in equal's (tests/test_tree.c).
 */
#include <pfisim/policy.h>
#include <stdlib.h>

static int
levels(const struct pfs_alloc_view *v, const struct pfs_alloc_tree *t,
       struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    double *lo = calloc(v->n_jobs + 1, sizeof *lo), *hi = calloc(v->n_jobs + 1, sizeof *hi);
    int rc;

    if (!lo || !hi) {
        free(lo);
        free(hi);
        return pfs_policy_fail(diag, PFS_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < v->n_jobs; i++) {
        lo[i] = v->jobs[i].min_w;
        hi[i] = v->jobs[i].max_w;
    }
    rc = t ? pfs_policy_level_tree("tree-equal", v->jobs, v->n_jobs, lo, hi, t, v->budget_w, out,
                                   diag)
           : pfs_policy_level("tree-equal", v->jobs, v->n_jobs, lo, hi, v->budget_w, out, diag);
    free(lo);
    free(hi);
    return rc;
}

static int
allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
         struct pfs_diag *diag)
{
    (void)state;
    return levels(v, NULL, out, diag);
}

static int
allocate_tree(void *state, const struct pfs_alloc_view *v, const struct pfs_alloc_tree *t,
              struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    (void)state;
    return levels(v, t, out, diag);
}

static const struct pfs_policy_ops tree_equal = {
    .name = "tree-equal",
    .summary = "equal, also under a power tree (policy ABI 3)",
    .memoryless = true,
    .allocate = allocate,
    .allocate_tree = allocate_tree,
};

PFS_POLICY_PLUGIN(&tree_equal)
