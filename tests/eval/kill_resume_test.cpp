// The evaluate program killed with SIGKILL at random points and started
// again: no recorded request is ever sent again, the requests in flight at
// a kill are sent once more and counted as resent, and no result is lost.
// The model server is an in-test one (tests/backend/upstream_server.hpp)
// that numbers its answers, so each recorded answer says which send it was.
#include <boost/test/unit_test.hpp>

#include <signal.h>    // kill, SIGKILL (POSIX)
#include <spawn.h>     // posix_spawn (POSIX)
#include <sys/wait.h>  // waitpid (POSIX)

#include <atomic>
#include <chrono>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../backend/upstream_server.hpp"
#include "llmgate/eval/run/run_store.hpp"
#include "../temporary_directory.hpp"

extern char** environ;

namespace llmgate {
namespace {

using llmgate::test::reply;

constexpr std::size_t prompts = 6, repetitions = 3, candidates = 2, concurrency = 3;
constexpr std::size_t planned = prompts * repetitions * candidates;

std::string evaluation_json(const std::string& base_url) {
  std::string prompt_list;
  for (std::size_t i = 0; i < prompts; ++i)
    prompt_list += (i ? ", " : "") + std::string("{\"variables\": {\"topic\": \"topic ") + std::to_string(i) + "\"}}";
  return R"({"backends": [{"name": "up", "kind": "openai", "base_url": ")" + base_url + R"(", "retries": 0}],
    "candidates": [{"name": "a", "backend": "up", "model": "model-a"}, {"name": "b", "backend": "up", "model": "model-b"}],
    "reference": "a",
    "templates": [{"name": "t", "messages": [{"role": "user", "content": "Tell me about {{topic}}."}]}],
    "prompts": [)" + prompt_list + R"(],
    "repetitions": )" + std::to_string(repetitions) + R"(, "concurrency": )" + std::to_string(concurrency) + R"(,
    "scorers": ["tfidf", "bleu"], "embedders": []})";
}

pid_t start(const std::vector<std::string>& arguments) {
  std::vector<char*> argv;
  for (const auto& a : arguments) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  BOOST_TEST_REQUIRE(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0);
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kill_resume_test)

BOOST_AUTO_TEST_CASE(killed_twice_and_resumed_the_run_sends_no_recorded_request_again_and_loses_no_result) {
  llmgate::test::temporary_directory dir;
  llmgate::test::upstream_server server;
  std::atomic<int> answered{0};
  // Slow enough that a kill finds requests in flight.
  server.on("/v1/chat/completions", [&](const llmgate::test::received_request& request) {
    const std::string text = "answer " + std::to_string(++answered);
    reply r = request.json().as_object().contains("stream") && request.json().at("stream").as_bool()
                  ? reply::chat_stream({text.substr(0, 3), text.substr(3)})
                  : reply::chat(text);
    r.first_byte_delay = std::chrono::milliseconds(40);
    return r;
  });
  server.start();
  BOOST_TEST_REQUIRE(std::filesystem::exists(LLMGATE_EVALUATE_PROGRAM), "build the evaluate example first: " LLMGATE_EVALUATE_PROGRAM);
  std::ofstream(dir.path() / "eval.json") << evaluation_json(server.url("/v1"));
  const std::vector<std::string> command = {LLMGATE_EVALUATE_PROGRAM, "--config", (dir.path() / "eval.json").string(),
                                            "--out", (dir.path() / "out").string(), "--no-report"};

  std::mt19937 random(std::random_device{}());
  for (int kill_number = 0; kill_number < 2; ++kill_number) {
    const std::size_t before = server.requests("/v1/chat/completions");
    const std::size_t kill_after = before + std::uniform_int_distribution<std::size_t>(2, 12)(random);
    const pid_t pid = start(command);
    while (server.requests("/v1/chat/completions") < kill_after) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    kill(pid, SIGKILL);
    const int status = wait_for(pid);
    BOOST_TEST_REQUIRE(WIFSIGNALED(status), "the run ended before it was killed");
  }
  const int status = wait_for(start(command));
  BOOST_TEST_REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));

  run_store store(dir.path() / "out" / "run.sqlite");
  const auto counts = store.counts();
  BOOST_TEST(counts.planned == planned);
  BOOST_TEST(counts.recorded == planned);
  BOOST_TEST(counts.errors == 0u);
  BOOST_TEST(counts.resent <= 2 * concurrency);
  std::set<std::string> answers;
  std::size_t resent = 0, attempts = 0;
  for (const auto& r : store.results()) {
    answers.insert(r.response);
    resent += r.attempts > 1;
    attempts += static_cast<std::size_t>(r.attempts);
  }
  // Every send is an attempt the store counted: a recorded result, or a
  // resend of one in flight at a kill (a kill may land before the send).
  const auto sends = server.requests("/v1/chat/completions");
  BOOST_TEST(sends >= planned);
  BOOST_TEST(sends <= attempts);
  BOOST_TEST(answers.size() == planned);  // each result its own answer: none lost, none recorded twice
  BOOST_TEST(resent == counts.resent);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace llmgate
