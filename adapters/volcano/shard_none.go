//go:build !volcano_nodeshards

package main

import (
	"encoding/json"
	"fmt"
	"os"

	"volcano.sh/volcano/pkg/scheduler/cache"
)

// applyNodeShards: this upstream has no NodeShard objects (before v1.14), so they are dropped, with a warning.
func applyNodeShards(_ *cache.SchedulerCache, raws []json.RawMessage) {
	if len(raws) > 0 {
		fmt.Fprintf(os.Stderr, "warning: %d NodeShard object(s) ignored: this upstream version has no NodeShards\n", len(raws))
	}
}
