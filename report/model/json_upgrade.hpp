#pragma once
// Internal to report/model: the one upgrade function from schema 1.x to the current 2.x tree.
#include <nlohmann/json.hpp>

#include "report/model/report.hpp"

namespace interprobe::report {

// Renames 1.x keys and values in place; keys 1.x readers let be missing stay missing (decoding
// gives them the model's defaults, as the 1.x reader did).
void upgrade_from_1x(nlohmann::json& report);

}  // namespace interprobe::report
