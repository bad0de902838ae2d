#!/usr/bin/env python3
"""NOT conformant: evicts greedily, more than needed.

It decides like the reference, then, in the last session, whenever a job is left with
pending pods it evicts EVERY running, preemptable pod of lower priority in the same
queue (upstream's preempt evicts victims one at a time, only until the preemptor fits,
and only where priority, gang and the conf allow it). schedcheck conform reports
check.eviction.same-node: its extra evictions are on nodes where no preemptor was placed.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from schedcheck.conform.reference import run, serve  # noqa: E402

GROUP = "scheduling.k8s.io/group-name"


def decide(doc):
    result = run(doc)
    objects = [o for o in doc.get("objects", []) if isinstance(o, dict)]
    classes = {o["metadata"]["name"]: o.get("value", 0) for o in objects if o.get("kind") == "PriorityClass"}
    groups = {}
    for o in objects:
        if o.get("kind") == "PodGroup":
            meta, spec = o["metadata"], o.get("spec") or {}
            groups[f"{meta.get('namespace', 'default')}/{meta['name']}"] = (
                spec.get("queue") or "default", classes.get(spec.get("priorityClassName"), 0))
    pods = {}
    for o in objects:
        if o.get("kind") == "Pod":
            meta = o["metadata"]
            ns = meta.get("namespace", "default")
            group = (meta.get("annotations") or {}).get(GROUP)
            if group and f"{ns}/{group}" in groups:
                pods[f"{ns}/{meta['name']}"] = (o, groups[f"{ns}/{group}"])
    waiting = [info for key, (pod, info) in pods.items()
               if not (pod.get("spec") or {}).get("nodeName") and key not in result["binds"]]
    last = result["cycles"] - 1
    for key, (pod, (queue, priority)) in sorted(pods.items()):
        running = (pod.get("status") or {}).get("phase") == "Running" and (pod.get("spec") or {}).get("nodeName")
        preemptable = (pod["metadata"].get("annotations") or {}).get("volcano.sh/preemptable", "true") != "false"
        if running and preemptable and key not in result["evicted"] and \
                any(q == queue and p > priority for q, p in waiting):
            result["evicted"].append(key)
            result["trace"].append({"cycle": last, "action": "preempt", "op": "evict", "task": key,
                                    "node": pod["spec"]["nodeName"]})
    return result


if __name__ == "__main__":
    sys.exit(serve(decide))
