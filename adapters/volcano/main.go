// Command volcano-adapter runs one schedcheck scenario through upstream Volcano's
// own scheduler (pkg/scheduler, used as a library) and prints the result object of
// schedcheck's conformance protocol, version 1 (docs/protocol.md).
//
//	volcano-adapter SCENARIO   (or - for standard input)
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	// Register upstream's actions and plugins, as cmd/scheduler does.
	_ "volcano.sh/volcano/pkg/scheduler/actions"
	_ "volcano.sh/volcano/pkg/scheduler/plugins"
)

func main() {
	initKubeSchedulerMetrics()
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	_ = klogFlags.Set("logtostderr", "true")
	_ = klogFlags.Set("v", os.Getenv("SCHEDCHECK_VOLCANO_V"))
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: volcano-adapter SCENARIO   (a scenario file, or - for standard input)")
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	// Everything but the result goes to stderr, whatever upstream's code prints.
	stdout := os.Stdout
	os.Stdout = os.Stderr

	readStart := time.Now()
	sc, err := ReadScenario(flag.Arg(0))
	if err == nil {
		readSeconds := time.Since(readStart).Seconds()
		runStart := time.Now()
		var res *Result
		res, err = Run(sc)
		if err == nil {
			res.Timings.ReadSeconds = readSeconds
			res.Timings.RunSeconds = time.Since(runStart).Seconds()
			res.Timings.MaxRSSKB = maxRSSKB()
			res.Implementation = implementation()
			klog.Flush()
			enc := json.NewEncoder(stdout)
			if err = enc.Encode(res); err == nil {
				return
			}
		}
	}
	fmt.Fprintf(os.Stderr, "volcano-adapter: %v\n", err)
	var inErr *inputError
	if errors.As(err, &inErr) {
		os.Exit(2)
	}
	os.Exit(1)
}

// upstreamSource names the checkout a SCHEDCHECK_VOLCANO_SRC build used (its commit, or its path when it is
// no git work tree); the build sets it with -ldflags -X, since the module version of a local tree is "(devel)".
var upstreamSource string

// implementation names upstream's module version this binary was built with.
func implementation() string {
	if upstreamSource != "" {
		return "volcano@" + upstreamSource
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "volcano"
	}
	for _, dep := range info.Deps {
		if dep.Path != "volcano.sh/volcano" {
			continue
		}
		if dep.Replace != nil {
			if dep.Replace.Version != "" {
				return "volcano@" + dep.Replace.Version
			}
			return "volcano@" + dep.Version + " (replaced by a local tree)"
		}
		return "volcano@" + dep.Version
	}
	return "volcano"
}

// maxRSSKB is the process's peak resident set size so far (Linux reports KiB), 0 if unknown.
func maxRSSKB() int64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return int64(usage.Maxrss)
}
