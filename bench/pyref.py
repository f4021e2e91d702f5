#!/usr/bin/env python3
"""bench/pyref.py - the Python reference for issue 16's speed comparison (docs/benchmarks.md).

An idiomatic Python discrete-event simulator of the same kind of facility as
`pfisim run` on bench/poisson-10k.cfg: a heapq event loop, one object per job, Poisson
arrivals drawing each job's size from the corpus's H200 jobs and its run time from a
lognormal (6 h median, sigma 1, as pfisim's poisson:RATE), FIFO with EASY backfill (the head's
reservation from the running jobs' finish times, sorted; later jobs scanned in queue order),
DR events (30% cuts of the facility's draw at the start) during which every minute the GPU
budget is divided equally among the running jobs and each job's rate is read from its
measured curve (linear interpolation), rescheduling its finish. It is not pfisim's model (no
policies but equal, no telemetry, no planner's summary): it is the work a straightforward
simulator of this facility does, for timing only. Standard library only.

usage: bench/pyref.py [--gpus N] [--days D] [--rate JOBS_PER_H] [--events N] [--seed S]
                      [--corpus DIR] [--backfill-depth N]
"""
import argparse
import bisect
import csv
import heapq
import math
import random
import time


class Job:
    __slots__ = ("jid", "submit", "gpus", "caps", "tps", "work", "done", "rate", "last",
                 "start", "finish", "version")

    def __init__(self, jid, submit, gpus, caps, tps, hours):
        self.jid, self.submit, self.gpus = jid, submit, gpus
        self.caps, self.tps = caps, tps          # per-GPU curve: cap (W) -> tokens/s
        self.rate = tps[-1] * gpus               # full power
        self.work = self.rate * hours * 3600     # tokens
        self.done, self.last = 0.0, 0.0
        self.start = self.finish = None
        self.version = 0

    def rate_at(self, cap):
        i = bisect.bisect_left(self.caps, cap)
        if i == 0:
            return self.tps[0] * self.gpus
        if i >= len(self.caps):
            return self.tps[-1] * self.gpus
        c0, c1 = self.caps[i - 1], self.caps[i]
        t0, t1 = self.tps[i - 1], self.tps[i]
        return (t0 + (t1 - t0) * (cap - c0) / (c1 - c0)) * self.gpus

    def touch(self, now):
        self.done += self.rate * (now - self.last)
        self.last = now

    def eta(self, now):
        return now + max(0.0, self.work - self.done) / self.rate


def load_corpus(path):
    curves = {}
    with open(path + "/curves.csv") as f:
        rows = [r for r in csv.DictReader(l for l in f if not l.startswith("#"))]
    for r in rows:
        if r["gpu"] != "h200-sxm":
            continue
        c = curves.setdefault(r["job_id"], [])
        c.append((float(r["cap_w"]), float(r["throughput"]) / int(r["n_gpus"])))
    jobs = []
    with open(path + "/jobs.csv") as f:
        for r in csv.DictReader(l for l in f if not l.startswith("#")):
            if r["job_id"] in curves:
                pts = sorted(curves[r["job_id"]])
                jobs.append((int(r["n_gpus"]), [p[0] for p in pts], [p[1] for p in pts]))
    return jobs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=10000)
    ap.add_argument("--days", type=float, default=365)
    ap.add_argument("--rate", type=float, default=317)
    ap.add_argument("--events", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--corpus", default="traces/h200-h100")
    ap.add_argument("--backfill-depth", type=int, default=0, help="0: the whole queue")
    a = ap.parse_args()
    t_wall = time.time()
    rng = random.Random(a.seed)
    corpus = load_corpus(a.corpus)
    end = a.days * 86400
    idle_w, top_w, min_w, node_w, pue = 75.0, 700.0, 200.0, 1500.0, 1.3

    heap, seq = [], 0

    def push(t, kind, obj):
        nonlocal seq
        heapq.heappush(heap, (t, seq, kind, obj))
        seq += 1

    t, n = 0.0, 0
    while True:
        t += rng.expovariate(a.rate / 3600)
        if t > end:
            break
        gpus, caps, tps = rng.choice(corpus)
        hours = 6 * math.exp(rng.gauss(0, 1))
        push(t, "arrive", Job(n, t, gpus, caps, tps, hours))
        n += 1
    events = sorted(rng.uniform(2, a.days - 1) * 86400 for _ in range(a.events))
    for s in events:
        push(s, "dr_start", s)
        push(s + 3 * 3600, "dr_end", s)
    push(0.0, "tick", None)

    free = a.gpus
    queue, running = [], set()
    budget = None  # GPU watts during an event, else None
    stats = {"events": 0, "started": 0, "finished": 0, "tokens": 0.0}

    def set_rate(job, now, rate):
        job.touch(now)
        job.rate = rate
        job.version += 1
        push(job.eta(now), "finish", (job, job.version))

    def facility_w():
        busy = sum(j.gpus for j in running)
        return pue * (busy * top_w + (a.gpus - busy) * idle_w + a.gpus / 8 * node_w)

    def allocate(now):
        if budget is None or not running:
            return
        per_gpu = max(min_w, min(top_w, budget / sum(j.gpus for j in running)))
        for j in running:
            set_rate(j, now, j.rate_at(per_gpu))

    def start(job, now):
        nonlocal free
        free -= job.gpus
        job.start = job.last = now
        running.add(job)
        stats["started"] += 1
        set_rate(job, now, job.rate_at(top_w))

    def schedule(now):
        while queue and queue[0].gpus <= free:
            start(queue.pop(0), now)
        if not queue or free == 0:
            return
        head = queue[0]
        avail, shadow, extra = free, math.inf, 0
        for eta, g in sorted((j.eta(now), j.gpus) for j in running):
            avail += g
            if avail >= head.gpus:
                shadow, extra = eta, avail - head.gpus
                break
        depth = len(queue) if a.backfill_depth <= 0 else min(len(queue), a.backfill_depth + 1)
        i = 1
        while i < depth and free > 0:
            j = queue[i]
            if j.gpus <= free:
                dur = (j.work - j.done) / j.rate_at(top_w)
                if now + dur <= shadow or j.gpus <= extra:
                    if now + dur > shadow:
                        extra -= j.gpus
                    queue.pop(i)
                    depth -= 1
                    start(j, now)
                    continue
            i += 1

    while heap:
        now, _, kind, obj = heapq.heappop(heap)
        if now > end:
            break
        if kind == "finish":
            job, version = obj
            if version != job.version or job not in running:
                continue
            job.touch(now)
            running.discard(job)
            free += job.gpus
            stats["finished"] += 1
            stats["tokens"] += job.done
            schedule(now)
            allocate(now)
        elif kind == "arrive":
            queue.append(obj)
            schedule(now)
            allocate(now)
        elif kind == "dr_start":
            budget = 0.7 * facility_w() / pue - (a.gpus / 8) * node_w
            allocate(now)
        elif kind == "dr_end":
            budget = None
            for j in running:
                set_rate(j, now, j.rate_at(top_w))
        elif kind == "tick":
            allocate(now)
            push(now + (60 if budget is not None else 300), "tick", None)
        stats["events"] += 1
    print("pyref: %d GPUs, %g days, %d jobs, %d events, %d started, %d finished, %.1f s"
          % (a.gpus, a.days, n, stats["events"], stats["started"], stats["finished"],
             time.time() - t_wall))


if __name__ == "__main__":
    main()
