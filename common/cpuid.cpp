#include "common/cpuid.hpp"

#include <fmt/format.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define INTERPROBE_HAS_CPUID_INSTRUCTION 1
#endif

#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/text.hpp"

namespace interprobe {

RecordedCpuid::RecordedCpuid(std::map<std::pair<std::uint32_t, std::uint32_t>, CpuidRegs> leaves,
                             std::string origin)
    : leaves_(std::move(leaves)), origin_(std::move(origin)) {}

RecordedCpuid RecordedCpuid::unknown(std::string why) {
  RecordedCpuid r({}, std::move(why));
  r.available_ = false;
  return r;
}

std::optional<CpuidRegs> RecordedCpuid::query(std::uint32_t leaf, std::uint32_t subleaf) const {
  auto it = leaves_.find({leaf, subleaf});
  if (it == leaves_.end()) return std::nullopt;
  return it->second;
}

RecordedCpuid parse_cpuid_text(const std::string& text, const std::string& file_label) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, CpuidRegs> leaves;
  int line_no = 0;
  for (const auto& raw : split(text, '\n')) {
    ++line_no;
    std::string_view line = raw;
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    auto fields = split_whitespace(line);
    if (fields.empty()) continue;
    auto fail = [&](const std::string& why) {
      return InputError(fmt::format("{}:{}: {}; expected 'LEAF SUBLEAF EAX EBX ECX EDX' in 0x-hex, e.g. "
                                    "'0x40000000 0x0 0x40000001 0x4b4d564b 0x564b4d56 0x0000004d'",
                                    file_label, line_no, why));
    };
    if (fields.size() != 6) throw fail(fmt::format("{} fields instead of 6", fields.size()));
    std::uint32_t values[6];
    for (std::size_t i = 0; i < 6; ++i) {
      if (fields[i].size() < 3 || fields[i][0] != '0' || (fields[i][1] != 'x' && fields[i][1] != 'X'))
        throw fail(fmt::format("field {} '{}' is not 0x-hex", i + 1, fields[i]));
      auto v = parse_hex(fields[i]);
      if (!v || *v > 0xffffffffULL) throw fail(fmt::format("field {} '{}' is not a 32-bit 0x-hex value", i + 1, fields[i]));
      values[i] = static_cast<std::uint32_t>(*v);
    }
    leaves[{values[0], values[1]}] = CpuidRegs{values[2], values[3], values[4], values[5]};
  }
  return RecordedCpuid(std::move(leaves), file_label);
}

std::string format_cpuid_text(const std::map<std::pair<std::uint32_t, std::uint32_t>, CpuidRegs>& leaves) {
  std::string out = "# LEAF SUBLEAF EAX EBX ECX EDX (written by interprobe)\n";
  for (const auto& [key, r] : leaves) {
    out += fmt::format("0x{:08x} 0x{:x} 0x{:08x} 0x{:08x} 0x{:08x} 0x{:08x}\n", key.first, key.second, r.eax,
                       r.ebx, r.ecx, r.edx);
  }
  return out;
}

namespace {

#ifdef INTERPROBE_HAS_CPUID_INSTRUCTION
class InstructionCpuid final : public CpuidSource {
 public:
  bool available() const override { return true; }
  std::optional<CpuidRegs> query(std::uint32_t leaf, std::uint32_t subleaf) const override {
    // The raw macro: __get_cpuid refuses hypervisor leaves above the basic maximum.
    unsigned a = 0, b = 0, c = 0, d = 0;
    __cpuid_count(leaf, subleaf, a, b, c, d);
    return CpuidRegs{a, b, c, d};
  }
  std::string origin() const override { return "instruction"; }
};
#endif

}  // namespace

std::unique_ptr<CpuidSource> make_cpuid_source(const HostRoot& root) {
  if (root.is_live()) {
#ifdef INTERPROBE_HAS_CPUID_INSTRUCTION
    return std::make_unique<InstructionCpuid>();
#else
    return std::make_unique<RecordedCpuid>(RecordedCpuid::unknown("no CPUID instruction on this architecture"));
#endif
  }
  FileRead file = root.read("/cpuid.txt");
  std::string label = (root.root() / "cpuid.txt").string();
  if (file.failure == ReadFailure::missing) {
    return std::make_unique<RecordedCpuid>(RecordedCpuid::unknown("unknown: no cpuid.txt in the root"));
  }
  if (!file.ok()) {
    throw InputError(fmt::format("{}: {}; make it readable or remove it", label, to_string(file.failure)));
  }
  return std::make_unique<RecordedCpuid>(parse_cpuid_text(*file.content, label));
}

}  // namespace interprobe
