// The JSON name of every value of every closed vocabulary of the report. The schema lists the
// same names (tests/unit/report_schema_test.cpp checks that they agree).
#include "report/model/report.hpp"

#define INTERPROBE_ENUM(E, ...)                                   \
  std::span<const EnumName<E>> names(E) {                         \
    static constexpr EnumName<E> table[] = {__VA_ARGS__};         \
    return table;                                                 \
  }

namespace interprobe::report {

INTERPROBE_ENUM(ProbeStatus, {ProbeStatus::ok, "ok"}, {ProbeStatus::unsupported, "unsupported"},
                {ProbeStatus::skipped, "skipped"}, {ProbeStatus::failed, "failed"})
INTERPROBE_ENUM(Severity, {Severity::info, "info"}, {Severity::warn, "warn"}, {Severity::fail, "fail"})
INTERPROBE_ENUM(VersionSource, {VersionSource::library, "library"}, {VersionSource::file_name, "file_name"},
                {VersionSource::soname, "soname"}, {VersionSource::compiled_in, "compiled_in"})

}  // namespace interprobe::report
