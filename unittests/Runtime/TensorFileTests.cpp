//===- TensorFileTests.cpp - Binary tensor files --------------------------===//
//
// saveOutputs writes a ".bin" path in the binary form of
// runtime/lib/TensorFile.h and loadOutputs reads either form by its first
// bytes: every element type round-trips bit for bit (NaN and infinities
// included), and a damaged file is an error that names the file and the
// part, never a crash.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/Plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>

using namespace doppler::runtime;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "tensor-file-" + name;
}

HostTensor f32Tensor(Shape shape, std::vector<float> values) {
  HostTensor tensor;
  tensor.type = ElementType::F32;
  tensor.shape = std::move(shape);
  tensor.bytes.resize(values.size() * sizeof(float));
  std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeAll(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

TEST(TensorFile, RoundTripsEveryElementBitForBit) {
  std::vector<HostTensor> tensors;
  const float inf = std::numeric_limits<float>::infinity();
  tensors.push_back(f32Tensor({2, 3}, {1.5f, -0.0f, inf, -inf,
                                       std::numeric_limits<float>::quiet_NaN(),
                                       1e-42f}));
  HostTensor f64;
  f64.type = ElementType::F64;
  f64.shape = {}; // a scalar
  double pi = 3.141592653589793;
  f64.bytes.resize(sizeof(pi));
  std::memcpy(f64.bytes.data(), &pi, sizeof(pi));
  tensors.push_back(f64);
  HostTensor f16;
  f16.type = ElementType::F16;
  f16.shape = {0, 4}; // empty
  tensors.push_back(f16);
  std::string path = tempPath("roundtrip.bin");
  ASSERT_TRUE(saveOutputs(tensors, path));
  EXPECT_EQ(readAll(path).substr(0, 8), "DPLRTNS1");
  Result<std::vector<HostTensor>> loaded = loadOutputs(path);
  ASSERT_TRUE(loaded) << loaded.message();
  ASSERT_EQ(loaded->size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ((*loaded)[i].type, tensors[i].type) << i;
    EXPECT_EQ((*loaded)[i].shape, tensors[i].shape) << i;
    EXPECT_EQ((*loaded)[i].bytes, tensors[i].bytes) << i;
  }
  // A JSON path still gets JSON, which loadOutputs reads as before.
  std::string json = tempPath("roundtrip.json");
  ASSERT_TRUE(saveOutputs({tensors[1]}, json));
  EXPECT_EQ(readAll(json).front(), '{');
  Result<std::vector<HostTensor>> fromJson = loadOutputs(json);
  ASSERT_TRUE(fromJson) << fromJson.message();
  EXPECT_EQ((*fromJson)[0].bytes, tensors[1].bytes);
  std::remove(path.c_str());
  std::remove(json.c_str());
}

/// The error of loading `bytes` written at `path` (a failure if they load).
std::string loadError(const std::string &path, const std::string &bytes) {
  writeAll(path, bytes);
  Result<std::vector<HostTensor>> loaded = loadOutputs(path);
  EXPECT_FALSE(loaded);
  return loaded ? std::string() : loaded.message();
}

TEST(TensorFile, DamagedFilesAreErrors) {
  std::string path = tempPath("good.bin");
  ASSERT_TRUE(saveOutputs({f32Tensor({4}, {1, 2, 3, 4})}, path));
  const std::string good = readAll(path);
  std::string bad = tempPath("bad.bin");
  auto errorOf = [&](const std::string &bytes) { return loadError(bad, bytes); };
  EXPECT_EQ(errorOf(good.substr(0, 12)), bad + ": header: truncated (12 bytes)");
  EXPECT_EQ(errorOf(good.substr(0, good.size() - 1)),
            bad + ": tensors[0]: its 16 bytes run past the end of the file");
  EXPECT_EQ(errorOf(good + "xy"), bad + ": tensors: 2 bytes after the last tensor");
  std::string longHeader = good;
  longHeader[8] = '\xff';
  longHeader[9] = '\xff';
  EXPECT_NE(errorOf(longHeader).find("runs past the end of the file"),
            std::string::npos);
  std::string wrongType = good;
  size_t at = wrongType.find("\"f32\"");
  ASSERT_NE(at, std::string::npos);
  wrongType.replace(at, 5, "\"q32\"");
  EXPECT_EQ(errorOf(wrongType),
            bad + ": tensors[0].type: unknown element type 'q32' (expected "
                  "f32, f64, f16, i32 or i64)");
  // Another version's magic is named, not read as JSON.
  std::string otherVersion = good;
  otherVersion[7] = '2';
  EXPECT_EQ(errorOf(otherVersion),
            bad + ": a binary tensor file this reader does not read (magic "
                  "'DPLRTNS2'; this reader reads 'DPLRTNS1')");
  std::remove(path.c_str());
  std::remove(bad.c_str());
}

/// A binary tensor file of `header` and no data.
std::string withHeader(const std::string &header) {
  std::string bytes = "DPLRTNS1";
  for (int i = 0; i < 8; ++i)
    bytes += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return bytes + header;
}

TEST(TensorFile, FieldsOfAnotherJsonTypeAreErrorsNotThrows) {
  // "format": 5 and "version": "1" used to escape as nlohmann type_error
  // (the binary reader runs outside the JSON reader's try: an abort);
  // "version": 1.5 was read as 1; a dim of 2^64 - 1 was "negative".
  std::string bad = tempPath("fields.bin");
  auto errorOf = [&](const std::string &bytes) { return loadError(bad, bytes); };
  const std::string notOurs =
      bad + ": not a Doppler tensor file (\"format\" must be "
            "\"doppler-tensors\")";
  EXPECT_EQ(errorOf(withHeader(R"({"format": 5, "version": 1})")), notOurs);
  EXPECT_EQ(errorOf(withHeader("[1, 2]")), notOurs);
  const std::string noVersion = bad + ": version: missing or not an integer";
  EXPECT_EQ(errorOf(withHeader(
                R"({"format": "doppler-tensors", "version": "1"})")),
            noVersion);
  EXPECT_EQ(errorOf(withHeader(
                R"({"format": "doppler-tensors", "version": 1.5})")),
            noVersion);
  EXPECT_EQ(errorOf(withHeader(
                R"({"format": "doppler-tensors", "version": 2})")),
            bad + ": unsupported tensor file version 2 (this reader reads "
                  "version 1)");
  EXPECT_EQ(errorOf(withHeader(
                R"({"format": "doppler-tensors", "version": 1, "tensors": )"
                R"([{"type": "f32", "shape": [18446744073709551615]}]})")),
            bad + ": tensors[0].shape[0]: 18446744073709551615 is out of "
                  "range (above 2^63 - 1)");
  // The JSON outputs file shares the check.
  EXPECT_EQ(errorOf(R"({"format": "doppler-outputs", "version": "1"})"),
            noVersion);
  EXPECT_EQ(errorOf(R"({"format": 5})"),
            bad + ": not a Doppler outputs file (\"format\" must be "
                  "\"doppler-outputs\")");
  // An integer past 2^63 - 1 used to wrap: -1 in an i64 and in an i32.
  for (const char *type : {"i64", "i32"})
    EXPECT_EQ(errorOf(std::string(R"({"format": "doppler-outputs", )"
                                  R"("version": 1, "outputs": [{"type": ")") +
                      type +
                      R"(", "shape": [1], "data": [18446744073709551615]}]})"),
              bad + ": outputs[0].data[0]: 18446744073709551615 is out of "
                    "range (above 2^63 - 1)");
  std::remove(bad.c_str());
}

} // namespace
