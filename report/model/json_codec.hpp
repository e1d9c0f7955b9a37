#pragma once
// Internal to report/: the nlohmann/json codec helpers each section's (de)serializer uses.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "report/model/report.hpp"

namespace interprobe::report::codec {

using json = nlohmann::json;

class ReportFormatError : public InputError {
 public:
  using InputError::InputError;
};

template <class T>
struct IsVector : std::false_type {};
template <class E>
struct IsVector<std::vector<E>> : std::true_type {};

// A node of a parsed report with the key path that leads to it, for error messages.
class In {
 public:
  In(const json& node, std::string path) : node_(&node), path_(std::move(path)) {}
  const json& raw() const { return *node_; }
  const std::string& path() const { return path_; }
  bool has(const char* key) const { return node_->is_object() && node_->contains(key) && !(*node_)[key].is_null(); }

  [[noreturn]] void fail(const std::string& what) const;

  template <class T>
  T req(const char* key) const {
    if (!node_->is_object() || !node_->contains(key)) fail(std::string("missing required key '") + key + "'");
    return as<T>((*node_)[key], child_path(key));
  }
  template <class T>
  std::optional<T> opt(const char* key) const {
    if (!has(key)) return std::nullopt;
    return as<T>((*node_)[key], child_path(key));
  }
  In child(const char* key) const;
  std::optional<In> opt_child(const char* key) const;
  std::vector<In> array(const char* key) const;      // required
  std::vector<In> opt_array(const char* key) const;  // missing/null -> empty
  std::vector<std::pair<std::string, In>> opt_members(const char* key) const;  // an object; missing/null -> empty

 private:
  std::string child_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  // The one checked conversion every field goes through: the type must match and an integer
  // must fit its field (nlohmann's get<> would truncate, or convert a float, silently).
  template <class T>
  static T as(const json& v, const std::string& path) {
    check_range<T>(v, path);
    try {
      return v.get<T>();
    } catch (const json::exception& e) {
      throw ReportFormatError(path + ": " + type_hint(v) + " (" + e.what() + ")");
    }
  }
  template <class T>
  static void check_range(const json& v, const std::string& path) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      check_integer(v, path, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!v.is_number()) In(v, path).fail(std::string("expected a number, found ") + v.type_name());
    } else if constexpr (IsVector<T>::value) {
      if (v.is_array())
        for (std::size_t i = 0; i < v.size(); ++i) check_range<typename T::value_type>(v[i], path + "[" + std::to_string(i) + "]");
    }
  }
  static void check_integer(const json& v, const std::string& path, std::int64_t min, std::uint64_t max);
  static std::string type_hint(const json& v) { return std::string("unexpected ") + v.type_name(); }
  const json* node_;
  std::string path_;
};

// Parses report text into a tree no deeper than kMaxReportDepth containers. Throws
// ReportFormatError naming the key path where it broke (too deep, a number out of range) or
// json::parse_error for broken syntax.
json parse_bounded(const std::string& text);

template <class T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
  else j[key] = nullptr;
}

// Section codecs. Each section of the report has one pair; report/model/json.cpp calls them.
json encode_system(const SystemSection& s);
SystemSection decode_system(const In& in);
json encode_topology(const TopologySection& s);
TopologySection decode_topology(const In& in);
json encode_virtualization(const VirtSection& s);
VirtSection decode_virtualization(const In& in);
json encode_bandwidth(const BandwidthSection& s);
BandwidthSection decode_bandwidth(const In& in);
json encode_collective(const CollectiveSection& s);
CollectiveSection decode_collective(const In& in);

}  // namespace interprobe::report::codec
