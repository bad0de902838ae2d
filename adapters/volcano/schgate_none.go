//go:build !volcano_schgate

package main

// An upstream without the queue-allocation gate manager (v1.14 and earlier): the feature gate
// SchedulingGatesQueueAdmission does not exist, a scenario switching it on is warned about, and no
// gate is ever removed.

import (
	"fmt"
	"os"

	"volcano.sh/volcano/pkg/scheduler/framework"
)

func applyFeatureGates(given any) {
	gates, _ := given.(map[string]any)
	for name, value := range gates {
		if on, ok := value.(bool); ok && on && name == "SchedulingGatesQueueAdmission" {
			fmt.Fprintf(os.Stderr, "warning: schedulerOptions.featureGates.%s ignored: this upstream version has no such gate\n", name)
		}
	}
}

type schGate struct{}

func startSchGate(_ *framework.Session) *schGate { return nil }

func (g *schGate) wait() []string { return nil }
