//go:build !volcano_podannotations

package main

// An upstream without TaskInfo.PodAnnotations (v1.14.1 and before) patches the device choice onto the pod
// through its API client, which the adapter does not carry back into the world.

import "volcano.sh/volcano/pkg/scheduler/api"

func bindAnnotations(_ *api.TaskInfo) map[string]string { return nil }
