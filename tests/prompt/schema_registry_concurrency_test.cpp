// schema_registry under concurrent use: writers add versions while readers
// find and compile; every reader sees a whole schema whose modules are its
// own version's (run under ThreadSanitizer by the tsan preset).
#include <atomic>   // std::atomic
#include <cstddef>  // std::size_t
#include <string>   // std::string, std::to_string
#include <thread>   // std::thread
#include <vector>   // std::vector

#include <boost/test/unit_test.hpp>

#include "llmgate/prompt/compiler.hpp"
#include "llmgate/prompt/pml_parser.hpp"
#include "llmgate/prompt/schema_registry.hpp"
#include "llmgate/prompt/tokenizer.hpp"

BOOST_AUTO_TEST_SUITE(schema_registry_concurrency_test)

BOOST_AUTO_TEST_CASE(readers_see_each_version_whole_while_writers_add) {
  using namespace llmgate;
  constexpr int versions = 60;
  schema_registry registry;
  registry.add(parse_schema(R"(<schema name="s" version="0"><module name="m">version 0</module></schema>)"));
  std::atomic<int> mismatches = 0, compiled = 0;
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w)
    threads.emplace_back([&, w] {
      for (int v = 1 + w; v <= versions; v += 2) {
        const std::string n = std::to_string(v);
        registry.add(parse_schema("<schema name=\"s\" version=\"" + n + "\"><module name=\"m\">version " + n +
                                  "</module></schema>"));
      }
    });
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&] {
      for (int i = 0; i < 300; ++i) {
        const auto request = compile_prompt(registry, R"(<prompt schema="s"><m/></prompt>)", estimated_tokenizer{});
        if (request.messages.at(0).content != "version " + request.layout->version ||
            request.layout->whole_schema->at(0).content != request.messages[0].content)
          ++mismatches;
        ++compiled;
        (void)registry.list();
      }
    });
  for (auto& t : threads) t.join();
  BOOST_TEST(mismatches.load() == 0);
  BOOST_TEST(compiled.load() == 600);
  BOOST_TEST(registry.list().size() == static_cast<std::size_t>(versions + 1));
  BOOST_TEST(registry.find("s", "37")->whole_schema->at(0).content == "version 37");
}

BOOST_AUTO_TEST_SUITE_END()
