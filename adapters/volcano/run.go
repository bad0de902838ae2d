package main

// Running the scenario's cycles through upstream's own scheduler: a fresh mock
// cache filled from the world (as pkg/scheduler/uthelper does), one session with
// the conf's actions in order (as Scheduler.runOnce does), then the world moves
// on (as the reference's cache advance() does).

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	schedulingscheme "volcano.sh/apis/pkg/apis/scheduling/scheme"
	vcbeta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"volcano.sh/volcano/cmd/scheduler/app/options"
	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/cache"
	"volcano.sh/volcano/pkg/scheduler/conf"
	"volcano.sh/volcano/pkg/scheduler/framework"
	"volcano.sh/volcano/pkg/scheduler/metrics/source"
)

// schedulePeriod is how far the scenario clock moves between sessions (the reference's --schedule-period).
const schedulePeriod = time.Second

// Result is the protocol's result object.
type Result struct {
	Protocol         int                       `json:"protocol"`
	Implementation   string                    `json:"implementation"`
	Scenario         string                    `json:"scenario"`
	Cycles           int                       `json:"cycles"`
	Binds            map[string]string         `json:"binds"`
	Evicted          []string                  `json:"evicted"`
	Pipelined        map[string]string         `json:"pipelined"`
	PodGroupPhases   map[string]string         `json:"podGroupPhases"`
	TaskStatusCounts map[string]map[string]int `json:"taskStatusCounts"`
	// after the last close: the scheduler-written annotations, and the conditions the run's sessions wrote
	PodGroupAnnotations map[string]map[string]string         `json:"podGroupAnnotations"`
	PodGroupConditions  map[string]map[string]conditionEntry `json:"podGroupConditions"`
	Trace               []TraceEntry                         `json:"trace"`
	Ledgers             []Ledger                             `json:"ledgers"`
	Timings             Timings                              `json:"timings"`

	sessions map[string]bool // the UIDs of the sessions run
}

type TraceEntry struct {
	Cycle  int    `json:"cycle"`
	Action string `json:"action"`
	Op     string `json:"op"`
	Task   string `json:"task"`
	Node   string `json:"node"`
}

type Ledger struct {
	Cycle int                                  `json:"cycle"`
	Nodes map[string]map[string]map[string]any `json:"nodes"`
}

// Timings: wall-clock seconds. SessionSeconds and TotalSeconds count upstream's session code only:
// OpenSession, every action's Execute and CloseSession. The rest of the run is itemised per session
// (Sessions) and for the process (ReadSeconds, RunSeconds, set by main; MaxRSSKB).
type Timings struct {
	SessionSeconds []float64       `json:"sessionSeconds"`
	TotalSeconds   float64         `json:"totalSeconds"`
	Sessions       []SessionTiming `json:"sessions"`
	ReadSeconds    float64         `json:"readSeconds"` // reading and decoding the scenario file
	RunSeconds     float64         `json:"runSeconds"`  // every cycle, from the conf's parsing to the last cycle's end
	MaxRSSKB       int64           `json:"maxRSSKB"`    // the process's peak resident set (getrusage), KiB
}

// SessionTiming itemises one cycle.
type SessionTiming struct {
	CacheSeconds   float64        `json:"cacheSeconds"`   // mock cache made, informers started and synced, world added
	OpenSeconds    float64        `json:"openSeconds"`    // framework.OpenSession: snapshot, plugins' OnSessionOpen
	Actions        []ActionTiming `json:"actions"`        // each action's Execute
	CloseSeconds   float64        `json:"closeSeconds"`   // framework.CloseSession
	AdapterSeconds float64        `json:"adapterSeconds"` // the adapter's own reading of the session (bind trace, ledgers, task counts)
	WaitSeconds    float64        `json:"waitSeconds"`    // after close: waiting for the asynchronous binds and evictions
}

// ActionTiming is one action's Execute.
type ActionTiming struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Run executes every cycle of sc and returns the result.
func Run(sc *Scenario) (*Result, error) {
	actions, tiers, configurations, err := loadSchedulerConf(sc.ConfText)
	if err != nil {
		return nil, failf("schedulerConf: %v", err)
	}
	if err := checkTestPlugins(tiers); err != nil {
		return nil, err
	}
	res := &Result{
		Protocol: 1, Scenario: sc.Name, Cycles: sc.Cycles,
		Binds: map[string]string{}, Evicted: []string{}, Pipelined: map[string]string{},
		PodGroupPhases: map[string]string{}, TaskStatusCounts: map[string]map[string]int{},
		Trace: []TraceEntry{}, Ledgers: []Ledger{}, sessions: map[string]bool{},
		Timings: Timings{SessionSeconds: []float64{}, Sessions: []SessionTiming{}},
	}
	clock := sc.Now
	if clock.IsZero() {
		clock = sc.World.latestCreation()
	}
	resolvePriorities(&sc.World)
	applyFeatureGates(sc.Options["featureGates"])
	for cycle := 0; cycle < sc.Cycles; cycle++ {
		out, err := runCycle(sc, cycle, clock, actions, tiers, configurations, res)
		if err != nil {
			return nil, err
		}
		released := sc.World.advance(out, clock)
		if cycle < sc.Cycles-1 { // a bind released between sessions reaches the binder before the next one
			for task, node := range released {
				res.Binds[task] = node
			}
		}
		clock = clock.Add(schedulePeriod)
	}
	for _, pg := range sc.World.PodGroups {
		res.PodGroupPhases[pg.Namespace+"/"+pg.Name] = string(pg.Status.Phase)
	}
	res.PodGroupAnnotations = podGroupAnnotations(sc.World.PodGroups)
	res.PodGroupConditions = podGroupConditions(sc.World.PodGroups, res.sessions)
	return res, nil
}

type cycleOutcome struct {
	binds     []bindRecord
	evicted   []string
	groups    map[string]*api.JobInfo // ns/name -> the job as the session's close left it
	nominated map[string]string       // ns/name -> the nominated node the session's close wrote
	waiting   map[string]string       // ns/name -> node: binds waiting in PreBind for the PV controller
	ungated   []string                // ns/name: pods whose queue-allocation gate the gate manager patched away
}

func runCycle(sc *Scenario, cycle int, clock time.Time, actions []framework.Action, tiers []conf.Tier,
	configurations []conf.Configuration, res *Result) (*cycleOutcome, error) {
	timing := SessionTiming{Actions: []ActionTiming{}}
	cacheStart := time.Now()
	binder := &recordingBinder{}
	evictor := &recordingEvictor{}
	// A FakeRecorder without a channel drops events, so large scenarios never block on it.
	status := &statusSink{}
	if options.ServerOpts == nil {
		// Upstream's mock cache sets the default options once itself since v1.14; earlier releases leave
		// them nil, and the predicates plugin's volume binding reads them.
		options.Default()
	}
	c := newMockCache(binder, evictor, statusUpdater(status), &record.FakeRecorder{})
	volumes := sc.World.startVolumes(c) // before Run, so that the informers list them
	sc.World.startDRA(c, clockShift(clock))
	stop := make(chan struct{})
	defer close(stop)
	c.Run(stop)
	c.WaitForCacheSync(stop)
	sc.World.waitDRA(c)
	shift := clockShift(clock)
	applyOptions(sc.Options)
	sc.World.startDevices(c, shift)
	primeDeviceShare(tiers)
	sc.World.fill(c, shift)
	applyNodeShards(c, sc.World.NodeShards)

	conf.EnabledActionMap = make(map[string]bool, len(actions))
	for _, a := range actions {
		conf.EnabledActionMap[a.Name()] = true
	}
	timing.CacheSeconds = time.Since(cacheStart).Seconds()
	start := time.Now()
	ssn := framework.OpenSession(c, tiers, configurations)
	timing.OpenSeconds = time.Since(start).Seconds()
	adapterStart := time.Now()
	res.sessions[string(ssn.UID)] = true
	schGates := startSchGate(ssn)
	sc.World.syncVolumeCaches(c)
	tracer := &tracer{cycle: cycle, last: map[string]TraceEntry{}}
	ssn.AddEventHandler(tracer.handler())
	timing.AdapterSeconds += time.Since(adapterStart).Seconds()
	for _, a := range actions {
		adapterStart = time.Now()
		tracer.action = a.Name()
		before := bindingTasks(ssn)
		actionStart := time.Now()
		timing.AdapterSeconds += actionStart.Sub(adapterStart).Seconds()
		a.Execute(ssn)
		actionEnd := time.Now()
		timing.Actions = append(timing.Actions, ActionTiming{Name: a.Name(), Seconds: actionEnd.Sub(actionStart).Seconds()})
		tracer.binds(ssn, before)
		timing.AdapterSeconds += time.Since(actionEnd).Seconds()
	}
	adapterStart = time.Now()
	jobs := ssn.Jobs
	res.Ledgers = append(res.Ledgers, ledger(cycle, ssn))
	if cycle == sc.Cycles-1 {
		res.Pipelined = map[string]string{}
		res.TaskStatusCounts = map[string]map[string]int{}
		for _, job := range jobs {
			key := job.Namespace + "/" + job.Name
			counts := map[string]int{}
			for status, tasks := range job.TaskStatusIndex {
				if len(tasks) > 0 {
					counts[status.String()] = len(tasks)
				}
				if status == api.Pipelined {
					for _, t := range tasks {
						res.Pipelined[t.Namespace+"/"+t.Name] = t.NodeName
					}
				}
			}
			res.TaskStatusCounts[key] = counts
		}
	}
	closeStart := time.Now()
	timing.AdapterSeconds += closeStart.Sub(adapterStart).Seconds()
	framework.CloseSession(ssn)
	closeEnd := time.Now()
	timing.CloseSeconds = closeEnd.Sub(closeStart).Seconds()
	elapsed := timing.OpenSeconds + timing.CloseSeconds
	for _, a := range timing.Actions {
		elapsed += a.Seconds
	}
	res.Timings.SessionSeconds = append(res.Timings.SessionSeconds, elapsed)
	res.Timings.TotalSeconds += elapsed
	res.Trace = append(res.Trace, tracer.entries...)

	// Wait for the binds and evictions the session dispatched, except binds waiting in PreBind for claims
	// that only the PV controller binds (between sessions, in advance).
	// A bind waiting in PreBind polls checkBindings once a second; its first poll checks every PV it
	// pre-bound against the node again (translated to CSI for a migrated in-tree PV) and can fail the bind,
	// which the cache writes on the pod. Waiting binds are therefore watched past that first poll.
	binding, wantEvicts := pendingOutcalls(c)
	waiting := map[string]string{}
	var waitingSince time.Time
	deadline := time.Now().Add(60 * time.Second)
	for {
		bound := map[string]bool{}
		for _, b := range binder.snapshot() {
			bound[b.Task] = true
		}
		left := 0
		for task, p := range binding {
			if bound[task] {
				delete(waiting, task)
			} else if volumes.waiting(p.claims) {
				waiting[task] = p.node
			} else {
				left++
			}
		}
		for task := range waiting {
			if status.preBindFailed(task) {
				delete(waiting, task)
				delete(binding, task)
			}
		}
		if left == 0 && len(evictor.snapshot()) >= wantEvicts {
			if len(waiting) == 0 {
				break
			}
			if waitingSince.IsZero() {
				waitingSince = time.Now()
			} else if time.Since(waitingSince) > 1500*time.Millisecond {
				break
			}
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "warning: cycle %d: waited 60s for %d binds and %d evictions, got %d and %d\n",
				cycle, len(binding)-len(waiting), wantEvicts, len(bound), len(evictor.snapshot()))
			break
		}
		time.Sleep(time.Millisecond)
	}
	ungated := schGates.wait()
	timing.WaitSeconds = time.Since(closeEnd).Seconds()
	res.Timings.Sessions = append(res.Timings.Sessions, timing)
	sc.World.readVolumes(c)
	sc.World.readDRA(c)
	sc.World.readNuma(c)
	out := &cycleOutcome{binds: binder.snapshot(), evicted: evictor.snapshot(), groups: map[string]*api.JobInfo{},
		nominated: status.snapshot(), waiting: waiting, ungated: ungated}
	for _, job := range jobs {
		out.groups[job.Namespace+"/"+job.Name] = job
	}
	for _, b := range out.binds {
		res.Binds[b.Task] = b.Node
	}
	res.Evicted = append(res.Evicted, out.evicted...)
	return out, nil
}

// clockShift is how far the scenario's times move onto this process's clock, so that now reads as clock.
func clockShift(clock time.Time) time.Duration {
	if clock.IsZero() {
		return 0
	}
	return time.Since(clock)
}

type pendingBind struct {
	node   string
	claims []string // the pod's claims, ns/name
}

// pendingOutcalls: the binds and evictions the session handed to the cache: tasks left Binding (by
// ns/name), and the number of tasks Releasing whose pod is not being deleted.
func pendingOutcalls(c *cache.SchedulerCache) (binds map[string]pendingBind, evicts int) {
	c.Mutex.Lock()
	defer c.Mutex.Unlock()
	binds = map[string]pendingBind{}
	for _, job := range c.Jobs {
		for _, t := range job.Tasks {
			switch {
			case t.Status == api.Binding:
				binds[t.Namespace+"/"+t.Name] = pendingBind{node: t.NodeName, claims: podClaims(t.Pod)}
			case t.Status == api.Releasing && t.Pod != nil && t.Pod.DeletionTimestamp == nil:
				evicts++
			}
		}
	}
	return binds, evicts
}

func bindingTasks(ssn *framework.Session) map[api.TaskID]bool {
	out := map[api.TaskID]bool{}
	for _, job := range ssn.Jobs {
		for id := range job.TaskStatusIndex[api.Binding] {
			out[id] = true
		}
	}
	return out
}

func ledger(cycle int, ssn *framework.Session) Ledger {
	l := Ledger{Cycle: cycle, Nodes: map[string]map[string]map[string]any{}}
	for name, n := range ssn.Nodes {
		l.Nodes[name] = map[string]map[string]any{
			"allocatable": resourceMap(n.Allocatable),
			"idle":        resourceMap(n.Idle),
			"used":        resourceMap(n.Used),
			"releasing":   resourceMap(n.Releasing),
			"pipelined":   resourceMap(n.Pipelined),
		}
	}
	return l
}

func resourceMap(r *api.Resource) map[string]any {
	m := map[string]any{"cpu": 0.0, "memory": 0.0}
	if r == nil {
		return m
	}
	m["cpu"], m["memory"] = r.MilliCPU, r.Memory
	for name, v := range r.ScalarResources {
		if name == v1.ResourcePods {
			continue
		}
		m[string(name)] = v
	}
	return m
}

// tracer turns the session's allocate/deallocate events into protocol operations.
type tracer struct {
	cycle   int
	action  string
	entries []TraceEntry
	last    map[string]TraceEntry // task -> its last allocate/pipeline, to name the undo
}

func (t *tracer) add(op string, task *api.TaskInfo, node string) {
	e := TraceEntry{Cycle: t.cycle, Action: t.action, Op: op, Task: task.Namespace + "/" + task.Name, Node: node}
	t.entries = append(t.entries, e)
	if op == "allocate" || op == "pipeline" {
		t.last[e.Task] = e
	}
}

func (t *tracer) handler() *framework.EventHandler {
	return &framework.EventHandler{
		AllocateFunc: func(ev *framework.Event) {
			switch ev.Task.Status {
			case api.Allocated:
				t.add("allocate", ev.Task, ev.Task.NodeName)
			case api.Pipelined:
				t.add("pipeline", ev.Task, ev.Task.NodeName)
			default:
				t.add("unevict", ev.Task, ev.Task.NodeName)
			}
		},
		DeallocateFunc: func(ev *framework.Event) {
			key := ev.Task.Namespace + "/" + ev.Task.Name
			if ev.Task.Status == api.Releasing {
				t.add("evict", ev.Task, ev.Task.NodeName)
				return
			}
			prev := t.last[key]
			op := "unallocate"
			if prev.Op == "pipeline" {
				op = "unpipeline"
			}
			node := ev.Task.NodeName
			if node == "" {
				node = prev.Node
			}
			t.add(op, ev.Task, node)
		},
	}
}

// binds records the tasks an action dispatched (Allocated -> Binding), in task-key order.
func (t *tracer) binds(ssn *framework.Session, before map[api.TaskID]bool) {
	var added []*api.TaskInfo
	for _, job := range ssn.Jobs {
		for id, task := range job.TaskStatusIndex[api.Binding] {
			if !before[id] {
				added = append(added, task)
			}
		}
	}
	sort.Slice(added, func(i, j int) bool {
		return added[i].Namespace+"/"+added[i].Name < added[j].Namespace+"/"+added[j].Name
	})
	for _, task := range added {
		t.add("bind", task, task.NodeName)
	}
}

// fill adds the world to a fresh cache, every timestamp shifted by `shift` so
// that the scenario's clock reads as the real time upstream's plugins consult.
func (w *World) fill(c *cache.SchedulerCache, shift time.Duration) {
	move := func(t *metav1.Time) {
		if t != nil && !t.IsZero() {
			t.Time = t.Add(shift)
		}
	}
	w.fillVolumes(c)
	for _, n := range w.Nodes {
		n = n.DeepCopy()
		move(&n.CreationTimestamp)
		addNode(c, n)
		setUsage(c, n, shift)
	}
	w.fillHyperNodes(c)
	// The pdb plugin lists budgets from the informer factory's PodDisruptionBudget informer: its store
	// holds the scenario's (the factory was started before, so it never lists the empty fake client).
	if len(w.PDBs) > 0 {
		store := c.SharedInformerFactory().Policy().V1().PodDisruptionBudgets().Informer().GetIndexer()
		for _, pdb := range w.PDBs {
			_ = store.Add(pdb.DeepCopy())
		}
	}
	w.fillWorkloads(c)
	for _, p := range w.Pods {
		// The pod informer's filter: another scheduler's pod is seen only once placed.
		if p.Spec.SchedulerName != defaultSchedulerName && p.Spec.NodeName == "" {
			continue
		}
		p = p.DeepCopy()
		move(&p.CreationTimestamp)
		move(p.DeletionTimestamp)
		move(p.Status.StartTime)
		for i := range p.Status.Conditions { // cdp's cooldown starts at the PodScheduled condition's time
			move(&p.Status.Conditions[i].LastTransitionTime)
			move(&p.Status.Conditions[i].LastProbeTime)
		}
		storePod(c, p)
		serveTemplateClaimPod(c, p)
		w.servePendingClaimPod(c, p)
		c.AddPod(p)
	}
	for _, pg := range w.PodGroups {
		pg = pg.DeepCopy()
		move(&pg.CreationTimestamp)
		c.AddPodGroupV1beta1(pg)
	}
	for _, q := range w.Queues {
		q = q.DeepCopy()
		move(&q.CreationTimestamp)
		c.AddQueueV1beta1(q)
	}
	for _, pc := range w.PriorityClasses {
		c.AddPriorityClass(pc.DeepCopy())
	}
	for _, rq := range w.ResourceQuotas {
		c.AddResourceQuota(rq.DeepCopy())
	}
	w.fillNuma(c)
}

// Node usage, which upstream reads from a metrics source (Prometheus, Elasticsearch)
// into NodeInfo.ResourceUsage, is given in a scenario by the reference's annotations
// (reference_impl/plugins/usage.py); a sample without a time is taken now.
const (
	cpuUsageAnnotation    = "schedcheck.io/cpu-usage-avg"
	memUsageAnnotation    = "schedcheck.io/mem-usage-avg"
	metricsTimeAnnotation = "schedcheck.io/metrics-time"
)

func setUsage(c *cache.SchedulerCache, n *v1.Node, shift time.Duration) {
	cpu, cpuErr := strconv.ParseFloat(n.Annotations[cpuUsageAnnotation], 64)
	mem, memErr := strconv.ParseFloat(n.Annotations[memUsageAnnotation], 64)
	if cpuErr != nil && memErr != nil {
		return
	}
	usage := &api.NodeUsage{CPUUsageAvg: map[string]float64{}, MEMUsageAvg: map[string]float64{}, MetricsTime: time.Now()}
	if cpuErr == nil {
		usage.CPUUsageAvg[source.NODE_METRICS_PERIOD] = cpu
	}
	if memErr == nil {
		usage.MEMUsageAvg[source.NODE_METRICS_PERIOD] = mem
	}
	if t, err := time.Parse(time.RFC3339, n.Annotations[metricsTimeAnnotation]); err == nil {
		usage.MetricsTime = t.Add(shift)
	}
	c.Mutex.Lock()
	defer c.Mutex.Unlock()
	if info, ok := c.Nodes[n.Name]; ok {
		info.ResourceUsage = usage
	}
}

// advance lets the world move on after a session, as the reference's cache does:
// the PV controller binds claims and the binds waiting for it go through, bound pods
// run on their node, an evicted pod starts terminating, a pod that was terminating is
// gone, and PodGroups keep the status and the annotations the session's close gave
// them. It returns the binds released from their wait.
func (w *World) advance(out *cycleOutcome, clock time.Time) map[string]string {
	now := metav1.NewTime(clock)
	bound := map[string]string{}
	annotated := map[string]map[string]string{}
	for _, b := range out.binds {
		bound[b.Task] = b.Node
		annotated[b.Task] = b.Annotations
	}
	w.createEphemeralClaims() // the ephemeral volume controller, then the PV controller
	w.syncClaims()
	released := w.releaseVolumeWaits(out.waiting)
	for task, node := range released {
		bound[task] = node
	}
	evicted := map[string]bool{}
	for _, e := range out.evicted {
		evicted[e] = true
	}
	var kept []*v1.Pod
	for _, p := range w.Pods {
		key := p.Namespace + "/" + p.Name
		switch {
		case evicted[key]:
			if p.DeletionTimestamp == nil {
				p.DeletionTimestamp = &now
				// what upstream's evictor writes before deleting (cache.go defaultEvictor.Evict): Ready False,
				// and the DisruptionTarget condition that taskEligibleToPreempt looks for
				p.Status.Conditions = append(p.Status.Conditions,
					v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "Evict"},
					v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue,
						Reason: v1.PodReasonPreemptionByScheduler})
			}
			kept = append(kept, p)
		case p.DeletionTimestamp != nil:
			// finished terminating
		default:
			if node := out.nominated[key]; node != "" {
				p.Status.NominatedNodeName = node
			}
			if node, ok := bound[key]; ok {
				p.Spec.NodeName = node
				for k, v := range annotated[key] {
					if p.Annotations == nil {
						p.Annotations = map[string]string{}
					}
					p.Annotations[k] = v
				}
				p.Status.Phase = v1.PodRunning
				if p.Status.StartTime == nil {
					p.Status.StartTime = &now
				}
			}
			kept = append(kept, p)
		}
	}
	w.Pods = kept
	w.removeSchGates(out.ungated)
	for _, pg := range w.PodGroups {
		job := out.groups[pg.Namespace+"/"+pg.Name]
		if job == nil || job.PodGroup == nil {
			continue
		}
		status := &vcbeta1.PodGroup{}
		if err := schedulingscheme.Scheme.Convert(&job.PodGroup.PodGroup, status, nil); err == nil {
			pg.Status = status.Status
		}
		keepSchedulerAnnotations(pg, job.PodGroup.GetAnnotations())
	}
	return released
}

func (w *World) latestCreation() time.Time {
	var latest time.Time
	consider := func(md metav1.ObjectMeta) {
		if md.CreationTimestamp.After(latest) {
			latest = md.CreationTimestamp.Time
		}
	}
	for _, n := range w.Nodes {
		consider(n.ObjectMeta)
	}
	for _, p := range w.Pods {
		consider(p.ObjectMeta)
	}
	for _, pg := range w.PodGroups {
		consider(pg.ObjectMeta)
	}
	for _, q := range w.Queues {
		consider(q.ObjectMeta)
	}
	return latest
}

// resolvePriorities does what the API server's Priority admission does for a pod
// naming a class: spec.priority from the class (the global default class, else 0,
// when the class is absent from the scenario), and spec.preemptionPolicy from the
// named class, else the global default. A pod naming no class keeps a nil priority
// (admission off), as in the reference.
func resolvePriorities(w *World) {
	classes := map[string]*schedulingv1.PriorityClass{}
	var global *schedulingv1.PriorityClass
	for _, pc := range w.PriorityClasses {
		classes[pc.Name] = pc
		if pc.GlobalDefault {
			global = pc
		}
	}
	for _, p := range w.Pods {
		name := p.Spec.PriorityClassName
		if p.Spec.Priority == nil && name != "" {
			var v int32
			if pc, ok := classes[name]; ok {
				v = pc.Value
			} else if global != nil {
				v = global.Value
			}
			p.Spec.Priority = &v
		}
		if p.Spec.PreemptionPolicy == nil {
			pc := classes[name]
			if name == "" {
				pc = global
			}
			if pc != nil && pc.PreemptionPolicy != nil {
				policy := *pc.PreemptionPolicy
				p.Spec.PreemptionPolicy = &policy
			}
		}
	}
}
