// SwiGLU's gate: silu(g) * u, the producer in the consumer's first slot.
func.func @swiglu_gate(%g: tensor<4x16xf32>, %u: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %s = doppler.einsum "ij->ij" join(silu) (%g) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = doppler.einsum "ij,ij->ij" join(mul) (%s, %u) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
