/*
 * policies/plugin.c - allocation policies from shared libraries (pfisim run --policy-lib,
 * a scenario's policy_libs; docs/policies.md, "Your own policy").
 *
 * A plugin library exports one function, PFS_POLICY_ENTRY, returning a struct
 * pfs_policy_plugin: the PFS_POLICY_ABI it was compiled with and its descriptors. The ABI is
 * checked before a descriptor is read, since a library of another ABI may lay them out
 * differently; then every descriptor is checked as the registry checks any (a valid, new
 * name, an allocate function), and all of them are added or none. dlopen resolves every
 * symbol at once (RTLD_NOW), so a library that calls a helper this pfisim does not export
 * fails here, not at its first decision. Libraries are never closed: their descriptors are in
 * the registry for the life of the process.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

#define MAX_LIBS 16

static char loaded[MAX_LIBS][PATH_MAX];
static size_t n_loaded;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
/* Whether a scenario's policy_libs may be loaded (pfs_policy_allow_scenario_libs): off until
 * the command line asks, as SQLite's extension loading is (docs/reliability.md, "What
 * pfisim trusts"). Read by every thread that reads a scenario, set once before. */
static bool scenario_libs_allowed;

void
pfs_policy_allow_scenario_libs(bool allow)
{
    scenario_libs_allowed = allow;
}

bool
pfs_policy_scenario_libs_allowed(void)
{
    return scenario_libs_allowed;
}

/* dlsym's void * as the entry point's type: POSIX guarantees the conversion works; ISO C
 * does not define it, hence the copy. */
typedef const struct pfs_policy_plugin *(*entry_fn)(void);

static int
load(const char *path, const char *real, size_t *n_added, struct pfs_diag *diag)
{
    const struct pfs_policy_plugin *pl;
    void *h, *sym;
    entry_fn entry;
    size_t n = 0;
    int rc;

    dlerror();
    if (!(h = dlopen(real, RTLD_NOW | RTLD_LOCAL))) {
        const char *why = dlerror();

        return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL,
                             "cannot load the policy library: %s", why ? why : "dlopen failed");
    }
    if (!(sym = dlsym(h, PFS_POLICY_ENTRY))) {
        dlclose(h);
        return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, PFS_POLICY_ENTRY,
                             "not a pfisim policy library: it exports no %s() (define it with "
                             "PFS_POLICY_PLUGIN, <pfisim/policy.h>)",
                             PFS_POLICY_ENTRY);
    }
    memcpy(&entry, &sym, sizeof entry);
    pl = entry();
    if (!pl) {
        dlclose(h);
        return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, PFS_POLICY_ENTRY, "%s() returned NULL",
                             PFS_POLICY_ENTRY);
    }
    if (pl->abi != PFS_POLICY_ABI && pl->abi != 2) {
        int abi = pl->abi;

        dlclose(h);
        return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, "abi",
                             "built for policy ABI %d; this pfisim speaks policy ABI %d (and 2) "
                             "(rebuild it against this pfisim's <pfisim/policy.h>)",
                             abi, PFS_POLICY_ABI);
    }
    while (pl->policies && pl->policies[n])
        n++;
    if (n == 0) {
        dlclose(h);
        return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL, "the library has no policies");
    }
    if (pl->abi == 2) {
        /* ABI 2's descriptors end before allocate_tree (ABI 3 only appended it): each is read
         * as far as it goes into a whole one that has none, kept for the process's life as
         * the library is. Such a policy divides a budget as before and is refused under a
         * tree, by name. */
        struct pfs_policy_ops *whole = calloc(n, sizeof *whole);
        const struct pfs_policy_ops **list = calloc(n + 1, sizeof *list);

        if (!whole || !list) {
            free(whole);
            free(list);
            dlclose(h);
            return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        }
        for (size_t k = 0; k < n; k++) {
            memcpy(&whole[k], pl->policies[k], offsetof(struct pfs_policy_ops, allocate_tree));
            whole[k].allocate_tree = NULL;
            list[k] = &whole[k];
        }
        rc = pfs__policy_add(list, n, path, diag);
        free(list); /* (the registry keeps the descriptors, not the list) */
        if (rc != 0) {
            free(whole);
            dlclose(h);
            return rc;
        }
    } else if ((rc = pfs__policy_add(pl->policies, n, path, diag)) != 0) {
        dlclose(h);
        return rc;
    }
    if (n_added)
        *n_added = n;
    return 0;
}

bool
pfs__policy_lib_loaded(const char *path)
{
    char real[PATH_MAX];
    bool found = false;

    if (!realpath(path, real))
        return false;
    pthread_mutex_lock(&load_lock);
    for (size_t k = 0; k < n_loaded && !found; k++)
        found = strcmp(loaded[k], real) == 0;
    pthread_mutex_unlock(&load_lock);
    return found;
}

int
pfs_policy_load(const char *path, size_t *n_added, struct pfs_diag *diag)
{
    char real[PATH_MAX];
    int rc = 0;

    if (n_added)
        *n_added = 0;
    /* dlopen searches the library path for a name without a slash; a path is meant here. */
    if (!realpath(path, real))
        return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL,
                             "cannot load the policy library: no such file");
    pthread_mutex_lock(&load_lock);
    for (size_t k = 0; k < n_loaded; k++)
        if (strcmp(loaded[k], real) == 0)
            goto out; /* loaded before: its policies are there */
    if (n_loaded == MAX_LIBS) {
        rc = pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL, "more than %d policy libraries",
                           MAX_LIBS);
        goto out;
    }
    if ((rc = load(path, real, n_added, diag)) == 0)
        pfs__strlcpy(loaded[n_loaded++], real, sizeof loaded[0]);
out:
    pthread_mutex_unlock(&load_lock);
    return rc;
}
