#pragma once
// Files the user names on the command line (a report, an hwloc XML export): read whole, from a
// regular file or a pipe only, at most a documented size. A device (/dev/zero) never ends and a
// FIFO nobody writes would block the open; both are refused with a message naming the file.
#include <cstddef>
#include <filesystem>
#include <string>

namespace interprobe {

struct UserFile {
  std::string label;  // how messages name it: "FILE" or "--hwloc-xml FILE"
  std::string kind;   // what it should be, for messages: "a report written by `interprobe run -o`"
  std::size_t max_bytes;
  bool pipes_allowed = true;  // false where the content is read twice or must not change (archives)
};

// Throws InputError naming `file.label` when it cannot be opened, is no regular file (or pipe,
// where allowed), or holds more than `file.max_bytes`. Ctrl-C while reading: InterruptedError.
std::string read_user_file(const std::filesystem::path& path, const UserFile& file);

}  // namespace interprobe
