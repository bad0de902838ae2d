package main

// Reading a scenario-format v1 document into real Kubernetes and Volcano API objects.
// The accepted shapes follow schedcheck/scenario/loader.py: a `kind: Scenario` wrapper,
// a `kind: List`, a multi-document YAML stream of objects, or one object; JSON as well.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/yaml"

	vcbeta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"volcano.sh/volcano/pkg/scheduler"
)

// defaultSchedulerName is the name this adapter schedules for; a pod with no
// spec.schedulerName gets it, as the reference's loader does.
const defaultSchedulerName = "volcano"

// Scenario is one decoded scenario.
type Scenario struct {
	Name     string
	ConfText string // volcano-scheduler.conf YAML (upstream's default when the scenario has none)
	Cycles   int
	Now      time.Time      // zero: take the latest creationTimestamp, as the reference does
	Options  map[string]any // the scenario's schedulerOptions (the scheduler's command-line options)
	World    World
}

// World is the cluster state that sessions read and that advances between them.
type World struct {
	Nodes           []*v1.Node
	Pods            []*v1.Pod
	PodGroups       []*vcbeta1.PodGroup
	Queues          []*vcbeta1.Queue
	PriorityClasses []*schedulingv1.PriorityClass
	ResourceQuotas  []*v1.ResourceQuota
	HyperNodes      []json.RawMessage // decoded only by builds whose upstream has HyperNodes (hypernodes_*.go)
	PDBs            []*policyv1.PodDisruptionBudget
	NodeShards      []json.RawMessage // decoded only by builds whose upstream has NodeShards (shard_*.go)
	// Storage (volumes*.go): fed to upstream's fake API client and informers where upstream reads volumes.
	PVs               []*v1.PersistentVolume
	PVCs              []*v1.PersistentVolumeClaim
	StorageClasses    []*storagev1.StorageClass
	CSINodes          []*storagev1.CSINode
	VolumeAttachments []*storagev1.VolumeAttachment
	DRA               draObjects // dra*.go: DeviceClasses, ResourceSlices, ResourceClaims
	// numa*.go: Numatopologies, and the numa-aware plugin's records carried across sessions
	Numa numaObjects
	// deviceshare.go: the device ConfigMap (deviceshare.KnownGeometriesCMName)
	ConfigMaps []*v1.ConfigMap
	// workloads.go: Services and controllers, PodTopologySpread's system default selectors
	Workloads workloadObjects
}

type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

func failf(format string, args ...any) error { return &inputError{fmt.Sprintf(format, args...)} }

// ReadScenario reads the scenario at path ("-" for standard input).
func ReadScenario(path string) (*Scenario, error) {
	var data []byte
	var err error
	source := path
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
		source = "<stdin>"
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, failf("%s: cannot read: %v", source, err)
	}
	docs, err := splitDocuments(data)
	if err != nil {
		return nil, failf("%s: %v", source, err)
	}
	if len(docs) == 0 {
		return nil, failf("%s: holds no document", source)
	}
	sc := &Scenario{Cycles: 1}
	var objects []map[string]any
	if len(docs) == 1 && isWrapper(docs[0]) {
		if err := sc.readWrapper(docs[0], &objects); err != nil {
			return nil, failf("%s: %v", source, err)
		}
	} else {
		sc.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		for _, d := range docs {
			objects = append(objects, flattenList(d)...)
		}
	}
	if sc.ConfText == "" {
		sc.ConfText = scheduler.DefaultSchedulerConf
	}
	for i, obj := range objects {
		if err := sc.World.add(obj); err != nil {
			return nil, failf("%s: objects[%d]: %v", source, i, err)
		}
	}
	sc.World.ensureDefaultQueues()
	return sc, nil
}

// ensureDefaultQueues creates the `root` (not reclaimable) and `default` queues
// when absent, as upstream's scheduler does at start-up (cache.newDefaultAndRootQueue);
// the queue controller then opens them.
func (w *World) ensureDefaultQueues() {
	have := map[string]bool{}
	for _, q := range w.Queues {
		have[q.Name] = true
	}
	for _, name := range []string{"root", "default"} {
		if have[name] {
			continue
		}
		reclaimable := name != "root"
		w.Queues = append(w.Queues, &vcbeta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("queue-" + name)},
			Spec:       vcbeta1.QueueSpec{Weight: 1, Reclaimable: &reclaimable},
			Status:     vcbeta1.QueueStatus{State: vcbeta1.QueueStateOpen},
		})
	}
}

func splitDocuments(data []byte) ([]map[string]any, error) {
	reader := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var docs []map[string]any
	for {
		var raw json.RawMessage
		if err := reader.Decode(&raw); err != nil {
			if err == io.EOF {
				return docs, nil
			}
			return nil, err
		}
		if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
			continue
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("expected a mapping: %v", err)
		}
		docs = append(docs, doc)
	}
}

func isWrapper(doc map[string]any) bool {
	if doc["kind"] == "Scenario" {
		return true
	}
	if api, ok := doc["apiVersion"].(string); ok && strings.HasPrefix(api, "schedcheck/") {
		return true
	}
	_, hasKind := doc["kind"]
	_, hasObjects := doc["objects"]
	_, hasConf := doc["schedulerConf"]
	return !hasKind && (hasObjects || hasConf)
}

func flattenList(doc map[string]any) []map[string]any {
	if doc["kind"] != "List" {
		return []map[string]any{doc}
	}
	items, _ := doc["items"].([]any)
	var out []map[string]any
	for _, item := range items {
		if m, ok := item.(map[string]any); ok {
			out = append(out, flattenList(m)...)
		}
	}
	return out
}

func (sc *Scenario) readWrapper(doc map[string]any, objects *[]map[string]any) error {
	if md, ok := doc["metadata"].(map[string]any); ok {
		sc.Name, _ = md["name"].(string)
	}
	switch c := doc["cycles"].(type) {
	case nil:
	case float64:
		if c < 1 || c != float64(int(c)) {
			return fmt.Errorf("cycles: expected an integer >= 1, got %v", c)
		}
		sc.Cycles = int(c)
	default:
		return fmt.Errorf("cycles: expected an integer, got %v", c)
	}
	if now, ok := doc["now"].(string); ok && now != "" {
		t, err := time.Parse(time.RFC3339, now)
		if err != nil {
			return fmt.Errorf("now: %v", err)
		}
		sc.Now = t
	}
	switch o := doc["schedulerOptions"].(type) {
	case nil:
	case map[string]any:
		sc.Options = o
	default:
		return fmt.Errorf("schedulerOptions: expected a mapping")
	}
	switch conf := doc["schedulerConf"].(type) {
	case nil:
	case string:
		sc.ConfText = conf
	case map[string]any:
		text, err := yaml.Marshal(conf)
		if err != nil {
			return fmt.Errorf("schedulerConf: %v", err)
		}
		sc.ConfText = string(text)
	default:
		return fmt.Errorf("schedulerConf: expected a mapping or a YAML string")
	}
	switch objs := doc["objects"].(type) {
	case nil:
	case map[string]any:
		*objects = flattenList(objs)
	case []any:
		for i, o := range objs {
			m, ok := o.(map[string]any)
			if !ok {
				return fmt.Errorf("objects[%d]: expected a mapping", i)
			}
			*objects = append(*objects, flattenList(m)...)
		}
	default:
		return fmt.Errorf("objects: expected a list")
	}
	return nil
}

// add decodes one object into its typed form with the defaults the API server
// (and the reference's loader) would give it; unknown kinds are ignored.
func (w *World) add(obj map[string]any) error {
	raw, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	kind, _ := obj["kind"].(string)
	decode := func(into any) error {
		if err := json.Unmarshal(raw, into); err != nil {
			return fmt.Errorf("%s: %v", kind, err)
		}
		return nil
	}
	switch kind {
	case "Node":
		n := &v1.Node{}
		if err := decode(n); err != nil {
			return err
		}
		// A kubelet reports both; the reference's loader lets each stand in for the other when one is absent
		// (NodeInfo.Capacity is what mindcluster's vNPU and GPU sharing read).
		if n.Status.Capacity == nil && n.Status.Allocatable != nil {
			n.Status.Capacity = n.Status.Allocatable.DeepCopy()
		}
		if n.Status.Allocatable == nil && n.Status.Capacity != nil {
			n.Status.Allocatable = n.Status.Capacity.DeepCopy()
		}
		w.Nodes = append(w.Nodes, n)
	case "Pod":
		p := &v1.Pod{}
		if err := decode(p); err != nil {
			return err
		}
		defaultNamespaced(&p.ObjectMeta, "")
		defaultPod(p)
		w.Pods = append(w.Pods, p)
	case "PodGroup":
		pg := &vcbeta1.PodGroup{}
		if err := decode(pg); err != nil {
			return err
		}
		defaultNamespaced(&pg.ObjectMeta, "podgroup")
		if pg.Spec.Queue == "" {
			pg.Spec.Queue = "default"
		}
		w.PodGroups = append(w.PodGroups, pg)
	case "Queue":
		q := &vcbeta1.Queue{}
		if err := decode(q); err != nil {
			return err
		}
		if q.UID == "" {
			q.UID = types.UID("queue-" + q.Name)
		}
		// CRD defaults: weight 1, reclaimable true; the queue controller opens a new queue.
		if _, set := nested(obj, "spec", "weight"); !set {
			q.Spec.Weight = 1
		}
		if q.Spec.Reclaimable == nil {
			t := true
			q.Spec.Reclaimable = &t
		}
		if q.Status.State == "" {
			q.Status.State = vcbeta1.QueueStateOpen
		}
		w.Queues = append(w.Queues, q)
	case "PriorityClass":
		pc := &schedulingv1.PriorityClass{}
		if err := decode(pc); err != nil {
			return err
		}
		if pc.PreemptionPolicy == nil {
			policy := v1.PreemptLowerPriority
			pc.PreemptionPolicy = &policy
		}
		w.PriorityClasses = append(w.PriorityClasses, pc)
	case "HyperNode":
		w.HyperNodes = append(w.HyperNodes, append(json.RawMessage(nil), raw...))
	case "NodeShard":
		w.NodeShards = append(w.NodeShards, append(json.RawMessage(nil), raw...))
	case "PodDisruptionBudget":
		pdb := &policyv1.PodDisruptionBudget{}
		if err := decode(pdb); err != nil {
			return err
		}
		if pdb.Namespace == "" {
			pdb.Namespace = "default"
		}
		w.PDBs = append(w.PDBs, pdb)
	case "PersistentVolume":
		pv := &v1.PersistentVolume{}
		if err := decode(pv); err != nil {
			return err
		}
		if pv.UID == "" {
			pv.UID = types.UID("persistentvolume-" + pv.Name)
		}
		if pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.Namespace == "" {
			pv.Spec.ClaimRef.Namespace = "default"
		}
		if pv.Status.Phase == "" { // as the reference's loader: a PV given without a status is Available
			pv.Status.Phase = v1.VolumeAvailable
		}
		defaultAzureDisk(pv.Spec.AzureDisk)
		defaultVersion(&pv.ObjectMeta)
		w.PVs = append(w.PVs, pv)
	case "PersistentVolumeClaim":
		pvc := &v1.PersistentVolumeClaim{}
		if err := decode(pvc); err != nil {
			return err
		}
		defaultNamespaced(&pvc.ObjectMeta, "persistentvolumeclaim")
		if pvc.Status.Phase == "" {
			pvc.Status.Phase = v1.ClaimPending
		}
		defaultVersion(&pvc.ObjectMeta)
		w.PVCs = append(w.PVCs, pvc)
	case "StorageClass":
		sc := &storagev1.StorageClass{}
		if err := decode(sc); err != nil {
			return err
		}
		if sc.VolumeBindingMode == nil { // the API server's default
			mode := storagev1.VolumeBindingImmediate
			sc.VolumeBindingMode = &mode
		}
		defaultVersion(&sc.ObjectMeta)
		w.StorageClasses = append(w.StorageClasses, sc)
	case "CSINode":
		csi := &storagev1.CSINode{}
		if err := decode(csi); err != nil {
			return err
		}
		w.CSINodes = append(w.CSINodes, csi)
	case "VolumeAttachment":
		va := &storagev1.VolumeAttachment{}
		if err := decode(va); err != nil {
			return err
		}
		w.VolumeAttachments = append(w.VolumeAttachments, va)
	case "ResourceQuota":
		rq := &v1.ResourceQuota{}
		if err := decode(rq); err != nil {
			return err
		}
		defaultNamespaced(&rq.ObjectMeta, "resourcequota")
		w.ResourceQuotas = append(w.ResourceQuotas, rq)
	default:
		if handled, err := w.decodeDRA(kind, decode); handled || err != nil {
			return err
		}
		if handled, err := w.decodeNuma(kind, decode); handled || err != nil {
			return err
		}
		if handled, err := w.decodeConfigMap(kind, decode); handled || err != nil {
			return err
		}
		if handled, err := w.decodeWorkload(kind, decode); handled || err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "warning: ignored object of kind %q\n", kind)
	}
	return nil
}

// defaultNamespaced gives a namespace and a UID as the reference's loader does
// (a pod's UID is "namespace-name", as upstream's unit tests build them).
func defaultNamespaced(md *metav1.ObjectMeta, prefix string) {
	if md.Namespace == "" {
		md.Namespace = "default"
	}
	if md.UID == "" {
		if prefix == "" {
			md.UID = types.UID(md.Namespace + "-" + md.Name)
		} else {
			md.UID = types.UID(prefix + "-" + md.Namespace + "-" + md.Name)
		}
	}
}

// defaultVersion gives an object the resource version an API server would: volume binding's assume
// caches compare versions as integers and refuse an object without one.
func defaultVersion(md *metav1.ObjectMeta) {
	if md.ResourceVersion == "" {
		md.ResourceVersion = "1"
	}
}

func nested(obj map[string]any, keys ...string) (any, bool) {
	var cur any = obj
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[k]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

// defaultPod applies the API defaults the scheduler reads: a container's
// request defaults to its limit; the pod-level defaults; phase Pending; the scheduler name.
func defaultPod(p *v1.Pod) {
	if p.Spec.SchedulerName == "" {
		p.Spec.SchedulerName = defaultSchedulerName
	}
	if p.Status.Phase == "" {
		p.Status.Phase = v1.PodPending
	}
	fill := func(cs []v1.Container) {
		for i := range cs {
			r := &cs[i].Resources
			for name, q := range r.Limits {
				if r.Requests == nil {
					r.Requests = v1.ResourceList{}
				}
				if _, ok := r.Requests[name]; !ok {
					r.Requests[name] = q.DeepCopy()
				}
			}
		}
	}
	fill(p.Spec.Containers)
	fill(p.Spec.InitContainers)
	defaultPodLevelResources(p)
	for i := range p.Spec.Volumes {
		defaultAzureDisk(p.Spec.Volumes[i].AzureDisk)
	}
}

// defaultPodLevelResources applies the API server's pod-level defaults (PodLevelResources on, as in
// k8s v1.36.1), after the containers' requests are defaulted from their limits, as the reference's reader
// does: with any pod-level request or limit, a hugepages size the containers limit and the pod level neither
// requests nor limits is limited at the containers' aggregate; then, with pod-level limits, cpu and memory
// not requested at the pod level are requested at the containers' aggregate request (when they have one),
// and every supported resource still not requested is requested at its limit.
func defaultPodLevelResources(p *v1.Pod) {
	r := p.Spec.Resources
	if r == nil {
		return
	}
	if len(r.Requests)+len(r.Limits) > 0 {
		for name, q := range resourcehelper.AggregateContainerLimits(p, resourcehelper.PodResourcesOptions{}) {
			if !strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix) {
				continue
			}
			if _, ok := r.Requests[name]; ok {
				continue
			}
			if _, ok := r.Limits[name]; !ok {
				if r.Limits == nil {
					r.Limits = v1.ResourceList{}
				}
				r.Limits[name] = q.DeepCopy()
			}
		}
	}
	if len(r.Limits) == 0 {
		return
	}
	if r.Requests == nil {
		r.Requests = v1.ResourceList{}
	}
	for name, q := range resourcehelper.AggregateContainerRequests(p, resourcehelper.PodResourcesOptions{}) {
		if _, ok := r.Requests[name]; !ok && (name == v1.ResourceCPU || name == v1.ResourceMemory) {
			r.Requests[name] = q.DeepCopy()
		}
	}
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) {
			r.Requests[name] = q.DeepCopy()
		}
	}
}

// defaultAzureDisk gives an azureDisk source the kind the API server defaults (Shared), which CSI migration
// reads: a disk of another kind than Managed cannot be translated.
func defaultAzureDisk(disk *v1.AzureDiskVolumeSource) {
	if disk != nil && disk.Kind == nil {
		kind := v1.AzureSharedBlobDisk
		disk.Kind = &kind
	}
}
