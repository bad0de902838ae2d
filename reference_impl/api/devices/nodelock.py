"""The device node lock (plugins/util/nodelock/nodelock.go), behind `deviceshare.NodeLockEnable`.

When a pool allocates devices with the lock enabled (vGPU: every allocation, lock name `hamivgpu`; GPU
share: a memory request, lock name `gpu`), it first takes the lock on the node in the API server: the
node annotation named after the lock holds the time it was taken (RFC 3339, seconds). A node without the
annotation is locked now; one whose lock is older than five minutes has it released and taken again; one
whose annotation does not parse as RFC 3339, or whose lock is younger, refuses the allocation (the
allocation handler's error: the task goes back, as for any failed allocation).

Nothing in the scheduler releases a lock it took: upstream leaves that to the device plugin on the node
(HAMi releases it when the kubelet asks it for the pod's devices). The harness runs no device plugin, so a
lock the scheduler took stays on the node object of the world until it expires (five minutes of scenario
clock); the world's node annotations are the API server's. Upstream's retries on an update conflict
(five, 100 ms apart) cannot fail against the harness's world and are not modelled.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

LOCK_TIMEOUT_NS = 5 * 60 * 10**9
VGPU_LOCK = "hamivgpu"
GPUSHARE_LOCK = "gpu"
# time.RFC3339 as time.Parse reads it: fractional seconds are accepted after the seconds
_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})\Z")


def parse_rfc3339_ns(text: str) -> int | None:
    m = _RFC3339.match(text)
    if m is None:
        return None
    try:
        value = datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6]), tzinfo=timezone.utc)
    except ValueError:
        return None
    ns = int(value.timestamp()) * 10**9
    if m[7]:
        ns += int((m[7][1:] + "000000000")[:9])
    if m[8] != "Z":
        sign = 1 if m[8][0] == "+" else -1
        hours, minutes = int(m[8][1:3]), int(m[8][4:6])
        if hours > 23 or minutes > 59:
            return None
        ns -= sign * (hours * 3600 + minutes * 60) * 10**9
    return ns


def format_rfc3339(now_ns: int) -> str:
    return datetime.fromtimestamp(now_ns // 10**9, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def lock_node(annotations: dict[str, str], node_name: str, lock_name: str, now_ns: int) -> str | None:
    """LockNode on the node's annotations (changed in place when the lock is taken); the error, or None."""
    held = annotations.get(lock_name)
    if held is None:
        annotations[lock_name] = format_rfc3339(now_ns)
        return None
    taken = parse_rfc3339_ns(held)
    if taken is None:
        return f'parsing time "{held}" as "2006-01-02T15:04:05Z07:00": cannot parse'
    if now_ns - taken > LOCK_TIMEOUT_NS:
        annotations[lock_name] = format_rfc3339(now_ns)  # ReleaseNodeLock, then setNodeLock
        return None
    return f"node {node_name} has been locked within 5 minutes"
