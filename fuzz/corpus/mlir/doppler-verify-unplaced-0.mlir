// An unplaced program passes unchanged, regions without Doppler ops too.

func.func @unplaced(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b)
      : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

func.func @region_without_doppler_ops(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "test.wrapper"() ({
    %x = arith.addf %a, %a : tensor<4xf32>
    "test.yield"(%x) : (tensor<4xf32>) -> ()
  }) : () -> tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func private @external(tensor<4xf32>) -> tensor<4xf32>
