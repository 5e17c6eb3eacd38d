//===- TensorFile.cpp - Tensors in a binary file --------------------------===//

#include "TensorFile.h"

#include "JsonReader.h"

#include <cstring>
#include <fstream>

namespace doppler::runtime::detail {
namespace {

constexpr char kMagic[8] = {'D', 'P', 'L', 'R', 'T', 'N', 'S', '1'};
constexpr const char *kFormat = "doppler-tensors";
constexpr int kVersion = 1;

uint64_t readLittleEndian64(const char *bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i)
    value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

} // namespace

bool isBinaryTensorFile(const std::string &contents) {
  return contents.size() >= sizeof(kMagic) &&
         std::memcmp(contents.data(), kMagic, sizeof(kMagic)) == 0;
}

bool wantsBinaryTensorFile(const std::string &path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".bin") == 0;
}

Result<std::vector<HostTensor>> parseBinaryTensors(const std::string &contents,
                                                   const std::string &path) {
  Reader reader(path);
  if (contents.size() < 16)
    return reader.fail("header", "truncated (" +
                                     std::to_string(contents.size()) +
                                     " bytes)");
  uint64_t headerBytes = readLittleEndian64(contents.data() + 8);
  if (headerBytes > contents.size() - 16)
    return reader.fail("header", "its length " + std::to_string(headerBytes) +
                                     " runs past the end of the file");
  Result<json> header =
      parseJson(contents.substr(16, headerBytes), path + " (header)");
  if (!header)
    return header.status();
  if (Status status =
          reader.formatAndVersion(*header, "tensor file", kFormat, kVersion);
      !status)
    return status;
  Result<const json *> list = reader.field(*header, "header", "tensors");
  if (!list)
    return list.status();
  if (!(*list)->is_array())
    return reader.fail("tensors", "expected an array");
  std::vector<HostTensor> tensors;
  uint64_t offset = 16 + headerBytes;
  for (size_t i = 0; i < (*list)->size(); ++i) {
    std::string where = "tensors[" + std::to_string(i) + "]";
    const json &entry = (**list)[i];
    if (!entry.is_object())
      return reader.fail(where, "expected an object");
    HostTensor tensor;
    if (Status status =
            reader.typeAndShape(entry, where, tensor.type, tensor.shape);
        !status)
      return status;
    uint64_t bytes = byteSize(tensor.shape, tensor.type);
    if (bytes > contents.size() - offset)
      return reader.fail(where, "its " + std::to_string(bytes) +
                                    " bytes run past the end of the file");
    tensor.bytes.assign(contents.begin() + static_cast<std::ptrdiff_t>(offset),
                        contents.begin() +
                            static_cast<std::ptrdiff_t>(offset + bytes));
    offset += bytes;
    tensors.push_back(std::move(tensor));
  }
  if (offset != contents.size())
    return reader.fail("tensors", std::to_string(contents.size() - offset) +
                                      " bytes after the last tensor");
  return tensors;
}

Status writeBinaryTensors(const std::vector<HostTensor> &tensors,
                          const std::string &path) {
  json list = json::array();
  for (const HostTensor &tensor : tensors)
    list.push_back({{"type", std::string(elementTypeName(tensor.type))},
                    {"shape", tensor.shape}});
  std::string header =
      json{{"format", kFormat}, {"version", kVersion}, {"tensors", list}}
          .dump();
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return Status::failure("cannot write '" + path + "'");
  out.write(kMagic, sizeof(kMagic));
  uint64_t length = header.size();
  char lengthBytes[8];
  for (int i = 0; i < 8; ++i)
    lengthBytes[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  out.write(lengthBytes, sizeof(lengthBytes));
  out << header;
  for (const HostTensor &tensor : tensors)
    out.write(reinterpret_cast<const char *>(tensor.bytes.data()),
              static_cast<std::streamsize>(tensor.bytes.size()));
  out.close();
  if (!out)
    return Status::failure("cannot write '" + path + "'");
  return Status();
}

} // namespace doppler::runtime::detail
