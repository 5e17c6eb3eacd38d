// RUN: doppler-opt %s --split-input-file --verify-diagnostics --doppler-decompose
// Bad options are reported once, on the module, and change nothing.
// RUN: not doppler-opt %s --split-input-file --doppler-decompose=parts=0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: doppler-decompose: option 'parts' must be 'auto' or between 1 and 4096, got 0
// RUN: not doppler-opt %s --split-input-file --doppler-decompose=parts=5000 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: doppler-decompose: option 'parts' must be 'auto' or between 1 and 4096, got 5000
// RUN: not doppler-opt %s --split-input-file --doppler-decompose=min-points=-1 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: doppler-decompose: option 'min-points' must be non-negative, got -1
// RUN: not doppler-opt %s --split-input-file --doppler-decompose=parts=many 2>&1 | FileCheck %s --check-prefix=WORD
// WORD: error: doppler-decompose: option 'parts' must be 'auto' or between 1 and 4096, got many
// RUN: not doppler-opt %s --split-input-file --doppler-decompose="parts=auto system=nosuch" 2>&1 | FileCheck %s --check-prefix=SYSTEM
// SYSTEM: error: doppler-decompose: system 'nosuch':
// RUN: not doppler-opt %s --split-input-file --doppler-decompose="parts=auto devices=-2" 2>&1 | FileCheck %s --check-prefix=DEVICES
// DEVICES: error: doppler-decompose: option 'devices' must be between 0 and 4096, got -2

func.func @too_few_parts(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{'doppler.parts' has 2 entries but spec 'ij,jk->ik' has 3 indices ('ijk'); give one partition count per index, in that order}}
  %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) {doppler.parts = array<i64: 2, 2>}
      : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

func.func @too_many_parts(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'doppler.parts' has 2 entries but spec 'i->i' has 1 indices ('i')}}
  %y = doppler.einsum "i->i" join(exp) (%x) {doppler.parts = array<i64: 2, 2>} : (tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// Nothing is rewritten when one einsum is invalid: the first stays whole.
func.func @beyond_extent(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %y = doppler.einsum "ij->ij" join(exp) (%x) {doppler.parts = array<i64: 1, 2>} : (tensor<3x8xf32>) -> tensor<3x8xf32>
  // expected-error@+1 {{'doppler.parts' splits index 'i' of extent 3 into 4 parts; between 1 and 3 are possible}}
  %z = doppler.einsum "ij->ij" join(neg) (%y) {doppler.parts = array<i64: 4, 1>} : (tensor<3x8xf32>) -> tensor<3x8xf32>
  return %z : tensor<3x8xf32>
}

// -----

// Each count fits its extent, but the product (2^31 blocks) does not fit
// the cap of 4096 blocks per einsum: refused before anything is built.
func.func @too_many_blocks(%x: tensor<65536x65536xf32>) -> tensor<65536x65536xf32> {
  // expected-error@+1 {{'doppler.parts' [32768, 65536] makes more than 4096 blocks (the product of its entries); at most 4096 blocks per einsum are possible}}
  %y = doppler.einsum "ij->ij" join(exp) (%x) {doppler.parts = array<i64: 32768, 65536>} : (tensor<65536x65536xf32>) -> tensor<65536x65536xf32>
  return %y : tensor<65536x65536xf32>
}

// -----

// Entries below 1 and values that are not array<i64> are rejected by the
// dialect before the pass runs.
func.func @zero_parts(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'doppler.parts' entries must be >= 1, got 0}}
  %y = doppler.einsum "i->i" join(exp) (%x) {doppler.parts = array<i64: 0>} : (tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// So are dynamic shapes: einsums are static by construction.
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error@+1 {{has a dynamic shape}}
  %y = doppler.einsum "i->i" join(exp) (%x) : (tensor<?xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

// The attribute means nothing on other ops: a warning, and the pass goes on.
func.func @parts_elsewhere(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-warning@+1 {{'doppler.parts' is only read on doppler.einsum, doppler.fused, doppler.conv and doppler.pool ops; ignored}}
  %y = doppler.slice %x [0] {doppler.parts = array<i64: 2>} : tensor<8xf32> to tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A fused op's doppler.parts is checked like an einsum's.
func.func @fused_parts(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'doppler.parts' has 1 entries but spec 'ij->ij' has 2 indices ('ij'); give one partition count per index, in that order}}
  %y = doppler.fused "ij->ij" "exp(in0); neg(s0)" (%x) {doppler.parts = array<i64: 2>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @window_parts_count(%x: tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32> {
  // expected-error@+1 {{'doppler.parts' has 2 entries; a window op takes 3: the blocks along the batch, the channels and the first spatial dim of its result}}
  %p = doppler.pool max %x kernel [2, 2] strides [2, 2] dilations [1, 1] padding [0, 0, 0, 0] {doppler.parts = array<i64: 2, 2>}
      : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  return %p : tensor<2x4x4x4xf32>
}

// -----

func.func @window_parts_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error@+1 {{'doppler.parts' splits the channels into 3 parts, but it has 2 groups; between 1 and 2 are possible}}
  %c = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0] groups 2 {doppler.parts = array<i64: 1, 3, 1>}
      : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %c : tensor<1x6x6x6xf32>
}

// -----

func.func @window_parts_rows(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error@+1 {{'doppler.parts' splits the first spatial dim into 7 parts, but it has 6; between 1 and 6 are possible}}
  %c = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0] groups 1 {doppler.parts = array<i64: 1, 1, 7>}
      : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %c : tensor<1x6x6x6xf32>
}

// -----

func.func @window_parts_padding_only(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x6x2xf32> {
  // expected-error@+1 {{'doppler.parts' splits the first spatial dim into 6 tiles, and some tile reads only padding}}
  %p = doppler.pool avg %x kernel [1, 1] strides [1, 1] dilations [1, 1] padding [2, 0, 2, 0] {doppler.parts = array<i64: 1, 1, 6>}
      : tensor<1x1x2x2xf32> -> tensor<1x1x6x2xf32>
  return %p : tensor<1x1x6x2xf32>
}

// -----

func.func @window_parts_blocks(%x: tensor<64x128x64x4xf32>) -> tensor<64x128x64x4xf32> {
  // expected-error@+1 {{'doppler.parts' makes 524288 blocks; at most 4096 are possible}}
  %p = doppler.pool max %x kernel [1, 1] strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0] {doppler.parts = array<i64: 64, 128, 64>}
      : tensor<64x128x64x4xf32> -> tensor<64x128x64x4xf32>
  return %p : tensor<64x128x64x4xf32>
}
