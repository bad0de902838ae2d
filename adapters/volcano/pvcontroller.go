package main

// Volumes between sessions, as reference_impl/cache/pv_controller.py and world.py run them: the PV
// controller and the provisioners finish what upstream's VolumeBinding PreBind started, and a bind that
// waited in PreBind for them goes to the binder once its claims are bound.

import (
	"strconv"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const (
	annSelectedNode       = "volume.kubernetes.io/selected-node"
	annBindCompleted      = "pv.kubernetes.io/bind-completed"
	annBoundByController  = "pv.kubernetes.io/bound-by-controller"
	annProvisionedBy      = "pv.kubernetes.io/provisioned-by"
	annBetaStorageClass   = "volume.beta.kubernetes.io/storage-class"
	noProvisioner         = "kubernetes.io/no-provisioner"
	inTreeProvisionerRoot = "kubernetes.io/"
)

// volumeWrites follows one cycle's PreBind writes: the claims that were not fully bound when the
// session opened, and those PreBind has written (the claim itself, or a PV naming it) since.
type volumeWrites struct {
	mu      sync.Mutex
	unbound map[string]bool // ns/name
	written map[string]bool // ns/name
}

func newVolumeWrites(w *World) *volumeWrites {
	vw := &volumeWrites{unbound: map[string]bool{}, written: map[string]bool{}}
	for _, pvc := range w.PVCs {
		if !fullyBound(pvc) {
			vw.unbound[pvc.Namespace+"/"+pvc.Name] = true
		}
	}
	return vw
}

func (vw *volumeWrites) record(claim string) {
	vw.mu.Lock()
	defer vw.mu.Unlock()
	vw.written[claim] = true
}

// waiting says whether a bind of a pod with these claims is waiting in PreBind: some claim was unbound,
// and PreBind has written every unbound one (it then polls until the PV controller has bound them, which
// no one does within the session).
func (vw *volumeWrites) waiting(claims []string) bool {
	vw.mu.Lock()
	defer vw.mu.Unlock()
	some := false
	for _, claim := range claims {
		if vw.unbound[claim] {
			if !vw.written[claim] {
				return false
			}
			some = true
		}
	}
	return some
}

// podClaims names the claims a pod's volumes use (ns/name).
func podClaims(p *v1.Pod) []string {
	var out []string
	if p == nil {
		return nil
	}
	for _, vol := range p.Spec.Volumes {
		switch {
		case vol.PersistentVolumeClaim != nil:
			out = append(out, p.Namespace+"/"+vol.PersistentVolumeClaim.ClaimName)
		case vol.Ephemeral != nil: // the claim the ephemeral volume controller makes: "<pod>-<volume>"
			out = append(out, p.Namespace+"/"+p.Name+"-"+vol.Name)
		}
	}
	return out
}

// fullyBound is volume binding's isPVCFullyBound: a volume name and the PV controller's annotation.
func fullyBound(pvc *v1.PersistentVolumeClaim) bool {
	_, done := pvc.Annotations[annBindCompleted]
	return pvc.Spec.VolumeName != "" && done
}

// releaseVolumeWaits: a bind waiting in PreBind goes to the binder once every claim of its pod is bound;
// it returns those binds (task -> node).
func (w *World) releaseVolumeWaits(waiting map[string]string) map[string]string {
	claims := map[string]*v1.PersistentVolumeClaim{}
	for _, pvc := range w.PVCs {
		claims[pvc.Namespace+"/"+pvc.Name] = pvc
	}
	released := map[string]string{}
	for _, p := range w.Pods {
		task := p.Namespace + "/" + p.Name
		node, ok := waiting[task]
		for _, name := range podClaims(p) {
			if pvc := claims[name]; pvc == nil || !fullyBound(pvc) {
				ok = false
			}
		}
		if ok {
			released[task] = node
		}
	}
	return released
}

// syncClaims is the PV controller and the provisioners: a claim named by a PV's claimRef is bound to that
// PV, and a claim annotated with a selected node whose class has a provisioner gets a new PV, bound to it.
func (w *World) syncClaims() {
	claims := map[string]*v1.PersistentVolumeClaim{}
	for _, pvc := range w.PVCs {
		claims[pvc.Namespace+"/"+pvc.Name] = pvc
	}
	for _, pv := range w.PVs {
		if pvc := claimOf(pv, claims); pvc != nil {
			bindClaim(pv, pvc)
		}
	}
	classes := map[string]*storagev1.StorageClass{}
	for _, sc := range w.StorageClasses {
		classes[sc.Name] = sc
	}
	for _, pvc := range w.PVCs {
		if _, selected := pvc.Annotations[annSelectedNode]; pvc.Spec.VolumeName != "" || !selected {
			continue
		}
		sc := classes[claimClass(pvc)]
		if sc == nil || sc.Provisioner == "" || sc.Provisioner == noProvisioner {
			continue
		}
		pv := provisioned(pvc, sc)
		w.PVs = append(w.PVs, pv)
		bindClaim(pv, pvc)
	}
}

// claimOf is the unbound claim a PV is pre-bound to, if it exists and may take this PV.
func claimOf(pv *v1.PersistentVolume, claims map[string]*v1.PersistentVolumeClaim) *v1.PersistentVolumeClaim {
	ref := pv.Spec.ClaimRef
	if ref == nil {
		return nil
	}
	pvc := claims[ref.Namespace+"/"+ref.Name]
	if pvc == nil || fullyBound(pvc) || (pvc.Spec.VolumeName != "" && pvc.Spec.VolumeName != pv.Name) {
		return nil
	}
	if ref.UID != "" && ref.UID != pvc.UID {
		return nil
	}
	return pvc
}

func bindClaim(pv *v1.PersistentVolume, pvc *v1.PersistentVolumeClaim) {
	pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID}
	pv.Status.Phase = v1.VolumeBound
	bumpVersion(&pv.ObjectMeta)
	pvc.Spec.VolumeName = pv.Name
	if pvc.Annotations == nil {
		pvc.Annotations = map[string]string{}
	}
	pvc.Annotations[annBindCompleted] = "yes"
	if _, ok := pv.Annotations[annBoundByController]; ok {
		pvc.Annotations[annBoundByController] = "yes"
	}
	pvc.Status.Phase = v1.ClaimBound
	bumpVersion(&pvc.ObjectMeta)
}

// provisioned is the PV a provisioner creates for a claim (named pvc-<claim uid>, as the external
// provisioner names it; a CSI source unless the provisioner is in-tree; no node affinity).
func provisioned(pvc *v1.PersistentVolumeClaim, sc *storagev1.StorageClass) *v1.PersistentVolume {
	name := "pvc-" + string(pvc.UID)
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), ResourceVersion: "1",
			Annotations: map[string]string{annProvisionedBy: sc.Provisioner}},
		Spec: v1.PersistentVolumeSpec{
			AccessModes:               append([]v1.PersistentVolumeAccessMode(nil), pvc.Spec.AccessModes...),
			VolumeMode:                pvc.Spec.VolumeMode,
			StorageClassName:          sc.Name,
			VolumeAttributesClassName: pvc.Spec.VolumeAttributesClassName,
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	if q, ok := pvc.Spec.Resources.Requests[v1.ResourceStorage]; ok {
		pv.Spec.Capacity = v1.ResourceList{v1.ResourceStorage: q.DeepCopy()}
	}
	if !strings.HasPrefix(sc.Provisioner, inTreeProvisionerRoot) {
		pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: sc.Provisioner, VolumeHandle: name}
	}
	return pv
}

// claimClass is GetPersistentVolumeClaimClass: the beta annotation wins over spec.storageClassName.
func claimClass(pvc *v1.PersistentVolumeClaim) string {
	if class, ok := pvc.Annotations[annBetaStorageClass]; ok {
		return class
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}

// bumpVersion moves an object's resource version on, as an API write does.
func bumpVersion(md *metav1.ObjectMeta) {
	n, _ := strconv.ParseInt(md.ResourceVersion, 10, 64)
	md.ResourceVersion = strconv.FormatInt(n+1, 10)
}
