#!/usr/bin/env python3
"""policies/examples/equal.py - pfisim's equal policy as an external program.

The same cap on every GPU, clamped to each job's limits, over pfisim's JSON-lines protocol
(docs/policies.md, "The external-process protocol"): standard library only.

    pfisim run --policy-exec "python3 policies/examples/equal.py" --policy equal,equal-py

It computes in IEEE doubles in the order pfisim's own equal does (policies/solver.c,
pfs__level), and pfisim reads numbers back bit for bit, so the runs are the same bytes
(tests/test_plugins.c checks it).
"""
import json
import math
import sys

PROTOCOL = 1


def level(jobs, budget):
    """The level L with sum n_i clamp(L, lo_i, hi_i) = budget; None when infeasible."""
    n = [j["n_gpus"] for j in jobs]
    lo = [float(j["min_w"]) for j in jobs]
    hi = [float(j["max_w"]) for j in jobs]
    need_lo, need_hi, a, b = 0.0, 0.0, math.inf, -math.inf
    for k in range(len(jobs)):
        need_lo += n[k] * lo[k]
        need_hi += n[k] * hi[k]
        a = min(a, lo[k])
        b = max(b, hi[k])
    if need_lo > budget * (1 + 1e-12):
        return None
    if need_hi <= budget:
        return hi
    # The total is continuous and non-decreasing in the level: bisect, keeping the lower end.
    it = 0
    while it < 200 and b - a > 1e-12 * max(1.0, b):
        mid = 0.5 * (a + b)
        tot = 0.0
        for k in range(len(jobs)):
            tot += n[k] * min(max(mid, lo[k]), hi[k])
        if tot <= budget:
            a = mid
        else:
            b = mid
        it += 1
    # The exact level: the free jobs share what the clamped ones leave, if consistent
    # (inside the bracket, or on the same side of every limit as the bisected level).
    fixed, free = 0.0, 0.0
    for k in range(len(jobs)):
        if a <= lo[k]:
            fixed += n[k] * lo[k]
        elif a >= hi[k]:
            fixed += n[k] * hi[k]
        else:
            free += n[k]
    exact = (budget - fixed) / free if free > 0 else a
    same = free > 0 and all((a <= lo[k]) == (exact <= lo[k]) and (a >= hi[k]) == (exact >= hi[k])
                            for k in range(len(jobs)))
    if a <= exact <= b or same:
        a = exact
    return [min(max(a, lo[k]), hi[k]) for k in range(len(jobs))]


def main():
    hello = json.loads(sys.stdin.readline())
    if hello.get("protocol") != PROTOCOL:
        sys.exit("equal.py: pfisim speaks protocol %s, this program %d"
                 % (hello.get("protocol"), PROTOCOL))
    print(json.dumps({"protocol": PROTOCOL, "name": "equal-py",
                      "summary": "the same cap on every GPU, as a Python program",
                      "may_pause": False, "memoryless": True}), flush=True)
    for line in iter(sys.stdin.readline, ""):
        view = json.loads(line)
        caps = level(view["jobs"], float(view["budget_w"]))
        if caps is None:
            answer = {"decision": view["decision"], "infeasible": "the minimum caps"}
        else:
            answer = {"decision": view["decision"], "cap_w": caps}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
