//go:build !volcano_shardstatus

package main

import (
	"fmt"
	"os"

	"volcano.sh/volcano/cmd/scheduler/app/options"
)

// applyShardOption: this upstream has no node sharding (before v1.14), so the option is dropped, with a warning.
func applyShardOption(_ *options.ServerOption, key string, _ any) {
	fmt.Fprintf(os.Stderr, "warning: schedulerOptions.%s ignored: this upstream version has no node sharding\n", key)
}
