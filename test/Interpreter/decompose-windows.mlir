// doppler-decompose splits convolutions and pools into blocks over the
// batch, channel groups and row tiles with halos without changing what a
// function computes: explicit doppler.parts for each axis and their
// products (grouped, depthwise, strided, dilated, asymmetrically padded,
// 1-d and 3-d), and the automatic choice at several block counts on a
// small CNN (conv, bias, relu, max pool, depthwise conv, avg pool).
// RUN: doppler-opt %s --doppler-decompose > %t.mlir
// RUN: doppler-interpret %t.mlir --compare %s --function cases | FileCheck %s
// RUN: doppler-interpret %t.mlir --compare %s --function cnn | FileCheck %s
// RUN: sed -e 's/ {doppler.parts = array<i64: [0-9, ]*>}//' %s > %t.auto.mlir
// RUN: doppler-opt %t.auto.mlir --doppler-decompose=parts=2 > %t.2.mlir
// RUN: doppler-interpret %t.2.mlir --compare %s --function cnn | FileCheck %s
// RUN: doppler-opt %t.auto.mlir --doppler-decompose=parts=3 > %t.3.mlir
// RUN: doppler-interpret %t.3.mlir --compare %s --function cnn | FileCheck %s
// RUN: doppler-interpret %t.3.mlir --compare %s --function cases | FileCheck %s
// RUN: doppler-opt %t.auto.mlir --doppler-decompose=parts=8 > %t.8.mlir
// RUN: doppler-interpret %t.8.mlir --compare %s --function cnn | FileCheck %s
// RUN: doppler-interpret %t.8.mlir --compare %s --function cases | FileCheck %s
// RUN: FileCheck %s --check-prefix=OPS < %t.8.mlir
// CHECK: max rel-error {{.*}} <= tolerance 1e-05: ok
// No per-offset einsums: the 8-block program is windows, glue and the
// elementwise ops.
// OPS-NOT: doppler.einsum "{{[a-z]*}},{{[a-z]*}}->{{.*}} agg

func.func @cases(%x: tensor<2x6x9x7xf32>, %w: tensor<4x3x3x3xf32>,
                 %d: tensor<6x1x3x3xf32>, %s: tensor<3x4x12xf32>,
                 %k: tensor<5x4x4xf32>, %v: tensor<1x2x5x6x4xf32>,
                 %u: tensor<3x2x3x1x2xf32>)
    -> (tensor<2x4x5x3xf32>, tensor<2x6x9x7xf32>, tensor<3x5x4xf32>,
        tensor<1x3x5x6x2xf32>, tensor<2x6x4x3xf32>, tensor<2x6x5x4xf32>) {
  // Two groups, stride 2, dilation (1, 2), padding low (1, 2) high (2, 0).
  %g = doppler.conv %x, %w strides [2, 2] dilations [1, 2] padding [1, 2, 2, 0] groups 2 {doppler.parts = array<i64: 2, 2, 2>}
      : (tensor<2x6x9x7xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x5x3xf32>
  // Depthwise, split 3 ways over channels and 3 over rows.
  %dw = doppler.conv %x, %d strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 6 {doppler.parts = array<i64: 1, 3, 3>}
      : (tensor<2x6x9x7xf32>, tensor<6x1x3x3xf32>) -> tensor<2x6x9x7xf32>
  // 1-d, stride 3, the batch in 3 blocks and the 5 output rows in 4 tiles.
  %c1 = doppler.conv %s, %k strides [3] dilations [1] padding [2, 3] groups 1 {doppler.parts = array<i64: 3, 1, 4>}
      : (tensor<3x4x12xf32>, tensor<5x4x4xf32>) -> tensor<3x5x5xf32>
  %c1s = doppler.slice %c1 [0, 0, 0] : tensor<3x5x5xf32> to tensor<3x5x4xf32>
  // 3-d, output channels split.
  %c3 = doppler.conv %v, %u strides [1, 1, 2] dilations [1, 1, 1] padding [1, 0, 0, 1, 0, 1] groups 1 {doppler.parts = array<i64: 1, 3, 2>}
      : (tensor<1x2x5x6x4xf32>, tensor<3x2x3x1x2xf32>) -> tensor<1x3x5x6x2xf32>
  %mp = doppler.pool max %x kernel [3, 3] strides [2, 2] dilations [1, 1] padding [0, 1, 1, 0] {doppler.parts = array<i64: 2, 2, 2>}
      : tensor<2x6x9x7xf32> -> tensor<2x6x4x3xf32>
  %ap = doppler.pool avg %x kernel [2, 2] strides [2, 2] dilations [1, 1] padding [1, 1, 0, 0] {doppler.parts = array<i64: 1, 1, 5>}
      : tensor<2x6x9x7xf32> -> tensor<2x6x5x4xf32>
  return %g, %dw, %c1s, %c3, %mp, %ap : tensor<2x4x5x3xf32>, tensor<2x6x9x7xf32>, tensor<3x5x4xf32>, tensor<1x3x5x6x2xf32>, tensor<2x6x4x3xf32>, tensor<2x6x5x4xf32>
}

func.func @cnn(%x: tensor<2x3x16x16xf32>, %w1: tensor<8x3x3x3xf32>,
               %b1: tensor<8xf32>, %w2: tensor<8x1x3x3xf32>)
    -> tensor<2x8x4x4xf32> {
  %c = doppler.conv %x, %w1 strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 1
      : (tensor<2x3x16x16xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x16x16xf32>
  %b = doppler.einsum "nfhw,f->nfhw" join(add) (%c, %b1)
      : (tensor<2x8x16x16xf32>, tensor<8xf32>) -> tensor<2x8x16x16xf32>
  %r = doppler.einsum "nfhw->nfhw" join(relu) (%b)
      : (tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  %p = doppler.pool max %r kernel [3, 3] strides [2, 2] dilations [1, 1] padding [1, 1, 1, 1]
      : tensor<2x8x16x16xf32> -> tensor<2x8x8x8xf32>
  %d = doppler.conv %p, %w2 strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 8
      : (tensor<2x8x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x8x8xf32>
  %a = doppler.pool avg %d kernel [2, 2] strides [2, 2] dilations [1, 1] padding [0, 0, 0, 0]
      : tensor<2x8x8x8xf32> -> tensor<2x8x4x4xf32>
  return %a : tensor<2x8x4x4xf32>
}
