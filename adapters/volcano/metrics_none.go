//go:build !volcano_kubemetrics

package main

// initKubeSchedulerMetrics: before v1.13 upstream has no such initialisation, and its tests do none.
func initKubeSchedulerMetrics() {}
