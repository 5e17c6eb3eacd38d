// Every join and aggregation through IREE, against the reference interpreter
// (in 4 parts, placed on 2 devices by doppler-pipeline, exported, compiled, run).
// REQUIRES: iree
// RUN: rm -rf %t && mkdir -p %t
// RUN: %iree_python %doppler_src/scripts/iree_check.py %s --devices 2 --tools %doppler_tools --summary %iree_summary \
// RUN:   --iree %iree_bin --work-dir %t --pipeline "system=cpu4 policy=%doppler_policy parts=4" --min-honoured 0.85 --tolerance 1e-5 | FileCheck %s
// CHECK: joins on 2 devices: max rel error {{.*}}; placement honoured for {{[0-9]+}}/{{[0-9]+}} einsums {{.*}}: ok

func.func @joins(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>, %v: tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>) {
  %r1 = doppler.einsum "ij->ij" join(abs) (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r2 = doppler.einsum "ij->ij" join(shift, 5.000000e-01) (%r1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r3 = doppler.einsum "ij->ij" join(identity) (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r4 = doppler.einsum "ij->ij" join(neg) (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r5 = doppler.einsum "ij->ij" join(exp) (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r6 = doppler.einsum "ij->ij" join(tanh) (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r7 = doppler.einsum "ij->ij" join(sigmoid) (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r8 = doppler.einsum "ij->ij" join(relu) (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r9 = doppler.einsum "ij->ij" join(silu) (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r10 = doppler.einsum "ij->ij" join(gelu) (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r11 = doppler.einsum "ij->ij" join(square) (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r12 = doppler.einsum "ij->ij" join(log) (%r2) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r13 = doppler.einsum "ij->ij" join(sqrt) (%r2) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r14 = doppler.einsum "ij->ij" join(rsqrt) (%r2) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r15 = doppler.einsum "ij->ij" join(reciprocal) (%r2) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r16 = doppler.einsum "ij->ij" join(scale, -2.500000e+00) (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r17 = doppler.einsum "ij,ij->ij" join(add) (%x, %y) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %r18 = doppler.einsum "ij,ij->ij" join(sub) (%x, %y) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %r19 = doppler.einsum "ij,ij->ij" join(mul) (%x, %y) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %r20 = doppler.einsum "ij,ij->ij" join(max) (%x, %y) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %r21 = doppler.einsum "ij,ij->ij" join(min) (%x, %y) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %r22 = doppler.einsum "ij,ij->ij" join(div) (%x, %r2) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %r23 = doppler.einsum "ij,ij->ij" join(pow) (%r2, %y) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %r24 = doppler.einsum "ij,j->ij" join(mul) (%x, %v) : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %r25 = doppler.einsum "ij->i" join(identity) agg(add) (%r2) : (tensor<8x16xf32>) -> tensor<8xf32>
  %r26 = doppler.einsum "ij->i" join(identity) agg(mul) (%r2) : (tensor<8x16xf32>) -> tensor<8xf32>
  %r27 = doppler.einsum "ij->i" join(identity) agg(max) (%r2) : (tensor<8x16xf32>) -> tensor<8xf32>
  %r28 = doppler.einsum "ij->i" join(identity) agg(min) (%r2) : (tensor<8x16xf32>) -> tensor<8xf32>
  %r29 = doppler.einsum "ij,kj->ik" join(mul) agg(add) (%x, %y) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  return %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12, %r13, %r14, %r15, %r16, %r17, %r18, %r19, %r20, %r21, %r22, %r23, %r24, %r25, %r26, %r27, %r28, %r29
      : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>
}
