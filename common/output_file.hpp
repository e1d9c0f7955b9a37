#pragma once
// Files the user names with an option (`-o report.json`, `snapshot -o x.tar.gz`): checked before
// any work, written to an unpredictable temporary file beside the target (mkstemp: O_CREAT|O_EXCL,
// never through a planted link), then renamed over it. The target is never written in place, so a
// reader or a failed run never sees half a file, and a device node, FIFO or symlink at the target
// is refused instead of being replaced.
#include <filesystem>
#include <string>
#include <string_view>

namespace interprobe {

// What may already be at the target path.
enum class ExistingOutput {
  refuse,          // nothing may be there (`snapshot -o`, unless --force)
  replace_regular  // a regular file is replaced; anything else (link, device, FIFO, directory) is refused
};

// Throws InputError naming `option` when `path` cannot be written as asked: empty name, missing or
// unwritable directory, or something at the path that `existing` does not allow.
void check_output_target(const std::filesystem::path& path, const std::string& option, ExistingOutput existing);

// Temporary names are short (".interprobe-XXXXXX"), so a target name of NAME_MAX characters works.
inline constexpr const char* kTempPrefix = ".interprobe-";

class AtomicOutputFile {
 public:
  AtomicOutputFile(std::filesystem::path path, std::string option, ExistingOutput existing);
  ~AtomicOutputFile();  // removes the temporary file unless committed
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  int fd() const { return fd_; }
  const std::filesystem::path& temp_path() const { return temp_; }
  void write(std::string_view data);  // throws InputError (full disk, quota, file size limit)
  // fsync, close, re-check the target, rename. With ExistingOutput::refuse the rename does not
  // replace a file that appeared meanwhile.
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what, int err);
  std::filesystem::path path_;
  std::string option_;
  ExistingOutput existing_;
  std::filesystem::path temp_;
  int fd_ = -1;
  bool committed_ = false;
};

void write_output_file(const std::filesystem::path& path, std::string_view content, const std::string& option,
                       ExistingOutput existing = ExistingOutput::replace_regular);

}  // namespace interprobe
