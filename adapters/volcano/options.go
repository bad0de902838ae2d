package main

import (
	"fmt"
	"os"

	"volcano.sh/volcano/cmd/scheduler/app/options"
)

// applyOptions sets the scheduler's command-line options a scenario gives (schedulerOptions) on the
// options the mock cache has just reset to their defaults (options.Default in NewCustomMockSchedulerCache).
func applyOptions(given map[string]any) {
	if len(given) == 0 || options.ServerOpts == nil {
		return
	}
	opts := options.ServerOpts
	for key, value := range given {
		switch key {
		case "shardingMode", "shardName":
			applyShardOption(opts, key, value)
		case "minNodesToFind":
			if n, ok := value.(float64); ok {
				opts.MinNodesToFind = int32(n)
			}
		case "minPercentageOfNodesToFind":
			if n, ok := value.(float64); ok {
				opts.MinPercentageOfNodesToFind = int32(n)
			}
		case "percentageOfNodesToFind":
			if n, ok := value.(float64); ok {
				opts.PercentageOfNodesToFind = int32(n)
			}
		case "ignoredProvisioners": // --ignored-provisioners (volumes.go adds upstream's defaults)
			list, _ := value.([]any)
			opts.IgnoredCSIProvisioners = nil
			for _, p := range list {
				if s, ok := p.(string); ok {
					opts.IgnoredCSIProvisioners = append(opts.IgnoredCSIProvisioners, s)
				}
			}
		case "featureGates": // --feature-gates: set once per run (schgate.go)
		default:
			fmt.Fprintf(os.Stderr, "warning: schedulerOptions.%s is not passed to upstream\n", key)
		}
	}
}
