// Bad input gives "error: ..." and exit code 1, never a crash.
// RUN: not doppler-interpret %s --function arith 2>&1 | FileCheck %s --check-prefix=ARITH
// ARITH: interpret-errors.mlir:{{[0-9]+}}:8: error: 'arith.addf' op is not supported by the interpreter (it runs doppler.einsum, doppler.fused, doppler.slice, doppler.assemble, doppler.reshape, doppler.conv, doppler.pool, doppler.fill, doppler.gather, doppler.transfer, doppler.evict, doppler.reload and func.return)
// RUN: not doppler-interpret %s --function task 2>&1 | FileCheck %s --check-prefix=TASK
// TASK: error: 'doppler.task' op is a cost-only op with opaque values; the interpreter cannot run it
// RUN: not doppler-interpret %s --function dynamic 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC: error: 'func.func' op argument 0 has a dynamic shape 'tensor<?xf32>'; the interpreter needs static shapes
// RUN: not doppler-interpret %s --function integer 2>&1 | FileCheck %s --check-prefix=INTEGER
// INTEGER: error: 'func.func' op argument 0 has element type 'i16'; the interpreter runs float, i32 and i64 tensors only
// RUN: not doppler-interpret %s --function declaration 2>&1 | FileCheck %s --check-prefix=DECLARATION
// DECLARATION: error: function @declaration is a declaration; it has no body to run
// RUN: not doppler-interpret %s --function missing 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: no function named @missing in the module
// RUN: not doppler-interpret %s.nonexistent 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: error: could not open input file {{.*}}.nonexistent
// RUN: not doppler-interpret %s --function arith --tolerance=-1 2>&1 | FileCheck %s --check-prefix=TOLERANCE
// TOLERANCE: error: --tolerance must be a non-negative number
// RUN: echo 'func.func @f(' > %t.bad.mlir
// RUN: not doppler-interpret %t.bad.mlir 2>&1 | FileCheck %s --check-prefix=PARSE
// PARSE: error: expected non-function type
// RUN: not doppler-interpret %s --function declaration --compare %s 2>&1 | FileCheck %s --check-prefix=DECLARATION
// Sizes beyond a reference for small shapes are refused, not attempted.
// RUN: not doppler-interpret %s --function huge 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: 'func.func' op argument 0 of type 'tensor<100000x100000xf32>' has 1e+10 elements, too many for the interpreter
// RUN: not doppler-interpret %s --function long 2>&1 | FileCheck %s --check-prefix=LONG
// LONG: error: 'doppler.einsum' op visits 1e+10 points, too many for the interpreter

func.func @arith(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @task() -> !doppler.value {
  %0 = doppler.task "input" compute(1.0) transfer(1.0)
  return %0 : !doppler.value
}

func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

func.func @integer(%x: tensor<4xi16>) -> tensor<4xi16> {
  return %x : tensor<4xi16>
}

func.func private @declaration(%x: tensor<4xf32>) -> tensor<4xf32>

func.func @huge(%x: tensor<100000x100000xf32>) -> tensor<100000x100000xf32> {
  return %x : tensor<100000x100000xf32>
}

func.func @long(%x: tensor<100000xf32>, %y: tensor<100000xf32>) -> tensor<f32> {
  %0 = doppler.einsum "i,j->" join(mul) agg(add) (%x, %y) : (tensor<100000xf32>, tensor<100000xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Comparisons need a function of the same name and signature in the other
// file, and fail when an output differs by more than the tolerance.
// RUN: %python %doppler_src/examples/generate_examples.py mlp --batch 4 --d-in 8 --hidden 16 --d-out 4 > %t.mlp.mlir
// RUN: %python %doppler_src/examples/generate_examples.py mlp --batch 4 --d-in 8 --hidden 16 --d-out 8 > %t.wide.mlir
// RUN: not doppler-interpret %t.mlp.mlir --compare %t.wide.mlir 2>&1 | FileCheck %s --check-prefix=SIGNATURE
// SIGNATURE: error: function @mlp has type '(tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>' in '{{.*}}wide.mlir' but '(tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>' in '{{.*}}mlp.mlir'; outputs can only be compared between functions of the same signature
// RUN: not doppler-interpret %t.mlp.mlir --compare %s 2>&1 | FileCheck %s --check-prefix=NONAME
// NONAME: interpret-errors.mlir:0:0: error: no function named @mlp in the module
// RUN: sed -e 's/join(gelu)/join(relu)/' %t.mlp.mlir > %t.relu.mlir
// RUN: not doppler-interpret %t.relu.mlir --compare %t.mlp.mlir | FileCheck %s --check-prefix=DIFFERENT
// RUN: not doppler-interpret %t.relu.mlir --compare %t.mlp.mlir --json | FileCheck %s --check-prefix=DIFFERENT-JSON
// DIFFERENT: output 0: tensor<4x4xf32> sum {{.*}} rel-error [[ERR:[0-9.e-]+]]
// DIFFERENT-NEXT: compared with '{{.*}}mlp.mlir': max rel-error [[ERR]] > tolerance 1e-05: FAILED
// DIFFERENT-JSON: "ok": false
// A large enough tolerance accepts the difference.
// RUN: doppler-interpret %t.relu.mlir --compare %t.mlp.mlir --tolerance 10 | FileCheck %s --check-prefix=LOOSE
// LOOSE: <= tolerance 10: ok
