//go:build volcano_volumebinder

package main

import (
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"

	"volcano.sh/volcano/pkg/scheduler/cache"
)

var volumesWarned bool

// startVolumes: before v1.12 volume binding is the cache's VolumeBinder, which the adapter replaces by one
// that binds nothing (mockcache_volumebinder.go), so the storage objects are dropped, with a warning.
func (w *World) startVolumes(_ *cache.SchedulerCache) *volumeWrites {
	n := len(w.PVs) + len(w.PVCs) + len(w.StorageClasses) + len(w.CSINodes) + len(w.VolumeAttachments)
	if n > 0 && !volumesWarned {
		volumesWarned = true
		fmt.Fprintf(os.Stderr, "warning: %d storage object(s) ignored: this upstream version's volume binder is not fed\n", n)
	}
	return newVolumeWrites(w) // PreBind writes nothing: no bind is ever waiting
}

func (w *World) fillVolumes(_ *cache.SchedulerCache) {}

func (w *World) syncVolumeCaches(_ *cache.SchedulerCache) {}

func storePod(_ *cache.SchedulerCache, _ *v1.Pod) {}

func (w *World) servePendingClaimPod(_ *cache.SchedulerCache, _ *v1.Pod) {}

func addNode(c *cache.SchedulerCache, n *v1.Node) { _ = c.AddOrUpdateNode(n) }

func (w *World) readVolumes(_ *cache.SchedulerCache) {}
