// The rating pages as functions of a request (rating_site), and served over
// a socket (rating_server): one answer at a time with no model named, each
// rating stored when given, bad input answered 400 and never stored.
#include <boost/test/unit_test.hpp>

#include <cstdint>  // std::int64_t
#include <string>   // std::string
#include <vector>   // std::vector

#include <boost/asio/connect.hpp>            // boost::asio::connect
#include <boost/asio/io_context.hpp>         // boost::asio::io_context
#include <boost/asio/ip/tcp.hpp>             // boost::asio::ip::tcp
#include <boost/asio/read.hpp>               // boost::asio::read
#include <boost/asio/write.hpp>              // boost::asio::write
#include <boost/beast/core/flat_buffer.hpp>  // boost::beast::flat_buffer
#include <boost/beast/http.hpp>              // boost::beast::http::request, response, read, write

#include "llmgate/eval/rate/rating_server.hpp"  // rating_site, rating_server
#include "rating_fixture.hpp"                   // record_rating_run, rating_candidates, rating_prompt

namespace http = boost::beast::http;
using llmgate::test::rating_key;

namespace {

constexpr std::int64_t now = 1'700'000'000'123;

/// Three answers of one prompt: ann rates q8's and big's, bob q4's.
struct site_run {
  llmgate::run_store store = llmgate::run_store::in_memory();
  std::vector<llmgate::request_result> results = llmgate::test::record_rating_run(store, 1);
  std::string q8 = rating_key("small-local-q8", 0), big = rating_key("big-hosted-model", 0),
              q4 = rating_key("small-local-q4", 0);
  llmgate::rating_site site{store,
                            llmgate::rating_catalog(results, 255, llmgate::test::rating_prompt),
                            {{"ann", {q8, big}}, {"bob", {q4}}},
                            {.title = "Rate the answers", .now_unix_ms = [] { return now; }}};

  std::string id(const std::string& key) const { return site.catalog().by_key(key)->id; }
  llmgate::rating_response get(const std::string& target) const { return site.handle("GET", target, ""); }
  llmgate::rating_response post(const std::string& form) const { return site.handle("POST", "/rate", form); }
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// No page names a model or shows a request key.
void check_blind(const std::string& page) {
  for (const auto& candidate : llmgate::test::rating_candidates) BOOST_TEST(!contains(page, candidate), candidate);
  BOOST_TEST(!contains(page, "evaluation/"));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(rating_server_test)

BOOST_AUTO_TEST_CASE(a_rater_rates_their_batch_one_answer_at_a_time) {
  site_run run;
  const auto start = run.get("/");
  BOOST_TEST(start.status == 200u);
  BOOST_TEST(contains(start.body, "<form method=\"get\" action=\"/rate\">"));
  BOOST_TEST(contains(start.body, "<input id=\"rater\" name=\"rater\" required value=\"\">"));
  check_blind(start.body);

  const auto named = run.get("/?rater=ann");
  BOOST_TEST(named.status == 303u);
  BOOST_TEST(named.location == "/rate?rater=ann");

  const auto first = run.get("/rate?rater=ann");
  BOOST_TEST(first.status == 200u);
  BOOST_TEST(contains(first.body, "<p id=\"progress\" class=\"progress\">Item 1 of 2 &middot; rating as ann</p>"));
  BOOST_TEST(contains(first.body, "<div id=\"prompt\" class=\"text\">Plan my day, list 0:\n- write, &quot;review&quot; "
                                  "&amp; &lt;ship&gt;</div>"));
  BOOST_TEST(contains(first.body, "<div id=\"response\" class=\"text\">Answer 0.2: word word word word word</div>"));
  BOOST_TEST(contains(first.body, "<input type=\"hidden\" name=\"item\" value=\"" + run.id(run.q8) + "\">"));
  for (int score = 0; score <= 10; ++score)
    BOOST_TEST(contains(first.body, "<button type=\"submit\" name=\"score\" value=\"" + std::to_string(score) + "\">" +
                                        std::to_string(score) + "</button>"));
  check_blind(first.body);

  const auto rated = run.post("rater=ann&item=" + run.id(run.q8) + "&score=7");
  BOOST_TEST(rated.status == 303u);
  BOOST_TEST(rated.location == "/rate?rater=ann");
  auto ratings = run.store.ratings();
  BOOST_REQUIRE(ratings.size() == 1u);
  BOOST_TEST(ratings[0].rater == "ann");
  BOOST_TEST(ratings[0].request_key == run.q8);
  BOOST_TEST(ratings[0].score == 7);
  BOOST_TEST(ratings[0].at_unix_ms == now);

  const auto second = run.get("/rate?rater=ann");
  BOOST_TEST(contains(second.body, "Item 2 of 2"));
  BOOST_TEST(contains(second.body, "<div id=\"response\" class=\"text\">Answer 0.0: word</div>"));
  check_blind(second.body);
  BOOST_TEST(run.post("score=10&item=" + run.id(run.big) + "&rater=ann").status == 303u);

  const auto done = run.get("/rate?rater=ann");
  BOOST_TEST(done.status == 200u);
  BOOST_TEST(contains(done.body, "<p id=\"done\">You have rated all 2 answers of your batch. You can close this page.</p>"));
  check_blind(done.body);
  ratings = run.store.ratings();
  BOOST_REQUIRE(ratings.size() == 2u);
  BOOST_TEST(ratings[1].request_key == run.big);
  BOOST_TEST(ratings[1].score == 10);

  // bob's batch is his own; ann's ratings do not count for it.
  BOOST_TEST(contains(run.get("/rate?rater=bob").body, "Item 1 of 1"));
}

BOOST_AUTO_TEST_CASE(answers_rated_elsewhere_are_skipped) {
  site_run run;
  run.store.put_rating({.rater = "ann", .request_key = run.q8, .score = 3, .at_unix_ms = 1});  // a CSV import, say
  const auto page = run.get("/rate?rater=ann");
  BOOST_TEST(contains(page.body, "Item 2 of 2"));
  BOOST_TEST(contains(page.body, "value=\"" + run.id(run.big) + "\""));
}

BOOST_AUTO_TEST_CASE(bad_input_is_answered_400_and_nothing_is_stored) {
  site_run run;
  const auto refused = [&](const llmgate::rating_response& r, unsigned status, const std::string& why) {
    BOOST_TEST(r.status == status);
    BOOST_TEST(contains(r.body, why), r.body);
    check_blind(r.body);
  };
  const std::string q8 = run.id(run.q8);
  refused(run.get("/rate?rater=zed"), 400, "There is no rater with the id &#39;zed&#39;.");
  refused(run.get("/rate"), 400, "No rater id was given.");
  refused(run.get("/?rater=zed"), 400, "There is no rater with the id &#39;zed&#39;.");
  refused(run.get("/rate?rater=%3Cb%3E"), 400, "There is no rater with the id &#39;&lt;b&gt;&#39;.");
  refused(run.post("rater=zed&item=" + q8 + "&score=5"), 400, "There is no rater with the id &#39;zed&#39;.");
  refused(run.post("rater=ann&item=" + q8 + "&score=11"), 400, "A rating is a whole number from 0 to 10, not &#39;11&#39;.");
  refused(run.post("rater=ann&item=" + q8 + "&score=-1"), 400, "not &#39;-1&#39;.");
  refused(run.post("rater=ann&item=" + q8 + "&score=7.5"), 400, "not &#39;7.5&#39;.");
  refused(run.post("rater=ann&item=" + q8), 400, "not &#39;&#39;.");
  refused(run.post("rater=ann&item=" + q8 + "&score=%4"), 400, "not &#39;&#39;.");  // broken encoding
  refused(run.post("rater=ann&item=" + run.id(run.q4) + "&score=5"), 400,
          "The answer &#39;" + run.id(run.q4) + "&#39; is not in your batch: this form is out of date.");
  refused(run.post("rater=ann&item=nonsense&score=5"), 400, "The answer &#39;nonsense&#39; is not in your batch");
  refused(run.get("/admin"), 404, "There is no page at this address.");
  refused(run.site.handle("DELETE", "/rate", ""), 405, "This page does not take that method.");
  BOOST_TEST(run.store.ratings().empty());

  // A form sent twice (a reload, an old tab): the second is stale.
  BOOST_TEST(run.post("rater=ann&item=" + q8 + "&score=5").status == 303u);
  const auto again = run.post("rater=ann&item=" + q8 + "&score=9");
  refused(again, 400, "You have rated this answer already: this form is out of date.");
  BOOST_TEST(contains(again.body, "<a id=\"next\" href=\"/rate?rater=ann\">Go to your next answer</a>"));
  BOOST_REQUIRE(run.store.ratings().size() == 1u);
  BOOST_TEST(run.store.ratings()[0].score == 5);
}

BOOST_AUTO_TEST_CASE(text_is_escaped_never_markup) {
  auto store = llmgate::run_store::in_memory();
  llmgate::request_result answer;
  answer.request = {.key = "evaluation/x/0/0", .kind = llmgate::request_kind::evaluation, .candidate = "x", .prompt = 0,
                    .repetition = 0};
  answer.response = "<script>alert('x')</script> & \"more\"";
  store.plan(std::vector<llmgate::planned_request>{answer.request});
  store.begin(answer.request.key);
  store.finish(answer);
  const auto results = store.results();
  const llmgate::rating_site site(store, llmgate::rating_catalog(results, 1, [](const auto&) { return std::string("<i>"); }),
                                  {{"ann", {"evaluation/x/0/0"}}});
  const auto page = site.handle("GET", "/rate?rater=ann", "").body;
  BOOST_TEST(contains(page, "<div id=\"prompt\" class=\"text\">&lt;i&gt;</div>"));
  BOOST_TEST(contains(page, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;more&quot;"));
  BOOST_TEST(!contains(page, "<script"));
}

namespace {

struct http_answer {
  unsigned status = 0;
  std::string location;
  std::string content_type;
  std::string body;
};

http_answer exchange(unsigned short port, http::verb method, const std::string& target, const std::string& body = "") {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  http::request<http::string_body> request(method, target, 11);
  request.set(http::field::host, "127.0.0.1");
  if (method == http::verb::post) request.set(http::field::content_type, "application/x-www-form-urlencoded");
  request.body() = body;
  request.prepare_payload();
  http::write(socket, request);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(socket, buffer, response);
  return {response.result_int(), std::string(response[http::field::location]),
          std::string(response[http::field::content_type]), response.body()};
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_server_serves_the_pages_on_loopback_and_survives_bad_requests) {
  site_run run;
  llmgate::rating_server server(run.site);
  server.start();
  BOOST_TEST(server.port() != 0u);
  BOOST_TEST(server.url() == "http://127.0.0.1:" + std::to_string(server.port()) + "/");

  const auto start = exchange(server.port(), http::verb::get, "/");
  BOOST_TEST(start.status == 200u);
  BOOST_TEST(start.content_type == "text/html; charset=utf-8");
  BOOST_TEST(contains(start.body, "Your rater id"));

  const auto rated = exchange(server.port(), http::verb::post, "/rate", "rater=ann&item=" + run.id(run.q8) + "&score=6");
  BOOST_TEST(rated.status == 303u);
  BOOST_TEST(rated.location == "/rate?rater=ann");
  BOOST_TEST(exchange(server.port(), http::verb::post, "/rate", "rater=ann&item=" + run.id(run.big) + "&score=12").status ==
             400u);
  BOOST_TEST(exchange(server.port(), http::verb::post, "/rate", std::string(100'000, 'x')).status == 413u);

  {  // bytes that are not HTTP: the connection is closed, the server goes on
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), server.port()});
    boost::asio::write(socket, boost::asio::buffer(std::string("\x01\x02 not http\r\n\r\n")));
    std::string rest(64, '\0');
    boost::system::error_code ec;
    boost::asio::read(socket, boost::asio::buffer(rest), ec);
    BOOST_TEST(ec == boost::asio::error::eof);
  }
  const auto next = exchange(server.port(), http::verb::get, "/rate?rater=ann");
  BOOST_TEST(next.status == 200u);
  BOOST_TEST(contains(next.body, "Item 2 of 2"));

  const auto ratings = run.store.ratings();
  BOOST_REQUIRE(ratings.size() == 1u);
  BOOST_TEST(ratings[0].request_key == run.q8);
  BOOST_TEST(ratings[0].score == 6);
  server.stop();
  server.stop();  // idempotent
}

BOOST_AUTO_TEST_SUITE_END()
