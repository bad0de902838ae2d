"""GPU exclusivity rules of deviceshare (pkg/scheduler/plugins/deviceshare/gpuexclusive.go).

`deviceshare.GPUExclusiveRules`: a list of label maps (string values only; an entry without one is
dropped). A pod matches a rule when it carries every label of it. At session open every node's vGPU
pool in hami-core mode is wrapped: the cards holding a pod of the node that matches rule r are rule r's
cards. A pod matching rules is then filtered and placed with those cards capped at their current share
count (they take no further pod of the same rules); a placement adds its cards to its rules, a release
or removal takes a card off a rule when no other tracked pod holds it. Upstream also keeps the cards of
placements in the plugin object for the next OnSessionOpen, but builds a new plugin object every
session, so that memory is always empty there; the reference has none.
"""

from __future__ import annotations

from typing import Any

from schedcheck.reference.api.devices import vgpu

RULES_KEY = "deviceshare.GPUExclusiveRules"


def parse_rules(raw: Any) -> list[dict[str, str]]:
    if not isinstance(raw, list):
        return []
    rules = []
    for item in raw:
        labels = {k: v for k, v in item.items() if isinstance(k, str) and isinstance(v, str)} \
            if isinstance(item, dict) else {}
        if labels:
            rules.append(labels)
    return rules


def matching_rules(pod, rules: list[dict[str, str]]) -> list[int]:
    if not pod.labels:
        return []
    return [i for i, rule in enumerate(rules) if all(pod.labels.get(k) == v for k, v in rule.items())]


def pod_key(pod) -> str:
    return f"{pod.namespace}/{pod.name}"


class ExclusiveGPUDevices:
    """A vGPU pool behind the exclusivity rules (exclusiveGPUDevices)."""

    def __init__(self, inner: vgpu.GPUDevices, rules, rule_gpus, pod_rules, pod_uids) -> None:
        self.inner = inner
        self.rules = rules
        self.rule_gpus: dict[int, set[int]] = rule_gpus
        self.pod_rules: dict[str, set[int]] = pod_rules
        self.pod_uids: dict[str, str] = pod_uids

    # attributes the invariants and the deviceshare plugin read
    @property
    def devices(self):
        return self.inner.devices

    def ledger(self):
        return self.inner.ledger()

    def device_ids(self):
        return self.inner.device_ids()

    def deep_copy(self) -> ExclusiveGPUDevices:
        return ExclusiveGPUDevices(self.inner.deep_copy(), self.rules, {r: set(g) for r, g in self.rule_gpus.items()},
                                   {k: set(v) for k, v in self.pod_rules.items()}, dict(self.pod_uids))

    def _reserved(self, pod) -> set[int]:
        out: set[int] = set()
        for r in matching_rules(pod, self.rules):
            out |= self.rule_gpus.get(r, set())
        return out

    def _capped(self, reserved: set[int], call):
        saved = {}
        for i in reserved:
            dev = self.inner.devices.get(i)
            if dev is not None:
                saved[i] = dev.number
                dev.number = dev.used_num
        try:
            return call()
        finally:
            for i, number in saved.items():
                self.inner.devices[i].number = number

    def _track(self, pod, rule_set: set[int]) -> None:
        for i, dev in self.inner.devices.items():
            if pod.uid in dev.pods:
                for r in rule_set:
                    self.rule_gpus.setdefault(r, set()).add(i)

    def _untrack(self, pod) -> None:
        rule_set = self.pod_rules.pop(pod_key(pod), None)
        if rule_set is None:
            return
        for r in rule_set:
            gpus = self.rule_gpus.get(r)
            if gpus is None:
                continue
            for i in list(gpus):
                dev = self.inner.devices.get(i)
                if dev is None:
                    continue
                tracked = {self.pod_uids.get(k) for k in self.pod_rules}
                if not any(uid != pod.uid and uid in tracked for uid in dev.pods):
                    gpus.discard(i)
            if not gpus:
                del self.rule_gpus[r]

    def add_resource(self, pod) -> None:
        self.inner.add_resource(pod)
        self.pod_uids[pod_key(pod)] = pod.uid
        matched = matching_rules(pod, self.rules)
        if matched:
            self.pod_rules[pod_key(pod)] = set(matched)
            self._track(pod, set(matched))

    def sub_resource(self, pod) -> None:
        self.inner.sub_resource(pod)
        self._untrack(pod)
        self.pod_uids.pop(pod_key(pod), None)

    def add_queue_resource(self, pod):
        return self.inner.add_queue_resource(pod)

    def has_device_request(self, pod) -> bool:
        return self.inner.has_device_request(pod)

    def filter_node(self, pod, policy: str):
        reserved = self._reserved(pod)
        if reserved:
            return self._capped(reserved, lambda: self.inner.filter_node(pod, policy))
        return self.inner.filter_node(pod, policy)

    def score_node(self, pod, policy: str) -> float:
        return self.inner.score_node(pod, policy)

    def allocate(self, pod, now_ns: int):
        matched = matching_rules(pod, self.rules)
        if not matched:
            return self.inner.allocate(pod, now_ns)
        reserved = self._reserved(pod)
        if reserved:
            annotations, err = self._capped(reserved, lambda: self.inner.allocate(pod, now_ns))
        else:
            annotations, err = self.inner.allocate(pod, now_ns)
        if err is not None:
            return None, err
        self.pod_rules[pod_key(pod)] = set(matched)
        self._track(pod, set(matched))
        return annotations, None

    def release(self, pod):
        keys = self.inner.release(pod)
        self._untrack(pod)
        return keys


def wrap_for_exclusivity(ssn, arguments: dict) -> None:
    rules = parse_rules((arguments or {}).get(RULES_KEY))
    if not rules:
        return
    for node in ssn.nodes.values():
        inner = node.others.get(vgpu.DEVICE_NAME)
        if not isinstance(inner, vgpu.GPUDevices) or inner.mode not in ("", vgpu.HAMI_CORE):
            continue
        pod_rules: dict[str, set[int]] = {}
        pod_uids: dict[str, str] = {}
        uid_to_key: dict[str, str] = {}
        for task in node.tasks.values():
            key = pod_key(task.pod)
            pod_uids[key] = task.pod.uid
            uid_to_key[task.pod.uid] = key
            matched = matching_rules(task.pod, rules)
            if matched:
                pod_rules[key] = set(matched)
        uuid_to_index = {dev.uuid: i for i, dev in inner.devices.items()}
        rule_gpus: dict[int, set[int]] = {}
        for i, dev in inner.devices.items():
            for uid in dev.pods:
                for r in pod_rules.get(uid_to_key.get(uid, ""), ()):
                    rule_gpus.setdefault(r, set()).add(i)
        for key, rule_set in pod_rules.items():  # pods whose cards the pool does not hold: their annotation
            uid = pod_uids[key]
            if any(uid in dev.pods for dev in inner.devices.values()):
                continue
            task = next((t for t in node.tasks.values() if pod_key(t.pod) == key), None)
            annotation = task.pod.annotations.get(vgpu.ASSIGNED_IDS, "") if task is not None else ""
            for container in vgpu.decode_pod_devices(annotation):
                for uuid, _t, _m, _c in container:
                    if uuid in uuid_to_index:
                        for r in rule_set:
                            rule_gpus.setdefault(r, set()).add(uuid_to_index[uuid])
        node.others[vgpu.DEVICE_NAME] = ExclusiveGPUDevices(inner, rules, rule_gpus, pod_rules, pod_uids)
