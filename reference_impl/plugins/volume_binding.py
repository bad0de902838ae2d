"""VolumeBinding as the predicates plugin runs it (k8s v1.36.1 plugins/volumebinding: volume_binding.go,
binder.go, with component-helpers storage/volume).

A generic ephemeral volume uses the claim named "<pod>-<volume>" like any other, once it exists and is
controlled by the pod: a missing one makes the pod wait ("waiting for ephemeral volume controller to create
the persistentvolumeclaim"), one of another owner refuses it (VolumeIsForPod), both
UnschedulableAndUnresolvable at PreFilter.

PreFilter sorts the pod's claims: fully bound (a volume name and the bind-completed annotation), unbound
with delayed binding (WaitForFirstConsumer class, no volume name) and unbound immediate (any other unbound
claim, pre-bound ones included), which make the pod UnschedulableAndUnresolvable. Filter, per node: every
bound claim's PV exists and its node affinity admits the node; every delayed claim finds the smallest
matching PV of its class (one PV per claim) or, failing that, can be provisioned (a provisioner other than
kubernetes.io/no-provisioner, allowedTopologies admitting the node). Reserve assumes the chosen PVs
pre-bound and the claims to provision annotated with the node, in the cache-wide assume caches; Unreserve
restores them. PreBind (the cache, at bind time) writes those to the API objects and then waits for the
PV controller to bind the claims.

A class's PVs are listed in the world's order, where upstream's per-class index has none: between equally
small matching PVs the first listed is taken (upstream's pick among them is arbitrary).

A bound PV with an in-tree source whose plugin's migration is on and which the node's CSINode lists in
its storage.alpha.kubernetes.io/migrated-plugins annotation is translated before its node affinity is
checked (csi_translation.translated_pv: the zone key becomes the CSI driver's topology key, or the zone
label is added under it), so such a node needs the CSI topology label; a PV the translator refuses fails
the node with an Error status.

PreBind (checkBindings) checks every PV it pre-bound against the node again, translated as above: an
Available in-tree PV that Filter matched by its untranslated node affinity (FindMatchingVolume) fails the bind
there when its translation does not admit the node; the API writes stay, so the PV controller binds the claim.

Not modelled: CSIStorageCapacity (no CSIDriver opts in, so every node has enough storage), a bind
that times out (the world's PV controller always binds what the scheduler started), scoring (StorageCapacityScoring is off at v1.36, so the plugin scores 0).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from schedcheck.reference.api.unschedule_info import Status, StatusCode
from schedcheck.reference.cache.volumes import AssumeError, VolumeCaches, VolumeWait
from schedcheck.reference.k8s import ClaimReference, Node, PersistentVolume, PersistentVolumeClaim, Pod
from schedcheck.reference.plugins.csi_translation import TranslationError, translated_pv
from schedcheck.reference.plugins.volume_helpers import (
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    WAIT_FOR_FIRST_CONSUMER,
    bound_to_claim,
    claim_class,
    find_matching_volume,
    ephemeral_claim_missing,
    fully_bound,
    pv_fits_node,
    storage,
    topology_allows,
    volume_claim_name,
    volume_is_for_pod,
)

NAME = "VolumeBinding"
STATE_KEY = NAME
REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
UAU = StatusCode.UnschedulableAndUnresolvable


@dataclass
class PodClaims:
    bound: list[PersistentVolumeClaim] = field(default_factory=list)
    delayed: list[PersistentVolumeClaim] = field(default_factory=list)
    immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    volumes_by_class: dict[str, list[PersistentVolume]] = field(default_factory=dict)


@dataclass
class PodVolumes:
    """For one node: claims matched to static PVs, and claims to provision."""

    static: list[tuple[PersistentVolumeClaim, PersistentVolume]] = field(default_factory=list)
    provisions: list[PersistentVolumeClaim] = field(default_factory=list)


@dataclass
class BindingState:
    """The plugin's cycle state; `skip` for a pod without claims (PreFilter said Skip: no Filter)."""

    skip: bool = False
    claims: PodClaims | None = None
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = False


def claim_names(pod: Pod) -> list[str]:
    return [volume_claim_name(pod, volume) for volume in pod.volumes]


class VolumeBinding:
    def __init__(self, caches: VolumeCaches) -> None:
        self.caches = caches

    # -- PreFilter ---------------------------------------------------------------------

    def pre_filter(self, pod: Pod) -> BindingState | Status:
        """The state to keep (skipping the Filter for a pod without claims), or the failing status."""
        if not pod.volumes:
            return BindingState(skip=True)
        problem = self._claims_problem(pod)
        if problem:
            return Status(UAU, problem)
        claims = self._sort_claims(pod)
        if claims.immediate:
            return Status(UAU, REASON_UNBOUND_IMMEDIATE)
        return BindingState(claims=claims)

    def _claims_problem(self, pod: Pod) -> str:
        """podHasPVCs: a missing, lost or deleting claim, or an ephemeral volume's claim not controlled by the
        pod (informer view)."""
        for volume in pod.volumes:
            name = volume_claim_name(pod, volume)
            pvc = self.caches.objects.pvc(pod.namespace, name)
            if pvc is None:
                if volume.ephemeral:
                    return ephemeral_claim_missing(name)
                return f'persistentvolumeclaim "{name}" not found'
            if pvc.phase == "Lost":
                return f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume "{pvc.volume_name}"'
            if pvc.deletion_timestamp:
                return f'persistentvolumeclaim "{name}" is being deleted'
            if volume.ephemeral and (problem := volume_is_for_pod(pod, pvc)):
                return problem
        return ""

    def _sort_claims(self, pod: Pod) -> PodClaims:
        """GetPodVolumeClaims, over the claims' assume cache."""
        claims = PodClaims()
        for name in claim_names(pod):
            pvc = self.caches.pvcs.get(f"{pod.namespace}/{name}")
            if pvc is None:
                continue
            if fully_bound(pvc):
                claims.bound.append(pvc)
            elif self._delayed(pvc) and not pvc.volume_name:
                claims.delayed.append(pvc)
            else:
                claims.immediate.append(pvc)
        for pvc in claims.delayed:
            name = claim_class(pvc)
            claims.volumes_by_class[name] = self.caches.pvs_of_class(name)
        return claims

    def _delayed(self, pvc: PersistentVolumeClaim) -> bool:
        """IsDelayBindingMode: a class that exists and waits for the first consumer."""
        name = claim_class(pvc)
        sc = self.caches.objects.storage_class(name) if name else None
        return sc is not None and sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER

    # -- Filter ------------------------------------------------------------------------

    def filter(self, state: BindingState, node: Node) -> Status | None:
        """FindPodVolumes for the node; on success its PodVolumes are kept for Reserve."""
        claims = state.claims or PodClaims()
        volumes = PodVolumes()
        try:
            reasons = self._find(claims, node, volumes)
        except TranslationError as err:
            return Status(StatusCode.Error, f"could not translate pv: {err}")
        if reasons:
            return Status(UAU, ", ".join(reasons))
        state.by_node[node.name] = volumes
        return None

    def _find(self, claims: PodClaims, node: Node, volumes: PodVolumes) -> list[str]:
        """The conflict reasons; a bound PV the translator refuses raises TranslationError."""
        reasons: list[str] = []
        bound_fit, pvs_found = self._check_bound(claims.bound, node)
        if not bound_fit:
            reasons.append(REASON_NODE_CONFLICT)
        unbound_fit = self._check_unbound(claims, node, volumes) if claims.delayed else True
        if not unbound_fit:
            reasons.append(REASON_BIND_CONFLICT)
        if not pvs_found:
            reasons.append(REASON_PV_NOT_EXIST)
        return reasons

    def _check_bound(self, bound: list[PersistentVolumeClaim], node: Node) -> tuple[bool, bool]:
        """checkBoundClaims: (node affinity fits, PVs found); the first miss decides. An in-tree PV whose plugin
        the node's CSINode lists as migrated is checked with its translated node affinity."""
        csi_node = self.caches.objects.csi_node(node.name)
        for pvc in bound:
            pv = self.caches.pvs.get(pvc.volume_name)
            if pv is None:
                return True, False
            pv = translated_pv(pv, csi_node)
            if not pv_fits_node(pv, node.labels):
                return False, True
        return True, True

    def _check_unbound(self, claims: PodClaims, node: Node, volumes: PodVolumes) -> bool:
        to_provision: list[PersistentVolumeClaim] = []
        to_match: list[PersistentVolumeClaim] = []
        for pvc in claims.delayed:
            selected = pvc.annotations.get(ANN_SELECTED_NODE)
            if selected is None:
                to_match.append(pvc)
            elif selected != node.name:
                return False  # provisioning already started for another node
            else:
                to_provision.append(pvc)
        satisfied = True
        if to_match:
            satisfied, unmatched = self._match(to_match, claims.volumes_by_class, node, volumes)
            to_provision.extend(unmatched)
        if to_provision:
            satisfied = self._provisionable(to_provision, node, volumes)
        return satisfied

    def _match(self, to_match: list[PersistentVolumeClaim], by_class: dict[str, list[PersistentVolume]],
               node: Node, volumes: PodVolumes) -> tuple[bool, list[PersistentVolumeClaim]]:
        """findMatchingVolumes: smallest claims first, each PV chosen at most once."""
        chosen: set[str] = set()
        unmatched: list[PersistentVolumeClaim] = []
        for pvc in sorted(to_match, key=lambda c: storage(c.request)):
            pv = find_matching_volume(pvc, by_class.get(claim_class(pvc), []), node.labels, chosen)
            if pv is None:
                unmatched.append(pvc)
                continue
            chosen.add(pv.name)
            volumes.static.append((pvc, pv))
        return not unmatched, unmatched

    def _provisionable(self, to_provision: list[PersistentVolumeClaim], node: Node, volumes: PodVolumes) -> bool:
        """checkVolumeProvisions: every claim's class can provision for the node (storage capacity: always)."""
        for pvc in to_provision:
            sc = self.caches.objects.storage_class(claim_class(pvc))
            if sc is None or sc.provisioner in ("", NOT_SUPPORTED_PROVISIONER):
                return False
            if not topology_allows(sc.allowed_topologies, node.labels):
                return False
            volumes.provisions.append(pvc)
        return True

    # -- Reserve / Unreserve -----------------------------------------------------------

    def reserve(self, state: BindingState, pod: Pod, node_name: str) -> Exception | None:
        volumes = state.by_node.get(node_name)
        if volumes is None:
            state.all_bound = True
            return None
        try:
            state.all_bound = self._assume(pod, node_name, volumes)
        except AssumeError as err:
            return err
        return None

    def _assume(self, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        """AssumePodVolumes: True when every claim is already fully bound (nothing to do)."""
        if self._all_bound(pod):
            return True
        static = []
        try:
            for pvc, pv in volumes.static:
                bound = pre_bound(pv, pvc)
                if bound is not pv:
                    self.caches.pvs.assume(bound)
                static.append((pvc, bound))
        except AssumeError:
            self._restore_pvs(static)
            raise
        provisions = []
        try:
            for pvc in volumes.provisions:
                annotated = copy.deepcopy(pvc)
                annotated.annotations[ANN_SELECTED_NODE] = node_name
                self.caches.pvcs.assume(annotated)
                provisions.append(annotated)
        except AssumeError:
            self._restore_pvs(static)
            self._restore_pvcs(provisions)
            raise
        volumes.static, volumes.provisions = static, provisions
        return False

    def _all_bound(self, pod: Pod) -> bool:
        for name in claim_names(pod):
            pvc = self.caches.pvcs.get(f"{pod.namespace}/{name}")
            if pvc is None or not fully_bound(pvc):
                return False
        return True

    def unreserve(self, state: BindingState, node_name: str) -> None:
        volumes = state.by_node.get(node_name)
        if volumes is not None:
            self._restore_pvs(volumes.static)
            self._restore_pvcs(volumes.provisions)

    def _restore_pvs(self, static: list[tuple[PersistentVolumeClaim, PersistentVolume]]) -> None:
        for _, pv in static:
            self.caches.pvs.restore(pv)

    def _restore_pvcs(self, claims: list[PersistentVolumeClaim]) -> None:
        for pvc in claims:
            self.caches.pvcs.restore(pvc)

    # -- PreBind -----------------------------------------------------------------------

    def pre_bind(self, state: BindingState, node_name: str) -> VolumeWait | Exception | None:
        """BindPodVolumes: write the assumed PVs and annotated claims to the API objects, then wait."""
        if state.all_bound:
            return None
        volumes = state.by_node.get(node_name)
        if volumes is None:
            return Exception(f'no pod volume found for node "{node_name}"')
        # nothing was assumed for this node (Reserve did not run): upstream's checkBindings fails the bind
        for pvc, pv in volumes.static:
            if not bound_to_claim(pv, pvc):
                return Exception(f'binding volumes: ClaimRef got reset for pv "{pv.name}"')
        for pvc in volumes.provisions:
            if pvc.annotations.get(ANN_SELECTED_NODE) != node_name:
                return Exception(f'binding volumes: provisioning failed for PVC "{pvc.name}"')
        for _, pv in volumes.static:
            self.caches.objects.write_pv(pv)
        for pvc in volumes.provisions:
            self.caches.objects.write_pvc(pvc)
        # checkBindings: each PV the bind pre-bound is checked again against the node, translated to CSI
        # where the node's CSINode lists its plugin as migrated. Filter matched an Available PV by its
        # untranslated affinity (FindMatchingVolume), so a migrated in-tree PV can pass there and fail here.
        # The writes above stay (upstream has no API rollback): the PV controller binds the claim anyway.
        node = next((n for n in self.caches.objects.world.nodes if n.name == node_name), None)
        if node is None:  # the node lister's miss
            return Exception(f'binding volumes: failed to get node "{node_name}": node "{node_name}" not found')
        labels = node.labels
        csi_node = self.caches.objects.csi_node(node_name)
        for _, pv in volumes.static:
            try:
                checked = translated_pv(pv, csi_node)
            except TranslationError as err:
                return Exception(f"binding volumes: failed to translate pv to csi: {err}")
            if not pv_fits_node(checked, labels):
                return Exception(f'binding volumes: pv "{pv.name}" node affinity doesn\'t match node '
                                 f'"{node_name}": no matching NodeSelectorTerms')
        waited = [pvc.key for pvc, _ in volumes.static] + [pvc.key for pvc in volumes.provisions]
        return VolumeWait(node_name, waited)


def pre_bound(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> PersistentVolume:
    """GetBindVolumeToClaim: `pv` itself when its claimRef already names the claim and its uid, else a copy
    with that claimRef (and bound-by-controller, unless the PV was bound to the claim by name already)."""
    ref = pv.claim_ref
    if ref is not None and (ref.namespace, ref.name, ref.uid) == (pvc.namespace, pvc.name, pvc.uid):
        return pv
    bound = copy.deepcopy(pv)
    bound.claim_ref = ClaimReference(pvc.namespace, pvc.name, pvc.uid)
    if not bound_to_claim(pv, pvc):
        bound.annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
    return bound
