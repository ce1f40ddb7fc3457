// llama_cpp_tokenizer: a llama-server's own tokenizer (POST /tokenize), as
// the PML compiler's Tokenizer policy (prompt/tokenizer.hpp): exact counts
// for parameters' len limits and modules' token spans, where
// estimated_tokenizer guesses.
//
//   llmgate::llama_cpp_tokenizer tokens("http://127.0.0.1:8080");
//   auto request = llmgate::compile_prompt(schemas, pml, tokens);
//
// count() waits for the server on an io_context of its own: it is for
// tools, benchmarks and compiling ahead of time, never for a thread that
// runs an event loop (the gateway counts with estimated_tokenizer). Counts
// are kept by text, because the compiler asks for the same prefixes of
// every prompt of a schema. Thread-safe; one request at a time.
#pragma once

#include <cstddef>        // std::size_t
#include <cstdint>        // std::int32_t
#include <memory>         // std::make_shared
#include <mutex>          // std::mutex, std::scoped_lock
#include <string>         // std::string
#include <string_view>    // std::string_view
#include <unordered_map>  // the counts already asked for
#include <utility>        // std::move
#include <vector>         // std::vector

#include <boost/asio/io_context.hpp>  // the io_context count() runs
#include <boost/json/object.hpp>      // the /tokenize body

#include "llmgate/backend/blocking.hpp"         // run_blocking
#include "llmgate/backend/detail/upstream.hpp"  // upstream
#include "llmgate/wire/detail/json_fields.hpp"  // as_object
#include "llmgate/backend/http_client.hpp"      // http_client
#include "llmgate/backend/llama_cpp_backend.hpp"  // llama_cpp_root
#include "llmgate/error.hpp"                    // errc
#include "llmgate/prompt/tokenizer.hpp"         // Tokenizer
#include "llmgate/version.hpp"                  // the inline versioned namespace

namespace llmgate::inline v0 {

class llama_cpp_tokenizer {
 public:
  /// `base_url`: the server's root or its /v1 (both are accepted, as the
  /// llama.cpp backend accepts them).
  explicit llama_cpp_tokenizer(std::string base_url, std::string api_key = {})
      : server_(std::make_shared<http_client>(io_.get_executor()), "llama.cpp tokenizer",
                detail::llama_cpp_root(std::move(base_url)),
                api_key.empty() ? std::vector<std::pair<std::string, std::string>>{}
                                : std::vector<std::pair<std::string, std::string>>{{"Authorization", "Bearer " + api_key}}) {}

  /// The tokens of `text`; with `add_special`, as a prompt of that text
  /// starts (BOS and the like). Throws backend_error.
  std::vector<std::int32_t> tokenize(std::string_view text, bool add_special = false) const {
    std::scoped_lock lock(mutex_);
    return run_blocking(io_, server_.post("/tokenize",
                                          boost::json::object{{"content", text}, {"add_special", add_special}},
                                          [](const boost::json::value& answer) {
                                            constexpr auto code = errc::upstream_protocol_error;
                                            const auto& object = detail::as_object(answer, "tokenize", code);
                                            const auto* tokens = object.if_contains("tokens");
                                            if (!tokens || !tokens->is_array())
                                              throw error(code, "tokenize: the answer has no \"tokens\" array");
                                            std::vector<std::int32_t> ids;
                                            ids.reserve(tokens->get_array().size());
                                            for (const auto& id : tokens->get_array()) {
                                              if (!id.is_int64()) throw error(code, "tokenize: a token is not an integer");
                                              ids.push_back(static_cast<std::int32_t>(id.get_int64()));
                                            }
                                            return ids;
                                          }));
  }

  /// How many tokens `text` is, without special tokens. Throws backend_error.
  std::size_t count(std::string_view text) const {
    {
      std::scoped_lock lock(mutex_);
      if (const auto known = counts_.find(std::string(text)); known != counts_.end()) return known->second;
    }
    const std::size_t tokens = tokenize(text).size();
    std::scoped_lock lock(mutex_);
    counts_.emplace(std::string(text), tokens);
    return tokens;
  }

 private:
  mutable std::mutex mutex_;
  mutable boost::asio::io_context io_;
  mutable detail::upstream server_;
  mutable std::unordered_map<std::string, std::size_t> counts_;
};

static_assert(Tokenizer<llama_cpp_tokenizer>);

}  // namespace llmgate::inline v0
