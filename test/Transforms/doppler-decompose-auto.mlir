// RUN: doppler-opt %s --doppler-decompose="parts=auto system=h100x8" | FileCheck %s
// RUN: doppler-opt %s --doppler-decompose="parts=auto system=h100x8 devices=2" | FileCheck %s --check-prefix=TWO
// parts=auto: each op's block count from the dynamic program over the
// graph with the system's costs (DecomposeAuto.h).

// A chain of large GEMMs on 8 H100s: each splits over all 8 devices, the
// second taking the first's blocks as they are (no glue between them).
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-8: doppler.einsum "ij,jk->ik" join(mul) agg(add) (%{{.*}}, %arg1) : (tensor<512x8192xf32>, tensor<8192x8192xf32>) -> tensor<512x8192xf32>
// CHECK-NOT: doppler.slice
// CHECK-COUNT-8: doppler.einsum "ij,jk->ik" join(mul) agg(add) (%{{[0-9]+}}, %arg2) : (tensor<512x8192xf32>, tensor<8192x8192xf32>) -> tensor<512x8192xf32>
// CHECK: doppler.assemble [8, 1]
// TWO-LABEL: func.func @chain
// TWO-COUNT-2: doppler.einsum "ij,jk->ik" {{.*}} -> tensor<2048x8192xf32>
func.func @chain(%x: tensor<4096x8192xf32>, %w1: tensor<8192x8192xf32>,
                 %w2: tensor<8192x8192xf32>) -> tensor<4096x8192xf32> {
  %a = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%x, %w1)
      : (tensor<4096x8192xf32>, tensor<8192x8192xf32>) -> tensor<4096x8192xf32>
  %b = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %w2)
      : (tensor<4096x8192xf32>, tensor<8192x8192xf32>) -> tensor<4096x8192xf32>
  return %b : tensor<4096x8192xf32>
}

// Small ops, where a split would cost more launches and transfers than it
// saves: the bias add and the activation stay whole.
// CHECK-LABEL: func.func @small
// CHECK-NEXT: doppler.einsum "ij,j->ij" join(add) (%arg0, %arg1) : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
// CHECK-NEXT: doppler.einsum "ij->ij" join(relu)
// CHECK-NEXT: return
func.func @small(%x: tensor<16x64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> {
  %y = doppler.einsum "ij,j->ij" join(add) (%x, %b)
      : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %r = doppler.einsum "ij->ij" join(relu) (%y) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// An explicit doppler.parts is kept; a large convolution at batch 8 splits
// its batch over the 8 devices.
// CHECK-LABEL: func.func @mixed
// CHECK-COUNT-2: doppler.einsum "ij->ij" join(relu) {{.*}} -> tensor<32x4096xf32>
// CHECK-COUNT-8: doppler.conv {{.*}} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
func.func @mixed(%x: tensor<64x4096xf32>, %i: tensor<8x64x56x56xf32>,
                 %w: tensor<64x64x3x3xf32>) -> (tensor<64x4096xf32>, tensor<8x64x56x56xf32>) {
  %r = doppler.einsum "ij->ij" join(relu) (%x) {doppler.parts = array<i64: 2, 1>}
      : (tensor<64x4096xf32>) -> tensor<64x4096xf32>
  %c = doppler.conv %i, %w strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 1
      : (tensor<8x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<8x64x56x56xf32>
  return %r, %c : tensor<64x4096xf32>, tensor<8x64x56x56xf32>
}

