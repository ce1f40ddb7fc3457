// The file format every llmgate structure is saved in, and its reader and
// writer. Nothing is lost: a snapshot is written to a new file, flushed to
// disk and renamed over the old one, so a crash leaves either the old or the
// new file whole; and a file that was truncated or altered is refused with a
// clear error instead of being half-read.
//
// Layout (integers little-endian):
//   magic "LLMGATE\x1a" (8) | container version u32 | kind tag (4 chars) |
//   kind version u32 | payload size u64 | payload | CRC-32 of all before it
#pragma once

#include <algorithm>     // std::min, std::reverse
#include <array>         // std::array
#include <bit>           // std::bit_cast, std::endian
#include <chrono>        // std::chrono::steady_clock (temporary file names)
#include <concepts>      // std::integral, std::floating_point
#include <cstdint>       // std::uint32_t, std::uint64_t
#include <cstring>       // std::memcpy
#include <filesystem>    // std::filesystem::path, rename
#include <fstream>       // std::ifstream, std::ofstream
#include <span>          // std::span
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <utility>       // std::move
#include <system_error>  // std::error_code

#include <boost/crc.hpp>  // boost::crc_32_type

#if __has_include(<unistd.h>) && __has_include(<fcntl.h>)
#include <cerrno>    // errno, EINTR
#include <fcntl.h>   // ::open, O_DIRECTORY
#include <unistd.h>  // ::write, ::fsync, ::close
#define LLMGATE_HAS_POSIX_FILES 1
#endif

#include "llmgate/error.hpp"

namespace llmgate::inline v0::store {

/// Four characters naming what a snapshot holds, e.g. "HNSW".
using kind_tag = std::array<char, 4>;

namespace detail {

inline constexpr std::array<char, 8> magic = {'L', 'L', 'M', 'G', 'A', 'T', 'E', '\x1a'};
inline constexpr std::uint32_t container_version = 1;
inline constexpr std::size_t header_size = 8 + 4 + 4 + 4 + 8;
inline constexpr std::size_t checksum_size = 4;

template <class T>
concept plain_number = std::integral<T> || std::floating_point<T>;

// Integers and floats travel as little-endian bytes whatever the host is.
template <class Bits>
Bits reverse_bytes(Bits raw) noexcept {
  auto bytes = std::bit_cast<std::array<unsigned char, sizeof(Bits)>>(raw);
  std::reverse(bytes.begin(), bytes.end());
  return std::bit_cast<Bits>(bytes);
}

template <plain_number T>
auto to_little_endian(T value) noexcept {
  using bits = std::conditional_t<sizeof(T) == 8, std::uint64_t,
               std::conditional_t<sizeof(T) == 4, std::uint32_t,
               std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint8_t>>>;
  auto raw = std::bit_cast<bits>(value);
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) raw = reverse_bytes(raw);
  return raw;
}

template <plain_number T, class Bits>
T from_little_endian(Bits raw) noexcept {
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) raw = reverse_bytes(raw);
  return std::bit_cast<T>(raw);
}

inline std::uint32_t crc32(const char* data, std::size_t size) noexcept {
  boost::crc_32_type crc;
  crc.process_bytes(data, size);
  return crc.checksum();
}

// Writes `bytes` to a new file beside `path`, flushes it to the device and
// renames it into place.
inline std::error_code replace_file(const std::filesystem::path& path, std::string_view bytes) {
  std::filesystem::path temporary = path;
  temporary += ".tmp-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  bool written = false;
#ifdef LLMGATE_HAS_POSIX_FILES
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;  // a signal, not a failure
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    written = done == bytes.size() && ::fsync(fd) == 0;
    written = (::close(fd) == 0) && written;
  }
#else
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    written = static_cast<bool>(out);
  }
#endif
  std::error_code ec;
  if (written) std::filesystem::rename(temporary, path, ec);
  if (!written || ec) {
    std::filesystem::remove(temporary, ec);
    return make_error_code(errc::io_failure);
  }
#ifdef LLMGATE_HAS_POSIX_FILES
  // The rename itself reaches the device with its directory: until then a
  // power loss may bring back the previous snapshot (whole, all the same).
  std::filesystem::path directory = path.parent_path();
  if (directory.empty()) directory = ".";
  if (const int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY); dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
#endif
  return {};
}

}  // namespace detail

/// Builds a snapshot in memory; commit() puts it on disk atomically.
class snapshot_writer {
 public:
  snapshot_writer(kind_tag kind, std::uint32_t kind_version) {
    bytes_.append(detail::magic.data(), detail::magic.size());
    write(detail::container_version);
    bytes_.append(kind.data(), kind.size());
    write(kind_version);
    write(std::uint64_t{0});  // payload size, filled in by commit()
  }

  template <detail::plain_number T>
  void write(T value) {
    const auto raw = detail::to_little_endian(value);
    bytes_.append(reinterpret_cast<const char*>(&raw), sizeof raw);
  }

  template <detail::plain_number T>
  void write_array(std::span<const T> values) {
    if (values.empty()) return;
    if constexpr (std::endian::native == std::endian::little) {
      bytes_.append(reinterpret_cast<const char*>(values.data()), values.size_bytes());
    } else {
      for (T v : values) write(v);
    }
  }

  void write_string(std::string_view text) {
    write(static_cast<std::uint64_t>(text.size()));
    bytes_.append(text);
  }

  /// Seals the snapshot and replaces `path` with it (write, fsync, rename).
  [[nodiscard]] std::error_code commit(const std::filesystem::path& path) {
    seal_in_place();
    return detail::replace_file(path, bytes_);
  }

  /// Seals the snapshot and hands over its bytes, exactly as commit()
  /// would write them: for a snapshot kept elsewhere than a file (the
  /// Redis tier's values and messages). The writer is empty afterwards.
  std::string seal() && {
    seal_in_place();
    return std::move(bytes_);
  }

 private:
  // Fills in the payload size and appends the checksum.
  void seal_in_place() {
    const auto payload = static_cast<std::uint64_t>(bytes_.size() - detail::header_size);
    const auto raw = detail::to_little_endian(payload);
    std::memcpy(bytes_.data() + detail::header_size - 8, &raw, 8);
    write(detail::crc32(bytes_.data(), bytes_.size()));
  }

  std::string bytes_;
};

/// Reads a snapshot that has been checked whole (magic, versions, size,
/// checksum) before any of its content is handed out. Reads past the end
/// fail softly: they return zeros and mark the reader failed, and finish()
/// then reports the file as corrupt, so parsers need no check per field.
class snapshot_reader {
 public:
  /// Opens `path` and verifies it; on failure `ec` says why and the reader is empty.
  snapshot_reader(const std::filesystem::path& path, kind_tag kind, std::uint32_t newest_version,
                  std::error_code& ec) {
    ec = read_file(path);
    if (!ec) ec = verify(kind, newest_version);
  }

  /// Verifies `bytes` (what snapshot_writer::seal() made) as the file
  /// constructor verifies a file's; on failure `ec` says why.
  snapshot_reader(std::string bytes, kind_tag kind, std::uint32_t newest_version, std::error_code& ec)
      : bytes_(std::move(bytes)) {
    ec = verify(kind, newest_version);
  }

  std::uint32_t kind_version() const noexcept { return kind_version_; }

  template <detail::plain_number T>
  T read() noexcept {
    using bits = decltype(detail::to_little_endian(T{}));
    if (!take(sizeof(T))) return T{};
    bits raw;
    std::memcpy(&raw, bytes_.data() + position_ - sizeof(T), sizeof(T));
    return detail::from_little_endian<T>(raw);
  }

  template <detail::plain_number T>
  void read_array(std::span<T> out) noexcept {
    if (out.empty() || !take(out.size_bytes())) return;
    const char* source = bytes_.data() + position_ - out.size_bytes();
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(out.data(), source, out.size_bytes());
    } else {
      position_ -= out.size_bytes();
      for (T& v : out) v = read<T>();
    }
  }

  std::string read_string() {
    const auto size = read<std::uint64_t>();
    if (!take(size)) return {};
    return bytes_.substr(position_ - size, size);
  }

  /// Bytes not yet read; lets parsers reject a count that cannot fit.
  std::size_t remaining() const noexcept { return end_ - position_; }

  /// Marks the content inconsistent (a parser found e.g. an id out of range).
  void mark_corrupt() noexcept { failed_ = true; }

  /// corrupt_file unless every read stayed inside the payload and all of it was read.
  std::error_code finish() const noexcept {
    return failed_ || position_ != end_ ? make_error_code(errc::corrupt_file) : std::error_code{};
  }

 private:
  std::error_code read_file(const std::filesystem::path& path) {
    std::error_code size_error;
    const auto size = std::filesystem::file_size(path, size_error);
    std::ifstream in(path, std::ios::binary);
    if (!in || size_error) return make_error_code(errc::io_failure);
    // One read of the size the file has, not a character at a time.
    bytes_.resize(static_cast<std::size_t>(size));
    in.read(bytes_.data(), static_cast<std::streamsize>(bytes_.size()));
    if (in.bad()) return make_error_code(errc::io_failure);
    bytes_.resize(static_cast<std::size_t>(in.gcount()));  // a file that shrank reads as truncated
    return {};
  }

  std::error_code verify(kind_tag kind, std::uint32_t newest) {

    const std::size_t magic_bytes = std::min(bytes_.size(), detail::magic.size());
    if (bytes_.compare(0, magic_bytes, detail::magic.data(), magic_bytes) != 0)
      return make_error_code(errc::not_a_llmgate_file);
    if (bytes_.size() < detail::header_size) return make_error_code(errc::truncated_file);

    end_ = detail::header_size;  // lets read() walk the header
    position_ = detail::magic.size();
    const auto container = read<std::uint32_t>();
    kind_tag found{};
    read_array(std::span<char>(found));
    kind_version_ = read<std::uint32_t>();
    const auto payload = read<std::uint64_t>();

    if (container != detail::container_version || kind_version_ == 0 || kind_version_ > newest)
      return make_error_code(errc::unsupported_version);
    if (found != kind) return make_error_code(errc::wrong_kind_of_file);
    const std::uint64_t available = bytes_.size() - detail::header_size;
    if (payload + detail::checksum_size > available) return make_error_code(errc::truncated_file);
    if (payload + detail::checksum_size < available) return make_error_code(errc::corrupt_file);

    end_ = detail::header_size + static_cast<std::size_t>(payload);
    std::uint32_t stored;
    std::memcpy(&stored, bytes_.data() + end_, sizeof stored);
    if (detail::from_little_endian<std::uint32_t>(stored) != detail::crc32(bytes_.data(), end_))
      return make_error_code(errc::checksum_mismatch);
    return {};
  }

  bool take(std::uint64_t size) noexcept {
    if (failed_ || size > end_ - position_) {
      failed_ = true;
      return false;
    }
    position_ += static_cast<std::size_t>(size);
    return true;
  }

  std::string bytes_;
  std::size_t position_ = 0;
  std::size_t end_ = 0;
  std::uint32_t kind_version_ = 0;
  bool failed_ = false;
};

/// Saves one structure as a whole file of `kind`: object.save_to(writer),
/// then the atomic commit.
template <class T>
[[nodiscard]] std::error_code save_file(const T& object, const std::filesystem::path& path, kind_tag kind,
                                        std::uint32_t version) {
  snapshot_writer out(kind, version);
  object.save_to(out);
  return out.commit(path);
}

/// The error a loader throws for `code`: `context` names the operation
/// ("loading semantic cache from 'x'"), and for a file that could not be
/// read, the file system's reason ("No such file or directory"), so that a
/// missing file is not left to be guessed from "could not be read".
inline error load_failure(std::string context, const std::filesystem::path& path, std::error_code code) {
  if (code == errc::io_failure) {
    std::error_code status_error;
    const auto status = std::filesystem::status(path, status_error);
    if (status_error) context += " (" + status_error.message() + ")";
    else if (std::filesystem::is_directory(status)) context += " (a directory, not a file)";
    else context += " (it exists but cannot be opened for reading)";
  }
  return error(code, context);
}

/// Loads one structure saved by save_file: T::load_from(reader, ec) must
/// return a std::optional<T>. Throws llmgate::error naming `what`, the file
/// and the cause when the file is missing, truncated, corrupt, of another
/// kind or version, or its content cannot be a T.
template <class T>
T load_file(const std::filesystem::path& path, kind_tag kind, std::uint32_t version, std::string_view what) {
  std::error_code ec;
  snapshot_reader in(path, kind, version, ec);
  const auto fail = [&] { return load_failure("loading " + std::string(what) + " from '" + path.string() + "'", path, ec); };
  if (ec) throw fail();
  auto object = T::load_from(in, ec);
  if (!ec) ec = in.finish();
  if (ec) throw fail();
  return std::move(*object);
}

}  // namespace llmgate::inline v0::store
