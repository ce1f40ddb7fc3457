// Must not compile: a stage whose handle() takes no `next` does not model
// llmgate::Stage, and pipeline says so in words (the compile-fail test
// tests/pipeline/CMakeLists.txt registers checks for the message).
#include "llmgate/backend/scripted_backend.hpp"
#include "llmgate/pipeline.hpp"

struct forgets_next {
  boost::asio::awaitable<llmgate::chat_response> handle(llmgate::chat_request&, llmgate::request_context&) {
    co_return llmgate::chat_response{};
  }
};

int main() {
  auto model = llmgate::scripted_backend::echo();
  llmgate::pipeline answer{forgets_next{}, llmgate::backend_stage(model)};
}
