//go:build !volcano_dra

package main

// An upstream without resource.k8s.io/v1 DRA in its cache: the DRA objects are dropped, with a warning.

import (
	"fmt"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"

	"volcano.sh/volcano/pkg/scheduler/cache"
)

type draObjects struct{ ignored int }

func (w *World) decodeDRA(kind string, _ func(any) error) (bool, error) {
	switch kind {
	case "DeviceClass", "ResourceSlice", "ResourceClaim", "DeviceTaintRule":
		if w.DRA.ignored == 0 {
			fmt.Fprintf(os.Stderr, "warning: DRA objects ignored: this upstream version's cache does not read them\n")
		}
		w.DRA.ignored++
		return true, nil
	}
	return false, nil
}

func (w *World) startDRA(_ *cache.SchedulerCache, _ time.Duration) {}

func (w *World) waitDRA(_ *cache.SchedulerCache) {}

func serveTemplateClaimPod(_ *cache.SchedulerCache, _ *v1.Pod) {}

func (w *World) readDRA(_ *cache.SchedulerCache) {}
