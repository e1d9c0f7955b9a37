#include "report/policy/check_output.hpp"

#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/json_text.hpp"
#include "model/metrics.hpp"
#include "report/policy/facts.hpp"
#include "report/render/renderers.hpp"

namespace interprobe::policy {

namespace {

render::Tone tone_of(Outcome o) {
  switch (o) {
    case Outcome::pass: return render::Tone::good;
    case Outcome::warn: return render::Tone::warn;
    case Outcome::fail: return render::Tone::bad;
    case Outcome::skipped: return render::Tone::dim;
  }
  return render::Tone::plain;
}

bool gates(const ItemResult& r, bool warn_gates) {
  return r.outcome == Outcome::fail || (warn_gates && r.outcome == Outcome::warn);
}

// The why column: the reason an item was skipped, else the policy's why and what failed.
std::string why_text(const ItemResult& r) {
  if (r.outcome == Outcome::skipped) return r.detail;
  std::string why = r.item.why;
  if (r.outcome != Outcome::pass && !r.detail.empty()) why += (why.empty() ? "" : " \u2014 ") + r.detail;
  return why;
}

std::string summary_line(const CheckResult& c, bool warn_gates) {
  bool failed = check_failed(c, warn_gates);
  return fmt::format("{}: {} item(s): {} pass, {} warn, {} fail, {} skipped (not measured)", failed ? "FAILED" : "PASSED",
                     c.items.size(), c.summary.pass, c.summary.warn, c.summary.fail, c.summary.skipped);
}

}  // namespace

render::Document check_document(const CheckResult& c, bool warn_gates) {
  render::Document doc;
  doc.title = "interprobe check";
  render::Section s;
  s.title = fmt::format("check: {} ({})", c.policy, c.file);
  // One line per item; the reasons of those that did not pass follow in a table of their own, so
  // neither squeezes the other on a terminal.
  render::Table t;
  t.header = {"result", "item", "value", "threshold"};
  render::Table reasons;
  reasons.caption = "why, for the items that did not pass";
  reasons.header = {"item", "why"};
  for (const auto& r : c.items) {
    std::string result = to_string(r.outcome);
    for (auto& ch : result) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    t.rows.push_back({render::Cell(result, tone_of(r.outcome)), r.item.id, r.value, r.threshold});
    if (r.outcome != Outcome::pass) reasons.rows.push_back({r.item.id, render::Cell(why_text(r), tone_of(r.outcome))});
  }
  s.blocks.emplace_back(std::move(t));
  if (!reasons.rows.empty()) s.blocks.emplace_back(std::move(reasons));
  bool failed = check_failed(c, warn_gates);
  s.blocks.emplace_back(render::Paragraph{summary_line(c, warn_gates), failed ? render::Tone::bad : render::Tone::good});
  doc.sections.push_back(std::move(s));
  return doc;
}

render::Document subjects_document(const report::Report& report) {
  render::Document doc;
  doc.title = "interprobe check --list-subjects";
  render::Section s;
  s.title = "what policy items can select (metric: compared with numbers; fact: numbers, words, true/false)";
  render::Table t;
  t.header = {"kind", "path", "value"};
  for (const auto& m : report::metrics_of(report))
    t.rows.push_back({"metric", m.path, fmt::format("{:.4g} {}", m.value, m.unit)});
  for (const auto& f : facts_of(report)) t.rows.push_back({"fact", f.path, literal_text(f.value)});
  s.blocks.emplace_back(std::move(t));
  doc.sections.push_back(std::move(s));
  return doc;
}

std::string subjects_json(const report::Report& report) {
  nlohmann::json subjects = nlohmann::json::array();
  for (const auto& m : report::metrics_of(report))
    subjects.push_back({{"kind", "metric"}, {"path", m.path}, {"value", m.value}, {"unit", m.unit}});
  for (const auto& f : facts_of(report)) {
    nlohmann::json value;
    std::visit([&value](const auto& v) { value = v; }, f.value);
    subjects.push_back({{"kind", "fact"}, {"path", f.path}, {"value", value}});
  }
  return json_text({{"subjects", subjects}});
}

namespace {

nlohmann::json result_json(const CheckResult& c, bool warn_gates) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& r : c.items) {
    nlohmann::json subjects = nlohmann::json::array();
    for (const auto& s : r.subjects)
      subjects.push_back({{"subject", s.subject}, {"value", s.value}, {"threshold", s.threshold}, {"ok", s.ok}});
    items.push_back({{"id", r.item.id},
                     {"title", r.item.title},
                     {"kind", to_string(r.item.kind)},
                     {"severity", report::to_string(r.item.severity)},
                     {"outcome", to_string(r.outcome)},
                     {"gates", gates(r, warn_gates)},
                     {"value", r.value},
                     {"threshold", r.threshold},
                     {"why", r.item.why},
                     {"detail", r.detail},
                     {"subjects", subjects}});
  }
  nlohmann::json out{{"policy", c.policy},
                     {"file", c.file},
                     {"passed", !check_failed(c, warn_gates)},
                     {"summary", {{"pass", c.summary.pass}, {"warn", c.summary.warn}, {"fail", c.summary.fail}, {"skipped", c.summary.skipped}}},
                     {"items", items}};
  return out;
}

// One <testsuite> of a check result: a test case per item.
std::string junit_suite(const CheckResult& c, const std::string& name, bool warn_gates) {
  int failures = 0;
  for (const auto& r : c.items) failures += gates(r, warn_gates) ? 1 : 0;
  std::string suite = escape_xml(name);
  std::string out = fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n", suite,
                                c.items.size(), failures, c.summary.skipped);
  for (const auto& r : c.items) {
    out += fmt::format("    <testcase name=\"{}\" classname=\"interprobe.check.{}\">\n", escape_xml(r.item.id), suite);
    std::string message = fmt::format("{}: value {}, threshold {}", r.item.title, r.value, r.threshold);
    std::string body = escape_xml(why_text(r));
    if (gates(r, warn_gates)) {
      out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", escape_xml(message),
                         to_string(r.outcome), body);
    } else if (r.outcome == Outcome::skipped) {
      out += fmt::format("      <skipped message=\"{}\"/>\n", escape_xml("not measured: " + r.detail));
    } else if (r.outcome == Outcome::warn) {
      out += fmt::format("      <system-out>WARN {}: {}</system-out>\n", escape_xml(message), body);
    }
    out += "    </testcase>\n";
  }
  return out + "  </testsuite>\n";
}

std::string junit_document(const std::vector<NamedCheck>& suites, bool warn_gates) {
  std::size_t tests = 0, failures = 0, skipped = 0;
  std::string body;
  for (const auto& s : suites) {
    tests += s.result.items.size();
    skipped += static_cast<std::size_t>(s.result.summary.skipped);
    for (const auto& r : s.result.items) failures += gates(r, warn_gates) ? 1 : 0;
    body += junit_suite(s.result, s.name, warn_gates);
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"interprobe check\" tests=\"{}\" "
                     "failures=\"{}\" errors=\"0\" skipped=\"{}\">\n{}</testsuites>\n",
                     tests, failures, skipped, body);
}

// Strings from the machine may hold any bytes: replace what is not UTF-8 instead of throwing.

}  // namespace

std::string check_json(const CheckResult& c, bool warn_gates) { return json_text(result_json(c, warn_gates)); }

std::string escape_xml(const std::string& raw) { return render::escape_xml(raw); }

std::string check_junit(const CheckResult& c, bool warn_gates) { return junit_document({{c.policy, c}}, warn_gates); }

bool fleet_check_failed(const std::vector<NamedCheck>& suites, bool warn_gates) {
  for (const auto& s : suites)
    if (check_failed(s.result, warn_gates)) return true;
  return false;
}

render::Document fleet_check_document(const std::vector<NamedCheck>& suites, bool warn_gates) {
  render::Document doc;
  doc.title = "interprobe check (fleet)";
  for (const auto& s : suites) {
    render::Document one = check_document(s.result, warn_gates);
    for (auto& section : one.sections) {
      section.title = fmt::format("{}: {} ({})", s.name, s.result.policy, s.result.file);
      doc.sections.push_back(std::move(section));
    }
  }
  std::size_t failed = 0;
  for (const auto& s : suites) failed += check_failed(s.result, warn_gates) ? 1 : 0;
  render::Section total{"fleet check", {}};
  total.blocks.emplace_back(render::Paragraph{
      fmt::format("{}: {} of {} suites failed (fleet-wide items, then one suite per node)",
                  failed ? "FAILED" : "PASSED", failed, suites.size()),
      failed ? render::Tone::bad : render::Tone::good});
  doc.sections.push_back(std::move(total));
  return doc;
}

std::string fleet_check_json(const std::vector<NamedCheck>& suites, bool warn_gates) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& s : suites) {
    nlohmann::json one = result_json(s.result, warn_gates);
    one["suite"] = s.name;
    list.push_back(std::move(one));
  }
  return json_text({{"passed", !fleet_check_failed(suites, warn_gates)}, {"suites", std::move(list)}});
}

std::string fleet_check_junit(const std::vector<NamedCheck>& suites, bool warn_gates) { return junit_document(suites, warn_gates); }

}  // namespace interprobe::policy
