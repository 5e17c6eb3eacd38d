//===- Passes.td - Doppler conversion passes ---------------*- tablegen -*-===//
//
// Every pass that converts between the doppler dialect and another
// representation: linalg, LLVM calls of the runtime's C API. One folder per
// direction in lib/Conversion/<From>To<To>/, tests in
// test/Conversion/<From>To<To>/.
//
//===----------------------------------------------------------------------===//

#ifndef DOPPLER_CONVERSION_PASSES_TD
#define DOPPLER_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// DopplerToRuntime
//===----------------------------------------------------------------------===//

def DopplerLowerToRuntimePass : Pass<"doppler-lower-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower placed functions to calls of the runtime's C API";
  let description = [{
    Replaces every placed function `@f` (every op has `doppler.device`,
    every use across devices goes through a `doppler.transfer`) by an LLVM
    dialect function `@doppler_build_f(%graph: !llvm.ptr) -> i32` that adds
    the same tasks to a runtime graph through the C API of
    `runtime/include/doppler/runtime/CApi.h` (`dopplerRtGraphAddInput`,
    `...AddEinsum`, `...AddTransfer`, ...; specs and shapes are
    `llvm.mlir.global` constants) and returns 0, or -1 at the first call
    that fails (message: `dopplerRtGraphError`). The graph is the one
    `doppler-run` builds from the same function (RuntimeProgram): arguments
    become one graph input per device that reads them (with
    `inputs=first-user`, one on the first user's device), results become
    outputs, simulated start times become priorities.

    With `entry=main`, also emits `llvm.func @main() -> i32` that creates a
    graph, builds it, optionally writes it as a plan (`plan=FILE`), runs it
    on `devices` CPU devices with the seeded inputs of `doppler-run` and
    `doppler-interpret` (`seed`), prints one line per output
    (`output 0: f32[16x24] sum ... l2 ...`), optionally writes the outputs
    as JSON (`outputs=FILE`, for `doppler-run --compare-outputs`), and
    returns 0 (1 on failure). The result is pure LLVM dialect:

    ```sh
    doppler-opt placed.mlir --doppler-lower-to-runtime="entry=main" -o lowered.mlir
    mlir-runner lowered.mlir -e main -entry-point-result=i32 \
        --shared-libs=build/lib/libDopplerRuntimeC.so
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Also emit this entry point (e.g. main); empty: none">,
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The function the entry point runs (default: the first lowered)">,
    Option<"devices", "devices", "int", /*default=*/"0",
           "Entry point: CPU devices (0: the highest device id used + 1)">,
    Option<"seed", "seed", "uint64_t", /*default=*/"0",
           "Entry point: seed of the random inputs">,
    Option<"outputs", "outputs", "std::string", /*default=*/"\"\"",
           "Entry point: write the outputs as JSON to this file">,
    Option<"plan", "plan", "std::string", /*default=*/"\"\"",
           "Entry point: write the task graph as a plan to this file">,
    Option<"delayTasks", "delay-tasks", "bool", /*default=*/"false",
           "Lower cost-only doppler.task ops to delays of their compute cost">,
    Option<"inputs", "inputs", "std::string", /*default=*/"\"every-user\"",
           "Where arguments live: every-user or first-user">,
  ];
  let statistics = [
    Statistic<"numLowered", "functions-lowered", "Functions lowered">,
    Statistic<"numTasks", "tasks", "Runtime tasks the lowered code adds">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// DopplerToLinalg
//===----------------------------------------------------------------------===//

def ConvertDopplerToLinalgPass : Pass<"convert-doppler-to-linalg"> {
  let summary = "Lower doppler ops to linalg on tensors";
  let description = [{
    Rewrites every doppler op with tensor semantics into linalg, tensor,
    arith and math ops on tensors, computing what the reference interpreter
    computes (the same expression per join and aggregation, evaluated in the
    tensors' element type):

    - `doppler.einsum` becomes one `linalg.generic`: loops over the output's
      indices (parallel) then the contracted ones (reduction), one indexing
      map per spec term, the join as its scalar body and, with an
      aggregation, the combination with the output element; the output is a
      `tensor.empty`, filled (`linalg.fill`) with the aggregation's identity
      (0, 1, -inf, +inf) when the spec contracts.
    - `doppler.slice` becomes `tensor.extract_slice`; `doppler.assemble` a
      `tensor.empty` and one `tensor.insert_slice` per block (with
      `assemble-with-concat`, nested `tensor.concat` ops, innermost grid
      dimension first);
      `doppler.fill` a `linalg.fill` of a `tensor.empty`.
    - `doppler.gather` becomes a `linalg.generic` over the result's dims
      that reads the indices at the result's index dims and the table by
      `tensor.extract`, the index cast to `index` and clamped to
      `[0, extent - 1]` (linalg cannot fail: an out-of-range index, an
      error in the interpreter and the runtime, reads the nearest slice); a
      table empty along the axis is an error.
    - `doppler.reshape` becomes `tensor.collapse_shape` or
      `tensor.expand_shape` where it merges or splits groups of dims, else a
      collapse to one dim and an expand from it (`[6, 4] -> [4, 6]`).
    - `doppler.conv` becomes a `tensor.pad` of its input (zeros; only when
      it pads), a zero-filled init and the named convolution of its layout:
      `linalg.conv_1d_ncw_fcw` / `conv_2d_nchw_fchw` / `conv_3d_ncdhw_fcdhw`
      (groups 1), `depthwise_conv_1d_ncw_cw` / `2d_nchw_chw` /
      `3d_ncdhw_cdhw` (F == C == groups, the weight collapsed to
      [C, K..]), `conv_2d_ngchw_gfchw` on expanded input, weight and
      result (other groups, 2-d), else a `linalg.generic` with the same
      expanded maps. `doppler.pool` becomes a `tensor.pad` (-inf for max,
      zeros for avg), an init of -inf or 0, a `tensor.empty` window of the
      kernel's shape and `linalg.pooling_ncw_{max,sum}` /
      `pooling_nchw_{max,sum}` (3-d: a `linalg.generic`); an average is
      then divided by the kernel's volume by one more `linalg.generic`.
      `convert-linalg-to-doppler` gives back the same op.
    - `doppler.transfer` stays: it is the only way to say "move" in MLIR's
      upstream dialects (`doppler-translate --export-iree` turns it into
      IREE's `flow.tensor.transfer`).

    Every produced op keeps the source op's location and `doppler.device`,
    so a placed program stays placed. `doppler.task` (opaque cost-only
    values) and values of opaque or dynamically shaped types cannot be
    lowered: one error per op, and the pass fails.

    ```mlir
    %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b)
        {doppler.device = #doppler.device<1>}
        : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
    // becomes
    %e = tensor.empty() {doppler.device = #doppler.device<1>} : tensor<4x2xf32>
    %z = arith.constant {doppler.device = #doppler.device<1>} 0.0 : f32
    %f = linalg.fill {doppler.device = #doppler.device<1>}
        ins(%z : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
    %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                          affine_map<(d0, d1, d2) -> (d2, d1)>,
                                          affine_map<(d0, d1, d2) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%f : tensor<4x2xf32>)
        attrs = {doppler.device = #doppler.device<1>} {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<4x2xf32>
    ```
  }];
  let options = [
    Option<"assembleWithConcat", "assemble-with-concat", "bool",
           /*default=*/"false",
           "Lower doppler.assemble to nested tensor.concat ops instead of "
           "tensor.insert_slice's into a tensor.empty">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

//===----------------------------------------------------------------------===//
// LinalgToDoppler
//===----------------------------------------------------------------------===//

def ConvertLinalgToDopplerPass
    : Pass<"convert-linalg-to-doppler", "::mlir::ModuleOp"> {
  let summary = "Rewrite linalg and tensor ops on static tensors into "
                "doppler einsums, fills, slices and assembles";
  let description = [{
    Brings linalg on tensors (what torch-mlir and IREE's input pipelines
    produce) into the doppler dialect so that it can be decomposed, costed,
    placed and run.

    - Every structured op (`linalg.generic`, `linalg.matmul` with or without
      `indexing_maps`, `batch_matmul`, `batch_reduce_matmul`, `matvec`,
      `vecmat`, `dot`, `contract`, `transpose`, `broadcast`, `copy`, `map`,
      `reduce`, `elementwise` and the named elementwise ops) whose indexing
      maps are projected permutations (constant 0 on unit dims allowed, on
      the output too: keepdim reductions) and whose body is built of
      recognised scalar ops becomes a chain of
      `doppler.einsum`s: arith add/sub/mul/div/max/min/neg, math
      exp/log/sqrt/rsqrt/tanh/erf/abs/powf, select+cmpf forms of max, min and
      relu. Constants become `scale`/`shift` joins (or a rank-0
      `doppler.fill` operand); single-input sub-expressions that compute
      sigmoid, silu (x*sigmoid(x), x/(1+exp(-x))), gelu (tanh form) or relu
      become one einsum with that join. Reduction dims become the einsum's
      aggregation (add, mul, max, min). Float casts of constants are folded;
      `extf` from / `truncf` to the element type are computed through. Of an
      op with several results, the one used is converted (torch's max with
      indices).
    - The `outs` operand is kept exact: a `linalg.fill`/`doppler.fill`/splat
      init equal to the aggregation's identity is dropped, any other init of
      a reduction is combined with the result by one more einsum; the init of
      a parallel op is dropped unless its body reads it.
    - `linalg.fill` with a constant, `linalg.softmax` (max, sub, exp, sum,
      div einsums), and on static shapes `tensor.extract_slice`,
      `insert_slice`, `pad` (constant), `concat`, and `expand_shape` /
      `collapse_shape` / `tensor.reshape` (one `doppler.reshape` each,
      e.g. attention heads split or merged, unit dims added or dropped).
    - Convolutions and pools, named (`conv_*`, `depthwise_conv_*`,
      `pooling_*_{max,sum}`, NCHW or NHWC, grouped `ngchw`) or
      `linalg.generic`, recognised from their maps (one input read at
      `o * stride + k * dilation`) and bodies (`acc + x * w`,
      `max(acc, x)`, `acc + x`): one `doppler.conv` / `doppler.pool`, with
      identity-join einsums (transposes) and `doppler.reshape`s around it
      where the layout is not channels first; strides and dilations map
      1:1. A `tensor.pad` of 0 (-inf for a max pool) on the spatial dims
      feeding the op becomes its padding (a pad of another value converts
      as a pad); a sum pool whose only user divides it by the kernel's
      volume becomes `doppler.pool avg`; another sum pool an average pool
      scaled by the volume where that is exact (a power of two), else a
      depthwise `doppler.conv` with a weight of ones. An init other than 0
      (-inf) is combined by one more einsum (torch-mlir's bias in the
      init).

    - Before the patterns (lib/Conversion/LinalgToDoppler/Prepare.h): an op
      whose operands are all constants (iota, `arange`, comparisons and
      boolean logic of masks, integer index arithmetic, i1/i64 fills,
      gathers and `tm_tensor.scan`s of constants, casts, sin/cos tables) is
      evaluated into one constant (`doppler.fill` when uniform, else an
      `arith.constant` dense) of at most `fold-limit` elements; a `select`
      on a constant i1 mask becomes float arithmetic with 0/1 and fill
      constants (as the PyTorch frontend writes `where`); torch's safe
      softmax (`where(all(x == -inf), 0, softmax(x))`) a softmax with its
      row max clamped to the lowest finite value and 1e-30 added to its
      sum; an f32 -> f64 -> f32 island (torch-mlir's LayerNorm variance) is
      computed in f32. Integer and i1 tensors still computed after that
      (from the model's integer inputs: padding masks, positions, their
      cumsums) are carried as f64 tensors of the same values: their ops are
      rewritten on floats (comparisons -> the eq/ne/lt/le/gt/ge joins,
      `select` -> where joins, integer arithmetic -> float, a
      `tm_tensor.scan` -> a contraction with a 0/1 triangle), integer
      operands converted by conversion einsums (exact or an error where
      they run). A generic yielding `tensor.extract` of a table at an
      integer (or carried) input along one axis, batched or not, or at
      positions computed from constants and loops only, becomes one
      `doppler.gather`.
    What cannot be converted stays as it is (it is placed and costed through
    the WorkOpInterface models of `registerLinalgWorkModels`). A remark on
    each function lists the ops converted and left, by kind, whenever some
    op is left or `report` is set; with `full`, every linalg op left is an
    error naming it and the reason.

    ```mlir
    %0 = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
    %1 = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>)
                       outs(%0 : tensor<8x32xf32>) -> tensor<8x32xf32>
    // becomes
    %1 = doppler.einsum "ik,kj->ij" join(mul) agg(add) (%a, %b)
        : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    ```
  }];
  let options = [
    Option<"full", "full", "bool", /*default=*/"false",
           "Fail on every linalg op that cannot be converted">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Remark on every function, also when nothing is left">,
    Option<"erfGelu", "erf-gelu-as-tanh", "bool", /*default=*/"false",
           "Convert the erf form of gelu to the gelu join (its tanh "
           "approximation: differs by up to about 5e-4)">,
    Option<"foldLimit", "fold-limit", "int64_t", /*default=*/"65536",
           "Most elements of the constant an op computed from constants "
           "only is folded into">,
  ];
  let statistics = [
    Statistic<"numConverted", "ops-converted", "linalg/tensor ops converted">,
    Statistic<"numLeft", "ops-left", "linalg/tensor ops left unconverted">,
    Statistic<"numEinsums", "einsums-created", "doppler.einsum ops created">,
  ];
  let dependentDialects = [
    "::mlir::doppler::DopplerDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // DOPPLER_CONVERSION_PASSES_TD
