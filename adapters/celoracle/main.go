// celoracle evaluates DRA device selector expressions with Kubernetes' own CEL
// compiler (k8s.io/dynamic-resource-allocation/cel, as the v1.36 API server and
// scheduler build it: consumable capacity on, list-type attributes off). It reads
// one JSON case per line on stdin and writes one JSON answer per line:
//   - admission: what the API server's validation says of a new selector (the
//     NewExpressions environment, then the estimated cost against the limit):
//     admission_error, or max_cost, the worst-case estimate;
//   - scheduling: what the scheduler's allocator does with it (the
//     StoredExpressions environment, no estimate, the runtime cost limit): the
//     compile error, or the result or the runtime error, with actual_cost.
//
// schedcheck's tests keep its answers in tests/data/cel_table.json (regenerate
// with tests/data/regen_cel_table.py).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/apiserver/pkg/cel/environment"

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
	Expression     string  `json:"expression"`
	AdmissionError string  `json:"admission_error,omitempty"`
	MaxCost        *uint64 `json:"max_cost,omitempty"`
	CompileError   string  `json:"compile_error,omitempty"`
	RuntimeError   string  `json:"runtime_error,omitempty"`
	Result         *bool   `json:"result,omitempty"`
	ActualCost     *uint64 `json:"actual_cost,omitempty"`
}

type celCompiler interface {
	CompileCELExpression(string, dracel.Options) dracel.CompilationResult
}

// compile runs CompileCELExpression, turning a panic (cel-go's homogeneous-literal
// validator panics on an optional element of a dynamic type) into the error text
// "panic: ..." (the API server's handler recovers it; the request fails).
func compile(compiler celCompiler, expression string, options dracel.Options) (result dracel.CompilationResult, panicked string) {
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprintf("panic: %v", r)
		}
	}()
	return compiler.CompileCELExpression(expression, options), ""
}

// admit is the API server's check of a new selector (validateCELSelector).
func admit(compiler celCompiler, expression string, ans *answer) {
	if len(expression) > resourceapi.CELSelectorExpressionMaxLength {
		ans.AdmissionError = fmt.Sprintf("may not be longer than %d", resourceapi.CELSelectorExpressionMaxLength)
		return
	}
	envType := environment.NewExpressions
	result, panicked := compile(compiler, expression, dracel.Options{EnvType: &envType})
	switch {
	case panicked != "":
		ans.AdmissionError = panicked
	case result.Error != nil:
		ans.AdmissionError = result.Error.Error()
	case result.MaxCost > resourceapi.CELSelectorExpressionMaxCost:
		ans.AdmissionError = "too complex, exceeds cost limit"
		ans.MaxCost = ptr.To(result.MaxCost)
	default:
		ans.MaxCost = ptr.To(result.MaxCost)
	}
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
		admit(compiler, req.Expression, &ans)
		// The scheduler's cache compiles without an estimate (StoredExpressions).
		compiled, panicked := compile(compiler, req.Expression, dracel.Options{DisableCostEstimation: true})
		if panicked != "" {
			ans.CompileError = panicked
			_ = out.Encode(ans)
			continue
		}
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
		matches, details, err := compiled.DeviceMatches(context.Background(), dev)
		ans.ActualCost = details.ActualCost()
		if err != nil {
			ans.RuntimeError = err.Error()
		} else {
			ans.Result = ptr.To(matches)
		}
		_ = out.Encode(ans)
	}
}
