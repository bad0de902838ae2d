package main

// Upstream's test-only plugins, written for the adapter so a scenario converted from an upstream unit test
// (`schedcheck upstream-tests`) runs through upstream's scheduler too. They are schedcheck's re-statements
// of the tests' fixtures, with what each fixture had built in given as plugin arguments; the reference's
// versions are schedcheck/scenario/testplugins.py, where each is described.
//
//	test-rejecter              rejectJob: NAME  JobEnqueueable: reject the job whose PodGroup is NAME, permit the rest
//	device-fit-after-eviction  task, blocker    Predicate: refuse `task` (Unschedulable) on a node where `blocker` is not Releasing
//	test-victims-by-priority   priority: N      VictimTasks: the candidates of priority N

import (
	"fmt"

	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/conf"
	"volcano.sh/volcano/pkg/scheduler/framework"
)

// testPluginArguments: each test plugin's required arguments, and whether each is an integer.
var testPluginArguments = map[string][]struct {
	key     string
	integer bool
}{
	"test-rejecter":             {{"rejectJob", false}},
	"device-fit-after-eviction": {{"task", false}, {"blocker", false}},
	"test-victims-by-priority":  {{"priority", true}},
}

func init() {
	framework.RegisterPluginBuilder("test-rejecter", func(args framework.Arguments) framework.Plugin {
		return &rejecterPlugin{job: stringArgument(args, "rejectJob")}
	})
	framework.RegisterPluginBuilder("device-fit-after-eviction", func(args framework.Arguments) framework.Plugin {
		return &deviceFitPlugin{task: stringArgument(args, "task"), blocker: stringArgument(args, "blocker")}
	})
	framework.RegisterPluginBuilder("test-victims-by-priority", func(args framework.Arguments) framework.Plugin {
		priority, _ := args["priority"].(int)
		return &victimsByPriorityPlugin{priority: int32(priority)}
	})
}

// checkTestPlugins refuses a conf whose test plugin lacks an argument or has one of the wrong type (the
// builders cannot report it: upstream's PluginBuilder returns no error).
func checkTestPlugins(tiers []conf.Tier) error {
	for i, tier := range tiers {
		for j, option := range tier.Plugins {
			for _, want := range testPluginArguments[option.Name] {
				value, found := option.Arguments[want.key]
				field := fmt.Sprintf("schedulerConf: tiers[%d].plugins[%d].arguments.%s", i, j, want.key)
				if !found || value == nil {
					return failf("%s: missing (%s needs it)", field, option.Name)
				}
				if _, isInt := value.(int); want.integer && !isInt {
					return failf("%s: %s expects an integer, got %v", field, option.Name, value)
				}
				if text, isString := value.(string); !want.integer && (!isString || text == "") {
					return failf("%s: %s expects a non-empty string, got %v", field, option.Name, value)
				}
			}
		}
	}
	return nil
}

func stringArgument(args framework.Arguments, key string) string {
	value, _ := args[key].(string)
	return value
}

type rejecterPlugin struct{ job string }

func (p *rejecterPlugin) Name() string                      { return "test-rejecter" }
func (p *rejecterPlugin) OnSessionClose(*framework.Session) {}
func (p *rejecterPlugin) OnSessionOpen(ssn *framework.Session) {
	ssn.AddJobEnqueueableFn(p.Name(), func(obj interface{}) int {
		if job, ok := obj.(*api.JobInfo); ok && job.PodGroup != nil && job.PodGroup.Name == p.job {
			return -1
		}
		return 1
	})
}

type deviceFitPlugin struct{ task, blocker string }

func (p *deviceFitPlugin) Name() string                      { return "device-fit-after-eviction" }
func (p *deviceFitPlugin) OnSessionClose(*framework.Session) {}
func (p *deviceFitPlugin) OnSessionOpen(ssn *framework.Session) {
	ssn.AddPredicateFn(p.Name(), func(task *api.TaskInfo, node *api.NodeInfo) error {
		if task.Name != p.task {
			return nil
		}
		for _, other := range node.Tasks {
			if other.Name == p.blocker && other.Status != api.Releasing {
				return api.NewFitErrWithStatus(task, node,
					&api.Status{Code: api.Unschedulable, Reason: "the blocking task still holds the device"})
			}
		}
		return nil
	})
}

type victimsByPriorityPlugin struct{ priority int32 }

func (p *victimsByPriorityPlugin) Name() string                      { return "test-victims-by-priority" }
func (p *victimsByPriorityPlugin) OnSessionClose(*framework.Session) {}
func (p *victimsByPriorityPlugin) OnSessionOpen(ssn *framework.Session) {
	ssn.AddVictimTasksFns(p.Name(), []api.VictimTasksFn{func(candidates []*api.TaskInfo) []*api.TaskInfo {
		var picked []*api.TaskInfo
		for _, task := range candidates {
			if task.Priority == p.priority {
				picked = append(picked, task)
			}
		}
		return picked
	}})
}
