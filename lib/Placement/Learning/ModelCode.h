//===- ModelCode.h - TorchScript source of model archives -------*- C++ -*-===//
//
// Internal to the learning library. A model or checkpoint archive written by
// torch::serialize::OutputArchive holds, beside its pickles and tensors, the
// TorchScript source of its module classes (code/**.py) and a constants
// table. Our writer only ever produces classes that declare attributes, so
// LibTorch's TorchScript compiler, which crashes on some malformed class
// bodies, must only see that subset: the loader checks it first.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_LEARNING_MODELCODE_H
#define DOPPLER_LIB_PLACEMENT_LEARNING_MODELCODE_H

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace doppler::placement::learning {

/// Checks one code/ entry `text` (named `entry`, e.g. "code/__torch__.py")
/// against the source our writer produces: exactly one
///   class Module(Module):
/// whose body lines (two-space indent) are `__parameters__ = [...]`,
/// `__buffers__ = [...]` (lists of string literals), `__annotations__ = []`,
/// `__annotations__["key"] = TYPE` or `name : TYPE`, where TYPE is Tensor,
/// int, float, bool, str, List/Optional/Tuple/Dict of types, or a module
/// class `__torch__.Module` / `__torch__.___torch_mangle_N.Module`. Appends
/// the code/ entry of each module class referred to to `references`.
/// Returns nullopt when it conforms, else the reason ("line 2: ...").
std::optional<std::string>
checkModelCode(const std::string &entry, const std::string &text,
               std::vector<std::string> *references = nullptr);

/// Checks the code/ entries and constants.pkl of the archive in `data`
/// (read with LibTorch's own zip reader, the one its loader uses) before
/// LibTorch compiles them: each code/ entry passes checkModelCode, every
/// module class referred to has its entry and none refers to itself through
/// others, constants.pkl is the empty table, and no compressed entry claims
/// more bytes than deflate can produce from it. Returns nullopt when the
/// archive passes, else the reason (also when LibTorch's reader cannot list
/// its entries, e.g. one outside the archive's folder: its loader, which
/// reads entries by name, would go on).
std::optional<std::string> checkArchiveCode(const void *data, size_t size);

/// Once per process: LibTorch's errors carry no backtrace. describeException
/// drops it anyway, and symbolising it (dladdr over LibTorch's symbols, at
/// every throw) took three quarters of the time of refusing a malformed
/// model file.
void skipTorchBacktraces();

} // namespace doppler::placement::learning

#endif // DOPPLER_LIB_PLACEMENT_LEARNING_MODELCODE_H
