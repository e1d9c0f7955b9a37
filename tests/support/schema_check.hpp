#pragma once
// Every report a test writes is checked against the schema with a full JSON Schema validator
// (tests/cli/validate_report.py over python3-jsonschema); without python3-jsonschema the check
// is left out (scripts/install-deps --test installs it).
#include <filesystem>

namespace interprobe::testing {

bool have_jsonschema();
// EXPECTs the validator to accept FILE; does nothing without python3-jsonschema.
void expect_schema_valid(const std::filesystem::path& file);
// The same for a fleet report: report/schema/fleet.schema.json, and each node's report against
// report.schema.json.
void expect_fleet_schema_valid(const std::filesystem::path& file);

}  // namespace interprobe::testing
