// celoracle evaluates DRA device selector expressions with Kubernetes' own CEL
// compiler (k8s.io/dynamic-resource-allocation/cel, as the v1.36 scheduler builds
// it: consumable capacity on, list-type attributes off). It reads one JSON case per
// line on stdin and writes one JSON answer per line: the compile error, or the
// result, or the runtime error. schedcheck's tests keep its answers in
// tests/data/cel_table.json (regenerate with tests/data/regen_cel_table.py).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	dracel "k8s.io/dynamic-resource-allocation/cel"
)

type attribute struct {
	Int     *int64  `json:"int,omitempty"`
	Bool    *bool   `json:"bool,omitempty"`
	String  *string `json:"string,omitempty"`
	Version *string `json:"version,omitempty"`
}

type device struct {
	Driver     string               `json:"driver"`
	Multi      bool                 `json:"allowMultipleAllocations"`
	Attributes map[string]attribute `json:"attributes"`
	Capacity   map[string]string    `json:"capacity"`
}

type request struct {
	Expression string `json:"expression"`
	Device     device `json:"device"`
}

type answer struct {
	Expression   string `json:"expression"`
	CompileError string `json:"compile_error,omitempty"`
	RuntimeError string `json:"runtime_error,omitempty"`
	Result       *bool  `json:"result,omitempty"`
}

func main() {
	compiler := dracel.GetCompiler(dracel.Features{EnableConsumableCapacity: true})
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		ans := answer{Expression: req.Expression}
		compiled := compiler.CompileCELExpression(req.Expression, dracel.Options{})
		if compiled.Error != nil {
			ans.CompileError = compiled.Error.Error()
			_ = out.Encode(ans)
			continue
		}
		dev := dracel.Device{Driver: req.Device.Driver, AllowMultipleAllocations: ptr.To(req.Device.Multi),
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{},
			Capacity:   map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{}}
		for name, a := range req.Device.Attributes {
			dev.Attributes[resourceapi.QualifiedName(name)] = resourceapi.DeviceAttribute{
				IntValue: a.Int, BoolValue: a.Bool, StringValue: a.String, VersionValue: a.Version}
		}
		for name, q := range req.Device.Capacity {
			dev.Capacity[resourceapi.QualifiedName(name)] = resourceapi.DeviceCapacity{Value: resource.MustParse(q)}
		}
		matches, _, err := compiled.DeviceMatches(context.Background(), dev)
		if err != nil {
			ans.RuntimeError = err.Error()
		} else {
			ans.Result = ptr.To(matches)
		}
		_ = out.Encode(ans)
	}
}
