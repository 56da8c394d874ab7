// End-to-end tests of the bef-dump tool on the sample artifact: text and
// JSON output (with the checksums, recomputed here with xxHash), and
// one-line errors (a checksum mismatch among them). bef-dump is found next to the test
// binary's build tree (build/tests/X -> build/tools/bef-dump/bef-dump) or
// through $KILN_BEF_DUMP; without it the tests are skipped, saying so.
// Expected text is written by hand from tests/support/sample_artifact.h.
#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "serialization/artifact.h"
#include "serialization/bef_checksum.h"
#include "tests/support/sample_artifact.h"

namespace kiln::bef {
namespace {

namespace fs = std::filesystem;

std::string FindBefDump() {
  if (const char* env = std::getenv("KILN_BEF_DUMP")) return env;
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (error) return "";
  for (const fs::path& candidate : {exe.parent_path().parent_path() / "tools/bef-dump/bef-dump",
                                    exe.parent_path() / "tools/bef-dump/bef-dump"}) {
    if (fs::exists(candidate)) return candidate.string();
  }
  return "";
}

struct Result {
  int code = -1;
  std::string out, err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class BefDumpTool : public ::testing::Test {
 protected:
  void SetUp() override {
    tool_ = FindBefDump();
    if (tool_.empty()) GTEST_SKIP() << "bef-dump not built (set KILN_BEF_DUMP to its path)";
    dir_ = ::testing::TempDir() + "/bef_dump_tool_test_" + std::to_string(getpid());
    fs::create_directories(dir_);
    sample_ = dir_ + "/sample.bef";
    ASSERT_TRUE(WriteArtifactFile(kiln::testing::SampleArtifact(), sample_).ok());
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  Result Run(const std::string& args) {
    Result r;
    const std::string out = dir_ + "/out", err = dir_ + "/err";
    const int status = std::system((tool_ + " " + args + " >" + out + " 2>" + err).c_str());
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = ReadFile(out);
    r.err = ReadFile(err);
    return r;
  }

  std::string tool_, dir_, sample_;
};

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// "0x%016x" of XXH3-64 of `data`, computed here with xxHash.
template <typename Bytes>
std::string Xxh3Hex(const Bytes& data) {
  char hex[24];
  std::snprintf(hex, sizeof hex, "0x%016llx",
                static_cast<unsigned long long>(XXH3_64bits(data.data(), data.size())));
  return hex;
}

// The sample's checksummed sections in bef-dump's order, with the XXH3-64
// of their bytes.
std::vector<std::pair<std::string, std::string>> SampleSections() {
  const Artifact a = kiln::testing::SampleArtifact();
  const KernelImage& cuda = a.kernel_images[0];
  return {{"cubin sm_90 of kernel image 'cuda'", Xxh3Hex(cuda.cubins[0].data)},
          {"cubin sm_80 of kernel image 'cuda'", Xxh3Hex(cuda.cubins[1].data)},
          {"PTX of kernel image 'cuda'", Xxh3Hex(cuda.ptx)},
          {"host kernel image 'host-x86_64'", Xxh3Hex(a.kernel_images[1].shared_object)},
          {"constant 0 ('constant.1')", Xxh3Hex(a.program.constants[0].bytes)}};
}

TEST_F(BefDumpTool, TextShowsEverySection) {
  const Result r = Run(sample_);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // Each expected line, in order of appearance.
  const std::vector<std::pair<std::string, std::string>> sections = SampleSections();
  const std::vector<std::string> lines = {
      ", .bef 3.x)\nchecksums: xxh3-64, file 0x",
      "  " + sections[0].first + ": " + sections[0].second + " (7 bytes at offset ",
      "  " + sections[1].first + ": " + sections[1].second + " (5 bytes at offset ",
      "  " + sections[2].first + ": " + sections[2].second + " (27 bytes at offset ",
      "  " + sections[3].first + ": " + sections[3].second + " (8 bytes at offset ",
      "  " + sections[4].first + ": " + sections[4].second + " (16 bytes at offset ",
      "producer: kiln-test 0.1\n",
      "targets: cuda host-x86_64\n",
      "devices: 4 (4 replicas x 1 partitions)\n",
      "signature:\n  parameter 0: f32[4,4]{1,0}\n    {} -> a0[0:64]\n",
      "  alias: output {1} <- parameter 1 {0} (may-alias)\n",
      // 64 + 32 + 4 + 64 + 16 + 4096 = 4276 bytes.
      "allocations: 6, 4276 bytes\n  a0 size=64 align=64 parameter 0 {}\n",
      "  a5 size=4096 align=64 temp\n",
      "constants: 1, 16 bytes\n  c0 constant.1 16 bytes: 00 00 80 3f",
      // ".version 8.0\n.target sm_90\n" is 13 + 14 = 27 bytes.
      "kernels:\n  cuda (cuda): 3 kernels, cubin sm_90 7 bytes, cubin sm_80 5 bytes, ptx 27 bytes\n"
      "    fusion_3 grid=(1,1,1) block=(64,1,1) users=1\n",
      "  host-x86_64 (host): 3 kernels, shared object 8 bytes\n    fusion_3 units=1x1 users=1\n",
      "program: 29 thunks\n  kernel fusion.3 fn=fusion_3 grid=(1,1,1) block=(64,1,1) "
      "args=[a0[0:64], a4[0:16], a5[0:64] (written)]  ; hlo: add.1, multiply.2\n",
      "  while while.9 pred=a5[700:701] trip_count=10\n    condition:\n",
      "    branch 2:\n      memset memset.b2 a5[800:804] pattern=0x00000002\n",
      "  rng-get-and-update-state rng-get-and-update-state.19 a5[3100:3116] delta=-131072\n",
  };
  size_t pos = 0;
  for (const std::string& line : lines) {
    const size_t found = r.out.find(line, pos);
    ASSERT_NE(found, std::string::npos) << "missing, or out of order:\n" << line << "\nin:\n" << r.out;
    pos = found + line.size();
  }
  EXPECT_FALSE(Contains(r.out, "hlo:\nHloModule"));
  EXPECT_TRUE(Contains(Run("--hlo " + sample_).out, "hlo:\nHloModule sample\n"));
}

TEST_F(BefDumpTool, JsonIsValidAndStructured) {
  const Result r = Run("--json --hlo " + sample_);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string json_path = dir_ + "/dump.json";
  std::ofstream(json_path) << r.out;
  // An independent parser checks syntax and a few values; 0xff in the
  // custom call's backend config is not UTF-8 and must become U+FFFD.
  const std::string script =
      "import json,sys\n"
      "d = json.load(open(sys.argv[1]))\n"
      "p = d['program']\n"
      "assert d['targets'] == ['cuda', 'host-x86_64'], d['targets']\n"
      "assert [a['size'] for a in d['allocations']] == [64, 32, 4, 64, 16, 4096]\n"
      "assert d['allocations'][1]['kind'] == 'parameter' and d['allocations'][1]['output_index'] == [1]\n"
      "assert len(p) == 23 and p[0]['kind'] == 'kernel' and p[0]['kernel_name'] == 'fusion_3'\n"
      "assert p[0]['args'][2] == {'slice': {'allocation': 5, 'offset': 0, 'size': 64}, 'written': True}\n"
      "assert p[0]['hlo'][0]['op_name'] == 'jit(f)/add' and p[0]['cost']['bytes_read'] == 144\n"
      "assert p[1]['beta'] == 0.5 and p[1]['rhs_transposed'] is True\n"
      "assert p[7]['trip_count'] == 10 and p[7]['body'][0]['name'] == 'add.21'\n"
      "assert len(p[8]['branches']) == 3 and p[8]['branches'][2][0]['pattern'] == 2\n"
      "assert p[12]['split_dimension'] == 0 and p[9]['channel_id'] == 1 and p[10]['dimension'] == 0\n"
      "assert p[13]['source_target_pairs'] == [[0, 1], [1, 0]]\n"
      "assert d['replica_count'] == 4 and d['num_partitions'] == 1\n"
      "assert p[9]['device_groups'] == [[0, 1], [2, 3]] and p[9]['async_id'] == 0\n"
      "assert p[13]['device_pairs'] == [[0, 1], [1, 0], [2, 3], [3, 2]]\n"
      "assert p[21]['async_id'] == 0 and p[22]['id'] == 'partition'\n"
      "assert p[14]['backend_config'] == '{\"k\": 1}\\x00\\x01\\ufffd', repr(p[14]['backend_config'])\n"
      "assert p[15]['kind'] == 'rng-get-and-update-state' and p[15]['delta'] == -131072\n"
      "assert p[15]['state'] == {'allocation': 5, 'offset': 3100, 'size': 16}\n"
      "assert p[16]['kind'] == 'cholesky' and p[16]['lower'] is True and p[16]['n'] == 4\n"
      "assert p[16]['info'] == {'allocation': 5, 'offset': 3264, 'size': 4} and p[16]['type'] == 'f32'\n"
      "assert p[17]['kind'] == 'triangular-solve' and p[17]['transpose_a'] == 'ADJOINT'\n"
      "assert p[17]['left_side'] is True and p[17]['unit_diagonal'] is True and p[17]['batch'] == 2\n"
      "assert p[18]['kind'] == 'linalg' and p[18]['op'] == 'gesdd' and p[18]['mode'] == 'S'\n"
      "assert len(p[18]['results']) == 4 and p[18]['m'] == 3 and p[18]['n'] == 2\n"
      "assert p[19]['kind'] == 'radix-sort' and p[19]['order'] == 'float-numpy' and p[19]['descending'] is True\n"
      "assert p[19]['values_out'] == {'allocation': 5, 'offset': 3840, 'size': 64} and p[19]['rows'] == 2\n"
      "assert d['kernel_images'][0]['cubins'][0] == {'sm_arch': 90, 'size': 7}\n"
      "assert [k['users'] for i in d['kernel_images'] for k in i['kernels']] == [1] * 6\n"
      "assert d['hlo_text'].startswith('HloModule sample')\n"
      "c = d['checksums']\n"
      "assert c['algorithm'] == 'xxh3-64' and len(c['file']) == 18, c\n"
      "assert [[s['section'], s['checksum']] for s in c['sections']] == json.load(open(sys.argv[2])), c\n"
      "assert [s['size'] for s in c['sections']] == [7, 5, 27, 8, 16], c\n"
      "b = open(sys.argv[3], 'rb').read()\n"
      "assert b[c['sections'][4]['offset']:][:16] == bytes.fromhex('0000803f000000400000404000008040')\n";
  const std::string script_path = dir_ + "/check.py";
  std::ofstream(script_path) << script;
  if (std::system("python3 -c 'import json' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 not available to parse the JSON";
  }
  std::string sections = "[";
  for (const auto& [name, hex] : SampleSections()) {
    sections += std::string(sections.size() > 1 ? ", " : "") + "[\"" + name + "\", \"" + hex + "\"]";
  }
  sections += "]";
  const std::string sections_path = dir_ + "/sections.json";
  std::ofstream(sections_path) << sections;
  EXPECT_EQ(std::system(("python3 " + script_path + " " + json_path + " " + sections_path + " " + sample_).c_str()), 0)
      << r.out;
}

// A kernel that two Kernel thunks launch (deduplicated fusions) is listed
// once per image with its two users; one nothing launches has none.
TEST_F(BefDumpTool, KernelsShowTheirUsers) {
  Artifact a = kiln::testing::SampleArtifact();
  thunks::Thunk again = a.program.root.thunks[0];
  again.info.profile_name = "fusion.4";
  a.program.root.thunks.push_back(again);
  for (KernelImage& image : a.kernel_images) image.kernels.push_back({"unused", {}});
  const std::string path = dir_ + "/shared.bef";
  ASSERT_TRUE(WriteArtifactFile(a, path).ok());
  Result r = Run(path);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "cuda (cuda): 4 kernels")) << r.out;
  EXPECT_TRUE(Contains(r.out, "    fusion_3 grid=(1,1,1) block=(64,1,1) users=2\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "    fusion_3 units=1x1 users=2\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "    unused units=1x1 users=0\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "  kernel fusion.4 fn=fusion_3 ")) << r.out;
  r = Run("--json " + path);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "\"name\": \"fusion_3\"")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"users\": 2")) << r.out;
}

TEST_F(BefDumpTool, ErrorsAreOneLine) {
  Result r = Run(dir_ + "/missing.bef");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "bef-dump: error: cannot open " + dir_ +
                       "/missing.bef: No such file or directory\n");

  // The sample cut in half.
  std::string bytes = ReadFile(sample_);
  const std::string cut = dir_ + "/cut.bef";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  r = Run(cut);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "bef-dump: error: " + cut + ": truncated .bef file (" +
                       std::to_string(bytes.size() / 2) + " bytes, the file records " +
                       std::to_string(bytes.size()) + ")\n");

  // A damaged byte in the host shared object.
  std::vector<uint8_t> sample(bytes.begin(), bytes.end());
  StatusOr<FileChecksums> checksums = ReadChecksums(sample);
  ASSERT_TRUE(checksums.ok());
  ASSERT_EQ(checksums->sections[3].section, "host kernel image 'host-x86_64'");
  bytes[checksums->sections[3].offset + 5] ^= 0x04;
  const std::string damaged = dir_ + "/damaged.bef";
  std::ofstream(damaged, std::ios::binary) << bytes;
  r = Run(damaged);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "bef-dump: error: " + damaged +
                       ": corrupt .bef file: checksum mismatch in host kernel image 'host-x86_64'\n");

  r = Run("");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "bef-dump: error: expected exactly one MODULE.bef, got 0 (see --help)\n");
  EXPECT_EQ(Run("--help").code, 0);
}

}  // namespace
}  // namespace kiln::bef
