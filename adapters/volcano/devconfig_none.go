//go:build !volcano_devclient

package main

// An upstream whose api/devices client cannot be set (v1.14 and before: it is built from the in-cluster
// config only): the device config is upstream's default, and ConfigMaps are not fed (a warning).

import (
	"fmt"
	"os"
)

func (w *World) startDeviceConfig() {
	if len(w.ConfigMaps) > 0 {
		fmt.Fprintf(os.Stderr, "warning: ConfigMaps ignored: this upstream version's device config cannot be given a client\n")
	}
}
