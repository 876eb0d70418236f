// What the importers refuse or flag rather than accept silently: an nccl-tests
// output cut short, a result that was wrong in place, bus bandwidths that do not
// follow from the ranks or that no link could carry.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "calibration/import/import.hpp"
#include "myriad_source_paths.hpp"
#include "sim/cost/device_profile.hpp"
#include "tests/calibration/gzip_text.hpp"

namespace myriad::calibration {
namespace {

// nccl-tests' output for `ranks` ranks: the header, a "#  Rank" line a rank, one
// result line a (bytes, algbw GB/s) with busbw = algbw x `factor` printed to two
// places as nccl-tests prints it, and its closing lines when `closed`.
std::string nccl_output(int ranks, double factor,
                        const std::vector<std::pair<double, double>>& rows, bool closed = true,
                        const std::string& redop = "sum") {
  std::string text =
      fmt::format("# nThread 1 nGpus {} minBytes 1048576 maxBytes 1073741824\n#\n", ranks);
  for (int r = 0; r < ranks; ++r) {
    text += fmt::format(
        "#  Rank {:2d} Group  0 Pid 4242 on node01 device {:2d} [0x1b] NVIDIA "
        "H100 80GB HBM3\n",
        r, r);
  }
  text +=
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n";
  for (const auto& [bytes, algbw] : rows) {
    const double us = bytes / algbw / 1e3;
    text += fmt::format(
        "  {:10.0f}  {:10.0f}  float  {}  -1  {:7.2f}  {:6.2f}  {:6.2f}  0  {:7.2f}  {:6.2f}  "
        "{:6.2f}  0\n",
        bytes, bytes / 4, redop, us, algbw, algbw * factor, us, algbw, algbw * factor);
  }
  if (closed) text += "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 100\n#\n";
  return text;
}

std::string refusal(const std::string& text, const ImportOptions& o = {}) {
  try {
    (void)import_rows(text, "nccl.txt", ImportFormat::nccl_tests, o);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

std::string notes_of(const Imported& got) {
  std::string text;
  for (const std::string& n : got.notes) text += n + "\n";
  return text;
}

const std::vector<std::pair<double, double>> kSizes = {{1048576, 26.21}, {1073741824, 223.70}};

// The 8-rank header is 12 lines (header, "#", 8 ranks, column names), so the
// result lines are 12 and 13 and the closing lines 14 to 16.
TEST(ImportNcclTests, AnOutputCutShortIsRefusedAtItsLastLine) {
  const std::string whole = nccl_output(8, 1.75, kSizes);
  EXPECT_EQ(refusal(whole), "no error");
  // The closing lines lost: the run was killed, or the log copied in part.
  const std::string cut = nccl_output(8, 1.75, kSizes, false);
  EXPECT_EQ(refusal(cut),
            "nccl.txt: line 13: the output ends inside the table that starts at line 12, without "
            "nccl-tests' closing lines (\"# Out of bounds values\", \"# Avg bus bandwidth\"): cut "
            "short (a run that did not finish, or a log copied in part)");
  // Cut after the out-of-place columns of its last line: 9 columns, as an output
  // without in-place columns prints, but not in a table of 13.
  const std::string half = cut.substr(0, cut.rfind("  0  ")) + "  0\n";
  EXPECT_EQ(refusal(half),
            "nccl.txt: line 13: a result line of 9 columns where line 12 has 13: a line cut short");
  // Cut inside a number.
  EXPECT_NE(refusal(cut.substr(0, cut.rfind("223.70") + 4) + "\n")
                .find("nccl.txt: line 13: expected a result line of 9 or 13 columns"),
            std::string::npos);
  // A second run cut short after a whole one (16 lines): its result line is 28.
  const std::string two = whole + nccl_output(8, 1.75, {{2097152, 40.00}}, false);
  EXPECT_NE(refusal(two).find("the output ends inside the table that starts at line 28"),
            std::string::npos)
      << refusal(two);
}

TEST(ImportNcclTests, WrongElementsInPlaceFailTheRow) {
  std::string text = nccl_output(8, 1.75, kSizes);
  const auto last_zero = text.rfind("  0\n");
  text.replace(last_zero, 4, "  7\n");
  const Imported got = import_rows(text, "nccl.txt", ImportFormat::nccl_tests, {});
  EXPECT_EQ(got.rows[0].check, "pass");
  EXPECT_EQ(got.rows[1].check, "7 wrong elements in place (nccl-tests)");
}

// nccl-tests prints busbw = algbw x the factor of its collective on its ranks; a
// factor of other ranks or another collective is not the run's, and the fit
// would compute every busbw with it.
TEST(ImportNcclTests, BusbwMustBeAlgbwTimesTheFactorOfTheRanksThatRan) {
  const std::string eight = nccl_output(8, 1.75, kSizes);
  ImportOptions o;
  o.ranks = 16;  // 2 x 15 / 16 = 1.875
  o.collective = models::CollectiveKind::all_reduce;
  EXPECT_EQ(refusal(eight, o),
            "nccl.txt: line 12: busbw 45.87 GB/s is not algbw 26.21 GB/s x 1.875, the bus "
            "bandwidth factor of all_reduce on 16 ranks: the ranks (--ranks, the \"#  Rank\" "
            "lines, nThread x nGpus) or the collective (--collective) are not those that ran");
  o.ranks = 8;
  o.collective = models::CollectiveKind::all_gather;  // 7/8
  EXPECT_NE(refusal(eight, o).find("x 0.875, the bus bandwidth factor of all_gather on 8 ranks"),
            std::string::npos);
  // Without --collective, a ratio that is neither all-reduce's nor
  // reduce-scatter's on the ranks says so, and that the ranks may be wrong.
  ImportOptions ranks_only;
  ranks_only.ranks = 16;
  EXPECT_NE(refusal(eight, ranks_only)
                .find("nccl.txt: line 13: busbw / algbw is 1.75, neither all-reduce's 2(n-1)/n = "
                      "1.875 nor reduce-scatter's (n-1)/n = 0.9375 on 16 ranks"),
            std::string::npos)
      << refusal(eight, ranks_only);
  // To the places printed: 26.21 x 1.75 = 45.8675, printed 45.87, within
  // 0.005 + 1.75 x 0.005; one hundredth more is not.
  std::string off = eight;
  off.replace(off.find("45.87"), 5, "45.89");
  EXPECT_NE(refusal(off).find("line 12: busbw 45.89 GB/s is not algbw 26.21"), std::string::npos)
      << refusal(off);
}

BusCeiling h100() {
  return bus_ceiling_of(sim::load_profile(std::string(MYRIAD_PROFILE_DIR) + "/H100.json"));
}

// The ceiling is what the tool prices: NVLink 4's 450 GB/s per direction, and
// the H100 profile's ring capped at nvlink_ring_busbw_fraction 0.8222 of it
// (its curve was measured with NVLS); the A100's curve is a ring's, its peak the
// ceiling.
TEST(ImportNcclTests, TheBusCeilingIsTheProfilesLinkAndRingModel) {
  const BusCeiling c = h100();
  EXPECT_DOUBLE_EQ(c.link_Bps, 450e9);
  EXPECT_NEAR(c.ring_Bps, 0.8222 * 450e9, 1);
  EXPECT_EQ(c.device, "H100-SXM5-80GB");
  const BusCeiling a100 =
      bus_ceiling_of(sim::load_profile(std::string(MYRIAD_PROFILE_DIR) + "/A100-80GB.json"));
  EXPECT_DOUBLE_EQ(a100.link_Bps, 300e9);
  EXPECT_DOUBLE_EQ(a100.ring_Bps, 231.6e9);
}

TEST(ImportNcclTests, BusbwAboveTheLinksIsRefusedAndAboveTheRingCeilingFlagged) {
  ImportOptions o;
  o.bus_ceiling = h100();
  // 391.47 GB/s at 1 GiB: above the 370 GB/s ring, within the 450 GB/s link.
  const Imported got =
      import_rows(nccl_output(8, 1.75, kSizes), "nccl.txt", ImportFormat::nccl_tests, o);
  EXPECT_FALSE(got.rows[0].arguments.contains("above_ring_ceiling"));
  EXPECT_NE(got.rows[1]
                .arguments.value("above_ring_ceiling", "")
                .find("busbw 391.47 GB/s above "
                      "the 370 GB/s ring"),
            std::string::npos)
      << got.rows[1].arguments.dump();
  EXPECT_NE(notes_of(got).find("1 of 2 sizes (the first at line 13, 391.47 GB/s) have a busbw "
                               "above the 370 GB/s ring ceiling the tool prices"),
            std::string::npos)
      << notes_of(got);
  EXPECT_NE(notes_of(got).find("import with --algorithm nvls"), std::string::npos);
  // 480 GB/s as a ring: more than the link carries. NVLS gives it.
  const std::string nvls = nccl_output(8, 1.75, {{1048576, 26.21}, {1073741824, 274.29}});
  EXPECT_NE(refusal(nvls, o).find("nccl.txt: line 13: busbw 480.01 GB/s is more than "
                                  "H100-SXM5-80GB links of 450 GB/s per GPU and direction"),
            std::string::npos)
      << refusal(nvls, o);
  EXPECT_NE(refusal(nvls, o).find("--algorithm nvls"), std::string::npos);
  o.algorithm = models::CollectiveAlgorithm::nvls;
  const Imported by_nvls = import_rows(nvls, "nccl.txt", ImportFormat::nccl_tests, o);
  EXPECT_NE(notes_of(by_nvls).find("as nvls can"), std::string::npos) << notes_of(by_nvls);
  EXPECT_NE(by_nvls.rows[1].arguments.value("above_ring_ceiling", "").find("(nvls)"),
            std::string::npos);
  // Even NVLS sends each GPU's data and receives the result once: algbw at most
  // the link, busbw at most 2 x 7/8 x 450 = 787.5 GB/s.
  EXPECT_EQ(refusal(nccl_output(8, 1.75, {{1073741824, 449.00}}), o), "no error");
  EXPECT_NE(refusal(nccl_output(8, 1.75, {{1073741824, 451.00}}), o).find("at most 787.5 GB/s"),
            std::string::npos)
      << refusal(nccl_output(8, 1.75, {{1073741824, 451.00}}), o);
  // Without a profile nothing is checked, and the note says so.
  EXPECT_NE(notes_of(import_rows(nvls, "nccl.txt", ImportFormat::nccl_tests, {}))
                .find("bus bandwidths not checked against a link rate: --profile"),
            std::string::npos);
}

// A Kineto trace of GEMM calls, each with its kernel; `args` is what each
// cpu_op's args hold besides its External id.
std::string gemm_calls(const std::vector<std::string>& args) {
  std::string events;
  for (std::size_t i = 0; i < args.size(); ++i) {
    events += fmt::format(
        R"({{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "args": {{"External id": {}{}}}}},
  {{"ph": "X", "cat": "kernel", "name": "sm90_gemm", "dur": 10.0, "args": {{"External id": {}}}}},
  )",
        i + 1, args[i], i + 1);
  }
  return R"({"traceEvents": [)" + events +
         R"({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "dur": 250.0},
  {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "args": {}}]})";
}

const std::string kShapes =
    R"(, "Input Dims": [[4096, 1024], [1024, 2048]], "Input type": ["float", "float"])";

// PyTorch records shapes only with record_shapes=True: a trace without any is
// refused, saying so and how to record it, rather than imported as nothing.
TEST(ImportKineto, ATraceWithoutShapesIsRefusedSayingHowToRecordThem) {
  try {
    (void)import_rows(gemm_calls({"", ""}), "t.json", ImportFormat::kineto, {});
    FAIL() << "a trace without shapes was imported";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "t.json: traceEvents[0]: aten::mm records no input shapes (\"Input Dims\"), nor does "
              "any op in the trace (2 calls of 1 ops Myriad prices have kernels): it was recorded "
              "without shapes, and Myriad prices GEMMs, attention and memory-bound ops by them. "
              "Record again with torch.profiler.profile(record_shapes=True, ...)");
  }
  // Where other ops have shapes, the calls without are left out and counted.
  const Imported got =
      import_rows(gemm_calls({kShapes, "", ""}), "t.json", ImportFormat::kineto, {});
  ASSERT_EQ(got.rows.size(), 1U);
  const std::string notes = notes_of(got);
  EXPECT_NE(notes.find("kernels of 2 calls of aten::mm (0.02 ms), an op Myriad prices, left out: "
                       "no input shapes (\"Input Dims\") (the first at traceEvents[2])"),
            std::string::npos)
      << notes;
}

// Nothing in a trace is passed over unsaid: ops Myriad prices whose calls it
// cannot use, op events no kernel can be linked to, and events of other kinds
// (with their GPU time: copies are not kernels).
TEST(ImportKineto, WhatIsLeftOutIsCountedWithItsFirstEvent) {
  const std::string unknown_type =
      R"(, "Input Dims": [[64, 64], [64, 64]], "Input type": ["c10::complex<float>", "float"])";
  const std::string empty =
      R"(, "Input Dims": [[0, 64], [64, 64]], "Input type": ["float", "float"])";
  const Imported got =
      import_rows(gemm_calls({kShapes, unknown_type, empty}), "t.json", ImportFormat::kineto, {});
  const std::string notes = notes_of(got);
  EXPECT_NE(notes.find("kernels of 1 calls of aten::mm (0.01 ms), an op Myriad prices, left out: "
                       "an input type of no size Myriad knows (the first at traceEvents[2])"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("left out: an empty or mismatched shape (the first at traceEvents[4])"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("1 ATen op events without an integer \"External id\": no kernel is linked "
                       "to them (the first at traceEvents[7])"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("1 events neither ATen ops nor kernels, not read: 1 gpu_memcpy (0.25 ms on "
                       "the GPU)"),
            std::string::npos)
      << notes;
}

using test_support::gzip_text;

std::string import_error(const std::string& text, ImportFormat format, const ImportOptions& o) {
  try {
    (void)import_rows(text, "t.json.gz", format, o);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

// PyTorch writes *.pt.trace.json.gz when asked a .gz name: the same rows as the
// JSON it holds, recognised by gzip's magic bytes, whatever the name; several
// members one after the other are one input, as gunzip reads them.
TEST(ImportGzip, ACompressedInputGivesTheRowsOfWhatItHolds) {
  const std::string trace = gemm_calls({kShapes, kShapes});
  const Imported plain = import_rows(trace, "t.json", ImportFormat::kineto, {});
  const Imported packed = import_rows(gzip_text(trace), "t.json", ImportFormat::kineto, {});
  ASSERT_EQ(packed.rows.size(), 1U);
  EXPECT_EQ(packed.rows[0].name, plain.rows[0].name);
  EXPECT_EQ(packed.rows[0].times_s, plain.rows[0].times_s);
  EXPECT_EQ(packed.notes.front(), fmt::format("gzip: {} decompressed", size_text(trace.size())));
  const std::size_t half = trace.size() / 2;
  const Imported members =
      import_rows(gzip_text(trace.substr(0, half)) + gzip_text(trace.substr(half)), "t.json",
                  ImportFormat::kineto, {});
  EXPECT_EQ(members.rows[0].times_s, plain.rows[0].times_s);
  const std::string nccl = nccl_output(8, 1.75, kSizes);
  EXPECT_EQ(import_rows(gzip_text(nccl), "n.txt.gz", ImportFormat::nccl_tests, {}).rows.size(), 2U);
}

TEST(ImportGzip, ACompressedInputCutShortCorruptOrTrailedIsRefused) {
  const std::string packed = gzip_text(gemm_calls({kShapes, kShapes}));
  const std::string where = "t.json.gz: cannot read kineto input: ";
  EXPECT_EQ(import_error(packed.substr(0, packed.size() - 12), ImportFormat::kineto, {}),
            where + "the gzip stream stops before its end: the file is cut short");
  std::string corrupt = packed;
  corrupt[corrupt.size() - 6] = static_cast<char>(corrupt[corrupt.size() - 6] ^ 0x55);  // its CRC
  EXPECT_EQ(import_error(corrupt, ImportFormat::kineto, {}),
            where + "not a valid gzip stream (incorrect data check)");
  EXPECT_EQ(import_error(packed + "trailing text\n", ImportFormat::kineto, {}),
            where + "bytes after the end of the gzip stream that are not another gzip member");
}

// A gzip bomb: 16 MiB of one byte compress to 16 KiB. Its decompressed size is
// held to the cap before any of it is parsed (as a file's size is checked before
// it is read): the refusal names the cap, not the JSON, though the text is not
// JSON from its first byte; a JSON bomb is refused the same way.
TEST(ImportGzip, ABombIsRefusedAtTheCapBeforeItIsParsed) {
  ImportOptions o;
  o.max_input_bytes = std::uint64_t{1} << 19;
  const std::string cap =
      "t.json.gz: cannot read kineto input: more than the 512 KiB cap for kineto input once "
      "decompressed (--max-input-size raises it)";
  const std::string zeros = gzip_text(std::string(std::size_t{16} << 20, '\0'));
  EXPECT_LT(zeros.size(), std::size_t{1} << 15);
  EXPECT_EQ(import_error(zeros, ImportFormat::kineto, o), cap);
  std::string events = R"({"traceEvents": [)";
  for (int i = 0; i < 300'000; ++i) events += "{},";  // 900 KB
  EXPECT_EQ(import_error(gzip_text(events), ImportFormat::kineto, o), cap);
  // Within the cap the same bytes are parsed, and the JSON is what is wrong.
  o.max_input_bytes = std::uint64_t{1} << 20;
  EXPECT_NE(import_error(gzip_text(events), ImportFormat::kineto, o).find("t.json.gz: JSON: "),
            std::string::npos);
}

}  // namespace
}  // namespace myriad::calibration
