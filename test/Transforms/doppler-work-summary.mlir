// RUN: doppler-opt %s --doppler-work-summary --split-input-file 2>&1 >/dev/null | FileCheck %s
// With split input, each chunk rewrites the file: the last one remains.
// RUN: doppler-opt %s --doppler-work-summary="output=%t" --split-input-file -o /dev/null && FileCheck %s --check-prefix=FILE < %t
// RUN: doppler-opt %s --split-input-file --doppler-work-summary | FileCheck %s --check-prefix=IR

// CHECK-LABEL: doppler-work-summary: @matmul
// CHECK-NEXT: ops: 2 (doppler.einsum 1, func.return 1)
// 2 * 64 * 128 * 32 = 524288
// CHECK-NEXT: flops: 524288 (524 kFLOP)
// (64*128 + 128*32) * 4 bytes read, 64*32*4 written.
// CHECK-NEXT: bytes read: 49152 (49.2 kB), written: 8192 (8.19 kB)
// IR-LABEL: func.func @matmul
// IR: doppler.einsum
func.func @matmul(%a: tensor<64x128xf32>, %b: tensor<128x32xf32>) -> tensor<64x32xf32> {
  %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}

// -----

// Ops of other dialects count, but their work is unknown.
// FILE-NOT: @matmul
// FILE: doppler-work-summary: @mixed
// CHECK-LABEL: doppler-work-summary: @mixed
// CHECK-NEXT: ops: 3 (doppler.einsum 1, arith.addf 1, func.return 1)
// CHECK-NEXT: flops: 16 (16 FLOP)
// CHECK-NEXT: bytes read: 32 (32 B), written: 32 (32 B)
// CHECK-NEXT: ops with unknown work: 1
func.func @mixed(%a: tensor<16xf16>) -> tensor<16xf16> {
  %e = doppler.einsum "i->i" join(exp) (%a) : (tensor<16xf16>) -> tensor<16xf16>
  %s = arith.addf %e, %e : tensor<16xf16>
  return %s : tensor<16xf16>
}
