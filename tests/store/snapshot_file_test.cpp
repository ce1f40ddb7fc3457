// The snapshot file: what is written is read back exactly, and a file that
// is truncated, altered, of another kind or from a newer version is refused
// with the matching error, never half-read.
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "llmgate/store/snapshot_file.hpp"
#include "../file_bytes.hpp"
#include "../temporary_directory.hpp"

using llmgate::errc;
using llmgate::store::snapshot_reader;
using llmgate::store::snapshot_writer;

using llmgate::test::read_bytes;
using llmgate::test::write_bytes;

namespace {

constexpr llmgate::store::kind_tag kind = {'T', 'E', 'S', 'T'};

// A writer holding the sample every test reads back.
snapshot_writer sample_writer() {
  snapshot_writer out(kind, 2);
  out.write(std::uint64_t{0x0102030405060708});
  out.write(-1.5f);
  out.write_string("hello");
  const std::vector<float> values = {1.0f, 2.5f, -3.0f};
  out.write_array(std::span<const float>(values));
  return out;
}

std::filesystem::path write_sample(const llmgate::test::temporary_directory& dir) {
  snapshot_writer out = sample_writer();
  const auto path = dir / "sample.bin";
  BOOST_TEST_REQUIRE(!out.commit(path));
  return path;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(snapshot_file_test)

BOOST_AUTO_TEST_CASE(what_is_written_is_read_back) {
  llmgate::test::temporary_directory dir;
  const auto path = write_sample(dir);
  std::error_code ec;
  snapshot_reader in(path, kind, 2, ec);
  BOOST_TEST_REQUIRE(!ec, ec.message());
  BOOST_TEST(in.kind_version() == 2u);
  BOOST_TEST(in.read<std::uint64_t>() == 0x0102030405060708u);
  BOOST_TEST(in.read<float>() == -1.5f);
  BOOST_TEST(in.read_string() == "hello");
  std::vector<float> values(3);
  in.read_array(std::span<float>(values));
  BOOST_TEST(values == (std::vector<float>{1.0f, 2.5f, -3.0f}), boost::test_tools::per_element());
  BOOST_TEST(!in.finish());
}

BOOST_AUTO_TEST_CASE(commit_replaces_the_old_file_and_leaves_no_temporary_behind) {
  llmgate::test::temporary_directory dir;
  const auto path = dir / "file.bin";
  write_bytes(path, "old content");
  snapshot_writer out(kind, 1);
  out.write(std::uint32_t{7});
  BOOST_TEST_REQUIRE(!out.commit(path));
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++files;
  BOOST_TEST(files == 1u);
  BOOST_TEST(read_bytes(path) != "old content");
}

BOOST_AUTO_TEST_CASE(a_write_into_a_missing_directory_fails_cleanly) {
  llmgate::test::temporary_directory dir;
  snapshot_writer out(kind, 1);
  BOOST_TEST(out.commit(dir / "no/such/dir/file.bin") == errc::io_failure);
}

BOOST_AUTO_TEST_CASE(reading_past_the_payload_or_leaving_bytes_unread_is_corrupt) {
  llmgate::test::temporary_directory dir;
  const auto path = write_sample(dir);
  std::error_code ec;
  snapshot_reader short_read(path, kind, 2, ec);
  short_read.read<std::uint64_t>();
  BOOST_TEST(short_read.finish() == errc::corrupt_file);  // bytes left unread

  snapshot_reader long_read(path, kind, 2, ec);
  std::vector<float> too_many(1000);
  long_read.read_array(std::span<float>(too_many));
  BOOST_TEST(long_read.finish() == errc::corrupt_file);
}

BOOST_AUTO_TEST_CASE(every_truncation_is_refused) {
  llmgate::test::temporary_directory dir;
  const auto path = write_sample(dir);
  const std::string bytes = read_bytes(path);
  const auto cut = dir / "cut.bin";
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    write_bytes(cut, bytes.substr(0, size));
    std::error_code ec;
    snapshot_reader in(cut, kind, 2, ec);
    const bool refused = ec == errc::truncated_file || (size < 8 && ec == errc::not_a_llmgate_file);
    BOOST_TEST(refused, "size " << size << ": " << ec.message());
  }
}

BOOST_AUTO_TEST_CASE(every_changed_byte_is_refused) {
  llmgate::test::temporary_directory dir;
  const auto path = write_sample(dir);
  const std::string bytes = read_bytes(path);
  const auto changed = dir / "changed.bin";
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::string copy = bytes;
    copy[i] = static_cast<char>(copy[i] ^ 0x5a);
    write_bytes(changed, copy);
    std::error_code ec;
    snapshot_reader in(changed, kind, 2, ec);
    BOOST_TEST(bool(ec), "byte " << i << " changed but the file was accepted");
  }
}

BOOST_AUTO_TEST_CASE(other_kinds_newer_versions_and_foreign_files_are_refused) {
  llmgate::test::temporary_directory dir;
  const auto path = write_sample(dir);
  std::error_code ec;
  snapshot_reader other_kind(path, {'H', 'N', 'S', 'W'}, 2, ec);
  BOOST_TEST(ec == errc::wrong_kind_of_file);
  snapshot_reader older_reader(path, kind, 1, ec);
  BOOST_TEST(ec == errc::unsupported_version);
  write_bytes(dir / "foreign.bin", "GIF89a this is not ours at all");
  snapshot_reader foreign(dir / "foreign.bin", kind, 2, ec);
  BOOST_TEST(ec == errc::not_a_llmgate_file);
  snapshot_reader missing(dir / "missing.bin", kind, 2, ec);
  BOOST_TEST(ec == errc::io_failure);
  BOOST_TEST(ec.message().find("could not be read") != std::string::npos);
}

// Sealed bytes are exactly the file commit() writes, and read back, and
// refused, the same way (the Redis tier keeps snapshots as such bytes).
BOOST_AUTO_TEST_CASE(sealed_bytes_are_the_file_and_read_back_from_memory) {
  llmgate::test::temporary_directory dir;
  const auto path = write_sample(dir);
  const std::string bytes = sample_writer().seal();
  BOOST_TEST(bytes == read_bytes(path));

  std::error_code ec;
  snapshot_reader in(bytes, kind, 2, ec);
  BOOST_TEST_REQUIRE(!ec, ec.message());
  BOOST_TEST(in.read<std::uint64_t>() == 0x0102030405060708u);
  BOOST_TEST(in.read<float>() == -1.5f);
  BOOST_TEST(in.read_string() == "hello");
  std::vector<float> read_values(3);
  in.read_array(std::span<float>(read_values));
  BOOST_TEST(!in.finish());

  std::string altered = bytes;
  altered[altered.size() / 2] ^= 0x20;
  snapshot_reader(altered, kind, 2, ec);
  BOOST_TEST(ec == errc::checksum_mismatch);
  snapshot_reader(bytes.substr(0, bytes.size() - 1), kind, 2, ec);
  BOOST_TEST(ec == errc::truncated_file);
  snapshot_reader(bytes, {'O', 'T', 'H', 'R'}, 2, ec);
  BOOST_TEST(ec == errc::wrong_kind_of_file);
  snapshot_reader(bytes, kind, 1, ec);
  BOOST_TEST(ec == errc::unsupported_version);
  snapshot_reader(std::string("not a snapshot at all"), kind, 2, ec);
  BOOST_TEST(ec == errc::not_a_llmgate_file);
}

BOOST_AUTO_TEST_SUITE_END()
