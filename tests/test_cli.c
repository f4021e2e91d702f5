/*
 * tests/test_cli.c - the command line as a user meets it: help, version, exit codes, and
 * compiler-style errors with the offending line and a caret.
 */
#include <stdlib.h>
#include <unistd.h>

#include "test.h"

void
test_cli_frame(struct test *t)
{
    static const char *const cmds[] = {"run",   "alloc",   "fit",  "import",
                                       "synth", "predict", "plot", "report"};
    char *out, *err, args[600];

    CHECK_INT(test_run(t, "--help", &out, &err), 0);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char want[32];

        snprintf(want, sizeof want, "\n  %s ", cmds[i]);
        if (!strstr(out, want))
            test_fail(t, __FILE__, __LINE__, "--help does not list '%s'", cmds[i]);
    }
    free(out);
    free(err);
    CHECK_INT(test_run(t, "--version", &out, &err), 0);
    CHECK_STR(out, "pfisim " PFS_VERSION "\n");
    free(out);
    free(err);
    CHECK_INT(test_run(t, "help fit", &out, &err), 0);
    CHECK(strncmp(out, "usage: pfisim fit", 17) == 0);
    free(out);
    free(err);
    CHECK_INT(test_run(t, "import --help", &out, &err), 0);
    CHECK(strstr(out, "  emerald ") != NULL);
    free(out);
    free(err);
    CHECK_INT(test_run(t, "frobnicate", &out, &err), 2);
#define UNKNOWN_HEAD "pfisim: unknown command 'frobnicate' (commands: run alloc"
    CHECK(strncmp(err, UNKNOWN_HEAD, sizeof UNKNOWN_HEAD - 1) == 0);
    free(out);
    free(err);
    CHECK_INT(test_run(t, "", &out, &err), 2);
    free(out);
    free(err);
    CHECK_INT(test_run(t, "fit --bogus x.csv", &out, &err), 2);
    free(out);
    free(err);
    CHECK_INT(test_run(t, "report", &out, &err), 2); /* no database named */
    CHECK(strstr(err, "pfisim report: expected one results database") != NULL);
    free(out);
    free(err);
    CHECK_INT(test_run(t, "model h200-sxm --csv --step 250", &out, &err), 0);
    /* Header, three caps; at 200 and 450 W the cap binds (draw = cap), and uncapped the
     * draw is idle + mem + dyn * activity = 75 + 40 + 625 * 0.9 = 677.5 W. */
#define MODEL_HEAD "cap_w,f_mhz,power_w,throughput,rel_throughput\n200,"
    CHECK(strncmp(out, MODEL_HEAD, sizeof MODEL_HEAD - 1) == 0);
    CHECK(strstr(out, "\n450,") != NULL);
    CHECK(strstr(out, ",450,") != NULL);
    CHECK(strstr(out, "\n700,1980,677.5,1,1\n") != NULL);
    free(out);
    free(err);
    snprintf(args, sizeof args, "gpus --csv");
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(out, "\nh200-sxm,\"NVIDIA H200 SXM 141GB (HBM3e)\",200,700,700,75,") != NULL);
    free(out);
    free(err);
}

void
test_cli_bad_input(struct test *t)
{
    char *out, *err, args[1024], want[1024];
    const char *p;

    p = test_write(t, 0, "nan.csv",
                   "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                   "a,h100-sxm,1,300,nan,tokens/s,290\n");
    snprintf(args, sizeof args, "fit %s", p);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    snprintf(want, sizeof want,
             "%s:2:18: error: field 5 (throughput): expected a finite number, got 'nan'\n"
             "    a,h100-sxm,1,300,nan,tokens/s,290\n"
             "                     ^\n",
             p);
    CHECK_STR(err, want);
    CHECK_STR(out, "");
    free(out);
    free(err);

    p = test_write(t, 0, "few.csv",
                   "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                   "ok,h100-sxm,1,300,1,tokens/s,290\n"
                   "ok,h100-sxm,1,500,2,tokens/s,490\n"
                   "ok,h100-sxm,1,700,3,tokens/s,650\n"
                   "few,h100-sxm,1,300,1,tokens/s,290\n"
                   "few,h100-sxm,1,700,2,tokens/s,650\n");
    snprintf(args, sizeof args, "fit --csv %s", p);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    snprintf(want, sizeof want,
             "%s:5: error: job 'few': 2 measured points, a fit needs at least 3\n", p);
    CHECK_STR(err, want);
    CHECK_STR(out, ""); /* no half table */
    free(out);
    free(err);

    p = test_write(t, 0, "gpu.csv",
                   "job_id,gpu,n_gpus,cap_w,throughput,unit,power_w\n"
                   "x,z300,1,300,1,tokens/s,290\n");
    snprintf(args, sizeof args, "fit %s", p);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    snprintf(want, sizeof want,
             "%s:2: error: unknown GPU profile 'z300' (known: a100-pcie, a100-sxm, a40, "
             "b100, b200, gb200, h100-sxm, h200-sxm, p100, rtx6000)\n",
             p);
    CHECK_STR(err, want);
    free(out);
    free(err);

    CHECK_INT(test_run(t, "fit /nonexistent/curves.csv", &out, &err), 4);
    CHECK_STR(err, "/nonexistent/curves.csv: error: cannot open: No such file or directory\n");
    free(out);
    free(err);

    /* An unwritable output: exit 4 and nothing written. */
    p = test_write(t, 1, "in.csv",
                   "Workload,GPU power cap,throughput,total GPU power,normalized throughput,"
                   "power per GPU\n"
                   "w,200,1,400,1,200\n");
    snprintf(args, sizeof args, "import emerald --gpu a100-sxm %s -o /nonexistent/out.csv", p);
    CHECK_INT(test_run(t, args, &out, &err), 4);
#define UNWRITABLE_HEAD "/nonexistent/out.csv: error: cannot write:"
    CHECK(strncmp(err, UNWRITABLE_HEAD, sizeof UNWRITABLE_HEAD - 1) == 0);
    CHECK(access("/nonexistent/out.csv", F_OK) != 0);
    free(out);
    free(err);
    /* A bad input file: exit 3 and the output is not created. */
    p = test_write(t, 2, "bad.csv",
                   "Workload,GPU power cap,throughput,total GPU power,normalized throughput,"
                   "power per GPU\n"
                   "w,200,1,400,1,200\n"
                   "w,250,1,450,1,-3\n");
    snprintf(args, sizeof args, "import emerald --gpu a100-sxm %s -o %s/out.csv", p, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(strstr(err, "bad.csv:3:15: error: field 6 (power per GPU): must be positive, got '-3'") !=
          NULL);
    snprintf(want, sizeof want, "%s/out.csv", t->tmpdir);
    CHECK(access(want, F_OK) != 0);
    free(out);
    free(err);
    /* No GPU where the file does not say it: a usage error. */
    snprintf(args, sizeof args, "import emerald %s", p);
    CHECK_INT(test_run(t, args, &out, &err), 2);
    free(out);
    free(err);
    /* A truncated nvidia-smi log: exit 3, the line named. */
    p = test_write(t, 3, "smi.csv",
                   "timestamp, index, power.draw [W], power.limit [W], clocks.sm [MHz], "
                   "utilization.gpu [%], utilization.memory [%]\n"
                   "2026/11/29 23:15:27.100, 0, 650.00 W, 700.00 W, 1980 MHz, 99 %, 40 %\n"
                   "2026/11/29 23:15:28.100, 0, 650.00 W, 70");
    snprintf(args, sizeof args, "import nvidia-smi --gpu h200-sxm %s", p);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    snprintf(want, sizeof want, "%s:3:", p);
    CHECK(strncmp(err, want, strlen(want)) == 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "import nvidia-smi %s", p);
    CHECK_INT(test_run(t, args, &out, &err), 2); /* no --gpu */
    free(out);
    free(err);
    CHECK_INT(test_run(t, "import nosuch x.csv", &out, &err), 2);
    CHECK_STR(
        err,
        "pfisim import: unknown format 'nosuch' (known: perseus zeus emerald nvidia-smi dcgm)\n");
    free(out);
    free(err);
}
