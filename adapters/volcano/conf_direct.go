package main

// The scheduler configuration as the session gets it. A scenario's conf normally goes through upstream's
// loader (scheduler.UnmarshalSchedulerConf: plugin defaults, the hdrf-and-proportion check, action lookup).
// `builtDirectly: true`, a schedcheck key upstream's loader ignores, says the conf is what a unit test hands
// OpenSession itself (uthelper's RegisterSession; `schedcheck upstream-tests` writes it on every case it
// extracts): the same document decoded into upstream's types, the actions looked up, and nothing else, so an
// unset enable flag stays off and drf with enableHierarchy may share a tier with proportion.

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v2"

	"volcano.sh/volcano/pkg/scheduler"
	"volcano.sh/volcano/pkg/scheduler/conf"
	"volcano.sh/volcano/pkg/scheduler/framework"
)

// builtDirectlyKey is the schedcheck key (schedcheck/reference/framework/conf.py BUILT_DIRECTLY_KEY).
const builtDirectlyKey = "builtDirectly"

func loadSchedulerConf(text string) ([]framework.Action, []conf.Tier, []conf.Configuration, error) {
	probe := map[string]interface{}{}
	if err := yaml.Unmarshal([]byte(text), &probe); err != nil {
		return nil, nil, nil, err
	}
	direct, ok := probe[builtDirectlyKey].(bool)
	if !ok || !direct {
		actions, tiers, configurations, _, err := scheduler.UnmarshalSchedulerConf(text)
		return actions, tiers, configurations, err
	}
	parsed := &conf.SchedulerConfiguration{}
	if err := yaml.Unmarshal([]byte(text), parsed); err != nil {
		return nil, nil, nil, err
	}
	var actions []framework.Action
	for _, name := range strings.Split(parsed.Actions, ",") {
		action, found := framework.GetAction(strings.TrimSpace(name))
		if !found {
			return nil, nil, nil, fmt.Errorf("failed to find Action %s", name)
		}
		actions = append(actions, action)
	}
	return actions, parsed.Tiers, parsed.Configurations, nil
}
