/*
 * tests/plugins/constructor.c - a library whose code runs the moment it is loaded, as an
 * attacker's would (tests/test_hardening.c, issue 54): its constructor appends a line to
 * the file $PFISIM_TEST_MARK names, before pfisim could check anything. It is also a valid
 * policy library (one policy, marked-equal, which caps every GPU alike), so that a test
 * shows the same file loading, and the mark appearing, where loading was allowed.
 */
#include <stdio.h>
#include <stdlib.h>

#include <pfisim/policy.h>

__attribute__((constructor)) static void
mark(void)
{
    const char *path = getenv("PFISIM_TEST_MARK");
    FILE *fp = path && *path ? fopen(path, "a") : NULL;

    if (fp) {
        fputs("code ran\n", fp);
        fclose(fp);
    }
}

static int
allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
         struct pfs_diag *diag)
{
    double *lo = malloc((v->n_jobs + 1) * sizeof *lo), *hi = malloc((v->n_jobs + 1) * sizeof *hi);
    int rc;

    (void)state;
    if (!lo || !hi) {
        free(lo);
        free(hi);
        return pfs_policy_fail(diag, PFS_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < v->n_jobs; i++) {
        lo[i] = v->jobs[i].min_w;
        hi[i] = v->jobs[i].max_w;
    }
    rc = pfs_policy_level("marked-equal", v->jobs, v->n_jobs, lo, hi, v->budget_w, out, diag);
    free(lo);
    free(hi);
    return rc;
}

static const struct pfs_policy_ops marked_equal = {
    .name = "marked-equal",
    .summary = "equal, from a library whose constructor leaves a mark (tests only)",
    .memoryless = true,
    .allocate = allocate,
};

PFS_POLICY_PLUGIN(&marked_equal)
