// einsum (batched, transposed output): "hqe,hke->hqk".
func.func @einsum_attention_scores(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>) -> tensor<2x4x6xf32> {
  %0 = doppler.einsum "hqe,hke->hqk" join(mul) agg(add) (%q, %k)
      : (tensor<2x4x8xf32>, tensor<2x6x8xf32>) -> tensor<2x4x6xf32>
  return %0 : tensor<2x4x6xf32>
}
