"""Typed objects and confs back to a scenario document (kubectl-shaped), for saving and replaying.

`load(dump(x))` gives back the same objects: the round trip is tested.
"""

from __future__ import annotations

from typing import Any

from schedcheck.reference import k8s
from schedcheck.reference.framework.conf import BUILT_DIRECTLY_KEY, ENABLE_FLAGS, FLAGS_LEFT_OFF_BY_DEFAULT, SchedulerConf
from schedcheck.reference.util.scheduler_helper import ServerOptions
from schedcheck.reference.plugins.volume_filters import pod_volumes_in_order
from schedcheck.scenario.conf_loader import PERSISTENCE_KEY
from schedcheck.scenario.in_tree_volumes import in_tree_document
from schedcheck.scenario.options import OPTION_FIELDS
from schedcheck.scenario.dra_dump import dra_documents, pod_claims
from schedcheck.scenario.device_config import config_map_document
from schedcheck.scenario.numa_dump import numatopology_document
from schedcheck.scenario import workload_objects


def _quantities(resources: k8s.ResourceList) -> dict[str, str]:
    return {name: str(quantity) for name, quantity in resources.items()}


def _meta(obj: Any, namespaced: bool = True) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": obj.name}
    if namespaced:
        meta["namespace"] = obj.namespace
    if getattr(obj, "uid", ""):
        meta["uid"] = obj.uid
    for key in ("labels", "annotations"):
        if getattr(obj, key, None):
            meta[key] = dict(getattr(obj, key))
    if getattr(obj, "creation_timestamp", ""):
        meta["creationTimestamp"] = obj.creation_timestamp
    return meta


def _term(term: k8s.NodeSelectorTerm) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if term.match_expressions:
        out["matchExpressions"] = [{"key": r.key, "operator": r.operator, **({"values": r.values} if r.values else {})}
                                   for r in term.match_expressions]
    if term.match_fields:
        out["matchFields"] = [{"key": r.key, "operator": r.operator, **({"values": r.values} if r.values else {})}
                              for r in term.match_fields]
    return out


def node_document(node: k8s.Node) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if node.unschedulable:
        spec["unschedulable"] = True
    if node.taints:
        spec["taints"] = [{"key": t.key, "effect": t.effect, **({"value": t.value} if t.value else {})}
                          for t in node.taints]
    status: dict[str, Any] = {"allocatable": _quantities(node.allocatable)}
    if node.capacity and node.capacity != node.allocatable:
        status["capacity"] = _quantities(node.capacity)
    if not node.ready:
        status["conditions"] = [{"type": "Ready", "status": "False"}]
    if node.images:
        status["images"] = [{"names": list(i.names), "sizeBytes": i.size_bytes} for i in node.images]
    return {"apiVersion": "v1", "kind": "Node", "metadata": _meta(node, namespaced=False), "spec": spec,
            "status": status}


def _container(container: k8s.Container) -> dict[str, Any]:
    out: dict[str, Any] = {"name": container.name}
    if container.image:
        out["image"] = container.image
    if container.requests:
        out["resources"] = {"requests": _quantities(container.requests)}
    if container.limits:  # numa-aware's QoS class and the shared-device plugins read limits
        out.setdefault("resources", {})["limits"] = _quantities(container.limits)
    if container.claims:
        out.setdefault("resources", {})["claims"] = [{"name": name} for name in container.claims]
    if container.restart_policy:
        out["restartPolicy"] = container.restart_policy
    if container.ports:
        out["ports"] = [{"containerPort": p.container_port,
                         **({"hostPort": p.host_port} if p.host_port else {}),
                         "protocol": p.protocol, **({"hostIP": p.host_ip} if p.host_ip else {})}
                        for p in container.ports]
    return out


def _label_selector(selector: k8s.LabelSelector) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if selector.match_labels:
        out["matchLabels"] = dict(selector.match_labels)
    if selector.match_expressions:
        out["matchExpressions"] = [{"key": r.key, "operator": r.operator, **({"values": list(r.values)}
                                                                            if r.values else {})}
                                   for r in selector.match_expressions]
    return out


def _pod_term(term: k8s.PodAffinityTerm) -> dict[str, Any]:
    out: dict[str, Any] = {"topologyKey": term.topology_key}
    if term.label_selector is not None:
        out["labelSelector"] = _label_selector(term.label_selector)
    if term.namespaces:
        out["namespaces"] = list(term.namespaces)
    if term.namespace_selector is not None:
        out["namespaceSelector"] = _label_selector(term.namespace_selector)
    return out


def pod_document(pod: k8s.Pod) -> dict[str, Any]:
    meta = _meta(pod)
    if pod.deletion_timestamp:
        meta["deletionTimestamp"] = pod.deletion_timestamp
    if pod.controller_ref is not None:
        meta["ownerReferences"] = [workload_objects.controller_ref_document(pod.controller_ref)]
    spec: dict[str, Any] = {"schedulerName": pod.scheduler_name,
                            "containers": [_container(c) for c in pod.containers]}
    if pod.init_containers:
        spec["initContainers"] = [_container(c) for c in pod.init_containers]
    if pod.node_name:
        spec["nodeName"] = pod.node_name
    if pod.overhead:
        spec["overhead"] = _quantities(pod.overhead)
    if pod.resources is not None:  # pod-level resources, as read (defaults applied: reading them again is a no-op)
        spec["resources"] = {part: _quantities(listed) for part, listed in
                             (("requests", pod.resources.requests), ("limits", pod.resources.limits)) if listed}
    if pod.priority is not None:
        spec["priority"] = pod.priority
    if pod.priority_class_name:
        spec["priorityClassName"] = pod.priority_class_name
    if pod.preemption_policy:
        spec["preemptionPolicy"] = pod.preemption_policy
    if pod.node_selector:
        spec["nodeSelector"] = dict(pod.node_selector)
    if pod.node_affinity is not None:
        affinity: dict[str, Any] = {}
        if pod.node_affinity.required is not None:
            affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [_term(t) for t in pod.node_affinity.required]}
        if pod.node_affinity.preferred:
            affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": p.weight, "preference": _term(p.preference)} for p in pod.node_affinity.preferred]
        spec["affinity"] = {"nodeAffinity": affinity}
    for key, pod_affinity in (("podAffinity", pod.pod_affinity), ("podAntiAffinity", pod.pod_anti_affinity)):
        if pod_affinity is not None:
            spec.setdefault("affinity", {})[key] = {
                "requiredDuringSchedulingIgnoredDuringExecution": [_pod_term(t) for t in pod_affinity.required],
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": w.weight, "podAffinityTerm": _pod_term(w.term)} for w in pod_affinity.preferred]}
    if pod.topology_spread_constraints:  # matchLabelKeys are already merged into the selector (the loader)
        spec["topologySpreadConstraints"] = [_spread(c) for c in pod.topology_spread_constraints]
    if pod.tolerations:
        spec["tolerations"] = [{k: v for k, v in (("key", t.key), ("operator", t.operator), ("value", t.value),
                                                  ("effect", t.effect)) if v} for t in pod.tolerations]
    if pod.scheduling_gates:
        spec["schedulingGates"] = [{"name": g} for g in pod.scheduling_gates]
    if pod.volumes or pod.inline_volumes:
        spec["volumes"] = [_pod_volume(v) for v in pod_volumes_in_order(pod)]
    if pod.resource_claims:
        spec["resourceClaims"] = pod_claims(pod)
    status: dict[str, Any] = {"phase": pod.phase}
    if pod.nominated_node_name:
        status["nominatedNodeName"] = pod.nominated_node_name
    if pod.start_time:
        status["startTime"] = pod.start_time
    if pod.qos_class:
        status["qosClass"] = pod.qos_class
    if pod.resource_claim_statuses:
        status["resourceClaimStatuses"] = [{"name": name, **({"resourceClaimName": claim} if claim else {})}
                                           for name, claim in pod.resource_claim_statuses.items()]
    if pod.conditions:
        status["conditions"] = [{"type": c.type, "status": c.status, **({"reason": c.reason} if c.reason else {}),
                                 **({"message": c.message} if c.message else {}),
                                 **({"lastTransitionTime": c.last_transition_time} if c.last_transition_time else {})}
                                for c in pod.conditions]
    _resize_status(pod, status)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _requirements(resources: k8s.PodResources) -> dict[str, Any]:
    return {part: _quantities(listed) for part, listed in
            (("requests", resources.requests), ("limits", resources.limits)) if listed}


def _resize_status(pod: k8s.Pod, status: dict[str, Any]) -> None:
    """In-place resize status: the containers' entries that carry resources, and the pod level."""
    for key, containers in (("containerStatuses", pod.containers), ("initContainerStatuses", pod.init_containers)):
        entries = []
        for c in containers:
            if c.status_resources is None and not c.allocated_resources:
                continue
            entry: dict[str, Any] = {"name": c.name}
            if c.status_resources is not None:
                entry["resources"] = _requirements(c.status_resources)
            if c.allocated_resources:
                entry["allocatedResources"] = _quantities(c.allocated_resources)
            entries.append(entry)
        if entries:
            status[key] = entries
    if pod.status_resources is not None:
        status["resources"] = _requirements(pod.status_resources)
    if pod.allocated_resources:
        status["allocatedResources"] = _quantities(pod.allocated_resources)


def _spread(c: k8s.TopologySpreadConstraint) -> dict[str, Any]:
    out: dict[str, Any] = {"maxSkew": c.max_skew, "topologyKey": c.topology_key,
                           "whenUnsatisfiable": c.when_unsatisfiable}
    if c.label_selector is not None:
        out["labelSelector"] = _label_selector(c.label_selector)
    if c.min_domains != 1:
        out["minDomains"] = c.min_domains
    if c.node_affinity_policy != "Honor":
        out["nodeAffinityPolicy"] = c.node_affinity_policy
    if c.node_taints_policy != "Ignore":
        out["nodeTaintsPolicy"] = c.node_taints_policy
    return out


def _network_topology(nt: k8s.NetworkTopology) -> dict[str, Any]:
    return {"mode": nt.mode, **({"highestTierAllowed": nt.highest_tier_allowed}
                                if nt.highest_tier_allowed is not None else {}),
            **({"highestTierName": nt.highest_tier_name} if nt.highest_tier_name else {})}


def _sub_group_policy(policy: k8s.SubGroupPolicy) -> dict[str, Any]:
    out: dict[str, Any] = {"name": policy.name}
    if policy.sub_group_size is not None:
        out["subGroupSize"] = policy.sub_group_size
    if policy.min_sub_groups is not None:
        out["minSubGroups"] = policy.min_sub_groups
    if policy.label_selector is not None:
        out["labelSelector"] = _label_selector(policy.label_selector)
    if policy.match_label_keys:
        out["matchLabelKeys"] = list(policy.match_label_keys)
    if policy.network_topology is not None:
        out["networkTopology"] = _network_topology(policy.network_topology)
    return out


def pod_group_document(group: k8s.PodGroup) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": group.min_member, "queue": group.queue}
    if group.min_task_member:
        spec["minTaskMember"] = dict(group.min_task_member)
    if group.min_resources is not None:
        spec["minResources"] = _quantities(group.min_resources)
    if group.priority_class_name:
        spec["priorityClassName"] = group.priority_class_name
    if group.network_topology is not None:
        spec["networkTopology"] = _network_topology(group.network_topology)
    if group.sub_group_policy:
        spec["subGroupPolicy"] = [_sub_group_policy(p) for p in group.sub_group_policy]
    status: dict[str, Any] = {}
    if group.phase:
        status["phase"] = group.phase
    if group.conditions:
        status["conditions"] = [{"type": c.type, "status": c.status,
                                 **({"transitionID": c.transition_id} if c.transition_id else {}),
                                 **({"reason": c.reason} if c.reason else {}),
                                 **({"message": c.message} if c.message else {})} for c in group.conditions]
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": _meta(group),
            "spec": spec, "status": status}


def queue_document(queue: k8s.Queue) -> dict[str, Any]:
    spec: dict[str, Any] = {"weight": queue.weight}
    if queue.capability:
        spec["capability"] = _quantities(queue.capability)
    if queue.guarantee:
        spec["guarantee"] = {"resource": _quantities(queue.guarantee)}
    if queue.deserved:
        spec["deserved"] = _quantities(queue.deserved)
    if queue.reclaimable is not None:
        spec["reclaimable"] = queue.reclaimable
    if queue.priority:
        spec["priority"] = queue.priority
    if queue.parent:
        spec["parent"] = queue.parent
    if queue.affinity is not None:
        spec["affinity"] = _queue_affinity(queue.affinity)
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": _meta(queue, False),
            "spec": spec, "status": {"state": queue.state}}


def _queue_affinity(affinity: k8s.QueueAffinity) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, terms in (("nodeGroupAffinity", affinity.node_group_affinity),
                       ("nodeGroupAntiAffinity", affinity.node_group_anti_affinity)):
        if terms is not None:
            out[key] = {name: list(groups) for name, groups in (
                ("requiredDuringSchedulingIgnoredDuringExecution", terms.required),
                ("preferredDuringSchedulingIgnoredDuringExecution", terms.preferred)) if groups}
    return out


def priority_class_document(pc: k8s.PriorityClass) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                           "metadata": {"name": pc.name}, "value": pc.value}
    if pc.global_default:
        out["globalDefault"] = True
    if pc.preemption_policy and pc.preemption_policy != "PreemptLowerPriority":
        out["preemptionPolicy"] = pc.preemption_policy
    return out


def resource_quota_document(quota: k8s.ResourceQuota) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": quota.name, "namespace": quota.namespace},
            "spec": {"hard": _quantities(quota.hard)}, "status": {"used": _quantities(quota.used)}}


def pod_disruption_budget_document(pdb: k8s.PodDisruptionBudget) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if pdb.selector is not None:
        spec["selector"] = _label_selector(pdb.selector)
    status: dict[str, Any] = {"disruptionsAllowed": pdb.disruptions_allowed}
    if pdb.disrupted_pods:
        status["disruptedPods"] = {name: "2026-01-01T00:00:00Z" for name in pdb.disrupted_pods}
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": pdb.name, "namespace": pdb.namespace}, "spec": spec, "status": status}


def hyper_node_document(hn: k8s.HyperNode) -> dict[str, Any]:
    members = []
    for member in hn.members:
        if member.exact:
            selector: dict[str, Any] = {"exactMatch": {"name": member.exact}}
        elif member.regex:
            selector = {"regexMatch": {"pattern": member.regex}}
        else:
            selector = {"labelMatch": _label_selector(member.labels or k8s.LabelSelector())}
        members.append({"type": member.type, "selector": selector})
    spec: dict[str, Any] = {"tier": hn.tier, "members": members}
    if hn.tier_name:
        spec["tierName"] = hn.tier_name
    return {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": hn.name},
            "spec": spec}


def node_shard_document(shard: k8s.NodeShard) -> dict[str, Any]:
    return {"apiVersion": "shard.volcano.sh/v1alpha1", "kind": "NodeShard", "metadata": {"name": shard.name},
            "spec": {"nodesDesired": list(shard.nodes_desired)}, "status": {"nodesInUse": list(shard.nodes_in_use)}}


def _storage_meta(obj: Any, namespaced: bool) -> dict[str, Any]:
    meta = _meta(obj, namespaced)
    if getattr(obj, "deletion_timestamp", None):
        meta["deletionTimestamp"] = obj.deletion_timestamp
    return meta


def persistent_volume_document(pv: k8s.PersistentVolume) -> dict[str, Any]:
    spec: dict[str, Any] = {"volumeMode": pv.volume_mode}
    if pv.capacity is not None:
        spec["capacity"] = {"storage": str(pv.capacity)}
    if pv.access_modes:
        spec["accessModes"] = list(pv.access_modes)
    if pv.storage_class_name:
        spec["storageClassName"] = pv.storage_class_name
    if pv.volume_attributes_class_name:
        spec["volumeAttributesClassName"] = pv.volume_attributes_class_name
    if pv.claim_ref is not None:
        ref = pv.claim_ref
        spec["claimRef"] = {"namespace": ref.namespace, "name": ref.name, **({"uid": ref.uid} if ref.uid else {})}
    if pv.node_affinity is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [_term(t) for t in pv.node_affinity]}}
    if pv.csi_driver:
        spec["csi"] = {"driver": pv.csi_driver, "volumeHandle": pv.csi_volume_handle}
    if pv.in_tree is not None:
        spec.update(in_tree_document(pv.in_tree))
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": _storage_meta(pv, namespaced=False),
            "spec": spec, "status": {"phase": pv.phase}}


def _pod_volume(volume: k8s.PodVolume | k8s.InlineVolume) -> dict[str, Any]:
    if isinstance(volume, k8s.InlineVolume):
        return {"name": volume.name, **in_tree_document(volume.source)}
    if volume.ephemeral:  # the template: the claim the ephemeral volume controller would make, unnamed
        template: dict[str, Any] = {"spec": {}}
        if volume.claim_template is not None:
            claim = persistent_volume_claim_document(volume.claim_template)
            meta = {k: v for k, v in claim["metadata"].items() if k in ("labels", "annotations")}
            template = {**({"metadata": meta} if meta else {}), "spec": claim["spec"]}
        return {"name": volume.name, "ephemeral": {"volumeClaimTemplate": template}}
    return {"name": volume.name, "persistentVolumeClaim": {"claimName": volume.claim_name}}


def persistent_volume_claim_document(pvc: k8s.PersistentVolumeClaim) -> dict[str, Any]:
    spec: dict[str, Any] = {"volumeMode": pvc.volume_mode}
    if pvc.access_modes:
        spec["accessModes"] = list(pvc.access_modes)
    if pvc.request is not None:
        spec["resources"] = {"requests": {"storage": str(pvc.request)}}
    if pvc.storage_class_name is not None:
        spec["storageClassName"] = pvc.storage_class_name
    if pvc.volume_attributes_class_name:
        spec["volumeAttributesClassName"] = pvc.volume_attributes_class_name
    if pvc.volume_name:
        spec["volumeName"] = pvc.volume_name
    if pvc.selector is not None:
        spec["selector"] = _label_selector(pvc.selector)
    meta = _storage_meta(pvc, namespaced=True)
    if pvc.controller_uid:  # an ephemeral volume's claim: the pod that controls it (only the uid is read)
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "", "uid": pvc.controller_uid,
                                    "controller": True}]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
            "spec": spec, "status": {"phase": pvc.phase}}


def storage_class_document(sc: k8s.StorageClass) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": sc.name},
                           "provisioner": sc.provisioner, "volumeBindingMode": sc.volume_binding_mode}
    if sc.allowed_topologies:
        doc["allowedTopologies"] = [{"matchLabelExpressions": [{"key": r.key, "values": list(r.values)} for r in term]}
                                    for term in sc.allowed_topologies]
    if sc.parameters:
        doc["parameters"] = dict(sc.parameters)
    return doc


def csi_node_document(csi: k8s.CSINode) -> dict[str, Any]:
    drivers = [{"name": d.name, **({"allocatable": {"count": d.allocatable_count}}
                                   if d.allocatable_count is not None else {})} for d in csi.drivers]
    meta: dict[str, Any] = {"name": csi.name, **({"annotations": dict(csi.annotations)} if csi.annotations else {})}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta, "spec": {"drivers": drivers}}


def volume_attachment_document(va: k8s.VolumeAttachment) -> dict[str, Any]:
    spec: dict[str, Any] = {"attacher": va.attacher, "nodeName": va.node_name}
    if va.persistent_volume_name:
        spec["source"] = {"persistentVolumeName": va.persistent_volume_name}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": va.name},
            "spec": spec}


def options_document(options: ServerOptions) -> dict[str, Any]:
    """The schedulerOptions block: only the options that differ from upstream's defaults."""
    default = ServerOptions()
    return {key: list(value) if isinstance(value, tuple) else value
            for key, name in OPTION_FIELDS.items()
            if (value := getattr(options, name)) != getattr(default, name)}


def objects_document(objects: k8s.ClusterObjects) -> list[dict[str, Any]]:
    return ([priority_class_document(p) for p in objects.priority_classes]
            + [queue_document(q) for q in objects.queues]
            + [node_document(n) for n in objects.nodes]
            + [pod_group_document(g) for g in objects.pod_groups]
            + [pod_document(p) for p in objects.pods]
            + [resource_quota_document(q) for q in objects.resource_quotas]
            + [pod_disruption_budget_document(b) for b in objects.pod_disruption_budgets]
            + [node_shard_document(s) for s in objects.node_shards]
            + [hyper_node_document(h) for h in objects.hyper_nodes]
            + [storage_class_document(c) for c in objects.storage_classes]
            + [persistent_volume_document(v) for v in objects.persistent_volumes]
            + [persistent_volume_claim_document(c) for c in objects.persistent_volume_claims]
            + [csi_node_document(c) for c in objects.csi_nodes]
            + [volume_attachment_document(a) for a in objects.volume_attachments]
            + dra_documents(objects, _term)
            + [numatopology_document(t) for t in objects.numatopologies]
            + [config_map_document(c) for c in objects.config_maps]
            + workload_objects.documents(objects, _label_selector))


def conf_document(conf: SchedulerConf) -> dict[str, Any]:
    tiers = []
    for tier in conf.tiers:
        plugins = []
        for option in tier.plugins:
            entry: dict[str, Any] = {"name": option.name}
            for key in ENABLE_FLAGS:
                value = option.flags.get(key)
                default = None if key in FLAGS_LEFT_OFF_BY_DEFAULT or conf.built_directly else True
                if value is not None and value != default:
                    entry[key] = value
            if option.arguments:
                entry["arguments"] = dict(option.arguments)
            plugins.append(entry)
        tiers.append({"plugins": plugins})
    doc: dict[str, Any] = {"actions": ", ".join(conf.actions), "tiers": tiers}
    if conf.configurations:
        doc["configurations"] = [{"name": name, "arguments": dict(args)} for name, args in conf.configurations.items()]
    if conf.persistent_pipelines:
        doc[PERSISTENCE_KEY] = conf.pipeline_persistence
    if conf.built_directly:
        doc[BUILT_DIRECTLY_KEY] = True
    return doc


def scenario_document(name: str, objects: k8s.ClusterObjects, conf: SchedulerConf, cycles: int = 1,
                      now: str | None = None, options: ServerOptions | None = None,
                      extender_server: Any = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "schedcheck/v1", "kind": "Scenario", "metadata": {"name": name},
                           "schedulerConf": conf_document(conf), "objects": objects_document(objects),
                           "cycles": cycles}
    if options is not None and options_document(options):
        doc["schedulerOptions"] = options_document(options)
    if now:
        doc["now"] = now
    if extender_server is not None:  # scenario/extender.py's ExtenderServer
        doc["extenderServer"] = {"command": list(extender_server.command),
                                 "startupTimeout": f"{extender_server.startup_timeout:g}s"}
    return doc
