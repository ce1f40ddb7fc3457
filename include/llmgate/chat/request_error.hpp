// request_error: a request a client got wrong, with the field at fault, so
// that a server can answer as OpenAI does: 400 with the field in the error
// object's "param" and a message a person can act on. Thrown by the
// request readers (parse_chat_request, parse_embedding_request).
#pragma once

#include <string>   // std::string
#include <utility>  // std::move

#include "llmgate/error.hpp"  // llmgate::error, errc::invalid_request

namespace llmgate::inline v0 {

class request_error : public error {
 public:
  /// `param`: the field as OpenAI names it ("max_tokens", "messages[1].role");
  /// `message`: the whole sentence a client sees; `openai_code`: the error
  /// object's "code" ("invalid_json" for a body that is not JSON).
  request_error(std::string param, std::string message, std::string openai_code = "invalid_request")
      : error(errc::invalid_request, message),
        param_(std::move(param)),
        message_(std::move(message)),
        openai_code_(std::move(openai_code)) {}

  const std::string& param() const noexcept { return param_; }
  const std::string& openai_code() const noexcept { return openai_code_; }
  /// The message alone, without the error code's description after it.
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string param_;
  std::string message_;
  std::string openai_code_;
};

}  // namespace llmgate::inline v0
