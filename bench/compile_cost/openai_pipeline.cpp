// The README's six-line pipeline over openai_backend, as a user's whole
// program (scripts/bench compile): what a header-only library's user pays
// to compile the network side.
#include <cstdio>

#include <boost/asio/io_context.hpp>

#include <llmgate/backend/openai_backend.hpp>
#include <llmgate/pipeline.hpp>

int main() {
  boost::asio::io_context io;
  llmgate::openai_backend model(io.get_executor(), {.base_url = "http://127.0.0.1:11434/v1"});
  llmgate::basic_semantic_cache<llmgate::cached_answer> cache;
  llmgate::pipeline answer{llmgate::semantic_cache_stage(cache), llmgate::backend_stage(model)};
  llmgate::chat_request request{.model = "llama3.2", .messages = {{.role = "user", .content = "What is a cache?"}}};
  llmgate::request_context context;
  auto response = llmgate::complete_blocking(io, answer, request, context);
  std::puts(response.content.c_str());
}
