// pml_error: what the PML parser, validator, registry and compiler throw.
// Every message names the line and column of the markup at fault, so that
// an author can find it; the gateway sends it back as a 400's message.
#pragma once

#include <cstddef>  // std::size_t
#include <string>   // std::string, std::to_string
#include <utility>  // std::move

#include "llmgate/error.hpp"    // llmgate::error, errc
#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0 {

/// Where a node of a PML document starts: line and column from 1, the
/// column counting characters (UTF-8 code points, a tab as one). Trees made
/// with the builder (prompt/builder.hpp) have no source: 0 and 0.
///
/// Two positions always compare equal, so that == on trees compares what
/// they say, not where it was written (a parsed tree equals the same tree
/// built in C++); read line and column to compare positions.
struct source_position {
  std::size_t line = 0;
  std::size_t column = 0;

  friend bool operator==(const source_position&, const source_position&) noexcept { return true; }
};

/// A PML document is malformed or does not fit its schema. what() is
/// "line L, column C: message" ("message" alone where there is no
/// position: trees made in C++); code() is errc::invalid_request.
class pml_error : public error {
 public:
  pml_error(source_position at, std::string message)
      : error(errc::invalid_request, message),
        at_(at),
        message_(std::move(message)),
        what_(at.line == 0 ? message_
                           : "line " + std::to_string(at.line) + ", column " + std::to_string(at.column) + ": " +
                                 message_) {}

  std::size_t line() const noexcept { return at_.line; }
  std::size_t column() const noexcept { return at_.column; }
  /// The message without its position.
  const std::string& message() const noexcept { return message_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  source_position at_;
  std::string message_;
  std::string what_;
};

}  // namespace llmgate::inline v0
