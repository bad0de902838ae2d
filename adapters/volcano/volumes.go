//go:build !volcano_volumebinder

package main

// Volumes, where VolumeBinding is a plugin of predicates (v1.12 and later: the mock cache takes no volume
// binder). PersistentVolumes, claims, StorageClasses and VolumeAttachments are created through the cache's
// fake API client before its informers start, as pkg/scheduler/uthelper does: the cache's CSI counting,
// VolumeBinding, VolumeZone and NodeVolumeLimits read them from those informers, and VolumeBinding's
// PreBind writes them back through that client. CSINodes go into their informer's store, nodes through
// upstream's own SyncNode (the node worker's path), which turns each CSINode driver into an
// attachable-volumes-csi-<driver> resource of the node. (A CSINode created through the client would make
// the node worker sync a node the node informer does not hold, and remove it from the cache.)

import (
	"context"
	"fmt"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	toolscache "k8s.io/client-go/tools/cache"

	"volcano.sh/volcano/cmd/scheduler/app/options"
	"volcano.sh/volcano/pkg/scheduler/cache"
	"volcano.sh/volcano/pkg/scheduler/plugins/predicates"
)

// defaultIgnoredProvisioners are those upstream's cache adds to --ignored-provisioners (cache.go).
var defaultIgnoredProvisioners = []string{"rancher.io/local-path", "hostpath.csi.k8s.io"}

// startVolumes fills the fake client before the cache's Run, and returns what follows PreBind's writes.
func (w *World) startVolumes(c *cache.SchedulerCache) *volumeWrites {
	// The predicates plugin builds VolumeBinding once per process, over the first session's informers and
	// client; every cycle has a new cache, so it is built anew, as upstream's tests reset it between cases.
	predicates.ResetVolumeBindingPluginForTest()
	vw := newVolumeWrites(w)
	client := c.Client()
	if fc, ok := client.(*fake.Clientset); ok {
		fc.PrependReactor("update", "*", preBindWrites(fc, vw))
	}
	ctx := context.Background()
	create := func(kind, name string, err error) {
		if err != nil {
			fmt.Fprintf(os.Stderr, "warning: %s %s: %v\n", kind, name, err)
		}
	}
	for _, sc := range w.StorageClasses {
		_, err := client.StorageV1().StorageClasses().Create(ctx, sc.DeepCopy(), metav1.CreateOptions{})
		create("StorageClass", sc.Name, err)
	}
	for _, pv := range w.PVs {
		_, err := client.CoreV1().PersistentVolumes().Create(ctx, pv.DeepCopy(), metav1.CreateOptions{})
		create("PersistentVolume", pv.Name, err)
	}
	for _, pvc := range w.PVCs {
		_, err := client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Create(ctx, pvc.DeepCopy(), metav1.CreateOptions{})
		create("PersistentVolumeClaim", pvc.Namespace+"/"+pvc.Name, err)
	}
	for _, va := range w.VolumeAttachments {
		_, err := client.StorageV1().VolumeAttachments().Create(ctx, va.DeepCopy(), metav1.CreateOptions{})
		create("VolumeAttachment", va.Name, err)
	}
	return vw
}

// preBindWrites plays the API server for PreBind's updates of PVs and claims: each gets a new resource
// version (the fake client keeps the one sent, and the assume caches ignore an update of the same version),
// and the claims written are recorded.
func preBindWrites(fc *fake.Clientset, vw *volumeWrites) clienttesting.ReactionFunc {
	return func(action clienttesting.Action) (bool, runtime.Object, error) {
		update, ok := action.(clienttesting.UpdateAction)
		if !ok || action.GetSubresource() != "" {
			return false, nil, nil
		}
		var claim string
		obj := update.GetObject().DeepCopyObject()
		switch o := obj.(type) {
		case *v1.PersistentVolume:
			if o.Spec.ClaimRef != nil {
				claim = o.Spec.ClaimRef.Namespace + "/" + o.Spec.ClaimRef.Name
			}
			bumpVersion(&o.ObjectMeta)
		case *v1.PersistentVolumeClaim:
			claim = o.Namespace + "/" + o.Name
			bumpVersion(&o.ObjectMeta)
		default:
			return false, nil, nil
		}
		if err := fc.Tracker().Update(action.GetResource(), obj, action.GetNamespace()); err != nil {
			return true, nil, err
		}
		if claim != "" {
			vw.record(claim)
		}
		return true, obj, nil
	}
}

// fillVolumes, after the cache's Run and before the nodes and pods: the CSINodes, and the ignored
// provisioners as the scheduler's start-up sets them (upstream's defaults and --ignored-provisioners).
func (w *World) fillVolumes(c *cache.SchedulerCache) {
	store := c.SharedInformerFactory().Storage().V1().CSINodes().Informer().GetIndexer()
	for _, csi := range w.CSINodes {
		_ = store.Add(csi.DeepCopy())
	}
	ignored := sets.New(defaultIgnoredProvisioners...)
	if options.ServerOpts != nil {
		ignored.Insert(options.ServerOpts.IgnoredCSIProvisioners...)
	}
	c.IgnoredCSIProvisioners = ignored
}

// syncVolumeCaches waits, once the session's open has built VolumeBinding, until its assume caches hold
// the PVs and claims: they register with the PV and claim informers, already started, which hand a
// handler registered late the objects they hold asynchronously (upstream's own tests race with that). A
// handler registered after theirs that has seen every object stands for theirs.
func (w *World) syncVolumeCaches(c *cache.SchedulerCache) {
	if len(w.PVs)+len(w.PVCs) == 0 {
		return
	}
	factory := c.SharedInformerFactory()
	deadline := time.Now().Add(10 * time.Second)
	for _, informer := range []toolscache.SharedIndexInformer{factory.Core().V1().PersistentVolumes().Informer(),
		factory.Core().V1().PersistentVolumeClaims().Informer()} {
		reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{})
		if err != nil {
			continue
		}
		for !reg.HasSynced() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		_ = informer.RemoveEventHandler(reg)
	}
}

// addNode adds a node as the node worker does: SyncNode reads it from the node informer's store.
func addNode(c *cache.SchedulerCache, n *v1.Node) {
	_ = c.SharedInformerFactory().Core().V1().Nodes().Informer().GetIndexer().Add(n)
	if err := c.SyncNode(n.Name); err != nil {
		fmt.Fprintf(os.Stderr, "warning: node %s: %v\n", n.Name, err)
	}
}

// storePod puts a pod with claims into the pod informer's store, where VolumeBinding's PreBind looks it up
// while it waits (a pod gone from it ends the wait in failure); the cache itself gets the pod from AddPod.
func storePod(c *cache.SchedulerCache, p *v1.Pod) {
	if len(podClaims(p)) > 0 {
		_ = c.SharedInformerFactory().Core().V1().Pods().Informer().GetIndexer().Add(p)
	}
}

// servePendingClaimPod serves a pod one of whose claims is missing (an ephemeral volume's claim not created
// yet, typically) to the cache's resync (resync.go): the cache adds it and resyncs it (pendingPVCError).
func (w *World) servePendingClaimPod(c *cache.SchedulerCache, p *v1.Pod) {
	present := map[string]bool{}
	for _, pvc := range w.PVCs {
		present[pvc.Namespace+"/"+pvc.Name] = true
	}
	for _, key := range podClaims(p) {
		if !present[key] {
			servePodToResync(c, p)
			return
		}
	}
}

// readVolumes takes back what PreBind wrote through the client (PVs' claimRefs, claims' selected nodes).
func (w *World) readVolumes(c *cache.SchedulerCache) {
	ctx := context.Background()
	for i, pv := range w.PVs {
		if got, err := c.Client().CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{}); err == nil {
			w.PVs[i] = got
		}
	}
	for i, pvc := range w.PVCs {
		got, err := c.Client().CoreV1().PersistentVolumeClaims(pvc.Namespace).Get(ctx, pvc.Name, metav1.GetOptions{})
		if err == nil {
			w.PVCs[i] = got
		}
	}
}
