/*
 * tests/plugins/silent.c - policies that fail without saying why (tests/test_hardening.c,
 * issue 54): quiet-usage returns -7, PFS_EUSAGE's value, which pfisim printed as "invalid
 * usage" with the usage exit status and no policy named; quiet-positive returns 12345, a
 * code outside the table ("unknown error").
 */
#include <pfisim/policy.h>

static int
minus_seven(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
            struct pfs_diag *diag)
{
    (void)state;
    (void)v;
    (void)out;
    (void)diag;
    return -7;
}

static int
positive(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
         struct pfs_diag *diag)
{
    (void)state;
    (void)v;
    (void)out;
    (void)diag;
    return 12345;
}

static const struct pfs_policy_ops quiet_usage = {
    .name = "quiet-usage",
    .summary = "fails with -7 and no message (tests only)",
    .allocate = minus_seven,
};

static const struct pfs_policy_ops quiet_positive = {
    .name = "quiet-positive",
    .summary = "fails with 12345 and no message (tests only)",
    .allocate = positive,
};

PFS_POLICY_PLUGIN(&quiet_usage, &quiet_positive)
