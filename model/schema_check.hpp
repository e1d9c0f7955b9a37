#pragma once
// Checks a parsed JSON file against the schema its declarations give before it is decoded: the
// report (report_schema.cpp; report/schema/report.schema.json is its text), fleet reports,
// telemetry traces, NVML recordings. A missing required key, a wrong type or a value outside a
// closed vocabulary is an error naming its key path ("bandwidth.sweeps[2].points[0]: missing
// required key 'bytes'"). No C++ JSON Schema validator is packaged in Debian 12, so this walks the
// subset our schema uses: $ref (local), type, required, properties, additionalProperties (as a
// schema; `false` is not enforced on read, so a newer minor version's extra keys are accepted),
// items, enum, const, minimum, exclusiveMinimum, maximum, oneOf/anyOf (as "any of"). `pattern` is not
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

// The first violation of `schema` (a document: its "$defs" are what "$ref" names) in `value`, as
// "samples[3].gpu: expected an integer, found string"; empty when it conforms. Every JSON file
// interprobe reads is checked this way against the schema its INTERPROBE_JSON declarations give
// (model/json_fields.hpp) before it is decoded.
std::string schema_violation(const nlohmann::json& value, const nlohmann::json& schema,
                             RequiredKeys required = RequiredKeys::checked);

// Throws ReportFormatError naming the first violation's key path. `lenient` lets required keys be
// missing (1.x reports: the 1.x reader gave them defaults, and so does decoding).
void check_against_schema(const nlohmann::json& report, RequiredKeys required = RequiredKeys::checked);

}  // namespace interprobe::report
