#include "report/analysis/workload/model_config.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/json_input.hpp"
#include "common/user_file.hpp"

namespace interprobe::workload {

namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxConfigBytes = 4 << 20;
constexpr const char* kSupportedTypes =
    "llama, mistral, qwen2, qwen3 (dense), mixtral, qwen3_moe (MoE), deepseek_v2, deepseek_v3, kimi_k2, glm4_moe, "
    "glm_moe_dsa (MoE with MLA or GQA)";

enum class Family { dense, mixtral, qwen_moe, deepseek_moe };

// Ceilings far above any real model keep every product of shapes inside int64 and a step's
// layer-by-layer walk short, whatever the file says.
constexpr std::int64_t kMaxDimension = std::int64_t{1} << 24;
// Beyond any published model by a wide margin (the deepest has 126 layers, the widest hidden state
// 25,600, the most routed experts 512), yet small enough that a step stays a plausible number: a
// value past these is a typo or a hostile file, and exits 2 naming the key.
constexpr std::int64_t kMaxLayers = 1024;
constexpr std::int64_t kMaxExperts = 4096;
constexpr std::int64_t kMaxHidden = std::int64_t{1} << 17;

// Reads keys of one JSON object and names the file and key in every complaint.
class Keys {
 public:
  Keys(const json& object, std::string label) : object_(object), label_(std::move(label)) {}

  std::int64_t positive(const char* key, std::int64_t max = kMaxDimension) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null())
      throw InputError(fmt::format("{}: key '{}' is missing; a Hugging Face config.json of this model_type has it "
                                   "(download the model's config.json unchanged)",
                                   label_, key));
    return checked(key, *it, max);
  }
  std::int64_t positive_or(const char* key, std::int64_t fallback, std::int64_t max = kMaxDimension) const {
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? fallback : checked(key, *it, max);
  }
  std::int64_t count_or(const char* key, std::int64_t fallback, std::int64_t max) const {  // may be 0
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return fallback;
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0 || it->get<std::int64_t>() > max)
      throw InputError(fmt::format("{}: key '{}' must be an integer from 0 to {}, not {}", label_, key, max, json_excerpt(*it)));
    return it->get<std::int64_t>();
  }
  std::vector<std::string> strings(const char* key) const {
    std::vector<std::string> out;
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return out;
    if (!it->is_array())
      throw InputError(fmt::format("{}: key '{}' must be a list of strings, not {}", label_, key, json_excerpt(*it)));
    for (const auto& v : *it) {
      if (!v.is_string())
        throw InputError(fmt::format("{}: key '{}' must be a list of strings, not one holding {}", label_, key, json_excerpt(v)));
      out.push_back(v.get<std::string>());
    }
    return out;
  }
  std::vector<std::int64_t> integers(const char* key) const {
    std::vector<std::int64_t> out;
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return out;
    if (!it->is_array())
      throw InputError(fmt::format("{}: key '{}' must be a list of integers, not {}", label_, key, json_excerpt(*it)));
    for (const auto& v : *it) {
      if (!v.is_number_integer())
        throw InputError(fmt::format("{}: key '{}' must be a list of integers, not one holding {}", label_, key, json_excerpt(v)));
      out.push_back(v.get<std::int64_t>());
    }
    return out;
  }
  std::string text_or(const char* key, std::string fallback) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return fallback;
    if (!it->is_string()) throw InputError(fmt::format("{}: key '{}' must be a string, not {}", label_, key, json_excerpt(*it)));
    return it->get<std::string>();
  }
  const std::string& label() const { return label_; }

 private:
  std::int64_t checked(const char* key, const json& v, std::int64_t max = kMaxDimension) const {
    if (!v.is_number_integer() || v.get<std::int64_t>() <= 0 || v.get<std::int64_t>() > max)
      throw InputError(fmt::format("{}: key '{}' must be an integer from 1 to {}, not {}", label_, key, max,
                                   json_excerpt(v)));
    return v.get<std::int64_t>();
  }
  const json& object_;
  std::string label_;
};

// Bounded in depth (a value nested 100,000 deep crashed the error message that quoted it).
json parse_config_json(const std::string& text, const std::string& label, const char* what_to_do) {
  try {
    return parse_json_bounded(text);
  } catch (const JsonInputError& e) {
    throw InputError(fmt::format("{}: {}; {}", label, e.what(), what_to_do));
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: not JSON ({}); {}", label, e.what(), what_to_do));
  }
}

Family family_of(const std::string& model_type, const std::string& label) {
  if (model_type == "llama" || model_type == "mistral" || model_type == "qwen2" || model_type == "qwen3")
    return Family::dense;
  if (model_type == "mixtral") return Family::mixtral;
  if (model_type == "qwen3_moe") return Family::qwen_moe;
  if (model_type == "deepseek_v2" || model_type == "deepseek_v3" || model_type == "kimi_k2" ||
      model_type == "glm4_moe" || model_type == "glm_moe_dsa")
    return Family::deepseek_moe;
  throw InputError(fmt::format("{}: model_type '{}' is not modelled; supported: {}", label, model_type, kSupportedTypes));
}

bool has_mla(const std::string& model_type) { return model_type != "glm4_moe"; }  // of the deepseek_moe family

std::vector<bool> deepseek_moe_layers(const Keys& k, std::int64_t layers) {
  std::int64_t first_dense = k.count_or("first_k_dense_replace", 0, kMaxLayers);
  std::int64_t freq = k.positive_or("moe_layer_freq", 1, kMaxLayers);
  std::vector<bool> moe(static_cast<std::size_t>(layers));
  for (std::int64_t i = 0; i < layers; ++i) moe[static_cast<std::size_t>(i)] = i >= first_dense && i % freq == 0;
  return moe;
}

std::vector<bool> qwen_moe_layers(const Keys& k, std::int64_t layers) {
  std::int64_t step = k.positive_or("decoder_sparse_step", 1, kMaxLayers);
  auto listed = k.integers("mlp_only_layers");
  const std::set<std::int64_t> dense_only(listed.begin(), listed.end());
  std::vector<bool> moe(static_cast<std::size_t>(layers));
  for (std::int64_t i = 0; i < layers; ++i) moe[static_cast<std::size_t>(i)] = (i + 1) % step == 0 && !dense_only.count(i);
  return moe;
}

void read_moe(const Keys& k, Family family, ModelConfig& m) {
  MoeShape moe;
  switch (family) {
    case Family::dense:
      return;
    case Family::mixtral:
      moe.routed_experts = k.positive("num_local_experts", kMaxExperts);
      moe.expert_intermediate = m.intermediate;
      moe.moe_layer.assign(static_cast<std::size_t>(m.layers), true);
      break;
    case Family::qwen_moe:
      moe.routed_experts = k.positive("num_experts", kMaxExperts);
      moe.expert_intermediate = k.positive("moe_intermediate_size");
      moe.moe_layer = qwen_moe_layers(k, m.layers);
      break;
    case Family::deepseek_moe:
      moe.routed_experts = k.positive("n_routed_experts", kMaxExperts);
      moe.expert_intermediate = k.positive("moe_intermediate_size");
      moe.shared_experts = k.count_or("n_shared_experts", 0, kMaxExperts);
      moe.moe_layer = deepseek_moe_layers(k, m.layers);
      break;
  }
  moe.experts_per_token = k.positive("num_experts_per_tok");
  if (moe.experts_per_token > moe.routed_experts)
    throw InputError(fmt::format("{}: num_experts_per_tok {} is more than the {} experts", k.label(),
                                 moe.experts_per_token, moe.routed_experts));
  m.moe = moe;
}

void read_attention(const Keys& k, Family family, ModelConfig& m) {
  m.heads = k.positive("num_attention_heads");
  if (family == Family::deepseek_moe && has_mla(m.model_type)) {
    MlaShape mla;
    mla.q_lora_rank = k.count_or("q_lora_rank", 0, kMaxDimension);
    mla.kv_lora_rank = k.positive("kv_lora_rank");
    mla.qk_nope_head_dim = k.positive("qk_nope_head_dim");
    mla.qk_rope_head_dim = k.positive("qk_rope_head_dim");
    mla.v_head_dim = k.positive("v_head_dim");
    m.mla = mla;
    m.kv_heads = m.heads;
    m.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
    if (m.model_type == "glm_moe_dsa")
      m.indexer = SparseIndexerShape{k.positive("index_n_heads"), k.positive("index_head_dim"), k.positive("index_topk")};
    return;
  }
  m.kv_heads = k.positive_or("num_key_value_heads", m.heads);
  m.head_dim = k.positive_or("head_dim", m.hidden / m.heads);
  if (m.head_dim < 1)
    throw InputError(fmt::format("{}: num_attention_heads {} is more than hidden_size {} and there is no 'head_dim': "
                                 "give head_dim (the config.json of such a model has it)",
                                 k.label(), m.heads, m.hidden));
  if (m.heads % m.kv_heads != 0)
    throw InputError(fmt::format("{}: num_attention_heads {} is not a multiple of num_key_value_heads {}", k.label(),
                                 m.heads, m.kv_heads));
}

Quantization quantization_from(const json& q, const std::string& label, std::string source) {
  Keys k(q, label);
  std::string method = k.text_or("quant_method", "");
  std::string algo = k.text_or("quant_algo", "");
  Quantization out;
  out.source = std::move(source);
  if (method == "fp8" || algo == "FP8") out.dtype = WeightDtype::fp8;
  else if (algo == "NVFP4") out.dtype = WeightDtype::nvfp4;
  else
    throw InputError(fmt::format("{}: quantization {} is not modelled; supported: quant_method \"fp8\", quant_algo "
                                 "\"FP8\" or \"NVFP4\" (ModelOpt); remove the quantization to model bf16 weights",
                                 label, method.empty() ? "quant_algo '" + algo + "'" : "quant_method '" + method + "'"));
  for (const char* key : {"modules_to_not_convert", "ignored_layers", "exclude_modules", "ignore"})
    for (const auto& pattern : k.strings(key)) {
      if (pattern.size() > ModulePatterns::kMaxPatternChars)
        throw InputError(fmt::format("{}: key '{}' holds a pattern of {} characters ({}); a module pattern is at most {}",
                                     label, key, pattern.size(), json_excerpt(pattern), ModulePatterns::kMaxPatternChars));
      if (auto stars = static_cast<std::size_t>(std::count(pattern.begin(), pattern.end(), '*'));
          stars > ModulePatterns::kMaxStarsPerPattern)
        throw InputError(fmt::format("{}: key '{}' holds a pattern with {} '*' ({}); a module pattern has at most {}", label,
                                     key, stars, json_excerpt(pattern), ModulePatterns::kMaxStarsPerPattern));
      if (!out.not_quantized->add(pattern))
        throw InputError(fmt::format("{}: key '{}': more than {} distinct wildcard patterns (*, ?, [) kept in bf16; name the "
                                     "modules without wildcards (any number), or merge patterns",
                                     label, key, ModulePatterns::kMaxWildcardPatterns));
    }
  return out;
}

Quantization read_quantization(const json& config, const std::string& label,
                               const std::optional<std::string>& hf_quant_config_text) {
  if (hf_quant_config_text) {
    std::string quant_label = label + " (hf_quant_config.json beside it)";
    json q = parse_config_json(*hf_quant_config_text, quant_label, "give ModelOpt's hf_quant_config.json");
    if (!q.is_object() || !q.contains("quantization") || !q["quantization"].is_object())
      throw InputError(fmt::format("{}: not a ModelOpt quantization file (expected an object with 'quantization')",
                                   quant_label));
    return quantization_from(q["quantization"], quant_label, "hf_quant_config.json");
  }
  auto it = config.find("quantization_config");
  if (it == config.end() || it->is_null()) return Quantization{WeightDtype::bf16, "none"};
  if (!it->is_object()) throw InputError(fmt::format("{}: key 'quantization_config' must be an object", label));
  return quantization_from(*it, label + " quantization_config", "config.json quantization_config");
}

}  // namespace

double bytes_per_weight(WeightDtype dtype) {
  switch (dtype) {
    case WeightDtype::bf16: return 2.0;
    case WeightDtype::fp8: return 1.0;
    case WeightDtype::nvfp4: return 0.5 + 1.0 / 16.0;
  }
  return 2.0;
}

const char* to_string(WeightDtype dtype) {
  switch (dtype) {
    case WeightDtype::bf16: return "bf16";
    case WeightDtype::fp8: return "fp8";
    case WeightDtype::nvfp4: return "nvfp4";
  }
  return "bf16";
}

bool ModulePatterns::add(const std::string& pattern) {
  if (pattern.find_first_of("*?[") == std::string::npos) {
    names_.insert(pattern);
    return true;
  }
  if (wildcards_seen_.count(pattern)) return true;
  if (wildcards_.size() >= kMaxWildcardPatterns) return false;
  wildcards_seen_.insert(pattern);
  wildcards_.push_back(pattern);
  return true;
}

bool ModulePatterns::matches(const std::string& module_path) const {
  if (matches_name(module_path)) return true;
  if (wildcards_.empty()) return false;
  std::lock_guard lock(memo_mutex_);
  auto [it, fresh] = memo_.try_emplace(module_path, false);
  if (fresh)
    it->second = std::any_of(wildcards_.begin(), wildcards_.end(), [&module_path](const std::string& pattern) {
      return fnmatch(pattern.c_str(), module_path.c_str(), 0) == 0;
    });
  return it->second;
}

bool ModulePatterns::matches_name(const std::string& module_path) const {
  // A plain module name covers the module, everything under it ("model.layers.0.mlp") and every
  // module ending in it ("lm_head"): look up each dot-separated prefix and suffix of the path.
  if (names_.empty()) return false;
  if (names_.count(module_path)) return true;
  for (std::size_t dot = module_path.find('.'); dot != std::string::npos; dot = module_path.find('.', dot + 1))
    if (names_.count(module_path.substr(0, dot)) || names_.count(module_path.substr(dot + 1))) return true;
  return false;
}

WeightDtype ModelConfig::dtype_of(const std::string& module_path) const {
  if (quantization.dtype == WeightDtype::bf16 || quantization.not_quantized->matches(module_path)) return WeightDtype::bf16;
  return quantization.dtype;
}

ModelConfig parse_model_config(const std::string& config_text, const std::string& label,
                               const std::optional<std::string>& hf_quant_config_text) {
  json config = parse_config_json(config_text, label, "give a Hugging Face config.json");
  if (!config.is_object()) throw InputError(fmt::format("{}: not a JSON object; give a Hugging Face config.json", label));
  // Multimodal configs (e.g. Llama 4, Qwen-VL) keep the language model under text_config.
  const json& text = config.contains("text_config") && config["text_config"].is_object() ? config["text_config"] : config;
  Keys k(text, label);
  ModelConfig m;
  m.model_type = Keys(config, label).text_or("model_type", "");
  if (m.model_type.empty()) throw InputError(fmt::format("{}: key 'model_type' is missing; supported: {}", label, kSupportedTypes));
  Family family = family_of(m.model_type, label);
  m.name = Keys(config, label).text_or("_name_or_path", "");
  m.label = label;
  m.hidden = k.positive("hidden_size", kMaxHidden);
  m.layers = k.positive("num_hidden_layers", kMaxLayers);
  m.vocab = k.positive("vocab_size");
  m.intermediate = k.positive("intermediate_size");
  m.mtp_layers = k.count_or("num_nextn_predict_layers", 0, kMaxLayers);
  read_attention(k, family, m);
  read_moe(k, family, m);
  m.quantization = read_quantization(config, label, hf_quant_config_text);
  return m;
}

ModelConfig read_model_config(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path file = fs::is_directory(path, ec) ? path / "config.json" : path;
  std::string text = read_user_file(file, {file.string(), "a Hugging Face config.json", kMaxConfigBytes});
  // ModelOpt writes its quantization into a file beside config.json; a config saved under another
  // name (examples/models/*.json) carries it inline, so a folder of them cannot share one.
  std::optional<std::string> quant;
  fs::path quant_file = file.parent_path() / "hf_quant_config.json";
  if (file.filename() == "config.json" && fs::is_regular_file(quant_file, ec))
    quant = read_user_file(quant_file, {quant_file.string(), "ModelOpt's hf_quant_config.json", kMaxConfigBytes});
  ModelConfig m = parse_model_config(text, file.string(), quant);
  if (m.name.empty())
    m.name = file.filename() == "config.json" ? file.parent_path().filename().string() : file.stem().string();
  return m;
}

}  // namespace interprobe::workload
