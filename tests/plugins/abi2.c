/*
 * tests/plugins/abi2.c - a policy library built for policy ABI 2 (before trees): pfisim loads
 * it, runs it on a budget as before, and refuses it under a power tree by name
 * (tests/test_tree.c). Its descriptor is the ABI 2 layout: the fields up to pause_rank.
 */
#include <pfisim/policy.h>
#include <stdlib.h>

struct ops_abi2 { /* struct pfs_policy_ops as ABI 2 laid it out */
    const char *name, *summary;
    size_t state_size;
    bool may_pause, memoryless;
    pfs_policy_init_fn init;
    pfs_policy_allocate_fn allocate;
    pfs_policy_observe_fn observe;
    pfs_policy_fini_fn fini;
    pfs_policy_pause_rank_fn pause_rank;
};

static int
allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
         struct pfs_diag *diag)
{
    double *lo = NULL, *hi = NULL;
    int rc;

    (void)state;
    if (!(lo = calloc(v->n_jobs + 1, sizeof *lo)) || !(hi = calloc(v->n_jobs + 1, sizeof *hi))) {
        free(lo);
        return pfs_policy_fail(diag, PFS_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < v->n_jobs; i++) {
        lo[i] = v->jobs[i].min_w;
        hi[i] = v->jobs[i].max_w;
    }
    rc = pfs_policy_level("old-equal", v->jobs, v->n_jobs, lo, hi, v->budget_w, out, diag);
    free(lo);
    free(hi);
    return rc;
}

static const struct ops_abi2 old = {
    .name = "old-equal",
    .summary = "equal, built for policy ABI 2",
    .memoryless = true,
    .allocate = allocate,
};

const struct pfs_policy_plugin *
pfisim_policy_plugin(void)
{
    /* (the ABI 2 descriptor read through the pointer type the ABI names: what a library
     * compiled against ABI 2's header held) */
    static const struct pfs_policy_ops *list[2];
    static const struct pfs_policy_plugin plugin = {2, list};

    list[0] = (const struct pfs_policy_ops *)(const void *)&old;
    return &plugin;
}
