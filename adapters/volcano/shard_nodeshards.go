//go:build volcano_nodeshards

package main

import (
	"encoding/json"
	"fmt"
	"os"

	nodeshardv1alpha1 "volcano.sh/apis/pkg/apis/shard/v1alpha1"
	"volcano.sh/volcano/pkg/scheduler/cache"
)

// applyNodeShards hands the NodeShard objects to the cache as its NodeShard informer does (AddNodeShard,
// which refreshes the nodes of this scheduler's shard). Built when upstream has NodeShards (v1.14 and later; the
// build adds the tag when the checkout has pkg/scheduler/cache/shard_coordinator.go).
func applyNodeShards(c *cache.SchedulerCache, raws []json.RawMessage) {
	for _, raw := range raws {
		shard := &nodeshardv1alpha1.NodeShard{}
		if err := json.Unmarshal(raw, shard); err != nil {
			fmt.Fprintf(os.Stderr, "warning: NodeShard: %v\n", err)
			continue
		}
		c.AddNodeShard(shard)
	}
}
