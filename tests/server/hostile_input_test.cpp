// The gateway against hostile input and careless clients, as the review of
// issue 35 tried it: a prompt built to be slow to read, a schema that names
// the host's files, inputs without end, deep JSON, bytes that are not
// UTF-8, too many connections, and no file descriptors left. Each case
// failed before the fix: the 125,000-attribute prompt held the io thread
// for about 30 s; /etc/passwd reached every tenant; 20,000 empty inputs
// were answered with 31.7 MB; 40 levels of JSON were refused; the 404 echoed
// raw bytes; the accept loop spun at EMFILE.
#include <sys/resource.h>  // getrlimit, setrlimit, getrusage

#include <chrono>      // std::chrono
#include <filesystem>  // std::filesystem
#include <fstream>     // std::ofstream
#include <future>      // std::async
#include <string>      // std::string
#include <thread>      // std::this_thread
#include <vector>      // std::vector

#include <boost/test/unit_test.hpp>

#include "../temporary_directory.hpp"
#include "demo_gateway.hpp"
#include "gateway_client.hpp"
#include "llmgate/server/gateway.hpp"

namespace {

using namespace llmgate;
using namespace llmgate::test;
namespace net = boost::asio;
namespace http = boost::beast::http;

std::string error_message(const http_reply& reply) {
  return std::string(reply.json().at("error").at("message").as_string());
}

std::string admin_post_schema(unsigned short port, std::string_view schema) {
  const auto reply = post(port, "/admin/prompt_schemas", schema, "admin-key");
  return reply.status == 200 ? "" : std::to_string(reply.status) + " " + error_message(reply);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hostile_input_test)

// The markup reader found duplicate attributes by a linear search per
// attribute: 125,000 of them took about 30 s of the io thread. Now the
// request is answered 400 (the schema it names does not exist) while
// /healthz on the same, only, thread is answered too, both well within
// 5 s.
BOOST_AUTO_TEST_CASE(a_prompt_tag_with_125000_attributes_is_refused_at_once_while_others_are_served) {
  auto config = demo_config();
  config.limits.max_body_bytes = 2 << 20;
  gateway server(config, nullptr);
  server.start();
  std::string tag = "<prompt schema='x'><m";
  for (int i = 0; i < 125'000; ++i) {
    tag += ' ';
    for (int n = i, letters = 0; letters < 4; ++letters, n /= 26) tag += static_cast<char>('a' + n % 26);
    tag += "=''";
  }
  tag += "/></prompt>";
  const auto started = std::chrono::steady_clock::now();
  auto refused = std::async(std::launch::async, [&] { return post(server.port(), "/v1/chat/completions", chat_body(tag), "key-acme"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  BOOST_TEST(get(server.port(), "/healthz").status == 200u);
  const auto reply = refused.get();
  BOOST_TEST((std::chrono::steady_clock::now() - started < std::chrono::seconds(5)));
  BOOST_TEST(reply.status == 400u);
  BOOST_TEST(error_message(reply) == "Invalid PML prompt in 'messages[0].content': line 1, column 1: unknown schema \"x\"");
}

// A POSTed schema reads src= files only inside prompt_sources.admin_directory,
// and none when the config names no such directory; a path out of it is
// refused by its spelling, a link out of it reads as a missing file, so no
// answer tells whether something exists outside.
BOOST_AUTO_TEST_CASE(a_posted_schema_reads_no_file_outside_its_directory) {
  temporary_directory directory;
  std::filesystem::create_directories(directory / "shared");
  std::ofstream(directory / "shared" / "notes.txt") << "Caches save calls.";
  std::ofstream(directory / "secret.txt") << "outside";
  std::filesystem::create_symlink(directory / "secret.txt", directory / "shared" / "link.txt");
  std::filesystem::create_symlink(directory / "absent.txt", directory / "shared" / "dangling.txt");
  const auto schema = [](std::string_view src) {
    return "<schema name=\"s\" version=\"" + std::string(src) + "\">\n<module name=\"m\" src=\"" + std::string(src) +
           "\"/>\n</schema>";
  };

  {
    gateway server(demo_config(), nullptr);  // no prompt_sources: no src at all
    server.start();
    BOOST_TEST(admin_post_schema(server.port(), schema("notes.txt")) ==
               "400 Invalid PML schema: line 2, column 1: src=\"notes.txt\" cannot be used here: no directory is "
               "configured for this schema's src files");
  }

  auto config = demo_config();
  config.prompts.admin_directory = directory / "shared";
  config.prompts.source_max_bytes = 100;
  gateway server(config, nullptr);
  server.start();
  for (const std::string outside : {"/etc/passwd", "../../etc/hostname", "../secret.txt", "/proc/self/environ",
                                    "a/../../secret.txt"})
    BOOST_TEST(admin_post_schema(server.port(), schema(outside)) ==
               "400 Invalid PML schema: line 2, column 1: the src file \"" + outside +
                   "\" is outside the directory of this schema's src files");
  const auto unreadable = [&](const std::string& src) {
    return "400 Invalid PML schema: line 2, column 1: cannot read the src file \"" + src + "\" (" +
           (directory / "shared" / src).string() + ")";
  };
  // A link to a file that exists outside, to one that does not, and no file: one answer.
  for (const std::string src : {"link.txt", "dangling.txt", "missing.txt"})
    BOOST_TEST(admin_post_schema(server.port(), schema(src)) == unreadable(src));
  std::ofstream(directory / "shared" / "large.txt") << std::string(101, 'x');
  BOOST_TEST(admin_post_schema(server.port(), schema("large.txt")) ==
             "400 Invalid PML schema: line 2, column 1: the src file \"large.txt\" is larger than the 100 bytes allowed");

  BOOST_TEST(admin_post_schema(server.port(), schema("notes.txt")) == "");
  const auto answered = post(server.port(), "/v1/chat/completions",
                             chat_body("<prompt schema='s'><m/> Why?</prompt>"), "key-acme");
  BOOST_TEST(answered.status == 200u);
}

// Each input of /v1/embeddings costs a vector in the answer however short
// it is: 20,000 empty strings in a 60 KB body made a 31.7 MB answer.
BOOST_AUTO_TEST_CASE(embeddings_take_a_bounded_number_of_inputs_and_tokens) {
  auto config = demo_config();
  config.limits.max_embedding_input_tokens = 100;
  gateway server(config, nullptr);
  server.start();
  boost::json::array empty(20'000, boost::json::string());
  const auto many = post(server.port(), "/v1/embeddings",
                         boost::json::serialize(boost::json::object{{"model", "llmgate-hashing"}, {"input", empty}}),
                         "key-acme");
  BOOST_TEST(many.status == 400u);
  BOOST_TEST(error_message(many) == "input has 20000 items; one request may have at most 2048.");
  BOOST_TEST(many.json().at("error").at("param").as_string() == "input");

  const auto long_input = post(server.port(), "/v1/embeddings",
                               boost::json::serialize(boost::json::object{
                                   {"model", "llmgate-hashing"}, {"input", {"word " + std::string(400, 'w')}}}),
                               "key-acme");
  BOOST_TEST(long_input.status == 400u);
  BOOST_TEST(error_message(long_input) == "input has about 101 tokens; one request may have at most 100.");

  const auto fine = post(server.port(), "/v1/embeddings",
                         boost::json::serialize(boost::json::object{{"model", "llmgate-hashing"}, {"input", {"a", "b"}}}),
                         "key-acme");
  BOOST_TEST(fine.status == 200u);
  BOOST_TEST(fine.json().at("data").as_array().size() == 2u);
}

// Real tool schemas nest deeper than Boost.JSON's default 32; the limit is
// limits.max_json_depth (64 by default).
BOOST_AUTO_TEST_CASE(json_nested_to_the_configured_depth_is_read_and_deeper_refused) {
  const auto body_nested = [](int depth) {  // the body's object is level 1, "x" holds the rest
    std::string nested(static_cast<std::size_t>(depth - 1), '[');
    nested += std::string(static_cast<std::size_t>(depth - 1), ']');
    return R"({"model":"test-model","messages":[{"role":"user","content":"Hi"}],"x":)" + nested + "}";
  };
  gateway server(demo_config(), nullptr);
  server.start();
  BOOST_TEST(post(server.port(), "/v1/chat/completions", body_nested(40), "key-acme").status == 200u);
  BOOST_TEST(post(server.port(), "/v1/chat/completions", body_nested(64), "key-acme").status == 200u);
  const auto deep = post(server.port(), "/v1/chat/completions", body_nested(65), "key-acme");
  BOOST_TEST(deep.status == 400u);
  BOOST_TEST(deep.json().at("error").at("code").as_string() == "invalid_json");
}

// Bytes that are not UTF-8 in a path were echoed raw into the 404's JSON
// (and the log): a client's JSON parser refused the answer.
BOOST_AUTO_TEST_CASE(an_invalid_utf8_path_is_answered_with_valid_json) {
  gateway server(demo_config(), nullptr);
  server.start();
  const auto reply = get(server.port(), "/v1/\xff\xfe/x\xC3\xA9");
  BOOST_TEST(reply.status == 404u);
  BOOST_TEST(error_message(reply) == "Unknown request URL: /v1/\xEF\xBF\xBD\xEF\xBF\xBD/x\xC3\xA9");
}

// The admin views are neither cached nor framed; the dashboard runs its own
// script and style only, and sends no Referer (its URL holds the key).
BOOST_AUTO_TEST_CASE(admin_views_are_not_stored_framed_or_given_other_scripts) {
  gateway server(demo_config(), nullptr);
  server.start();
  for (const auto* target : {"/admin/stats", "/dashboard"}) {
    const auto reply = get(server.port(), target, "admin-key");
    BOOST_TEST_INFO(target);
    BOOST_TEST(reply.status == 200u);
    BOOST_TEST(reply.header("cache-control") == "no-store");
    BOOST_TEST(reply.header("x-frame-options") == "DENY");
    BOOST_TEST(reply.header("x-content-type-options") == "nosniff");
  }
  const auto page = get(server.port(), "/dashboard", "admin-key");
  const std::string policy = page.header("content-security-policy");
  BOOST_TEST(policy.starts_with("default-src 'none'; script-src 'sha256-"));
  BOOST_TEST(policy.find("; connect-src 'self'; frame-ancestors 'none'") != std::string::npos);
  BOOST_TEST(page.header("referrer-policy") == "no-referrer");
}

// "bearer" in any case (RFC 9110 section 11.1); the admin key as ?key= on
// GET only, never on a POST that changes something.
BOOST_AUTO_TEST_CASE(keys_are_read_as_http_says_and_the_admin_key_leaves_no_query_on_posts) {
  gateway server(demo_config(), nullptr);
  server.start();
  for (const auto* scheme : {"bearer ", "BEARER ", "Bearer "}) {
    const auto reply = call(server.port(), http::verb::post, "/v1/chat/completions", chat_body("Hi"), {},
                            {{"Authorization", std::string(scheme) + "key-acme"}});
    BOOST_TEST_INFO(scheme);
    BOOST_TEST(reply.status == 200u);
  }
  BOOST_TEST(call(server.port(), http::verb::post, "/v1/chat/completions", chat_body("Hi"), {},
                  {{"Authorization", "Basic key-acme"}}).status == 401u);
  BOOST_TEST(get(server.port(), "/admin/stats?key=admin-key").status == 200u);
  BOOST_TEST(post(server.port(), "/admin/prompt_schemas?key=admin-key", "<schema name=\"q\"><module name=\"m\">x</module></schema>",
                  "").status == 401u);
  BOOST_TEST(get(server.port(), "/admin/stats?key=admin-kez").status == 401u);
}

// Past limits.max_connections_per_address from one address a connection
// is told 503 and closed before anything of it is read; a connection that
// closes frees its place.
BOOST_AUTO_TEST_CASE(connections_past_the_limit_get_503_and_a_freed_place_is_taken_again) {
  auto config = demo_config();
  config.limits.max_connections_per_address = 2;
  gateway server(config, nullptr);
  server.start();
  net::io_context io;
  std::vector<net::ip::tcp::socket> held;
  for (int i = 0; i < 2; ++i) {
    held.emplace_back(io).connect({net::ip::make_address("127.0.0.1"), server.port()});
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // accepted, and counted
  }
  const auto turned_away = get(server.port(), "/healthz");
  BOOST_TEST(turned_away.status == 503u);
  BOOST_TEST(turned_away.header("retry-after") == "1");
  BOOST_TEST(turned_away.json().at("error").at("code").as_string() == "connection_limit");
  held.pop_back();
  unsigned status = 0;
  for (int tries = 0; tries < 100 && status != 200; ++tries) {  // the session ends once it sees the close
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    status = get(server.port(), "/healthz").status;
  }
  BOOST_TEST(status == 200u);
}

// Out of file descriptors, accept failed at once, again and again: the
// accept loop spun at 100% CPU. Now it pauses (10 ms, doubling up to 1 s)
// and takes the waiting connections once descriptors are free again.
BOOST_AUTO_TEST_CASE(out_of_file_descriptors_the_gateway_waits_instead_of_spinning) {
  gateway server(demo_config(), nullptr);
  server.start();
  rlimit saved{};
  BOOST_REQUIRE(getrlimit(RLIMIT_NOFILE, &saved) == 0);
  std::size_t open = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) open += entry.is_symlink() ? 1 : 0;
  // Room for the clients' sockets and nothing more: the gateway's accept meets EMFILE.
  constexpr std::size_t clients = 4;
  rlimit tight = saved;
  tight.rlim_cur = open + clients;
  net::io_context io;
  std::vector<net::ip::tcp::socket> sockets;
  BOOST_REQUIRE(setrlimit(RLIMIT_NOFILE, &tight) == 0);
  boost::system::error_code ec;
  for (std::size_t i = 0; i < clients; ++i) sockets.emplace_back(io).open(net::ip::tcp::v4(), ec);
  for (auto& socket : sockets) socket.connect({net::ip::make_address("127.0.0.1"), server.port()}, ec);
  const auto cpu_seconds = [] {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  };
  const double cpu_before = cpu_seconds();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double cpu_used = cpu_seconds() - cpu_before;
  BOOST_REQUIRE(setrlimit(RLIMIT_NOFILE, &saved) == 0);
  BOOST_TEST(cpu_used < 0.25);  // spinning, it was the whole second
  sockets.clear();
  unsigned status = 0;
  for (int tries = 0; tries < 100 && status != 200; ++tries) {  // accept's pause is at most a second
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    status = get(server.port(), "/healthz").status;
  }
  BOOST_TEST(status == 200u);
}

BOOST_AUTO_TEST_SUITE_END()
