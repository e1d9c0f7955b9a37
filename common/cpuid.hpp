#pragma once
// CPUID as data. Live: the instruction (x86 only). Under --root: DIR/cpuid.txt, lines
// "LEAF SUBLEAF EAX EBX ECX EDX" in 0x-hex with '#' comments. A missing file means CPUID is
// unknown, which is not the same as "bare metal".
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace interprobe {

class HostRoot;

struct CpuidRegs {
  std::uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
  bool operator==(const CpuidRegs&) const = default;
};

class CpuidSource {
 public:
  virtual ~CpuidSource() = default;
  // False when nothing is known (no instruction, no cpuid.txt).
  virtual bool available() const = 0;
  virtual std::optional<CpuidRegs> query(std::uint32_t leaf, std::uint32_t subleaf = 0) const = 0;
  // "instruction", "cpuid.txt", or why nothing is known.
  virtual std::string origin() const = 0;
};

class RecordedCpuid final : public CpuidSource {
 public:
  RecordedCpuid(std::map<std::pair<std::uint32_t, std::uint32_t>, CpuidRegs> leaves, std::string origin);
  bool available() const override { return available_; }
  std::optional<CpuidRegs> query(std::uint32_t leaf, std::uint32_t subleaf) const override;
  std::string origin() const override { return origin_; }
  static RecordedCpuid unknown(std::string why);

 private:
  std::map<std::pair<std::uint32_t, std::uint32_t>, CpuidRegs> leaves_;
  std::string origin_;
  bool available_ = true;
};

// Parses cpuid.txt content; throws InputError naming `file_label` and the line on bad input.
RecordedCpuid parse_cpuid_text(const std::string& text, const std::string& file_label);

// Live instruction for the live root; cpuid.txt (or unknown) for any other root.
std::unique_ptr<CpuidSource> make_cpuid_source(const HostRoot& root);

// Writes the format parse_cpuid_text reads (used by snapshots).
std::string format_cpuid_text(const std::map<std::pair<std::uint32_t, std::uint32_t>, CpuidRegs>& leaves);

}  // namespace interprobe
