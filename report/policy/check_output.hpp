#pragma once
// How a check result is shown: a Document (text and markdown through report/render, which
// escape), JSON, and JUnit XML for CI test reporters. Printers only format; check.cpp decides.
#include <string>

#include "report/policy/check.hpp"
#include "report/policy/fleet_check.hpp"
#include "report/render/document.hpp"

namespace interprobe::policy {

// What the exit code follows: `warn_gates` when --fail-on warn (or info) makes warned items fail
// the pipeline too; they are then JUnit failures, otherwise passing test cases with a warning.
render::Document check_document(const CheckResult& result, bool warn_gates);
std::string check_json(const CheckResult& result, bool warn_gates);
// testsuites > testsuite[name, tests, failures, errors, skipped] > testcase[name, classname] >
// failure[message, type] | skipped[message] (the shape Jenkins' JUnit plugin reads).
std::string check_junit(const CheckResult& result, bool warn_gates);

// A fleet's check (fleet_check.hpp): the same outputs, one suite per node after the fleet's own.
bool fleet_check_failed(const std::vector<NamedCheck>& suites, bool warn_gates);
render::Document fleet_check_document(const std::vector<NamedCheck>& suites, bool warn_gates);
std::string fleet_check_json(const std::vector<NamedCheck>& suites, bool warn_gates);
std::string fleet_check_junit(const std::vector<NamedCheck>& suites, bool warn_gates);

// Every metric and fact path a report holds, with its value: what a policy's items can select.
render::Document subjects_document(const report::Report& report);
// The same as JSON: {"subjects": [{"kind": "metric", "path", "value", "unit"} | {"kind": "fact", "path", "value"}]}.
std::string subjects_json(const report::Report& report);

// XML text and attribute values: markup characters as entities, control characters and
// noncharacters (U+FFFE, U+FFFF: XML 1.0 cannot carry them at all) as visible \xNN.
std::string escape_xml(const std::string& raw);

}  // namespace interprobe::policy
