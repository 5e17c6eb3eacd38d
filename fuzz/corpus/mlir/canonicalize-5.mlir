// Slicing a block back out of an assemble gives the block.
func.func @slice_of_assemble(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = doppler.assemble [1, 2] (%a, %b) : tensor<2x3xf32>, tensor<2x5xf32> -> tensor<2x8xf32>
  %1 = doppler.slice %0 [0, 3] : tensor<2x8xf32> to tensor<2x5xf32>
  return %1 : tensor<2x5xf32>
}
