//===- ModelCode.cpp - TorchScript source of model archives ---------------===//
//
// The checker of the TorchScript subset our archive writer produces (see
// ModelCode.h), and the pass over an archive's code/ entries that runs it
// before LibTorch's loader compiles them.
//
//===----------------------------------------------------------------------===//

#include "ModelCode.h"
#include "PolicyNetwork.h"
#include "ZipDirectory.h"

#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <c10/util/Logging.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>

using namespace doppler::placement::learning;

namespace {

bool isIdentifierStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isIdentifierChar(char c) {
  return isIdentifierStart(c) || (c >= '0' && c <= '9');
}

/// A cursor over one line of source.
class LineParser {
public:
  LineParser(const std::string &line, std::vector<std::string> *references)
      : line(line), references(references) {}

  bool atEnd() const { return at == line.size(); }
  bool literal(const char *text) {
    size_t length = std::strlen(text);
    if (line.compare(at, length, text) != 0)
      return false;
    at += length;
    return true;
  }
  bool identifier(std::string *out) {
    size_t begin = at;
    if (at >= line.size() || !isIdentifierStart(line[at]))
      return false;
    while (at < line.size() && isIdentifierChar(line[at]))
      ++at;
    *out = line.substr(begin, at - begin);
    return true;
  }
  /// A double-quoted string of printable ASCII, without escapes.
  bool string() {
    if (!literal("\""))
      return false;
    while (at < line.size() && line[at] != '"') {
      unsigned char c = line[at];
      if (c < 0x20 || c > 0x7e || c == '\\')
        return false;
      ++at;
    }
    return literal("\"");
  }
  /// `[]` or `["a", "b", ]`, as the writer prints a list of names.
  bool stringList() {
    if (!literal("["))
      return false;
    while (!literal("]"))
      if (!string() || !literal(", "))
        return false;
    return true;
  }
  bool type(int depth = 0) {
    if (depth > 8)
      return false;
    std::string name;
    if (!identifier(&name))
      return false;
    if (name == "Tensor" || name == "int" || name == "float" ||
        name == "bool" || name == "str")
      return true;
    if (name == "__torch__")
      return moduleClass();
    int arity = name == "List" || name == "Optional" ? 1
                : name == "Dict"                     ? 2
                : name == "Tuple"                    ? -1
                                                     : 0;
    if (arity == 0 || !literal("["))
      return false;
    int count = 0;
    do {
      if (!type(depth + 1))
        return false;
      ++count;
    } while (literal(", "));
    return literal("]") && (arity < 0 || count == arity);
  }

private:
  /// After `__torch__`: `.Module` or `.___torch_mangle_N.Module`.
  bool moduleClass() {
    std::string entry = "code/__torch__.py";
    if (literal(".___torch_mangle_")) {
      size_t begin = at;
      while (at < line.size() && at - begin < 9 && line[at] >= '0' &&
             line[at] <= '9')
        ++at;
      if (at == begin || (line[begin] == '0' && at - begin > 1))
        return false;
      entry = "code/__torch__/___torch_mangle_" +
              line.substr(begin, at - begin) + ".py";
    }
    if (!literal(".Module"))
      return false;
    if (references)
      references->push_back(entry);
    return true;
  }

  const std::string &line;
  std::vector<std::string> *references;
  size_t at = 0;
};

std::optional<std::string> checkBodyLine(const std::string &line,
                                         size_t index, bool *annotations,
                                         std::vector<std::string> *references) {
  LineParser p(line, references);
  if (!p.literal("  "))
    return std::string("not an indented class member");
  // The writer's first two lines.
  if (index == 1)
    return p.literal("__parameters__ = ") && p.stringList() && p.atEnd()
               ? std::nullopt
               : std::optional<std::string>("not the __parameters__ list");
  if (index == 2)
    return p.literal("__buffers__ = ") && p.stringList() && p.atEnd()
               ? std::nullopt
               : std::optional<std::string>("not the __buffers__ list");
  if (p.literal("__annotations__")) {
    if (p.literal(" = []") && p.atEnd() && !*annotations) {
      *annotations = true;
      return std::nullopt;
    }
    if (*annotations && p.literal("[") && p.string() && p.literal("] = ") &&
        p.type() && p.atEnd())
      return std::nullopt;
    return std::string("not an attribute annotation");
  }
  std::string name;
  if (!p.identifier(&name) || !p.literal(" : ") || !p.type() || !p.atEnd())
    return std::string("not an attribute declaration (name : type)");
  if (name.size() >= 4 && name.compare(0, 2, "__") == 0 &&
      name.compare(name.size() - 2, 2, "__") == 0)
    return "attribute '" + name + "' has a reserved name";
  return std::nullopt;
}

/// An archive in memory, for LibTorch's zip reader.
class MemoryAdapter final : public caffe2::serialize::ReadAdapterInterface {
public:
  MemoryAdapter(const void *data, size_t size)
      : data(static_cast<const char *>(data)), length(size) {}
  size_t size() const override { return length; }
  size_t read(uint64_t pos, void *buf, size_t n,
              const char * /*what*/) const override {
    if (pos >= length)
      return 0;
    n = std::min<size_t>(n, length - pos);
    std::memcpy(buf, data + pos, n);
    return n;
  }

private:
  const char *data;
  size_t length;
};

bool isCodeName(const std::string &name) {
  return name.size() > 3 && name.compare(name.size() - 3, 3, ".py") == 0 &&
         name.find("code/") != std::string::npos;
}

/// Deflate turns a stored byte into at most 1032 bytes: a compressed code/
/// entry claiming more would make LibTorch's reader allocate what it claims.
/// Every central directory header in the file is followed
/// (forEachZipCentralEntry, as archivePicklesFit in ModelArchive.cpp).
std::optional<std::string> codeSizesFit(const unsigned char *data,
                                        size_t size) {
  std::optional<std::string> problem;
  forEachZipCentralEntry(data, size, [&](const ZipCentralEntry &e) {
    if (e.method == 0 || !isCodeName(e.name))
      return true;
    if (e.stored == 0xffffffff || e.expanded == 0xffffffff ||
        e.expanded > e.stored * 1032 + 1024) {
      problem = e.name + " claims " + std::to_string(e.expanded) +
                " bytes from " + std::to_string(e.stored);
      return false;
    }
    return true;
  });
  return problem;
}

} // namespace

std::optional<std::string> doppler::placement::learning::checkModelCode(
    const std::string &entry, const std::string &text,
    std::vector<std::string> *references) {
  if (text.empty() || text.back() != '\n')
    return entry + ": does not end with a line break";
  bool annotations = false;
  size_t index = 0;
  for (size_t begin = 0; begin < text.size(); ++index) {
    size_t end = text.find('\n', begin);
    std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    std::optional<std::string> problem;
    if (index == 0) {
      if (line != "class Module(Module):")
        problem = "not the class Module(Module) header";
    } else {
      problem = checkBodyLine(line, index, &annotations, references);
    }
    if (problem)
      return entry + ": line " + std::to_string(index + 1) + ": " + *problem;
  }
  if (index < 3)
    return entry + ": the class lacks its __parameters__ or __buffers__";
  return std::nullopt;
}

std::optional<std::string>
doppler::placement::learning::checkArchiveCode(const void *data, size_t size) {
  if (auto problem =
          codeSizesFit(static_cast<const unsigned char *>(data), size))
    return problem;
  std::map<std::string, std::vector<std::string>> graph;
  try {
    caffe2::serialize::PyTorchStreamReader reader(
        std::make_shared<MemoryAdapter>(data, size));
    for (const std::string &name : reader.getAllRecords()) {
      bool code = name.rfind("code/", 0) == 0 && isCodeName(name);
      if (!code && name != "constants.pkl")
        continue;
      auto [bytes, length] = reader.getRecord(name);
      std::string text(static_cast<const char *>(bytes.get()), length);
      if (!code) {
        // No method, so no constant: the writer's empty tuple (protocol 2).
        if (text != std::string("\x80\x02).", 4))
          return std::string("constants.pkl is not the empty table");
        continue;
      }
      std::vector<std::string> &references = graph[name];
      if (auto problem = checkModelCode(name, text, &references))
        return problem;
    }
  } catch (const std::exception &e) {
    // Refused too: LibTorch's loader reads records by name and would go on
    // with an archive whose other entries cannot be listed (one outside the
    // archive's folder, as a mutated name makes it).
    std::string reason = describeException(e);
    for (char &c : reason) // it may quote a mangled entry name
      if (static_cast<unsigned char>(c) < 0x20 ||
          static_cast<unsigned char>(c) > 0x7e)
        c = '?';
    return reason;
  }
  // Every class referred to exists, and none contains itself.
  std::map<std::string, int> state; // 1: on the path, 2: done
  std::vector<std::pair<std::string, size_t>> stack;
  for (const auto &root : graph) {
    if (state[root.first])
      continue;
    stack.push_back({root.first, 0});
    state[root.first] = 1;
    while (!stack.empty()) {
      auto &[node, next] = stack.back();
      const std::vector<std::string> &edges = graph[node];
      if (next == edges.size()) {
        state[node] = 2;
        stack.pop_back();
        continue;
      }
      const std::string &target = edges[next++];
      if (!graph.count(target))
        return node + " refers to a module class without code (" + target +
               ")";
      if (state[target] == 1)
        return node + " refers to a module class that contains it (" +
               target + ")";
      if (state[target] == 0) {
        state[target] = 1;
        stack.push_back({target, 0});
      }
    }
  }
  return std::nullopt;
}

void doppler::placement::learning::skipTorchBacktraces() {
  static std::once_flag once;
  std::call_once(once, [] {
    c10::SetStackTraceFetcher([] { return std::string(); });
  });
}
