//go:build !volcano_shardstatus

package main

import "volcano.sh/volcano/pkg/scheduler/cache"

// statusUpdater is the sink as the cache's StatusUpdater when the build says this upstream has no
// node-shard status (before v1.14: the builder sets volcano_shardstatus whenever the cache has
// UpdateNodeShardStatus). A build without the tag against a newer module (`go vet ./...` with the default
// tags, against the v1.14.1 the go.mod pins) still compiles: the methods the sink lacks come from an
// embedded StatusUpdater one level deeper than the sink's own, which win. That embedded value is nil, so
// such a build would panic if the cache wrote a NodeShard status; it never does without the tag, as
// NodeShard objects and the sharding options are dropped then (shard_none.go, options_noshard.go).
func statusUpdater(s *statusSink) cache.StatusUpdater {
	return untaggedStatusSink{statusSink: s}
}

type untaggedStatusSink struct {
	*statusSink
	missingStatusMethods
}

type missingStatusMethods struct{ cache.StatusUpdater }
