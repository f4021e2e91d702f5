/*
 * tests/test_pfi_number.c - pfi-rank and pfi-share (issue 57), the source study's one PFI
 * number per job, by hand on three jobs; and pfs_policy_pfi_at, the helper they read it with.
 */
#include <math.h>
#include <string.h>

#include "test.h"

/* Three 1-GPU jobs (200-700 W, reference 700 W) with the given PFI at every cut, or, for
 * the job with a NAN, the PFI rising 0.1 a cut (0.1 at 10% ... 0.5 at 50%). */
static void
three_jobs(struct pfs_alloc_job j[3], struct pfs_telemetry tel[3], const double pfi[3])
{
    for (int i = 0; i < 3; i++) {
        j[i] = (struct pfs_alloc_job){
            .n_gpus = 1, .min_w = 200, .max_w = 700, .ref_w = 700, .idle_w = 75};
        snprintf(j[i].job_id, sizeof j[i].job_id, "%c", 'a' + i);
        memset(&tel[i], 0, sizeof tel[i]);
        pfs__strlcpy(tel[i].job_id, j[i].job_id, sizeof tel[i].job_id);
        tel[i].n_gpus = 1;
        tel[i].tokens_per_s = 100;
        for (int k = 0; k < PFS_N_CUTS; k++)
            tel[i].pfi_given[k] = isnan(pfi[i]) ? 0.1 * (k + 1) : pfi[i];
    }
}

static int
allocate(const char *policy, double budget, struct pfs_alloc_job j[3], struct pfs_telemetry t[3],
         struct pfs_alloc_decision out[3])
{
    struct pfs_alloc_view v = {.budget_w = budget, .n_jobs = 3, .jobs = j, .telemetry = t};
    struct pfs_diag d = {0};

    return pfs_policy_allocate(pfs_policy_find(policy), &v, out, &d);
}

/* PFI a 0.5, b 0.2, c 0.8. At 1,500 W (600 W below their tops), pfi-rank takes from b, the
 * lowest PFI, to its floor (500 W), then 100 W from a: a 600, b 200, c 700. At 900 W (1,200
 * below) b and a go to their floors and c gives the last 200: a 200, b 200, c 500. Below the
 * floors (600 W) it is infeasible. */
void
test_pfi_rank_closed(struct test *t)
{
    static const double pfi[3] = {0.5, 0.2, 0.8};
    struct pfs_alloc_job j[3];
    struct pfs_telemetry tel[3];
    struct pfs_alloc_decision out[3];

    three_jobs(j, tel, pfi);
    CHECK_INT(allocate("pfi-rank", 1500, j, tel, out), 0);
    CHECK_NEAR(out[0].cap_w, 600, 1e-9);
    CHECK_NEAR(out[1].cap_w, 200, 1e-9);
    CHECK_NEAR(out[2].cap_w, 700, 1e-9);
    CHECK_INT(allocate("pfi-rank", 900, j, tel, out), 0);
    CHECK_NEAR(out[0].cap_w, 200, 1e-9);
    CHECK_NEAR(out[1].cap_w, 200, 1e-9);
    CHECK_NEAR(out[2].cap_w, 500, 1e-9);
    CHECK_INT(allocate("pfi-rank", 2100, j, tel, out), 0); /* nothing to take */
    CHECK_NEAR(out[0].cap_w + out[1].cap_w + out[2].cap_w, 2100, 1e-9);
    CHECK_INT(allocate("pfi-rank", 599, j, tel, out), PFS_EINVAL);
}

/* The same jobs under pfi-share: job i gives k / PFI_i. At 1,500 W, k (2 + 5 + 1.25) = 600:
 * k = 72.73, a 700 - 145.45, b 700 - 363.64, c 700 - 90.91. At 900 W b's share (727 W) is
 * more than its 500 W of room: b to its floor, the other 700 W from a and c, k (2 + 1.25) =
 * 700: a 700 - 430.77, c 700 - 269.23. */
void
test_pfi_share_closed(struct test *t)
{
    static const double pfi[3] = {0.5, 0.2, 0.8};
    struct pfs_alloc_job j[3];
    struct pfs_telemetry tel[3];
    struct pfs_alloc_decision out[3];
    double k = 600 / 8.25, k2 = 700 / 3.25;

    three_jobs(j, tel, pfi);
    CHECK_INT(allocate("pfi-share", 1500, j, tel, out), 0);
    CHECK_NEAR(out[0].cap_w, 700 - k / 0.5, 1e-6);
    CHECK_NEAR(out[1].cap_w, 700 - k / 0.2, 1e-6);
    CHECK_NEAR(out[2].cap_w, 700 - k / 0.8, 1e-6);
    CHECK_INT(allocate("pfi-share", 900, j, tel, out), 0);
    CHECK_NEAR(out[0].cap_w, 700 - k2 / 0.5, 1e-6);
    CHECK_NEAR(out[1].cap_w, 200, 1e-9);
    CHECK_NEAR(out[2].cap_w, 700 - k2 / 0.8, 1e-6);
    CHECK(out[0].cap_w + out[1].cap_w + out[2].cap_w <= 900 * (1 + 1e-12));
    CHECK_INT(allocate("pfi-share", 599, j, tel, out), PFS_EINVAL);
}

/* pfs_policy_pfi_at: PFI 0.1 a cut from 0.1 at 10% to 0.5 at 50%, read at the budget's cut:
 * linear between cuts, the nearest outside them; NAN with none known. And a job whose PFI
 * rises with the cut ranks by its PFI at the cut the budget asks: at 1,500 W (a 2/7 cut) a's
 * is 0.286, below b's and c's 0.6: a gives first, to its floor, then b the last 100 W. */
void
test_pfi_at(struct test *t)
{
    static const double pfi[3] = {NAN, 0.6, 0.6};
    struct pfs_alloc_job j[3];
    struct pfs_telemetry tel[3];
    struct pfs_alloc_view v = {.n_jobs = 3, .jobs = j, .telemetry = tel};

    three_jobs(j, tel, pfi);
    {
        struct pfs_alloc_decision out[3];

        CHECK_INT(allocate("pfi-rank", 1500, j, tel, out), 0);
        CHECK_NEAR(out[0].cap_w, 200, 1e-9);
        CHECK_NEAR(out[1].cap_w, 600, 1e-9);
        CHECK_NEAR(out[2].cap_w, 700, 1e-9);
    }
    CHECK_NEAR(pfs_policy_pfi_at(&v, 0, 0.3), 0.3, 1e-12);
    CHECK_NEAR(pfs_policy_pfi_at(&v, 0, 2.0 / 7), 2.0 / 7, 1e-12);
    CHECK_NEAR(pfs_policy_pfi_at(&v, 0, 0.05), 0.1, 0);
    CHECK_NEAR(pfs_policy_pfi_at(&v, 0, 0.9), 0.5, 0);
    tel[0].pfi_given[1] = tel[0].pfi_given[2] = NAN; /* known at 10%, 40%, 50% */
    CHECK_NEAR(pfs_policy_pfi_at(&v, 0, 0.25), 0.1 + 0.15 / 0.3 * 0.3, 1e-12);
    for (int k = 0; k < PFS_N_CUTS; k++)
        tel[0].pfi_given[k] = NAN;
    CHECK(isnan(pfs_policy_pfi_at(&v, 0, 0.3)));
}
