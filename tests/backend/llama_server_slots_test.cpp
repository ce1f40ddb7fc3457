// llama_cpp_backend against the real llama-server binary serving
// stories260K with --slot-save-path in a temporary directory: the whole
// schema encoded once and saved (the slot file appears), restored into the
// other slot before a prompt of the same schema with another prefix, and
// the cached tokens the server reports exactly the common token prefix of
// the encoded schema and the prompt (counted with the server's own
// template and tokenizer); a slot file gone from the disk falls back to
// plain prefix caching, counted with its reason; with n_cache_reuse, a
// prompt that skips a module reuses the module after it, as many tokens
// as the server's own reuse steps give.
//
// The binary: $LLMGATE_LLAMA_SERVER, else the one scripts build into
// build/llama.cpp/build/bin of the source tree. Where there is none the
// test is skipped, with LLMGATE_REQUIRE_REAL_PARTS=1 too: the issue makes
// this binary optional for CI (scripts/bench prompt builds it). A missing
// model is skip_test's usual skip (a failure where real parts are required).
#include <boost/test/unit_test.hpp>

#include <signal.h>    // kill, SIGTERM, SIGKILL (POSIX)
#include <spawn.h>     // posix_spawn (POSIX)
#include <sys/wait.h>  // waitpid (POSIX)
#include <fcntl.h>     // O_WRONLY, O_CREAT (POSIX)

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/parse.hpp>

#include "llmgate/backend/llama_cpp_backend.hpp"
#include "backend_fixture.hpp"
#include "../skip_test.hpp"
#include "../temporary_directory.hpp"

extern char** environ;

using namespace std::chrono_literals;
using llmgate::chat_message;
using llmgate::chat_request;
using llmgate::prompt_layout;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

fs::path model_file() { return fs::path(LLMGATE_SHARED_DATA_DIR) / "models/stories260K/stories260K-ctx512.gguf"; }

std::optional<fs::path> server_binary() {
  if (const char* given = std::getenv("LLMGATE_LLAMA_SERVER"); given && *given) return fs::path(given);
#ifdef LLMGATE_BUILD_TREE_LLAMA_SERVER
  if (fs::exists(LLMGATE_BUILD_TREE_LLAMA_SERVER)) return fs::path(LLMGATE_BUILD_TREE_LLAMA_SERVER);
#endif
  return std::nullopt;
}

// llama-server on a port the system picks, its output in `log`; stopped
// (SIGTERM, then SIGKILL) when the test ends.
class llama_server {
 public:
  llama_server(const fs::path& binary, const std::vector<std::string>& arguments, const fs::path& log) : log_(log) {
    std::vector<std::string> argv_strings{binary.string()};
    argv_strings.insert(argv_strings.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (auto& argument : argv_strings) argv.push_back(argument.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ) != 0) pid_ = 0;
    posix_spawn_file_actions_destroy(&actions);
  }
  llama_server(const llama_server&) = delete;
  llama_server& operator=(const llama_server&) = delete;
  ~llama_server() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(50ms);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }

  /// "http://127.0.0.1:<port>" once it listens, or nothing after `limit`.
  std::optional<std::string> url(std::chrono::seconds limit) const {
    const std::regex listening("listening on (http://127\\.0\\.0\\.1:[0-9]+)");
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
      std::smatch found;
      const std::string text = log();
      if (std::regex_search(text, found, listening)) return found[1].str();
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) return std::nullopt;  // it exited
      std::this_thread::sleep_for(50ms);
    }
    return std::nullopt;
  }

  std::string log() const {
    std::ifstream in(log_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  fs::path log_;
  pid_t pid_ = 0;
};

// The schema: three modules of a story, and its prompts' question.
const std::string cat = "Once upon a time there was a little cat named Tom. ";
const std::string fish = "Tom liked to eat fish by the river every day. ";
const std::string dog = "One day a big dog came to the river and sat down. ";

chat_request prompt(std::shared_ptr<const std::vector<chat_message>> whole, std::string prefix, std::string system,
                    std::string question) {
  auto layout = std::make_shared<prompt_layout>();
  layout->schema = "story";
  layout->version = "1";
  layout->prefix_path = std::move(prefix);
  layout->whole_schema = std::move(whole);
  chat_request request;
  request.model = "stories";
  request.messages = {{.role = "system", .content = std::move(system)}, {.role = "user", .content = std::move(question)}};
  request.layout = std::move(layout);
  return request;
}

struct server_fixture : llmgate::test::backend_fixture {
  /// Whether the real server can run here; if not, the test is marked
  /// skipped (see the header comment) and returns.
  static bool available() {
    const auto binary = server_binary();
    if (!binary || !fs::exists(*binary)) {
      llmgate::test::skip_test("no llama-server binary (set LLMGATE_LLAMA_SERVER, or build it into "
                               "build/llama.cpp/build/bin)",
                               llmgate::test::real_part::optional);
      return false;
    }
    if (!fs::exists(model_file())) {
      llmgate::test::skip_test("no model at " + model_file().string());
      return false;
    }
    return true;
  }

  /// Starts the server with `slots` slots and slot files in
  /// directory/slots; its URL once the model is loaded.
  std::string start(int slots) {
    fs::create_directories(directory / "slots");
    process = std::make_unique<llama_server>(
        *server_binary(),
        std::vector<std::string>{"-m", model_file().string(), "--host", "127.0.0.1", "--port", "0", "-np",
                                 std::to_string(slots), "-c", std::to_string(512 * slots), "-t", "1", "--cache-ram",
                                 "0", "--slot-save-path", (directory / "slots").string()},
        directory / "server.log");
    const auto url = process->url(60s);
    BOOST_REQUIRE_MESSAGE(url, "llama-server did not start: " << process->log());
    // /health answers 200 once the model is loaded.
    llmgate::detail::upstream raw(client(), "raw", *url, {});
    for (int i = 0; i < 200; ++i) {
      try {
        run(raw.get("/health", [](const json::value&) { return 0; }));
        break;
      } catch (const llmgate::backend_error&) {
        std::this_thread::sleep_for(50ms);
      }
    }
    return *url;
  }

  llmgate::test::temporary_directory directory;
  std::unique_ptr<llama_server> process;  // stopped before the directory goes

  // The tokens the server makes of `messages`, templated as for a chat completion.
  std::vector<std::int64_t> tokens(llmgate::detail::upstream& raw, const std::vector<chat_message>& messages) {
    chat_request request;
    request.model = "stories";
    request.messages = messages;
    const std::string text = run(raw.post("/apply-template", llmgate::chat_request_body(request),
                                          [](const json::value& answer) {
                                            return std::string(answer.at("prompt").as_string());
                                          }));
    json::object body;
    body["content"] = text;
    body["add_special"] = true;
    body["parse_special"] = true;
    return run(raw.post("/tokenize", body, [](const json::value& answer) {
      std::vector<std::int64_t> ids;
      for (const auto& id : answer.at("tokens").as_array()) ids.push_back(id.as_int64());
      return ids;
    }));
  }

  // What the server reuses of `encoded` for `prompt`: their common prefix,
  // less the one token it always computes again when all would match.
  static std::uint64_t reusable(const std::vector<std::int64_t>& encoded, const std::vector<std::int64_t>& prompt) {
    std::size_t common = 0;
    while (common < encoded.size() && common < prompt.size() && encoded[common] == prompt[common]) ++common;
    return std::min(common, prompt.size() - 1);
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(llama_server_slots_test)

BOOST_FIXTURE_TEST_CASE(slot_files_are_saved_restored_and_reused_exactly, server_fixture) {
  if (!available()) return;
  const std::string url = start(2);
  llmgate::detail::upstream raw(client(), "raw", url, {});
  auto statistics = std::make_shared<llmgate::prompt_statistics>();
  llmgate::llama_cpp_backend model(client(), {.base_url = url, .statistics = statistics});
  const auto whole = std::make_shared<const std::vector<chat_message>>(
      std::vector<chat_message>{{.role = "system", .content = cat + fish + dog}});
  const std::string file = llmgate::detail::llama_cpp_slot_file_name(*prompt(whole, "", "", "").layout, "stories");
  const auto encoded = tokens(raw, *whole);

  // The first prompt of the schema: encoded once into its slot and saved.
  const auto all = prompt(whole, "story/1/cat/fish/dog", cat + fish + dog, "What happened next?");
  const auto first = run(model.complete(all));
  BOOST_TEST(fs::exists(directory / "slots" / file));
  BOOST_TEST(statistics->slots().saved == 1u);
  BOOST_TEST(first.usage.prompt_tokens == tokens(raw, all.messages).size());
  BOOST_TEST(first.usage.cached_prompt_tokens == reusable(encoded, tokens(raw, all.messages)));
  BOOST_TEST(first.usage.cached_prompt_tokens > 20u);
  BOOST_TEST_MESSAGE("first prompt: " << first.usage.cached_prompt_tokens << " of " << first.usage.prompt_tokens
                                      << " tokens reused; the schema is " << encoded.size());

  // Another prefix of the schema: the other slot, restored from the file first.
  const auto two = prompt(whole, "story/1/cat/fish", cat + fish, "Where did Tom go?");
  const auto second = run(model.complete(two));
  BOOST_TEST(statistics->slots().restored == 1u);
  BOOST_TEST(second.usage.cached_prompt_tokens == reusable(encoded, tokens(raw, two.messages)));
  BOOST_TEST(second.usage.cached_prompt_tokens > 10u);
  BOOST_TEST_MESSAGE("second prompt, restored: " << second.usage.cached_prompt_tokens << " of "
                                                 << second.usage.prompt_tokens << " tokens reused");
  BOOST_TEST(statistics->slots().fallbacks == 0u);

  // The file gone: a third prefix takes the least recently used slot, the
  // restore fails (the server clears the slot), the prompt is computed
  // whole, and the fallback says why.
  fs::remove(directory / "slots" / file);
  const auto three = prompt(whole, "story/1/cat", cat, "Who was Tom?");
  const auto third = run(model.complete(three));
  BOOST_TEST(third.usage.cached_prompt_tokens == 0u);
  const auto slots = statistics->slots();
  BOOST_TEST(slots.fallbacks == 1u);
  BOOST_TEST(slots.last_fallback.starts_with("slot file " + file + " not restored: "));
  BOOST_TEST(slots.restored == 1u);
}

BOOST_FIXTURE_TEST_CASE(cache_reuse_reuses_the_module_after_a_skipped_one, server_fixture) {
  if (!available()) return;
  const std::string url = start(1);
  llmgate::detail::upstream raw(client(), "raw", url, {});
  constexpr std::size_t chunk = 4;  // the shortest chunk the server shifts and reuses
  llmgate::llama_cpp_backend model(client(), {.base_url = url, .cache_reuse = chunk});
  const auto whole = std::make_shared<const std::vector<chat_message>>(
      std::vector<chat_message>{{.role = "system", .content = cat + fish + dog}});
  // cat and dog without fish: the slot holds the whole schema, encoded.
  const auto skip = prompt(whole, "story/1/cat", cat + dog, "What happened next?");
  const auto answer = run(model.complete(skip));

  // What the server reuses, step by step as tools/server does it: the
  // common prefix, then every later chunk of at least `chunk` tokens that
  // matches the slot's tokens further on (shifted into place).
  const auto cached = tokens(raw, *whole);
  const auto wanted = tokens(raw, skip.messages);
  std::size_t reused = 0;
  while (reused < cached.size() && reused < wanted.size() && cached[reused] == wanted[reused]) ++reused;
  const std::size_t prefix = reused;
  for (std::size_t c = reused, p = reused; c < cached.size() && p < wanted.size();) {
    std::size_t match = 0;
    while (c + match < cached.size() && p + match < wanted.size() && cached[c + match] == wanted[p + match]) ++match;
    if (match >= chunk) {
      reused += match;
      c += match;
      p += match;
    } else {
      ++c;
    }
  }
  if (reused == wanted.size()) --reused;
  BOOST_TEST(answer.usage.cached_prompt_tokens == reused);
  BOOST_TEST(reused > prefix + 8);  // dog's tokens, after the skipped fish
  BOOST_TEST_MESSAGE("cat and dog: " << answer.usage.cached_prompt_tokens << " of " << answer.usage.prompt_tokens
                                     << " tokens reused, " << prefix << " of them the common prefix");
}

BOOST_AUTO_TEST_SUITE_END()
