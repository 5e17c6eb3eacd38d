func.func @bias_gelu(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.fused "bh,h->bh" "add(in0, in1); gelu(s0)" (%x, %b)
      : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// The program keeps its text; scalars print as written.
func.func @gate(%g: tensor<2x3xf64>, %u: tensor<3x2xf64>) -> tensor<2x3xf64> {
  %0 = doppler.fused "ij,ji->ij" "silu(in0); mul(s0, in1); scale(s1, 0.5)" (%g, %u)
      : (tensor<2x3xf64>, tensor<3x2xf64>) -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

// Work: flops are points times the program's flops (add 1 + gelu's), bytes
// the inputs and the output once.
