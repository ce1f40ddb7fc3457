// rating_server: the blind rating page, served over HTTP on 127.0.0.1.
//
// A rater opens the page, gives their id (a form, or ?rater= in the link
// they were sent), and sees one prompt and one response at a time with a
// 0-10 scale; each click stores the rating at once (run_store::put_rating)
// and brings the next answer of their batch; "item i of n" says how far
// they are; a page says when they are done. A rater may stop and come back:
// the next answer is the first of their batch they have not rated, whether
// on the page or through a CSV import (rating_csv.hpp).
//
// Nothing in a page names a model: an answer is shown with its opaque item
// id (rating_assignment.hpp), never its request key.
//
// Server-rendered HTML forms and no script: POST /rate answers 303 See
// Other to the next page, so a reload never rates twice. Bad input answers
// 400 with a page saying what is wrong and a link back: an unknown rater, a
// score outside 0 to 10, an item that is not the rater's or was rated
// already (a form submitted twice, an old tab).
//
// rating_site is the pages, a function of a request that a test calls
// without a socket; rating_server serves them with Beast on a thread of its own.
#pragma once

#include <chrono>       // std::chrono::system_clock, std::chrono::seconds
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t
#include <exception>    // std::exception
#include <functional>   // std::function
#include <optional>     // std::optional
#include <set>          // std::set
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view
#include <thread>       // std::thread
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/asio/as_tuple.hpp>           // boost::asio::as_tuple
#include <boost/asio/awaitable.hpp>          // boost::asio::awaitable
#include <boost/asio/buffer.hpp>             // boost::asio::buffer
#include <boost/asio/co_spawn.hpp>           // boost::asio::co_spawn
#include <boost/asio/detached.hpp>           // boost::asio::detached
#include <boost/asio/io_context.hpp>         // boost::asio::io_context
#include <boost/asio/ip/tcp.hpp>             // boost::asio::ip::tcp
#include <boost/asio/use_awaitable.hpp>      // boost::asio::use_awaitable
#include <boost/beast/core/flat_buffer.hpp>  // boost::beast::flat_buffer
#include <boost/beast/core/tcp_stream.hpp>   // boost::beast::tcp_stream
#include <boost/beast/http/error.hpp>        // boost::beast::http::error
#include <boost/beast/http/message.hpp>      // boost::beast::http::response
#include <boost/beast/http/parser.hpp>       // boost::beast::http::request_parser
#include <boost/beast/http/read.hpp>         // boost::beast::http::async_read
#include <boost/beast/http/string_body.hpp>  // boost::beast::http::string_body
#include <boost/beast/http/write.hpp>        // boost::beast::http::async_write

#include "llmgate/eval/detail/report_text.hpp"      // report_detail::escape_html
#include "llmgate/http/lingering_close.hpp"         // lingering_close (after a 413)
#include "llmgate/eval/rate/rating_assignment.hpp"  // rating_catalog, rater_batch, valid_rater_id
#include "llmgate/eval/run/run_records.hpp"         // rating_record
#include "llmgate/eval/run/run_store.hpp"           // run_store

namespace llmgate::inline v0 {

namespace detail::rating {

/// One value of an application/x-www-form-urlencoded text ('+' is a space,
/// %XX a byte); false when a % is not followed by two hex digits.
inline bool form_decoded(std::string_view text, std::string& out) {
  const auto hex = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
  };
  out.clear();
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%') {
      if (i + 2 >= text.size()) return false;
      const int high = hex(text[i + 1]), low = hex(text[i + 2]);
      if (high < 0 || low < 0) return false;
      out += static_cast<char>(high * 16 + low);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return true;
}

/// The decoded value of `name` in a query or form body; nothing when it is
/// absent or badly encoded.
inline std::optional<std::string> form_value(std::string_view form, std::string_view name) {
  while (!form.empty()) {
    const auto end = form.find('&');
    const auto pair = form.substr(0, end);
    form = end == std::string_view::npos ? std::string_view{} : form.substr(end + 1);
    const auto equals = pair.find('=');
    std::string key;
    if (!form_decoded(pair.substr(0, equals), key) || key != name) continue;
    std::string value;
    if (equals == std::string_view::npos) return value;
    if (!form_decoded(pair.substr(equals + 1), value)) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

}  // namespace detail::rating

struct rating_page_options {
  std::string title = "Rate the answers";
  /// When a rating is given; empty: the system clock.
  std::function<std::int64_t()> now_unix_ms = {};
};

/// A page: HTML, or a redirect to `location` (303 See Other).
struct rating_response {
  unsigned status = 200;
  std::string location = {};
  std::string body = {};
};

/// The rating pages over a run store: GET / (who are you), GET /rate?rater=
/// (the rater's next answer, or the finished page), POST /rate (a rating).
class rating_site {
 public:
  /// `store` must outlive the site. `batches`: assign_raters's.
  rating_site(run_store& store, rating_catalog catalog, std::vector<rater_batch> batches, rating_page_options options = {})
      : store_(&store), catalog_(std::move(catalog)), batches_(std::move(batches)), options_(std::move(options)) {}

  const rating_catalog& catalog() const noexcept { return catalog_; }
  const std::vector<rater_batch>& batches() const noexcept { return batches_; }

  /// The answer to one request (`target`: path and query; `body`: a POST's form).
  rating_response handle(std::string_view method, std::string_view target, std::string_view body) const {
    const auto question = target.find('?');
    const auto path = target.substr(0, question);
    const auto query = question == std::string_view::npos ? std::string_view{} : target.substr(question + 1);
    if (path == "/") {
      if (method != "GET") return not_allowed();
      if (const auto rater = detail::rating::form_value(query, "rater"); rater && !rater->empty())
        return start(*rater);
      return {200, {}, page("Who is rating?", start_form())};
    }
    if (path == "/rate") {
      if (method == "GET") return next_answer(detail::rating::form_value(query, "rater").value_or(""));
      if (method == "POST") return rate(body);
      return not_allowed();
    }
    return bad(404, "Not found", "There is no page at this address.", nullptr);
  }

 private:
  static constexpr std::string_view style =
      "body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;line-height:1.5}"
      ".text{white-space:pre-wrap;border:1px solid #ccc;border-radius:4px;padding:.75rem;background:#fafafa}"
      ".scale button{min-width:2.5rem;padding:.5rem;margin:.15rem;font-size:1rem}"
      ".progress{color:#555}.error{color:#a00}";

  static std::string escaped(std::string_view text) { return report_detail::escape_html(text); }

  std::string page(std::string_view heading, std::string_view content) const {
    return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + escaped(options_.title) +
           "</title><style>" + std::string(style) + "</style></head><body><h1>" + escaped(heading) + "</h1>\n" +
           std::string(content) + "\n</body></html>\n";
  }

  static std::string start_form() {
    return "<form method=\"get\" action=\"/rate\"><label>Your rater id <input id=\"rater\" name=\"rater\" required "
           "value=\"\"></label> <button id=\"start\" type=\"submit\">Start</button></form>";
  }

  static std::string error_text(std::string_view why) {
    return "<p id=\"error\" class=\"error\">" + escaped(why) + "</p>";
  }

  // Rater ids need no escaping (valid_rater_id).
  static std::string next_link(const rater_batch* batch) {
    if (!batch) return "<p><a href=\"/\">Start again</a></p>";
    return "<p><a id=\"next\" href=\"/rate?rater=" + batch->rater + "\">Go to your next answer</a></p>";
  }

  rating_response bad(unsigned status, std::string_view heading, std::string_view why, const rater_batch* batch) const {
    return {status, {}, page(heading, error_text(why) + next_link(batch))};
  }

  rating_response not_allowed() const { return bad(405, "Not allowed", "This page does not take that method.", nullptr); }

  const rater_batch* find_batch(std::string_view rater) const {
    for (const auto& batch : batches_)
      if (batch.rater == rater) return &batch;
    return nullptr;
  }

  rating_response unknown_rater(std::string_view rater) const {
    const std::string why = rater.empty() ? "No rater id was given."
                                          : "There is no rater with the id '" + std::string(rater) + "'. Check the id you were given.";
    return {400, {}, page("Unknown rater", error_text(why) + start_form())};
  }

  rating_response start(std::string_view rater) const {
    if (!valid_rater_id(rater) || !find_batch(rater)) return unknown_rater(rater);
    return {303, "/rate?rater=" + std::string(rater), {}};
  }

  std::set<std::string> rated_by(std::string_view rater) const {
    std::set<std::string> rated;
    for (const auto& r : store_->ratings())
      if (r.rater == rater) rated.insert(r.request_key);
    return rated;
  }

  rating_response next_answer(std::string_view rater) const {
    const rater_batch* batch = valid_rater_id(rater) ? find_batch(rater) : nullptr;
    if (!batch) return unknown_rater(rater);
    const auto rated = rated_by(rater);
    std::size_t done = 0;
    const rating_item* next = nullptr;
    for (const auto& key : batch->request_keys) {
      if (rated.contains(key))
        ++done;
      else if (!next)
        next = catalog_.by_key(key);
    }
    const std::size_t total = batch->request_keys.size();
    if (!next)
      return {200, {}, page("Thank you", "<p id=\"done\">You have rated all " + std::to_string(total) +
                                             " answers of your batch. You can close this page.</p>")};
    std::string content = "<p id=\"progress\" class=\"progress\">Item " + std::to_string(done + 1) + " of " +
                          std::to_string(total) + " &middot; rating as " + std::string(rater) + "</p>";
    content += "<h2>Prompt</h2><div id=\"prompt\" class=\"text\">" + escaped(next->prompt) + "</div>";
    content += "<h2>Response</h2><div id=\"response\" class=\"text\">" + escaped(next->response) + "</div>";
    content += "<form method=\"post\" action=\"/rate\"><input type=\"hidden\" name=\"rater\" value=\"" +
               std::string(rater) + "\"><input type=\"hidden\" name=\"item\" value=\"" + next->id + "\">";
    content += "<fieldset class=\"scale\"><legend>How good is this response? 0 (worst) to 10 (best)</legend>";
    for (int score = 0; score <= 10; ++score) {
      const auto text = std::to_string(score);
      content += "<button type=\"submit\" name=\"score\" value=\"" + text + "\">" + text + "</button>";
    }
    content += "</fieldset></form>";
    return {200, {}, page("Rate this response", content)};
  }

  rating_response rate(std::string_view form) const {
    const auto rater = detail::rating::form_value(form, "rater").value_or("");
    const rater_batch* batch = valid_rater_id(rater) ? find_batch(rater) : nullptr;
    if (!batch) return unknown_rater(rater);
    const auto score_text = detail::rating::form_value(form, "score").value_or("");
    int score = -1;
    if (!score_text.empty() && score_text.size() <= 2 && score_text.find_first_not_of("0123456789") == std::string::npos)
      score = std::stoi(score_text);  // 0 to 99
    if (score < 0 || score > 10)
      return bad(400, "Not a rating", "A rating is a whole number from 0 to 10, not '" + score_text + "'.", batch);
    const auto id = detail::rating::form_value(form, "item").value_or("");
    const rating_item* item = catalog_.by_id(id);
    bool in_batch = false;
    for (const auto& key : batch->request_keys) in_batch = in_batch || (item && key == item->request_key);
    if (!in_batch)
      return bad(400, "Not your answer", "The answer '" + id + "' is not in your batch: this form is out of date.", batch);
    if (rated_by(rater).contains(item->request_key))
      return bad(400, "Rated already", "You have rated this answer already: this form is out of date.", batch);
    const std::int64_t at =
        options_.now_unix_ms ? options_.now_unix_ms()
                             : std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch()).count();
    store_->put_rating({.rater = rater, .request_key = item->request_key, .score = score, .at_unix_ms = at});
    return {303, "/rate?rater=" + rater, {}};
  }

  run_store* store_;
  rating_catalog catalog_;
  std::vector<rater_batch> batches_;
  rating_page_options options_;
};

struct rating_server_options {
  std::string address = "127.0.0.1";
  unsigned short port = 0;  ///< 0: any free port (port() tells which)
  std::size_t max_body_bytes = 64 * 1024;
};

/// rating_site served over HTTP/1.1 on a thread of its own.
class rating_server {
  using tcp = boost::asio::ip::tcp;

 public:
  explicit rating_server(rating_site site, rating_server_options options = {})
      : site_(std::move(site)), options_(std::move(options)) {}
  rating_server(const rating_server&) = delete;
  rating_server& operator=(const rating_server&) = delete;
  ~rating_server() { stop(); }

  /// Binds and serves. Throws boost::system::system_error when the address
  /// cannot be bound.
  void start() {
    const tcp::endpoint endpoint(boost::asio::ip::make_address(options_.address), options_.port);
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    boost::asio::co_spawn(io_, accept(), boost::asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }

  /// Stops serving; connections in progress are closed. Idempotent.
  void stop() {
    if (!thread_.joinable()) return;
    io_.stop();
    thread_.join();
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  }

  unsigned short port() const noexcept { return port_; }
  /// The page's address, to give to raters.
  std::string url() const { return "http://" + options_.address + ":" + std::to_string(port_) + "/"; }

  const rating_site& site() const noexcept { return site_; }

 private:
  boost::asio::awaitable<void> accept() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(boost::asio::as_tuple(boost::asio::use_awaitable));
      if (ec) {
        if (!acceptor_.is_open()) co_return;
        continue;
      }
      boost::asio::co_spawn(io_, serve(std::move(socket)), boost::asio::detached);
    }
  }

  boost::asio::awaitable<void> serve(tcp::socket socket) {
    namespace http = boost::beast::http;
    const auto as_tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
    boost::beast::tcp_stream stream(std::move(socket));
    boost::beast::flat_buffer buffer;
    bool too_large = false;
    for (;;) {
      stream.expires_after(std::chrono::seconds(60));
      http::request_parser<http::string_body> parser;
      parser.body_limit(options_.max_body_bytes);
      auto [read_error, read] = co_await http::async_read(stream, buffer, parser, as_tuple);
      (void)read;
      rating_response answer;
      bool keep_alive = false;
      if (read_error == http::error::body_limit) {
        too_large = true;
        answer = {413, {}, "<!DOCTYPE html>\n<p>The form is too large.</p>\n"};
      } else if (read_error) {
        break;  // the client left, timed out, or sent what is not HTTP
      } else {
        const auto& request = parser.get();
        keep_alive = request.keep_alive();
        try {
          answer = site_.handle(std::string_view(request.method_string()), std::string_view(request.target()),
                                request.body());
        } catch (const std::exception& e) {
          answer = {500, {}, "<!DOCTYPE html>\n<p>Failed: " + report_detail::escape_html(e.what()) + "</p>\n"};
        }
      }
      http::response<http::string_body> response(static_cast<http::status>(answer.status), 11);
      response.set(http::field::content_type, "text/html; charset=utf-8");
      response.set(http::field::cache_control, "no-store");
      if (!answer.location.empty()) response.set(http::field::location, answer.location);
      response.body() = std::move(answer.body);
      response.keep_alive(keep_alive);
      response.prepare_payload();
      auto [write_error, written] = co_await http::async_write(stream, response, as_tuple);
      (void)written;
      if (write_error || !keep_alive) break;
    }
    if (too_large) {
      co_await lingering_close(stream, {.time = std::chrono::seconds(2), .bytes = std::uint64_t{1} << 24});
    } else {
      boost::system::error_code ignored;
      stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  rating_site site_;
  rating_server_options options_;
  boost::asio::io_context io_{1};
  tcp::acceptor acceptor_{io_};
  unsigned short port_ = 0;
  std::thread thread_;
};

}  // namespace llmgate::inline v0
