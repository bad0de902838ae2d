package main

// The cache's outside world, replaced by recorders: binds and evictions are
// recorded instead of being sent to an API server (as upstream's unit tests do
// with their fake binder and evictor, minus their stdout prints and channels).

import (
	"fmt"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"volcano.sh/volcano/pkg/scheduler/api"
)

type bindRecord struct {
	Task, Node  string
	Annotations map[string]string // the Binding's annotations (podannotations.go)
}

type recordingBinder struct {
	mu    sync.Mutex
	binds []bindRecord
}

func (b *recordingBinder) Bind(_ kubernetes.Interface, tasks []*api.TaskInfo) map[api.TaskID]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range tasks {
		b.binds = append(b.binds, bindRecord{fmt.Sprintf("%s/%s", t.Namespace, t.Name), t.NodeName, bindAnnotations(t)})
	}
	return nil
}

func (b *recordingBinder) snapshot() []bindRecord {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]bindRecord(nil), b.binds...)
}

type recordingEvictor struct {
	mu      sync.Mutex
	evicted []string
}

func (e *recordingEvictor) Evict(p *v1.Pod, _ string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evicted = append(e.evicted, p.Namespace+"/"+p.Name)
	return nil
}

func (e *recordingEvictor) snapshot() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.evicted...)
}

// statusSink accepts every status write. It keeps the nominated node the
// session's close writes on a pod (it must reach the next cycle: preempt's
// eligibility check reads it); PodGroup phases are read from the session's jobs
// after close instead.
type statusSink struct {
	mu        sync.Mutex
	nominated map[string]string // ns/name -> status.nominatedNodeName
	preBound  map[string]bool   // ns/name of pods whose bind failed in PreBind (the cache's unschedulable write)
}

// preBindFailed says whether the cache wrote the pod unschedulable because its PreBind failed.
func (s *statusSink) preBindFailed(task string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.preBound[task]
}

func (s *statusSink) UpdatePodStatus(pod *v1.Pod) (*v1.Pod, error) {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Reason == "SchedulerError" && strings.Contains(c.Message, "execute preBind") {
			s.mu.Lock()
			if s.preBound == nil {
				s.preBound = map[string]bool{}
			}
			s.preBound[pod.Namespace+"/"+pod.Name] = true
			s.mu.Unlock()
		}
	}
	if pod.Status.NominatedNodeName != "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.nominated == nil {
			s.nominated = map[string]string{}
		}
		s.nominated[pod.Namespace+"/"+pod.Name] = pod.Status.NominatedNodeName
	}
	return pod, nil
}

func (s *statusSink) snapshot() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.nominated))
	for k, v := range s.nominated {
		out[k] = v
	}
	return out
}

func (*statusSink) UpdatePodGroup(pg *api.PodGroup) (*api.PodGroup, error) { return pg, nil }
func (*statusSink) UpdateQueueStatus(*api.QueueInfo) error                 { return nil }
