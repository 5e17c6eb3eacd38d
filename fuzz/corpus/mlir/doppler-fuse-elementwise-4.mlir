// The producer in the consumer's second slot: its operands take that slot.
func.func @second_slot(%u: tensor<4x16xf32>, %g: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %s = doppler.einsum "ij->ij" join(silu) (%g) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = doppler.einsum "ij,ij->ij" join(mul) (%u, %s) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
