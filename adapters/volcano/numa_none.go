//go:build !volcano_numa

package main

// An upstream whose cache does not keep the numa-aware plugin's decisions across sessions (v1.14 and
// earlier): Numatopology objects are dropped, with a warning.

import (
	"fmt"
	"os"

	"volcano.sh/volcano/pkg/scheduler/cache"
)

type numaObjects struct{ ignored int }

func (w *World) decodeNuma(kind string, _ func(any) error) (bool, error) {
	if kind != "Numatopology" {
		return false, nil
	}
	if w.Numa.ignored == 0 {
		fmt.Fprintf(os.Stderr, "warning: Numatopology objects ignored: this adapter build does not feed them\n")
	}
	w.Numa.ignored++
	return true, nil
}

func (w *World) fillNuma(_ *cache.SchedulerCache) {}

func (w *World) readNuma(_ *cache.SchedulerCache) {}
