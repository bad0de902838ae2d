package main

// What the scheduler writes on PodGroups besides the phase: annotations (allocate
// recorded the job's hypernode in one in v1.12 and v1.13; later releases keep it in
// the cache's JobInfo and write none) and gang's conditions (Scheduled,
// Unschedulable), for the protocol's podGroupAnnotations and podGroupConditions.

import (
	vcbeta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
)

// schedulerAnnotations are the PodGroup annotation keys some release's scheduler writes in a session.
var schedulerAnnotations = []string{"volcano.sh/job-allocated-hypernode"}

// conditionEntry is a condition as the protocol compares it. The message is left out: upstream names in it
// the first task with fit errors it meets in map order.
type conditionEntry struct {
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// keepSchedulerAnnotations carries the annotations the session wrote to the world's PodGroup, as the
// PodGroup update through the API server would, so that the next session reads them.
func keepSchedulerAnnotations(pg *vcbeta1.PodGroup, written map[string]string) {
	for _, key := range schedulerAnnotations {
		value, ok := written[key]
		if !ok {
			continue
		}
		if pg.Annotations == nil {
			pg.Annotations = map[string]string{}
		}
		pg.Annotations[key] = value
	}
}

// podGroupAnnotations: each PodGroup's scheduler-written annotation keys, PodGroups without any left out.
func podGroupAnnotations(groups []*vcbeta1.PodGroup) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, pg := range groups {
		written := map[string]string{}
		for _, key := range schedulerAnnotations {
			if value, ok := pg.Annotations[key]; ok {
				written[key] = value
			}
		}
		if len(written) > 0 {
			out[pg.Namespace+"/"+pg.Name] = written
		}
	}
	return out
}

// podGroupConditions: by PodGroup and type, the conditions written by one of the run's sessions (their
// transition ID is the session's UID); those the scenario brought in are left out.
func podGroupConditions(groups []*vcbeta1.PodGroup, sessions map[string]bool) map[string]map[string]conditionEntry {
	out := map[string]map[string]conditionEntry{}
	for _, pg := range groups {
		written := map[string]conditionEntry{}
		for _, c := range pg.Status.Conditions {
			if sessions[c.TransitionID] {
				written[string(c.Type)] = conditionEntry{Status: string(c.Status), Reason: c.Reason}
			}
		}
		if len(written) > 0 {
			out[pg.Namespace+"/"+pg.Name] = written
		}
	}
	return out
}
