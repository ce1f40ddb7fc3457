// prompt_bench: PML prompt modules against a real llama.cpp server. For
// each use case of bench/prompt/ (code_generation, personalization,
// trip_plan) it draws prompts uniformly with a fixed seed, compiles them
// with llmgate's PML compiler and sends each twice, interleaved: "plain",
// the compiled messages without their layout through openai_backend (no
// hints: llama-server's own defaults, cache_prompt on and the slot it finds
// most similar), to one llama-server, and "modules", the compiled request
// through llama_cpp_backend (cache_prompt, id_slot per prefix path, the
// schema encoded once into a slot file and restored into a slot that does
// not hold the prefix), to a second llama-server started the same way, so
// that neither mode warms the other's slots. (Given one server, the modes
// run one after the other, the slots erased between them; a server without
// --slot-save-path cannot erase them, and plain then starts from what the
// modules mode left.)
//
// TTFT is the time from sending a request on a warm connection to the first
// SSE event carrying content; for modules it includes the slot restore or
// encoding the request needed. Reused tokens are the server's own count
// (usage.prompt_tokens_details.cached_tokens, which is timings.cache_n).
//
// module_tokens_reused_fraction: llama-server reports one count per request,
// not where the reused tokens lie. The bench places them by replaying the
// server's rule (tools/server/server-context.cpp): the slot keeps the longest
// common prefix of what it holds and the new prompt, then, with
// --cache-reuse N, shifts every later run of at least N equal tokens into
// place; with all of it reused the last token is evaluated again. (The
// rule never skips prompt tokens: after the common prefix, a prompt position
// that starts no run of N tokens found further on in the slot ends all chunk
// reuse for that prompt. An argument value does, and so does short schema
// text before a union member the slot does not hold right after it.) The
// bench knows what each slot holds: it asks the backend's shared slot table
// which slot a prefix gets, the backend's statistics say when it restored
// or encoded the schema there (the slot then holds the whole schema's
// tokens), and an answer leaves its prompt and generated tokens whose ids
// are not reported (they never match). The tokens are the server's own
// (/apply-template, then /tokenize with pieces, which map the modules' bytes
// onto tokens; a token straddling a module's edge counts as outside it).
// This needs a server without the host-memory prompt cache (--cache-ram 0,
// as scripts/bench starts it), which can load another prompt into a slot
// unseen. Where the replayed count differs from cache_n, none of that
// request's tokens count as module tokens reused (a lower bound) and the
// mismatch is printed and counted. Modules marked cache="false" and
// always-included schema text are left out of both sides of the fraction.
//
// Also measured: TTFT over prompt lengths up to the slot's context, cold
// (cache_prompt false) against warm (the same prompt again); the slot files' sizes
// and bytes per cached token (n_written / n_saved of a slot save); greedy
// outputs computed from the start against prefix reuse and against --cache-reuse
// KV shifting after the schema's slot file is restored.
//
//   llmgate_bench_prompt --plain-url http://127.0.0.1:P1 --modules-url http://127.0.0.1:P2
//       [--slots 4] [--slot-dir DIR] [--cache-reuse N] [--prompts 200] [--seed 21]
//       [--only USE_CASE] [--max-tokens 8] [--identity 20] [--schemas DIR]
//
// --slot-dir is the modules server's --slot-save-path (no slot files
// without it) and --cache-reuse the servers' own; scripts/bench prompt
// builds llama-server and starts both servers.
#include <algorithm>    // std::sort, std::all_of, std::count
#include <chrono>       // std::chrono::steady_clock
#include <cstdint>      // std::int64_t, std::uint64_t
#include <cstdlib>      // std::atoi, std::exit
#include <filesystem>   // std::filesystem::path, file_size
#include <fstream>      // std::ifstream
#include <iostream>     // std::cout, std::cerr
#include <map>          // std::map
#include <optional>     // std::optional
#include <random>       // std::mt19937_64: the same draws on every platform
#include <sstream>      // std::stringstream
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::exchange
#include <vector>       // std::vector

#include <boost/asio/io_context.hpp>   // net::io_context
#include <boost/asio/ip/tcp.hpp>       // tcp::resolver
#include <boost/beast/core.hpp>        // beast::tcp_stream, beast::flat_buffer
#include <boost/beast/http.hpp>        // http::request, http::write, http::read
#include <boost/json.hpp>              // the server's native endpoints

#include "llmgate/backend/blocking.hpp"           // run_blocking
#include "llmgate/backend/llama_cpp_backend.hpp"  // the modules mode: llmgate's llama.cpp hints
#include "llmgate/backend/openai_backend.hpp"     // the plain mode: no hints
#include "llmgate/prompt/prompt_statistics.hpp"   // slot files saved and restored
#include "llmgate/prompt/compiler.hpp"         // compile_prompt
#include "llmgate/prompt/pml_parser.hpp"       // parse_schema
#include "llmgate/prompt/schema_registry.hpp"  // schema_registry
#include "llmgate/prompt/tokenizer.hpp"        // estimated_tokenizer
#include "bench_support.hpp"
#include "prompt_use_cases.hpp"  // use_cases

namespace {

namespace fs = std::filesystem;
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using llmgate_bench::progress;
using llmgate_bench::pick;
using llmgate_bench::use_cases;
using net::ip::tcp;

struct options {
  std::string plain_url;
  std::string modules_url;
  int slots = 4;
  std::string slot_dir;  ///< the servers' --slot-save-path ("" where they have none)
  int cache_reuse = 0;   ///< the servers' --cache-reuse
  int prompts = 200;
  std::uint64_t seed = 21;
  std::string only;
  int max_tokens = 8;
  int identity = 20;  ///< prompts per use case whose greedy outputs are compared
  fs::path schemas = fs::path(LLMGATE_BENCH_PROMPT_DIR);
};

// ---------------------------------------------------------------- native endpoints

/// llama-server's own endpoints (/apply-template, /tokenize, /slots,
/// /completion), called on a fresh connection each: none of them is timed.
class native_client {
 public:
  explicit native_client(std::string url) : url_(std::move(url)) {
    std::string_view rest = url_;
    if (rest.starts_with("http://")) rest.remove_prefix(7);
    if (const auto slash = rest.find('/'); slash != std::string_view::npos) rest = rest.substr(0, slash);
    const auto colon = rest.rfind(':');
    host_ = std::string(rest.substr(0, colon));
    port_ = colon == std::string_view::npos ? "80" : std::string(rest.substr(colon + 1));
  }

  const std::string& url() const { return url_; }

  /// The JSON answer of POST `target` (GET where `body` is null); throws
  /// with the server's words on any status but 200.
  json::value call(std::string_view target, const json::value& body) const {
    net::io_context io;
    tcp::resolver resolver(io);
    beast::tcp_stream stream(io);
    stream.connect(resolver.resolve(host_, port_));
    http::request<http::string_body> request(body.is_null() ? http::verb::get : http::verb::post, target, 11);
    request.set(http::field::host, host_);
    if (!body.is_null()) {
      request.set(http::field::content_type, "application/json");
      request.body() = json::serialize(body);
      request.prepare_payload();
    }
    http::write(stream, request);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    http::read(stream, buffer, parser);
    const auto& response = parser.get();
    if (response.result() != http::status::ok)
      throw std::runtime_error(std::string(target) + ": HTTP " + std::to_string(response.result_int()) + ": " +
                               response.body());
    return json::parse(response.body());
  }

 private:
  std::string url_;
  std::string host_;
  std::string port_;
};

json::array messages_json(const std::vector<llmgate::chat_message>& messages) {
  json::array array;
  for (const auto& message : messages) array.push_back(json::object{{"role", message.role}, {"content", message.content}});
  return array;
}

/// A prompt as the server tokenizes it: its chat template applied, then
/// tokens with the byte each starts at in the templated text.
struct server_prompt {
  std::string text;               ///< the chat template's output
  std::vector<std::int64_t> ids;  ///< without the special tokens the server adds in front
  std::vector<std::size_t> begin; ///< each token's first byte in `text`
  std::vector<std::size_t> end;
  bool pieces_match = true;       ///< the pieces spelled `text` (else no token is placed)
};

std::size_t piece_bytes(const json::value& piece) {
  if (piece.is_string()) return piece.as_string().size();
  return piece.as_array().size();  // bytes that are not UTF-8 on their own
}

server_prompt tokenize_text(const native_client& server, std::string text) {
  server_prompt prompt;
  prompt.text = std::move(text);
  const auto answer = server.call("/tokenize", json::object{{"content", prompt.text}, {"add_special", false},
                                                            {"with_pieces", true}});
  std::size_t at = 0;
  for (const auto& token : answer.at("tokens").as_array()) {
    prompt.ids.push_back(token.at("id").to_number<std::int64_t>());
    const std::size_t bytes = piece_bytes(token.at("piece"));
    prompt.begin.push_back(at);
    prompt.end.push_back(at + bytes);
    at += bytes;
  }
  // SentencePiece vocabularies spell the text with one leading space more.
  if (at == prompt.text.size() + 1) {
    for (auto& b : prompt.begin) b = b ? b - 1 : 0;
    for (auto& e : prompt.end) e -= 1;
  } else if (at != prompt.text.size()) {
    prompt.pieces_match = false;
  }
  return prompt;
}

server_prompt tokenize_chat(const native_client& server, const std::vector<llmgate::chat_message>& messages) {
  const auto templated = server.call("/apply-template", json::object{{"messages", messages_json(messages)}});
  return tokenize_text(server, std::string(templated.at("prompt").as_string()));
}

// ---------------------------------------------------------------- the server's reuse rule

/// What llama-server's slot keeps of `held` for `prompt`
/// (server-context.cpp: the common prefix, then chunks of at least
/// `cache_reuse` equal tokens shifted into place, and at least the last
/// token evaluated): one flag per prompt token.
std::vector<bool> replay_reuse(const std::vector<std::int64_t>& held, const std::vector<std::int64_t>& prompt,
                               int cache_reuse) {
  std::vector<bool> reused(prompt.size(), false);
  std::size_t past = 0;
  while (past < held.size() && past < prompt.size() && held[past] == prompt[past]) reused[past] = true, ++past;
  if (cache_reuse > 0) {
    std::size_t head_c = past, head_p = past;
    while (head_c < held.size() && head_p < prompt.size()) {
      std::size_t match = 0;
      while (head_c + match < held.size() && head_p + match < prompt.size() && held[head_c + match] == prompt[head_p + match])
        ++match;
      if (match >= static_cast<std::size_t>(cache_reuse)) {
        for (std::size_t i = 0; i < match; ++i) reused[head_p + i] = true;
        head_c += match;
        head_p += match;
      } else {
        head_c += 1;
      }
    }
  }
  if (!prompt.empty() && std::all_of(reused.begin(), reused.end(), [](bool r) { return r; })) reused.back() = false;
  return reused;
}

constexpr std::int64_t unknown_token = -1;  ///< a generated token: its id is not reported
constexpr std::int64_t special_token = -2;  ///< BOS and the like, which the server adds in front of every prompt

// ---------------------------------------------------------------- the use cases

// ---------------------------------------------------------------- sending

struct sent {
  double ttft_ms = 0;
  std::uint64_t prompt_tokens = 0;
  std::uint64_t cached_tokens = 0;
  std::uint64_t completion_tokens = 0;
  std::string content;
};

/// A backend on its own io_context, its connection kept warm between calls.
template <class Backend>
class chat_client {
 public:
  template <class Options>
  explicit chat_client(Options options) : backend_(io_.get_executor(), std::move(options)) {}

  Backend& backend() { return backend_; }

  sent stream(const llmgate::chat_request& request) {
    sent result;
    const auto start = std::chrono::steady_clock::now();
    bool first = true;
    const auto response = llmgate::run_blocking(io_, backend_.stream(request, [&](const llmgate::chat_chunk& chunk)
                                                                        -> net::awaitable<void> {
      if (first && !chunk.content_delta.empty()) {
        result.ttft_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        first = false;
      }
      co_return;
    }));
    if (first)  // no content at all: the whole answer's time stands in
      result.ttft_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    result.prompt_tokens = response.usage.prompt_tokens;
    result.cached_tokens = response.usage.cached_prompt_tokens;
    result.completion_tokens = response.usage.completion_tokens;
    result.content = response.content;
    return result;
  }

  sent complete(const llmgate::chat_request& request) {
    const auto response = llmgate::run_blocking(io_, backend_.complete(request));
    return {.ttft_ms = 0, .prompt_tokens = response.usage.prompt_tokens,
            .cached_tokens = response.usage.cached_prompt_tokens,
            .completion_tokens = response.usage.completion_tokens, .content = response.content};
  }

 private:
  net::io_context io_;
  Backend backend_;
};

llmgate::chat_request with_settings(llmgate::chat_request request, int max_tokens) {
  request.model = "stories260K";
  llmgate::set_field(request.parameters, "max_tokens", std::to_string(max_tokens));
  llmgate::set_field(request.parameters, "temperature", "0");
  return request;
}

/// Empties every slot; a server without --slot-save-path has no slot
/// actions, and its slots stay as they are (said once).
void erase_slots(const native_client& server, int slots) {
  try {
    for (int s = 0; s < slots; ++s) server.call("/slots/" + std::to_string(s) + "?action=erase", json::object{});
  } catch (const std::exception& error) {
    static bool said = false;
    if (!std::exchange(said, true)) progress("slots not erased (%s): each mode starts from what they hold", error.what());
  }
}

/// The schema's whole text, encoded once into slot 0 with nothing generated
/// and saved as `file`: {tokens the slot holds, bytes written}.
struct slot_file {
  std::string file;
  std::vector<std::int64_t> tokens;  ///< as the slot holds them, special tokens included
  std::size_t specials = 0;          ///< how many of them the server put in front
  std::uint64_t n_saved = 0;
  std::uint64_t n_written = 0;
  double save_ms = 0;
};

slot_file save_schema(const native_client& server, const llmgate::prompt_layout& layout, std::size_t specials) {
  slot_file saved;
  saved.file = layout.schema + "-" + (layout.version.empty() ? "0" : layout.version) + ".bin";
  const auto whole = tokenize_chat(server, *layout.whole_schema);
  server.call("/slots/0?action=erase", json::object{});
  server.call("/completion", json::object{{"prompt", whole.text}, {"n_predict", 0}, {"id_slot", 0},
                                          {"cache_prompt", true}});
  const auto answer = server.call("/slots/0?action=save", json::object{{"filename", saved.file}});
  saved.n_saved = answer.at("n_saved").to_number<std::uint64_t>();
  saved.n_written = answer.at("n_written").to_number<std::uint64_t>();
  saved.save_ms = answer.at("timings").at("save_ms").to_number<double>();
  saved.specials = specials;
  saved.tokens.assign(specials, special_token);
  saved.tokens.insert(saved.tokens.end(), whole.ids.begin(), whole.ids.end());
  return saved;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// ---------------------------------------------------------------- the run

struct case_result {
  std::uint64_t prompt_tokens = 0;
  std::uint64_t reused_plain = 0;
  std::uint64_t reused_modules = 0;
  std::uint64_t module_tokens = 0;
  std::uint64_t module_tokens_reused = 0;
  std::size_t replay_mismatches = 0;
  std::size_t restores = 0;
  std::size_t failures = 0;  ///< requests the server refused or that broke off (left out of every figure)
  std::vector<double> ttft_plain;
  std::vector<double> ttft_modules;
};

/// Which of `prompt`'s tokens lie wholly inside a cached module.
std::vector<bool> module_tokens_of(const llmgate::chat_request& request, const server_prompt& prompt) {
  std::vector<bool> inside(prompt.ids.size(), false);
  if (!prompt.pieces_match || !request.layout) return inside;
  std::vector<std::size_t> message_at;
  std::size_t cursor = 0;
  for (const auto& message : request.messages) {
    const auto at = prompt.text.find(message.content, cursor);
    if (at == std::string::npos) return inside;  // the template changed the text: nothing is placed
    message_at.push_back(at);
    cursor = at + message.content.size();
  }
  for (const auto& module : request.layout->modules) {
    if (!module.cached) continue;
    const std::size_t begin = message_at[module.message] + module.begin;
    const std::size_t end = message_at[module.message] + module.end;
    for (std::size_t t = 0; t < prompt.ids.size(); ++t)
      if (prompt.begin[t] >= begin && prompt.end[t] <= end) inside[t] = true;
  }
  return inside;
}

}  // namespace

int run(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "prompt_bench: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--plain-url") o.plain_url = value();
    else if (arg == "--modules-url") o.modules_url = value();
    else if (arg == "--slots") o.slots = std::atoi(value().c_str());
    else if (arg == "--slot-dir") o.slot_dir = value();
    else if (arg == "--cache-reuse") o.cache_reuse = std::atoi(value().c_str());
    else if (arg == "--prompts") o.prompts = std::atoi(value().c_str());
    else if (arg == "--seed") o.seed = std::stoull(value());
    else if (arg == "--only") o.only = value();
    else if (arg == "--max-tokens") o.max_tokens = std::atoi(value().c_str());
    else if (arg == "--identity") o.identity = std::atoi(value().c_str());
    else if (arg == "--schemas") o.schemas = value();
    else {
      std::cerr << "prompt_bench: unknown option " << arg << "\n";
      return 2;
    }
  }
  if (o.modules_url.empty()) o.modules_url = o.plain_url;
  if (o.plain_url.empty()) {
    std::cerr << "prompt_bench: --plain-url is required (scripts/bench prompt starts the servers)\n";
    return 2;
  }
  const bool one_server = o.plain_url == o.modules_url;
  const bool slot_files = !o.slot_dir.empty();
  const native_client plain_server(o.plain_url);
  const native_client modules_server(o.modules_url);
  chat_client<llmgate::openai_backend> plain(llmgate::openai_options{.name = "plain", .base_url = o.plain_url + "/v1"});
  auto statistics = std::make_shared<llmgate::prompt_statistics>();
  auto slots = std::make_shared<llmgate::llama_cpp_slots>();
  chat_client<llmgate::llama_cpp_backend> modules(llmgate::llama_cpp_options{
      .name = "modules", .base_url = o.modules_url, .slots = static_cast<std::size_t>(o.slots),
      .slot_files = slot_files, .statistics = statistics, .shared = slots});
  if (one_server) progress("one server: the modes run one after the other, the slots erased between them where the server allows it");

  llmgate::schema_registry registry;
  llmgate::estimated_tokenizer estimate;
  llmgate_bench::table table({"use_case", "prompts", "prompt_tokens", "reused_plain", "reused_modules",
                              "module_tokens", "module_tokens_reused", "fraction", "replay_mismatches", "restores",
                              "ttft_p50_plain_ms", "ttft_p50_modules_ms", "ttft_ratio"});
  std::vector<llmgate_bench::json_line> lines;
  std::vector<llmgate_bench::json_line> detail_lines;
  std::map<std::string, slot_file> files;  // by use case
  std::map<std::string, std::vector<llmgate::chat_request>> drawn;

  // The warm connections: one answer from each server before any timing.
  const auto hello = with_settings(llmgate::chat_request{.model = {}, .messages = {{"user", "Once upon a time"}}}, 1);
  plain.stream(hello);
  modules.stream(hello);

  for (const auto& current : use_cases) {
    if (!o.only.empty() && o.only != current.name) continue;
    const fs::path schema_path = o.schemas / current.schema_file;
    std::ifstream in(schema_path);
    std::stringstream text;
    text << in.rdbuf();
    // src= files are the project's headers: paths from the repository's root, two folders up.
    registry.add(llmgate::parse_schema(text.str(), schema_path.parent_path() / ".." / ".."));

    std::mt19937_64 rng(o.seed);
    std::vector<llmgate::chat_request> requests;
    for (int i = 0; i < o.prompts; ++i)
      requests.push_back(with_settings(llmgate::compile_prompt(registry, current.draw(rng), estimate), o.max_tokens));
    drawn[current.name] = requests;

    erase_slots(plain_server, o.slots);
    if (!one_server) erase_slots(modules_server, o.slots);
    // BOS and other tokens the server puts before the templated text.
    const auto probe = tokenize_chat(modules_server, requests.front().messages);
    const auto probe_sent = modules.complete(with_settings(llmgate::chat_request{.model = {}, .messages = requests.front().messages}, 1));
    const std::size_t specials = probe_sent.prompt_tokens - probe.ids.size();
    erase_slots(modules_server, o.slots);
    // What a slot holds once the backend encoded or restored the schema there.
    std::vector<std::int64_t> schema_tokens(specials, special_token);
    {
      const auto whole = tokenize_chat(modules_server, *requests.front().layout->whole_schema);
      schema_tokens.insert(schema_tokens.end(), whole.ids.begin(), whole.ids.end());
    }

    case_result result;
    std::vector<std::vector<std::int64_t>> held(static_cast<std::size_t>(o.slots));

    const auto send_plain = [&](const llmgate::chat_request& compiled) {
      auto request = compiled;
      request.layout = nullptr;  // plain: the same text, no hints
      sent answer;
      try {
        answer = plain.stream(request);
      } catch (const std::exception& error) {
        ++result.failures;
        progress("%s: plain: %s", current.name.c_str(), error.what());
        return;
      }
      result.ttft_plain.push_back(answer.ttft_ms);
      result.reused_plain += answer.cached_tokens;
    };
    const auto send_modules = [&](const llmgate::chat_request& request) {
      // The slot the backend will name: choosing it first (and letting it go)
      // changes nothing, as an idle slot keeps its prefix, and tells which.
      const auto [slot, chosen] = slots->choose(request.layout->prefix_path);
      slots->release(*chosen);
      auto& slot_tokens = held[slot];
      const auto before = statistics->slots();
      sent answer;
      try {
        answer = modules.stream(request);  // the restore or encoding it needs included
      } catch (const std::exception& error) {
        ++result.failures;
        progress("%s: modules: %s", current.name.c_str(), error.what());
        slot_tokens.clear();  // unknown now
        return;
      }
      const auto after = statistics->slots();
      if (after.saved + after.restored > before.saved + before.restored) {
        slot_tokens = schema_tokens;
        ++result.restores;
      }
      if (after.fallbacks > before.fallbacks) progress("slot fallback: %s", after.last_fallback.c_str());
      result.ttft_modules.push_back(answer.ttft_ms);
      result.reused_modules += answer.cached_tokens;
      result.prompt_tokens += answer.prompt_tokens;

      // Where the reused tokens lie (not timed).
      const auto prompt = tokenize_chat(modules_server, request.messages);
      std::vector<std::int64_t> ids(specials, special_token);
      ids.insert(ids.end(), prompt.ids.begin(), prompt.ids.end());
      const auto inside = module_tokens_of(request, prompt);
      const auto reused = replay_reuse(slot_tokens, ids, o.cache_reuse);
      const auto replayed = static_cast<std::uint64_t>(std::count(reused.begin(), reused.end(), true));
      for (std::size_t t = 0; t < inside.size(); ++t) {
        if (!inside[t]) continue;
        ++result.module_tokens;
        if (replayed == answer.cached_tokens && reused[specials + t]) ++result.module_tokens_reused;
      }
      if (replayed != answer.cached_tokens || ids.size() != answer.prompt_tokens) {
        ++result.replay_mismatches;
        progress("%s: replayed %llu cached tokens, the server %llu (prompt %zu / %llu tokens)", current.name.c_str(),
                 static_cast<unsigned long long>(replayed), static_cast<unsigned long long>(answer.cached_tokens),
                 ids.size(), static_cast<unsigned long long>(answer.prompt_tokens));
      }
      slot_tokens = ids;
      if (answer.completion_tokens > 1) slot_tokens.insert(slot_tokens.end(), answer.completion_tokens - 1, unknown_token);
    };

    for (int i = 0; i < o.prompts; ++i) {
      const auto& request = requests[static_cast<std::size_t>(i)];
      if (one_server) {
        send_modules(request);  // plain's turn comes after all of these
      } else if (i % 2 == 0) {
        send_plain(request), send_modules(request);
      } else {
        send_modules(request), send_plain(request);
      }
      if ((i + 1) % 20 == 0) progress("%s: %d of %d prompts", current.name.c_str(), i + 1, o.prompts);
    }
    if (one_server) {
      erase_slots(plain_server, o.slots);
      for (const auto& request : requests) send_plain(request);
    }
    if (slot_files) {  // the schema's slot file once more, for its size and save time
      files[current.name] = save_schema(modules_server, *requests.front().layout, specials);
    }

    const double p50_plain = median(result.ttft_plain);
    const double p50_modules = median(result.ttft_modules);
    const double fraction = result.module_tokens ? static_cast<double>(result.module_tokens_reused) /
                                                       static_cast<double>(result.module_tokens)
                                                 : 0.0;
    lines.push_back(llmgate_bench::json_line()
                        .add("bench", "prompt_modules")
                        .add("use_case", current.name)
                        .add("prompts", o.prompts)
                        .add("prompt_tokens", result.prompt_tokens)
                        .add("reused_tokens_plain", result.reused_plain)
                        .add("reused_tokens_modules", result.reused_modules)
                        .add("module_tokens_reused_fraction", fraction)
                        .add("ttft_p50_ms_plain", p50_plain)
                        .add("ttft_p50_ms_modules", p50_modules)
                        .add("ttft_ratio", p50_modules > 0 ? p50_plain / p50_modules : 0.0));
    detail_lines.push_back(llmgate_bench::json_line()
                               .add("bench", "prompt_modules_attribution")
                               .add("use_case", current.name)
                               .add("module_tokens", result.module_tokens)
                               .add("module_tokens_reused", result.module_tokens_reused)
                               .add("replay_mismatches", result.replay_mismatches)
                               .add("slot_restores", result.restores)
                               .add("failed_requests", result.failures)
                               .add("cache_reuse", o.cache_reuse)
                               .add("slots", o.slots));
    progress("%s", lines.back().str().c_str());
    table.add_row({current.name, std::to_string(o.prompts), std::to_string(result.prompt_tokens),
                   std::to_string(result.reused_plain), std::to_string(result.reused_modules),
                   std::to_string(result.module_tokens), std::to_string(result.module_tokens_reused),
                   llmgate_bench::number(fraction), std::to_string(result.replay_mismatches),
                   std::to_string(result.restores), llmgate_bench::number(p50_plain),
                   llmgate_bench::number(p50_modules),
                   llmgate_bench::number(p50_modules > 0 ? p50_plain / p50_modules : 0.0)});
  }
  std::cout << "\nprompt modules: " << o.prompts << " prompts per use case, seed " << o.seed << ", "
            << o.slots << " slots, --cache-reuse " << o.cache_reuse << (slot_files ? ", slot files" : "")
            << (one_server ? ", one server (modes one after the other)" : ", two servers (modes interleaved)") << "\n";
  table.print(std::cout);

  // ---- slot files: their sizes and the bytes one cached token takes.
  llmgate_bench::table slot_table({"schema_file", "tokens", "bytes_written", "file_bytes", "bytes_per_token", "save_ms"});
  for (const auto& [name, saved] : files) {
    std::error_code ec;
    const auto size = fs::file_size(fs::path(o.slot_dir) / saved.file, ec);
    const double per_token = saved.n_saved ? static_cast<double>(saved.n_written) / static_cast<double>(saved.n_saved) : 0;
    slot_table.add_row({saved.file, std::to_string(saved.n_saved), std::to_string(saved.n_written),
                        ec ? "-" : std::to_string(size), llmgate_bench::number(per_token), llmgate_bench::number(saved.save_ms)});
    detail_lines.push_back(llmgate_bench::json_line()
                               .add("bench", "prompt_slot_file")
                               .add("use_case", name)
                               .add("tokens", saved.n_saved)
                               .add("bytes", saved.n_written)
                               .add("file_bytes", ec ? std::optional<double>() : std::optional<double>(static_cast<double>(size)))
                               .add("bytes_per_cached_token", per_token));
  }
  if (!files.empty()) {
    std::cout << "\nslot files (memory per cached token = bytes written / tokens saved)\n";
    slot_table.print(std::cout);
  }

  // ---- TTFT over prompt lengths: cold (slot erased) against warm (the same prompt again).
  {
    std::mt19937_64 rng(o.seed);
    static constexpr const char* words[] = {"the", "little", "dog", "ran", "to", "park", "and", "saw", "a", "big",
                                            "red", "ball", "Lily", "was", "happy", "she", "said", "hello", "tree", "sun"};
    std::string story;
    while (story.size() < 40000) {
      for (int w = 0; w < 8; ++w) story += std::string(pick(rng, words)) + " ";
      story.back() = '.';
      story += ' ';
    }
    const auto tokens = tokenize_text(modules_server, story);
    llmgate_bench::table sweep({"prompt_tokens", "ttft_cold_ms", "ttft_warm_ms", "ratio"});
    for (const std::size_t length : {64u, 128u, 256u, 512u, 1024u, 2048u, 4096u, 8000u}) {
      if (length >= tokens.ids.size()) break;
      const std::string text = story.substr(0, tokens.begin[length]);
      auto request = with_settings(llmgate::chat_request{.model = {}, .messages = {{"user", text}}}, 2);
      llmgate::set_field(request.parameters, "id_slot", "0");
      auto cold_request = request;  // computed from the start: nothing reused
      llmgate::set_field(cold_request.parameters, "cache_prompt", "false");
      llmgate::set_field(request.parameters, "cache_prompt", "true");
      std::vector<double> cold, warm;
      std::uint64_t prompt_tokens = 0;
      bool too_long = false;
      for (int rep = 0; rep < 3 && !too_long; ++rep) {
        try {
          const auto first = modules.stream(cold_request);
          cold.push_back(first.ttft_ms);
          prompt_tokens = first.prompt_tokens;
          warm.push_back(modules.stream(request).ttft_ms);
        } catch (const std::exception& error) {
          progress("sweep: %zu tokens: %s", length, error.what());
          too_long = true;
        }
      }
      if (cold.empty()) break;
      const double c = median(cold), w = median(warm);
      sweep.add_row({std::to_string(prompt_tokens), llmgate_bench::number(c), llmgate_bench::number(w),
                     llmgate_bench::number(w > 0 ? c / w : 0)});
      detail_lines.push_back(llmgate_bench::json_line()
                                 .add("bench", "prompt_ttft_sweep")
                                 .add("prompt_tokens", prompt_tokens)
                                 .add("ttft_cold_ms", c)
                                 .add("ttft_warm_ms", w)
                                 .add("ratio", w > 0 ? c / w : 0.0));
      progress("sweep: %llu tokens: cold %.2f ms, warm %.2f ms", static_cast<unsigned long long>(prompt_tokens), c, w);
    }
    std::cout << "\nTTFT over prompt length (median of 3; cold: cache_prompt false, warm: the same prompt again)\n";
    sweep.print(std::cout);
  }

  // ---- greedy outputs: cold against prefix reuse and against KV shifting.
  {
    llmgate_bench::table identity({"use_case", "prompts", "prefix_reuse_same", "shifted", "shifted_same"});
    for (const auto& [name, requests] : drawn) {
      std::size_t compared = 0, prefix_same = 0, shifted = 0, shifted_same = 0;
      for (std::size_t i = 0; i < requests.size() && i < static_cast<std::size_t>(o.identity); ++i) {
        auto request = with_settings(requests[i], 16);
        request.layout = nullptr;
        llmgate::set_field(request.parameters, "id_slot", "0");
        llmgate::set_field(request.parameters, "n_cache_reuse", "0");
        llmgate::set_field(request.parameters, "cache_prompt", "false");
        const auto cold = modules.complete(request);  // computed from the start
        llmgate::set_field(request.parameters, "cache_prompt", "true");
        const auto warm = modules.complete(request);  // all but the last token reused
        ++compared;
        if (warm.content == cold.content) ++prefix_same;
        if (slot_files && o.cache_reuse > 0) {
          modules_server.call("/slots/0?action=restore", json::object{{"filename", files[name].file}});
          llmgate::set_field(request.parameters, "n_cache_reuse", std::to_string(o.cache_reuse));
          const auto after_restore = modules.complete(request);
          // Shifted: more was reused than the prefix the prompt shares with the schema.
          const auto prompt = tokenize_chat(modules_server, request.messages);
          std::vector<std::int64_t> ids(files[name].specials, special_token);
          ids.insert(ids.end(), prompt.ids.begin(), prompt.ids.end());
          const auto prefix_only = replay_reuse(files[name].tokens, ids, 0);
          const auto common = static_cast<std::uint64_t>(std::count(prefix_only.begin(), prefix_only.end(), true));
          if (after_restore.cached_tokens > common) {
            ++shifted;
            if (after_restore.content == cold.content) ++shifted_same;
          }
        }
      }
      identity.add_row({name, std::to_string(compared), std::to_string(prefix_same), std::to_string(shifted),
                        std::to_string(shifted_same)});
      detail_lines.push_back(llmgate_bench::json_line()
                                 .add("bench", "prompt_output_identity")
                                 .add("use_case", name)
                                 .add("prompts", compared)
                                 .add("prefix_reuse_identical", prefix_same)
                                 .add("kv_shifted", shifted)
                                 .add("kv_shifted_identical", shifted_same));
    }
    std::cout << "\ngreedy outputs (16 tokens) against the same prompt computed from the start\n";
    identity.print(std::cout);
  }

  // Every JSON line saved; the prompt_modules lines last.
  std::cout << "\n";
  detail_lines.insert(detail_lines.end(), lines.begin(), lines.end());
  llmgate_bench::publish("prompt", table, detail_lines);
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::cerr << "prompt_bench: " << error.what() << "\n";
    return 1;
  }
}
