// The smallest useful pipeline: a semantic cache in front of one
// OpenAI-compatible model server (OpenAI, vLLM, llama.cpp, Ollama's /v1).
//   pipeline_quickstart [BASE_URL]   default: $LLMGATE_UPSTREAM, else Ollama's http://127.0.0.1:11434/v1
#include <cstdio>   // std::printf
#include <cstdlib>  // std::getenv

#include <llmgate/backend/openai_backend.hpp>
#include <llmgate/pipeline.hpp>

int main(int argc, char** argv) {
  const char* url = argc > 1 ? argv[1] : std::getenv("LLMGATE_UPSTREAM");
  const char* key = std::getenv("OPENAI_API_KEY");
  boost::asio::io_context io;
  llmgate::openai_backend model(io.get_executor(), {.base_url = url ? url : "http://127.0.0.1:11434/v1",
                                                    .api_key = key ? key : ""});
  llmgate::basic_semantic_cache<llmgate::cached_answer> cache({}, llmgate::hashing_embedder(),
                                                              llmgate::static_threshold{0.9f});
  llmgate::pipeline answer{llmgate::semantic_cache_stage(cache), llmgate::backend_stage(model)};

  for (const char* question : {"What is the capital of France?", "what is the capital city of France"}) {
    llmgate::chat_request request;
    request.model = "llama3.2";
    request.messages.push_back({"user", question, {}});
    llmgate::request_context context;
    const auto response = llmgate::complete_blocking(io, answer, request, context);
    std::printf("%-8s similarity %.2f  %s\n", llmgate::to_string(context.cache).data(),
                context.similarity, response.content.c_str());
  }
}
