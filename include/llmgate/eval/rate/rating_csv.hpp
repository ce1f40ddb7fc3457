// rating_csv: a rater's batch as a CSV file to rate offline, and the filled
// file read back into the run store.
//
// The file (RFC 4180: CRLF line ends, a field quoted when it holds a comma,
// a quote or a line end, quotes doubled inside) has the header
// item_id,prompt,response,score and one row per answer the rater has not
// rated yet, in the order of the batch, the score empty. The rater fills
// scores 0 to 10 (whole numbers); a row left empty is not rated yet.
//
// Import is all or nothing: every error in the file is reported, each
// naming its line, and nothing is stored unless the whole file is right.
// Spreadsheets' habits are accepted: a UTF-8 byte order mark, LF line ends,
// spaces around a score, blank lines. The file need not say whose it is:
// its items tell, unless an answer in it is rated by several raters.
#pragma once

#include <algorithm>    // std::stable_sort
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t
#include <filesystem>   // std::filesystem::path
#include <fstream>      // std::ifstream
#include <iterator>     // std::istreambuf_iterator
#include <set>          // std::set
#include <span>         // std::span
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include "llmgate/detail/csv_records.hpp"           // parse_csv
#include "llmgate/error.hpp"                        // llmgate::error, errc
#include "llmgate/eval/detail/report_text.hpp"      // report_detail::csv_row
#include "llmgate/eval/rate/rating_assignment.hpp"  // rating_catalog, rater_batch
#include "llmgate/eval/run/run_records.hpp"         // rating_record
#include "llmgate/eval/run/run_store.hpp"           // run_store

namespace llmgate::inline v0 {


/// The CSV header line's fields.
inline constexpr std::string_view rating_csv_header = "item_id,prompt,response,score";

/// The answers of `batch` that its rater has not rated in `ratings`, as a
/// CSV file to fill.
inline std::string export_rating_csv(const rating_catalog& catalog, const rater_batch& batch,
                                     std::span<const rating_record> ratings) {
  std::set<std::string_view> rated;
  for (const auto& r : ratings)
    if (r.rater == batch.rater) rated.insert(r.request_key);
  std::string out(rating_csv_header);
  out += "\r\n";
  for (const auto& key : batch.request_keys) {
    const rating_item* item = catalog.by_key(key);
    if (!item || rated.contains(key)) continue;
    const std::string fields[] = {item->id, item->prompt, item->response, ""};
    out += report_detail::csv_row(fields);
  }
  return out;
}

/// Reads a filled CSV file (`text`; `name` names it in errors) into the
/// store as `batch.rater`'s ratings, all at `at_unix_ms`. Returns how many
/// it stored. Throws llmgate::error (invalid_request), naming the file and
/// every wrong line, and stores nothing, when the header is not
/// rating_csv_header, a row has other than 4 fields, an item id is not in
/// the batch or comes twice, or a score is not a whole number from 0 to 10.
inline std::size_t import_rating_csv(run_store& store, const rating_catalog& catalog, const rater_batch& batch,
                                     std::string_view text, std::string_view name, std::int64_t at_unix_ms) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<detail::csv_error> errors;
  const auto records = detail::parse_csv(text, errors);
  std::vector<rating_record> ratings;
  if (records.empty() || records.front().line != 1) {
    errors.push_back({1, "the header " + std::string(rating_csv_header) + " is missing"});
  } else {
    const auto& header = records.front().fields;
    std::string joined;
    for (std::size_t f = 0; f < header.size(); ++f) joined += (f ? "," : "") + header[f];
    if (joined != rating_csv_header)
      errors.push_back({1, "the header is '" + joined + "', not " + std::string(rating_csv_header)});
  }
  const std::set<std::string_view> in_batch(batch.request_keys.begin(), batch.request_keys.end());
  std::set<std::string_view> seen;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const auto& [line, fields] = records[r];
    if (fields.size() != 4) {
      errors.push_back({line, std::to_string(fields.size()) + " fields, not 4 (item_id, prompt, response, score)"});
      continue;
    }
    const rating_item* item = catalog.by_id(fields[0]);
    if (!item || !in_batch.contains(item->request_key)) {
      errors.push_back({line, "item id '" + fields[0] + "' is not in the batch of rater " + batch.rater});
      continue;
    }
    if (!seen.insert(item->id).second) {
      errors.push_back({line, "item id '" + fields[0] + "' comes twice"});
      continue;
    }
    std::string_view score = fields[3];
    while (!score.empty() && (score.front() == ' ' || score.front() == '\t')) score.remove_prefix(1);
    while (!score.empty() && (score.back() == ' ' || score.back() == '\t')) score.remove_suffix(1);
    if (score.empty()) continue;  // not rated yet
    int value = 0;
    bool number = score.size() <= 2;
    for (const char c : score) {
      number = number && c >= '0' && c <= '9';
      value = value * 10 + (c - '0');
    }
    if (!number || value > 10) {
      errors.push_back({line, "score '" + std::string(score) + "' is not a whole number from 0 to 10"});
      continue;
    }
    ratings.push_back({batch.rater, item->request_key, value, at_unix_ms});
  }
  if (!errors.empty()) {
    std::stable_sort(errors.begin(), errors.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
    std::string message = "rating CSV " + std::string(name) + ": nothing imported:";
    for (const auto& e : errors) message += "\n  line " + std::to_string(e.line) + ": " + e.what;
    throw error(errc::invalid_request, message);
  }
  for (const auto& rating : ratings) store.put_rating(rating);
  return ratings.size();
}

/// The batch a filled CSV file (`text`; `name` names it in errors) was
/// exported from: the one batch holding every item the file lists, so that
/// a file can be imported without saying whose it is. Throws llmgate::error
/// (invalid_request) when no batch or more than one holds them all (an
/// answer rated by several raters: the rater must then be named).
inline const rater_batch& rating_csv_batch(const rating_catalog& catalog, std::span<const rater_batch> batches,
                                           std::string_view text, std::string_view name) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<detail::csv_error> ignored;  // import_rating_csv reports them
  const auto records = detail::parse_csv(text, ignored);
  std::vector<std::string_view> keys;
  for (std::size_t r = 1; r < records.size(); ++r)
    if (const rating_item* item = catalog.by_id(records[r].fields.front())) keys.push_back(item->request_key);
  std::vector<const rater_batch*> holding;
  for (const auto& batch : batches) {
    const std::set<std::string_view> in_batch(batch.request_keys.begin(), batch.request_keys.end());
    bool all = !keys.empty();
    for (const auto key : keys) all = all && in_batch.contains(key);
    if (all) holding.push_back(&batch);
  }
  if (holding.size() == 1) return *holding.front();
  std::string message = "rating CSV " + std::string(name) + ": ";
  if (holding.empty()) {
    message += "its items are not all in one rater's batch";
  } else {
    message += "its items are in the batches of";
    for (const auto* batch : holding) message += " " + batch->rater;
    message += ": name the rater";
  }
  throw error(errc::invalid_request, message);
}

/// Reads the file at `path` and imports it (import_rating_csv) as the
/// ratings of `rater`, or, when `rater` is empty, of the rater whose batch
/// holds its items (rating_csv_batch). Throws llmgate::error: io_failure
/// when it cannot be read; invalid_request when `rater` has no batch, and
/// as those two do.
inline std::size_t import_rating_csv_file(run_store& store, const rating_catalog& catalog,
                                          std::span<const rater_batch> batches, const std::filesystem::path& path,
                                          std::string_view rater, std::int64_t at_unix_ms) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error(errc::io_failure, "rating CSV " + path.string() + " cannot be read");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw error(errc::io_failure, "rating CSV " + path.string() + " cannot be read");
  if (rater.empty())
    return import_rating_csv(store, catalog, rating_csv_batch(catalog, batches, text, path.string()), text, path.string(),
                             at_unix_ms);
  for (const auto& batch : batches)
    if (batch.rater == rater) return import_rating_csv(store, catalog, batch, text, path.string(), at_unix_ms);
  throw error(errc::invalid_request, "rating CSV " + path.string() + ": there is no rater '" + std::string(rater) + "'");
}

}  // namespace llmgate::inline v0
