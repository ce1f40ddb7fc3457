// config_error: a mistake in a configuration file (the gateway's, an
// evaluation's), naming the field by its JSON path.
#pragma once

#include <string>  // std::string

#include "llmgate/error.hpp"    // llmgate::error, errc
#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0 {

/// what() is the message alone, "config: listen.port must be between 0 and
/// 65535, not 70000": an llmgate::error would append its errc's text, which
/// says nothing more here.
class config_error : public error {
 public:
  explicit config_error(const std::string& message, errc code = errc::invalid_request)
      : error(code, message), message_(message) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

}  // namespace llmgate::inline v0
