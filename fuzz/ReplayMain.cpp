//===- ReplayMain.cpp - Runs a fuzz target on files, without libFuzzer ----===//
//
// The regression mode of the fuzz targets (fuzz/README.md): in the normal
// build each target is linked with this main instead of libFuzzer, and runs
// LLVMFuzzerTestOneInput once on every file given, or on every regular file
// of a directory given (sorted by name, not recursive). Arguments starting
// with '-' are ignored, so that libFuzzer's flags may be passed unchanged.
// A crash is a crash of the process (an abort or a signal, which the test
// reports); otherwise it prints how many inputs it replayed and exits 0.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
    __attribute__((weak));

namespace {

bool replayFile(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "error: cannot open '%s'\n", path.c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  // A fresh heap copy of exactly the input's size, as libFuzzer passes it,
  // so that a sanitizer build sees reads past the end.
  std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(copy.empty() ? nullptr : copy.data(), copy.size());
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  size_t replayed = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (!arg.empty() && arg[0] == '-')
      continue;
    std::error_code ec;
    std::filesystem::path path(arg);
    if (std::filesystem::is_directory(path, ec)) {
      std::vector<std::filesystem::path> files;
      for (const auto &entry : std::filesystem::directory_iterator(path, ec))
        if (entry.is_regular_file(ec))
          files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      for (const std::filesystem::path &file : files) {
        ok &= replayFile(file);
        ++replayed;
      }
    } else {
      ok &= replayFile(path);
      ++replayed;
    }
  }
  std::printf("replayed %zu inputs\n", replayed);
  return ok ? 0 : 1;
}
