//go:build volcano_volumebinder

package main

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/cache"
	"volcano.sh/volcano/pkg/scheduler/capabilities/volumebinding"
)

// newMockCache is upstream's mock cache with the recorders (before v1.12 the constructor also takes a
// volume binder, which allocate calls for every placement: one that binds nothing; volumes_none.go drops the
// scenario's storage objects).
func newMockCache(b cache.Binder, e cache.Evictor, s cache.StatusUpdater, r record.EventRecorder) *cache.SchedulerCache {
	return cache.NewCustomMockSchedulerCache(defaultSchedulerName, b, e, s, nil, noVolumes{}, r)
}

type noVolumes struct{}

func (noVolumes) GetPodVolumes(*api.TaskInfo, *v1.Node) (*volumebinding.PodVolumes, error) {
	return &volumebinding.PodVolumes{}, nil
}
func (noVolumes) RevertVolumes(*api.TaskInfo, *volumebinding.PodVolumes)                 {}
func (noVolumes) AllocateVolumes(*api.TaskInfo, string, *volumebinding.PodVolumes) error { return nil }
func (noVolumes) BindVolumes(*api.TaskInfo, *volumebinding.PodVolumes) error             { return nil }
