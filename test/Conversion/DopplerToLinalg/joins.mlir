// Every join becomes the scalar expression ::doppler::applyJoin computes.
// RUN: doppler-opt %s --split-input-file --convert-doppler-to-linalg | FileCheck %s

func.func @join_identity(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = doppler.einsum "ij->ji" join(identity) (%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// CHECK-LABEL: func.func @join_identity
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[X]] : f32

// -----

func.func @join_neg(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(neg) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_neg
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_exp(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(exp) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_exp
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_log(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(log) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_log
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.log %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_sqrt(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(sqrt) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_sqrt
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.sqrt %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_rsqrt(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(rsqrt) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_rsqrt
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = math.sqrt %[[X]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[ONE]], %[[S]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_reciprocal(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(reciprocal) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_reciprocal
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[ONE]], %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_abs(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(abs) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_abs
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.absf %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_relu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(relu) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_relu
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.cmpf ogt, %[[X]], %[[Z]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[P]], %[[X]], %[[Z]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_silu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(silu) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_silu
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[N]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[X]], %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_gelu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(gelu) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_gelu
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[C0:.*]] = arith.constant 4.471500e-02 : f32
// CHECK-NEXT: %[[A:.*]] = arith.mulf %[[C0]], %[[X]] : f32
// CHECK-NEXT: %[[B:.*]] = arith.mulf %[[A]], %[[X]] : f32
// CHECK-NEXT: %[[CUBE:.*]] = arith.mulf %[[B]], %[[X]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[X]], %[[CUBE]] : f32
// CHECK-NEXT: %[[C1:.*]] = arith.constant 0.797884583 : f32
// CHECK-NEXT: %[[IN:.*]] = arith.mulf %[[C1]], %[[SUM]] : f32
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[IN]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[OP:.*]] = arith.addf %[[ONE]], %[[T]] : f32
// CHECK-NEXT: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[HX:.*]] = arith.mulf %[[HALF]], %[[X]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[HX]], %[[OP]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_tanh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(tanh) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_tanh
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.tanh %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_erf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(erf) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_erf
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.erf %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_sigmoid(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(sigmoid) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_sigmoid
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[N]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT: %[[ONE2:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[ONE2]], %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_square(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(square) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_square
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_scale(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(scale, 2.5) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_scale
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[C:.*]] = arith.constant 2.500000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[X]], %[[C]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_shift(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(shift, 2.5) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_shift
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[C:.*]] = arith.constant 2.500000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[X]], %[[C]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_add(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij,j->ij" join(add) (%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_add
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_sub(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij,j->ij" join(sub) (%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_sub
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_mul(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij,j->ij" join(mul) (%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_mul
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_div(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij,j->ij" join(div) (%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_div
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_max(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij,j->ij" join(max) (%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_max
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_min(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij,j->ij" join(min) (%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_min
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.minimumf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @join_pow(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij,j->ij" join(pow) (%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @join_pow
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.powf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// -----

func.func @agg_add(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "ij->i" join(identity) agg(add) (%x) : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @agg_add
// CHECK: %[[I:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[F:.*]] = linalg.fill ins(%[[I]] : f32)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%[[F]] : tensor<4xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// -----

func.func @agg_mul(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "ij->i" join(identity) agg(mul) (%x) : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @agg_mul
// CHECK: %[[I:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[F:.*]] = linalg.fill ins(%[[I]] : f32)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%[[F]] : tensor<4xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[ACC]], %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// -----

func.func @agg_max(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "ij->i" join(identity) agg(max) (%x) : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @agg_max
// CHECK: %[[I:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[F:.*]] = linalg.fill ins(%[[I]] : f32)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%[[F]] : tensor<4xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[ACC]], %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// -----

func.func @agg_min(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "ij->i" join(identity) agg(min) (%x) : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @agg_min
// CHECK: %[[I:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[F:.*]] = linalg.fill ins(%[[I]] : f32)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%[[F]] : tensor<4xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[R:.*]] = arith.minimumf %[[ACC]], %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
