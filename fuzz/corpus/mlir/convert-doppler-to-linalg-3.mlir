// einsum (full reduction to a scalar, rank-0 result) in f64.
func.func @einsum_reduce_all(%x: tensor<4x8xf64>) -> tensor<f64> {
  %0 = doppler.einsum "ij->" join(square) agg(add) (%x) : (tensor<4x8xf64>) -> tensor<f64>
  return %0 : tensor<f64>
}
