// RUN: doppler-opt %s --split-input-file --verify-diagnostics

func.func @conv_groups_not_dividing(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{groups 3 must divide the input channels (4) and the output channels (6)}}
  %0 = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0] groups 3 : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_weight_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{weight [6, 4, 3, 3] must have 2 input channels per group (input channels 4 / groups 2)}}
  %0 = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0] groups 2 : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_result_shape(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{result shape [1, 6, 8, 8] differs from the inferred [1, 6, 6, 6]}}
  %0 = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0] groups 1 : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
  return
}

// -----

func.func @conv_padding_length(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{padding [1, 1] must have 4 entries (the low padding of each of the 2 spatial dims, then the high padding of each)}}
  %0 = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [1, 1] groups 1 : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
  return
}

// -----

func.func @conv_strides_length(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{weight of rank 4 with 1 strides: a convolution over k = 1 to 3 spatial dims takes a weight of rank 2 + k and k strides}}
  %0 = doppler.conv %x, %w strides [1] dilations [1] padding [0, 0] groups 1 : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_zero_stride(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{strides [0, 1]: each must be in [1, 2^31]}}
  %0 = doppler.conv %x, %w strides [0, 1] dilations [1, 1] padding [0, 0, 0, 0] groups 1 : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_negative_padding(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{padding (low) [-1, 0]: each must be in [0, 2^31]}}
  %0 = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [-1, 0, 0, 0] groups 1 : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x5x6xf32>
  return
}

// -----

func.func @conv_kernel_too_large(%x: tensor<1x4x4x4xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{spatial dim 1 of extent 4 padded by 0+0 is shorter than the kernel's reach 7}}
  %0 = doppler.conv %x, %w strides [1, 1] dilations [1, 3] padding [0, 0, 0, 0] groups 1 : (tensor<1x4x4x4xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x2x1xf32>
  return
}

// -----

func.func @conv_zero_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{groups must be in [1, 2^31], got 0}}
  %0 = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0] groups 0 : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_element_types(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf64>) {
  // expected-error @+1 {{operands have element types 'f32' and 'f64'; they must agree}}
  %0 = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0] groups 1 : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf64>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_dynamic(%x: tensor<?x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{operand has a dynamic shape 'tensor<?x4x8x8xf32>'; doppler ops need static shapes}}
  %0 = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0] groups 1 : (tensor<?x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_integer(%x: tensor<1x4x8x8xi32>, %w: tensor<6x4x3x3xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of floating-point values}}
  %0 = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0] groups 1 : (tensor<1x4x8x8xi32>, tensor<6x4x3x3xi32>) -> tensor<1x6x6x6xi32>
  return
}

// -----

func.func @pool_kind(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{unknown pool kind 'min'; expected max or avg}}
  %0 = doppler.pool min %x kernel [2, 2] strides [2, 2] dilations [1, 1] padding [0, 0, 0, 0] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<4x8x8xf32>) {
  // expected-error @+1 {{input must have rank 4 (N, C and 2 spatial dims), got [4, 8, 8]}}
  %0 = doppler.pool max %x kernel [2, 2] strides [2, 2] dilations [1, 1] padding [0, 0, 0, 0] : tensor<4x8x8xf32> -> tensor<4x4x4xf32>
  return
}

// -----

func.func @pool_four_spatial_dims(%x: tensor<1x1x2x2x2x2xf32>) {
  // expected-error @+1 {{a window op takes 1 to 3 spatial dims, got 4}}
  %0 = doppler.pool max %x kernel [1, 1, 1, 1] strides [1, 1, 1, 1] dilations [1, 1, 1, 1] padding [0, 0, 0, 0, 0, 0, 0, 0] : tensor<1x1x2x2x2x2xf32> -> tensor<1x1x2x2x2x2xf32>
  return
}

// -----

func.func @pool_dilations_length(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{dilations has 1 entries for 2 spatial dims}}
  %0 = doppler.pool max %x kernel [2, 2] strides [2, 2] dilations [1] padding [0, 0, 0, 0] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  return
}

// -----

func.func @pool_result_type(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{result element type 'f16' differs from the input's 'f32'}}
  %0 = doppler.pool avg %x kernel [2, 2] strides [2, 2] dilations [1, 1] padding [0, 0, 0, 0] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf16>
  return
}

// -----

func.func @pool_huge_kernel(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{kernel [4294967296, 2]: each must be in [1, 2^31]}}
  %0 = doppler.pool avg %x kernel [4294967296, 2] strides [2, 2] dilations [1, 1] padding [0, 0, 0, 0] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  return
}
