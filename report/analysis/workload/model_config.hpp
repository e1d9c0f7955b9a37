#pragma once
// A transformer as a Hugging Face `config.json` describes it (plus its quantization: the
// `quantization_config` inside, or ModelOpt's `hf_quant_config.json` beside it), reduced to what
// prices a decode step: layer shapes, experts, attention kind and weight bytes. Dense (Llama,
// Mistral, Qwen2/3), MoE (Mixtral, Qwen3-MoE) and MLA MoE (DeepSeek-V3/R1, GLM-4.5, GLM-5).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace interprobe::workload {

enum class WeightDtype { bf16, fp8, nvfp4 };

// Bytes per weight as stored: NVFP4 is 4 bits plus one FP8 scale per 16 weights.
double bytes_per_weight(WeightDtype dtype);
const char* to_string(WeightDtype dtype);

struct MoeShape {
  std::int64_t routed_experts = 0;
  std::int64_t experts_per_token = 0;
  std::int64_t expert_intermediate = 0;
  std::int64_t shared_experts = 0;  // each of expert_intermediate, always read
  std::vector<bool> moe_layer;      // per layer: MoE (true) or dense MLP
};

// Multi-head latent attention (DeepSeek-V2/V3, GLM-5): the KV cache holds one latent vector of
// kv_lora_rank + qk_rope_head_dim per token per layer, which tensor parallelism does not shard.
struct MlaShape {
  std::int64_t q_lora_rank = 0;  // 0: q is projected from the hidden state directly
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
};

// GLM-5's sparse attention (DSA): a small indexer scores every cached token, attention then
// reads only the top `topk` latents.
struct SparseIndexerShape {
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t topk = 0;
};

// The module patterns a quantization keeps in bf16 ("lm_head", "model.layers.*.self_attn*"),
// compiled once so a config listing 200,000 of them costs a hash lookup per module, not a match
// per pattern per module per batch: plain names (a module and everything under it) go into a
// hash set, wildcard patterns (fnmatch) are deduplicated, at most kMaxWildcardPatterns of at most
// kMaxStarsPerPattern stars each (the caller refuses more), and
// each module path is matched against them once and remembered.
class ModulePatterns {
 public:
  static constexpr std::size_t kMaxWildcardPatterns = 256;
  static constexpr std::size_t kMaxPatternChars = 256;
  // fnmatch backtracks on every '*': "*m*o*d*e*l*..." against 40,000 module paths took 38 s.
  static constexpr std::size_t kMaxStarsPerPattern = 4;
  // False when the pattern is a wildcard one past kMaxWildcardPatterns (the caller says so).
  bool add(const std::string& pattern);
  bool matches(const std::string& module_path) const;
  std::size_t size() const { return names_.size() + wildcards_.size(); }

 private:
  bool matches_name(const std::string& module_path) const;
  std::unordered_set<std::string> names_;
  std::vector<std::string> wildcards_;
  std::unordered_set<std::string> wildcards_seen_;
  mutable std::mutex memo_mutex_;
  mutable std::unordered_map<std::string, bool> memo_;
};

struct Quantization {
  WeightDtype dtype = WeightDtype::bf16;
  std::string source;  // "none", "config.json quantization_config", "hf_quant_config.json"
  std::shared_ptr<ModulePatterns> not_quantized = std::make_shared<ModulePatterns>();  // kept in bf16
};

struct ModelConfig {
  std::string model_type;  // as the file says: "llama", "mixtral", "deepseek_v3", "glm_moe_dsa"
  std::string name;        // _name_or_path or the file's directory name
  std::string label;       // how messages name it: the file it was read from, or a built-in model's name
  std::int64_t hidden = 0;
  std::int64_t layers = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t intermediate = 0;  // dense MLP
  std::int64_t vocab = 0;
  std::int64_t mtp_layers = 0;  // num_nextn_predict_layers: speculative heads, not in a plain step
  std::optional<MoeShape> moe;
  std::optional<MlaShape> mla;
  std::optional<SparseIndexerShape> indexer;
  Quantization quantization;

  // Whether the module at `path` ("model.layers.3.self_attn.o_proj") is stored quantized.
  WeightDtype dtype_of(const std::string& module_path) const;
};

// Reads FILE (a config.json, or a directory holding one). Unknown model_type, a missing or
// mistyped key, or an unknown quantization: InputError naming the file and key (exit 2).
ModelConfig read_model_config(const std::filesystem::path& path);
ModelConfig parse_model_config(const std::string& config_text, const std::string& label,
                               const std::optional<std::string>& hf_quant_config_text = std::nullopt);

}  // namespace interprobe::workload
