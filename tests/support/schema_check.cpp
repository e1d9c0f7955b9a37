#include "support/schema_check.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace interprobe::testing {

bool have_jsonschema() {
  const std::string python = INTERPROBE_PYTHON3;
  return !python.empty() && std::system((python + " -c 'import jsonschema' 2>/dev/null").c_str()) == 0;
}

void expect_schema_valid(const std::filesystem::path& file) {
  if (!have_jsonschema()) return;
  const std::string cmd = std::string(INTERPROBE_PYTHON3) + " " + INTERPROBE_SOURCE_DIR + "/tests/cli/validate_report.py " +
                          INTERPROBE_SOURCE_DIR + "/report/schema/report.schema.json " + file.string();
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

void expect_fleet_schema_valid(const std::filesystem::path& file) {
  if (!have_jsonschema()) return;
  const std::string dir = std::string(INTERPROBE_SOURCE_DIR) + "/report/schema/";
  const std::string cmd = std::string(INTERPROBE_PYTHON3) + " " + INTERPROBE_SOURCE_DIR + "/tests/cli/validate_report.py --nodes-against " +
                          dir + "report.schema.json " + dir + "fleet.schema.json " + file.string();
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

}  // namespace interprobe::testing
