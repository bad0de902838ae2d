package main

// The objects PodTopologySpread's system default constraints read (helper.DefaultSelector): Services,
// ReplicationControllers, ReplicaSets and StatefulSets. Upstream's predicates and nodeorder plugins build
// the Kubernetes plugin with SystemDefaulting, so it takes listers of these four kinds from the session's
// SharedInformerFactory (the cache's). The mock cache registers none of their informers before it starts
// its factory, so each is registered afterwards, never started, and its store holds the scenario's objects
// (as run.go does for PodDisruptionBudgets): it never lists the empty fake client.

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"volcano.sh/volcano/pkg/scheduler/cache"
)

type workloadObjects struct {
	Services               []*v1.Service
	ReplicationControllers []*v1.ReplicationController
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
}

func defaultWorkloadMeta(ns *string, uid *types.UID, prefix, name string) {
	if *ns == "" {
		*ns = "default"
	}
	if *uid == "" {
		*uid = types.UID(prefix + "-" + *ns + "-" + name)
	}
}

// decodeWorkload reads one of the four kinds; false when kind is none of them.
func (w *World) decodeWorkload(kind string, decode func(any) error) (bool, error) {
	switch kind {
	case "Service":
		o := &v1.Service{}
		if err := decode(o); err != nil {
			return true, err
		}
		defaultWorkloadMeta(&o.Namespace, &o.UID, "service", o.Name)
		w.Workloads.Services = append(w.Workloads.Services, o)
	case "ReplicationController":
		o := &v1.ReplicationController{}
		if err := decode(o); err != nil {
			return true, err
		}
		defaultWorkloadMeta(&o.Namespace, &o.UID, "replicationcontroller", o.Name)
		// The API server's default: an empty selector takes the pod template's labels.
		if len(o.Spec.Selector) == 0 && o.Spec.Template != nil && o.Spec.Template.Labels != nil {
			o.Spec.Selector = o.Spec.Template.Labels
		}
		w.Workloads.ReplicationControllers = append(w.Workloads.ReplicationControllers, o)
	case "ReplicaSet":
		o := &appsv1.ReplicaSet{}
		if err := decode(o); err != nil {
			return true, err
		}
		defaultWorkloadMeta(&o.Namespace, &o.UID, "replicaset", o.Name)
		w.Workloads.ReplicaSets = append(w.Workloads.ReplicaSets, o)
	case "StatefulSet":
		o := &appsv1.StatefulSet{}
		if err := decode(o); err != nil {
			return true, err
		}
		defaultWorkloadMeta(&o.Namespace, &o.UID, "statefulset", o.Name)
		w.Workloads.StatefulSets = append(w.Workloads.StatefulSets, o)
	default:
		return false, nil
	}
	return true, nil
}

// fillWorkloads puts the objects into the stores of the informers PodTopologySpread's listers read.
func (w *World) fillWorkloads(c *cache.SchedulerCache) {
	factory := c.SharedInformerFactory()
	if len(w.Workloads.Services) > 0 {
		store := factory.Core().V1().Services().Informer().GetIndexer()
		for _, o := range w.Workloads.Services {
			_ = store.Add(o.DeepCopy())
		}
	}
	if len(w.Workloads.ReplicationControllers) > 0 {
		store := factory.Core().V1().ReplicationControllers().Informer().GetIndexer()
		for _, o := range w.Workloads.ReplicationControllers {
			_ = store.Add(o.DeepCopy())
		}
	}
	if len(w.Workloads.ReplicaSets) > 0 {
		store := factory.Apps().V1().ReplicaSets().Informer().GetIndexer()
		for _, o := range w.Workloads.ReplicaSets {
			_ = store.Add(o.DeepCopy())
		}
	}
	if len(w.Workloads.StatefulSets) > 0 {
		store := factory.Apps().V1().StatefulSets().Informer().GetIndexer()
		for _, o := range w.Workloads.StatefulSets {
			_ = store.Add(o.DeepCopy())
		}
	}
}
