/*
 * sim/cli/policy.c - pfisim policy-check: the registry's conformance rules on any policy, a
 * plugin's or an external program's included (sim/conformance.c, docs/policies.md).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char pfs_cli_policy_check_help[] =
    "usage: pfisim policy-check [--policy-lib FILE]... [--policy-exec CMD]...\n"
    "                           [--policy NAME]... [--instances N] [--seed N]\n"
    "                           [--policy-timeout SEC] [--csv]\n"
    "\n"
    "Checks policies against the rules every pfisim policy keeps, on seeded random\n"
    "instances (1 to 60 H100/H200 jobs on the DVFS model's curves, budgets from the\n"
    "minimum caps to above the maxima, and a fifth of them below the minimum caps):\n"
    "  limits       every cap within the job's GPU limits, pauses in [0, 1]\n"
    "  pausing      no pause (or fewer GPUs) unless the policy says it may pause\n"
    "  budget       the decisions commit at most the budget\n"
    "  infeasible   below the minimum caps: refused with a message, or met by pausing\n"
    "  determinism  the same view twice, the same decisions bit for bit\n"
    "  memoryless   if claimed, the same decisions whatever the time-varying fields say\n"
    "  errors       no failure but a refusal with a message\n"
    "It checks the policies the options add, or those named with --policy (pfisim's own\n"
    "too). Prints per policy and rule the answers tried, those that broke it and the first\n"
    "that did. Exit status 0 when every rule holds, 1 when one does not, 3 when a library or\n"
    "program cannot be used.\n"
    "\n"
    "  --policy NAME         check this policy (repeatable; default: those added)\n"
    "  --instances N         instances (default 200)\n"
    "  --seed N              their seed (default 1)\n"
    "  --csv                 policy,rule,tried,failed,first\n" PFS_CLI_PLUGIN_HELP;

int
pfs_cli_policy_check(int argc, char **argv)
{
    static const struct option opts[] = {{"policy", required_argument, 0, 'p'},
                                         {"instances", required_argument, 0, 'n'},
                                         {"seed", required_argument, 0, 's'},
                                         {"csv", no_argument, 0, 'c'},
                                         {"help", no_argument, 0, 'h'},
                                         PFS_CLI_PLUGIN_OPTIONS,
                                         {0, 0, 0, 0}};
    struct pfs_cli_plugins plugins = {0};
    const char *names[64];
    size_t n_names = 0;
    unsigned long instances = 200, seed = 1;
    bool csv = false, any_failed = false;
    int c, code;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (n_names == 64) /* (the 65th was dropped without a word) */
                return pfs_cli_usage("policy-check", "%s", "at most 64 --policy");
            names[n_names++] = optarg;
            break;
        case 'n':
            if (!pfs_cli_parse_count(optarg, &instances) || instances < 1 || instances > 100000)
                return pfs_cli_usage("policy-check", "--instances takes 1 to 100000, got '%s'",
                                     optarg);
            break;
        case 's':
            if (!pfs_cli_parse_count(optarg, &seed))
                return pfs_cli_usage("policy-check",
                                     "--seed takes a non-negative integer, got '%s'", optarg);
            break;
        case 'c':
            csv = true;
            break;
        case 'h':
            fputs(pfs_cli_policy_check_help, stdout);
            return EXIT_OK;
        default:
            if ((code = pfs_cli_plugins_option(&plugins, "policy-check", c, optarg)) == 1)
                break;
            return code == 2 ? EXIT_USAGE : pfs_cli_usage("policy-check", "%s", "bad option");
        }
    }
    if (optind < argc)
        return pfs_cli_usage("policy-check", "unexpected argument '%s'", argv[optind]);
    if ((code = pfs_cli_plugins_load(&plugins)) != EXIT_OK)
        return code;
    if (n_names == 0) {
        for (size_t k = 0; k < plugins.n_added; k++)
            names[n_names++] = plugins.added[k];
        if (n_names == 0)
            return pfs_cli_usage("policy-check", "%s",
                                 "nothing to check: give --policy-lib, --policy-exec or --policy");
    }
    for (size_t k = 0; k < n_names; k++)
        if (!pfs_policy_find(names[k]))
            return pfs_cli_usage("policy-check", "unknown policy '%.64s'%s", names[k],
                                 pfs_cli_suggest_policy(names[k]));
    {
        const char *twice = pfs__policy_repeated(names, n_names);

        if (twice) /* (checked twice, printed twice) */
            return pfs_cli_usage("policy-check", "policy '%s' named twice", twice);
    }
    if (csv)
        puts("policy,rule,tried,failed,first");
    for (size_t k = 0; k < n_names; k++) {
        const struct pfs_policy_ops *ops = pfs_policy_find(names[k]);
        struct pfs_conformance rep;
        struct pfs_diag d = {0};
        int rc = pfs_policy_conformance(ops, seed, instances, &rep, &d);

        if (rc)
            return pfs_cli_report(&d, rc);
        any_failed |= rep.n_failed > 0;
        if (!csv)
            printf("%s%s: %s (%zu instances, %zu feasible budgets refused)\n", k ? "\n" : "",
                   names[k], rep.n_failed ? "FAILS" : "conforms", rep.instances, rep.refused);
        for (size_t i = 0; i < rep.n; i++) {
            const struct pfs_conformance_check *ck = &rep.checks[i];

            if (csv) {
                printf("%s,%s,%zu,%zu,", names[k], ck->name, ck->tried, ck->failed);
                pfs_cli_csv_quoted(ck->first);
                putchar('\n');
            } else {
                printf("  %-12s %-4s %5zu tried %5zu failed  %s\n", ck->name,
                       ck->failed  ? "FAIL"
                       : ck->tried ? "ok"
                                   : "-",
                       ck->tried, ck->failed, ck->failed ? ck->first : ck->what);
            }
        }
    }
    return any_failed ? EXIT_FAIL : EXIT_OK;
}
