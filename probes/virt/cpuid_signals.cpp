// CPUID: the hypervisor bit (leaf 1 ECX bit 31), the hypervisor signatures at 0x40000000 +
// n*0x100, and the leaves that reveal a confidential guest (TDX leaf 0x21, Hyper-V isolation).
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "common/cpuid.hpp"
#include "probes/virt/virt_signals.hpp"

namespace interprobe::virt {

namespace {

constexpr std::uint32_t kHypervisorBase = 0x40000000;
constexpr std::uint32_t kHypervisorStride = 0x100;
constexpr int kHypervisorBasesScanned = 16;  // Xen moves its own leaves to 0x40000100 with viridian
constexpr std::uint32_t kTdxLeaf = 0x21;
constexpr std::uint32_t kHypervIsolationLeaf = 0x4000000C;

struct SignatureId {
  const char* signature;  // up to 12 bytes, NUL padded
  const char* vm;         // systemd-detect-virt id
  const char* note;
};

// systemd's table (src/basic/virt.c), plus two it lacks that end up vm-other there too.
constexpr std::array<SignatureId, 13> kSignatures{{
    {"XenVMMXenVMM", "xen", "Xen"},
    {"KVMKVMKVM", "kvm", "KVM"},
    {"Linux KVM Hv", "kvm", "KVM with Hyper-V enlightenments"},
    {"TCGTCGTCGTCG", "qemu", "QEMU TCG (pure emulation)"},
    {"VMwareVMware", "vmware", "VMware"},
    {"Microsoft Hv", "microsoft", "Hyper-V, or QEMU/KVM with Hyper-V enlightenments (decided last)"},
    {"bhyve bhyve ", "bhyve", "bhyve signature"},
    {"QNXQVMBSQG", "qnx", "QNX hypervisor"},
    {"ACRNACRNACRN", "acrn", "ACRN"},
    {"SRESRESRESRE", "sre", "Lockheed Martin SRE"},
    {"Apple VZ", "apple", "Apple Virtualization"},
    {"LKVMLKVMLKVM", "vm-other", "kvmtool (systemd: vm-other)"},
    {"OpenBSDVMM58", "vm-other", "OpenBSD vmm (systemd: vm-other)"},
}};

std::string signature_of(const CpuidRegs& r) {
  std::string s(12, '\0');
  std::memcpy(s.data(), &r.ebx, 4);
  std::memcpy(s.data() + 4, &r.ecx, 4);
  std::memcpy(s.data() + 8, &r.edx, 4);
  return s;
}

// Compares the 12 signature bytes with a NUL-padded table entry, as systemd does.
const SignatureId* lookup(const std::string& sig) {
  for (const auto& entry : kSignatures) {
    std::array<char, 12> padded{};
    std::memcpy(padded.data(), entry.signature, std::strlen(entry.signature));
    if (std::memcmp(padded.data(), sig.data(), 12) == 0) return &entry;
  }
  return nullptr;
}

// Printable form for evidence: trailing NULs dropped, other bytes escaped.
std::string printable(const std::string& sig) {
  std::string trimmed = sig;
  while (!trimmed.empty() && trimmed.back() == '\0') trimmed.pop_back();
  return "'" + sanitize(trimmed, 12) + "'";
}

bool plausible_signature(const std::string& sig) {
  bool any = false;
  for (unsigned char c : sig) {
    if (c == 0) continue;
    if (c < 0x20 || c >= 0x7f) return false;
    any = true;
  }
  return any;
}

void read_confidential(const CpuidSource& cpuid, CpuidSignals& s, EvidenceLog& log) {
  auto leaf0 = cpuid.query(0, 0);
  if (leaf0 && leaf0->eax >= kTdxLeaf) {
    if (auto tdx = cpuid.query(kTdxLeaf, 0)) {
      // TDX puts "IntelTDX    " in EBX, EDX, ECX (note the order).
      std::string sig(12, '\0');
      std::memcpy(sig.data(), &tdx->ebx, 4);
      std::memcpy(sig.data() + 4, &tdx->edx, 4);
      std::memcpy(sig.data() + 8, &tdx->ecx, 4);
      if (sig == "IntelTDX    ") {
        s.confidential = "TDX";
        log.add("cpuid 0x21", "confidential", "'IntelTDX'", "confidential TDX guest");
      }
    }
  }
  if (s.vm == "microsoft" && s.max_hypervisor_leaf && *s.max_hypervisor_leaf >= kHypervIsolationLeaf) {
    if (auto iso = cpuid.query(kHypervIsolationLeaf, 0)) {
      unsigned type = iso->ebx & 0xf;  // 1 VBS, 2 SEV-SNP, 3 TDX
      if (type == 2 || type == 3) {
        s.confidential = type == 2 ? "SEV-SNP" : "TDX";
        log.add("cpuid 0x4000000c", "confidential", fmt::format("isolation type {}", type),
                "confidential " + *s.confidential + " guest (Hyper-V isolation, e.g. Azure CVM)");
      }
    }
  }
}

}  // namespace

CpuidSignals read_cpuid_signals(const CpuidSource& cpuid, EvidenceLog& log) {
  CpuidSignals s;
  if (!cpuid.available()) {
    std::string why = cpuid.origin();
    // A malformed cpuid.txt reaches the probe as "warning: ..." (see cli/session.cpp).
    if (why.rfind("warning:", 0) == 0) log.warn("cpuid", "cpuid", sanitize(why, 400), "cpuid.txt ignored; CPUID unknown");
    else log.add("cpuid", "cpuid", sanitize(why, 200), "unknown: CPUID not available");
    return s;
  }
  s.known = true;
  auto leaf1 = cpuid.query(1, 0);
  if (!leaf1) {
    log.warn("cpuid 0x1", "cpuid", "not recorded (" + cpuid.origin() + ")", "hypervisor bit unknown");
    return s;
  }
  s.hypervisor_bit = (leaf1->ecx >> 31) & 1u;
  if (!*s.hypervisor_bit) {
    log.add("cpuid 0x1 ecx[31]", "cpuid", "clear", "none: no hypervisor bit");
    log.vote("cpuid", "none");
    return s;
  }
  log.add("cpuid 0x1 ecx[31]", "cpuid", "set", "vm: running under a hypervisor (also Xen dom0, Hyper-V root)");

  for (int n = 0; n < kHypervisorBasesScanned; ++n) {
    std::uint32_t base = kHypervisorBase + static_cast<std::uint32_t>(n) * kHypervisorStride;
    auto regs = cpuid.query(base, 0);
    if (!regs) break;
    std::string sig = signature_of(*regs);
    if (n == 0) {
      s.signature = sig;
      s.max_hypervisor_leaf = regs->eax;
      const SignatureId* id = lookup(sig);
      s.vm = id ? id->vm : "vm-other";
      std::string implies = id ? fmt::format("{}: {}", id->vm, id->note) : "vm-other: unknown signature";
      log.add(fmt::format("cpuid 0x{:08x}", base), "cpuid", fmt::format("{} (max leaf 0x{:08x})", printable(sig), regs->eax),
              implies);
      continue;
    }
    // Further bases count only when they look like a hypervisor range of their own.
    if (regs->eax < base || regs->eax >= base + kHypervisorStride || !plausible_signature(sig)) continue;
    s.other_signatures.push_back(fmt::format("0x{:08x} {}", base, printable(sig)));
    const SignatureId* id = lookup(sig);
    log.add(fmt::format("cpuid 0x{:08x}", base), "cpuid", printable(sig),
            id ? fmt::format("also {} (a second interface; systemd reads only 0x40000000)", id->vm)
               : "a second hypervisor interface");
  }
  if (!s.vm) {
    s.vm = "vm-other";
    log.warn("cpuid 0x40000000", "cpuid", "not recorded", "hypervisor bit set but no signature leaf: vm-other");
  }
  log.vote("cpuid", *s.vm);
  read_confidential(cpuid, s, log);
  return s;
}

}  // namespace interprobe::virt
