//go:build !volcano_volumebinder

package main

import (
	"k8s.io/client-go/tools/record"

	"volcano.sh/volcano/pkg/scheduler/cache"
)

// newMockCache is upstream's mock cache with the recorders (v1.12 and later).
func newMockCache(b cache.Binder, e cache.Evictor, s cache.StatusUpdater, r record.EventRecorder) *cache.SchedulerCache {
	return cache.NewCustomMockSchedulerCache(defaultSchedulerName, b, e, s, nil, r)
}
