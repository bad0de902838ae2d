//go:build volcano_numa

package main

// NUMA topology, where upstream's cache keeps the numa-aware plugin's CPU decisions across sessions
// (NodeInfo.UnassignedNumaPods, after v1.14). Numatopology objects (nodeinfo.volcano.sh/v1alpha1) are
// handed to the cache's own informer handler (AddNumaInfoV1alpha1), as the ResourceTopology feature gate
// (on by default) has the cache do. The adapter builds a fresh cache per session, where upstream keeps one:
// the records the plugin leaves on the cache's nodes at session close are read back after the session and
// put on the next session's nodes before it opens, less those of pods deleted in between (the cache's
// clearUnassignedNumaPod: from the node the deleted pod's task named). No resource exporter runs between
// sessions: the objects stay as the scenario gives them, as in the reference.

import (
	"encoding/json"
	"fmt"
	"os"

	nodeinfov1alpha1 "volcano.sh/apis/pkg/apis/nodeinfo/v1alpha1"
	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/cache"
)

type numaObjects struct {
	Topologies []*nodeinfov1alpha1.Numatopology
	unassigned map[string]map[api.PodMeta]api.ResNumaSets // node -> records, as the last session left them
	podNode    map[string]string                          // ns/name -> the node its cached task named then
}

func (w *World) decodeNuma(kind string, decode func(any) error) (bool, error) {
	if kind != "Numatopology" {
		return false, nil
	}
	t := &nodeinfov1alpha1.Numatopology{}
	if err := decode(t); err != nil {
		return true, err
	}
	w.Numa.Topologies = append(w.Numa.Topologies, t)
	return true, nil
}

// fillNuma runs after the nodes and pods are in the cache.
func (w *World) fillNuma(c *cache.SchedulerCache) {
	for _, t := range w.Numa.Topologies {
		c.AddNumaInfoV1alpha1(t.DeepCopy())
	}
	if len(w.Numa.unassigned) == 0 {
		return
	}
	present := map[string]bool{}
	for _, p := range w.Pods {
		present[p.Namespace+"/"+p.Name] = true
	}
	c.Mutex.Lock()
	defer c.Mutex.Unlock()
	for nodeName, records := range w.Numa.unassigned {
		node, ok := c.Nodes[nodeName]
		if !ok || node == nil {
			continue
		}
		for meta, sets := range records {
			key := meta.Namespace + "/" + meta.Name
			if !present[key] && w.Numa.podNode[key] == nodeName {
				continue // deleted between sessions
			}
			if node.UnassignedNumaPods == nil {
				node.UnassignedNumaPods = map[api.PodMeta]api.ResNumaSets{}
			}
			node.UnassignedNumaPods[meta] = sets.Clone()
		}
	}
}

// readNuma keeps the records the session's close left on the cache's nodes, and where each pod's task was.
func (w *World) readNuma(c *cache.SchedulerCache) {
	if len(w.Numa.Topologies) == 0 {
		return
	}
	c.Mutex.Lock()
	defer c.Mutex.Unlock()
	w.Numa.unassigned = map[string]map[api.PodMeta]api.ResNumaSets{}
	for name, node := range c.Nodes {
		if node == nil || len(node.UnassignedNumaPods) == 0 {
			continue
		}
		records := map[api.PodMeta]api.ResNumaSets{}
		for meta, sets := range node.UnassignedNumaPods {
			records[meta] = sets.Clone()
		}
		w.Numa.unassigned[name] = records
	}
	w.Numa.podNode = map[string]string{}
	for _, job := range c.Jobs {
		for _, t := range job.Tasks {
			if t.NodeName != "" {
				w.Numa.podNode[t.Namespace+"/"+t.Name] = t.NodeName
			}
		}
	}
	if os.Getenv("SCHEDCHECK_VOLCANO_NUMA_DEBUG") != "" { // one JSON line: node -> ns/name -> cpu ids
		out := map[string]map[string]string{}
		for node, records := range w.Numa.unassigned {
			out[node] = map[string]string{}
			for meta, sets := range records {
				out[node][meta.Namespace+"/"+meta.Name] = sets["cpu"].String()
			}
		}
		line, _ := json.Marshal(out)
		fmt.Fprintf(os.Stderr, "schedcheck-numa-records %s\n", line)
	}
}
