/*
 * tests/plugins/bad_abi.c - a policy library that says it was built for the next policy ABI:
 * pfisim must refuse it, naming both versions (tests/test_plugins.c).
 */
#include <pfisim/policy.h>

static int
allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
         struct pfs_diag *diag)
{
    (void)state;
    (void)v;
    (void)out;
    (void)diag;
    return 0;
}

static const struct pfs_policy_ops future = {
    .name = "from-the-future",
    .summary = "built for another ABI",
    .allocate = allocate,
};

const struct pfs_policy_plugin *
pfisim_policy_plugin(void)
{
    static const struct pfs_policy_ops *const list[] = {&future, NULL};
    static const struct pfs_policy_plugin plugin = {PFS_POLICY_ABI + 1, list};

    return &plugin;
}
