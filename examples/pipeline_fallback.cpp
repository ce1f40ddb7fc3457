// A pipeline with both cache tiers and a fallback list: the exact cache
// answers repeats in well under a microsecond, the semantic cache answers
// rephrasings, and a request that reaches the models goes to the primary
// server, or to the secondary when the primary fails before answering.
//   pipeline_fallback PRIMARY_URL SECONDARY_URL
#include <cstdio>  // std::printf, std::fprintf
#include <vector>  // std::vector

#include <llmgate/backend/fallback.hpp>
#include <llmgate/backend/openai_backend.hpp>
#include <llmgate/pipeline.hpp>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: pipeline_fallback PRIMARY_URL SECONDARY_URL\n");
    return 2;
  }
  boost::asio::io_context io;
  // One connection pool for both servers.
  auto client = std::make_shared<llmgate::http_client>(io.get_executor());
  llmgate::fallback_backend<llmgate::openai_backend> models(
      {llmgate::openai_backend(client, {.name = "primary", .base_url = argv[1]}),
       llmgate::openai_backend(client, {.name = "secondary", .base_url = argv[2]})});

  llmgate::exact_cache<llmgate::cached_answer> exact;
  llmgate::basic_semantic_cache<llmgate::cached_answer> semantic({}, llmgate::hashing_embedder(),
                                                                 llmgate::static_threshold{0.9f});
  llmgate::pipeline answer{llmgate::exact_cache_stage(exact), llmgate::semantic_cache_stage(semantic),
                           llmgate::backend_stage(models)};

  // Tenants never share answers: the same question from globex is a miss.
  const std::vector<std::pair<const char*, const char*>> traffic = {
      {"acme", "How do I reset my password?"},
      {"acme", "How do I reset my password?"},
      {"acme", "how do i reset my password please"},
      {"globex", "How do I reset my password?"}};
  for (const auto& [tenant, question] : traffic) {
    llmgate::chat_request request;
    request.model = "gpt-4o-mini";
    request.messages.push_back({"user", question, {}});
    llmgate::request_context context{.tenant = tenant};
    const auto response = llmgate::complete_blocking(io, answer, request, context);
    std::printf("%-7s %-8s backend %-9s %s\n", tenant, llmgate::to_string(context.cache).data(),
                context.backend.empty() ? "-" : context.backend.c_str(), response.content.c_str());
  }
}
