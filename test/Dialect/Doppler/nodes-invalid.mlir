// RUN: doppler-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// doppler.nodes: on a module placed for a system of several nodes, the node
// of each device. A well-formed one verifies and prints back as written.
// CHECK: module attributes {doppler.nodes = array<i64: 0, 0, 1, 1>}
// CHECK: doppler.device = #doppler.device<3>
module attributes {doppler.nodes = array<i64: 0, 0, 1, 1>} {
  func.func @ok(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = doppler.einsum "i->i" join(neg) (%x) {doppler.device = #doppler.device<3>} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{'doppler.nodes' lists 2 device(s), but an op is placed on device 2}}
module attributes {doppler.nodes = array<i64: 0, 1>} {
  func.func @too_few(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = doppler.einsum "i->i" join(neg) (%x) {doppler.device = #doppler.device<2>} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{'doppler.nodes' entries must be in [0, 4096), got -1 for device 1}}
module attributes {doppler.nodes = array<i64: 0, -1>} {
}

// -----

// expected-error @+1 {{'doppler.nodes' must be a non-empty array<i64> (the node of each device), got [0, 1]}}
module attributes {doppler.nodes = [0, 1]} {
}

// -----

// expected-error @+1 {{'doppler.nodes' must be a non-empty array<i64> (the node of each device), got array<i64>}}
module attributes {doppler.nodes = array<i64>} {
}

// -----

module {
  // expected-error @+1 {{'doppler.nodes' belongs on a module, not on this op}}
  func.func @on_function() attributes {doppler.nodes = array<i64: 0, 1>} {
    return
  }
}

// -----

// expected-error @+1 {{unknown doppler attribute 'doppler.node'}}
module attributes {doppler.node = array<i64: 0, 1>} {
}
