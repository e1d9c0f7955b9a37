// `topo --nccl-topo`: the file is checked against the rules of NCCL's own loader
// (NVIDIA/nccl src/graph/xml.cc xmlGetNode/xmlLoadSub and the ncclTopoXmlLoad* handlers,
// topo.cc kvDictPciGen/kvDictCpuArch/kvDictCpuVendor, xml.h MAX_STR_LEN 255, MAX_ATTR_COUNT 16),
// which is far stricter than XML and falls back silently on values it does not know.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "report/render/nccl_topology.hpp"
#include "support/run_binary.hpp"
#include "support/temp_tree.hpp"

namespace fs = std::filesystem;
using interprobe::testing::run_interprobe;

namespace {

std::string fixture(const std::string& name) { return std::string(INTERPROBE_FIXTURES) + "/topology/" + name; }

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::vector<int> children;
  int parent = -1;
};

// NCCL's loader, as rules: returns the problems (empty: NCCL reads the file as written).
struct LoadedTopology {
  std::vector<Element> elements;
  std::vector<std::string> problems;
};

LoadedTopology load_like_nccl(const std::string& text) {
  LoadedTopology t;
  auto problem = [&](const std::string& p) { t.problems.push_back(p); };
  if (text.rfind("<?", 0) == 0) problem("prolog <?xml ...?>: NCCL reads it as an element that never closes");
  if (text.find('\t') != std::string::npos) problem("a tab: NCCL's parser skips only spaces and newlines");
  static const std::map<std::string, std::set<std::string>> children = {
      {"", {"system"}},          {"system", {"cpu"}},   {"cpu", {"pci", "nic"}},
      {"pci", {"pci", "gpu", "nic", "pcilink"}},        {"gpu", {"nvlink", "c2c"}}, {"nic", {"net"}}};
  static const std::regex tag(R"(^ *<(/?)([a-z]+)((?: [a-z_]+="[^"]*")*)(/?)>$)");
  static const std::regex attr(R"( ([a-z_]+)="([^"]*)\")");
  std::vector<int> stack;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.find_first_not_of(' ') == std::string::npos) continue;
    std::smatch m;
    if (!std::regex_match(line, m, tag)) {
      problem("line " + std::to_string(number) + " is not one tag with quoted values: " + line);
      continue;
    }
    std::string name = m[2];
    if (m[1] == "/") {
      if (stack.empty() || t.elements[static_cast<std::size_t>(stack.back())].name != name)
        problem("line " + std::to_string(number) + ": closing </" + name + "> does not match");
      else
        stack.pop_back();
      continue;
    }
    std::string parent_name = stack.empty() ? "" : t.elements[static_cast<std::size_t>(stack.back())].name;
    if (!children.at(children.count(parent_name) ? parent_name : "").count(name))
      problem("line " + std::to_string(number) + ": <" + name + "> inside <" + parent_name + "> is skipped by NCCL");
    Element e;
    e.name = name;
    e.parent = stack.empty() ? -1 : stack.back();
    std::string attrs = m[3];
    for (std::sregex_iterator a(attrs.begin(), attrs.end(), attr), end; a != end; ++a) {
      if ((*a)[2].length() > 255) problem("a value longer than 255 bytes on line " + std::to_string(number));
      e.attrs[(*a)[1]] = (*a)[2];
    }
    if (e.attrs.size() > 16) problem("more than 16 attributes on line " + std::to_string(number));
    t.elements.push_back(e);
    int index = static_cast<int>(t.elements.size()) - 1;
    if (e.parent >= 0) t.elements[static_cast<std::size_t>(e.parent)].children.push_back(index);
    if (m[4] != "/") stack.push_back(index);
  }
  if (!stack.empty()) problem("unterminated <" + t.elements[static_cast<std::size_t>(stack.back())].name + ">");
  if (t.elements.size() > 255) problem("more than 255 elements");
  static const std::set<std::string> speeds = {"2.5 GT/s",       "5 GT/s",         "8 GT/s",         "16 GT/s",
                                               "32 GT/s",        "2.5 GT/s PCIe",  "5.0 GT/s PCIe",  "8.0 GT/s PCIe",
                                               "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe"};
  std::set<std::string> numa_ids;
  for (const auto& e : t.elements) {
    auto get = [&](const char* k) { return e.attrs.count(k) ? e.attrs.at(k) : std::string(); };
    if (e.name == "system" && get("version") != "1") problem("system version must be \"1\"");
    if (e.name == "cpu") {
      if (!std::regex_match(get("numaid"), std::regex("^[0-9]+$"))) problem("cpu without a numaid");
      if (!numa_ids.insert(get("numaid")).second) problem("numaid " + get("numaid") + " twice");
      if (!std::regex_match(get("affinity"), std::regex("^[0-9a-f]{8}(,[0-9a-f]{8})*$")))
        problem("affinity '" + get("affinity") + "' is not a sysfs cpumap (NCCL reads a CPU list as empty)");
      if (!std::set<std::string>{"x86_64", "arm64", "ppc64"}.count(get("arch"))) problem("arch '" + get("arch") + "'");
      if (e.attrs.count("vendor") && !std::set<std::string>{"GenuineIntel", "AuthenticAMD"}.count(get("vendor")))
        problem("vendor '" + get("vendor") + "'");
    }
    if (e.name == "pci") {
      if (!std::regex_match(get("busid"), std::regex(R"(^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]$)")))
        problem("busid '" + get("busid") + "' is not NCCL's lower-case dddd:bb:dd.f");
      if (!std::regex_match(get("class"), std::regex("^0x[0-9a-f]{6}$"))) problem("class '" + get("class") + "'");
      if (!speeds.count(get("link_speed")))
        problem("link_speed '" + get("link_speed") + "' is not in NCCL's table: it would read as Gen3");
      if (!std::regex_match(get("link_width"), std::regex("^([1-9]|[12][0-9]|3[0-2])$")))
        problem("link_width '" + get("link_width") + "'");
    }
  }
  return t;
}

struct GpuPlacement {
  std::string busid, switch_busid, numaid, link_speed;
};

std::vector<GpuPlacement> gpus_of(const LoadedTopology& t) {
  std::vector<GpuPlacement> out;
  for (const auto& e : t.elements) {
    if (e.name != "pci" || e.attrs.at("class").rfind("0x03", 0) != 0) continue;
    const auto& sw = t.elements.at(static_cast<std::size_t>(e.parent));
    const auto& cpu = t.elements.at(static_cast<std::size_t>(sw.parent));
    out.push_back({e.attrs.at("busid"), sw.attrs.at("busid"), cpu.attrs.at("numaid"), e.attrs.at("link_speed")});
  }
  return out;
}

}  // namespace

// The checker itself fails the mistakes the reference lists (a prolog, a tab, a CPU list as
// affinity, an upper-case busid, "32.0 GT/s" without " PCIe", a gpu outside a pci).
TEST(NcclTopoFile, TheLoaderRulesRejectWhatNcclWouldMisread) {
  const std::string good =
      "<system version=\"1\">\n  <cpu numaid=\"0\" affinity=\"0000ffff\" arch=\"x86_64\">\n"
      "    <pci busid=\"ffff:ff:01.0\" class=\"0x060400\" link_speed=\"32 GT/s\" link_width=\"16\">\n"
      "      <pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"32 GT/s\" link_width=\"16\"/>\n"
      "    </pci>\n  </cpu>\n</system>\n";
  EXPECT_TRUE(load_like_nccl(good).problems.empty());
  auto bad = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return load_like_nccl(s).problems.size();
  };
  EXPECT_GT(bad("<system", "<?xml version=\"1.0\"?>\n<system"), 0u);
  EXPECT_GT(bad("  <cpu", "\t<cpu"), 0u);
  EXPECT_GT(bad("affinity=\"0000ffff\"", "affinity=\"0-15\""), 0u);
  EXPECT_GT(bad("0000:01:00.0", "0000:0A:00.0"), 0u);
  EXPECT_GT(bad("link_speed=\"32 GT/s\" link_width=\"16\"/>", "link_speed=\"32.0 GT/s\" link_width=\"16\"/>"), 0u);
  EXPECT_GT(bad("<cpu numaid=\"0\" ", "<cpu "), 0u);
  EXPECT_GT(bad("    </pci>\n", ""), 0u);
  EXPECT_GT(bad("<system version=\"1\">\n", "<system version=\"1\">\n  <gpu dev=\"0\"/>\n"), 0u);
}

TEST(NcclTopoFile, CpumapAndLinkSpeedSpellings) {
  using interprobe::render::cpumap_string;
  EXPECT_EQ(cpumap_string({0, 1, 2, 3}), "0000000f");
  EXPECT_EQ(cpumap_string({32, 33}), "00000003,00000000");
  std::set<int> first48;
  for (int c = 0; c < 48; ++c) first48.insert(c);
  EXPECT_EQ(cpumap_string(first48), "0000ffff,ffffffff");
  EXPECT_EQ(interprobe::render::nccl_link_speed_string(32), "32 GT/s");
  EXPECT_EQ(interprobe::render::nccl_link_speed_string(2.5), "2.5 GT/s");
  EXPECT_EQ(interprobe::render::nccl_link_speed_string(64), "64.0 GT/s PCIe");
  EXPECT_FALSE(interprobe::render::nccl_known_link_gts(20));
}

// The Proxmox guest: 8 H100 PCIe flat under emulated Gen4 root ports, NUMA hidden. The file puts
// them under one switch at their own Gen5 link, and says what that changes.
TEST(NcclTopoFile, ProxmoxGuestGetsOneSwitchAtTheGpusOwnRate) {
  interprobe::testing::TempTree tree;
  auto out = tree.path() / "nccl-topo.xml";
  auto p = run_interprobe({"topo", "--root", fixture("proxmox-q35-8gpu-rootports"), "-q", "--nccl-topo", out.string()});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto loaded = load_like_nccl(read_text(out));
  EXPECT_TRUE(loaded.problems.empty()) << ::testing::PrintToString(loaded.problems) << read_text(out);
  auto gpus = gpus_of(loaded);
  ASSERT_EQ(gpus.size(), 8u);
  for (const auto& g : gpus) {
    EXPECT_EQ(g.switch_busid, gpus.front().switch_busid);
    EXPECT_EQ(g.link_speed, "32 GT/s");
    EXPECT_EQ(g.numaid, "0");
  }
  EXPECT_EQ(gpus.front().busid, "0000:01:00.0");
  EXPECT_NE(p.err.find("28 pairs PHB -> PIX"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("16 GT/s x16 (24 GB/s to NCCL) -> 32 GT/s x16 (48 GB/s to NCCL)"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("NCCL_TOPO_FILE"), std::string::npos);
  EXPECT_NE(p.err.find("NCCL_TOPO_DUMP_FILE"), std::string::npos);
}

// The operator states the host's NUMA split and rate: two CPU elements with the stated cpumaps,
// GPUs 0-3 and 4-7 under a switch each, and pairs across them SYS.
TEST(NcclTopoFile, StatedNumaSplitAndRateAreWrittenAsNcclReadsThem) {
  interprobe::testing::TempTree tree;
  auto out = tree.path() / "split.xml";
  auto p = run_interprobe({"topo", "--root", fixture("proxmox-q35-8gpu-rootports"), "-q", "--nccl-topo", out.string(),
                           "--nccl-link-speed", "16", "--nccl-numa", "0=0-3@0-7", "--nccl-numa", "1=4-7@8-15"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto text = read_text(out);
  auto loaded = load_like_nccl(text);
  EXPECT_TRUE(loaded.problems.empty()) << ::testing::PrintToString(loaded.problems) << text;
  EXPECT_NE(text.find("<cpu numaid=\"0\" affinity=\"000000ff\""), std::string::npos) << text;
  EXPECT_NE(text.find("<cpu numaid=\"1\" affinity=\"0000ff00\""), std::string::npos) << text;
  auto gpus = gpus_of(loaded);
  ASSERT_EQ(gpus.size(), 8u);
  EXPECT_EQ(gpus[3].numaid, "0");
  EXPECT_EQ(gpus[4].numaid, "1");
  EXPECT_NE(gpus[3].switch_busid, gpus[4].switch_busid);
  EXPECT_EQ(gpus[0].link_speed, "16 GT/s");
  EXPECT_NE(p.err.find("12 pairs PHB -> PIX, 16 pairs PHB -> SYS"), std::string::npos) << p.err;
}

// Bad input exits 2 naming what was wrong; nothing is written.
TEST(NcclTopoFile, BadFactsExitTwoNamingThemAndWriteNothing) {
  interprobe::testing::TempTree tree;
  auto out = tree.path() / "x.xml";
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"topo", "--root", fixture("proxmox-q35-8gpu-rootports"), "-q", "--nccl-topo", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_interprobe(args);
  };
  auto p = run({"--nccl-link-speed", "20"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("--nccl-link-speed 20"), std::string::npos) << p.err;
  p = run({"--nccl-numa", "0=0-8@0-15"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("there is no GPU 8"), std::string::npos) << p.err;
  p = run({"--nccl-numa", "0=0-3@0-7"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("GPU 4 (0000:05:00.0) is in no NUMA node"), std::string::npos) << p.err;
  p = run({"--nccl-numa", "0:0-3"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("NODE=GPUS@CPUS"), std::string::npos) << p.err;
  EXPECT_FALSE(fs::exists(out));
  p = run_interprobe({"topo", "--root", fixture("proxmox-q35-8gpu-rootports"), "-q", "--nccl-numa", "0=0-3@0-7"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("add --nccl-topo FILE"), std::string::npos) << p.err;
}

// On bare metal with real PCIe switches NCCL reads the tree itself: no file, exit 2, and why.
TEST(NcclTopoFile, AMachineWithRealSwitchesIsLeftToNccl) {
  interprobe::testing::TempTree tree;
  auto out = tree.path() / "x.xml";
  auto p = run_interprobe({"topo", "--root", fixture("baremetal-2s-8gpu-pcie"), "-q", "--nccl-topo", out.string()});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("sits under the PCIe switch port"), std::string::npos) << p.err;
  EXPECT_FALSE(fs::exists(out));
}

// GPUs on the root bus of a q35 guest have zeroed link registers ("Unknown"): NCCL would read
// Gen3. Without a stated rate the file cannot be right, so it is refused naming the option; with
// one, it is written and the change says what NCCL read before.
TEST(NcclTopoFile, UnknownLinkRatesNeedTheStatedRate) {
  interprobe::testing::TempTree tree;
  auto out = tree.path() / "rootbus.xml";
  auto p = run_interprobe({"topo", "--root", fixture("q35-rootbus-gpus"), "-q", "--nccl-topo", out.string()});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("state it with --nccl-link-speed"), std::string::npos) << p.err;
  EXPECT_FALSE(fs::exists(out));
  p = run_interprobe({"topo", "--root", fixture("q35-rootbus-gpus"), "-q", "--nccl-topo", out.string(),
                      "--nccl-link-speed", "16"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto loaded = load_like_nccl(read_text(out));
  EXPECT_TRUE(loaded.problems.empty()) << ::testing::PrintToString(loaded.problems);
  EXPECT_EQ(gpus_of(loaded).size(), 4u);
  EXPECT_NE(p.err.find("4 GPU(s) unknown to the guest, read by NCCL as 8 GT/s x16 (12 GB/s to NCCL) -> 16 GT/s x16 (24 GB/s to NCCL)"),
            std::string::npos) << p.err;
}
