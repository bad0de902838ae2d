//go:build volcano_kubemetrics

package main

import "volcano.sh/volcano/pkg/scheduler/metrics"

// initKubeSchedulerMetrics: the kube-scheduler plugins that predicates wraps record metrics; upstream's tests
// initialise them too (v1.13 and later; the builder adds the tag when the checkout has the function).
func initKubeSchedulerMetrics() { metrics.InitKubeSchedulerRelatedMetrics() }
