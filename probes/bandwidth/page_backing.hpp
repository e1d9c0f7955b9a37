#pragma once
// Which pages back a host buffer: the policy asked for (madvise) and what the kernel granted,
// read from this process's own /proc/self/smaps. Inside a VM a TLB miss walks two page tables,
// so 4 KiB and 2 MiB pages can differ by 2x on a large copy; the report says which it got.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/bandwidth.hpp"

namespace interprobe {

// auto: no advice, the kernel's default (what malloc'd buffers of other programs get);
// small: MADV_NOHUGEPAGE (4 KiB pages); huge: MADV_HUGEPAGE (2 MiB pages where granted).
using report::PagePolicy;
// "auto", "4k", "2m"; throws InputError naming --pages otherwise.
PagePolicy parse_page_policy(std::string_view text);

// Best effort: madvise of the whole range by the policy (nothing for auto).
void advise_pages(void* data, std::size_t bytes, PagePolicy policy);

// Sum of the AnonHugePages of the smaps entries overlapping [begin, end), in bytes; nullopt
// when no entry overlaps (or the text is not smaps).
std::optional<std::uint64_t> anon_huge_bytes(std::string_view smaps, std::uintptr_t begin, std::uintptr_t end);

// The same from /proc/self/smaps (read at most 16 MiB; nullopt when unreadable).
std::optional<std::uint64_t> huge_page_bytes_of(const void* data, std::size_t bytes);

// "always [madvise] never" (transparent_hugepage/enabled) -> "madvise"; nullopt without brackets.
std::optional<report::ThpMode> thp_mode_from(std::string_view enabled);

}  // namespace interprobe
