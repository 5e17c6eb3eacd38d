// An embedding gather under the passes: doppler-decompose (uniform parts=N
// and parts=auto) keeps it whole, never splitting the table's gathered
// axis, and the einsum's blocks read slices of its result;
// doppler-annotate-costs costs it by its work model (bytes, no FLOPs: the
// cost grows with the gathered rows, not with the table); doppler-work-summary
// counts no FLOPs for it.
// RUN: doppler-opt %s --doppler-decompose=parts=4 | FileCheck %s --check-prefix=PARTS
// RUN: doppler-opt %s --doppler-decompose=parts=auto | FileCheck %s --check-prefix=AUTO
// RUN: doppler-opt %s --doppler-annotate-costs | FileCheck %s --check-prefix=COST
// RUN: doppler-opt %s --doppler-work-summary -o /dev/null 2>&1 | FileCheck %s --check-prefix=WORK

// PARTS-LABEL: func.func @embed
// PARTS: %[[G:.*]] = doppler.gather %arg0[%arg1] axis 0 : tensor<64x16xf32>, tensor<4x8xi64> -> tensor<4x8x16xf32>
// PARTS-NOT: doppler.gather
// PARTS: doppler.slice %[[G]] [0, 0, 0]
// PARTS: doppler.slice %[[G]] [2, 0, 0]
// PARTS: doppler.assemble
// AUTO-LABEL: func.func @embed
// AUTO-COUNT-1: doppler.gather %arg0[%arg1] axis 0 : tensor<64x16xf32>, tensor<4x8xi64> -> tensor<4x8x16xf32>
// AUTO-NOT: doppler.gather
// AUTO-LABEL: func.func @more_rows

// 4x8 rows of 64 bytes from a 64-row table, and 4x64 rows from the same
// table: the second gather costs more; a gather of the same rows from a
// table 16 times as tall costs the same.
// COST-LABEL: func.func @embed
// COST: doppler.gather {{.*}}doppler.compute_cost = [[SMALL:[0-9.e+-]+]] : f64
// COST-LABEL: func.func @more_rows
// COST-NOT: doppler.compute_cost = [[SMALL]] : f64
// COST: doppler.gather {{.*}}doppler.compute_cost =
// COST-LABEL: func.func @taller_table
// COST: doppler.gather {{.*}}doppler.compute_cost = [[SMALL]] : f64

// WORK: doppler-work-summary: @embed
// The einsum's 4 x 8 x 32 x 16 multiply-adds only.
// WORK: flops: 32768 (32.8 kFLOP)
// WORK: doppler-work-summary: @more_rows
// WORK: flops: 0 (0 FLOP)
// WORK: doppler-work-summary: @taller_table
// WORK: flops: 0 (0 FLOP)

func.func @embed(%w: tensor<64x16xf32>, %ids: tensor<4x8xi64>, %p: tensor<16x32xf32>) -> tensor<4x8x32xf32> {
  %e = doppler.gather %w[%ids] axis 0 : tensor<64x16xf32>, tensor<4x8xi64> -> tensor<4x8x16xf32>
  %y = doppler.einsum "bsd,dk->bsk" join(mul) agg(add) (%e, %p) : (tensor<4x8x16xf32>, tensor<16x32xf32>) -> tensor<4x8x32xf32>
  return %y : tensor<4x8x32xf32>
}

func.func @more_rows(%w: tensor<64x16xf32>, %ids: tensor<4x64xi64>) -> tensor<4x64x16xf32> {
  %e = doppler.gather %w[%ids] axis 0 : tensor<64x16xf32>, tensor<4x64xi64> -> tensor<4x64x16xf32>
  return %e : tensor<4x64x16xf32>
}

func.func @taller_table(%w: tensor<1024x16xf32>, %ids: tensor<4x8xi64>) -> tensor<4x8x16xf32> {
  %e = doppler.gather %w[%ids] axis 0 : tensor<1024x16xf32>, tensor<4x8xi64> -> tensor<4x8x16xf32>
  return %e : tensor<4x8x16xf32>
}
