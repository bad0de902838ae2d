"""The ephemeral volume controller, as the world runs it between sessions (k8s pkg/controller/volume/ephemeral).

For every pod not being deleted, each generic ephemeral volume whose claim ("<pod name>-<volume name>") does
not exist gets one: the template's labels, annotations and spec, owned by the pod (a controller owner
reference, so VolumeBinding's VolumeIsForPod accepts it), unbound. A claim of that name that already exists
is left alone, whoever owns it (the controller reports a conflict and creates nothing).
"""

from __future__ import annotations

import dataclasses

from schedcheck.reference.k8s import ClusterObjects
from schedcheck.reference.plugins.volume_helpers import volume_claim_name


def claim_uid(namespace: str, name: str) -> str:
    """The uid the world gives a claim it creates (the adapter gives the same)."""
    return f"ephemeral-{namespace}-{name}"


def create_ephemeral_claims(objects: ClusterObjects) -> list[str]:
    """Create the missing claims of the pods' generic ephemeral volumes (in place); their keys, in order."""
    existing = {pvc.key for pvc in objects.persistent_volume_claims}
    created = []
    for pod in objects.pods:
        if pod.deletion_timestamp:
            continue
        for volume in pod.volumes:
            if not volume.ephemeral or volume.claim_template is None:
                continue
            name = volume_claim_name(pod, volume)
            key = f"{pod.namespace}/{name}"
            if key in existing:
                continue
            template = volume.claim_template
            objects.persistent_volume_claims.append(dataclasses.replace(
                template, name=name, namespace=pod.namespace, uid=claim_uid(pod.namespace, name),
                labels=dict(template.labels), annotations=dict(template.annotations),
                access_modes=list(template.access_modes), controller_uid=pod.uid, phase="Pending",
                volume_name=template.volume_name, resource_version=1))
            existing.add(key)
            created.append(key)
    return created
