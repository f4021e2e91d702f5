/*
 * tests/plugins/no_entry.c - a shared library that is not a policy library: it exports no
 * pfisim_policy_plugin (tests/test_plugins.c).
 */
#include <pfisim/policy.h>

int not_a_policy(void);

int
not_a_policy(void)
{
    return PFS_POLICY_ABI;
}
