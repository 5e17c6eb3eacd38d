// The learned placement policy (policy=doppler, the default) from Debian's
// stock mlir-opt: the plugin dlopens libDopplerLearning.so from its own
// directory (build/lib), as doppler-opt does from build/bin/../lib.


func.func @chain(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b)
      : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %1 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%0, %c)
      : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %1 : tensor<16x16xf32>
}
