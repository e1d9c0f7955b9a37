#pragma once
// Where and how a run's report reaches the file named with -o. The named file is replaced
// (atomically: temporary file beside it + rename) only by a report the run completed or one it
// was interrupted in (its probes then say `skipped: interrupted`). Saves while probing, and the
// report of a run that ends in an error, go to partial_report_path() beside it, so an earlier
// report at the named path survives a run that failed.
#include <filesystem>

#include "model/report.hpp"

namespace interprobe::report {

// NAME.partial beside NAME; when that would exceed the file system's name limit, NAME is cut
// short first (so a 255-character NAME still has a partial file).
std::filesystem::path partial_report_path(const std::filesystem::path& path);

}  // namespace interprobe::report
