//go:build volcano_dra

package main

// Dynamic resource allocation, where upstream reads resource.k8s.io/v1 (its cache builds each task's DRA
// requests and the predicates plugin runs Kubernetes' DynamicResources through the cache's shared DRA
// manager). DeviceClasses, ResourceSlices and ResourceClaims are created through the cache's fake API client
// before its informers start, as pkg/scheduler/uthelper does; PreBind writes the claims' allocation and
// reservedFor back through that client, and the claims are read back after the cycle. The resourceclaim
// controller (releasing the claims of pods that are gone) does not run between cycles. A claim's
// allocationTimestamp (binding conditions' timeout) is moved onto the cycle's clock, as pods' times are, and
// moved back when the claims are read. DeviceTaintRules
// (resource.k8s.io/v1beta2) are created too: the cache's slice tracker applies them only with the feature
// gate DRADeviceTaintRules, off by default at Kubernetes 1.36.
//
// A scheduler's cache, and with it the shared DRA manager, lives as long as the process; the adapter makes
// a fresh mock cache per cycle. So the allocations the manager still holds in flight when a cycle ends (a
// Reserve with no PreBind or Unreserve after it: a task pipelined in the session, whose pipeline simply
// vanishes at close) are carried into the next cycle's manager, each signalled again as many times as it
// had sharers, as the scheduler's own manager would still hold them.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"volcano.sh/volcano/pkg/scheduler/cache"
)

type draObjects struct {
	Classes []*resourcev1.DeviceClass
	Slices  []*resourcev1.ResourceSlice
	Claims  []*resourcev1.ResourceClaim
	Rules   []*resourcev1beta2.DeviceTaintRule
	// the allocations the cycle's DRA manager still held in flight at its end, by claim (ns/name)
	InFlight map[string]inFlightClaim
	// how far the cycle moved the claims' allocation timestamps onto its clock
	shift time.Duration
}

type inFlightClaim struct {
	allocation *resourcev1.AllocationResult
	sharers    int
}

// decodeDRA reads a DRA kind; false when kind is not one.
func (w *World) decodeDRA(kind string, decode func(any) error) (bool, error) {
	switch kind {
	case "DeviceClass":
		dc := &resourcev1.DeviceClass{}
		if err := decode(dc); err != nil {
			return true, err
		}
		w.DRA.Classes = append(w.DRA.Classes, dc)
	case "ResourceSlice":
		rs := &resourcev1.ResourceSlice{}
		if err := decode(rs); err != nil {
			return true, err
		}
		w.DRA.Slices = append(w.DRA.Slices, rs)
	case "ResourceClaim":
		rc := &resourcev1.ResourceClaim{}
		if err := decode(rc); err != nil {
			return true, err
		}
		defaultNamespaced(&rc.ObjectMeta, "resourceclaim")
		defaultVersion(&rc.ObjectMeta)
		for i := range rc.Spec.Devices.Requests { // the API server's defaults, as the reference's loader
			request := &rc.Spec.Devices.Requests[i]
			if r := request.Exactly; r != nil {
				defaultCount(&r.AllocationMode, &r.Count)
			}
			for j := range request.FirstAvailable {
				sub := &request.FirstAvailable[j]
				defaultCount(&sub.AllocationMode, &sub.Count)
			}
		}
		w.DRA.Claims = append(w.DRA.Claims, rc)
	case "DeviceTaintRule":
		rule := &resourcev1beta2.DeviceTaintRule{}
		if err := decode(rule); err != nil {
			return true, err
		}
		w.DRA.Rules = append(w.DRA.Rules, rule)
	default:
		return false, nil
	}
	return true, nil
}

// moveAllocationTime moves a claim's allocationTimestamp by shift (none: left as it is).
func moveAllocationTime(claim *resourcev1.ResourceClaim, shift time.Duration) {
	if a := claim.Status.Allocation; a != nil && a.AllocationTimestamp != nil {
		a.AllocationTimestamp = &metav1.Time{Time: a.AllocationTimestamp.Add(shift)}
	}
}

// defaultCount applies the API server's defaults to a request or subrequest: ExactCount, of one device.
func defaultCount(mode *resourcev1.DeviceAllocationMode, count *int64) {
	if *mode == "" {
		*mode = resourcev1.DeviceAllocationModeExactCount
	}
	if *mode == resourcev1.DeviceAllocationModeExactCount && *count == 0 {
		*count = 1
	}
}

// startDRA creates the DRA objects in the fake client before the cache's Run; shift moves the claims'
// allocation timestamps onto the cycle's clock.
func (w *World) startDRA(c *cache.SchedulerCache, shift time.Duration) {
	w.DRA.shift = shift
	ctx := context.Background()
	client := c.Client().ResourceV1()
	warn := func(kind, name string, err error) {
		if err != nil {
			fmt.Fprintf(os.Stderr, "warning: %s %s: %v\n", kind, name, err)
		}
	}
	for _, dc := range w.DRA.Classes {
		_, err := client.DeviceClasses().Create(ctx, dc.DeepCopy(), metav1.CreateOptions{})
		warn("DeviceClass", dc.Name, err)
	}
	for _, rs := range w.DRA.Slices {
		_, err := client.ResourceSlices().Create(ctx, rs.DeepCopy(), metav1.CreateOptions{})
		warn("ResourceSlice", rs.Name, err)
	}
	for _, rc := range w.DRA.Claims {
		claim := rc.DeepCopy()
		moveAllocationTime(claim, shift)
		_, err := client.ResourceClaims(rc.Namespace).Create(ctx, claim, metav1.CreateOptions{})
		warn("ResourceClaim", rc.Namespace+"/"+rc.Name, err)
	}
	for _, rule := range w.DRA.Rules {
		_, err := c.Client().ResourceV1beta2().DeviceTaintRules().Create(ctx, rule.DeepCopy(), metav1.CreateOptions{})
		warn("DeviceTaintRule", rule.Name, err)
	}
}

// waitDRA waits (five seconds at most) until the shared DRA manager holds every claim and slice: its claim
// assume cache and slice tracker are fed by informer handlers, which can lag behind WaitForCacheSync on a
// loaded machine, and a pod added before its claim is there is dropped by the cache ("failed to get
// ResourceClaim").
func (w *World) waitDRA(c *cache.SchedulerCache) {
	manager := c.SharedDRAManager()
	if manager == nil || len(w.DRA.Claims)+len(w.DRA.Slices) == 0 {
		return
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		claims, err := manager.ResourceClaims().List()
		if err != nil || len(claims) < len(w.DRA.Claims) {
			continue
		}
		listed, err := manager.ResourceSlices().ListWithDeviceTaintRules()
		if err == nil && len(listed) >= len(w.DRA.Slices) {
			w.restoreInFlight(c)
			return
		}
	}
	fmt.Fprintf(os.Stderr, "warning: the DRA manager did not list every claim and slice within five seconds\n")
	w.restoreInFlight(c)
}

// restoreInFlight signals the allocations the previous cycle left in flight to this cycle's DRA manager, as
// the Reserve that made them did: the claim with the allocation and the finalizer, once per sharer.
func (w *World) restoreInFlight(c *cache.SchedulerCache) {
	tracker := c.SharedDRAManager().ResourceClaims()
	for _, rc := range w.DRA.Claims {
		carried, ok := w.DRA.InFlight[rc.Namespace+"/"+rc.Name]
		if !ok {
			continue
		}
		claim := rc.DeepCopy()
		if got, err := tracker.Get(rc.Namespace, rc.Name); err == nil {
			claim = got.DeepCopy()
		}
		if !slices.Contains(claim.Finalizers, resourcev1.Finalizer) {
			claim.Finalizers = append(claim.Finalizers, resourcev1.Finalizer)
		}
		claim.Status.Allocation = carried.allocation.DeepCopy()
		for i := 0; i < carried.sharers; i++ {
			if err := tracker.SignalClaimPendingAllocation(claim.UID, claim); err != nil {
				fmt.Fprintf(os.Stderr, "warning: ResourceClaim %s/%s: in-flight allocation not carried: %v\n",
					rc.Namespace, rc.Name, err)
				break
			}
		}
	}
}

// readDRA takes the claims back as PreBind left them, and the allocations the DRA manager still holds in
// flight (its public API tells the allocation, not the number of sharers: that is counted by removing the
// shares one at a time from this cycle's manager, which is not used again).
func (w *World) readDRA(c *cache.SchedulerCache) {
	ctx := context.Background()
	for i, rc := range w.DRA.Claims {
		got, err := c.Client().ResourceV1().ResourceClaims(rc.Namespace).Get(ctx, rc.Name, metav1.GetOptions{})
		if err == nil {
			moveAllocationTime(got, -w.DRA.shift)
			w.DRA.Claims[i] = got
		}
	}
	w.DRA.InFlight = map[string]inFlightClaim{}
	manager := c.SharedDRAManager()
	if manager == nil {
		return
	}
	tracker := manager.ResourceClaims()
	for _, rc := range w.DRA.Claims {
		allocation := tracker.GetPendingAllocation(rc.UID)
		if allocation == nil {
			continue
		}
		carried := inFlightClaim{allocation: allocation.DeepCopy()}
		for carried.sharers < 1<<16 {
			carried.sharers++
			if tracker.MaybeRemoveClaimPendingAllocation(rc.UID, false) {
				break
			}
		}
		w.DRA.InFlight[rc.Namespace+"/"+rc.Name] = carried
	}
	if os.Getenv("SCHEDCHECK_VOLCANO_DRA_DEBUG") != "" { // one JSON line: ns/name -> sharers
		out := map[string]int{}
		for key, carried := range w.DRA.InFlight {
			out[key] = carried.sharers
		}
		line, _ := json.Marshal(out)
		fmt.Fprintf(os.Stderr, "schedcheck-dra-in-flight %s\n", line)
	}
}

// serveTemplateClaimPod serves a pod with a claim from a template to the cache's resync (resync.go).
func serveTemplateClaimPod(c *cache.SchedulerCache, p *v1.Pod) {
	for _, claim := range p.Spec.ResourceClaims {
		if claim.ResourceClaimTemplateName != nil {
			servePodToResync(c, p)
			return
		}
	}
}
