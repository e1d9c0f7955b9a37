// cpuid.txt of a --root tree or snapshot: any bytes parse or throw InputError naming the line.
#include <string>

#include "common/cpuid.hpp"
#include "common/errors.hpp"
#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace interprobe;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto cpuid = parse_cpuid_text(text, "cpuid.txt");
    fuzz::fuzz_require(cpuid.available(), "a parsed cpuid.txt is available");
    (void)cpuid.query(0, 0);
    (void)cpuid.query(0x40000000, 0);
  } catch (const InputError&) {
  }
  return 0;
}
