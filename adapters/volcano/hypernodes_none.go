//go:build !volcano_hypernodes

package main

import (
	"fmt"
	"os"

	"volcano.sh/volcano/pkg/scheduler/cache"
)

// fillHyperNodes: this upstream has no HyperNodes (before v1.12), so they are dropped, with a warning.
func (w *World) fillHyperNodes(_ *cache.SchedulerCache) {
	if len(w.HyperNodes) > 0 {
		fmt.Fprintf(os.Stderr, "warning: %d HyperNode object(s) ignored: this upstream version has no HyperNodes\n", len(w.HyperNodes))
	}
}
