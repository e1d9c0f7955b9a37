#pragma once
// A site policy for `interprobe check`: items that each compare what a report says (a metric of
// the metrics view, a fact, a finding, the bottleneck verdict) with a threshold, at a severity.
// Parsing checks everything that can be checked without a report, so a typo fails the pipeline
// at once (exit 2) instead of passing silently forever.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/report.hpp"

namespace interprobe::policy {

// fleet: judged over a fleet report only (`interprobe fleet -o`): "no_outliers" on the metrics a
// glob selects, "no_failed_nodes", "homogeneous" over the settings a glob selects.
enum class ItemKind { metric, fact, finding, bottleneck, fleet };
enum class Op { le, lt, ge, gt, eq, ne };
// Over every subject a selector matches: all must pass, or one is enough.
enum class Quantifier { all, any };
enum class Expect { absent, present };

// A threshold: a number, a word ("q35", "p2p") or a truth value.
using Literal = std::variant<double, std::string, bool>;

struct Item {
  std::size_t index = 0;  // 1-based position in "items", for messages
  std::string id, title, why;
  report::Severity severity = report::Severity::fail;  // warn or fail
  ItemKind kind = ItemKind::metric;
  // metric/fact: a path or glob ("*" within a segment, "**" across segments);
  // finding: an id or glob; bottleneck: the model name glob ("*" when not given).
  std::string selector;
  Op op = Op::eq;
  Literal value = 0.0;
  // Relative threshold: factor × the metric at `of`, where {1}, {2} ... stand for what the
  // selector's wildcards matched.
  std::optional<std::string> of;
  double factor = 1.0;
  Quantifier quantifier = Quantifier::all;
  Expect expect = Expect::absent;                  // finding
  std::optional<std::int64_t> batch, tp;           // bottleneck
};

// The fleet-wide checks a `fleet` item names (its value); the selector is its metric or setting glob.
const std::vector<std::string>& fleet_checks();

struct Policy {
  std::string file;  // as given: every message names it
  std::string name, description;
  std::vector<Item> items;
};

const char* to_string(ItemKind k);
const char* to_string(Op op);
const char* to_string(Quantifier q);
const char* to_string(Expect e);
std::string literal_text(const Literal& v);

// Throws InputError naming the file, the item (index and id) and the key.
Policy parse_policy(const std::string& text, const std::string& file);
Policy read_policy_file(const std::filesystem::path& path);

// `check --expect-gpus N`: every item on topology/gpu_count asks for at least N GPUs at severity
// fail (an item is added when the policy has none), so a missing or short count fails the gate.
void expect_gpu_count(Policy& policy, std::int64_t gpus);

// The probes (names as in the report's `probes` list) whose sections the policy reads.
std::vector<std::string> probes_needed(const Policy& policy);

// The probe whose section a finding's rules read ("virt.*" -> virtualization); empty when any
// report can carry it (probe.failed, libraries.*).
std::string probe_of_finding(const std::string& id_or_glob);

// Every finding id this version can write (the schema's $defs/finding_id).
const std::vector<std::string>& known_finding_ids();

}  // namespace interprobe::policy
