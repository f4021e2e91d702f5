/*
 * sim/cli.h - what the command-line files share (sim/main.c, sim/cli_*.c). Not part of the
 * library: these print and know about exit codes.
 */
#ifndef PFISIM_CLI_H
#define PFISIM_CLI_H

#include "internal.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_INPUT = 3, EXIT_IO = 4 };

/* Prints diag compiler-style (file:line:column: error: ..., the line, a caret) and returns
 * the exit code for rc. */
int pfs_cli_report(const struct pfs_diag *d, int rc);

/* Prints "pfisim CMD: message" and a pointer to the help; returns EXIT_USAGE. */
int pfs_cli_usage(const char *cmd, const char *fmt, ...) PFS__PRINTF(2, 3);

/* argv with "OPT VALUE" joined into "OPT=VALUE" for an option whose value is optional
 * (getopt takes it only joined), unless VALUE starts with '-' or ends in not_suffix; *n_out
 * is the new count. The array lives as long as the process. NULL without memory. */
char **pfs_cli_join_optional(int argc, char **argv, const char *opt, const char *not_suffix,
                             int *n_out);

/* "; did you mean 'X'?" for the candidate nearest name (pfs__nearest; candidate(i) until
 * NULL), or "". The policy names' version. */
const char *pfs_cli_suggest(const char *name, const char *(*candidate)(size_t i));
const char *pfs_cli_suggest_policy(const char *name);

/* A shipped file or folder (traces/h200-h100, ...) found from the current folder or the
 * shipped files (pfs_share_dir); rel itself when nowhere. At most four at a time. */
const char *pfs_cli_shipped(const char *rel);

/* Writes obj with write() to output whole or not at all (sim/outfile.c: a temporary file
 * renamed into place; devices and FIFOs in place), or to stdout when output is NULL or "-".
 * Returns 0 or PFS_EIO. */
int pfs_cli_write_output(const char *output,
                         int (*write)(const void *obj, FILE *fp, struct pfs_diag *d),
                         const void *obj, struct pfs_diag *d);

/* Parses a fraction written 0.3 or 30%. */
bool pfs_cli_parse_frac(const char *s, double *out);

/* The subcommands that live outside main.c. */
int pfs_cli_alloc(int argc, char **argv);
extern const char pfs_cli_alloc_help[];
int pfs_cli_run(int argc, char **argv);
extern const char pfs_cli_run_help[];
int pfs_cli_sweep(int argc, char **argv);
extern const char pfs_cli_sweep_help[];
int pfs_cli_merge(int argc, char **argv);
extern const char pfs_cli_merge_help[];
int pfs_cli_grid(int argc, char **argv);
extern const char pfs_cli_grid_help[];
int pfs_cli_price(int argc, char **argv);
extern const char pfs_cli_price_help[];

/* pfisim capacity (sim/cli_capacity.c). */
extern const char pfs_cli_capacity_help[];
int pfs_cli_capacity(int argc, char **argv);

/* pfisim check (sim/cli_check.c). */
extern const char pfs_cli_check_help[];
int pfs_cli_check(int argc, char **argv);

#endif
