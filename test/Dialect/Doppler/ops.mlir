// RUN: doppler-opt %s | doppler-opt | FileCheck %s
// RUN: doppler-opt %s --mlir-print-op-generic | doppler-opt | FileCheck %s

// CHECK-LABEL: func.func @contractions
func.func @contractions(%a: tensor<4x64x128xf32>, %b: tensor<4x128x32xf32>,
                        %x: tensor<8x16xf32>) -> (tensor<4x64x32xf32>, tensor<f32>) {
  // CHECK: doppler.einsum "bij,bjk->bik" join(mul) agg(add) (%{{.*}}, %{{.*}}) : (tensor<4x64x128xf32>, tensor<4x128x32xf32>) -> tensor<4x64x32xf32>
  %c = doppler.einsum "bij,bjk->bik" join(mul) agg(add) (%a, %b)
      : (tensor<4x64x128xf32>, tensor<4x128x32xf32>) -> tensor<4x64x32xf32>
  // A full reduction to a scalar.
  // CHECK: doppler.einsum "ij->" join(square) agg(add) (%{{.*}}) : (tensor<8x16xf32>) -> tensor<f32>
  %s = doppler.einsum "ij->" join(square) agg(add) (%x) : (tensor<8x16xf32>) -> tensor<f32>
  return %c, %s : tensor<4x64x32xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @softmax_rows
func.func @softmax_rows(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: join(identity) agg(max)
  %m = doppler.einsum "ij->i" join(identity) agg(max) (%x) : (tensor<8x16xf32>) -> tensor<8xf32>
  // CHECK: join(sub) (
  %d = doppler.einsum "ij,i->ij" join(sub) (%x, %m) : (tensor<8x16xf32>, tensor<8xf32>) -> tensor<8x16xf32>
  // CHECK: join(exp)
  %e = doppler.einsum "ij->ij" join(exp) (%d) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %z = doppler.einsum "ij->i" join(identity) agg(add) (%e) : (tensor<8x16xf32>) -> tensor<8xf32>
  // CHECK: join(div)
  %p = doppler.einsum "ij,i->ij" join(div) (%e, %z) : (tensor<8x16xf32>, tensor<8xf32>) -> tensor<8x16xf32>
  // Scalars print as the shortest decimal that reads back exactly.
  // CHECK: join(scale, 0.08838834764831845)
  %q = doppler.einsum "ij->ij" join(scale, 0.088388347648318447) (%p) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  // CHECK: join(shift, 1.0e-06)
  %r = doppler.einsum "ij->ij" join(shift, 1.0e-6) (%q) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @glue
func.func @glue(%x: tensor<128x128xbf16>) -> tensor<128x128xbf16> {
  // CHECK: doppler.slice %{{.*}} [0, 64] : tensor<128x128xbf16> to tensor<128x64xbf16>
  %r = doppler.slice %x [0, 64] : tensor<128x128xbf16> to tensor<128x64xbf16>
  %l = doppler.slice %x [0, 0] : tensor<128x128xbf16> to tensor<128x64xbf16>
  // CHECK: doppler.assemble [1, 2] (%{{.*}}, %{{.*}}) : tensor<128x64xbf16>, tensor<128x64xbf16> -> tensor<128x128xbf16>
  %y = doppler.assemble [1, 2] (%r, %l) : tensor<128x64xbf16>, tensor<128x64xbf16> -> tensor<128x128xbf16>
  // CHECK: doppler.fill 0xFFF0000000000000 : tensor<4xbf16>
  // CHECK: doppler.fill 0.0 : tensor<4xbf16>
  %ninf = doppler.fill 0xFFF0000000000000 : tensor<4xbf16>
  %zero = doppler.fill 0.0 : tensor<4xbf16>
  return %y : tensor<128x128xbf16>
}

// CHECK-LABEL: func.func @placed
func.func @placed(%x: tensor<64xf16>) -> tensor<64xf16> {
  // CHECK: doppler.einsum "i->i" join(relu) (%{{.*}}) {doppler.device = #doppler.device<1>}
  %y = doppler.einsum "i->i" join(relu) (%x) {doppler.device = #doppler.device<1>} : (tensor<64xf16>) -> tensor<64xf16>
  // CHECK: doppler.transfer %{{.*}} from <1> to <2> : tensor<64xf16>
  %t = doppler.transfer %y from <1> to <2> : tensor<64xf16>
  // Ops of other dialects can be placed too.
  // CHECK: arith.addf %{{.*}}, %{{.*}} {doppler.device = #doppler.device<2>}
  %s = arith.addf %t, %t {doppler.device = #doppler.device<2>} : tensor<64xf16>
  return %s : tensor<64xf16>
}

// Cost-only graphs, as imported from the reference text format.
// CHECK-LABEL: func.func @tasks
func.func @tasks() -> !doppler.value {
  // CHECK: %[[IN:.*]] = doppler.task "input" compute(68719476736.0) transfer(274877906944.0)
  %0 = doppler.task "input" compute(68719476736.0) transfer(274877906944.0)
  // CHECK: doppler.task "einsummable" (%[[IN]], %[[IN]]) compute(1.5) transfer(0.0) {doppler.compute_cost = 1.500000e+00 : f64}
  %1 = doppler.task "einsummable" (%0, %0) compute(1.5) transfer(0.0) {doppler.compute_cost = 1.5 : f64}
  return %1 : !doppler.value
}

// Reshapes: split, merge, add and drop unit dims, to and from rank 0.
// CHECK-LABEL: func.func @reshapes
func.func @reshapes(%x: tensor<2x8x32xf32>, %s: tensor<f16>, %i: tensor<6xi32>)
    -> (tensor<2x8x4x8xf32>, tensor<16x32xf32>, tensor<1x1xf16>, tensor<2x3xi32>) {
  // CHECK: doppler.reshape %{{.*}} : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %h = doppler.reshape %x : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  // CHECK: doppler.reshape %{{.*}} : tensor<2x8x32xf32> -> tensor<16x32xf32>
  %f = doppler.reshape %x : tensor<2x8x32xf32> -> tensor<16x32xf32>
  // CHECK: doppler.reshape %{{.*}} : tensor<f16> -> tensor<1x1xf16>
  %u = doppler.reshape %s : tensor<f16> -> tensor<1x1xf16>
  // CHECK: doppler.reshape %{{.*}} {doppler.device = #doppler.device<1>} : tensor<6xi32> -> tensor<2x3xi32>
  %m = doppler.reshape %i {doppler.device = #doppler.device<1>} : tensor<6xi32> -> tensor<2x3xi32>
  return %h, %f, %u, %m : tensor<2x8x4x8xf32>, tensor<16x32xf32>, tensor<1x1xf16>, tensor<2x3xi32>
}

// CHECK-LABEL: func.func @windows
func.func @windows(%x: tensor<2x3x9x9xf32>, %w: tensor<6x1x3x3xf32>,
                   %s: tensor<1x4x11xf64>, %k: tensor<8x4x5xf64>,
                   %v: tensor<1x2x4x4x4xf16>)
    -> (tensor<2x6x4x4xf32>, tensor<1x8x3xf64>, tensor<2x3x5x5xf32>,
        tensor<1x2x2x2x2xf16>) {
  // A grouped (3 groups of 1 input and 2 output channels), strided,
  // dilated, asymmetrically padded 2-d convolution.
  // CHECK: doppler.conv %{{.*}}, %{{.*}} strides [2, 2] dilations [2, 1] padding [2, 0, 1, 1] groups 3 : (tensor<2x3x9x9xf32>, tensor<6x1x3x3xf32>) -> tensor<2x6x4x4xf32>
  %c = doppler.conv %x, %w strides [2, 2] dilations [2, 1] padding [2, 0, 1, 1] groups 3
      : (tensor<2x3x9x9xf32>, tensor<6x1x3x3xf32>) -> tensor<2x6x4x4xf32>
  // CHECK: doppler.conv {{.*}} groups 1 {doppler.device = #doppler.device<1>} : (tensor<1x4x11xf64>, tensor<8x4x5xf64>) -> tensor<1x8x3xf64>
  %d = doppler.conv %s, %k strides [3] dilations [1] padding [0, 0] groups 1 {doppler.device = #doppler.device<1>}
      : (tensor<1x4x11xf64>, tensor<8x4x5xf64>) -> tensor<1x8x3xf64>
  // CHECK: doppler.pool max %{{.*}} kernel [3, 3] strides [2, 2] dilations [1, 1] padding [1, 1, 1, 1] : tensor<2x3x9x9xf32> -> tensor<2x3x5x5xf32>
  %p = doppler.pool max %x kernel [3, 3] strides [2, 2] dilations [1, 1] padding [1, 1, 1, 1]
      : tensor<2x3x9x9xf32> -> tensor<2x3x5x5xf32>
  // CHECK: doppler.pool avg %{{.*}} kernel [2, 2, 2] strides [2, 2, 2] dilations [1, 1, 1] padding [0, 0, 0, 0, 0, 0] : tensor<1x2x4x4x4xf16> -> tensor<1x2x2x2x2xf16>
  %a = doppler.pool avg %v kernel [2, 2, 2] strides [2, 2, 2] dilations [1, 1, 1] padding [0, 0, 0, 0, 0, 0]
      : tensor<1x2x4x4x4xf16> -> tensor<1x2x2x2x2xf16>
  return %c, %d, %p, %a : tensor<2x6x4x4xf32>, tensor<1x8x3xf64>, tensor<2x3x5x5xf32>, tensor<1x2x2x2x2xf16>
}

// CHECK-LABEL: func.func @gather
// CHECK: doppler.gather %{{.*}}[%{{.*}}] axis 0 : tensor<100x8xf32>, tensor<2x5xi64> -> tensor<2x5x8xf32>
// CHECK: doppler.gather %{{.*}}[%{{.*}}] axis 1 : tensor<4x10x3xf32>, tensor<6xi32> -> tensor<4x6x3xf32>
func.func @gather(%w: tensor<100x8xf32>, %ids: tensor<2x5xi64>, %x: tensor<4x10x3xf32>, %j: tensor<6xi32>)
    -> (tensor<2x5x8xf32>, tensor<4x6x3xf32>) {
  %0 = doppler.gather %w[%ids] axis 0 : tensor<100x8xf32>, tensor<2x5xi64> -> tensor<2x5x8xf32>
  %1 = doppler.gather %x[%j] axis 1 : tensor<4x10x3xf32>, tensor<6xi32> -> tensor<4x6x3xf32>
  return %0, %1 : tensor<2x5x8xf32>, tensor<4x6x3xf32>
}
