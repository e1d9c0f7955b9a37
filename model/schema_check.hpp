#pragma once
// Internal to model/: checks a parsed report against the report's schema (report_schema.cpp:
// generated from the declarations; report/schema/report.schema.json is its text) before it is decoded, so a missing required key, a wrong type or a value outside
// a closed vocabulary is an error naming its key path ("bandwidth.sweeps[2].points[0]: missing
// required key 'bytes'"). No C++ JSON Schema validator is packaged in Debian 12, so this walks the
// subset our schema uses: $ref (local), type, required, properties, additionalProperties (as a
// schema; `false` is not enforced on read, so a newer minor version's extra keys are accepted),
// items, enum, const, minimum, exclusiveMinimum, oneOf/anyOf (as "any of"). `pattern` is not
// checked on read (the full validator in the tests checks our output); an `enum` beside
// `"x-open-on-read": true` (finding ids) lists what this version writes and is not enforced on read.
#include <nlohmann/json.hpp>

#include "common/errors.hpp"

namespace interprobe::report {

class ReportFormatError : public InputError {
 public:
  using InputError::InputError;
};

// The schema, generated from the INTERPROBE_JSON declarations and annotated (report_schema.cpp).
nlohmann::json report_schema();
// The same as text: what report/schema/report.schema.json holds.
const char* report_schema_text();

enum class RequiredKeys { checked, lenient };

// Throws ReportFormatError naming the first violation's key path. `lenient` lets required keys be
// missing (1.x reports: the 1.x reader gave them defaults, and so does decoding).
void check_against_schema(const nlohmann::json& report, RequiredKeys required = RequiredKeys::checked);

}  // namespace interprobe::report
