// Bad input gives "error: ..." and exit code 1, never a crash.
// Sizes beyond a reference for small shapes are refused, not attempted.

func.func @arith(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @task() -> !doppler.value {
  %0 = doppler.task "input" compute(1.0) transfer(1.0)
  return %0 : !doppler.value
}

func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

func.func @integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  return %x : tensor<4xi32>
}

func.func private @declaration(%x: tensor<4xf32>) -> tensor<4xf32>

func.func @huge(%x: tensor<100000x100000xf32>) -> tensor<100000x100000xf32> {
  return %x : tensor<100000x100000xf32>
}

func.func @long(%x: tensor<100000xf32>, %y: tensor<100000xf32>) -> tensor<f32> {
  %0 = doppler.einsum "i,j->" join(mul) agg(add) (%x, %y) : (tensor<100000xf32>, tensor<100000xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Comparisons need a function of the same name and signature in the other
// file, and fail when an output differs by more than the tolerance.
// A large enough tolerance accepts the difference.
