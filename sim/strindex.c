/*
 * sim/strindex.c - an index from string keys to record numbers, for the readers' duplicate
 * checks and lookups by id (issue 17: a linear search per row made reading n rows O(n^2)).
 * Open addressing over a power-of-two table of record numbers + 1 (0: empty), FNV-1a
 * hashes, grown at half full; the keys stay in the records (key_of reads record i's).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static size_t
hash(const char *s)
{
    return (size_t)pfs__fnv1a_str(PFS__FNV_OFFSET, s);
}

size_t
pfs__strindex_find(const struct pfs__strindex *x, const char *key, pfs__key_fn key_of,
                   const void *base)
{
    if (!x->cap)
        return SIZE_MAX;
    for (size_t i = hash(key) & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
        size_t s = x->slot[i];

        if (s == 0)
            return SIZE_MAX;
        if (strcmp(key_of(base, s - 1), key) == 0)
            return s - 1;
    }
}

static void
put(size_t *slot, size_t cap, size_t rec, const char *key)
{
    size_t i = hash(key) & (cap - 1);

    while (slot[i])
        i = (i + 1) & (cap - 1);
    slot[i] = rec + 1;
}

int
pfs__strindex_add(struct pfs__strindex *x, size_t rec, pfs__key_fn key_of, const void *base)
{
    if (2 * (x->n + 1) > x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 64;
        size_t *slot = calloc(cap, sizeof *slot);

        if (!slot)
            return PFS_ENOMEM;
        for (size_t i = 0; i < x->cap; i++)
            if (x->slot[i])
                put(slot, cap, x->slot[i] - 1, key_of(base, x->slot[i] - 1));
        free(x->slot);
        x->slot = slot;
        x->cap = cap;
    }
    put(x->slot, x->cap, rec, key_of(base, rec));
    x->n++;
    return 0;
}

void
pfs__strindex_fini(struct pfs__strindex *x)
{
    free(x->slot);
    *x = (struct pfs__strindex){0};
}
