// A pipeline with a policy of the user's own: a KeyPolicy that compares
// support questions without their ticket number, so "Ticket #4711: how do
// I reset my password?" is answered from "Ticket #815: How do I reset my
// password?". Without it the two would never meet: the semantic cache's
// lexical guard rightly refuses to serve an answer across different numbers.
//   pipeline_custom_key BASE_URL
#include <cstdio>       // std::printf, std::fprintf
#include <regex>        // std::regex, std::regex_replace
#include <span>         // std::span
#include <string>       // std::string

#include <llmgate/backend/openai_backend.hpp>
#include <llmgate/pipeline.hpp>

// Keys a conversation by its last user message, less any "Ticket #123:" tag.
struct without_ticket_numbers {
  llmgate::cache_key key(const llmgate::cache_scope& scope,
                         std::span<const llmgate::chat_message> messages) const {
    static const std::regex ticket(R"(ticket\s*#\s*\d+\s*:?\s*)", std::regex::icase);
    std::string last;
    for (const auto& message : messages)
      if (message.role == "user" && message.content_json.empty()) last = message.content;  // sent as a string
    return {scope.hash(), std::regex_replace(last, ticket, "")};
  }
};
static_assert(llmgate::KeyPolicy<without_ticket_numbers>);

using support_cache =
    llmgate::basic_semantic_cache<llmgate::cached_answer, llmgate::hashing_embedder,
                                  llmgate::default_index_factory, llmgate::lru_eviction,
                                  llmgate::static_threshold, llmgate::guarded_similarity<>, without_ticket_numbers>;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: pipeline_custom_key BASE_URL\n");
    return 2;
  }
  boost::asio::io_context io;
  llmgate::openai_backend model(io.get_executor(), {.base_url = argv[1]});
  support_cache cache({}, llmgate::hashing_embedder(), llmgate::static_threshold{0.9f});
  llmgate::pipeline answer{llmgate::semantic_cache_stage(cache), llmgate::backend_stage(model)};

  for (const char* question : {"Ticket #815: How do I reset my password?",
                               "Ticket #4711: how do I reset my password?"}) {
    llmgate::chat_request request;
    request.model = "support-model";
    request.messages.push_back({"user", question, {}});
    llmgate::request_context context{.tenant = "helpdesk"};
    const auto response = llmgate::complete_blocking(io, answer, request, context);
    std::printf("%-8s %s\n", llmgate::to_string(context.cache).data(), response.content.c_str());
  }
}
