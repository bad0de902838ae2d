//go:build volcano_schgate

package main

// Volcano's queue-allocation scheduling gate (the feature gate SchedulingGatesQueueAdmission, upstream
// after v1.14): the scenario's schedulerOptions.featureGates switch the process's feature gate, as the
// scheduler's --feature-gates flag does; each session gets upstream's own SchGateManager, whose workers
// patch pods through a fake clientset that records them. After the session the adapter waits until the
// manager's queue is empty and its workers are done, so the world removes the gate before the next
// session, as the reference's world does.

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"volcano.sh/volcano/pkg/features"
	"volcano.sh/volcano/pkg/scheduler/framework"
	"volcano.sh/volcano/pkg/scheduler/gate"
)

// applyFeatureGates sets the Volcano feature gates the schedulerOptions block names (only
// SchedulingGatesQueueAdmission is passed: the reference models no other); absent, the default (off).
func applyFeatureGates(given any) {
	gates, _ := given.(map[string]any)
	on := false
	for name, value := range gates {
		if name != string(features.SchedulingGatesQueueAdmission) {
			fmt.Fprintf(os.Stderr, "warning: schedulerOptions.featureGates.%s is not passed to upstream (%v)\n", name, value)
			continue
		}
		on, _ = value.(bool)
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{
		string(features.SchedulingGatesQueueAdmission): on}); err != nil {
		fmt.Fprintf(os.Stderr, "warning: schedulerOptions.featureGates: %v\n", err)
	}
}

// schGate is one session's gate manager and the pods its workers patched.
type schGate struct {
	manager *gate.SchGateManager
	mu      sync.Mutex
	patched map[string]bool // ns/name
}

// startSchGate gives the session a started gate manager when the feature gate is on (nil otherwise, as
// upstream's scheduler leaves it).
func startSchGate(ssn *framework.Session) *schGate {
	if !utilfeature.DefaultFeatureGate.Enabled(features.SchedulingGatesQueueAdmission) {
		return nil
	}
	g := &schGate{patched: map[string]bool{}}
	client := fake.NewSimpleClientset()
	client.PrependReactor("patch", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		p := action.(k8stesting.PatchAction)
		if strings.Contains(string(p.GetPatch()), `"$patch":"delete"`) {
			g.mu.Lock()
			g.patched[p.GetNamespace()+"/"+p.GetName()] = true
			g.mu.Unlock()
		}
		return true, nil, nil
	})
	g.manager = gate.NewSchGateManager(client, gate.DefaultWorkerNum)
	g.manager.Start()
	ssn.SetSchGateManager(g.manager)
	return g
}

// wait drains the manager (its queue empty, then Stop, which waits for the workers' patches in flight)
// and returns the pods whose gate was patched away, in key order.
func (g *schGate) wait() []string {
	if g == nil {
		return nil
	}
	queue := reflect.ValueOf(g.manager).Elem().FieldByName("opCh")
	deadline := time.Now().Add(60 * time.Second)
	for queue.Len() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	g.manager.Stop()
	g.mu.Lock()
	defer g.mu.Unlock()
	keys := make([]string, 0, len(g.patched))
	for key := range g.patched {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}
