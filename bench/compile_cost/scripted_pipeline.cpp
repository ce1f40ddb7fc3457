// A semantic cache in front of scripted_backend::echo(), as a user's whole
// program (scripts/bench compile): the pipeline without the HTTP client.
#include <cstdio>

#include <boost/asio/io_context.hpp>

#include <llmgate/backend/scripted_backend.hpp>
#include <llmgate/pipeline.hpp>

int main() {
  boost::asio::io_context io;
  auto model = llmgate::scripted_backend::echo();
  llmgate::basic_semantic_cache<llmgate::cached_answer> cache;
  llmgate::pipeline answer{llmgate::semantic_cache_stage(cache), llmgate::backend_stage(model)};
  llmgate::chat_request request{.model = "small", .messages = {{.role = "user", .content = "What is a cache?"}}};
  llmgate::request_context context;
  auto response = llmgate::complete_blocking(io, answer, request, context);
  std::puts(response.content.c_str());
}
