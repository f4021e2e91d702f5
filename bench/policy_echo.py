#!/usr/bin/env python3
"""bench/policy_echo.py - the external-process protocol's own cost (make bench).

A policy program that decides nothing: every job at its minimum cap (feasible whenever any
answer is), so that timing it measures the JSON both ways and the socket, not a policy.
"""
import json
import sys

sys.stdin.readline()
print(json.dumps({"protocol": 1, "name": "echo-py", "summary": "every job at its minimum cap",
                  "memoryless": True}), flush=True)
for line in iter(sys.stdin.readline, ""):
    view = json.loads(line)
    print(json.dumps({"decision": view["decision"],
                      "cap_w": [j["min_w"] for j in view["jobs"]]}), flush=True)
