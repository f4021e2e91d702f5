/*
 * tests/test_telemetry.c - nvidia-smi and dcgmi dmon logs, written exactly as the tools
 * print them, summarised to their steady state; the means are worked out by hand.
 */
#include <stdlib.h>

#include "test.h"

static int
import(struct test *t, const char *format, const char *log, struct pfs_corpus_job *j,
       struct pfs_diag *d)
{
    struct pfs_gpu g;
    const char *p = test_write(t, 0, "log.txt", log);

    memset(j, 0, sizeof *j);
    pfs_diag_clear(d);
    if (pfs_gpu_find("h200-sxm", &g, d) != 0)
        return -1;
    return pfs_telemetry_find(format)->read(p, &g, j, d);
}

/* Two GPUs: one idle second, then three working seconds. The working span is 28.1-30.1 s;
 * its first 10% (up to 28.3 s) is warm-up, so the 29.1 and 30.1 s samples remain:
 * power (600 + 610 + 620 + 630) / 4 = 615 W, 615 / 700 = 0.878571 of the limit,
 * clock (1950 + 1950 + 1960 + 1960) / 4 = 1955 MHz. */
static const char smi_units[] =
    "timestamp, index, power.draw [W], power.limit [W], clocks.sm [MHz], utilization.gpu [%], "
    "utilization.memory [%]\n"
    "2026/11/29 23:15:27.100, 0, 74.10 W, 700.00 W, 345 MHz, 0 %, 0 %\n"
    "2026/11/29 23:15:27.100, 1, 75.20 W, 700.00 W, 345 MHz, 0 %, 0 %\n"
    "2026/11/29 23:15:28.100, 0, 650.00 W, 700.00 W, 1980 MHz, 99 %, 40 %\n"
    "2026/11/29 23:15:28.100, 1, 640.00 W, 700.00 W, 1980 MHz, 99 %, 40 %\n"
    "2026/11/29 23:15:29.100, 0, 600.00 W, 700.00 W, 1950 MHz, 99 %, 40 %\n"
    "2026/11/29 23:15:29.100, 1, 610.00 W, 700.00 W, 1950 MHz, 99 %, 40 %\n"
    "2026/11/29 23:15:30.100, 0, 620.00 W, 700.00 W, 1960 MHz, 98 %, 41 %\n"
    "2026/11/29 23:15:30.100, 1, 630.00 W, 700.00 W, 1960 MHz, 98 %, 41 %\n";

static const char smi_nounits[] =
    "timestamp, index, power.draw [W], power.limit [W], clocks.sm [MHz], utilization.gpu [%], "
    "utilization.memory [%]\n"
    "2026/11/29 23:59:58.100, 0, 74.10, 700.00, 345, 0, 0\n"
    "2026/11/29 23:59:59.100, 0, 650.00, 700.00, 1980, 99, 40\n"
    "2026/11/30 00:00:00.100, 0, 600.00, 700.00, 1950, 99, 40\n"
    "2026/11/30 00:00:01.100, 0, [N/A], 700.00, 1950, 99, 40\n"
    "2026/11/30 00:00:02.100, 0, 620.00, 700.00, 1960, 98, 41\n"
    "2026/11/30 00:00:03.100, 0, 630.00, 350.00, 1970, 98, 41\n";

void
test_telemetry_nvidia_smi(struct test *t)
{
    struct pfs_corpus_job j;
    struct pfs_diag d;

    CHECK_INT(import(t, "nvidia-smi", smi_units, &j, &d), 0);
    CHECK_INT(j.n_gpus, 2);
    CHECK_NEAR(j.power_w, 615.0, 1e-9);
    CHECK_NEAR(j.power_frac, 615.0 / 700.0, 1e-12);
    CHECK_NEAR(j.sm_clock_mhz, 1955.0, 1e-9);
    CHECK(isnan(j.sm_active) && isnan(j.tensor_active) && isnan(j.dram_active));
    CHECK(isnan(j.pfi[2]));

    /* nounits, across midnight, a [N/A] sample skipped, one sample at a 350 W limit. The
     * working span 59.1-63.1 s cuts warm-up at 59.5 s: samples at 60.1, 62.1, 63.1 s:
     * power (600 + 620 + 630) / 3, fraction (600/700 + 620/700 + 630/350) / 3. */
    CHECK_INT(import(t, "nvidia-smi", smi_nounits, &j, &d), 0);
    CHECK_INT(j.n_gpus, 1);
    CHECK_NEAR(j.power_w, 1850.0 / 3, 1e-9);
    CHECK_NEAR(j.power_frac, (600.0 / 700 + 620.0 / 700 + 630.0 / 350) / 3, 1e-12);
    CHECK_NEAR(j.sm_clock_mhz, (1950.0 + 1960 + 1970) / 3, 1e-9);
}

void
test_telemetry_dcgm(struct test *t)
{
    /* dmon prints its header again every so often; N/A where a field has no value. GPU 0 and
     * 1 each have 11 active samples (ordinals 0..10 after one idle row): the warm-up is the
     * first 10% of the span, ordinal < 1.0, so ordinals 1..10 remain. GPU 0's power grows
     * 300, 310, ..., 400 over ordinals 0..10; GPU 1 is 500 throughout. */
    char log[8192] = "";
    size_t used = 0;
    struct pfs_corpus_job j;
    struct pfs_diag d;

    used +=
        (size_t)snprintf(log + used, sizeof log - used,
                         "#Entity   POWER    TMPTR  SMACT  SMOCC  TENSO  DRAMA  NVLTX     "
                         "   NVLRX\n"
                         "ID        W        C\n"
                         "GPU 0     76.000   33     0.000  0.000  0.000  0.000  0         0\n"
                         "GPU 1     77.000   33     0.000  0.000  0.000  0.000  N/A       N/A\n");
    for (int k = 0; k <= 10; k++) {
        if (k == 5)
            used += (size_t)snprintf(log + used, sizeof log - used,
                                     "#Entity   POWER    TMPTR  SMACT  SMOCC  TENSO  DRAMA  "
                                     "NVLTX        NVLRX\n"
                                     "ID        W        C\n");
        used += (size_t)snprintf(log + used, sizeof log - used,
                                 "GPU 0     %.3f  60     0.900  0.400  0.500  0.300  "
                                 "100000000000 50000000000\n"
                                 "GPU 1     500.000  61     0.700  0.300  N/A    0.500  "
                                 "0            0\n",
                                 300.0 + 10 * k);
    }
    CHECK_INT(import(t, "dcgm", log, &j, &d), 0);
    CHECK_INT(j.n_gpus, 2);
    /* GPU 0 ordinals 1..10: mean 300 + 10 * 5.5 = 355; GPU 1: 500; 10 samples each. */
    CHECK_NEAR(j.power_w, (355.0 + 500.0) / 2, 1e-9);
    CHECK_NEAR(j.power_frac, (355.0 + 500.0) / 2 / 700, 1e-12);
    CHECK_NEAR(j.sm_active, 0.8, 1e-12);
    CHECK_NEAR(j.tensor_active, 0.5, 1e-12); /* GPU 1's N/A does not count */
    CHECK_NEAR(j.dram_active, 0.4, 1e-12);
    CHECK_NEAR(j.nvlink_gbps, (150.0 + 0.0) / 2, 1e-9); /* (tx + rx) bytes/s as GB/s */
    CHECK(isnan(j.sm_clock_mhz));                       /* dmon -e 155,... carries no clock */
}

void
test_telemetry_bad_logs(struct test *t)
{
    struct pfs_corpus_job j;
    struct pfs_diag d;
    char log[2048];

    /* A truncated nvidia-smi log: the last row stops mid-way. */
    snprintf(log, sizeof log, "%s2026/11/29 23:15:31.100, 0, 630.00 W, 700.0", smi_units);
    CHECK_INT(import(t, "nvidia-smi", log, &j, &d), PFS_EINVAL);
    CHECK_INT(d.line, 10);
    CHECK_STR(d.message, "field 5 (clocks.sm): missing (the row has 4 fields): a truncated log?");
    /* Time going backwards on one GPU. */
    snprintf(log, sizeof log,
             "%s2026/11/29 23:15:29.000, 1, 630.00 W, 700.00 W, 1960 MHz, 98 "
             "%%, 41 %%\n",
             smi_units);
    CHECK_INT(import(t, "nvidia-smi", log, &j, &d), PFS_EINVAL);
    CHECK_INT(d.line, 10);
    CHECK_INT(d.column, 1);
    CHECK_STR(d.message, "field 1 (timestamp): goes backwards for GPU 1 (1.100 s before its "
                         "previous sample)");
    /* Not a timestamp. */
    CHECK_INT(import(t, "nvidia-smi",
                     "timestamp, index, power.draw [W], power.limit [W], clocks.sm [MHz], "
                     "utilization.gpu [%], utilization.memory [%]\n"
                     "yesterday, 0, 74.10 W, 700.00 W, 345 MHz, 0 %, 0 %\n",
                     &j, &d),
              PFS_EINVAL);
    CHECK_STR(d.message, "field 1 (timestamp): expected YYYY/MM/DD HH:MM:SS.mmm, got 'yesterday'");
    /* A power limit of 0 (issue 17: power_frac became inf). */
    CHECK_INT(import(t, "nvidia-smi",
                     "timestamp, index, power.draw [W], power.limit [W], clocks.sm [MHz], "
                     "utilization.gpu [%], utilization.memory [%]\n"
                     "2026/02/27 23:15:27.100, 0, 74.10 W, 0.00 W, 345 MHz, 0 %, 0 %\n",
                     &j, &d),
              PFS_EINVAL);
    CHECK_STR(d.message,
              "field 4 (power.limit): 0 W: a power limit must be positive ([N/A] when unknown)");
    /* A date that is not one (issue 17: 31 February was taken as 3 March). */
    CHECK_INT(import(t, "nvidia-smi",
                     "timestamp, index, power.draw [W], power.limit [W], clocks.sm [MHz], "
                     "utilization.gpu [%], utilization.memory [%]\n"
                     "2026/02/31 23:15:27.100, 0, 74.10 W, 700.00 W, 345 MHz, 0 %, 0 %\n",
                     &j, &d),
              PFS_EINVAL);
    CHECK_STR(d.message, "field 1 (timestamp): expected YYYY/MM/DD HH:MM:SS.mmm, got '2026/02/31 "
                         "23:15:27.100'");
    /* A query without the clock. */
    CHECK_INT(import(t, "nvidia-smi", "timestamp, index, power.draw [W]\n", &j, &d), PFS_EINVAL);
    CHECK(strncmp(d.message, "missing column 'power.limit'", 28) == 0);
    /* Only idle samples. */
    CHECK_INT(import(t, "nvidia-smi",
                     "timestamp, index, power.draw [W], power.limit [W], clocks.sm [MHz], "
                     "utilization.gpu [%], utilization.memory [%]\n"
                     "2026/11/29 23:15:27.100, 0, 74.10 W, 700.00 W, 345 MHz, 0 %, 0 %\n",
                     &j, &d),
              PFS_EINVAL);
    CHECK_STR(d.message, "0 steady-state samples (idle and warm-up excluded); need at least 3");
    /* A truncated dmon log. */
    CHECK_INT(import(t, "dcgm",
                     "#Entity   POWER    TMPTR  SMACT  SMOCC  TENSO  DRAMA  NVLTX   NVLRX\n"
                     "ID        W        C\n"
                     "GPU 0     300.000  60     0.900  0.400  0.500  0.300  10      5\n"
                     "GPU 1     300.000  60     0.9\n",
                     &j, &d),
              PFS_EINVAL);
    CHECK_INT(d.line, 4);
    CHECK_STR(d.message, "expected 8 values after 'GPU N', got 3: a truncated log?");
    CHECK_INT(import(t, "dcgm", "GPU 0     300.000\n", &j, &d), PFS_EINVAL);
    CHECK_STR(d.message, "a GPU row before any #Entity header");
    CHECK_INT(import(t, "dcgm",
                     "#Entity   POWER    SMACT  TENSO  DRAMA\nGPU 0  300  1.7  0.5  0.3\n", &j, &d),
              PFS_EINVAL);
    CHECK_STR(d.message, "field SMACT: bad value '1.7'");
    CHECK_INT(d.column, 13); /* "GPU 0  300  " is 12 bytes */
}

void
test_telemetry_real_h200(struct test *t)
{
    /* A real nvidia-smi log (tests/data/h200-mlp-nvidia-smi.csv: our own H200 at its default
     * settings, a bf16 MLP in training; note the header says clocks.current.sm). The expected
     * summary is recomputed here by brute force from the file with sscanf: samples above
     * 75 + 0.1 x (700 - 75) W and at least 10% busy are active; the first 10% of their time
     * span is warm-up; the rest is averaged. */
    const char *path = "tests/data/h200-mlp-nvidia-smi.csv";
    const struct pfs_telemetry_ops *ops = pfs_telemetry_find("nvidia-smi");
    double ts[400], pw[400], ck[400], t0 = INFINITY, t1 = -INFINITY, sum_p = 0, sum_c = 0;
    size_t n = 0, used = 0;
    char line[512];
    struct pfs_corpus_job j;
    struct pfs_diag d = {0};
    FILE *fp = fopen(path, "r");
    struct pfs_gpu g;

    CHECK(fp != NULL);
    if (!fp || !ops)
        return;
    while (n < 400 && fgets(line, sizeof line, fp)) {
        int hh, mm, idx;
        double ss, p, lim, c, util;

        if (sscanf(line, "%*d/%*d/%*d %d:%d:%lf, %d, %lf W, %lf W, %lf MHz, %lf %%", &hh, &mm, &ss,
                   &idx, &p, &lim, &c, &util) == 8 &&
            p > 75 + 0.1 * (700 - 75) && util >= 10) {
            ts[n] = hh * 3600.0 + mm * 60 + ss;
            pw[n] = p;
            ck[n] = c;
            t0 = fmin(t0, ts[n]);
            t1 = fmax(t1, ts[n]);
            n++;
        }
    }
    fclose(fp);
    CHECK(n > 100); /* two minutes of training at 1 s */
    for (size_t i = 0; i < n; i++)
        if (ts[i] >= t0 + 0.1 * (t1 - t0)) {
            sum_p += pw[i];
            sum_c += ck[i];
            used++;
        }
    CHECK_INT(pfs_gpu_find("h200-sxm", &g, &d), 0);
    CHECK_INT(ops->read(path, &g, &j, &d), 0);
    CHECK_INT(j.n_gpus, 1);
    CHECK_NEAR(j.power_w, sum_p / (double)used, 1e-9);
    CHECK_NEAR(j.sm_clock_mhz, sum_c / (double)used, 1e-9);
    /* What it says: at the default 700 W limit this job draws 98-99% of it, with the SM
     * clock held well below its 1,980 MHz maximum: the limit binds. */
    CHECK(j.power_frac > 0.97 && j.power_frac <= 1.0);
    CHECK(j.sm_clock_mhz < 1700);
}
