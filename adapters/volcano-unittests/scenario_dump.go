// The upstream unit tests' own cases as schedcheck scenarios.
//
// `schedcheck upstream-tests` lays this file into pkg/scheduler/uthelper of a Volcano checkout through
// `go test -overlay` (the checkout is never written to), with two calls patched into helper.go:
// RegisterSession remembers the tiers and configurations a case opened its session with, and Run writes
// the case (its objects, that conf with every enable flag explicit, the actions it runs and its Expect*
// fields) as one JSON scenario into $SCHEDCHECK_DUMP_DIR before the actions execute.
// The Check* methods and Close are hooked too: a case's Expect* fields become expectations only when the test
// asks for them (CheckAll, or CheckBind, CheckEvict, CheckPipelined, CheckTaskStatusNums, CheckPGStatus), so at
// Close the scenario is written again without the expectations the test never checked.
// Not part of the adapter's build.

package uthelper

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"

	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/conf"
	"volcano.sh/volcano/pkg/scheduler/framework"
)

type schedcheckSessionConf struct {
	tiers   []conf.Tier
	configs []conf.Configuration
}

// schedcheckCase is a scenario written at Run, kept until Close with the checks the test asked for.
type schedcheckCase struct {
	path   string
	doc    map[string]interface{}
	checks map[string]bool
}

// schedcheckCheckKeys are the expect keys each of uthelper's checks judges (CheckBindInHyperNode: the bind
// count; the per-hypernode counts are noted as unchecked).
var schedcheckCheckKeys = map[string][]string{
	"CheckBind":            {"bindCount", "binds", "bindsInclude"},
	"CheckEvict":           {"evicted", "evictCount"},
	"CheckPipelined":       {"pipelined"},
	"CheckTaskStatusNums":  {"taskStatusCounts"},
	"CheckPGStatus":        {"podGroupPhases"},
	"CheckBindInHyperNode": {"bindCount"},
}

// schedcheckCheckAll are the checks CheckAll runs.
var schedcheckCheckAll = []string{"CheckBind", "CheckEvict", "CheckPipelined", "CheckTaskStatusNums", "CheckPGStatus"}

var (
	schedcheckMu      sync.Mutex
	schedcheckCases   = map[*TestCommonStruct]*schedcheckCase{}
	schedcheckConfs   = map[*TestCommonStruct]schedcheckSessionConf{}
	schedcheckWritten = map[string]int{}
	schedcheckUnsafe  = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
)

func schedcheckRemember(test *TestCommonStruct, tiers []conf.Tier, configs []conf.Configuration) {
	schedcheckMu.Lock()
	defer schedcheckMu.Unlock()
	schedcheckConfs[test] = schedcheckSessionConf{tiers, configs}
}

// schedcheckChecked records that the test asked for a check (CheckAll asks for every one).
func schedcheckChecked(test *TestCommonStruct, check string) {
	schedcheckMu.Lock()
	defer schedcheckMu.Unlock()
	c := schedcheckCases[test]
	if c == nil {
		return
	}
	if check == "CheckAll" {
		for _, name := range schedcheckCheckAll {
			c.checks[name] = true
		}
		return
	}
	c.checks[check] = true
}

// schedcheckClosed writes the case again, keeping only the expectations the test checked, and names the
// checks in an annotation.
func schedcheckClosed(test *TestCommonStruct) {
	schedcheckMu.Lock()
	c := schedcheckCases[test]
	delete(schedcheckCases, test)
	schedcheckMu.Unlock()
	if c == nil {
		return
	}
	asked := make([]string, 0, len(c.checks))
	checked := map[string]bool{}
	for name := range c.checks {
		asked = append(asked, name)
		for _, key := range schedcheckCheckKeys[name] {
			checked[key] = true
		}
	}
	sort.Strings(asked)
	expect, _ := c.doc["expect"].(map[string]interface{})
	dropped := false
	for key := range expect {
		if !checked[key] {
			delete(expect, key)
			dropped = true
		}
	}
	if !dropped {
		return // every expectation written is checked: the scenario written at Run stands
	}
	metadata, _ := c.doc["metadata"].(map[string]interface{})
	annotations, _ := metadata["annotations"].(map[string]string)
	if len(asked) == 0 {
		annotations["schedcheck.io/upstream-checks"] = "none: the test calls no uthelper check, so its Expect* fields are not expectations"
	} else {
		annotations["schedcheck.io/upstream-checks"] = strings.Join(asked, ",")
	}
	schedcheckWrite(c.path, c.doc)
}

func schedcheckWrite(path string, doc map[string]interface{}) {
	raw, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		fmt.Fprintf(os.Stderr, "schedcheck dump %s: %v\n", path, err)
		return
	}
	_ = os.WriteFile(path, raw, 0o644)
}

// schedcheckCaller is the _test.go file and test function that runs the case.
func schedcheckCaller() (string, string) {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		frame, more := frames.Next()
		if strings.HasSuffix(frame.File, "_test.go") {
			file := frame.File
			if i := strings.Index(file, "pkg/scheduler/"); i >= 0 {
				file = file[i:]
			}
			fn := frame.Function // volcano.sh/volcano/pkg/scheduler/actions/preempt.TestPreempt.func1
			if i := strings.LastIndex(fn, "/"); i >= 0 {
				fn = fn[i+1:]
			}
			if parts := strings.Split(fn, "."); len(parts) > 1 {
				fn = parts[1]
			}
			return file, fn
		}
		if !more {
			return "", ""
		}
	}
}

func schedcheckObject(obj interface{}, apiVersion, kind string) map[string]interface{} {
	raw, err := json.Marshal(obj)
	if err != nil {
		return map[string]interface{}{"apiVersion": apiVersion, "kind": kind, "error": err.Error()}
	}
	out := map[string]interface{}{}
	_ = json.Unmarshal(raw, &out)
	out["apiVersion"] = apiVersion
	out["kind"] = kind
	return out
}

// schedcheckPlugin writes every enable flag explicitly: in a unit test an unset flag is off, while a
// conf file's unset flag is on (upstream's ApplyPluginConfDefaults).
func schedcheckPlugin(option conf.PluginOption) map[string]interface{} {
	out := map[string]interface{}{"name": option.Name}
	value := reflect.ValueOf(option)
	kind := value.Type()
	for i := 0; i < kind.NumField(); i++ {
		field := kind.Field(i)
		tag := strings.Split(field.Tag.Get("yaml"), ",")[0]
		if field.Type.Kind() != reflect.Ptr || field.Type.Elem().Kind() != reflect.Bool || tag == "" {
			continue
		}
		flag := value.Field(i)
		out[tag] = !flag.IsNil() && flag.Elem().Bool()
	}
	if len(option.Arguments) > 0 {
		out["arguments"] = option.Arguments
	}
	return out
}

// schedcheckSynthesizeHyperNodes builds HyperNode objects for a test that gives the session only the tiers
// (HyperNodesSetByTier) and each hypernode's leaf nodes (HyperNodes): the lowest tier's members are its
// nodes, a higher tier's are the hypernodes one tier down whose leaves it holds.
func schedcheckSynthesizeHyperNodes(test *TestCommonStruct) []interface{} {
	tiers := make([]int, 0, len(test.HyperNodesSetByTier))
	for tier := range test.HyperNodesSetByTier {
		tiers = append(tiers, tier)
	}
	sort.Ints(tiers)
	var out []interface{}
	for i, tier := range tiers {
		names := sets.List(test.HyperNodesSetByTier[tier])
		for _, name := range names {
			leaves := test.HyperNodes[name]
			members := []interface{}{}
			if i == 0 {
				for _, node := range sets.List(leaves) {
					members = append(members, map[string]interface{}{"type": "Node",
						"selector": map[string]interface{}{"exactMatch": map[string]interface{}{"name": node}}})
				}
			} else {
				for _, child := range sets.List(test.HyperNodesSetByTier[tiers[i-1]]) {
					if childLeaves, ok := test.HyperNodes[child]; ok && leaves.IsSuperset(childLeaves) {
						members = append(members, map[string]interface{}{"type": "HyperNode",
							"selector": map[string]interface{}{"exactMatch": map[string]interface{}{"name": child}}})
					}
				}
			}
			out = append(out, map[string]interface{}{
				"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
				"metadata": map[string]interface{}{"name": name},
				"spec":     map[string]interface{}{"tier": tier, "members": members},
			})
		}
	}
	return out
}

func schedcheckDump(test *TestCommonStruct, actions []framework.Action) {
	dir := os.Getenv("SCHEDCHECK_DUMP_DIR")
	if dir == "" {
		return
	}
	schedcheckMu.Lock()
	session := schedcheckConfs[test]
	schedcheckMu.Unlock()
	file, function := schedcheckCaller()
	var unsupported []string

	names := make([]string, 0, len(actions))
	for _, action := range actions {
		names = append(names, action.Name())
	}
	// A tier's plugin without a builder registered by the test never runs (OpenSession skips it), so it
	// is left out: the scenario holds the plugins upstream's session really had.
	var unbuilt, fixtures []string
	tiers := []interface{}{}
	for _, tier := range session.tiers {
		plugins := []interface{}{}
		for _, option := range tier.Plugins {
			if _, built := test.Plugins[option.Name]; len(test.Plugins) > 0 && !built {
				unbuilt = append(unbuilt, option.Name)
				continue
			}
			entry := schedcheckPlugin(option)
			if note, reason := schedcheckTestPlugin(test, session.tiers, option, entry); reason != "" {
				unsupported = append(unsupported, reason)
			} else if note != "" {
				fixtures = append(fixtures, note)
			}
			plugins = append(plugins, entry)
		}
		if len(plugins) > 0 {
			tiers = append(tiers, map[string]interface{}{"plugins": plugins})
		}
	}
	schedulerConf := map[string]interface{}{"actions": strings.Join(names, ", "), "tiers": tiers}
	if len(session.configs) > 0 {
		configurations := []interface{}{}
		for _, c := range session.configs {
			configurations = append(configurations, map[string]interface{}{"name": c.Name, "arguments": c.Arguments})
		}
		schedulerConf["configurations"] = configurations
	}

	objects := []interface{}{}
	for _, o := range test.Nodes {
		objects = append(objects, schedcheckObject(o, "v1", "Node"))
	}
	for _, o := range test.Pods {
		objects = append(objects, schedcheckObject(o, "v1", "Pod"))
	}
	for _, o := range test.PodGroups {
		objects = append(objects, schedcheckObject(o, "scheduling.volcano.sh/v1beta1", "PodGroup"))
	}
	for _, o := range test.Queues {
		objects = append(objects, schedcheckObject(o, "scheduling.volcano.sh/v1beta1", "Queue"))
	}
	for _, o := range test.PriClass {
		objects = append(objects, schedcheckObject(o, "scheduling.k8s.io/v1", "PriorityClass"))
	}
	for _, o := range test.ResourceQuotas {
		objects = append(objects, schedcheckObject(o, "v1", "ResourceQuota"))
	}
	hyperNodes := 0
	hyperNames := make([]string, 0, len(test.HyperNodesMap))
	for name := range test.HyperNodesMap {
		hyperNames = append(hyperNames, name)
	}
	sort.Strings(hyperNames)
	var renamed []string
	for _, name := range hyperNames {
		if info := test.HyperNodesMap[name]; info != nil && info.HyperNode != nil {
			object := schedcheckObject(info.HyperNode, "topology.volcano.sh/v1alpha1", "HyperNode")
			// the session knows a hypernode by its map key; a test whose object says otherwise means the key
			if metadata, ok := object["metadata"].(map[string]interface{}); ok && metadata["name"] != name {
				renamed = append(renamed, fmt.Sprintf("%v as %s", metadata["name"], name))
				metadata["name"] = name
			}
			objects = append(objects, object)
			hyperNodes++
		}
	}
	var synthesized bool
	if hyperNodes == 0 && len(test.HyperNodesSetByTier) > 0 && len(test.HyperNodes) > 0 {
		objects = append(objects, schedcheckSynthesizeHyperNodes(test)...)
		synthesized = true
	} else if hyperNodes == 0 && (len(test.HyperNodesSetByTier) > 0 || len(test.HyperNodes) > 0) {
		unsupported = append(unsupported, "hypernode tiers given without HyperNode objects")
	}
	for _, o := range test.SCs {
		objects = append(objects, schedcheckObject(o, "storage.k8s.io/v1", "StorageClass"))
	}
	for _, o := range test.PVs {
		objects = append(objects, schedcheckObject(o, "v1", "PersistentVolume"))
	}
	for _, o := range test.PVCs {
		objects = append(objects, schedcheckObject(o, "v1", "PersistentVolumeClaim"))
	}
	for _, o := range test.DeviceClasses {
		objects = append(objects, schedcheckObject(o, "resource.k8s.io/v1", "DeviceClass"))
	}
	for _, o := range test.ResourceSlices {
		objects = append(objects, schedcheckObject(o, "resource.k8s.io/v1", "ResourceSlice"))
	}
	for _, o := range test.ResourceClaims {
		objects = append(objects, schedcheckObject(o, "resource.k8s.io/v1", "ResourceClaim"))
	}

	// the test hands its tiers to OpenSession itself: the loader's defaults and its hdrf-and-proportion
	// check never run (the flags are written explicitly above anyway)
	schedulerConf["builtDirectly"] = true
	doc := map[string]interface{}{
		"apiVersion":    "schedcheck/v1",
		"kind":          "Scenario",
		"schedulerConf": schedulerConf,
		"objects":       objects,
	}
	options := map[string]interface{}{}
	if len(test.IgnoreProvisioners) > 0 {
		// the mock cache ignores exactly these; a real scheduler adds its defaults to the flag's list
		options["ignoredProvisioners"] = sets.List(test.IgnoreProvisioners)
	}
	if test.ShardingMode != "" || len(test.NodesInShard) > 0 {
		shard := test.ShardName
		if shard == "" {
			shard = "volcano"
		}
		mode := test.ShardingMode
		if mode == "" {
			mode = "none"
		}
		options["shardingMode"], options["shardName"] = mode, shard
		objects = append(objects, map[string]interface{}{
			"apiVersion": "shard.volcano.sh/v1alpha1", "kind": "NodeShard",
			"metadata": map[string]interface{}{"name": shard},
			"spec":     map[string]interface{}{"nodesDesired": test.NodesInShard},
			"status":   map[string]interface{}{"nodesInUse": test.NodesInShard},
		})
		doc["objects"] = objects
	}
	if len(options) > 0 {
		doc["schedulerOptions"] = options
	}

	expect := map[string]interface{}{}
	binds := map[string]string{}
	for k, v := range test.ExpectBindMap {
		binds[k] = v
	}
	expect["bindCount"] = test.ExpectBindsNum
	switch {
	case test.MinimalBindCheck:
	case test.ExpectBindsNum != len(test.ExpectBindMap):
		// CheckBind would refuse this setting: the test checks binds its own way (ExpectBindNumsInHyperNode,
		// say), so only the count, and the binds it lists, are expectations
		if len(binds) > 0 {
			expect["bindsInclude"] = binds
		}
	default:
		expect["binds"] = binds
	}
	evicted := append([]string{}, test.ExpectEvicted...)
	expect["evicted"] = evicted
	expect["evictCount"] = test.ExpectEvictNum
	if len(test.ExpectPipeLined) > 0 {
		expect["pipelined"] = test.ExpectPipeLined
	}
	if len(test.ExpectStatus) > 0 {
		phases := map[string]string{}
		for k, v := range test.ExpectStatus {
			phases[string(k)] = string(v)
		}
		expect["podGroupPhases"] = phases
	}
	if len(test.ExpectTaskStatusNums) > 0 {
		counts := map[string]map[string]int{}
		for job, byStatus := range test.ExpectTaskStatusNums {
			counts[string(job)] = map[string]int{}
			for status, n := range byStatus {
				counts[string(job)][status.String()] = n
			}
		}
		expect["taskStatusCounts"] = counts
	}
	doc["expect"] = expect

	plugins := make([]string, 0, len(test.Plugins))
	for name := range test.Plugins {
		plugins = append(plugins, name)
	}
	sort.Strings(plugins)
	annotations := map[string]string{
		"schedcheck.io/upstream-test":     file + " " + function,
		"schedcheck.io/upstream-case":     test.Name,
		"schedcheck.io/upstream-builders": strings.Join(plugins, ","),
	}
	if len(unbuilt) > 0 {
		annotations["schedcheck.io/upstream-unbuilt-plugins"] = strings.Join(unbuilt, ",")
	}
	if len(fixtures) > 0 {
		annotations["schedcheck.io/upstream-test-plugins"] = strings.Join(fixtures, "; ")
	}
	if len(renamed) > 0 {
		annotations["schedcheck.io/upstream-renamed-hypernodes"] = strings.Join(renamed, ", ")
	}
	if synthesized {
		annotations["schedcheck.io/upstream-synthesized"] = "HyperNode objects built from HyperNodesSetByTier and HyperNodes"
	}
	if len(test.ExpectBindNumsInHyperNode) > 0 {
		annotations["schedcheck.io/upstream-unchecked"] = fmt.Sprintf("ExpectBindNumsInHyperNode %v", test.ExpectBindNumsInHyperNode)
	}
	if len(unsupported) > 0 {
		annotations["schedcheck.io/upstream-unsupported"] = strings.Join(unsupported, "; ")
	}
	base := schedcheckUnsafe.ReplaceAllString(strings.TrimSuffix(filepath.Base(file), "_test.go")+"-"+function+"-"+test.Name, "-")
	if len(base) > 150 {
		base = base[:150]
	}
	schedcheckMu.Lock()
	schedcheckWritten[base]++
	count := schedcheckWritten[base]
	schedcheckMu.Unlock()
	name := base
	if count > 1 {
		name = fmt.Sprintf("%s-%d", base, count)
	}
	doc["metadata"] = map[string]interface{}{"name": name, "annotations": annotations}
	path := filepath.Join(dir, fmt.Sprintf("%s.%d.json", name, os.Getpid()))
	schedcheckWrite(path, doc)
	schedcheckMu.Lock()
	schedcheckCases[test] = &schedcheckCase{path: path, doc: doc, checks: map[string]bool{}}
	schedcheckMu.Unlock()
}

// schedcheckTestFixtures are the names under which upstream's tests register their own test-only plugins,
// which schedcheck re-implements (schedcheck/scenario/testplugins.py, adapters/volcano/testplugins.go).
var schedcheckTestFixtures = map[string]bool{"test-rejecter": true, "device-fit-after-eviction": true, "fake": true}

// schedcheckTestPlugin rewrites entry, a tier's plugin the test built with a test-only builder, as the
// schedcheck test plugin doing the same, with what the fixture holds as arguments. It returns a note for
// the scenario's annotations, or the reason the case cannot be converted. Other plugins are left alone.
// The fixture is recognised by the type its builder returns (reflection: uthelper.RejecterPlugin is not in
// every Volcano version, and the other two are types of test packages).
func schedcheckTestPlugin(test *TestCommonStruct, tiers []conf.Tier, option conf.PluginOption,
	entry map[string]interface{}) (string, string) {
	builder, ok := test.Plugins[option.Name]
	if !ok || !schedcheckTestFixtures[option.Name] {
		return "", ""
	}
	plugin := builder(nil)
	value := reflect.ValueOf(plugin)
	if value.Kind() != reflect.Ptr || value.IsNil() || value.Elem().Kind() != reflect.Struct {
		return "", fmt.Sprintf("test-only plugin %s of type %T is not one schedcheck models", option.Name, plugin)
	}
	kind := value.Elem().Type()
	switch {
	case kind.Name() == "RejecterPlugin":
		field := value.Elem().FieldByName("RejectJob")
		if !field.IsValid() || field.Kind() != reflect.String {
			return "", fmt.Sprintf("test-only plugin %s: a RejecterPlugin without a RejectJob string", option.Name)
		}
		entry["name"] = "test-rejecter"
		entry["arguments"] = map[string]interface{}{"rejectJob": field.String()}
		return fmt.Sprintf("%s: uthelper.RejecterPlugin{RejectJob: %q}", option.Name, field.String()), ""
	case kind.Name() == "deviceFitAfterEvictionPlugin":
		// the fixture names both tasks in its predicate's body: the preemptor is refused while the
		// preemptee, not yet Releasing, is on the node
		entry["name"] = "device-fit-after-eviction"
		entry["arguments"] = map[string]interface{}{"task": "preemptor", "blocker": "preemptee"}
		return fmt.Sprintf("%s: preempt_test.go's fixture (task preemptor, blocker preemptee)", option.Name), ""
	case kind.Name() == "MockPlugin":
		priority, reason := schedcheckProbeVictims(test, tiers, option)
		if reason != "" {
			return "", fmt.Sprintf("test-only plugin %s (a gomock plugin): %s", option.Name, reason)
		}
		entry["name"] = "test-victims-by-priority"
		entry["arguments"] = map[string]interface{}{"priority": priority}
		return fmt.Sprintf("%s: a gomock plugin whose victim function picks the priority-%d candidates, "+
			"as test-victims-by-priority", option.Name, priority), ""
	}
	return "", fmt.Sprintf("test-only plugin %s of type %s is not one schedcheck models", option.Name, kind)
}

// schedcheckProbeVictims reads what a mock plugin's victim function (added to the open session by the test)
// picks: it is called, as shuffle calls it, on the session's Running tasks, and must pick exactly the
// tasks of one priority. The mock must be the tiers' only plugin with victims enabled.
func schedcheckProbeVictims(test *TestCommonStruct, tiers []conf.Tier, option conf.PluginOption) (int32, string) {
	if option.EnabledVictim == nil || !*option.EnabledVictim {
		return 0, "only a mock with victims enabled is modelled"
	}
	for _, tier := range tiers {
		for _, other := range tier.Plugins {
			if other.Name != option.Name && other.EnabledVictim != nil && *other.EnabledVictim {
				return 0, "another plugin with victims enabled (" + other.Name + ") would blur the probe"
			}
		}
	}
	if test.ssn == nil {
		return 0, "no open session to probe"
	}
	var candidates []*api.TaskInfo
	for _, job := range test.ssn.Jobs {
		for _, task := range job.Tasks {
			if task.Status == api.Running {
				candidates = append(candidates, task)
			}
		}
	}
	picked := test.ssn.VictimTasks(candidates)
	if len(picked) == 0 {
		return 0, "its victim function picks none of the Running tasks"
	}
	priorities := map[int32]bool{}
	for task := range picked {
		priorities[task.Priority] = true
	}
	if len(priorities) != 1 {
		return 0, "its victim function picks tasks of several priorities"
	}
	var priority int32
	for p := range priorities {
		priority = p
	}
	for _, task := range candidates {
		if task.Priority == priority && !picked[task] {
			return 0, fmt.Sprintf("its victim function leaves out a task of priority %d", priority)
		}
	}
	return priority, ""
}
