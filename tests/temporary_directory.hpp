// A directory under the system's temporary path, removed with its contents
// when the test ends.
#pragma once

#include <filesystem>
#include <random>
#include <string>

namespace llmgate::test {

class temporary_directory {
 public:
  temporary_directory() {
    std::random_device entropy;
    path_ = std::filesystem::temp_directory_path() / ("llmgate-test-" + std::to_string(entropy()));
    std::filesystem::create_directories(path_);
  }
  ~temporary_directory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  temporary_directory(const temporary_directory&) = delete;
  temporary_directory& operator=(const temporary_directory&) = delete;

  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace llmgate::test
