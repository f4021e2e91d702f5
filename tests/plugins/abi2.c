/*
 * tests/plugins/abi2.c - a policy library built for policy ABI 2 (before trees): pfisim loads
 * it, runs it on a budget as before, and refuses it under a power tree by name
 * (tests/test_tree.c). It is the shipped example's equal, its descriptor laid out as ABI 2
 * laid descriptors out (the fields up to pause_rank) and its entry saying ABI 2.
 */
#include <pfisim/policy.h>

#undef PFS_POLICY_PLUGIN
#define PFS_POLICY_PLUGIN(...) /* (the example's entry point is ABI 3's: ours is below) */
#include "../../policies/examples/equal_plugin.c"

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

static const struct ops_abi2 old = {
    .name = "old-equal",
    .summary = "equal, built for policy ABI 2",
    .memoryless = true,
    .allocate = allocate,
};

const struct pfs_policy_plugin *
pfisim_policy_plugin(void)
{
    /* (the ABI 2 descriptor through the pointer type the ABI names: what a library compiled
     * against ABI 2's header held) */
    static const struct pfs_policy_ops *list[2];
    static const struct pfs_policy_plugin plugin = {2, list};

    (void)equal_plugin;
    list[0] = (const struct pfs_policy_ops *)(const void *)&old;
    return &plugin;
}
