// gguf_info: the header of the shared stories260K GGUF file read to the
// values an independent reader (a few lines of Python's struct module over
// the same file) finds, GGUF files written here with every metadata type
// read back exactly, and truncated, altered and inconsistent files refused
// with an error naming the offset, never half-read.
#include <cstdint>      // std::uint32_t, std::uint64_t
#include <filesystem>   // std::filesystem::path, exists
#include <random>       // std::mt19937
#include <sstream>      // std::istringstream
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/test/unit_test.hpp>  // BOOST_AUTO_TEST_SUITE, BOOST_TEST

#include "../file_bytes.hpp"                // read_bytes, write_bytes
#include "../skip_test.hpp"                 // skip_test
#include "../temporary_directory.hpp"       // temporary_directory
#include "llmgate/eval/plan/gguf_info.hpp"  // read_gguf_info, gguf_info, gguf_file_type_name, served_model_from_gguf

namespace {

namespace fs = std::filesystem;
using llmgate::errc;
using llmgate::gguf_info;

const fs::path stories = fs::path(LLMGATE_SHARED_DATA_DIR) / "models" / "stories260K" / "stories260K-ctx512.gguf";

gguf_info read_bytes_as_gguf(const std::string& bytes) {
  std::istringstream in(bytes);
  return llmgate::read_gguf_info(in, bytes.size(), "test.gguf");
}

/// The errc a read of `bytes` throws; {} when it reads.
std::error_code refusal(const std::string& bytes, std::string* message = nullptr) {
  try {
    read_bytes_as_gguf(bytes);
  } catch (const llmgate::error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return {};
}

/// Writes GGUF bytes field by field (little-endian).
struct gguf_writer {
  std::string bytes;

  gguf_writer& raw(std::uint64_t value, int width) {
    for (int i = 0; i < width; ++i) bytes += static_cast<char>((value >> (8 * i)) & 0xff);
    return *this;
  }
  gguf_writer& u32(std::uint32_t value) { return raw(value, 4); }
  gguf_writer& u64(std::uint64_t value) { return raw(value, 8); }
  gguf_writer& str(std::string_view text) {
    u64(text.size());
    bytes += text;
    return *this;
  }
  gguf_writer& header(std::uint64_t tensors, std::uint64_t kvs, std::uint32_t version = 3) {
    bytes += "GGUF";
    return u32(version).u64(tensors).u64(kvs);
  }
  gguf_writer& key(std::string_view name, std::uint32_t type) { return str(name).u32(type); }
  gguf_writer& tensor(std::string_view name, std::initializer_list<std::uint64_t> dims, std::uint32_t type,
                      std::uint64_t offset) {
    str(name).u32(static_cast<std::uint32_t>(dims.size()));
    for (const auto d : dims) u64(d);
    return u32(type).u64(offset);
  }
  gguf_writer& pad_to(std::size_t alignment) {
    while (bytes.size() % alignment) bytes += '\0';
    return *this;
  }
  gguf_writer& zeros(std::size_t count) {
    bytes.append(count, '\0');
    return *this;
  }
};

/// A file with every metadata type, general.file_type 15 (Q4_K_M),
/// alignment 64 and two tensors: Q4_K [256, 2] (2 blocks of 144 bytes) at
/// 0 and F16 [3] (6 bytes) at 320.
std::string every_type_file() {
  gguf_writer w;
  w.header(2, 18);
  w.key("general.architecture", 8).str("llama");
  w.key("general.name", 8).str("tiny <test> & \"model\"");
  w.key("general.file_type", 4).u32(15);
  w.key("general.alignment", 4).u32(64);
  w.key("t.u8", 0).raw(200, 1);
  w.key("t.i8", 1).raw(0xfe, 1);
  w.key("t.u16", 2).raw(65535, 2);
  w.key("t.i16", 3).raw(0x8000, 2);
  w.key("t.u32", 4).u32(4000000000u);
  w.key("t.i32", 5).u32(0xffffffffu);
  w.key("t.f32", 6).u32(0x3fc00000u);  // 1.5f
  w.key("t.bool", 7).raw(1, 1);
  w.key("t.u64", 10).u64(18446744073709551615ull);
  w.key("t.i64", 11).u64(0x8000000000000000ull);
  w.key("t.f64", 12).u64(0x3fb999999999999aull);  // 0.1
  w.key("t.long", 8).str(std::string(300, 'x'));
  w.key("t.strings", 9).u32(8).u64(2).str("a").str("bc");
  w.key("t.nested", 9).u32(9).u64(2);
  w.u32(0).u64(3).raw(1, 1).raw(2, 1).raw(3, 1);  // array of 3 uint8
  w.u32(5).u64(1).u32(7);                         // array of 1 int32
  w.tensor("blk.0.weight", {256, 2}, 12, 0);
  w.tensor("blk.0.norm", {3}, 1, 320);
  w.pad_to(64);
  w.zeros(326);
  return w.bytes;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gguf_info_test)

BOOST_AUTO_TEST_CASE(reads_the_stories260K_header) {
  if (!fs::exists(stories)) return llmgate::test::skip_test("no model at " + stories.string());
  // Python's struct over the file: GGUF v3, 48 tensors (all F32, type 0),
  // 19 metadata keys without general.file_type, 292,800 elements, the
  // header ending at 14,152, the data at 14,176 (32-aligned) and the last
  // tensor's data ending at the file's last byte.
  const gguf_info info = llmgate::read_gguf_info(stories);
  BOOST_TEST(info.version == 3u);
  BOOST_TEST(info.architecture == "llama");
  BOOST_TEST(info.name == "llama");
  BOOST_TEST(info.file_type == "F32");
  BOOST_TEST(info.file_type_guessed);
  BOOST_TEST(info.tensors == 48u);
  BOOST_TEST(info.parameters == 292800u);
  BOOST_TEST(info.file_bytes == 1185376u);
  BOOST_TEST(info.alignment == 32u);
  BOOST_TEST(info.data_offset == 14176u);
  BOOST_TEST(info.metadata.size() == 19u);
  BOOST_TEST(info.metadata.at("llama.context_length") == "512");
  BOOST_TEST(info.metadata.at("llama.embedding_length") == "64");
  BOOST_TEST(info.metadata.at("llama.block_count") == "5");
  BOOST_TEST(info.metadata.at("llama.attention.layer_norm_rms_epsilon") == "1e-05");
  BOOST_TEST(info.metadata.at("tokenizer.ggml.tokens") == "array of 512 string");
  BOOST_TEST(info.metadata.at("tokenizer.ggml.scores") == "array of 512 float32");
  BOOST_TEST(info.metadata.at("tokenizer.ggml.seperator_token_id") == "4294967295");

  const llmgate::served_model_info served = llmgate::served_model_from_gguf("stories", stories);
  BOOST_TEST(served.candidate == "stories");
  BOOST_TEST(served.path == stories.string());
  BOOST_TEST(served.file_bytes == 1185376u);
  BOOST_TEST(served.quantization == "F32");
  BOOST_TEST(served.parameters == 292800u);
  BOOST_TEST(served.rss_bytes == 0u);
}

BOOST_AUTO_TEST_CASE(refuses_every_truncation_of_the_stories260K_file) {
  if (!fs::exists(stories)) return llmgate::test::skip_test("no model at " + stories.string());
  const std::string bytes = llmgate::test::read_bytes(stories);
  BOOST_REQUIRE(bytes.size() == 1185376u);
  // Every cut through the header and the padding, and some through the data.
  std::size_t refused = 0, cuts = 0;
  auto cut = [&](std::size_t length) {
    ++cuts;
    if (refusal(bytes.substr(0, length)) == errc::truncated_file) ++refused;
  };
  for (std::size_t length = 0; length <= 14177; ++length) cut(length);
  for (const std::size_t length : {20000u, 592688u, 1185375u}) cut(length);
  BOOST_TEST(refused == cuts);

  std::string message;
  refusal(bytes.substr(0, 1000), &message);
  BOOST_TEST(message ==
             "GGUF file test.gguf: ends at byte 1000, before the tokenizer.ggml.tokens's 512 elements at offset 61 "
             "(4096 bytes): "
             "file is truncated");
  refusal(bytes.substr(0, 1185375), &message);
  BOOST_TEST(message == "GGUF file test.gguf: ends at byte 1185375, before the data of tensor 47 at offset 1185120 (256 "
                        "bytes): file is truncated");
}

BOOST_AUTO_TEST_CASE(an_altered_byte_anywhere_in_the_header_is_read_or_refused_never_more) {
  if (!fs::exists(stories)) return llmgate::test::skip_test("no model at " + stories.string());
  const std::string bytes = llmgate::test::read_bytes(stories);
  // The reader never reads past the header (14,176 bytes), so each altered
  // copy is of the header alone, read as the start of a file of full size.
  const std::string header = bytes.substr(0, 14176);
  std::size_t read = 0, refused = 0;
  for (std::size_t at = 0; at < header.size(); ++at) {
    std::string altered = header;
    altered[at] = static_cast<char>(altered[at] ^ 0xff);
    try {
      std::istringstream in(altered);
      llmgate::read_gguf_info(in, bytes.size(), "altered.gguf");
      ++read;
    } catch (const llmgate::error&) {
      ++refused;
    }
  }
  BOOST_TEST(read + refused == 14176u);
  // Text bytes (token strings, names) read as other text; lengths, counts,
  // types and offsets do not.
  BOOST_TEST(refused > 0u);
  BOOST_TEST(read > 0u);
  std::string altered = bytes;
  altered[0] = 'X';
  BOOST_TEST(refusal(altered) == errc::wrong_kind_of_file);
}

BOOST_AUTO_TEST_CASE(reads_every_metadata_type) {
  const gguf_info info = read_bytes_as_gguf(every_type_file());
  BOOST_TEST(info.version == 3u);
  BOOST_TEST(info.architecture == "llama");
  BOOST_TEST(info.name == "tiny <test> & \"model\"");
  BOOST_TEST(info.file_type == "Q4_K_M");
  BOOST_TEST(!info.file_type_guessed);
  BOOST_TEST(info.tensors == 2u);
  BOOST_TEST(info.parameters == 515u);
  BOOST_TEST(info.alignment == 64u);
  BOOST_TEST(info.data_offset % 64 == 0u);
  BOOST_TEST(info.file_bytes == info.data_offset + 326);
  const auto& m = info.metadata;
  BOOST_TEST(m.size() == 18u);
  BOOST_TEST(m.at("general.file_type") == "15");
  BOOST_TEST(m.at("t.u8") == "200");
  BOOST_TEST(m.at("t.i8") == "-2");
  BOOST_TEST(m.at("t.u16") == "65535");
  BOOST_TEST(m.at("t.i16") == "-32768");
  BOOST_TEST(m.at("t.u32") == "4000000000");
  BOOST_TEST(m.at("t.i32") == "-1");
  BOOST_TEST(m.at("t.f32") == "1.5");
  BOOST_TEST(m.at("t.bool") == "true");
  BOOST_TEST(m.at("t.u64") == "18446744073709551615");
  BOOST_TEST(m.at("t.i64") == "-9223372036854775808");
  BOOST_TEST(m.at("t.f64") == "0.1");
  BOOST_TEST(m.at("t.long") == std::string(256, 'x') + "... (300 bytes)");
  BOOST_TEST(m.at("t.strings") == "array of 2 string");
  BOOST_TEST(m.at("t.nested") == "array of 2 array");
}

BOOST_AUTO_TEST_CASE(random_damage_is_read_or_refused_never_more) {
  // Deterministic: the same 20,000 damaged copies every run.
  const std::string good = every_type_file();
  std::mt19937 rng(22);
  std::size_t refused = 0;
  for (int copy = 0; copy < 20000; ++copy) {
    std::string bytes = good;
    const int changes = 1 + static_cast<int>(rng() % 4);
    for (int c = 0; c < changes; ++c) bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xff);
    if (rng() % 8 == 0) bytes.resize(rng() % bytes.size());
    try {
      read_bytes_as_gguf(bytes);
    } catch (const llmgate::error&) {
      ++refused;
    }
  }
  BOOST_TEST(refused > 0u);
}

BOOST_AUTO_TEST_CASE(names_every_file_type_as_llama_cpp_does) {
  BOOST_TEST(llmgate::gguf_file_type_name(0) == "F32");
  BOOST_TEST(llmgate::gguf_file_type_name(1) == "F16");
  BOOST_TEST(llmgate::gguf_file_type_name(7) == "Q8_0");
  BOOST_TEST(llmgate::gguf_file_type_name(15) == "Q4_K_M");
  BOOST_TEST(llmgate::gguf_file_type_name(18) == "Q6_K");
  BOOST_TEST(llmgate::gguf_file_type_name(32) == "BF16");
  BOOST_TEST(llmgate::gguf_file_type_name(38) == "MXFP4_MOE");
  BOOST_TEST(llmgate::gguf_file_type_name(5) == "");
  BOOST_TEST(llmgate::gguf_file_type_name(39) == "");

  // Without general.file_type: the type of most tensors, as llama.cpp guesses.
  gguf_writer w;
  w.header(3, 0);
  w.tensor("a", {256}, 12, 0).tensor("b", {256}, 12, 160).tensor("c", {4}, 0, 320);
  w.pad_to(32).zeros(336);
  const gguf_info guessed = read_bytes_as_gguf(w.bytes);
  BOOST_TEST(guessed.file_type == "Q4_K_M");
  BOOST_TEST(guessed.file_type_guessed);
  BOOST_TEST(guessed.parameters == 516u);

  gguf_writer unknown;
  unknown.header(0, 1).key("general.file_type", 4).u32(1000);
  BOOST_TEST(read_bytes_as_gguf(unknown.bytes).file_type == "file type 1000");
}

BOOST_AUTO_TEST_CASE(refuses_inconsistent_headers_naming_the_offset) {
  struct bad_file {
    std::string name;
    std::string bytes;
    errc expected;
    std::string message;
  };
  const auto one_key = [](std::string_view key, std::uint32_t type) {
    gguf_writer w;
    w.header(0, 1).key(key, type);
    return w;
  };
  std::vector<bad_file> files;
  files.push_back({"GGUF v1", gguf_writer().header(0, 0, 1).bytes, errc::unsupported_version,
                   "GGUF file test.gguf: version 1 at offset 4 (this build reads 2 and 3): file format version is not "
                   "supported by this build"});
  files.push_back({"GGUF v4", gguf_writer().header(0, 0, 4).bytes, errc::unsupported_version, ""});
  files.push_back({"no magic", "GGML" + gguf_writer().u32(3).u64(0).u64(0).bytes, errc::wrong_kind_of_file, ""});
  files.push_back({"2^63 keys", gguf_writer().header(0, 1ull << 63).bytes, errc::truncated_file,
                   "GGUF file test.gguf: ends at byte 24, before the metadata key 0 at offset 24 (8 bytes): file is "
                   "truncated"});
  files.push_back({"a key's length past the end", gguf_writer().header(0, 1).u64(1ull << 40).bytes, errc::truncated_file,
                   "GGUF file test.gguf: ends at byte 32, before the metadata key 0 at offset 24 (1099511627784 "
                   "bytes): file is truncated"});
  files.push_back({"a 70000-byte key", gguf_writer().header(0, 1).str(std::string(70000, 'k')).u32(4).u32(1).bytes,
                   errc::corrupt_file,
                   "GGUF file test.gguf: metadata key 0 is longer than 65535 bytes at offset 24: file content is "
                   "inconsistent (corrupt file)"});
  files.push_back({"value type 13", one_key("k", 13).u32(0).bytes, errc::corrupt_file,
                   "GGUF file test.gguf: k: unknown value type 13 at offset 33: file content is inconsistent (corrupt "
                   "file)"});
  files.push_back({"array of type 99", one_key("k", 9).u32(99).u64(0).bytes, errc::corrupt_file, ""});
  files.push_back({"2^60 array elements", one_key("k", 9).u32(4).u64(1ull << 60).u32(1).bytes, errc::truncated_file,
                   "GGUF file test.gguf: ends at byte 53, before the k's 1152921504606846976 elements at offset 41 "
                   "(4611686018427387904 bytes): file is truncated"});
  files.push_back({"arrays nested 5 deep", [&] {
                     gguf_writer w = one_key("k", 9);
                     for (int i = 0; i < 5; ++i) w.u32(9).u64(1);
                     return w.u32(0).u64(0).bytes;
                   }(),
                   errc::corrupt_file, ""});
  files.push_back({"alignment 3", one_key("general.alignment", 4).u32(3).bytes, errc::corrupt_file,
                   "GGUF file test.gguf: general.alignment 3 is not a power of two at offset 49: file content is "
                   "inconsistent (corrupt file)"});
  files.push_back({"file type as text", one_key("general.file_type", 8).str("Q4").bytes, errc::corrupt_file, ""});
  files.push_back({"a key twice", [] {
                     gguf_writer w;
                     w.header(0, 2).key("k", 4).u32(1).key("k", 4).u32(2);
                     return w.bytes;
                   }(),
                   errc::corrupt_file, ""});
  files.push_back({"5 dimensions",
                   gguf_writer().header(1, 0).tensor("t", {1, 1, 1, 1, 1}, 0, 0).pad_to(32).zeros(4).bytes,
                   errc::corrupt_file,
                   "GGUF file test.gguf: tensor 0 has 5 dimensions (1 to 4) at offset 33: file content is inconsistent "
                   "(corrupt file)"});
  files.push_back(
      {"0 dimensions", gguf_writer().header(1, 0).str("t").u32(0).u32(0).u64(0).bytes, errc::corrupt_file, ""});
  files.push_back({"elements overflow", gguf_writer().header(1, 0).tensor("t", {1ull << 32, 1ull << 32}, 0, 0).bytes,
                   errc::corrupt_file, ""});
  files.push_back({"a tensor name twice",
                   gguf_writer().header(2, 0).tensor("t", {1}, 0, 0).tensor("t", {1}, 0, 32).pad_to(32).zeros(36).bytes,
                   errc::corrupt_file, ""});
  files.push_back({"unaligned data", gguf_writer().header(1, 0).tensor("t", {1}, 0, 4).pad_to(32).zeros(8).bytes,
                   errc::corrupt_file, ""});
  files.push_back({"partial block", gguf_writer().header(1, 0).tensor("t", {100}, 12, 0).pad_to(32).zeros(144).bytes,
                   errc::corrupt_file, ""});
  files.push_back({"data past the end", gguf_writer().header(1, 0).tensor("t", {8}, 0, 0).pad_to(32).zeros(31).bytes,
                   errc::truncated_file,
                   "GGUF file test.gguf: ends at byte 95, before the data of tensor 0 at offset 64 (32 bytes): file "
                   "is truncated"});
  files.push_back({"data offset past the end",
                   gguf_writer().header(1, 0).tensor("t", {1}, 0, 1ull << 62).pad_to(32).zeros(4).bytes,
                   errc::truncated_file, ""});
  for (const auto& file : files) {
    BOOST_TEST_CONTEXT(file.name) {
      std::string message;
      BOOST_TEST(refusal(file.bytes, &message) == file.expected);
      if (!file.message.empty()) BOOST_TEST(message == file.message);
    }
  }

  // An unknown tensor type is counted; only its data extent goes unchecked.
  const gguf_info unknown = read_bytes_as_gguf(gguf_writer().header(1, 0).tensor("t", {7, 3}, 200, 0).pad_to(32).bytes);
  BOOST_TEST(unknown.parameters == 21u);
}

BOOST_AUTO_TEST_CASE(reads_a_file_from_disk_and_refuses_a_missing_one) {
  llmgate::test::temporary_directory directory;
  llmgate::test::write_bytes(directory / "model.gguf", every_type_file());
  BOOST_TEST(llmgate::read_gguf_info(directory / "model.gguf").parameters == 515u);
  try {
    llmgate::read_gguf_info(directory / "absent.gguf");
    BOOST_ERROR("a missing file was read");
  } catch (const llmgate::error& e) {
    BOOST_TEST(e.code() == errc::io_failure);
    BOOST_TEST(std::string(e.what()).find("absent.gguf") != std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()
