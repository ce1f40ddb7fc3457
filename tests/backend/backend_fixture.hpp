// What the backend suites share: an upstream_server started on 127.0.0.1,
// an io_context to run the client on, and small builders of requests.
#pragma once

#include <memory>       // std::shared_ptr, std::make_shared
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/asio/io_context.hpp>  // net::io_context

#include "llmgate/backend/blocking.hpp"  // run_blocking
#include "llmgate/wire/openai_wire.hpp"  // the OpenAI wire form
#include "llmgate/backend/http_client.hpp"
#include "upstream_server.hpp"
#include "../chunk_log.hpp"              // chunk_log (the suites that stream use it)

namespace llmgate::test {

/// A one-message user request to `model`.
inline chat_request user_says(std::string_view text, std::string_view model = "test-model") {
  chat_request request;
  request.model = model;
  request.messages.push_back({.role = "user", .content = std::string(text)});
  return request;
}

struct backend_fixture {
  backend_fixture() { server.start(); }

  /// Runs `task` on `io` to completion.
  template <class T>
  T run(net::awaitable<T> task) {
    return run_blocking(io, std::move(task));
  }

  /// A client on `io` with short timeouts, so that fault tests end quickly.
  std::shared_ptr<http_client> client(http_client_options options = {}) {
    return std::make_shared<http_client>(io.get_executor(), std::move(options));
  }

  net::io_context io;
  upstream_server server;
};

}  // namespace llmgate::test
