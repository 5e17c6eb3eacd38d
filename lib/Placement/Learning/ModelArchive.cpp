//===- ModelArchive.cpp - Model files of the dual policy ------------------===//
//
// A model file is a LibTorch archive holding a format tag, the
// configuration and every parameter under its module path.
//
//===----------------------------------------------------------------------===//

#include "ModelCode.h"
#include "PolicyNetwork.h"
#include "ZipDirectory.h"

#include "Doppler/Support/ErrorString.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

using namespace doppler::placement;
using namespace doppler::placement::learning;
using doppler::setError;
using torch::Tensor;

namespace {

constexpr const char *kFormatTag = "doppler-dual-policy";
constexpr int64_t kFormatVersion = 1;

constexpr const char *kParameterPrefix = "param_";

/// Archive key of a parameter: the prefix, then its module path with '_'
/// for '.'.
std::string mangle(const std::string &name) {
  std::string out = kParameterPrefix;
  for (char c : name)
    out += c == '.' ? '_' : c;
  return out;
}

std::string shapeText(c10::IntArrayRef sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

/// Checks that every length-prefixed value of a pickle stream fits in it,
/// and that no memo index exceeds its length. LibTorch's unpickler
/// allocates a string or byte buffer of the length it reads before it reads
/// the bytes, and grows its memo table to the index a PUT names, so a 15 KB
/// file whose pickle claims a 1.6 GB string or memo slot 2^31 costs
/// gigabytes (or aborts) before it fails. Stops (accepting) at an opcode it
/// does not know or at STOP: only what precedes is checked.
bool pickleLengthsFit(const unsigned char *data, size_t size) {
  size_t at = 0;
  auto skipLine = [&] {
    while (at < size && data[at] != '\n')
      ++at;
    ++at;
  };
  while (at < size) {
    unsigned char op = data[at++];
    int lengthBytes = 0; // of a length prefix, followed by that many bytes
    size_t fixed = 0;    // of a fixed-size argument
    switch (op) {
    case '.': // STOP
      return true;
    case '(': case '0': case '1': case '2': case 'N': case 'Q': case 'R':
    case 'a': case 'b': case 'd': case '}': case 'e': case 'l': case ']':
    case 'o': case 's': case 't': case ')': case 'u': case 0x81: case 0x85:
    case 0x86: case 0x87: case 0x88: case 0x89: case 0x8f: case 0x90:
    case 0x91: case 0x92: case 0x93: case 0x94: case 0x97: case 0x98:
      break;
    case 'F': case 'I': case 'L': case 'P': case 'S': case 'V': case 'g':
    case 'p':
      skipLine();
      break;
    case 'c': case 'i':
      skipLine();
      skipLine();
      break;
    case 'K': case 'h': case 'q': case 0x80: case 0x82:
      fixed = 1;
      break;
    case 'M': case 0x83:
      fixed = 2;
      break;
    case 'J': case 'j': case 'r': case 0x84:
      fixed = 4;
      break;
    case 'G': case 0x95:
      fixed = 8;
      break;
    case 'U': case 'C': case 0x8c: case 0x8a:
      lengthBytes = 1;
      break;
    case 'T': case 'X': case 'B': case 0x8b:
      lengthBytes = 4;
      break;
    case 0x8d: case 0x8e: case 0x96:
      lengthBytes = 8;
      break;
    default:
      return true;
    }
    // LONG_BINPUT: a memo slot past one per byte of the stream is bogus
    // (every slot takes a PUT of at least 2 bytes).
    if (op == 'r' && at + 4 <= size && readLittle(data + at, 4) > size)
      return false;
    if (lengthBytes) {
      if (size - std::min(at, size) < size_t(lengthBytes))
        return false;
      uint64_t length = readLittle(data + at, lengthBytes);
      at += lengthBytes;
      if (length > size - at)
        return false;
      at += length;
    } else if (fixed) {
      at += fixed;
    }
  }
  return true;
}

/// Checks the pickles of a model archive (a zip file; LibTorch stores its
/// entries uncompressed) before LibTorch reads it; see pickleLengthsFit.
/// Every central directory header in the file is followed
/// (forEachZipCentralEntry). Anything it cannot follow is left to
/// LibTorch's own checks.
bool archivePicklesFit(const unsigned char *data, size_t size) {
  constexpr uint32_t kLocalSignature = 0x04034b50;
  return forEachZipCentralEntry(data, size, [&](const ZipCentralEntry &e) {
    const std::string &name = e.name;
    // data.pkl, constants.pkl, and code/**.debug_pkl (source ranges).
    if (e.method != 0 || name.size() < 4 ||
        (name.compare(name.size() - 4, 4, ".pkl") != 0 &&
         name.compare(name.size() - 4, 4, "_pkl") != 0))
      return true;
    const uint64_t local = e.local;
    if (local > size || size - local < 30 ||
        readLittle(data + local, 4) != kLocalSignature)
      return true;
    uint64_t begin = local + 30 + readLittle(data + local + 26, 2) +
                     readLittle(data + local + 28, 2);
    if (begin > size || e.stored > size - begin)
      return true;
    return pickleLengthsFit(data + begin, e.stored);
  });
}

} // namespace

void doppler::placement::learning::writeNetwork(
    DualPolicyNetworkImpl &network, torch::serialize::OutputArchive &archive) {
  const ModelConfig &c = network.config;
  archive.write("format", c10::IValue(std::string(kFormatTag)));
  archive.write("version", c10::IValue(kFormatVersion));
  archive.write("config_hidden", c10::IValue(int64_t(c.hiddenSize)));
  archive.write("config_head", c10::IValue(int64_t(c.headHiddenSize)));
  archive.write("config_rounds", c10::IValue(int64_t(c.messagePassingRounds)));
  archive.write("config_edge", c10::IValue(int64_t(c.edgeNetwork)));
  archive.write("config_rank", c10::IValue(int64_t(c.edgeRank)));
  archive.write("config_shared", c10::IValue(int64_t(c.sharedEncoder)));
  archive.write("config_estimate", c10::IValue(int64_t(c.startEstimate)));
  archive.write("config_prior", c10::IValue(int64_t(c.heuristicPrior)));
  archive.write("config_join", c10::IValue(int64_t(c.joinFeature)));
  archive.write("config_project", c10::IValue(int64_t(c.projectSums)));
  archive.write("config_memory", c10::IValue(int64_t(c.memoryFeature)));
  archive.write("config_lookahead", c10::IValue(int64_t(c.lookahead)));
  for (const auto &item : network.named_parameters())
    archive.write(mangle(item.key()), item.value().detach());
}

std::string doppler::placement::learning::firstNonFiniteParameter(
    DualPolicyNetworkImpl &network) {
  for (const auto &item : network.named_parameters())
    if (!torch::isfinite(item.value().detach()).all().item<bool>())
      return item.key();
  return {};
}

namespace {

/// The model configuration an archive holds, after its format tag and
/// version; nullopt (and `error`) when they are missing or out of range.
std::optional<ModelConfig>
readModelConfig(torch::serialize::InputArchive &archive,
                const std::string &source, std::string *error) {
  c10::IValue value;
  if (!archive.try_read("format", value) || !value.isString() ||
      value.toStringRef() != kFormatTag) {
    setError(error, source + ": not a Doppler policy model (no '" +
                        std::string(kFormatTag) + "' format tag)");
    return std::nullopt;
  }
  if (!archive.try_read("version", value) || !value.isInt() ||
      value.toInt() != kFormatVersion) {
    setError(error, source + ": unsupported model format version " +
                        (value.isInt() ? std::to_string(value.toInt())
                                       : std::string("(missing)")) +
                        " (this build reads version " +
                        std::to_string(kFormatVersion) + ")");
    return std::nullopt;
  }
  auto readInt = [&](const char *key, int64_t lo, int64_t hi,
                     int64_t &out) -> bool {
    c10::IValue v;
    if (!archive.try_read(key, v) || !v.isInt()) {
      setError(error, source + ": model configuration lacks '" +
                          std::string(key) + "'");
      return false;
    }
    if (v.toInt() < lo || v.toInt() > hi) {
      setError(error, source + ": model configuration '" + std::string(key) +
                          "' = " + std::to_string(v.toInt()) +
                          " is out of range [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "]");
      return false;
    }
    out = v.toInt();
    return true;
  };
  int64_t hidden, head, rounds, edge, rank, shared, estimate;
  if (!readInt("config_hidden", 1, 4096, hidden) ||
      !readInt("config_head", 1, 4096, head) ||
      !readInt("config_rounds", 0, 64, rounds) ||
      !readInt("config_edge", 0, 1, edge) ||
      !readInt("config_rank", 1, 4096, rank) ||
      !readInt("config_shared", 0, 1, shared) ||
      !readInt("config_estimate", 0, 1, estimate))
    return std::nullopt;
  // Added later: models written before them have none of them (0).
  int64_t prior = 0, join = 0, project = 0, memory = 0, lookahead = 0;
  for (auto [key, flag] :
       {std::pair{"config_prior", &prior}, std::pair{"config_join", &join},
        std::pair{"config_project", &project},
        std::pair{"config_memory", &memory},
        std::pair{"config_lookahead", &lookahead}})
    if (c10::IValue stored;
        archive.try_read(key, stored) && !readInt(key, 0, 1, *flag))
      return std::nullopt;
  ModelConfig config;
  config.hiddenSize = static_cast<int32_t>(hidden);
  config.headHiddenSize = static_cast<int32_t>(head);
  config.messagePassingRounds = static_cast<int32_t>(rounds);
  config.edgeNetwork = static_cast<EdgeNetworkKind>(edge);
  config.edgeRank = static_cast<int32_t>(rank);
  config.sharedEncoder = shared != 0;
  config.startEstimate = static_cast<StartEstimate>(estimate);
  config.heuristicPrior = prior != 0;
  config.joinFeature = join != 0;
  config.projectSums = project != 0;
  config.memoryFeature = memory != 0;
  config.lookahead = lookahead != 0;
  if (config.edgeNetwork == EdgeNetworkKind::Full && hidden > 512) {
    setError(error, source + ": hidden size " + std::to_string(hidden) +
                        " is too large for full edge matrices");
    return std::nullopt;
  }
  return config;
}

/// What is wrong with stored parameter `key` for a parameter of shape
/// `expected` ("" when nothing).
std::string storedParameterProblem(const Tensor &stored,
                                   c10::IntArrayRef expected,
                                   const std::string &key) {
  if (stored.sizes() != expected)
    return ": parameter '" + key + "' has shape " + shapeText(stored.sizes()) +
           ", expected " + shapeText(expected);
  if (stored.scalar_type() != torch::kFloat32)
    return ": parameter '" + key + "' is not float32";
  // A damaged archive can give a tensor of the right shape whose storage
  // is missing or smaller than its elements (LibTorch then reads address
  // 0 or past the buffer): a parameter must be dense and fully backed.
  if (stored.numel() > 0 &&
      (!stored.has_storage() || !stored.is_contiguous() ||
       stored.storage().data() == nullptr ||
       stored.storage().nbytes() <
           static_cast<size_t>(stored.storage_offset() + stored.numel()) *
               stored.element_size()))
    return ": parameter '" + key + "' has no data for its shape";
  if (!torch::isfinite(stored).all().item<bool>())
    return ": parameter '" + key + "' holds NaN or infinite values";
  return {};
}

} // namespace

std::optional<DualPolicyNetwork> doppler::placement::learning::readNetwork(
    torch::serialize::InputArchive &archive, const std::string &source,
    std::string *error) {
  std::optional<ModelConfig> config = readModelConfig(archive, source, error);
  if (!config)
    return std::nullopt;
  DualPolicyNetwork network(*config);
  torch::NoGradGuard noGrad;
  for (auto &item : network->named_parameters()) {
    Tensor stored;
    if (!archive.try_read(mangle(item.key()), stored)) {
      setError(error, source + ": model lacks parameter '" + item.key() + "'");
      return std::nullopt;
    }
    if (std::string problem =
            storedParameterProblem(stored, item.value().sizes(), item.key());
        !problem.empty()) {
      setError(error, source + problem);
      return std::nullopt;
    }
    item.value().copy_(stored);
  }
  // A tensor the configuration has no place for means the configuration
  // keys do not describe the file (edited, or written by another build):
  // loading it would silently drop learned weights.
  std::vector<std::string> expected;
  for (const auto &item : network->named_parameters())
    expected.push_back(mangle(item.key()));
  for (const std::string &key : archive.keys()) {
    if (key.rfind(kParameterPrefix, 0) != 0 ||
        std::find(expected.begin(), expected.end(), key) != expected.end())
      continue;
    setError(error, source + ": model holds parameter '" +
                        key.substr(std::strlen(kParameterPrefix)) +
                        "', which its configuration (" + config->describe() +
                        ") does not have");
    return std::nullopt;
  }
  return network;
}

void doppler::placement::learning::copyParameters(DualPolicyNetworkImpl &from,
                                                  DualPolicyNetworkImpl &to) {
  torch::NoGradGuard noGrad;
  auto source = from.named_parameters();
  for (auto &item : to.named_parameters())
    item.value().copy_(source[item.key()]);
}

bool doppler::placement::learning::openArchive(
    torch::serialize::InputArchive &archive, const std::string &path,
    std::string *error) {
  skipTorchBacktraces();
  std::ifstream probe(path, std::ios::binary);
  if (!probe) {
    setError(error, "cannot open '" + path + "': " + std::strerror(errno));
    return false;
  }
  probe.seekg(0, std::ios::end);
  std::streamoff size = probe.tellg();
  if (size <= 0) {
    setError(error, "'" + path + "' is empty, not a model file");
    return false;
  }
  std::vector<unsigned char> bytes(static_cast<size_t>(size));
  probe.seekg(0);
  if (!probe.read(reinterpret_cast<char *>(bytes.data()), size)) {
    setError(error, "cannot read '" + path + "'");
    return false;
  }
  if (!archivePicklesFit(bytes.data(), bytes.size())) {
    setError(error, "'" + path + "' is not a readable model file (a value "
                    "or memo index is larger than the file)");
    return false;
  }
  if (auto problem = checkArchiveCode(bytes.data(), bytes.size())) {
    setError(error, "'" + path + "' is not a readable model file (" +
                        *problem + ")");
    return false;
  }
  try {
    archive.load_from(path);
  } catch (const std::exception &e) {
    setError(error, "'" + path + "' is not a readable model file (" +
                        describeException(e) + ")");
    return false;
  }
  return true;
}

bool doppler::placement::learning::openArchive(
    torch::serialize::InputArchive &archive, const void *data, size_t size,
    const std::string &name, std::string *error) {
  skipTorchBacktraces();
  if (size == 0) {
    setError(error, name + " is empty, not a model");
    return false;
  }
  if (!archivePicklesFit(static_cast<const unsigned char *>(data), size)) {
    setError(error, name + " is not a readable model (a value or memo "
                           "index is larger than the file)");
    return false;
  }
  if (auto problem = checkArchiveCode(data, size)) {
    setError(error, name + " is not a readable model (" + *problem + ")");
    return false;
  }
  try {
    archive.load_from(static_cast<const char *>(data), size);
  } catch (const std::exception &e) {
    setError(error, name + " is not a readable model (" +
                        describeException(e) + ")");
    return false;
  }
  return true;
}

bool doppler::placement::learning::saveArchiveAtomically(
    torch::serialize::OutputArchive &archive, const std::string &path,
    std::string *error) {
  std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  try {
    archive.save_to(temporary);
  } catch (const std::exception &e) {
    std::remove(temporary.c_str());
    setError(error, "cannot write '" + path + "': " + describeException(e));
    return false;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    setError(error, "cannot write '" + path + "': " + reason);
    return false;
  }
  return true;
}

std::string
doppler::placement::learning::describeException(const std::exception &e) {
  const char *text = e.what();
  if (const auto *torchError = dynamic_cast<const c10::Error *>(&e))
    text = torchError->what_without_backtrace();
  std::string message(text);
  size_t newline = message.find('\n');
  if (newline != std::string::npos)
    message.resize(newline);
  return message;
}
