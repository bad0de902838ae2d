package main

import v1 "k8s.io/api/core/v1"

// queueAllocationGate is Volcano's own scheduling gate (scheduling/v1beta1 QueueAllocationGateKey).
const queueAllocationGate = "scheduling.volcano.sh/queue-allocation-gate"

// removeSchGates applies the gate manager's patches (cache.RemoveVolcanoSchGate, a strategic-merge
// patch deleting the gate of that name; other gates stay) to the world's pods; a pod gone meanwhile
// is a NotFound upstream logs.
func (w *World) removeSchGates(keys []string) {
	if len(keys) == 0 {
		return
	}
	patched := map[string]bool{}
	for _, key := range keys {
		patched[key] = true
	}
	for _, p := range w.Pods {
		if !patched[p.Namespace+"/"+p.Name] {
			continue
		}
		kept := make([]v1.PodSchedulingGate, 0, len(p.Spec.SchedulingGates))
		for _, g := range p.Spec.SchedulingGates {
			if g.Name != queueAllocationGate {
				kept = append(kept, g)
			}
		}
		p.Spec.SchedulingGates = kept
	}
}
