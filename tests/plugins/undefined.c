/*
 * tests/plugins/undefined.c - a policy library that calls a function pfisim does not export
 * to plugins (an internal one, pfs__level): dlopen must refuse it at load, naming the symbol,
 * not fail at the first decision (tests/test_plugins.c).
 */
#include <pfisim/policy.h>

int pfs__level(const char *who, const struct pfs_alloc_job *jobs, size_t n, const double *lo,
               const double *hi, double budget_w, struct pfs_alloc_decision *out,
               struct pfs_diag *diag);

static int
allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
         struct pfs_diag *diag)
{
    (void)state;
    return pfs__level("internal", v->jobs, v->n_jobs, NULL, NULL, v->budget_w, out, diag);
}

static const struct pfs_policy_ops internal = {
    .name = "internal",
    .summary = "calls what is not exported",
    .allocate = allocate,
};

PFS_POLICY_PLUGIN(&internal)
