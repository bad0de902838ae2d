//go:build volcano_devclient

package main

// The device ConfigMap through api/devices' client (devices.SetClient, after v1.14): a fake clientset
// holding the scenario's ConfigMaps, which config.InitDevicesConfig reads when the deviceshare plugin
// is first built (once per process: the adapter runs one scenario per process).

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"volcano.sh/volcano/pkg/scheduler/api/devices"
)

func (w *World) startDeviceConfig() {
	objects := make([]runtime.Object, 0, len(w.ConfigMaps))
	for _, cm := range w.ConfigMaps {
		objects = append(objects, cm.DeepCopy())
	}
	devices.SetClient(fake.NewSimpleClientset(objects...))
}
