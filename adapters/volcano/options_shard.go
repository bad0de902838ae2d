//go:build volcano_shardstatus

package main

import "volcano.sh/volcano/cmd/scheduler/app/options"

// applyShardOption sets the sharding options (v1.14 and later).
func applyShardOption(opts *options.ServerOption, key string, value any) {
	s, ok := value.(string)
	if !ok {
		return
	}
	if key == "shardingMode" {
		opts.ShardingMode = s
	} else {
		opts.ShardName = s
	}
}
