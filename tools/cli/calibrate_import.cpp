#include "tools/cli/calibrate_import.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <new>
#include <set>
#include <variant>

#include "calibration/environment/environment.hpp"
#include "calibration/import/import.hpp"
#include "models/scenario/file_lock.hpp"
#include "models/scenario/text_file.hpp"
#include "models/scenario/units.hpp"
#include "sim/cost/device_profile.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

namespace cal = myriad::calibration;

// How long an import waits for another writing the same rows file.
constexpr double kLockTimeout_s = 10;

constexpr const char* kError = "myriad calibrate import: error: ";

// The options given that `format` does not read: each is an error, not ignored.
std::vector<std::string> options_not_read(const ImportOptions& o, cal::ImportFormat format) {
  std::vector<std::string> out;
  if (format != cal::ImportFormat::nccl_tests) {
    if (!o.collective.empty()) out.emplace_back("--collective");
    if (!o.algorithm.empty()) out.emplace_back("--algorithm");
    if (o.ranks > 0) out.emplace_back("--ranks");
    if (!o.profile.empty()) out.emplace_back("--profile");
  }
  if (format != cal::ImportFormat::google_benchmark && !o.family.empty()) {
    out.emplace_back("--family");
  }
  if (format != cal::ImportFormat::xla_gemm_table && !o.key.empty()) out.emplace_back("--key");
  return out;
}

// What the command line asks of the readers, or an error (written to io.err).
std::optional<cal::ImportOptions> reader_options(const ImportOptions& o, cal::ImportFormat format,
                                                 Streams io) {
  if (const auto unread = options_not_read(o, format); !unread.empty()) {
    io.err << fmt::format(
        "{}{}: not read from {} input (nccl-tests takes --collective, "
        "--algorithm, --ranks and --profile; google-benchmark --family; xla-gemm-table "
        "--key)\n",
        kError, fmt::join(unread, ", "), cal::import_format_name(format));
    return std::nullopt;
  }
  cal::ImportOptions options;
  if (!o.profile.empty()) {
    try {
      options.bus_ceiling = cal::bus_ceiling_of(sim::load_profile(o.profile));
    } catch (const std::exception& e) {
      io.err << fmt::format("{}--profile: {}\n", kError, e.what());
      return std::nullopt;
    }
  }
  if (!o.collective.empty()) {
    options.collective = models::collective_from_key(o.collective);
    if (!options.collective) {
      io.err << fmt::format(
          "{}--collective {}: expected all_reduce, all_gather, reduce_scatter, all_to_all, "
          "broadcast or send_recv\n",
          kError, models::scenario::printable(o.collective));
      return std::nullopt;
    }
  }
  const auto algorithm = models::algorithm_from_name(o.algorithm.empty() ? "ring" : o.algorithm);
  if (!algorithm) {
    io.err << fmt::format("{}--algorithm {}: expected ring, tree, nvls, pairwise, ...\n", kError,
                          models::scenario::printable(o.algorithm));
    return std::nullopt;
  }
  options.algorithm = *algorithm;
  if (o.ranks > 0) options.ranks = o.ranks;
  options.family = o.family;
  options.table_key = o.key;
  if (!o.max_input_size.empty()) {
    const auto size =
        models::scenario::parse_quantity(o.max_input_size, models::scenario::Dimension::bytes);
    const double* bytes = std::get_if<double>(&size);
    if (bytes == nullptr || *bytes < 1 || *bytes > 1e18) {
      io.err << fmt::format("{}--max-input-size {}: expected a size such as 8GiB\n", kError,
                            models::scenario::printable(o.max_input_size));
      return std::nullopt;
    }
    options.max_input_bytes = static_cast<std::uint64_t>(*bytes);
  }
  return options;
}

// The rows file --append adds to (read again under the lock), or a new one.
cal::RowsFile rows_to_add_to(const ImportOptions& o) {
  cal::RowsFile file;
  if (o.append && std::filesystem::exists(o.out)) {
    try {
      file = cal::read_rows(o.out);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("--append: {}", e.what()));
    }
    if (file.backend != o.backend) {
      throw std::runtime_error(fmt::format("--append: {} holds {} rows, these are --backend {}",
                                           o.out, file.backend, o.backend));
    }
    return file;
  }
  file.backend = o.backend;
  file.grid = "imported";
  file.date = cal::utc_now();
  // The machine that imports is not the one that measured: only what the
  // sources say of theirs is kept.
  file.environment = {{"note", "imported: each row's arguments name its source file"},
                      {"imported_by", cal::to_json(cal::current_environment())}};
  return file;
}

struct ImportedFile {
  std::string path;
  cal::Imported got;
};

// Each file's rows (its notes written to io.out), or an exit code.
int import_each(const ImportOptions& o, cal::ImportFormat format, const cal::ImportOptions& options,
                std::vector<ImportedFile>& out, Streams io) {
  for (const std::string& path : o.files) {
    try {
      out.push_back({path, cal::import_file(path, format, options)});
      for (const std::string& note : out.back().got.notes) io.out << path << ": " << note << "\n";
    } catch (const std::bad_alloc&) {
      io.err << fmt::format(
          "{}{}: out of memory while importing it: more memory, or a smaller input\n", kError,
          path);
      return kExitFailure;
    } catch (const std::exception& e) {
      io.err << kError << e.what() << "\n";
      return kExitBadInput;
    }
  }
  return kExitOk;
}

// `file` with the imported rows added; throws when a row is there already.
void add_rows(cal::RowsFile& file, std::vector<ImportedFile>& imported) {
  std::set<std::string> names;
  for (const cal::Row& r : file.rows) names.insert(r.name);
  for (ImportedFile& f : imported) {
    if (!f.got.device.empty() && !file.environment.contains("gpu")) {
      file.environment["gpu"] = f.got.device;
    }
    for (cal::Row& r : f.got.rows) {
      if (!names.insert(r.name).second) {
        throw std::runtime_error(
            fmt::format("{}: row '{}' is already in the rows (from an earlier file or --append)",
                        f.path, r.name));
      }
      file.rows.push_back(std::move(r));
    }
  }
}

void print_rows(const cal::RowsFile& file, std::size_t from, std::ostream& out) {
  Table t({"row", "family", "best", "rate", "spread", "check"}, "llrrrl");
  for (std::size_t i = from; i < file.rows.size(); ++i) {
    const cal::Row& r = file.rows[i];
    t.add({r.name.size() > 70 ? r.name.substr(0, 67) + "..." : r.name, r.family, seconds(r.best_s),
           cal::rate_text(r), cal::spread_text(r), r.check});
  }
  out << t.str();
}

// The rows as `calibrate fit` will read them: refused, and nothing written, when
// its reader would refuse them.
std::string rows_text(const cal::RowsFile& file, const std::string& path) {
  const nlohmann::json doc = cal::to_json(file);
  try {
    (void)cal::rows_from_json(doc, path);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("not written: {}", e.what()));
  }
  std::string text = doc.dump(1) + "\n";
  if (text.size() > models::scenario::kMaxJsonBytes) {
    throw std::runtime_error(fmt::format(
        "{}: not written: {} rows would be {}, more than the {} calibrate fit reads: import "
        "into several files",
        path, file.rows.size(), cal::size_text(text.size()),
        cal::size_text(models::scenario::kMaxJsonBytes)));
  }
  return text;
}

// Reads the rows file (--append), adds the imported rows and writes it, under
// its lock: another import of the same file waits, and nothing it wrote is lost.
int add_and_write(const ImportOptions& o, std::vector<ImportedFile>& imported, Streams io) {
  std::optional<models::scenario::FileLock> lock;
  try {
    lock.emplace(o.out, kLockTimeout_s);
  } catch (const std::runtime_error& e) {
    io.err << kError << e.what() << "\n";
    return kExitFailure;
  }
  cal::RowsFile file;
  std::size_t kept = 0;
  std::string text;
  try {
    file = rows_to_add_to(o);
    kept = file.rows.size();
    add_rows(file, imported);
    text = rows_text(file, o.out);
  } catch (const std::bad_alloc&) {
    throw;  // cli.cpp says so, exit 1
  } catch (const std::exception& e) {
    io.err << kError << e.what() << "\n";
    return kExitBadInput;
  }
  print_rows(file, kept, io.out);
  try {
    models::scenario::write_file_atomically(o.out, text, "calibration rows");
  } catch (const std::runtime_error& e) {
    io.err << kError << e.what() << "\n";
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

}  // namespace

int run_import(const ImportOptions& o, Streams io) {
  const auto format = cal::import_format_from_name(o.format);
  if (!format) {
    io.err << fmt::format("{}{}: expected nccl-tests, google-benchmark, kineto or xla-gemm-table\n",
                          kError, models::scenario::printable(o.format));
    return kExitBadInput;
  }
  const auto options = reader_options(o, *format, io);
  if (!options) return kExitBadInput;
  if (const std::string problem = models::scenario::output_problem(o.out, o.files);
      !problem.empty()) {
    io.err << fmt::format("{}--out {}\n", kError, problem);
    return kExitBadInput;
  }
  std::vector<ImportedFile> imported;
  try {
    (void)rows_to_add_to(o);  // a bad --append file is said before hours of reading
  } catch (const std::exception& e) {
    io.err << kError << e.what() << "\n";
    return kExitBadInput;
  }
  if (const int code = import_each(o, *format, *options, imported, io); code != kExitOk) {
    return code;
  }
  return add_and_write(o, imported, io);
}

}  // namespace myriad::cli
