package main

// Shared GPUs (deviceshare). Upstream keeps the plugin's switches (GPUSharingEnable, VGPUEnable, ...) in
// package variables that building the plugin sets, and the cache decides which device pools a node
// carries when it adds the node. A fresh cache filled before the first session would see every switch
// off; a running scheduler has built its plugins many times before its node informer relists. So the
// adapter builds the conf's deviceshare plugin once before filling the cache, as the reference decides
// the pools from the conf (reference_impl/plugins/deviceshare.py, device_flags).

import (
	"volcano.sh/volcano/pkg/scheduler/conf"
	"volcano.sh/volcano/pkg/scheduler/framework"
)

func primeDeviceShare(tiers []conf.Tier) {
	for _, tier := range tiers {
		for _, option := range tier.Plugins {
			if option.Name != "deviceshare" {
				continue
			}
			if build, ok := framework.GetPluginBuilder(option.Name); ok {
				build(framework.Arguments(option.Arguments))
			}
		}
	}
}
