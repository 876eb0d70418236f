#include "tools/cli/calibrate_import.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <set>

#include "calibration/environment/environment.hpp"
#include "calibration/import/import.hpp"
#include "models/scenario/text_file.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

namespace cal = myriad::calibration;

}  // namespace

// Over 100 lines: issue 43 rewrites this reader (streaming, bounded).
// NOLINTNEXTLINE(readability-function-size)
int run_import(const ImportOptions& o, Streams io) {
  const auto format = cal::import_format_from_name(o.format);
  if (!format) {
    io.err << fmt::format(
        "myriad calibrate import: error: {}: expected nccl-tests, google-benchmark or kineto\n",
        models::printable(o.format));
    return kExitBadInput;
  }
  cal::ImportOptions options;
  if (!o.collective.empty()) {
    options.collective = models::collective_from_key(o.collective);
    if (!options.collective) {
      io.err << fmt::format(
          "myriad calibrate import: error: --collective {}: expected all_reduce, all_gather, "
          "reduce_scatter, all_to_all, broadcast or send_recv\n",
          models::printable(o.collective));
      return kExitBadInput;
    }
  }
  const auto algorithm = models::algorithm_from_name(o.algorithm);
  if (!algorithm) {
    io.err << fmt::format(
        "myriad calibrate import: error: --algorithm {}: expected ring, tree, nvls, pairwise, "
        "...\n",
        models::printable(o.algorithm));
    return kExitBadInput;
  }
  options.algorithm = *algorithm;
  if (o.ranks > 0) options.ranks = o.ranks;
  options.family = o.family;
  if (const std::string problem = models::output_problem(o.out, o.files); !problem.empty()) {
    io.err << fmt::format("myriad calibrate import: error: --out {}\n", problem);
    return kExitBadInput;
  }

  cal::RowsFile file;
  if (o.append && std::filesystem::exists(o.out)) {
    try {
      file = cal::read_rows(o.out);
    } catch (const std::exception& e) {
      io.err << fmt::format("myriad calibrate import: error: --append: {}\n", e.what());
      return kExitBadInput;
    }
    if (file.backend != o.backend) {
      io.err << fmt::format(
          "myriad calibrate import: error: --append: {} holds {} rows, these are --backend {}\n",
          o.out, file.backend, o.backend);
      return kExitBadInput;
    }
  } else {
    file.backend = o.backend;
    file.grid = "imported";
    file.date = cal::utc_now();
    // The machine that imports is not the one that measured: only what the
    // sources say of theirs is kept.
    file.environment = {{"note", "imported: each row's arguments name its source file"},
                        {"imported_by", cal::to_json(cal::current_environment())}};
  }
  std::set<std::string> names;
  for (const cal::Row& r : file.rows) names.insert(r.name);
  const std::size_t kept = file.rows.size();
  for (const std::string& path : o.files) {
    try {
      const std::string text = models::read_text_file(path, "measurements", models::kMaxJsonBytes);
      cal::Imported got = cal::import_rows(text, path, *format, options);
      for (const std::string& note : got.notes) io.out << path << ": " << note << "\n";
      if (!got.device.empty() && !file.environment.contains("gpu")) {
        file.environment["gpu"] = got.device;
      }
      for (cal::Row& r : got.rows) {
        if (!names.insert(r.name).second) {
          throw std::runtime_error(
              fmt::format("{}: row '{}' is already in the rows (from an earlier file or --append)",
                          path, r.name));
        }
        file.rows.push_back(std::move(r));
      }
    } catch (const std::exception& e) {
      io.err << fmt::format("myriad calibrate import: error: {}\n", e.what());
      return kExitBadInput;
    }
  }
  Table t({"row", "family", "best", "rate", "spread", "check"}, "llrrrl");
  for (std::size_t i = kept; i < file.rows.size(); ++i) {
    const cal::Row& r = file.rows[i];
    t.add({r.name.size() > 70 ? r.name.substr(0, 67) + "..." : r.name, r.family, seconds(r.best_s),
           cal::rate_text(r), cal::spread_text(r), r.check});
  }
  io.out << t.str();
  try {
    cal::write_rows(file, o.out);
    (void)cal::read_rows(o.out);  // what fit and check will read
  } catch (const std::exception& e) {
    io.err << fmt::format("myriad calibrate import: error: {}\n", e.what());
    return kExitFailure;
  }
  io.out << fmt::format("wrote {} rows to {} ({} imported){}\n", file.rows.size(), o.out,
                        file.rows.size() - kept,
                        kept > 0 ? fmt::format(", after the {} it held", kept) : "");
  io.out << fmt::format(
      "next: myriad calibrate fit {} --base <profile>{} (imports hold no ceilings: the base "
      "gives the peaks and what the rows do not measure)\n",
      o.out, file.environment.contains("gpu") ? "" : " --device <name>");
  return kExitOk;
}

}  // namespace myriad::cli
