//go:build volcano_hypernodes

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	listerv1 "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"
	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/cache"
)

// fillHyperNodes builds the cache's HyperNode view as the HyperNode informer's handler does: upstream's
// own HyperNodesInfo, one UpdateHyperNode per object (in name order, as a List returns them), with a node
// lister over the world's nodes for the regex and label selectors. Built when upstream has HyperNodes
// (v1.12 and later: the builder adds the tag when the checkout has api.NewHyperNodesInfo).
func (w *World) fillHyperNodes(c *cache.SchedulerCache) {
	if len(w.HyperNodes) == 0 {
		return
	}
	indexer := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for _, n := range w.Nodes {
		_ = indexer.Add(n.DeepCopy())
	}
	info := api.NewHyperNodesInfo(listerv1.NewNodeLister(indexer))
	var hyperNodes []*topologyv1alpha1.HyperNode
	for _, raw := range w.HyperNodes {
		hn := &topologyv1alpha1.HyperNode{}
		if err := json.Unmarshal(raw, hn); err != nil {
			fmt.Fprintf(os.Stderr, "warning: HyperNode: %v\n", err)
			continue
		}
		hyperNodes = append(hyperNodes, hn)
	}
	sort.Slice(hyperNodes, func(i, j int) bool { return hyperNodes[i].Name < hyperNodes[j].Name })
	for _, hn := range hyperNodes {
		if err := info.UpdateHyperNode(hn); err != nil {
			fmt.Fprintf(os.Stderr, "warning: HyperNode %s: %v\n", hn.Name, err)
		}
	}
	c.HyperNodesInfo = info
}
