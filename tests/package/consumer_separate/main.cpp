// Asks a model server that is not there through openai_backend, whose
// coroutines and the HTTP client's are compiled in llmgate_compiled.cpp
// only: the request must fail as unreachable, which runs the client's
// connect from that file.
#include <cstdio>  // std::printf, std::fprintf
#include <string>  // std::to_string

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <llmgate/backend/blocking.hpp>
#include <llmgate/backend/openai_backend.hpp>

int main() {
  boost::asio::io_context io;
  // A port nothing listens on: one the kernel gave and took back.
  boost::asio::ip::tcp::acceptor probe(io, {boost::asio::ip::address_v4::loopback(), 0});
  const auto port = probe.local_endpoint().port();
  probe.close();
  llmgate::openai_backend model(io.get_executor(), {.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1"});
  llmgate::chat_request request{.model = "m", .messages = {{.role = "user", .content = "Hello?"}}};
  try {
    (void)llmgate::run_blocking(io, model.complete(request));
  } catch (const llmgate::error& failure) {
    if (failure.code() == llmgate::errc::upstream_unreachable) {
      std::printf("consumer_separate: ok (%s)\n", failure.what());
      return 0;
    }
    std::fprintf(stderr, "consumer_separate: wrong error: %s\n", failure.what());
    return 1;
  }
  std::fprintf(stderr, "consumer_separate: a server that is not there answered\n");
  return 1;
}
