/*
 * policies/examples/equal_plugin.c - pfisim's equal policy as a plugin: the same cap on every
 * GPU, clamped to each job's limits. Built outside pfisim, against <pfisim/policy.h> alone:
 *
 *     cc -shared -fPIC -O2 -I/usr/local/include -o equal-plugin.so equal_plugin.c
 *     pfisim run --policy-lib ./equal-plugin.so --policy equal,equal-plugin
 *
 * It decides exactly what the built-in equal does (tests/test_plugins.c checks the bytes), and
 * under a power tree (alloc --tree) what the built-in does there (tests/test_tree.c).
 */
#include <stdlib.h>

#include <pfisim/policy.h>

/* The level L with sum n_i clamp(L, min_i, max_i) = budget: every GPU gets L; under a power
 * tree (t, policy ABI 3), the same except where a node's limit holds its GPUs lower. */
static int
levels(const struct pfs_alloc_view *v, const struct pfs_alloc_tree *t,
       struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    double *lo = malloc((v->n_jobs + 1) * sizeof *lo), *hi = malloc((v->n_jobs + 1) * sizeof *hi);
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
    rc = t ? pfs_policy_level_tree("equal-plugin", v->jobs, v->n_jobs, lo, hi, t, v->budget_w, out,
                                   diag)
           : pfs_policy_level("equal-plugin", v->jobs, v->n_jobs, lo, hi, v->budget_w, out, diag);
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

static const struct pfs_policy_ops equal_plugin = {
    .name = "equal-plugin",
    .summary = "the same cap on every GPU, as a plugin (policies/examples/equal_plugin.c)",
    .may_pause = false,
    .memoryless = true,
    .allocate = allocate,
    .allocate_tree = allocate_tree, /* (policy ABI 3: it divides under a power tree too) */
};

PFS_POLICY_PLUGIN(&equal_plugin)
