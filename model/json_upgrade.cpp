// Reports of schema 1.x (interprobe 0.1 before report model 2.0) read as 2.0: keys renamed for
// their units, closed vocabularies spelled in snake_case. One table; each line names where the
// key lives ("[]" walks every element of an array, "*" every member of an object).
#include "model/json_upgrade.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace interprobe::report {

namespace {

using json = nlohmann::json;

struct KeyRename {
  const char* where;  // "bandwidth.sweeps[].points[]"
  const char* from;
  const char* to;
};

struct ValueRename {
  const char* where;
  const char* key;
  const char* from;  // a trailing '*' matches every value that starts with the rest
  const char* to;    // nullptr: null
};

constexpr KeyRename kKeyRenames[] = {
    {"probes[]", "seconds", "duration_s"},
    {"tool.libraries.*", "devices", "device_count"},
    {"system", "memory_total_bytes", "memory_bytes"},
    // bandwidth
    {"bandwidth", "target_cv", "target_cv_fraction"},
    {"bandwidth.sweeps[]", "memory", "memory_kind"},
    {"bandwidth.sweeps[].points[]", "cv", "cv_fraction"},
    {"bandwidth.sweeps[].fit", "residual", "residual_fraction"},
    {"bandwidth.sweeps[].fit", "points", "points_used"},
    // collective
    {"collective.allreduce[].points[]", "count", "elements_per_rank"},
    {"collective.allreduce[].points[]", "wrong", "wrong_elements"},
    {"collective.allreduce[].summary", "wrong_total", "wrong_elements_total"},
    // topology, virtualization
    {"topology.pci_devices[].link", "current_width", "current_lanes"},
    {"topology.pci_devices[].link", "max_width", "max_lanes"},
    {"topology.gpus[]", "memory_total_bytes", "memory_bytes"},
    {"topology.gpu_pairs[]", "nvlinks", "nvlink_count"},
    {"virtualization", "numa_nodes", "numa_node_count"},
    {"virtualization.host", "iommu_groups", "iommu_group_count"},
    {"virtualization.gpus[]", "gpu_max_width", "gpu_max_lanes"},
};

constexpr ValueRename kValueRenames[] = {
    {"tool.libraries.*", "version_source", "file name", "file_name"},
    {"tool.libraries.*", "version_source", "compiled in", "compiled_in"},
    // bandwidth
    {"bandwidth.p2p_pairs[]", "truth", "claimed-but-staged", "claimed_but_staged"},
    // collective
    {"collective.allreduce[]", "variant", "p2p-off", "p2p_off"},
    {"collective.allreduce[]", "variant", "shm-off", "shm_off"},
    // topology, virtualization
    {"topology.pci_devices[]", "vendor_id", "", nullptr},
    {"topology.pci_devices[]", "device_id", "", nullptr},
    {"topology.pci_devices[]", "class_id", "", nullptr},
    {"topology.pci_devices[]", "root_bus", "", nullptr},
    {"virtualization.gpus[]", "p2p_clique", "unknown*", "unknown"},  // "unknown: needs root"
};

bool value_matches(const json& value, std::string_view from) {
  if (!value.is_string()) return false;
  const auto& text = value.get_ref<const std::string&>();
  if (!from.empty() && from.back() == '*') return text.starts_with(from.substr(0, from.size() - 1));
  return text == from;
}

// Calls `visit` on every object `where` names inside `node`.
template <class Visit>
void for_each_at(json& node, std::string_view where, const Visit& visit) {
  if (where.empty()) {
    if (node.is_object()) visit(node);
    return;
  }
  auto dot = where.find('.');
  std::string_view step = where.substr(0, dot);
  std::string_view rest = dot == std::string_view::npos ? std::string_view{} : where.substr(dot + 1);
  bool each = step.size() >= 2 && step.substr(step.size() - 2) == "[]";
  if (each) step.remove_suffix(2);
  if (!node.is_object()) return;
  if (step == "*") {
    for (auto& [key, member] : node.items()) for_each_at(member, rest, visit);
    return;
  }
  auto it = node.find(std::string(step));
  if (it == node.end()) return;
  if (!each) return for_each_at(*it, rest, visit);
  if (it->is_array())
    for (auto& element : *it) for_each_at(element, rest, visit);
}

// 1.x wrote why the clique was unknown into the value ("unknown: needs root"); 2.0 keeps the
// value closed and the why in p2p_clique_reason.
void split_p2p_clique_reason(json& gpu) {
  if (gpu.contains("p2p_clique_reason")) return;
  gpu["p2p_clique_reason"] = nullptr;
  auto it = gpu.find("p2p_clique");
  if (it == gpu.end() || !it->is_string()) return;
  std::string_view text = it->get_ref<const std::string&>();
  constexpr std::string_view kPrefix = "unknown: ";
  if (text.starts_with(kPrefix)) gpu["p2p_clique_reason"] = std::string(text.substr(kPrefix.size()));
}

void split_pair_bottleneck(json& pair) {
  if (pair.contains("pcie_bottleneck_gbps")) return;
  auto it = pair.find("bottleneck_gbps");
  pair["pcie_bottleneck_gbps"] = it == pair.end() ? json(nullptr) : *it;
  auto links = pair.find("nvlink_count");
  if (it != pair.end() && links != pair.end() && links->is_number() && links->get<double>() > 0) *it = nullptr;
}

void add_compute_capability(json& gpu) {
  if (!gpu.contains("compute_capability")) gpu["compute_capability"] = nullptr;
}

void add_rank_mean(json& point) {
  for (const char* key : {"rank_mean_time_us", "rank_mean_busbw_gbps"})
    if (!point.contains(key)) point[key] = nullptr;
}

}  // namespace

void upgrade_from_2_0(json& report) {
  for_each_at(report, "topology.gpu_pairs[]", split_pair_bottleneck);
  for_each_at(report, "topology.gpus[]", add_compute_capability);
  for_each_at(report, "collective.allreduce[].points[]", add_rank_mean);
  report["schema_version"] = kSchemaVersion;
}

void upgrade_from_1x(json& report) {
  for_each_at(report, "virtualization.gpus[]", split_p2p_clique_reason);
  for (const auto& r : kKeyRenames)
    for_each_at(report, r.where, [&r](json& object) {
      if (!object.contains(r.from) || object.contains(r.to)) return;
      object[r.to] = std::move(object[r.from]);
      object.erase(r.from);
    });
  for (const auto& r : kValueRenames)
    for_each_at(report, r.where, [&r](json& object) {
      auto it = object.find(r.key);
      if (it == object.end() || !value_matches(*it, r.from)) return;
      if (r.to) *it = r.to;
      else *it = nullptr;
    });
  upgrade_from_2_0(report);
}

}  // namespace interprobe::report
