//go:build volcano_podannotations

package main

// An upstream whose tasks carry the scheduler's pod annotations to the bind (TaskInfo.PodAnnotations:
// the shared-device choice); the API server puts a Binding's annotations on the pod, so the world does.

import "volcano.sh/volcano/pkg/scheduler/api"

func bindAnnotations(t *api.TaskInfo) map[string]string {
	if len(t.PodAnnotations) == 0 {
		return nil
	}
	out := make(map[string]string, len(t.PodAnnotations))
	for k, v := range t.PodAnnotations {
		out[k] = v
	}
	return out
}
