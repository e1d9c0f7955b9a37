// The policy file: {"name": ..., "description": ..., "items": [{...}, ...]}. Every message says
// which file, which item (1-based index and id) and which key, and what would be accepted.
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/json_input.hpp"
#include "common/text.hpp"
#include "common/user_file.hpp"
#include "model/sections.hpp"
#include "report/policy/facts.hpp"
#include "report/policy/policy.hpp"
#include "report/policy/selector.hpp"

namespace interprobe::policy {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxPolicyBytes = 1 << 20;

const std::vector<std::string>& metric_sections() {
  static const std::vector<std::string> s = report::section_names(&report::SectionInfo::policy_metrics);
  return s;
}

// Bottleneck values: a step category, or the family before its '_' ("communication", "gemm").
const std::vector<std::string>& bottleneck_words() {
  static const std::vector<std::string> words = [] {
    std::vector<std::string> w{"communication", "gemm"};
    for (const auto& e : names(report::StepCategory{})) w.emplace_back(e.name);
    return w;
  }();
  return words;
}


// Names the place of every error: "policy FILE: item 3 (id "x"): key "op": ...".
class Where {
 public:
  Where(std::string file, const json& item, std::size_t index) : file_(std::move(file)), index_(index) {
    if (item.is_object() && item.contains("id") && item["id"].is_string()) id_ = item["id"].get<std::string>();
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    std::string item = id_.empty() ? fmt::format("item {}", index_) : fmt::format("item {} (id \"{}\")", index_, printable(id_));
    std::string k = key.empty() ? "" : fmt::format(": key \"{}\"", key);
    throw InputError(fmt::format("policy {}: {}{}: {}", file_, item, k, what));
  }

 private:
  std::string file_;
  std::size_t index_;
  std::string id_;
};

std::string text_key(const json& o, const char* key, const Where& w, bool required) {
  if (!o.contains(key)) {
    if (required) w.fail(key, "missing; it is required");
    return {};
  }
  if (!o[key].is_string() || o[key].get<std::string>().empty()) w.fail(key, "must be a non-empty string");
  return o[key].get<std::string>();
}

Op parse_op(const json& o, const Where& w) {
  static const std::vector<std::pair<std::string, Op>> ops{{"<=", Op::le}, {"<", Op::lt}, {">=", Op::ge},
                                                           {">", Op::gt},  {"==", Op::eq}, {"!=", Op::ne}};
  std::string text = text_key(o, "op", w, true);
  for (const auto& [name, op] : ops)
    if (name == text) return op;
  w.fail("op", fmt::format("unknown operator \"{}\"; use one of <=, <, >=, >, ==, !=", printable(text)));
}

bool ordered(Op op) { return op != Op::eq && op != Op::ne; }

Literal parse_literal(const json& v, const Where& w) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  w.fail("value", "must be a number, a string or true/false");
}

std::int64_t positive_int(const json& o, const char* key, const Where& w) {
  if (!o[key].is_number_integer() || o[key].get<std::int64_t>() <= 0) w.fail(key, "must be a positive integer");
  return o[key].get<std::int64_t>();
}

void check_section(const std::string& path, const std::vector<std::string>& sections, const char* key, const Where& w) {
  if (std::find(sections.begin(), sections.end(), first_segment(path)) == sections.end())
    w.fail(key, fmt::format("\"{}\" starts with no section this kind reads; use one of {}", printable(path),
                            fmt::join(sections, ", ")));
}

void parse_metric(const json& o, Item& it, const Where& w) {
  check_section(it.selector, metric_sections(), "metric", w);
  it.op = parse_op(o, w);
  if (o.contains("of")) {
    if (o.contains("value")) w.fail("value", "give either value (absolute) or of with factor (relative), not both");
    it.of = text_key(o, "of", w, true);
    check_section(*it.of, metric_sections(), "of", w);
    if (is_glob(*it.of)) w.fail("of", "must name one metric; use {1}, {2} ... for what the selector's wildcards matched");
    try {
      std::vector<std::string> caps(wildcard_count(it.selector), "x");
      substitute_captures(*it.of, caps);
    } catch (const std::out_of_range& e) {
      w.fail("of", fmt::format("{} has no wildcard to stand for in \"{}\"", e.what(), printable(it.selector)));
    }
    if (o.contains("factor")) {
      if (!o["factor"].is_number() || o["factor"].get<double>() <= 0) w.fail("factor", "must be a positive number");
      it.factor = o["factor"].get<double>();
    }
    return;
  }
  if (o.contains("factor")) w.fail("factor", "only with of (a relative threshold)");
  if (!o.contains("value")) w.fail("value", "missing; give a number, or of (and factor) for a relative threshold");
  if (!o["value"].is_number()) w.fail("value", "metrics are numbers: give a number");
  it.value = o["value"].get<double>();
}

void parse_fact(const json& o, Item& it, const Where& w) {
  check_section(it.selector, fact_sections(), "fact", w);
  it.op = parse_op(o, w);
  if (!o.contains("value")) w.fail("value", "missing; give the value the fact must have");
  it.value = parse_literal(o["value"], w);
  if (ordered(it.op) && !std::holds_alternative<double>(it.value))
    w.fail("op", fmt::format("{} compares numbers; a word or true/false takes == or !=", to_string(it.op)));
}

void parse_finding(const json& o, Item& it, const Where& w) {
  const auto& ids = known_finding_ids();
  bool known = std::any_of(ids.begin(), ids.end(), [&](const std::string& id) { return match_glob(it.selector, id).has_value(); });
  if (!known)
    w.fail("finding", fmt::format("\"{}\" names no finding interprobe writes (docs/findings.md lists them)", printable(it.selector)));
  std::string expect = o.contains("expect") ? text_key(o, "expect", w, true) : "absent";
  if (expect == "absent") it.expect = Expect::absent;
  else if (expect == "present") it.expect = Expect::present;
  else w.fail("expect", fmt::format("\"{}\": use absent or present", printable(expect)));
}

void parse_bottleneck(const json& o, Item& it, const Where& w) {
  std::string word = it.selector;
  const auto& words = bottleneck_words();
  if (std::find(words.begin(), words.end(), word) == words.end())
    w.fail("bottleneck", fmt::format("\"{}\": use one of {}", printable(word), fmt::join(words, ", ")));
  it.value = word;
  it.op = parse_op(o, w);
  if (ordered(it.op)) w.fail("op", "a bottleneck takes == or !=");
  if (!o.contains("batch")) w.fail("batch", "missing; the verdict is per batch size");
  it.batch = positive_int(o, "batch", w);
  if (o.contains("tp")) it.tp = positive_int(o, "tp", w);
  it.selector = o.contains("model") ? text_key(o, "model", w, true) : "*";
}

void parse_fleet(const json& o, Item& it, const Where& w) {
  const std::string word = it.selector;
  const auto& words = fleet_checks();
  if (std::find(words.begin(), words.end(), word) == words.end())
    w.fail("fleet", fmt::format("\"{}\": use one of {}", printable(word), fmt::join(words, ", ")));
  it.value = word;
  it.selector = "**";
  if (word == "no_outliers") {
    if (!o.contains("metric")) w.fail("metric", "missing; no_outliers needs the metrics (a path or glob) whose outliers fail it");
    it.selector = text_key(o, "metric", w, true);
    check_section(it.selector, metric_sections(), "metric", w);
  } else if (o.contains("metric")) {
    w.fail("metric", fmt::format("only with no_outliers; {} takes {}", word, word == "homogeneous" ? "setting" : "nothing more"));
  }
  if (o.contains("setting")) {
    if (word != "homogeneous") w.fail("setting", "only with homogeneous (compare's settings names, or a glob)");
    it.selector = text_key(o, "setting", w, true);
  }
}

const std::set<std::string>& allowed_keys(ItemKind k) {
  static const std::set<std::string> metric{"id", "title", "severity", "why", "metric", "op", "value", "of", "factor", "for"};
  static const std::set<std::string> fact{"id", "title", "severity", "why", "fact", "op", "value", "for"};
  static const std::set<std::string> finding{"id", "title", "severity", "why", "finding", "expect"};
  static const std::set<std::string> bottleneck{"id", "title", "severity", "why", "bottleneck", "op", "batch", "tp", "model", "for"};
  static const std::set<std::string> fleet{"id", "title", "severity", "why", "fleet", "metric", "setting"};
  switch (k) {
    case ItemKind::metric: return metric;
    case ItemKind::fact: return fact;
    case ItemKind::finding: return finding;
    case ItemKind::bottleneck: return bottleneck;
    case ItemKind::fleet: return fleet;
  }
  return metric;
}

ItemKind item_kind(const json& o, const Where& w) {
  std::vector<std::pair<const char*, ItemKind>> kinds{{"metric", ItemKind::metric}, {"fact", ItemKind::fact},
                                                      {"finding", ItemKind::finding}, {"bottleneck", ItemKind::bottleneck}};
  if (o.contains("fleet")) return ItemKind::fleet;  // its metric key is the glob it scans
  std::vector<std::pair<const char*, ItemKind>> given;
  for (const auto& k : kinds)
    if (o.contains(k.first)) given.push_back(k);
  if (given.size() != 1)
    w.fail("", "give exactly one of the keys metric, fact, finding, bottleneck, fleet (what the item checks)");
  return given.front().second;
}

Item parse_item(const json& o, std::size_t index, const std::string& file) {
  Where w(file, o, index);
  if (!o.is_object()) w.fail("", "must be an object");
  Item it;
  it.index = index;
  it.id = text_key(o, "id", w, true);
  if (it.id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != std::string::npos)
    w.fail("id", "letters, digits, '_', '.' and '-' only (it names a JUnit test case)");
  it.kind = item_kind(o, w);
  for (const auto& [key, _] : o.items())
    if (!allowed_keys(it.kind).count(key))
      w.fail(key, fmt::format("unknown key for a {} item; keys are {}", to_string(it.kind), fmt::join(allowed_keys(it.kind), ", ")));
  it.title = o.contains("title") ? text_key(o, "title", w, true) : it.id;
  it.why = o.contains("why") ? text_key(o, "why", w, true) : "";
  std::string severity = text_key(o, "severity", w, true);
  if (severity == "warn") it.severity = report::Severity::warn;
  else if (severity == "fail") it.severity = report::Severity::fail;
  else w.fail("severity", fmt::format("\"{}\": use warn or fail", printable(severity)));
  it.selector = text_key(o, to_string(it.kind), w, true);
  if (o.contains("for")) {
    std::string q = text_key(o, "for", w, true);
    if (q == "all") it.quantifier = Quantifier::all;
    else if (q == "any") it.quantifier = Quantifier::any;
    else w.fail("for", fmt::format("\"{}\": use all or any", printable(q)));
  }
  switch (it.kind) {
    case ItemKind::metric: parse_metric(o, it, w); break;
    case ItemKind::fact: parse_fact(o, it, w); break;
    case ItemKind::finding: parse_finding(o, it, w); break;
    case ItemKind::bottleneck: parse_bottleneck(o, it, w); break;
    case ItemKind::fleet: parse_fleet(o, it, w); break;
  }
  return it;
}

}  // namespace

Policy parse_policy(const std::string& text, const std::string& file) {
  json doc;
  try {
    doc = parse_json_bounded(text);
  } catch (const JsonInputError& e) {  // too deep, or a number beyond double range (1e999): names the key
    throw InputError(fmt::format("policy {}: not valid JSON: {}", file, e.what()));
  } catch (const json::exception& e) {  // syntax
    throw InputError(fmt::format("policy {}: not valid JSON: {}", file, e.what()));
  }
  auto top = [&](const std::string& key, const std::string& what) {
    return InputError(fmt::format("policy {}: key \"{}\": {}", file, key, what));
  };
  if (!doc.is_object()) throw top("", "the policy must be a JSON object with name and items");
  for (const auto& [key, _] : doc.items())
    if (key != "name" && key != "description" && key != "items") throw top(key, "unknown key; keys are name, description, items");
  Policy p;
  p.file = file;
  if (!doc.contains("name") || !doc["name"].is_string() || doc["name"].get<std::string>().empty())
    throw top("name", "missing or not a non-empty string; name the policy (it names the JUnit test suite)");
  p.name = doc["name"].get<std::string>();
  if (doc.contains("description")) {
    if (!doc["description"].is_string()) throw top("description", "must be a string");
    p.description = doc["description"].get<std::string>();
  }
  if (!doc.contains("items") || !doc["items"].is_array() || doc["items"].empty())
    throw top("items", "missing or not a non-empty array of items");
  std::set<std::string> ids;
  for (std::size_t i = 0; i < doc["items"].size(); ++i) {
    Item it = parse_item(doc["items"][i], i + 1, file);
    if (!ids.insert(it.id).second) Where(file, doc["items"][i], i + 1).fail("id", "used by an earlier item; ids are unique");
    p.items.push_back(std::move(it));
  }
  return p;
}

Policy read_policy_file(const std::filesystem::path& path) {
  std::string text = read_user_file(path, {"--policy " + path.string(), "a policy file (JSON)", kMaxPolicyBytes});
  return parse_policy(text, path.string());
}

}  // namespace interprobe::policy
