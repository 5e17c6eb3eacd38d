// Einsums nested in an op's region would be neither costed nor placed.
func.func @nested(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "test.wrapper"() ({
    %x = doppler.einsum "i->i" join(exp) (%a) : (tensor<4xf32>) -> tensor<4xf32>
    "test.yield"(%x) : (tensor<4xf32>) -> ()
  }) : () -> tensor<4xf32>
  return %r : tensor<4xf32>
}
