package main

// The ephemeral volume controller between sessions, as reference_impl/cache/ephemeral_controller.py runs it:
// each generic ephemeral volume of a pod not being deleted whose claim "<pod>-<volume>" does not exist gets
// one, from the template's labels, annotations and spec, controlled by the pod; an existing claim of that
// name is left alone.

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func (w *World) createEphemeralClaims() {
	existing := map[string]bool{}
	for _, pvc := range w.PVCs {
		existing[pvc.Namespace+"/"+pvc.Name] = true
	}
	yes := true
	for _, p := range w.Pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, vol := range p.Spec.Volumes {
			if vol.Ephemeral == nil || vol.Ephemeral.VolumeClaimTemplate == nil {
				continue
			}
			name := p.Name + "-" + vol.Name
			if existing[p.Namespace+"/"+name] {
				continue
			}
			template := vol.Ephemeral.VolumeClaimTemplate
			pvc := &v1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{
					Name: name, Namespace: p.Namespace, UID: types.UID("ephemeral-" + p.Namespace + "-" + name),
					Labels: copyStrings(template.Labels), Annotations: copyStrings(template.Annotations),
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name,
						UID: p.UID, Controller: &yes, BlockOwnerDeletion: &yes}},
				},
				Spec:   *template.Spec.DeepCopy(),
				Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
			}
			w.PVCs = append(w.PVCs, pvc)
			existing[p.Namespace+"/"+name] = true
		}
	}
}

func copyStrings(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
