//===- DopplerOps.td - Doppler operations ------------------*- tablegen -*-===//

#ifndef DOPPLER_DIALECT_DOPPLEROPS_TD
#define DOPPLER_DIALECT_DOPPLEROPS_TD

include "Doppler/Dialect/DopplerBase.td"
include "Doppler/Dialect/DopplerAttrs.td"
include "Doppler/Dialect/DopplerTypes.td"
include "Doppler/Dialect/DopplerInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"

defvar Doppler_FloatTensor = RankedTensorOf<[AnyFloat]>;
defvar Doppler_Tensor = RankedTensorOf<[AnyType]>;
// An einsum's operand: a float tensor, or an i32/i64 one converted by an
// identity einsum (see the einsum's description).
defvar Doppler_EinsumOperand = RankedTensorOf<[AnyFloat, I32, I64]>;

//===----------------------------------------------------------------------===//
// einsum
//===----------------------------------------------------------------------===//

def Doppler_EinsumOp : Doppler_Op<"einsum", [
    Pure, DeclareOpInterfaceMethods<Doppler_WorkOpInterface>]> {
  let summary = "an einsum with a scalar join and an optional aggregation";
  let description = [{
    The core op. The spec names an index per dimension of each input and of
    the output (`"bij,bjk->bik"`). For every point of the iteration space
    (all indices), the *join* is applied to one element of each input; where
    the spec contracts indices (they appear in inputs but not in the
    output), the *aggregation* combines the joined values of all points that
    map to the same output element.

    ```mlir
    // Batched matmul.
    %c = doppler.einsum "bij,bjk->bik" join(mul) agg(add) (%a, %b)
        : (tensor<4x64x128xf32>, tensor<4x128x32xf32>) -> tensor<4x64x32xf32>
    // Row-wise max (softmax's first step), a broadcast subtract, a scale.
    %m = doppler.einsum "ij->i" join(identity) agg(max) (%x)
        : (tensor<8x16xf32>) -> tensor<8xf32>
    %d = doppler.einsum "ij,i->ij" join(sub) (%x, %m)
        : (tensor<8x16xf32>, tensor<8xf32>) -> tensor<8x16xf32>
    %s = doppler.einsum "ij->ij" join(scale, 1.250000e-01) (%d)
        : (tensor<8x16xf32>) -> tensor<8x16xf32>
    ```

    Comparisons and masks (integers and booleans computed from data are
    carried as floats, exactly): `eq`, `ne`, `lt`, `le`, `gt`, `ge` give 1.0
    where the comparison holds and 0.0 elsewhere (a NaN operand: 0.0, but
    1.0 for `ne`); `where(c, x)` is `x` where `c != 0` (NaN included) and
    -0.0 elsewhere, so that `where(c, a) + where(eq(c, 0), b)` selects `a`
    or `b` exactly, infinities, NaN and signed zeros included. On 0/1
    values `mul` is `and`, `max` is `or`, `ne` is `xor`.

    A *conversion* is the identity join over one input whose term is the
    output's (`"ij->ij"`) with a result of another element type: from i32,
    i64 or a float to a float. An integer converts exactly or the op fails
    where it runs, naming it (beyond 2^53 for f64, 2^24 for f32); a float
    rounds to the nearest value of the result's type. Only a conversion
    takes integer operands.

    ```mlir
    // An attention mask (i64 input) as a 0/1 float: != 0.
    %m = doppler.einsum "bt->bt" join(identity) (%mask)
        : (tensor<2x8xi64>) -> tensor<2x8xf64>
    %z = doppler.fill 0.000000e+00 : tensor<f64>
    %k = doppler.einsum "bt,->bt" join(ne) (%m, %z)
        : (tensor<2x8xf64>, tensor<f64>) -> tensor<2x8xf64>
    ```

    Rules the verifier enforces: the spec parses (single-letter indices, one
    `->`, no index twice in a term, every output index in some input); one
    operand per input term with matching rank; an index has one extent
    everywhere; the result shape is the one the spec implies; the join's
    arity equals the operand count; `scale` and `shift` carry a scalar and no
    other join does; an aggregation is present exactly when the spec
    contracts; all element types agree but in a conversion (identity join,
    one operand, its term the output's, a float result); shapes are static.
  }];
  let arguments = (ins StrAttr:$spec, Doppler_JoinKindAttr:$join,
                   OptionalAttr<Doppler_AggKindAttr>:$aggregation,
                   OptionalAttr<F64Attr>:$scalar,
                   Variadic<Doppler_EinsumOperand>:$inputs);
  let results = (outs Doppler_FloatTensor:$output);
  let assemblyFormat = [{
    $spec custom<JoinAndAggregation>($join, $scalar, $aggregation)
    ` ` `(` $inputs `)` attr-dict `:` functional-type($inputs, $output)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// The parsed spec. Only call on a verified op.
    ::doppler::EinsumSpec getParsedSpec();
    /// Index extents. Only call on a verified op.
    ::doppler::IndexSizes getIndexSizes();
  }];
}

//===----------------------------------------------------------------------===//
// fused
//===----------------------------------------------------------------------===//

def Doppler_FusedOp : Doppler_Op<"fused", [
    Pure, DeclareOpInterfaceMethods<Doppler_WorkOpInterface>]> {
  let summary = "a chain of elementwise joins applied as one op";
  let description = [{
    What `doppler-fuse-elementwise` makes of a producer-consumer chain of
    elementwise einsums: for every point of the output's index space, the
    *join program* is applied to one element of each input (broadcast along
    the indices an input lacks, as in an einsum) and its last step is the
    output element. The intermediate values never exist as tensors, so the
    op reads its inputs and writes its output once; the cost model, the
    simulator and the placement see one op, and the runtime runs one kernel.

    ```mlir
    // Bias add then GELU.
    %y = doppler.fused "bh,h->bh" "add(in0, in1); gelu(s0)" (%x, %b)
        : (tensor<512x4096xf32>, tensor<4096xf32>) -> tensor<512x4096xf32>
    // SwiGLU's gate: silu(g) * u.
    %z = doppler.fused "ij,ij->ij" "silu(in0); mul(s0, in1)" (%g, %u)
        : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    ```

    The program's text: steps separated by `;`, each `join(operands)` with
    operands `inN` (input N) or `sN` (step N's result), and the scalar of
    `scale`/`shift` last (`scale(s0, 0.5)`); every input and every step but
    the last is read. Rules the verifier enforces: the spec parses and
    contracts no index; one operand per input term with matching rank; an
    index has one extent everywhere; the result shape is the one the spec
    implies; the program is valid for that many inputs (at most 64 steps);
    all element types agree; shapes are static.
  }];
  let arguments = (ins StrAttr:$spec, StrAttr:$program,
                   Variadic<Doppler_FloatTensor>:$inputs);
  let results = (outs Doppler_FloatTensor:$output);
  let assemblyFormat = [{
    $spec $program ` ` `(` $inputs `)` attr-dict `:`
    functional-type($inputs, $output)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The parsed spec. Only call on a verified op.
    ::doppler::EinsumSpec getParsedSpec();
    /// Index extents. Only call on a verified op.
    ::doppler::IndexSizes getIndexSizes();
    /// The parsed join program. Only call on a verified op.
    ::doppler::JoinProgram getParsedProgram();
  }];
}

//===----------------------------------------------------------------------===//
// Decomposition glue
//===----------------------------------------------------------------------===//

def Doppler_SliceOp : Doppler_Op<"slice", [
    Pure, DeclareOpInterfaceMethods<Doppler_WorkOpInterface>]> {
  let summary = "a static block of a tensor";
  let description = [{
    Takes the block of `input` that starts at `offsets` and has the shape of
    the result.

    ```mlir
    %b = doppler.slice %x [0, 64] : tensor<128x128xf32> to tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Doppler_Tensor:$input, DenseI64ArrayAttr:$offsets);
  let results = (outs Doppler_Tensor:$result);
  let assemblyFormat = [{
    $input $offsets attr-dict `:` type($input) `to` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Doppler_AssembleOp : Doppler_Op<"assemble", [
    Pure, DeclareOpInterfaceMethods<Doppler_WorkOpInterface>]> {
  let summary = "a tensor assembled from a grid of blocks";
  let description = [{
    Concatenates blocks laid out on a grid (`grid` gives the number of
    blocks along each dimension; blocks are listed in row-major grid order)
    into one tensor. Blocks in the same grid row of a dimension share their
    extent along it; extents along a dimension add up to the result's.

    ```mlir
    %x = doppler.assemble [1, 2] (%left, %right)
        : tensor<128x64xf32>, tensor<128x64xf32> -> tensor<128x128xf32>
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$grid, Variadic<Doppler_Tensor>:$blocks);
  let results = (outs Doppler_Tensor:$result);
  let assemblyFormat = [{
    $grid ` ` `(` $blocks `)` attr-dict `:` type($blocks) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// Offsets of block `index` in the result. Only call on a verified op.
    ::llvm::SmallVector<int64_t> getBlockOffsets(unsigned index);
  }];
}

def Doppler_ReshapeOp : Doppler_Op<"reshape", [
    Pure, DeclareOpInterfaceMethods<Doppler_WorkOpInterface>]> {
  let summary = "a row-major reshape to another static shape";
  let description = [{
    The elements of `input` in row-major order, read as a tensor of the
    result's shape: a view that splits or merges dimensions (a multi-head
    attention's `view(B, T, H, E)`, a flatten), or adds or drops unit
    dimensions. No element moves relative to the others; the op is one
    copy of the tensor (the runtime copies the buffer), costed as such
    (no FLOPs, the tensor's bytes read and written).

    ```mlir
    // Split the channels into heads, then merge batch and sequence.
    %h = doppler.reshape %x : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
    %f = doppler.reshape %x : tensor<2x8x32xf32> -> tensor<16x32xf32>
    ```

    Rules the verifier enforces: both shapes are static; the element types
    agree; the element counts agree. `doppler-decompose` reshapes block by
    block where the input's blocks stay contiguous runs of the result, and
    keeps the reshape whole (on the gathered input) otherwise.
  }];
  let arguments = (ins Doppler_Tensor:$input);
  let results = (outs Doppler_Tensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Sliding windows: convolution and pooling
//===----------------------------------------------------------------------===//

def Doppler_ConvOp : Doppler_Op<"conv", [
    Pure, DeclareOpInterfaceMethods<Doppler_WorkOpInterface>]> {
  let summary = "a convolution over 1 to 3 spatial dims, channels first";
  let description = [{
    A (cross-correlation) convolution as deep-learning frameworks define it:
    `input` is [N, C, S1 .. Sk] (k = 1, 2 or 3 spatial dims), `weight` is
    [F, C / groups, K1 .. Kk] and the result [N, F, O1 .. Ok], with

    `O_j = (S_j + low_j + high_j - dilations_j * (K_j - 1) - 1) / strides_j + 1`

    `padding` lists the low padding of each spatial dim, then the high
    padding of each (zeros). With `groups` G, input and output channels
    split into G equal groups and output channel f reads the input channels
    of group f / (F / G) only (G = C = F: a depthwise convolution). A bias
    is a separate broadcast add.

    ```mlir
    // ResNet's 3x3 convolution, stride 1, padded by 1.
    %y = doppler.conv %x, %w strides [1, 1] dilations [1, 1]
        padding [1, 1, 1, 1] groups 1
        : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>)
        -> tensor<1x64x56x56xf32>
    // ConvNeXt's 7x7 depthwise convolution.
    %d = doppler.conv %x, %k strides [1, 1] dilations [1, 1]
        padding [3, 3, 3, 3] groups 96
        : (tensor<1x96x56x56xf32>, tensor<96x1x7x7xf32>)
        -> tensor<1x96x56x56xf32>
    ```

    Costed as what it is: 2 N F prod(O) (C / G) prod(K) FLOPs, the input
    and the weight read once, the result written once. `doppler-decompose`
    splits it over the batch, over output channels (whole groups of them
    where G > 1) and over the first spatial dim (each tile reads its input
    rows with their halo), never into per-offset einsums.

    Rules the verifier enforces (include/Doppler/Support/Window.h): static
    shapes of one floating-point element type; ranks 2 + k; 1 to 3 spatial
    dims with one stride, dilation and low and high padding each; kernel,
    strides and dilations at least 1, padding at least 0; G divides C and F
    and the weight has C / G input channels; the padded input holds one
    dilated kernel; the result shape is the one above.
  }];
  let arguments = (ins Doppler_FloatTensor:$input, Doppler_FloatTensor:$weight,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$padding, I64Attr:$groups);
  let results = (outs Doppler_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `strides` $strides `dilations` $dilations
    `padding` $padding `groups` $groups attr-dict `:`
    `(` type($input) `,` type($weight) `)` `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The window geometry (kernel from the weight). Only call on a
    /// verified op.
    ::doppler::WindowGeometry getGeometry();
  }];
}

def Doppler_PoolOp : Doppler_Op<"pool", [
    Pure, DeclareOpInterfaceMethods<Doppler_WorkOpInterface>]> {
  let summary = "max or average pooling over 1 to 3 spatial dims";
  let description = [{
    `input` is [N, C, S1 .. Sk] (k = 1, 2 or 3), the result [N, C, O1 ..
    Ok] with O_j as for `doppler.conv` (kernel extents `kernel`). `max`
    takes the largest element of each window (padding is minus infinity,
    NaN propagates); `avg` divides the window's sum by the kernel's volume,
    padding (zeros) included: PyTorch's `count_include_pad=True`.

    ```mlir
    // ResNet's stem pool: 3x3, stride 2, padded by 1.
    %p = doppler.pool max %x kernel [3, 3] strides [2, 2] dilations [1, 1]
        padding [1, 1, 1, 1] : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
    ```

    Costed as one comparison or add per window element, the input read
    once and the result written once. `doppler-decompose` splits it like a
    depthwise convolution (batch, channels, first spatial dim with halos).

    Rules the verifier enforces: static shapes of one floating-point element
    type; rank 2 + k for k = the kernel's length (1 to 3); one stride,
    dilation and low and high padding per spatial dim; kernel, strides and
    dilations at least 1, padding at least 0; the padded input holds one
    dilated kernel; the result shape is the one above.
  }];
  let arguments = (ins Doppler_PoolKindAttr:$kind, Doppler_FloatTensor:$input,
                   DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$padding);
  let results = (outs Doppler_FloatTensor:$result);
  let assemblyFormat = [{
    custom<PoolKind>($kind) $input `kernel` $kernel `strides` $strides `dilations` $dilations
    `padding` $padding attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The window geometry. Only call on a verified op.
    ::doppler::WindowGeometry getGeometry();
  }];
}

def Doppler_FillOp : Doppler_Op<"fill", [
    Pure, DeclareOpInterfaceMethods<Doppler_WorkOpInterface>]> {
  let summary = "a tensor filled with one constant";
  let description = [{
    ```mlir
    %zeros = doppler.fill 0.000000e+00 : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins F64Attr:$value);
  let results = (outs Doppler_FloatTensor:$result);
  let assemblyFormat = "custom<Number>($value) attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Placement
//===----------------------------------------------------------------------===//

def Doppler_TransferOp : Doppler_Op<"transfer", [
    Pure, AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<Doppler_WorkOpInterface>]> {
  let summary = "an explicit move of a value between devices";
  let description = [{
    Copies `input`, produced on device `source`, to device `target`.
    Inserted after placement, one per (value, destination device).

    ```mlir
    %y = doppler.transfer %x from <0> to <2> : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins AnyType:$input, Doppler_DeviceAttr:$source,
                   Doppler_DeviceAttr:$target);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $input `from` $source `to` $target attr-dict `:` type($input)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Offload (issue 17): device memory as a constraint
//===----------------------------------------------------------------------===//

// Not Pure, and not merged by CSE: an evict or a reload is a copy that
// exists at one point of the schedule (two reloads of one stash after
// different ops are two copies at two times). Both allocate their result
// (host memory for an evict, device memory for a reload) and have no other
// effect, so an op whose result nobody reads is trivially dead: DCE may drop
// an unused reload, and then the evict whose reloads are all gone.
def Doppler_EvictOp : Doppler_Op<"evict", [
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<Doppler_WorkOpInterface>]> {
  let summary = "a copy of a device value to host memory";
  let description = [{
    Copies `input`, produced on device `source`, to host memory, so that the
    device may free its copy once the value's remaining readers on that
    device have run; later readers on the device read a `doppler.reload` of
    the result. The copy starts when `input` is produced (the evict is one
    of its readers). Inserted by `doppler-plan-memory`; placed (as
    `doppler.device`, when present) on `source`, whose link to the host
    carries the copy.

    The result is a host value: only `doppler.reload` may read it.

    ```mlir
    %h = doppler.evict %x from <0> : tensor<1024x1024xf32>
    // ... ops on device 0 that need the memory ...
    %r = doppler.reload %h to <0> after(%t : tensor<1024xf32>)
        : tensor<1024x1024xf32>
    ```

    Rules the verifier enforces: the producer of `input` (when it carries
    `doppler.device`) is on `source`; a `doppler.device` on the op is
    `source`; every user of the result is a `doppler.reload` (so a host
    value is never read as a device value, nor evicted again).
  }];
  let arguments = (ins Doppler_Tensor:$input, Doppler_DeviceAttr:$source);
  let results = (outs Res<Doppler_Tensor, "", [MemAlloc<DefaultResource>]>:$result);
  let assemblyFormat = [{
    $input `from` $source attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Doppler_ReloadOp : Doppler_Op<"reload", [
    AllTypesMatch<["stash", "result"]>,
    DeclareOpInterfaceMethods<Doppler_WorkOpInterface>]> {
  let summary = "a copy of a host value back onto a device";
  let description = [{
    Copies the host value `stash` (a `doppler.evict` result) to device
    `target` once every value of `after` exists. The `after` values are
    control dependencies only (any types; nothing is read from them): the
    reload starts once their producers have finished, which is how
    `doppler-plan-memory` keeps the reload from occupying memory before the
    op it makes room for (its trigger) is done. The result is an ordinary
    value on `target`. Placed (as `doppler.device`, when present) on
    `target`.

    ```mlir
    %r = doppler.reload %h to <0> after(%t0, %t1 : tensor<64xf32>, tensor<8xf32>)
        : tensor<1024x1024xf32>
    %s = doppler.reload %h to <1> : tensor<1024x1024xf32>  // no dependency
    ```

    Rules the verifier enforces: `stash` is a `doppler.evict` result; a
    `doppler.device` on the op is `target`. The target may differ from the
    evict's source (the runtime reloads onto any device);
    `doppler-plan-memory` only reloads onto the source.
  }];
  let arguments = (ins Doppler_Tensor:$stash, Doppler_DeviceAttr:$target,
                   Variadic<AnyType>:$after);
  let results = (outs Res<Doppler_Tensor, "", [MemAlloc<DefaultResource>]>:$result);
  let assemblyFormat = [{
    $stash `to` $target (`after` `(` $after^ `:` type($after) `)`)?
    attr-dict `:` type($stash)
  }];
  let hasVerifier = 1;
}

// Not Pure: two tasks with the same kind, costs and inputs are still two
// nodes of the imported graph (CSE must not merge them), and a task whose
// value nobody reads is still work the graph does (DCE must not drop it).
// With no effect trait, MLIR treats the op as having unknown effects.
def Doppler_TaskOp : Doppler_Op<"task", [
    DeclareOpInterfaceMethods<Doppler_WorkOpInterface>]> {
  let summary = "a cost-only op of an imported graph";
  let description = [{
    An op known only by its costs: `compute` is the time it takes on a
    device and `transfer` the time to move its output to another device, in
    the graph's own units. `kind` is a free label (the reference format's op
    type: input, formation, einsummable, ...). Values are opaque.

    ```mlir
    %0 = doppler.task "input" compute(1.0e+06) transfer(4.0e+06)
    %1 = doppler.task "einsummable" (%0) compute(2.0e+06) transfer(4.0e+06)
    ```
  }];
  let arguments = (ins StrAttr:$kind, F64Attr:$compute, F64Attr:$transfer,
                   Variadic<Doppler_ValueType>:$inputs);
  let results = (outs Doppler_ValueType:$result);
  let assemblyFormat = [{
    $kind (` ` `(` $inputs^ `)`)? `compute` `(` custom<Number>($compute) `)`
    `transfer` `(` custom<Number>($transfer) `)` attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gather: integer indices into a table
//===----------------------------------------------------------------------===//

// Indices: integers, or integers computed from data on a float carrier
// (checked to be integral where the gather runs).
defvar Doppler_IndexTensor = RankedTensorOf<[I32, I64, F32, F64]>;
defvar Doppler_GatherTableTensor = RankedTensorOf<[AnyFloat, I32, I64]>;

def Doppler_GatherOp : Doppler_Op<"gather", [
    Pure, DeclareOpInterfaceMethods<Doppler_WorkOpInterface>]> {
  let summary = "slices of a table picked by integer indices along one axis";
  let description = [{
    `numpy.take(table, indices, axis)`: for every element of `indices` (an
    i32 or i64 tensor of any rank), the slice of `table` at that position
    along `axis`. The result's shape is `table.shape[:axis] + indices.shape
    + table.shape[axis + 1:]`, its element type the table's:

    `result[p, i, q] = table[p, indices[i], q]` (p: the dims before `axis`,
    i: the indices' dims, q: the dims after it).

    An embedding lookup is a gather along axis 0 of the weight;
    `torch.index_select(x, dim, idx)` is one along `dim` with 1-d indices.
    An index outside `[0, table.shape[axis])` (negative ones included) is
    an error where the gather runs (the interpreter, the runtime task),
    never a wrapped read. Indices may also be f32/f64 tensors holding
    integers (indices computed from data, carried as floats: see einsum's
    conversion); a float index that is not an integer (or NaN) is such an
    error too. The CUDA backend takes integer indices only.

    ```mlir
    // An embedding: 2x8 token ids into a 1000x64 table.
    %e = doppler.gather %w[%ids] axis 0
        : tensor<1000x64xf32>, tensor<2x8xi64> -> tensor<2x8x64xf32>
    // index_select along dim 1.
    %s = doppler.gather %x[%idx] axis 1
        : tensor<4x10x3xf32>, tensor<5xi32> -> tensor<4x5x3xf32>
    ```

    Costed as a copy: no FLOPs, the gathered slices and the indices read,
    the result written. `doppler-decompose` splits it along the indices'
    leading dim (each block gathers from the whole table) or keeps it
    whole.

    Rules the verifier enforces: static shapes; the table has rank at least
    1 and `0 <= axis < rank(table)`; the indices are i32, i64, f32 or f64
    (the ODS type constraint) and the table a float (any width, as for einsum; the
    runtime runs f16, f32 and f64 and refuses others when lowering) or
    i32/i64; the result has the table's element type and the shape above. Integer tensors are accepted
    only here (the table and indices of a gather, a gather's result when
    its table is integer), by the layout ops (slice, assemble, reshape,
    transfer), and as function arguments and results: einsum, fused, conv,
    pool and fill take floating-point tensors only.
  }];
  let arguments = (ins Doppler_GatherTableTensor:$table,
                   Doppler_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Doppler_GatherTableTensor:$result);
  let assemblyFormat = [{
    $table `[` $indices `]` `axis` $axis attr-dict `:`
    type($table) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// table[:axis] + indices + table[axis + 1:]; `axis` must be in range.
    static ::llvm::SmallVector<int64_t>
    inferResultShape(::llvm::ArrayRef<int64_t> table,
                     ::llvm::ArrayRef<int64_t> indices, int64_t axis);
  }];
}

#endif // DOPPLER_DIALECT_DOPPLEROPS_TD
