// RUN: doppler-opt %s --split-input-file --verify-diagnostics

func.func @no_arrow(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{invalid spec: spec 'ij' has no '->'}}
  %0 = doppler.einsum "ij" join(relu) (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @two_arrows(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{has more than one '->'}}
  %0 = doppler.einsum "ij->ij->ij" join(relu) (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @bad_character(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{input 0 has invalid character '1' (indices are single letters)}}
  %0 = doppler.einsum "i1->i" join(relu) (%x) : (tensor<4x4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @repeated_input_index(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{index 'i' repeated in input 0}}
  %0 = doppler.einsum "ii->i" join(identity) (%x) : (tensor<4x4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @repeated_output_index(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{index 'i' repeated in the output}}
  %0 = doppler.einsum "ij->ii" join(identity) (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @output_index_not_in_inputs(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{output index 'k' appears in no input}}
  %0 = doppler.einsum "ij->ik" join(identity) (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @dynamic_operand(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{operand 0 has a dynamic shape 'tensor<?x4xf32>'; doppler ops need static shapes}}
  %0 = doppler.einsum "ij->ij" join(relu) (%x) : (tensor<?x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @dynamic_result(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{result has a dynamic shape}}
  %0 = doppler.einsum "ij->ij" join(relu) (%x) : (tensor<4x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{operand #0 must be variadic of ranked tensor of floating-point or 32-bit signless integer or 64-bit signless integer values}}
  %0 = doppler.einsum "ij->ij" join(relu) (%x) : (tensor<*xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @integer_elements(%x: tensor<4xi32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of floating-point values}}
  %0 = doppler.einsum "i->i" join(relu) (%x) : (tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

// An integer operand is taken by a conversion only (masks.mlir).
func.func @integer_operand(%x: tensor<4xi32>) {
  // expected-error @+1 {{operand 0 has element type 'i32' but the result has 'f32' (only a conversion, the identity join over one operand whose term is the output's, changes the element type)}}
  %0 = doppler.einsum "i->i" join(relu) (%x) : (tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @element_type_mismatch(%a: tensor<4x4xf32>, %b: tensor<4x4xf16>) {
  // expected-error @+1 {{operand 1 has element type 'f16' but the result has 'f32'}}
  %0 = doppler.einsum "ij,ij->ij" join(add) (%a, %b) : (tensor<4x4xf32>, tensor<4x4xf16>) -> tensor<4x4xf32>
  return
}

// -----

func.func @operand_count(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{spec 'ij,jk->ik' has 2 input term(s) but 1 operand(s) were given}}
  %0 = doppler.einsum "ij,jk->ik" join(relu) agg(add) (%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @rank_mismatch(%a: tensor<4x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand 1 has rank 1 but its term 'jk' in spec 'ij,jk->ik' has 2 indices}}
  %0 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @index_two_extents(%a: tensor<4x8xf32>, %b: tensor<6x2xf32>) {
  // expected-error @+1 {{index 'j' is bound to both 8 and 6 (operand 1, dimension 0)}}
  %0 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) : (tensor<4x8xf32>, tensor<6x2xf32>) -> tensor<4x2xf32>
  return
}

// -----

func.func @join_arity(%a: tensor<4xf32>) {
  // expected-error @+1 {{join 'mul' takes 2 input(s) but the op has 1}}
  %0 = doppler.einsum "i->i" join(mul) (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @unary_join_two_inputs(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{join 'exp' takes 1 input(s) but the op has 2}}
  %0 = doppler.einsum "i,i->i" join(exp) (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @scale_without_scalar(%a: tensor<4xf32>) {
  // expected-error @+1 {{join 'scale' needs a scalar, e.g. join(scale, 5.0e-01)}}
  %0 = doppler.einsum "i->i" join(scale) (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @scalar_on_plain_join(%a: tensor<4xf32>) {
  // expected-error @+1 {{join 'relu' takes no scalar}}
  %0 = doppler.einsum "i->i" join(relu, 2.0) (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @infinite_scalar(%a: tensor<4xf32>) {
  // expected-error @+1 {{scalar must be finite}}
  %0 = doppler.einsum "i->i" join(scale, 0x7FF0000000000000) (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @missing_aggregation(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) {
  // expected-error @+1 {{spec 'ij,jk->ik' contracts index(es) 'j' but no aggregation is given (e.g. agg(add))}}
  %0 = doppler.einsum "ij,jk->ik" join(mul) (%a, %b) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return
}

// -----

func.func @superfluous_aggregation(%a: tensor<4xf32>) {
  // expected-error @+1 {{has aggregation 'max' but spec 'i->i' contracts no index}}
  %0 = doppler.einsum "i->i" join(relu) agg(max) (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @wrong_result_shape(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) {
  // expected-error @+1 {{result shape 4x4 differs from 4x2, the shape spec 'ij,jk->ik' implies}}
  %0 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @unknown_join(%a: tensor<4xf32>) {
  // expected-error @+1 {{unknown join 'frobnicate'; expected one of: identity, add, sub, mul}}
  %0 = doppler.einsum "i->i" join(frobnicate) (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @unknown_aggregation(%a: tensor<4xf32>) {
  // expected-error @+1 {{unknown aggregation 'mean'; expected one of: add, mul, max, min}}
  %0 = doppler.einsum "i->" join(identity) agg(mean) (%a) : (tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @slice_dynamic(%x: tensor<?xf32>) {
  // expected-error @+1 {{input has a dynamic shape}}
  %0 = doppler.slice %x [0] : tensor<?xf32> to tensor<2xf32>
  return
}

// -----

func.func @slice_element_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{result element type 'f16' differs from the input's 'f32'}}
  %0 = doppler.slice %x [0] : tensor<4xf32> to tensor<2xf16>
  return
}

// -----

func.func @slice_rank(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{result rank 1 differs from the input rank 2}}
  %0 = doppler.slice %x [0, 0] : tensor<4x4xf32> to tensor<2xf32>
  return
}

// -----

func.func @slice_offsets_count(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{has 1 offsets for an input of rank 2}}
  %0 = doppler.slice %x [0] : tensor<4x4xf32> to tensor<2x2xf32>
  return
}

// -----

func.func @slice_out_of_bounds(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{block [3, 3 + 2) exceeds extent 4 of dimension 1}}
  %0 = doppler.slice %x [0, 3] : tensor<4x4xf32> to tensor<2x2xf32>
  return
}

// -----

func.func @slice_negative_offset(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{block [-1, -1 + 2) exceeds extent 4 of dimension 0}}
  %0 = doppler.slice %x [-1, 0] : tensor<4x4xf32> to tensor<2x2xf32>
  return
}

// -----

func.func @assemble_grid_rank(%a: tensor<2x2xf32>) {
  // expected-error @+1 {{grid has 1 dimension(s) but the result has rank 2}}
  %0 = doppler.assemble [1] (%a) : tensor<2x2xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @assemble_grid_entry(%a: tensor<2x2xf32>) {
  // expected-error @+1 {{grid entries must be >= 1, got 0}}
  %0 = doppler.assemble [1, 0] (%a) : tensor<2x2xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @assemble_block_count(%a: tensor<2x2xf32>) {
  // expected-error @+1 {{grid [2, 1] holds 2 block(s) but 1 were given}}
  %0 = doppler.assemble [2, 1] (%a) : tensor<2x2xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @assemble_element_type(%a: tensor<2xf32>, %b: tensor<2xf16>) {
  // expected-error @+1 {{block 1 has element type 'f16' but the result has 'f32'}}
  %0 = doppler.assemble [2] (%a, %b) : tensor<2xf32>, tensor<2xf16> -> tensor<4xf32>
  return
}

// -----

func.func @assemble_block_rank(%a: tensor<2xf32>, %b: tensor<2x1xf32>) {
  // expected-error @+1 {{block 1 has rank 2 but the result has rank 1}}
  %0 = doppler.assemble [2] (%a, %b) : tensor<2xf32>, tensor<2x1xf32> -> tensor<4xf32>
  return
}

// -----

func.func @assemble_ragged(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x2xf32>, %d: tensor<2x3xf32>) {
  // expected-error @+1 {{block 2 has extent 2 along dimension 1 but other blocks at grid index 0 of that dimension have 3}}
  %0 = doppler.assemble [2, 2] (%a, %b, %c, %d) : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x3xf32> -> tensor<4x6xf32>
  return
}

// -----

func.func @assemble_sum(%a: tensor<2xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{blocks add up to 4 along dimension 0 but the result has 5}}
  %0 = doppler.assemble [2] (%a, %b) : tensor<2xf32>, tensor<2xf32> -> tensor<5xf32>
  return
}

// -----

func.func @assemble_dynamic_block(%a: tensor<?xf32>) {
  // expected-error @+1 {{block 0 has a dynamic shape}}
  %0 = doppler.assemble [1] (%a) : tensor<?xf32> -> tensor<4xf32>
  return
}

// -----

func.func @fill_dynamic() {
  // expected-error @+1 {{result has a dynamic shape}}
  %0 = doppler.fill 0.0 : tensor<?xf32>
  return
}

// -----

func.func @fill_nan() {
  // expected-error @+1 {{fill value must not be NaN}}
  %0 = doppler.fill 0x7FF8000000000000 : tensor<4xf32>
  return
}

// -----

func.func @transfer_types(%x: tensor<4xf32>) {
  // expected-error @+1 {{all of {input, result} have same type}}
  %0 = "doppler.transfer"(%x) <{source = #doppler.device<0>, target = #doppler.device<1>}> : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @transfer_negative_device(%x: tensor<4xf32>) {
  // expected-error @+1 {{device id must be non-negative, got -2}}
  %0 = doppler.transfer %x from <0> to <-2> : tensor<4xf32>
  return
}

// -----

func.func @task_negative_cost() {
  // expected-error @+1 {{compute cost must be finite and non-negative, got -1}}
  %0 = doppler.task "x" compute(-1.0) transfer(0.0)
  return
}

// -----

func.func @task_infinite_cost() {
  // expected-error @+1 {{transfer cost must be finite and non-negative, got INF}}
  %0 = doppler.task "x" compute(1.0) transfer(0x7FF0000000000000)
  return
}

// -----

func.func @task_input_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 must be variadic of an opaque value of a cost-only graph}}
  %0 = "doppler.task"(%x) <{kind = "x", compute = 1.0 : f64, transfer = 1.0 : f64}> : (tensor<4xf32>) -> !doppler.value
  return
}

// -----

func.func @device_attr_kind(%x: tensor<4xf32>) {
  // expected-error @+1 {{'doppler.device' must be a #doppler.device<N>, got 2 : i64}}
  %0 = arith.negf %x {doppler.device = 2} : tensor<4xf32>
  return
}

// -----

func.func @cost_attr_kind(%x: tensor<4xf32>) {
  // expected-error @+1 {{'doppler.compute_cost' must be an f64 attribute, got 2 : i64}}
  %0 = arith.negf %x {doppler.compute_cost = 2} : tensor<4xf32>
  return
}

// -----

func.func @cost_attr_negative(%x: tensor<4xf32>) {
  // expected-error @+1 {{'doppler.start' must be finite and non-negative, got -3}}
  %0 = arith.negf %x {doppler.start = -3.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @parts_attr(%x: tensor<4xf32>) {
  // expected-error @+1 {{'doppler.parts' entries must be >= 1, got 0}}
  %0 = doppler.einsum "i->i" join(relu) (%x) {doppler.parts = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @parts_attr_kind(%x: tensor<4xf32>) {
  // expected-error @+1 {{'doppler.parts' must be an array<i64>, got [1]}}
  %0 = doppler.einsum "i->i" join(relu) (%x) {doppler.parts = [1]} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @unknown_attr(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown doppler attribute 'doppler.colour'}}
  %0 = arith.negf %x {doppler.colour = 1} : tensor<4xf32>
  return
}

// -----

// Sizes past the shared cap of 2^62 elements or bytes (CheckedSize.h) are
// refused on every doppler op, naming the type, before any cost is computed.
func.func @einsum_elements_overflow(%x: tensor<9223372036854775807x2xf32>) {
  // expected-error @+1 {{operand 0 of type 'tensor<9223372036854775807x2xf32>' has 1.84e+19 elements, more than the limit of 2^62 (4.61e+18)}}
  %0 = doppler.einsum "ij->ij" join(relu) (%x) : (tensor<9223372036854775807x2xf32>) -> tensor<9223372036854775807x2xf32>
  return
}

// -----

func.func @einsum_bytes_overflow(%x: tensor<2305843009213693952xf64>) {
  // expected-error @+1 {{operand 0 of type 'tensor<2305843009213693952xf64>' takes 1.84e+19 bytes, more than the limit of 2^62 (4.61e+18)}}
  %0 = doppler.einsum "i->i" join(relu) (%x) : (tensor<2305843009213693952xf64>) -> tensor<2305843009213693952xf64>
  return
}

// -----

func.func @einsum_space_overflow(%a: tensor<2097152x2097152xf32>, %b: tensor<2097152x2097152xf32>) {
  // expected-error @+1 {{spec 'ij,jk->ik' iterates over 9.22e+18 points, more than the limit of 2^62 (4.61e+18)}}
  %0 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) : (tensor<2097152x2097152xf32>, tensor<2097152x2097152xf32>) -> tensor<2097152x2097152xf32>
  return
}

// -----

func.func @slice_overflow(%x: tensor<4611686018427387904x4xf32>) {
  // expected-error @+1 {{input of type 'tensor<4611686018427387904x4xf32>' has 1.84e+19 elements}}
  %0 = doppler.slice %x [0, 0] : tensor<4611686018427387904x4xf32> to tensor<2x4xf32>
  return
}

// -----

func.func @assemble_overflow(%a: tensor<4611686018427387904x2xf32>, %b: tensor<4611686018427387904x2xf32>) {
  // expected-error @+1 {{result of type 'tensor<4611686018427387904x4xf32>' has 1.84e+19 elements}}
  %0 = doppler.assemble [1, 2] (%a, %b) : tensor<4611686018427387904x2xf32>, tensor<4611686018427387904x2xf32> -> tensor<4611686018427387904x4xf32>
  return
}

// -----

func.func @fill_overflow() {
  // expected-error @+1 {{result of type 'tensor<4611686018427387904xf32>' takes 1.84e+19 bytes}}
  %0 = doppler.fill 0.0 : tensor<4611686018427387904xf32>
  return
}

// -----

func.func @fused_contracts(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{'doppler.fused' op spec 'ij,jk->ik' contracts index(es) 'j': a fused op is elementwise}}
  %0 = doppler.fused "ij,jk->ik" "mul(in0, in1)" (%a, %b) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @fused_bad_program(%x: tensor<4xf32>) {
  // expected-error @+1 {{'doppler.fused' op invalid join program: step s1: operand s1 is not an earlier step}}
  %0 = doppler.fused "i->i" "exp(in0); add(s0, s1)" (%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @fused_unread_input(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'doppler.fused' op invalid join program: input in1 is never read}}
  %0 = doppler.fused "i,i->i" "exp(in0)" (%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @fused_unknown_join(%x: tensor<4xf32>) {
  // expected-error @+1 {{'doppler.fused' op invalid join program: step s0: unknown join 'sin'}}
  %0 = doppler.fused "i->i" "sin(in0)" (%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @fused_extents(%x: tensor<4x8xf32>, %b: tensor<9xf32>) {
  // expected-error @+1 {{'doppler.fused' op index 'h'}}
  %0 = doppler.fused "bh,h->bh" "add(in0, in1)" (%x, %b) : (tensor<4x8xf32>, tensor<9xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @fused_result_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'doppler.fused' op result shape 8x4 differs from 4x8, the shape spec 'ij->ij' implies}}
  %0 = doppler.fused "ij->ij" "exp(in0)" (%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @fused_element_types(%x: tensor<4xf32>, %y: tensor<4xf64>) {
  // expected-error @+1 {{'doppler.fused' op operand 1 has element type 'f64' but the result has 'f32'}}
  %0 = doppler.fused "i,i->i" "add(in0, in1)" (%x, %y) : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return
}

// -----

func.func @evict_other_device(%x: tensor<4xf32>) {
  %0 = doppler.einsum "i->i" join(exp) (%x) {doppler.device = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'doppler.evict' op evicts from device 0 a value produced on device 1}}
  %1 = doppler.evict %0 from <0> : tensor<4xf32>
  return
}

// -----

func.func @evict_placed_elsewhere(%x: tensor<4xf32>) {
  // expected-error @+1 {{'doppler.evict' op is placed on device 2 but its source is device 0}}
  %0 = doppler.evict %x from <0> {doppler.device = #doppler.device<2>} : tensor<4xf32>
  return
}

// -----

// Evicting a host value again is one more non-reload reader of it.
func.func @evict_host_value(%x: tensor<4xf32>) {
  // expected-error @+1 {{'doppler.evict' op result is a host value that only doppler.reload may read, but 'doppler.evict' reads it}}
  %0 = doppler.evict %x from <0> : tensor<4xf32>
  %1 = doppler.evict %0 from <0> : tensor<4xf32>
  return
}

// -----

func.func @host_value_read(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'doppler.evict' op result is a host value that only doppler.reload may read, but 'func.return' reads it}}
  %0 = doppler.evict %x from <0> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @evict_types(%x: tensor<4xf32>) {
  // expected-error @+1 {{'doppler.evict' op failed to verify that all of {input, result} have same type}}
  %0 = "doppler.evict"(%x) <{source = #doppler.device<0>}> : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @reload_device_value(%x: tensor<4xf32>) {
  // expected-error @+1 {{'doppler.reload' op reloads a value that is not a doppler.evict result (not a host value)}}
  %0 = doppler.reload %x to <0> : tensor<4xf32>
  return
}

// -----

func.func @reload_placed_elsewhere(%x: tensor<4xf32>) {
  %0 = doppler.evict %x from <0> : tensor<4xf32>
  // expected-error @+1 {{'doppler.reload' op is placed on device 0 but its target is device 1}}
  %1 = doppler.reload %0 to <1> {doppler.device = #doppler.device<0>} : tensor<4xf32>
  return
}

// -----

func.func @reload_types(%x: tensor<4xf32>) {
  %0 = doppler.evict %x from <0> : tensor<4xf32>
  // expected-error @+1 {{'doppler.reload' op failed to verify that all of {stash, result} have same type}}
  %1 = "doppler.reload"(%0) <{target = #doppler.device<0>}> : (tensor<4xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @reload_negative_device(%x: tensor<4xf32>) {
  %0 = doppler.evict %x from <0> : tensor<4xf32>
  // expected-error @+1 {{device id must be non-negative, got -1}}
  %1 = doppler.reload %0 to <-1> : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{'doppler.peak_memory' entries must be >= 0, got -1}}
func.func @peak_memory_negative() attributes {doppler.peak_memory = array<i64: 4096, -1>} {
  return
}

// -----

// expected-error @+1 {{'doppler.peak_memory' must be an array<i64>, got [4096]}}
func.func @peak_memory_kind() attributes {doppler.peak_memory = [4096]} {
  return
}

// -----

// expected-error @+1 {{'doppler.offload' must be a dictionary, got 2 : i64}}
func.func @offload_kind() attributes {doppler.offload = 2} {
  return
}

// -----

func.func @reshape_dynamic_input(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{input has a dynamic shape}}
  %0 = doppler.reshape %x : tensor<?x4xf32> -> tensor<8xf32>
  return
}

// -----

func.func @reshape_dynamic_result(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{result has a dynamic shape}}
  %0 = doppler.reshape %x : tensor<2x4xf32> -> tensor<?xf32>
  return
}

// -----

func.func @reshape_element_type(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{result element type 'f16' differs from the input's 'f32'}}
  %0 = doppler.reshape %x : tensor<2x4xf32> -> tensor<8xf16>
  return
}

// -----

func.func @reshape_element_count(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{result 'tensor<3x3xf32>' has 9 elements but the input 'tensor<2x4xf32>' has 8; a reshape keeps the element count}}
  %0 = doppler.reshape %x : tensor<2x4xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @reshape_too_large(%x: tensor<1xf32>) {
  // expected-error @+1 {{result of type 'tensor<4611686018427387904x4xf32>'}}
  %0 = doppler.reshape %x : tensor<1xf32> -> tensor<4611686018427387904x4xf32>
  return
}

// -----

func.func @reshape_unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = doppler.reshape %x : tensor<*xf32> -> tensor<8xf32>
  return
}
