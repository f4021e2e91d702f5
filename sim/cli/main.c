/*
 * sim/cli/main.c - the pfisim command line: the table of commands (each with its help text next
 * to its code in this folder), pfisim help, and main.
 */
#include <errno.h>
#include <getopt.h>
#include <gsl/gsl_errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* ---------------------------------------------------------------------------------------
 * Help texts
 */

struct command {
    const char *name;
    const char *summary;
    const char *usage; /* full help text, printed by --help and `pfisim help NAME` */
    int (*run)(int argc, char **argv);
};

static const struct command *find_command(const char *name);

static int cmd_help(int argc, char **argv);

static const struct command commands[] = {
    {"run", "replay a scenario: every policy on the same workload, power, DR, deadlines",
     pfs_cli_run_help, pfs_cli_run},
    {"alloc", "one-shot allocation of a power budget by every policy", pfs_cli_alloc_help,
     pfs_cli_alloc},
    {"scale", "jobs at another size on GPUs that differ; PFI by job size", pfs_cli_scale_help,
     pfs_cli_scale},
    {"fit", "fit the DVFS model to a curves CSV; fit error and PFI per job", pfs_cli_fit_help,
     pfs_cli_fit},
    {"import", "convert real power-cap data (perseus, zeus, emerald) to a curves CSV",
     pfs_cli_import_help, pfs_cli_import},
    {"model", "print the DVFS model's curve for a job on a GPU profile", pfs_cli_model_help,
     pfs_cli_model},
    {"gpus", "list the GPU profiles", pfs_cli_gpus_help, pfs_cli_gpus},
    {"synth", "generate the synthetic H100/H200 corpus", pfs_cli_synth_help, pfs_cli_synth},
    {"study", "the source study's headline reproduced over prediction quality and corpus",
     pfs_cli_study_help, pfs_cli_study},
    {"predict", "train, evaluate and explain the telemetry-to-PFI predictor", pfs_cli_predict_help,
     pfs_cli_predict},
    {"plot", "figures from a results database", pfs_cli_plot_help, pfs_cli_plot},
    {"report", "PDF report from a results database", pfs_cli_report_cmd_help, pfs_cli_report_cmd},
    {"sweep", "a grid of scenarios (axes over any setting) into one results database",
     pfs_cli_sweep_help, pfs_cli_sweep},
    {"merge", "combine results databases (the shards of a sweep)", pfs_cli_merge_help,
     pfs_cli_merge},
    {"price", "interruptible-tier pricing: discounts and revenue per MW from a database",
     pfs_cli_price_help, pfs_cli_price},
    {"grid", "DR events from a utility's hourly demand above a threshold", pfs_cli_grid_help,
     pfs_cli_grid},
    {"workload", "build a workload from real or fitted arrivals and the corpus",
     pfs_cli_workload_help, pfs_cli_workload},
    {"capacity", "how many GPUs fit behind the cap, with and without DR, per policy",
     pfs_cli_capacity_help, pfs_cli_capacity},
    {"check", "validate a scenario and say what it means (pools, draw against the cap, events)",
     pfs_cli_check_help, pfs_cli_check},
    {"policy-check", "check a policy (yours: a plugin or a program) against the policy rules",
     pfs_cli_policy_check_help, pfs_cli_policy_check},
    {"help", "help on a command", NULL, cmd_help},
    {NULL, NULL, NULL, NULL},
};

static const struct command *
find_command(const char *name)
{
    for (const struct command *c = commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

static const char *
command_name_at(size_t i)
{
    return i < sizeof commands / sizeof commands[0] ? commands[i].name : NULL;
}

static void
print_main_help(FILE *fp)
{
    fprintf(fp, "usage: pfisim [--help] [--version] [--list-policies] COMMAND [ARGS]\n"
                "\n"
                "pfisim simulates datacenter GPU power allocation under power caps and\n"
                "demand-response events, and measures jobs' Power Flexibility Index (PFI).\n"
                "\n"
                "Commands:\n");
    for (const struct command *c = commands; c->name; c++)
        fprintf(fp, "  %-8s %s\n", c->name, c->summary);
    fprintf(fp,
            "\n'pfisim help COMMAND' or 'pfisim COMMAND --help' tells more.\n"
            "Exit status: 0 ok, 1 failure, 2 usage, 3 invalid input, 4 I/O error.\n"
            "Real data: $PFISIM_DATA (now: %s).\n",
            pfs_data_dir());
}

static int
cmd_help(int argc, char **argv)
{
    const struct command *c;

    if (argc < 2) {
        print_main_help(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        /* help on help: the command list (before, exit 2) */
        print_main_help(stdout);
        return EXIT_OK;
    }
    c = find_command(argv[1]);
    if (!c || !c->usage) {
        fprintf(stderr, "pfisim help: unknown command '%.64s'%s\n", argv[1],
                pfs_cli_suggest(argv[1], command_name_at));
        return EXIT_USAGE;
    }
    if (c->run == pfs_cli_import) {
        char *args[] = {(char *)"import", (char *)"--help", NULL};

        optind = 0;
        return pfs_cli_import(2, args);
    }
    fputs(c->usage, stdout);
    return EXIT_OK;
}

/*
 * Signals. SIGINT, SIGTERM and SIGHUP are blocked in every thread and taken by one watcher
 * thread (sigwait), which can do what a handler may not. The first asks the work to stop
 * (pfs_interrupt): a run stops at its next simulated minute and the command ends as on a
 * failure, through its own paths (its temporary files removed, a new database keeping the
 * runs it finished, as a sweep's does), with exit 128 + the signal. Work that does not look
 * (reading a large file) is given GRACE_S; past it, or at a second signal, the watcher
 * removes the temporary files and ends the process itself. docs/reliability.md, "Signals".
 */
#define GRACE_S 5

static sigset_t stop_signals;
static atomic_int caught; /* the first signal taken, 0 before */

static void *
watch_signals(void *arg)
{
    struct timespec grace = {GRACE_S, 0};
    int sig = 0;

    (void)arg;
    if (sigwait(&stop_signals, &sig) != 0)
        return NULL;
    atomic_store(&caught, sig);
    pfs_interrupt();
    (void)sigtimedwait(&stop_signals, NULL, &grace); /* a second signal, or the grace spent */
    pfs_tmp_remove_all();
    pfs_policy_exec_kill_all();
    fprintf(stderr, "pfisim: %s: stopped\n", strsignal(sig));
    _exit(128 + sig);
}

/* The watcher started, the signals blocked in this thread and so in every thread it makes.
 * Where it cannot start, the signals keep their default action (the process ends at once). */
static void
watch_start(void)
{
    pthread_t th;
    pthread_attr_t attr;

    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGHUP);
    if (pthread_sigmask(SIG_BLOCK, &stop_signals, NULL) != 0)
        return;
    if (pthread_attr_init(&attr) == 0) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        if (pthread_create(&th, &attr, watch_signals, NULL) == 0) {
            pthread_attr_destroy(&attr);
            return;
        }
        pthread_attr_destroy(&attr);
    }
    pthread_sigmask(SIG_UNBLOCK, &stop_signals, NULL);
}

int
main(int argc, char **argv)
{
    const struct command *c;
    int code;

    gsl_set_error_handler_off();
    watch_start();
    if (argc < 2) {
        print_main_help(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_main_help(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--list-policies") == 0) {
        for (size_t i = 0; pfs_policy_at(i); i++)
            printf("%-20s %s\n", pfs_policy_name(pfs_policy_at(i)),
                   pfs_policy_summary(pfs_policy_at(i)));
        printf("%-20s %s\n", "(your own)",
               "pfisim run --policy-lib FILE.so or --policy-exec CMD adds a policy of yours "
               "(docs/policies.md, \"Your own policy\"); pfisim policy-check checks it");
        printf("%-20s %s\n", "NAME+sync-shift",
               "in a scenario: policy NAME across jobs, power shifted within each job so that "
               "its GPUs hold one clock (with facility.variability; docs/policies.md)");
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("pfisim %s\n", PFS_VERSION);
        return EXIT_OK;
    }
    c = find_command(argv[1]);
    if (!c) {
        fprintf(stderr, "pfisim: unknown command '%.64s'%s (commands:", argv[1],
                pfs_cli_suggest(argv[1], command_name_at));
        for (const struct command *k = commands; k->name; k++)
            fprintf(stderr, " %s", k->name);
        fprintf(stderr, ")\n");
        return EXIT_USAGE;
    }
    optind = 0; /* a full reset of GNU getopt for the subcommand's own argv */
    code = c->run(argc - 1, argv + 1);
    pfs_policy_exec_close_all(); /* external policy programs (--policy-exec) end with us */
    if (atomic_load(&caught)) {  /* stopped by a signal, through the command's own paths */
        pfs_tmp_remove_all();    /* (any a path not yet taught to look left behind) */
        fprintf(stderr, "pfisim: %s: stopped\n", strsignal(atomic_load(&caught)));
        fflush(stdout);
        _exit(128 + atomic_load(&caught));
    }
    return code;
}
