// report: the HTML page, the CSV files and the JSON lines made from a small
// synthetic run whose every figure is known: the candidates' table rows,
// each plot with the numbers it draws, text from the run escaped, nothing
// fetched from outside the page; and the page loaded in headless Chromium
// (Debian's chromium), whose DOM after rendering holds every plot.
#include <array>        // std::array
#include <cstdio>       // popen, pclose, fread
#include <filesystem>   // std::filesystem::path, exists
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/json/parse.hpp>      // boost::json::parse
#include <boost/test/unit_test.hpp>  // BOOST_AUTO_TEST_SUITE, BOOST_TEST

#include "../file_bytes.hpp"                      // read_bytes
#include "../skip_test.hpp"                       // skip_test
#include "../temporary_directory.hpp"             // temporary_directory
#include "llmgate/eval/report/report.hpp"         // render_report_html, write_report_files, report_input
#include "llmgate/eval/report/results_files.hpp"  // results_csv, scores_csv, summary_csv, evaluation_json_line...
#include "llmgate/eval/report/svg_plot.hpp"       // svg::summarize_box, svg::box_plot, svg::bar_chart

namespace {

namespace fs = std::filesystem;
using namespace llmgate;

// 2026-11-26 09:00:00 UTC.
constexpr std::int64_t nine_utc = 1'795'683'600'000;
constexpr std::int64_t hour_ms = 3'600'000;

/// Three candidates: an API model (the reference), a GGUF file the kit
/// serves, and the demo backend; two prompts, two repetitions.
evaluation_plan test_plan() {
  evaluation_plan plan;
  plan.backends = {{.name = "api", .kind = "openai", .model = "gpt-big"}, {.name = "demo", .kind = "demo"}};
  plan.candidates = {
      {.name = "big", .backend = "api", .price = {.input_per_1k = 0.01, .output_per_1k = 0.03}},
      {.name = "small <q4>", .gguf = "/models/small.gguf", .sampling = {{"temperature", 0.2}},
       .price = {.instance_per_hour = 0.5}},
      {.name = "demo & co", .backend = "demo", .model = "echo"},
  };
  plan.reference = "big";
  plan.prompts.resize(2);
  plan.repetitions = 2;
  plan.sampling = {{"max_tokens", 64}};
  plan.embedders = {{.name = "hashing"}, {.name = "minilm", .candidate = "demo & co"}};
  plan.judges = {{.kind = judge_kind::scorer, .candidate = "big"}};
  return plan;
}

request_result result(std::string candidate, int prompt, int repetition, std::int64_t at, double latency,
                      request_kind kind = request_kind::evaluation) {
  request_result r;
  r.request.kind = kind;
  r.request.candidate = std::move(candidate);
  r.request.prompt = prompt;
  r.request.repetition = repetition;
  r.request.key = std::string(to_string(kind)) + "/" + r.request.candidate + "/" + std::to_string(prompt) + "/" +
                  std::to_string(repetition);
  r.started_unix_ms = at;
  r.latency_ms = latency;
  r.ttft_ms = latency / 4;
  r.tokens_in = 20;
  r.tokens_out = 11;
  r.response = "answer " + std::to_string(prompt);
  return r;
}

/// Evaluation answers at 09:xx and 10:xx UTC, one timeout, and two
/// latency-schedule answers at 23:xx.
std::vector<request_result> test_results() {
  std::vector<request_result> results;
  const std::array<std::pair<const char*, std::array<double, 4>>, 3> latencies = {{
      {"big", {100, 200, 300, 400}},
      {"small <q4>", {10, 20, 30, 40}},
      {"demo & co", {1, 2, 3, 4}},
  }};
  for (const auto& [name, ms] : latencies)
    for (int i = 0; i < 4; ++i)
      results.push_back(result(name, i / 2, i % 2, nine_utc + (i < 2 ? 0 : hour_ms) + i * 1000, ms[i]));
  results[7].error = request_failure::timeout;  // small <q4>, prompt 1, repetition 1, at 10:00
  results[7].error_message = "no answer in 120000 ms";
  results[7].response.clear();
  results[7].tokens_out = 0;
  results.push_back(result("big", 0, 0, nine_utc + 14 * hour_ms, 500, request_kind::schedule));
  results.push_back(result("small <q4>", 0, 0, nine_utc + 14 * hour_ms + 5, 50, request_kind::schedule));
  results.back().request.key = "schedule/small <q4>/0/0";
  return results;
}

std::vector<score_record> test_scores() {
  return {
      {"evaluation/small <q4>/0/0", "tfidf", 0.5},
      {"evaluation/small <q4>/0/1", "tfidf", 0.25},
      {"evaluation/small <q4>/1/0", "tfidf", 1.0},
      {"evaluation/demo & co/0/0", "tfidf", 0.125},
      {"evaluation/demo & co/0/0", "bleu", 0.0625},
      {"evaluation/demo & co/0/0", "judge:scorer", std::nullopt, "Score: great"},
      {"evaluation/small <q4>/0/0", "judge:scorer", 0.7, "clear, \"short\"\nScore: 7"},
  };
}

std::vector<rating_record> test_ratings() {
  return {{"ann", "evaluation/big/0/0", 9, nine_utc}, {"ann", "evaluation/small <q4>/0/0", 5, nine_utc + 1},
          {"bob", "evaluation/demo & co/0/0", 2, nine_utc + 2}};
}

evaluation_summary test_summary(bool rated) {
  evaluation_summary summary;
  summary.reference = "big";
  // (Assigned field by field: the maps have no default initializer, which
  // designated initializers would have to name.)
  candidate_summary big;
  big.candidate = "big", big.requests = 4, big.latency_p50_ms = 250, big.latency_p90_ms = 370, big.latency_p99_ms = 397;
  big.ttft_p50_ms = 62.5, big.per_token_ms_p50 = 18.75, big.tokens_in = 80, big.tokens_out = 44, big.tokens_per_s = 124;
  big.cost_per_1k_tokens = 0.017096774193548388, big.cost_reduction = 1;
  candidate_summary small;
  small.candidate = "small <q4>", small.requests = 4, small.errors = 1, small.resent = 1;
  small.errors_by_kind = {{"timeout", 1}};
  small.latency_p50_ms = 20, small.latency_p90_ms = 28, small.latency_p99_ms = 29.8, small.ttft_p50_ms = 5;
  small.per_token_ms_p50 = 1.5, small.tokens_in = 80, small.tokens_out = 33, small.tokens_per_s = 1130;
  small.cost_per_1k_tokens = 0.00015362, small.cost_reduction = 111.29;
  small.scores = {{"tfidf", 0.5833333333333334}, {"judge:scorer", 0.7}};
  small.judge_parsed_fraction = 1, small.overhead_us_p50 = 41.5;
  candidate_summary demo;
  demo.candidate = "demo & co", demo.requests = 4, demo.latency_p50_ms = 2.5, demo.tokens_in = 80, demo.tokens_out = 44;
  demo.scores = {{"tfidf", 0.125}, {"bleu", 0.0625}, {"embedding:minilm", 0.75}};
  if (rated) {
    big.human_mean = 0.9, big.ratings = 1;
    small.human_mean = 0.5, small.ratings = 1;
    demo.human_mean = 0.2, demo.ratings = 1;
    summary.agreement = {{.method = "tfidf", .k = 2, .bottom_k_jaccard = 1.0 / 3, .spearman = -0.5},
                         {.method = "judge:scorer", .k = 2, .bottom_k_jaccard = 1, .spearman = 1}};
  }
  summary.candidates = {big, small, demo};
  return summary;
}

std::size_t count(std::string_view text, std::string_view part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string_view::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

const std::vector<std::string> every_plot = {"score-distribution", "latency",          "per-token-latency",
                                             "latency-by-hour",    "errors-by-hour",   "availability-by-hour",
                                             "tokens-generated",   "cost-per-1k-tokens", "cost-reduction", "agreement"};

/// A command's standard output.
std::string output_of(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  char buffer[65536];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  pclose(pipe);
  return out;
}

struct test_run {
  evaluation_plan plan = test_plan();
  evaluation_summary summary;
  std::vector<request_result> results = test_results();
  std::vector<score_record> scores = test_scores();
  std::vector<rating_record> ratings;
  std::vector<served_model_info> served = {{.candidate = "small <q4>", .path = "/models/small.gguf",
                                            .file_bytes = 1185376, .quantization = "Q4_K_M", .parameters = 292800,
                                            .rss_bytes = 209715200, .engine = "node-llama-cpp 3.22.1"}};

  explicit test_run(bool rated) : summary(test_summary(rated)) {
    if (rated) ratings = test_ratings();
  }
  report_input input() const {
    return {.plan = plan, .summary = summary, .results = results, .scores = scores, .ratings = ratings,
            .served_models = served, .made_unix_ms = nine_utc + 15 * hour_ms + 61'000};
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(report_test)

BOOST_AUTO_TEST_CASE(box_numbers_are_type_7_quantiles) {
  const auto box = svg::summarize_box({4, 1, 3, 2});
  BOOST_TEST(box.n == 4u);
  BOOST_TEST(box.low == 1.0);
  BOOST_TEST(box.q1 == 1.75);
  BOOST_TEST(box.median == 2.5);
  BOOST_TEST(box.q3 == 3.25);
  BOOST_TEST(box.high == 4.0);
  BOOST_TEST(svg::summarize_box({}).n == 0u);
  BOOST_TEST(svg::summarize_box({7}).q1 == 7.0);
}

BOOST_AUTO_TEST_CASE(plots_carry_their_numbers_and_escape_their_text) {
  const std::vector<svg::box_group> boxes = {{"a<b", {{1, 2, 3}, {}}}};
  const std::string box =
      svg::box_plot({.name = "p&q", .title = "T\"itle", .y_label = "ms", .legend = {"x", "y'z"}}, boxes);
  BOOST_TEST(box.starts_with("<svg class=\"plot\" data-plot=\"p&amp;q\""));
  BOOST_TEST(count(box, "<g class=\"box\"") == 1u);
  BOOST_TEST(
      box.find("<g class=\"box\" data-group=\"a&lt;b\" data-series=\"x\" data-n=\"3\" data-min=\"1\" data-q1=\"1.5\" "
               "data-median=\"2\" data-q3=\"2.5\" data-max=\"3\">") != std::string::npos);
  BOOST_TEST(box.find(">y&#39;z</text>") != std::string::npos);
  BOOST_TEST(box.find("T&quot;itle") != std::string::npos);
  BOOST_TEST(box.find("a<b") == std::string::npos);

  const std::vector<svg::bar_group> bars = {{"g", {0.25, std::nullopt, -1.0}}};
  const std::string bar = svg::bar_chart({.name = "b", .title = "B", .y_label = "v", .legend = {"p", "q", "r"}}, bars);
  BOOST_TEST(bar.find("<g class=\"bar\" data-group=\"g\" data-series=\"p\" data-value=\"0.25\">") != std::string::npos);
  BOOST_TEST(bar.find("<text class=\"bar-missing\" data-group=\"g\" data-series=\"q\"") != std::string::npos);
  BOOST_TEST(bar.find("data-series=\"r\" data-value=\"-1\"") != std::string::npos);

  const std::string empty = svg::bar_chart({.name = "e", .title = "E", .y_label = "v"}, {});
  BOOST_TEST(empty.find(">no data</text>") != std::string::npos);
  BOOST_TEST(empty.ends_with("</svg>\n"));
}

BOOST_AUTO_TEST_CASE(the_page_shows_every_candidate_and_every_plot) {
  const test_run run(true);
  const std::string html = render_report_html(run.input());
  BOOST_TEST(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
  BOOST_TEST(html.ends_with("</body>\n</html>\n"));
  BOOST_TEST(html.find("<title>Evaluation report</title>") != std::string::npos);
  BOOST_TEST(html.find("Made 2026-11-27 00:01:01 UTC. Reference: <strong>big</strong>.") != std::string::npos);

  // Self-contained: nothing loaded from anywhere, nothing run.
  for (const char* outside : {"<script", "src=", "href=", "url(", "@import", "<link", "<img", "<iframe"})
    BOOST_TEST(html.find(outside) == std::string::npos, outside);
  // Every name from the run escaped.
  BOOST_TEST(html.find("small <q4>") == std::string::npos);
  BOOST_TEST(html.find("demo & co") == std::string::npos);

  BOOST_TEST(html.find("<tr class=\"reference\" data-candidate=\"big\"><td>big (reference)</td><td>api (openai)</td>"
                       "<td>gpt-big</td><td>max_tokens 64</td><td>-</td><td class=\"num\">-</td><td class=\"num\">-</td>"
                       "<td class=\"num\">-</td><td>$0.01 / 1K input, $0.03 / 1K output tokens</td></tr>") !=
             std::string::npos);
  BOOST_TEST(html.find("<tr data-candidate=\"small &lt;q4&gt;\"><td>small &lt;q4&gt;</td><td>the kit: node-llama-cpp "
                       "3.22.1</td><td>/models/small.gguf</td><td>max_tokens 64, temperature 0.2</td><td>Q4_K_M</td>"
                       "<td class=\"num\">292,800</td><td class=\"num\">1.13 MiB</td><td class=\"num\">200.00 MiB</td>"
                       "<td>$0.5 / hour at 80% utilisation</td></tr>") != std::string::npos);
  BOOST_TEST(html.find("<tr data-candidate=\"demo &amp; co\"><td>demo &amp; co</td><td>demo (demo)</td><td>echo</td>"
                       "<td>max_tokens 64</td><td>-</td>") != std::string::npos);

  // The figures: one row per candidate, one column per method.
  BOOST_TEST(
      html.find("<th scope=\"col\">TF-IDF cosine</th><th scope=\"col\">BLEU</th><th scope=\"col\">embedding:hashing"
                "</th><th scope=\"col\">embedding:minilm</th><th scope=\"col\">sem_bleu:hashing</th>"
                "<th scope=\"col\">sem_bleu:minilm</th><th scope=\"col\">judge:scorer</th>") != std::string::npos);
  BOOST_TEST(html.find("<tr data-candidate=\"small &lt;q4&gt;\"><td>small &lt;q4&gt;</td><td class=\"num\">4</td>"
                       "<td class=\"num\">1 (timeout 1)</td><td class=\"num\">1</td><td class=\"num\">20.0</td>") !=
             std::string::npos);

  for (const auto& plot : every_plot)
    BOOST_TEST(count(html, "<svg class=\"plot\" data-plot=\"" + plot + "\"") == 1u, plot);
  BOOST_TEST(count(html, "<svg class=\"plot\"") == every_plot.size());
  BOOST_TEST(html.find("data-note=\"agreement\"") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(each_plot_draws_the_run_s_numbers) {
  const test_run run(true);
  const std::string html = render_report_html(run.input());
  const auto plot = [&](const std::string& name) {
    const auto begin = html.find("<svg class=\"plot\" data-plot=\"" + name + "\"");
    BOOST_REQUIRE(begin != std::string::npos);
    return html.substr(begin, html.find("</svg>", begin) - begin);
  };

  const std::string scores = plot("score-distribution");
  BOOST_TEST(
      scores.find(
          "<g class=\"box\" data-group=\"tfidf\" data-series=\"small &lt;q4&gt;\" data-n=\"3\" data-min=\"0.25\" "
          "data-q1=\"0.375\" data-median=\"0.5\" data-q3=\"0.75\" data-max=\"1\">") != std::string::npos);
  BOOST_TEST(scores.find("data-group=\"bleu\" data-series=\"demo &amp; co\" data-n=\"1\" data-min=\"0.0625\"") !=
             std::string::npos);
  // The unparsed verdict is not drawn; the parsed one is.
  BOOST_TEST(scores.find("data-group=\"judge:scorer\" data-series=\"small &lt;q4&gt;\" data-n=\"1\" data-min=\"0.7\"") !=
             std::string::npos);
  BOOST_TEST(scores.find("data-group=\"judge:scorer\" data-series=\"demo &amp; co\"") == std::string::npos);
  BOOST_TEST(scores.find("data-group=\"human\" data-series=\"big\" data-n=\"1\" data-min=\"0.9\"") != std::string::npos);
  BOOST_TEST(count(scores, "<g class=\"box\"") == 7u);  // tfidf 2, bleu 1, judge 1, human 3

  const std::string latency = plot("latency");
  BOOST_TEST(latency.find("<g class=\"box\" data-group=\"big\" data-series=\"big\" data-n=\"4\" data-min=\"100\" "
                          "data-q1=\"175\" data-median=\"250\" data-q3=\"325\" data-max=\"400\">") != std::string::npos);
  // The timeout is left out; the schedule's answers are not evaluation answers.
  BOOST_TEST(
      latency.find("data-series=\"small &lt;q4&gt;\" data-n=\"3\" data-min=\"10\" data-q1=\"15\" data-median=\"20\" "
                   "data-q3=\"25\" data-max=\"30\"") != std::string::npos);

  // (latency - latency / 4) / 10 tokens.
  BOOST_TEST(plot("per-token-latency").find("data-series=\"big\" data-n=\"4\" data-min=\"7.5\" data-q1=\"13.125\" "
                                            "data-median=\"18.75\"") != std::string::npos);

  const std::string by_hour = plot("latency-by-hour");
  BOOST_TEST(by_hour.find("data-group=\"09:00\" data-series=\"big\" data-n=\"2\" data-min=\"100\"") != std::string::npos);
  BOOST_TEST(by_hour.find("data-group=\"10:00\" data-series=\"small &lt;q4&gt;\" data-n=\"1\" data-min=\"30\"") !=
             std::string::npos);
  BOOST_TEST(by_hour.find("data-group=\"23:00\" data-series=\"big\" data-n=\"1\" data-min=\"500\"") != std::string::npos);
  BOOST_TEST(count(by_hour, "<g class=\"box\"") == 8u);

  const std::string errors = plot("errors-by-hour");
  BOOST_TEST(errors.find("data-group=\"10:00\" data-series=\"small &lt;q4&gt;\" data-value=\"1\"") != std::string::npos);
  BOOST_TEST(errors.find("data-group=\"09:00\" data-series=\"small &lt;q4&gt;\" data-value=\"0\"") != std::string::npos);
  BOOST_TEST(errors.find("<text class=\"bar-missing\" data-group=\"23:00\" data-series=\"demo &amp; co\"") !=
             std::string::npos);
  const std::string availability = plot("availability-by-hour");
  BOOST_TEST(availability.find("data-group=\"10:00\" data-series=\"small &lt;q4&gt;\" data-value=\"0.5\"") !=
             std::string::npos);
  BOOST_TEST(availability.find("data-group=\"23:00\" data-series=\"big\" data-value=\"1\"") != std::string::npos);

  BOOST_TEST(plot("tokens-generated")
                 .find("data-group=\"small &lt;q4&gt;\" data-series=\"small &lt;q4&gt;\" data-value=\"33\"") !=
             std::string::npos);
  BOOST_TEST(
      plot("cost-per-1k-tokens").find("data-group=\"big\" data-series=\"big\" data-value=\"0.017096774193548388\"") !=
      std::string::npos);
  const std::string reduction = plot("cost-reduction");
  BOOST_TEST(reduction.find("data-group=\"small &lt;q4&gt;\" data-series=\"small &lt;q4&gt;\" data-value=\"111.29\"") !=
             std::string::npos);
  BOOST_TEST(reduction.find("<text class=\"bar-missing\" data-group=\"demo &amp; co\"") != std::string::npos);

  const std::string agreement = plot("agreement");
  BOOST_TEST(agreement.find("data-group=\"tfidf\" data-series=\"Spearman\" data-value=\"-0.5\"") != std::string::npos);
  BOOST_TEST(agreement.find("data-group=\"tfidf\" data-series=\"bottom-k Jaccard\" data-value=\"0.3333333333333333\"") !=
             std::string::npos);
  BOOST_TEST(html.find("<tr data-method=\"judge:scorer\"><td>judge:scorer</td><td class=\"num\">1.000</td>"
                       "<td class=\"num\">1.000</td><td class=\"num\">2</td></tr>") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(without_ratings_a_note_stands_for_the_agreement_plot) {
  const test_run run(false);
  const std::string html = render_report_html(run.input());
  BOOST_TEST(html.find("<p class=\"note\" data-note=\"agreement\">") != std::string::npos);
  BOOST_TEST(html.find("data-plot=\"agreement\"") == std::string::npos);
  BOOST_TEST(count(html, "<svg class=\"plot\"") == every_plot.size() - 1);
  BOOST_TEST(html.find("data-group=\"human\"") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(results_csv_quotes_as_rfc_4180_says) {
  std::vector<request_result> results = {result("a,b", 0, 1, nine_utc, 12.5)};
  results[0].response = "He said \"hi\",\nthen left";
  results[0].http_status = 200;
  results[0].overhead_us = 3.25;
  BOOST_TEST(
      results_csv(results) ==
      "key,kind,candidate,prompt,repetition,started_unix_ms,started_utc,latency_ms,ttft_ms,per_token_ms,tokens_in,"
      "tokens_out,response_chars,error,http_status,error_message,attempts,overhead_us,response\r\n"
      "\"evaluation/a,b/0/1\",evaluation,\"a,b\",0,1,1795683600000,2026-11-26 09:00:00 UTC,12.5,3.125,0.9375,20,11,"
      "23,none,200,,1,3.25,\"He said \"\"hi\"\",\nthen left\"\r\n");
  std::vector<request_result> unicode = {result("c", 0, 0, 0, 1)};
  unicode[0].response = "é→\xF0\x9F\x99\x82";  // 3 characters, 9 bytes
  BOOST_TEST(results_csv(unicode).find(",3,none,,,1,0,é→") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(scores_ratings_summary_and_agreement_csv) {
  const test_run run(true);
  BOOST_TEST(scores_csv(run.scores, run.results) ==
             "request_key,candidate,method,value,detail\r\n"
             "evaluation/small <q4>/0/0,small <q4>,tfidf,0.5,\r\n"
             "evaluation/small <q4>/0/1,small <q4>,tfidf,0.25,\r\n"
             "evaluation/small <q4>/1/0,small <q4>,tfidf,1,\r\n"
             "evaluation/demo & co/0/0,demo & co,tfidf,0.125,\r\n"
             "evaluation/demo & co/0/0,demo & co,bleu,0.0625,\r\n"
             "evaluation/demo & co/0/0,demo & co,judge:scorer,,Score: great\r\n"
             "evaluation/small <q4>/0/0,small <q4>,judge:scorer,0.7,\"clear, \"\"short\"\"\nScore: 7\"\r\n");
  BOOST_TEST(ratings_csv(run.ratings, run.results) ==
             "rater,request_key,candidate,score,at_unix_ms\r\n"
             "ann,evaluation/big/0/0,big,9,1795683600000\r\n"
             "ann,evaluation/small <q4>/0/0,small <q4>,5,1795683600001\r\n"
             "bob,evaluation/demo & co/0/0,demo & co,2,1795683600002\r\n");
  BOOST_TEST(
      summary_csv(run.plan, run.summary) ==
      "candidate,reference,requests,errors,errors_by_kind,resent,latency_p50_ms,latency_p90_ms,latency_p99_ms,"
      "ttft_p50_ms,per_token_ms_p50,tokens_in,tokens_out,tokens_per_s,cost_per_1k_tokens,cost_reduction,tfidf,bleu,"
      "embedding:hashing,embedding:minilm,sem_bleu:hashing,sem_bleu:minilm,judge:scorer,judge_parsed_fraction,"
      "human_mean,ratings,overhead_us_p50\r\n"
      "big,true,4,0,,0,250,370,397,62.5,18.75,80,44,124,0.017096774193548388,1,,,,,,,,0,0.9,1,0\r\n"
      "small <q4>,false,4,1,timeout:1,1,20,28,29.8,5,1.5,80,33,1130,0.00015362,111.29,0.5833333333333334,,,,,,0.7,1,"
      "0.5,1,41.5\r\n"
      "demo & co,false,4,0,,0,2.5,0,0,0,0,80,44,0,0,0,0.125,0.0625,,0.75,,,,0,0.2,1,0\r\n");
  BOOST_TEST(agreement_csv(run.summary) ==
             "method,k,bottom_k_jaccard,spearman\r\ntfidf,2,0.3333333333333333,-0.5\r\njudge:scorer,2,1,1\r\n");
}

BOOST_AUTO_TEST_CASE(one_json_line_per_candidate_as_issue_22_asks) {
  const test_run run(true);
  BOOST_TEST(evaluation_json_line(run.plan, run.summary.candidates[1]) ==
             R"({"bench":"evaluation","model":"small <q4>","requests":4,"errors":1,"latency_p50_ms":20,"ttft_p50_ms":5,)"
             R"("tokens_per_s":1130,"cost_per_1k_tokens":0.00015362,"tfidf":0.5833333333333334,"bleu":null,)"
             R"("embedding":null,"sem_bleu":null,"judge_parsed_fraction":1,"embedding:minilm":null,"sem_bleu:minilm":null,)"
             R"("judge:scorer":0.7,"human":0.5,"ratings":1,"resent":1,"overhead_us_p50":41.5})");
  // The reference: not scored against itself, so its scores are null.
  BOOST_TEST(evaluation_json_line(run.plan, run.summary.candidates[0]).find(
                 R"("tfidf":null,"bleu":null,"embedding":null,"sem_bleu":null,"judge_parsed_fraction":0,)") !=
             std::string::npos);
  // A plan without judges, embedders' methods or ratings: those are null.
  evaluation_plan plain = run.plan;
  plain.judges.clear();
  plain.scorers = {"tfidf", "bleu"};
  const test_run unrated(false);
  BOOST_TEST(evaluation_json_line(plain, unrated.summary.candidates[2]) ==
             R"({"bench":"evaluation","model":"demo & co","requests":4,"errors":0,"latency_p50_ms":2.5,"ttft_p50_ms":0,)"
             R"("tokens_per_s":0,"cost_per_1k_tokens":0,"tfidf":0.125,"bleu":0.0625,"embedding":null,"sem_bleu":null,)"
             R"("judge_parsed_fraction":null,"human":null,"ratings":0,"resent":0,"overhead_us_p50":0})");
  // Judges sharing a kind record under "judge:<kind>:<candidate>" (judge.hpp's
  // names); a scorer naming one embedder runs that embedder's method only.
  evaluation_plan two_judges = run.plan;
  two_judges.judges.push_back({.kind = judge_kind::scorer, .candidate = "demo & co"});
  two_judges.scorers = {"tfidf", "embedding:minilm"};
  candidate_summary judged = run.summary.candidates[2];
  judged.scores["judge:scorer:demo & co"] = 0.25;
  BOOST_TEST(evaluation_json_line(two_judges, judged).find(
                 R"("tfidf":0.125,"bleu":null,"embedding":null,"sem_bleu":null,"judge_parsed_fraction":0,)"
                 R"("embedding:minilm":0.75,"judge:scorer:big":null,"judge:scorer:demo & co":0.25,"human":0.2,)") !=
             std::string::npos);
  BOOST_TEST(evaluation_methods(two_judges, run.summary) ==
             (std::vector<std::string>{"tfidf", "embedding:minilm", "judge:scorer:big", "judge:scorer:demo & co", "bleu",
                                       "judge:scorer"}),
             boost::test_tools::per_element());

  // Every line parses as JSON.
  const std::string lines = evaluation_json_lines(run.plan, run.summary);
  BOOST_TEST(count(lines, "\n") == 3u);
  for (std::size_t begin = 0, end; (end = lines.find('\n', begin)) != std::string::npos; begin = end + 1)
    BOOST_TEST(boost::json::parse(lines.substr(begin, end - begin)).as_object().at("bench").as_string() == "evaluation");
}

BOOST_AUTO_TEST_CASE(writes_the_page_and_its_files_and_chromium_renders_every_plot) {
  const test_run run(true);
  test::temporary_directory directory;
  const fs::path report = write_report_files(directory / "out", run.input());
  BOOST_TEST(report == fs::absolute(directory / "out" / "report.html"));
  for (const char* file : {"report.html", "results.csv", "scores.csv", "ratings.csv", "summary.csv", "agreement.csv",
                           "evaluation.jsonl"})
    BOOST_TEST(fs::exists(directory / "out" / file), file);
  BOOST_TEST(test::read_bytes(report) == render_report_html(run.input()));
  BOOST_TEST(test::read_bytes(directory / "out" / "evaluation.jsonl") == evaluation_json_lines(run.plan, run.summary));
  BOOST_TEST(!fs::exists(directory / "out" / "report.html.partial"));

  const fs::path chromium = "/usr/bin/chromium";
  if (!fs::exists(chromium)) return test::skip_test("no " + chromium.string() + " to render the report");
  // (timeout: a Chromium that hangs fails the test instead of stopping the suite.)
  const std::string dom = output_of("timeout 120 " + chromium.string() +
                                    " --headless --no-sandbox --disable-gpu --disable-background-networking "
                                    "--disable-component-update --disable-sync --no-first-run --user-data-dir=" +
                                    (directory / "chromium").string() + " --dump-dom file://" + report.string() +
                                    " 2>/dev/null");
  BOOST_TEST_MESSAGE("chromium's DOM: " << dom.size() << " bytes");
  BOOST_TEST(dom.find("<h1>Evaluation report</h1>") != std::string::npos);
  for (const auto& plot : every_plot)
    BOOST_TEST(count(dom, "<svg class=\"plot\" data-plot=\"" + plot + "\"") == 1u, plot);
  BOOST_TEST(count(dom, "<svg class=\"plot\"") == every_plot.size());
  // The parser saw the boxes and bars as SVG elements, not as stray text.
  BOOST_TEST(count(dom, "<g class=\"box\"") == count(render_report_html(run.input()), "<g class=\"box\""));
  BOOST_TEST(dom.find("<tr data-candidate=\"small &lt;q4&gt;\">") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
