// Whole files as strings, for tests that damage snapshots on purpose.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace llmgate::test {

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace llmgate::test
