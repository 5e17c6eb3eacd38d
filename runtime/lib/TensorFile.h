//===- TensorFile.h - Tensors in a binary file ------------------*- C++ -*-===//
//
// Internal to the runtime: the binary form of an outputs/arguments file
// (loadOutputs and saveOutputs in HostTensors.cpp), for tensors too large
// for JSON text (a model's weights: ResNet-18's 11.7M floats are 150 MB of
// JSON, 47 MB here, and parse in milliseconds instead of seconds):
//
//   8 bytes   "DPLRTNS1"
//   8 bytes   H, the header's length, unsigned little-endian
//   H bytes   JSON: {"format": "doppler-tensors", "version": 1,
//             "tensors": [{"type": "f32", "shape": [2, 3]}, ...]}
//   the tensors' elements, row-major, little-endian, one after the other
//   in the header's order, nothing after the last.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_LIB_TENSORFILE_H
#define DOPPLER_RUNTIME_LIB_TENSORFILE_H

#include "doppler/runtime/Plan.h"

#include <string>
#include <vector>

namespace doppler::runtime::detail {

/// Whether `contents` (a whole file) starts with the binary form's magic.
bool isBinaryTensorFile(const std::string &contents);

/// The tensors of a binary file's `contents`; errors name `path` and the
/// tensor.
Result<std::vector<HostTensor>> parseBinaryTensors(const std::string &contents,
                                                   const std::string &path);

/// Writes `tensors` to `path` in the binary form.
Status writeBinaryTensors(const std::vector<HostTensor> &tensors,
                          const std::string &path);

/// Whether saveOutputs writes `path` in the binary form (a ".bin" name).
bool wantsBinaryTensorFile(const std::string &path);

} // namespace doppler::runtime::detail

#endif // DOPPLER_RUNTIME_LIB_TENSORFILE_H
