package main

// Shared GPUs (deviceshare). Upstream keeps the plugin's switches (GPUSharingEnable, VGPUEnable, ...) in
// package variables that building the plugin sets, and the cache decides which device pools a node
// carries when it adds the node. A fresh cache filled before the first session would see every switch
// off; a running scheduler has built its plugins many times before its node informer relists. So the
// adapter builds the conf's deviceshare plugin once before filling the cache, as the reference decides
// the pools from the conf (reference_impl/plugins/deviceshare.py, device_flags).
//
// The device ConfigMap (deviceshare.KnownGeometriesCMName): upstream reads it once per process, through
// api/devices' own client, when the plugin is first built; startDeviceConfig (devconfig*.go) gives that
// client the scenario's ConfigMaps where the upstream version lets a client be set.
//
// The node lock (deviceshare.NodeLockEnable): a device's Allocate gets and updates the node through the
// session's client (the cache's fake clientset), which holds no nodes here (they reach the cache through
// its informer's store). Reactors play the API server for nodes: a get returns the world's node, an
// update writes its annotations back into the world, so a lock taken stays on the node in later sessions,
// as the reference's world keeps it. Lock times are shifted like every other timestamp (the scenario
// clock reads as the real time upstream compares with).

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"volcano.sh/volcano/pkg/scheduler/cache"
	"volcano.sh/volcano/pkg/scheduler/conf"
	"volcano.sh/volcano/pkg/scheduler/framework"
)

// lockAnnotations are the node-lock names of upstream's device pools (vGPU, GPU share).
var lockAnnotations = []string{"hamivgpu", "gpu"}

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

func (w *World) decodeConfigMap(kind string, decode func(any) error) (bool, error) {
	if kind != "ConfigMap" {
		return false, nil
	}
	cm := &v1.ConfigMap{}
	if err := decode(cm); err != nil {
		return true, err
	}
	defaultNamespaced(&cm.ObjectMeta, "configmap")
	w.ConfigMaps = append(w.ConfigMaps, cm)
	return true, nil
}

// startDevices runs before the deviceshare plugin is built and the cache filled.
func (w *World) startDevices(c *cache.SchedulerCache, shift time.Duration) {
	w.startDeviceConfig()
	fc, ok := c.Client().(*fake.Clientset)
	if !ok {
		return
	}
	moveLocks := func(annotations map[string]string, by time.Duration) {
		for _, key := range lockAnnotations {
			if value, ok := annotations[key]; ok {
				if t, err := time.Parse(time.RFC3339, value); err == nil {
					annotations[key] = t.Add(by).UTC().Format(time.RFC3339)
				}
			}
		}
	}
	find := func(name string) *v1.Node {
		for _, n := range w.Nodes {
			if n.Name == name {
				return n
			}
		}
		return nil
	}
	fc.PrependReactor("get", "nodes", func(action clienttesting.Action) (bool, runtime.Object, error) {
		name := action.(clienttesting.GetAction).GetName()
		n := find(name)
		if n == nil {
			return true, nil, errors.NewNotFound(v1.Resource("nodes"), name)
		}
		out := n.DeepCopy()
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		moveLocks(out.Annotations, shift)
		return true, out, nil
	})
	fc.PrependReactor("update", "nodes", func(action clienttesting.Action) (bool, runtime.Object, error) {
		update, ok := action.(clienttesting.UpdateAction)
		if !ok || action.GetSubresource() != "" {
			return false, nil, nil
		}
		sent, ok := update.GetObject().(*v1.Node)
		if !ok {
			return false, nil, nil
		}
		n := find(sent.Name)
		if n == nil {
			return true, nil, errors.NewNotFound(v1.Resource("nodes"), sent.Name)
		}
		annotations := map[string]string{}
		for k, v := range sent.Annotations {
			annotations[k] = v
		}
		moveLocks(annotations, -shift)
		n.Annotations = annotations
		return true, sent.DeepCopy(), nil
	})
}
