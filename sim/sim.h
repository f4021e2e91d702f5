/*
 * sim/sim.h - the simulator's internals, shared by sim/heap.c and sim/sim.c.
 */
#ifndef PFISIM_SIM_H
#define PFISIM_SIM_H

#include <stdint.h>

#include "internal.h"

enum pfs__event_type {
    PFS__EV_ARRIVAL, /* job: a job is submitted */
    PFS__EV_FINISH,  /* job, version: a running job completes (stale if version moved on) */
    PFS__EV_CONTROL, /* the policy's cadence */
    PFS__EV_ACTUATE, /* version: decided caps take effect */
    PFS__EV_MINUTE,  /* a minute boundary: metrics and the budget's next step */
    PFS__EV_END,     /* the end of the simulated time */
};

/* Events at equal times come out in the order they were pushed (seq). */
struct pfs__event {
    int64_t t_us;
    uint64_t seq;
    int type;
    uint32_t job;
    uint32_t version;
};

struct pfs__heap {
    struct pfs__event *v;
    size_t n, cap;
    uint64_t next_seq;
};

int pfs__heap_push(struct pfs__heap *h, int64_t t_us, int type, uint32_t job, uint32_t version);
bool pfs__heap_pop(struct pfs__heap *h, struct pfs__event *out);
void pfs__heap_fini(struct pfs__heap *h);

#endif
