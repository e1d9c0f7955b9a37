#pragma once
// libarchive's last error as text. archive_error_string() returns NULL when a call failed
// without setting a message (a truncated long-link header does this), and fmt throws on a
// null string: a hostile archive then became "internal error" instead of exit 2.
#include <archive.h>

namespace interprobe::snapshot {

inline const char* archive_error_text(archive* a, const char* fallback = "truncated or malformed") {
  const char* why = archive_error_string(a);
  return why ? why : fallback;
}

}  // namespace interprobe::snapshot
