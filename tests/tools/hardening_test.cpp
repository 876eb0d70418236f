// Hostile and careless use of the `myriad` command: no input is overwritten, no
// output is half-written, no bad path is found after the work, no failed write
// passes for success, no nonsense number slips through an option, and no name
// from the input drives a terminal, a browser or a spreadsheet.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/scenario/text_file.hpp"
#include "myriad_source_paths.hpp"
#include "tests/tools/run_cli.hpp"
#include "tools/cli/cli.hpp"
#include "tools/cli/csv.hpp"
#include "tools/cli/printable_streambuf.hpp"
#include "tools/report/html_report.hpp"

namespace myriad::cli {
namespace {

namespace fs = std::filesystem;

using test_support::Result;

Result run_cli(const std::vector<std::string>& args, std::ostream* out_stream = nullptr) {
  return test_support::run_cli(args, nullptr, out_stream);
}

const std::string kExample =
    std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-70b-h100-2048.yaml";

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class Scratch : public testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() / ("myriad-hardening-" + std::to_string(::getpid()) + "-" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Expectation: an output naming an input (under any name) is refused before
// anything runs, and the input is left as it was.
TEST_F(Scratch, AnOutputThatIsAnInputIsRefused) {
  const fs::path input = dir_ / "job.yaml";
  fs::copy_file(kExample, input);
  const std::string before = slurp(input);
  fs::create_symlink(input, dir_ / "alias.yaml");
  for (const std::string& out :
       {input.string(), (dir_ / "alias.yaml").string(), (dir_ / "." / "job.yaml").string()}) {
    const Result r = run_cli({"estimate", input.string(), "--json", out});
    EXPECT_EQ(r.code, kExitBadInput) << out;
    EXPECT_NE(r.err.find("writing would destroy it"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << "the work ran before the output was checked";
  }
  EXPECT_EQ(slurp(input), before);
  // simulate's two outputs may not be the same file either.
  const Result both = run_cli({"simulate", input.string(), "--json", (dir_ / "x.json").string(),
                               "--trace", (dir_ / "x.json").string()});
  EXPECT_EQ(both.code, kExitBadInput);
  EXPECT_NE(both.err.find("another input or output has that name"), std::string::npos) << both.err;
}

// Expectation: a folder that is missing, unwritable or a folder given as a file is
// named before the work starts, for every verb that writes.
TEST_F(Scratch, BadOutputPathsAreFoundBeforeTheWork) {
  const std::string missing = (dir_ / "no" / "such" / "out.json").string();
  const std::vector<std::vector<std::string>> runs = {
      {"check", kExample, "--json", missing},
      {"estimate", kExample, "--json", missing},
      {"simulate", kExample, "--trace", missing},
      {"campaign", kExample, "--json", missing},
      {"campaign", kExample, "--events", dir_.string()},
      {"validate", "--json", missing},
      {"calibrate", "check", "--profile", std::string(MYRIAD_PROFILE_DIR) + "/H100.json", "--json",
       missing},
  };
  for (const auto& args : runs) {
    const Result r = run_cli(args);
    EXPECT_EQ(r.code, kExitBadInput) << args[0] << " " << args[1];
    EXPECT_TRUE(r.err.find("does not exist") != std::string::npos ||
                r.err.find("it is a folder") != std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << args[0] << ": worked before checking its outputs";
  }
  // '-' by habit for standard output: refused, not written as a file named '-'.
  const Result dash = run_cli({"estimate", kExample, "--json", "-"});
  EXPECT_EQ(dash.code, kExitBadInput);
  EXPECT_NE(dash.err.find("'-' is not standard output here"), std::string::npos) << dash.err;
  EXPECT_FALSE(fs::exists("-"));
  if (::geteuid() != 0) {  // root writes anywhere
    const fs::path locked = dir_ / "locked";
    fs::create_directories(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
    const Result r = run_cli({"estimate", kExample, "--json", (locked / "x.json").string()});
    EXPECT_EQ(r.code, kExitBadInput);
    EXPECT_NE(r.err.find("is not writable: Permission denied"), std::string::npos) << r.err;
  }
}

// Expectation: an output is replaced whole: the temporary file is renamed over it,
// none is left behind, and a write that cannot happen leaves the old file intact.
TEST_F(Scratch, OutputsAreWrittenWholeOrNotAtAll) {
  const fs::path out = dir_ / "report.json";
  { std::ofstream(out) << "the previous report\n"; }
  const Result r = run_cli({"estimate", kExample, "--json", out.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(slurp(out).find("\"step_time_s\""), std::string::npos);
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().filename(), "report.json") << "left behind: " << e.path();
  }
  // Through a link, the file it names is replaced and the link stays.
  fs::create_symlink(out, dir_ / "latest.json");
  models::scenario::write_file_atomically((dir_ / "latest.json").string(), "new\n", "test output");
  EXPECT_TRUE(fs::is_symlink(dir_ / "latest.json"));
  EXPECT_EQ(slurp(out), "new\n");
  // /dev/full: every write fails with ENOSPC, as on a full disk; the device is
  // written in place, never renamed over.
  if (fs::exists("/dev/full")) {
    EXPECT_THROW(models::scenario::write_file_atomically("/dev/full", "x", "test output"),
                 std::runtime_error);
  }
  try {
    models::scenario::write_file_atomically((dir_ / "no" / "x").string(), "x", "test output");
    FAIL() << "wrote into a missing folder";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write test output: No such file or directory"),
              std::string::npos)
        << e.what();
  }
}

// Expectation: a report that could not be written to standard output is a failure.
TEST(Hardening, AFailedWriteToStandardOutputIsAFailure) {
  std::ostringstream broken;
  broken.setstate(std::ios::badbit);
  const Result r = run_cli({"estimate", kExample}, &broken);
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_NE(r.err.find("cannot write to standard output"), std::string::npos) << r.err;
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--help"},
                                               {"--version"},
                                               {"estimate", "--help"},
                                               {"explain", "presets"}}) {
    std::ostringstream closed;
    closed.setstate(std::ios::badbit);
    EXPECT_EQ(run_cli(args, &closed).code, kExitFailure) << args[0];
  }
}

// Expectation: numeric options refuse NaN, infinity, zero where zero would turn a
// gate or a target off, and values past their documented bounds, naming the bounds
// compactly (not 309 digits).
TEST(Hardening, NumericOptionsRefuseNonsense) {
  const std::string profile = std::string(MYRIAD_PROFILE_DIR) + "/H100.json";
  const std::vector<std::vector<std::string>> runs = {
      {"calibrate", "--min-time", "nan"},
      {"calibrate", "check", "--profile", profile, "--max-error", "0"},
      {"calibrate", "check", "--profile", profile, "--max-error", "-1"},
      {"calibrate", "check", "--profile", profile, "--max-error", "nan"},
      {"campaign", kExample, "--days", "nan"},
      {"campaign", kExample, "--days", "1e12"},
      {"campaign", kExample, "--days", "inf"},
      {"campaign", kExample, "--days", "0"},
      {"campaign", kExample, "--tokens", "0"},
      {"campaign", kExample, "--tokens", "-5T"},
  };
  for (const auto& args : runs) {
    const Result r = run_cli(args);
    EXPECT_EQ(r.code, kExitBadInput) << args[args.size() - 2] << " " << args.back();
    EXPECT_LT(r.err.size(), 400U) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

// Expectation: input files that are folders, devices or not JSON are bad input
// (exit 2) with the file named, in calibrate as in every verb.
TEST_F(Scratch, UnreadableInputsAreBadInputNamed) {
  const fs::path not_json = dir_ / "rows.json";
  std::ofstream(not_json) << "{ not json";
  const std::vector<std::vector<std::string>> runs = {
      {"calibrate", "fit", dir_.string()},
      {"calibrate", "fit", not_json.string()},
      {"calibrate", "check", "--profile", dir_.string()},
      {"calibrate", "check", "--profile", not_json.string()},
      {"estimate", kExample, "--profile", dir_.string()},
      {"check", "/dev/zero"},
      {"check", dir_.string()},
  };
  for (const auto& args : runs) {
    const Result r = run_cli(args);
    EXPECT_EQ(r.code, kExitBadInput) << args[0] << " " << args.back();
    EXPECT_TRUE(r.err.find(dir_.string()) != std::string::npos ||
                r.err.find("/dev/zero") != std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("basic_ios"), std::string::npos) << r.err;  // no raw library text
  }
}

// Expectation: whatever the data's strings hold, the page's data element ends at
// its own </script> and holds the data exactly: no <, > or & (so no </script>, no
// <!-- and no <script> that would change how the browser reads on), no U+2028 or
// U+2029; and the title is HTML text.
TEST_F(Scratch, HtmlReportsEmbedAnyNameSafely) {
  for (const char* asset : {"report.js", "report.css", "node_modules/vega/build/vega.min.js",
                            "node_modules/vega-lite/build/vega-lite.min.js"}) {
    fs::create_directories((dir_ / asset).parent_path());
    std::ofstream(dir_ / asset) << "/* " << asset << " */\n";
  }
  const std::string hostile = "<!--<script> & </script><b x=\"'\">\u2028\u2029";
  const nlohmann::json data = {{"kind", "configurations"},
                               {"title", hostile},
                               {"rows", {{{"name", hostile}, {"value", -3.5}}}}};
  const std::string page = report::html_page(data, dir_);
  const std::string text = test_support::report_data_text(page);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.find_first_of("<>&"), std::string::npos) << text;
  EXPECT_EQ(text.find("\u2028"), std::string::npos) << text;
  EXPECT_EQ(text.find("\u2029"), std::string::npos) << text;
  EXPECT_EQ(nlohmann::json::parse(text), data);
  EXPECT_NE(page.find("<title>&lt;!--&lt;script&gt; &amp; &lt;/script&gt;&lt;b x=&quot;&#39;&quot;"
                      "&gt;"),
            std::string::npos);
}

// Expectation: the one escaping of JSON for a <script> element writes <, >, & and
// U+2028/U+2029 as \u escapes and nothing else differs from the plain dump; HTML
// text escapes the five characters that can end text or an attribute.
TEST(Hardening, ScriptJsonAndHtmlTextEscapeWhatHtmlReads) {
  const nlohmann::json name = "</script><!--&\xe2\x80\xa8\xe2\x80\xa9 a/b";
  EXPECT_EQ(report::script_json(name),
            "\"\\u003c/script\\u003e\\u003c!--\\u0026\\u2028\\u2029 a/b\"");
  EXPECT_EQ(nlohmann::json::parse(report::script_json(name)), name);
  const nlohmann::json plain = {{"x", -3.5}, {"y", "a b"}};
  EXPECT_EQ(report::script_json(plain), plain.dump());
  EXPECT_EQ(report::html_text("<a href=\"x\" title='y'>&</a>"),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
}

// Expectation: names from the input (the scenario's file, its name, the model's,
// a --vary value) reach the terminal with their control bytes written as \xNN, in
// every verb's report: none can clear the screen or retitle the window.
TEST_F(Scratch, NamesCannotDriveTheTerminal) {
  const fs::path input = dir_ / "job\x1b]0;pwned\x07.yaml";
  fs::copy_file(kExample, input);
  const std::vector<std::string> names = {"--set", "name=\"N\\e[2J\"", "--set",
                                          "model.name=\"M\\e]0;t\\a\""};
  const std::vector<std::vector<std::string>> runs = {
      {"estimate", input.string()},
      {"simulate", input.string()},
      {"campaign", input.string(), "--days", "1", "--seeds", "2"},
      {"place", input.string(), "--no-simulate"},
      {"plan", input.string(), "--top", "2"},
      {"sweep", input.string(), "--vary", "name=\x1b[2J,\"\\e]0;t\\a\""},
  };
  for (auto args : runs) {
    args.insert(args.end(), names.begin(), names.end());
    const Result r = run_cli(args);
    EXPECT_EQ(r.code, kExitOk) << args[0] << ": " << r.err;
    EXPECT_EQ(r.out.find_first_of("\x1b\x07"), std::string::npos) << args[0] << ":\n" << r.out;
    EXPECT_EQ(r.err.find_first_of("\x1b\x07"), std::string::npos) << args[0] << ":\n" << r.err;
    EXPECT_NE(r.out.find("\\x1b"), std::string::npos) << args[0] << ":\n" << r.out;
  }
  // Messages too, the command line parser's among them.
  const Result bad = run_cli({"estimate", input.string(), "--no-such\x1b[2J"});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_EQ(bad.err.find('\x1b'), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("--no-such\\x1b[2J"), std::string::npos) << bad.err;
}

// Expectation: the escaping stream buffer writes control bytes but line feed and
// tab as \xNN, passes the rest on at once, and fails when its target refuses.
TEST(Hardening, PrintableStreambufEscapesControlBytes) {
  std::ostringstream target;
  PrintableStreambuf buffer(target.rdbuf());
  std::ostream out(&buffer);
  out << "a\x1b[2Jb\r" << '\x07' << "\tc\n" << 3.5 << std::string("\0\x7f", 2) << std::flush;
  EXPECT_TRUE(out.good());
  EXPECT_EQ(target.str(), "a\\x1b[2Jb\\x0d\\x07\tc\n3.5\\x00\\x7f");
  struct Refusing : std::streambuf {};  // takes nothing: a closed pipe
  Refusing refusing;
  PrintableStreambuf broken(&refusing);
  std::ostream closed(&broken);
  closed << "report\n";
  EXPECT_FALSE(closed.good());
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Expectation: csv_field quotes per RFC 4180 and puts ' before a would-be formula,
// inside the quotes; numbers, plain text and the empty field pass unchanged.
TEST(Hardening, CsvFieldQuotesAndNeutralisesFormulas) {
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("spares"), "spares");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\"\r\n"), "\"say \"\"hi\"\"\r\n\"");
  for (const char* number : {"-3.5", "-2", "-1e-05", "0.25", "12"}) {
    EXPECT_EQ(csv_field(number), number);
  }
  EXPECT_EQ(csv_field("=1+1"), "\"'=1+1\"");
  EXPECT_EQ(csv_field("+x"), "\"'+x\"");
  EXPECT_EQ(csv_field("-2+3"), "\"'-2+3\"");
  EXPECT_EQ(csv_field("@SUM(A1)"), "\"'@SUM(A1)\"");
  EXPECT_EQ(csv_field("\tx"), "\"'\tx\"");
  EXPECT_EQ(csv_field("\rx"), "\"'\rx\"");
  EXPECT_EQ(csv_field("=HYPERLINK(\"a\",\"b\")"), "\"'=HYPERLINK(\"\"a\"\",\"\"b\"\")\"");
}

// Expectation: a CSV text cell that a spreadsheet would run as a formula (it starts
// with =, +, -, @, a tab or a carriage return) is quoted with a ' before it; a
// number, negative or not, stays a number.
TEST_F(Scratch, CsvCellsCannotBeFormulas) {
  const fs::path sweep = dir_ / "sweep.csv";
  const Result r = run_cli(
      {"sweep", kExample, "--vary", "name==1+1,+x,-2,-3.5e1,@SUM(A1)", "--csv", sweep.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::vector<std::string> rows = lines_of(sweep);
  ASSERT_EQ(rows.size(), 6U);
  EXPECT_EQ(rows[1].rfind("\"'=1+1\",2048,", 0), 0U) << rows[1];
  EXPECT_EQ(rows[2].rfind("\"'+x\",2048,", 0), 0U) << rows[2];
  EXPECT_EQ(rows[3].rfind("-2,2048,", 0), 0U) << rows[3];
  EXPECT_EQ(rows[4].rfind("-3.5e1,2048,", 0), 0U) << rows[4];
  EXPECT_EQ(rows[5].rfind("\"'@SUM(A1)\",,", 0), 0U) << rows[5];
  const fs::path events = dir_ / "events.csv";
  const Result c = run_cli({"campaign", kExample, "--days", "20", "--seeds", "1", "--set",
                            "policies=[{name: \"=HYPERLINK(1)\"}]", "--events", events.string()});
  ASSERT_EQ(c.code, kExitOk) << c.err;
  const std::vector<std::string> logged = lines_of(events);
  ASSERT_GT(logged.size(), 1U);
  for (std::size_t i = 1; i < logged.size(); ++i) {
    EXPECT_NE(logged[i].find(",\"'=HYPERLINK(1)\",0,"), std::string::npos) << logged[i];
  }
}

}  // namespace
}  // namespace myriad::cli
