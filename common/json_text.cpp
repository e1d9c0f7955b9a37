#include "common/json_text.hpp"

#include <nlohmann/json.hpp>

namespace interprobe {

std::string json_text(const nlohmann::json& document, int indent) {
  return document.dump(indent, ' ', true, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace interprobe
