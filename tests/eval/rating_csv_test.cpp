// A rater's batch as CSV for offline rating, and the filled file read back:
// RFC 4180 both ways, every error named by its line, nothing imported from
// a file with an error.
#include <boost/test/unit_test.hpp>

#include <unistd.h>  // getpid (POSIX)

#include <cstdint>     // std::int64_t
#include <filesystem>  // std::filesystem
#include <fstream>     // std::ofstream
#include <string>      // std::string
#include <vector>      // std::vector

#include "llmgate/eval/rate/rating_csv.hpp"  // export_rating_csv, import_rating_csv
#include "rating_fixture.hpp"                // record_rating_run, rating_key, rating_prompt

using llmgate::test::rating_key;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t at = 1'700'000'000'123;

/// One prompt's three answers, ann rating q8, big and q4's in that order.
struct csv_run {
  llmgate::run_store store = llmgate::run_store::in_memory();
  std::vector<llmgate::request_result> results = llmgate::test::record_rating_run(store, 1);
  llmgate::rating_catalog catalog{results, 255, llmgate::test::rating_prompt};
  std::string q8 = rating_key("small-local-q8", 0), big = rating_key("big-hosted-model", 0),
              q4 = rating_key("small-local-q4", 0);
  llmgate::rater_batch ann{"ann", {q8, big, q4}};

  std::string id(const std::string& key) const { return catalog.by_key(key)->id; }

  /// What import_rating_csv says of `text`, or "" when it imports.
  std::string refusal(const std::string& text, const llmgate::rater_batch& batch) {
    try {
      llmgate::import_rating_csv(store, catalog, batch, text, "ann.csv", at);
    } catch (const llmgate::error& e) {
      BOOST_TEST(e.code() == llmgate::errc::invalid_request);
      const std::string what = e.what();
      return what.substr(0, what.rfind(": invalid request"));
    }
    return "";
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(rating_csv_test)

BOOST_AUTO_TEST_CASE(a_batch_exports_as_rfc4180_with_the_scores_empty) {
  csv_run run;
  const std::string prompt = "\"Plan my day, list 0:\n- write, \"\"review\"\" & <ship>\"";
  BOOST_TEST(llmgate::export_rating_csv(run.catalog, run.ann, run.store.ratings()) ==
             "item_id,prompt,response,score\r\n" +
             run.id(run.q8) + "," + prompt + ",Answer 0.2: word word word word word,\r\n" +
             run.id(run.big) + "," + prompt + ",Answer 0.0: word,\r\n" +
             run.id(run.q4) + "," + prompt + ",Answer 0.1: word word word,\r\n");
  // What the rater rated already (on the page, say) is left out; so is another rater's rating.
  run.store.put_rating({.rater = "ann", .request_key = run.big, .score = 4, .at_unix_ms = 1});
  run.store.put_rating({.rater = "bob", .request_key = run.q4, .score = 4, .at_unix_ms = 1});
  BOOST_TEST(llmgate::export_rating_csv(run.catalog, run.ann, run.store.ratings()) ==
             "item_id,prompt,response,score\r\n" +
             run.id(run.q8) + "," + prompt + ",Answer 0.2: word word word word word,\r\n" +
             run.id(run.q4) + "," + prompt + ",Answer 0.1: word word word,\r\n");
}

BOOST_AUTO_TEST_CASE(a_filled_file_imports_its_scores_and_leaves_empty_ones_to_rate) {
  csv_run run;
  const std::string filled = "item_id,prompt,response,score\r\n" +
                             run.id(run.q8) + ",\"any, text\",\"it \"\"said\"\"\n\nthis\",7\r\n" +
                             run.id(run.big) + ",p,r,0\r\n" +
                             run.id(run.q4) + ",p,r,\r\n";
  BOOST_TEST(llmgate::import_rating_csv(run.store, run.catalog, run.ann, filled, "ann.csv", at) == 2u);
  const auto ratings = run.store.ratings();
  BOOST_REQUIRE(ratings.size() == 2u);
  BOOST_TEST(ratings[0].rater == "ann");
  BOOST_TEST(ratings[0].request_key == run.q8);
  BOOST_TEST(ratings[0].score == 7);
  BOOST_TEST(ratings[0].at_unix_ms == at);
  BOOST_TEST(ratings[1].rater == "ann");
  BOOST_TEST(ratings[1].request_key == run.big);
  BOOST_TEST(ratings[1].score == 0);
  BOOST_TEST(ratings[1].at_unix_ms == at);
  // The next export holds only what is left.
  BOOST_TEST(llmgate::export_rating_csv(run.catalog, run.ann, run.store.ratings()) ==
             "item_id,prompt,response,score\r\n" + run.id(run.q4) +
                 ",\"Plan my day, list 0:\n- write, \"\"review\"\" & <ship>\",Answer 0.1: word word word,\r\n");
}

BOOST_AUTO_TEST_CASE(a_spreadsheets_habits_are_accepted) {
  csv_run run;
  const std::string filled = "\xEF\xBB\xBFitem_id,prompt,response,score\n" +
                             run.id(run.q8) + ",p,r, 9 \n\n" +
                             run.id(run.q4) + ",p,r,10";
  BOOST_TEST(llmgate::import_rating_csv(run.store, run.catalog, run.ann, filled, "ann.csv", at) == 2u);
  const auto ratings = run.store.ratings();
  BOOST_REQUIRE(ratings.size() == 2u);
  BOOST_TEST(ratings[0].score == 9);
  BOOST_TEST(ratings[1].request_key == run.q4);
  BOOST_TEST(ratings[1].score == 10);
}

BOOST_AUTO_TEST_CASE(every_error_is_named_by_its_line_and_nothing_is_imported) {
  csv_run run;
  const std::string text = "item_id,prompt,response,score\r\n" +
                           run.id(run.q8) + ",p,r,6\r\n" +            // right, but not imported
                           run.id(run.big) + ",p,r,11\r\n" +
                           run.id(run.big) + ",p,r\r\n" +
                           "deadbeefdeadbeef,p,r,3\r\n" +
                           run.id(run.q4) + ",\"two\r\nlines\",r,7.5\r\n" +  // lines 6-7
                           run.id(run.q8) + ",p,r,5\r\n" +
                           run.id(run.q8) + ",p\"q,r,1\r\n" +
                           run.id(run.q8) + ",p,r,-1\r\n";
  BOOST_TEST(run.refusal(text, run.ann) ==
             "rating CSV ann.csv: nothing imported:\n"
             "  line 3: score '11' is not a whole number from 0 to 10\n"
             "  line 4: 3 fields, not 4 (item_id, prompt, response, score)\n"
             "  line 5: item id 'deadbeefdeadbeef' is not in the batch of rater ann\n"
             "  line 6: score '7.5' is not a whole number from 0 to 10\n"
             "  line 8: item id '" + run.id(run.q8) + "' comes twice\n"
             "  line 9: a quote inside a field that does not start with one\n"
             "  line 10: item id '" + run.id(run.q8) + "' comes twice");
  BOOST_TEST(run.store.ratings().empty());
}

BOOST_AUTO_TEST_CASE(broken_files_are_refused) {
  csv_run run;
  const std::string header = "item_id,prompt,response,score\r\n";
  BOOST_TEST(run.refusal("", run.ann) ==
             "rating CSV ann.csv: nothing imported:\n  line 1: the header item_id,prompt,response,score is missing");
  BOOST_TEST(run.refusal("id,prompt,response,score\r\n", run.ann) ==
             "rating CSV ann.csv: nothing imported:\n"
             "  line 1: the header is 'id,prompt,response,score', not item_id,prompt,response,score");
  BOOST_TEST(run.refusal(header + run.id(run.q8) + ",p,r,1\r\n" + run.id(run.big) + ",\"open,r,1\r\n", run.ann) ==
             "rating CSV ann.csv: nothing imported:\n  line 3: a quoted field is not closed");
  BOOST_TEST(run.refusal(header + run.id(run.q8) + ",\"p\"x,r,1\r\n", run.ann) ==
             "rating CSV ann.csv: nothing imported:\n  line 2: characters after a quoted field's closing quote");
  BOOST_TEST(run.refusal(header + run.id(run.q8) + ",p,r,010\r\n" + run.id(run.big) + ",p,r,x\r\n", run.ann) ==
             "rating CSV ann.csv: nothing imported:\n"
             "  line 2: score '010' is not a whole number from 0 to 10\n"
             "  line 3: score 'x' is not a whole number from 0 to 10");
  // An answer of the run that is another rater's.
  const llmgate::rater_batch bob{"bob", {run.q4}};
  BOOST_TEST(run.refusal(header + run.id(run.q8) + ",p,r,1\r\n", bob) ==
             "rating CSV ann.csv: nothing imported:\n  line 2: item id '" + run.id(run.q8) +
                 "' is not in the batch of rater bob");
  BOOST_TEST(run.store.ratings().empty());
}

BOOST_AUTO_TEST_CASE(a_file_is_read_from_disk_as_its_raters_or_refused_by_name) {
  csv_run run;
  const std::vector<llmgate::rater_batch> batches = {{"ann", {run.q8, run.big}}, {"bob", {run.q4}}, {"cy", {run.q4}}};
  const fs::path dir = fs::temp_directory_path() / ("rating_csv_test." + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return dir / name;
  };
  const std::string header = "item_id,prompt,response,score\r\n";
  const auto refusal = [&](const fs::path& file, std::string_view rater) -> std::string {
    try {
      llmgate::import_rating_csv_file(run.store, run.catalog, batches, file, rater, at);
    } catch (const llmgate::error& e) {
      const std::string what = e.what();
      return what.substr(0, what.rfind(": "));
    }
    return "";
  };

  // Whose file it is, told by its items.
  const auto ann = write("ann.csv", header + run.id(run.q8) + ",p,r,8\r\n" + run.id(run.big) + ",p,r,\r\n");
  BOOST_TEST(llmgate::import_rating_csv_file(run.store, run.catalog, batches, ann, "", at) == 1u);
  BOOST_REQUIRE(run.store.ratings().size() == 1u);
  BOOST_TEST(run.store.ratings()[0].rater == "ann");
  BOOST_TEST(run.store.ratings()[0].score == 8);

  // q4's answer is both bob's and cy's: the rater must be named.
  const auto shared = write("shared.csv", header + run.id(run.q4) + ",p,r,2\r\n");
  BOOST_TEST(refusal(shared, "") == "rating CSV " + shared.string() + ": its items are in the batches of bob cy: name the rater");
  BOOST_TEST(llmgate::import_rating_csv_file(run.store, run.catalog, batches, shared, "cy", at) == 1u);
  BOOST_TEST(run.store.ratings()[1].rater == "cy");
  BOOST_TEST(refusal(shared, "dan") == "rating CSV " + shared.string() + ": there is no rater 'dan'");
  const auto mixed = write("mixed.csv", header + run.id(run.q4) + ",p,r,2\r\n" + run.id(run.q8) + ",p,r,2\r\n");
  BOOST_TEST(refusal(mixed, "") == "rating CSV " + mixed.string() + ": its items are not all in one rater's batch");
  BOOST_TEST(run.store.ratings().size() == 2u);

  try {
    llmgate::import_rating_csv_file(run.store, run.catalog, batches, dir / "missing.csv", "ann", at);
    BOOST_ERROR("a missing file was read");
  } catch (const llmgate::error& e) {
    BOOST_TEST(e.code() == llmgate::errc::io_failure);
    BOOST_TEST(std::string(e.what()).find((dir / "missing.csv").string() + " cannot be read") != std::string::npos);
  }
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
