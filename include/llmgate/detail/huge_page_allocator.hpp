// huge_page_allocator: an allocator for the large arrays an index walks at
// random (vectors, links). A search touches a new vector at nearly every
// step, so with 4 KiB pages almost every step also misses the TLB; arrays of
// 2 MiB or more are therefore aligned to 2 MiB and, on Linux, offered to the
// kernel as transparent huge pages (a hint: without it nothing changes but
// speed). Smaller arrays are only aligned to a cache line.
#pragma once

#include <cstddef>  // std::size_t
#include <new>      // ::operator new with std::align_val_t

#if defined(__linux__)
#include <sys/mman.h>  // ::madvise, MADV_HUGEPAGE
#endif

#include "llmgate/version.hpp"

namespace llmgate::inline v0::detail {

template <class T>
class huge_page_allocator {
 public:
  using value_type = T;
  static constexpr std::size_t huge_page = std::size_t{2} << 20;
  static constexpr std::size_t cache_line = 64;

  huge_page_allocator() noexcept = default;
  template <class U>
  huge_page_allocator(const huge_page_allocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = rounded(n);
    void* memory = ::operator new(bytes, std::align_val_t{alignment(n)});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= huge_page) ::madvise(memory, bytes, MADV_HUGEPAGE);
#endif
    return static_cast<T*>(memory);
  }

  void deallocate(T* memory, std::size_t n) noexcept {
#ifdef __cpp_sized_deallocation  // clang leaves it off unless asked (-fsized-deallocation)
    ::operator delete(memory, rounded(n), std::align_val_t{alignment(n)});
#else
    ::operator delete(memory, std::align_val_t{alignment(n)});
#endif
  }

  template <class U>
  friend bool operator==(const huge_page_allocator&, const huge_page_allocator<U>&) noexcept {
    return true;
  }

 private:
  static std::size_t alignment(std::size_t n) noexcept {
    return n * sizeof(T) >= huge_page ? huge_page : cache_line;
  }
  static std::size_t rounded(std::size_t n) noexcept {
    const std::size_t a = alignment(n);
    return (n * sizeof(T) + a - 1) / a * a;
  }
};

}  // namespace llmgate::inline v0::detail
