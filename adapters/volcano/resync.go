package main

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"volcano.sh/volcano/pkg/scheduler/cache"
)

// servePodToResync lets the fake client answer a get of the pod, as the API server would. The cache adds a
// pod whose claim is still pending (a DRA template's claim, an ephemeral volume's) and resyncs it: syncTask
// gets the pod again and keeps the task while the claim stays pending. Without the pod in the client the
// resync finds nothing and deletes the task, and a bind of it then fails ("failed to find task").
func servePodToResync(c *cache.SchedulerCache, p *v1.Pod) {
	fc, ok := c.Client().(*fake.Clientset)
	if !ok {
		return
	}
	served := p.DeepCopy()
	fc.PrependReactor("get", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		get := action.(clienttesting.GetAction)
		if get.GetNamespace() != served.Namespace || get.GetName() != served.Name {
			return false, nil, nil
		}
		return true, served.DeepCopy(), nil
	})
}
