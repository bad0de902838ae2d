// yamloracle decodes device ConfigMap documents (the `device-config.yaml` text deviceshare reads) with
// gopkg.in/yaml.v2 v2.4.0, the library and version upstream's scheduler decodes them with, into a Go type of
// the same shape as upstream's device Config (field names, Go types and yaml keys as in
// pkg/scheduler/api/devices/config; the vnpus section taken as a mapping or, failing that, as a bare list).
// It reads one JSON string per line on stdin and writes one JSON answer per line: {"error": text} where
// Unmarshal fails (upstream then uses its default config), else {"config": the decoded values}.
// schedcheck's tests keep its answers in tests/data/device_config_table.json (regenerate with
// tests/data/regen_device_config_table.py).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"

	"gopkg.in/yaml.v2"
)

type migInstance struct {
	Name   string `yaml:"name"`
	Memory uint   `yaml:"memory"`
	Count  int    `yaml:"count"`
}

type migGroup struct {
	Group     string        `yaml:"group"`
	Instances []migInstance `yaml:"geometries"`
}

type migModels struct {
	Models []string   `yaml:"models"`
	Groups []migGroup `yaml:"allowedGeometries"`
}

type nvidia struct {
	CountName            string      `yaml:"resourceCountName"`
	MemoryName           string      `yaml:"resourceMemoryName"`
	CoreName             string      `yaml:"resourceCoreName"`
	MemoryPercentageName string      `yaml:"resourceMemoryPercentageName"`
	PriorityName         string      `yaml:"resourcePriorityName"`
	OverwriteEnv         bool        `yaml:"overwriteEnv"`
	DefaultMemory        uint        `yaml:"defaultMemory"`
	DefaultCores         uint        `yaml:"defaultCores"`
	DefaultGPUNum        uint        `yaml:"defaultGPUNum"`
	SplitCount           uint        `yaml:"deviceSplitCount"`
	MemoryScaling        float64     `yaml:"deviceMemoryScaling"`
	CoreScaling          float64     `yaml:"deviceCoreScaling"`
	DisableCoreLimit     bool        `yaml:"disableCoreLimit"`
	MigModels            []migModels `yaml:"knownMigGeometries"`
	MemoryFactor         uint        `yaml:"gpuMemoryFactor"`
}

type vnpuTemplate struct {
	Name   string `yaml:"name"`
	Memory int64  `yaml:"memory"`
	AICore int32  `yaml:"aiCore"`
	AICPU  int32  `yaml:"aiCPU"`
}

type vnpuKind struct {
	CommonWord         string         `yaml:"commonWord"`
	ChipName           string         `yaml:"chipName"`
	ResourceName       string         `yaml:"resourceName"`
	ResourceMemoryName string         `yaml:"resourceMemoryName"`
	MemoryAllocatable  int64          `yaml:"memoryAllocatable"`
	MemoryCapacity     int64          `yaml:"memoryCapacity"`
	AICore             int32          `yaml:"aiCore"`
	AICPU              int32          `yaml:"aiCPU"`
	Templates          []vnpuTemplate `yaml:"templates"`
}

type vnpus struct {
	HamiCore bool       `yaml:"hamiVnpuCore"`
	Kinds    []vnpuKind `yaml:"configs"`
}

// UnmarshalYAML: a node that decodes as a string-keyed map is read as the {hamiVnpuCore, configs} form;
// any other as the older bare list of kinds.
func (v *vnpus) UnmarshalYAML(decode func(interface{}) error) error {
	var probe map[string]interface{}
	if decode(&probe) == nil {
		type plain vnpus
		var p plain
		if err := decode(&p); err != nil {
			return fmt.Errorf("vnpus as a mapping: %w", err)
		}
		*v = vnpus(p)
		return nil
	}
	var kinds []vnpuKind
	if err := decode(&kinds); err != nil {
		return fmt.Errorf("vnpus as a list: %w", err)
	}
	*v = vnpus{Kinds: kinds}
	return nil
}

type config struct {
	Nvidia nvidia `yaml:"nvidia"`
	VNPUs  vnpus  `yaml:"vnpus"`
}

func answer(text string) map[string]any {
	var c config
	if err := yaml.Unmarshal([]byte(text), &c); err != nil {
		return map[string]any{"error": err.Error()}
	}
	for _, f := range []float64{c.Nvidia.MemoryScaling, c.Nvidia.CoreScaling} {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return map[string]any{"error": nil, "unrepresentable": true} // JSON has no such number
		}
	}
	return map[string]any{"config": c}
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var text string
		if err := json.Unmarshal(in.Bytes(), &text); err != nil {
			fmt.Fprintln(os.Stderr, errors.New("each line must be a JSON string"))
			os.Exit(2)
		}
		if err := out.Encode(answer(text)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
