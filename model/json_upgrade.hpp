#pragma once
// Internal to model/: the one upgrade function from schema 1.x to the current 2.x tree.
#include <nlohmann/json.hpp>

#include "model/report.hpp"

namespace interprobe::report {

// Renames 1.x keys and values in place; keys 1.x readers let be missing stay missing (decoding
// gives them the model's defaults, as the 1.x reader did).
void upgrade_from_1x(nlohmann::json& report);

// Schema 2.0 to 2.1: a GPU pair's bottleneck_gbps was the PCIe figure even on NVLinked pairs; it
// moves to pcie_bottleneck_gbps, and bottleneck_gbps stays only where no NVLink joins the pair
// (the old report lacks the NVLink rate). GPUs gain compute_capability and all-reduce points
// rank_mean_time_us / rank_mean_busbw_gbps (null: not measured then). Also run by the 1.x upgrade.
void upgrade_from_2_0(nlohmann::json& report);

}  // namespace interprobe::report
