#include "calibration/import/import.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <streambuf>

#include "calibration/import/gzip_input.hpp"
#include "calibration/import/readers.hpp"
#include "models/scenario/text_file.hpp"

namespace myriad::calibration {
namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& what, const std::string& why) {
  throw std::runtime_error(
      fmt::format("{}: cannot read {}: {}", models::scenario::printable(path), what, why));
}

std::string over_cap(const std::string& what, std::uint64_t cap) {
  return fmt::format("more than the {} cap for {} (--max-input-size raises it)", size_text(cap),
                     what);
}

// A file read through std::filebuf a block at a time, refused past `cap` bytes:
// a pipe, or a file still growing, has no size to check first.
class CappedFile : public std::streambuf {
 public:
  CappedFile(const std::string& path, std::uint64_t cap, std::string what)
      : path_(path), cap_(cap), what_(std::move(what)) {
    if (file_.open(path, std::ios::in | std::ios::binary) == nullptr) {
      refuse(path, what_, std::strerror(errno));
    }
  }

  // The bytes read but not yet taken: the file's first block before any is.
  std::string_view head() {
    if (gptr() == egptr()) (void)underflow();
    return {gptr(), static_cast<std::size_t>(egptr() - gptr())};
  }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const std::streamsize n = file_.sgetn(buffer_.data(), buffer_.size());
    if (n <= 0) return traits_type::eof();
    read_ += static_cast<std::uint64_t>(n);
    if (read_ > cap_) refuse(path_, what_, over_cap(what_, cap_));
    setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::filebuf file_;
  std::array<char, 1 << 16> buffer_{};
  std::string path_;
  std::uint64_t cap_;
  std::string what_;
  std::uint64_t read_ = 0;
};

Imported read(std::istream& in, const std::string& path, ImportFormat format,
              const ImportOptions& options) {
  switch (format) {
    case ImportFormat::nccl_tests:
      return import_nccl_tests(in, path, options);
    case ImportFormat::google_benchmark:
      return import_google_benchmark(in, path, options);
    case ImportFormat::kineto:
      return import_kineto(in, path);
    case ImportFormat::xla_gemm_table:
      return import_xla_gemm_table(in, path, options);
  }
  import_fail(path, "format", "unknown");
}

// Rows, within the bound, named once each, every one a row `calibrate fit` reads.
void check_rows(const Imported& out, const std::string& path) {
  if (out.rows.empty()) import_fail(path, "rows", "nothing in it becomes a calibration row");
  if (out.rows.size() > kMaxImportedRows) {
    import_fail(path, "rows",
                fmt::format("{} rows, more than the {} one import makes: split the file",
                            out.rows.size(), kMaxImportedRows));
  }
  std::set<std::string> names;
  for (const Row& r : out.rows) {
    if (!names.insert(r.name).second) {
      import_fail(path, "rows", fmt::format("two results would be rows named '{}'", r.name));
    }
    if (const auto problems = row_problems(r); !problems.empty()) {
      import_fail(path, fmt::format("row '{}'", r.name),
                  fmt::format("calibrate fit would refuse it: {}", fmt::join(problems, "; ")));
    }
  }
}

}  // namespace

void import_fail(const std::string& path, const std::string& where, const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {}: {}", path, where, what));
}

BusCeiling bus_ceiling_of(const sim::DeviceProfile& profile) {
  BusCeiling c{profile.file, profile.device, profile.nvlink_bw_Bps, 0};
  for (const sim::BusBandwidthPoint& p : profile.nvlink_ring_busbw) {
    c.ring_Bps = std::max(c.ring_Bps, p.busbw_Bps);
  }
  return c;
}

std::string size_text(std::uint64_t bytes) {
  const auto in = [&](int shift) { return static_cast<double>(bytes) / double(1ULL << shift); };
  if (bytes >= (1ULL << 30)) return fmt::format("{:.4g} GiB", in(30));
  if (bytes >= (1ULL << 20)) return fmt::format("{:.4g} MiB", in(20));
  if (bytes >= (1ULL << 10)) return fmt::format("{:.4g} KiB", in(10));
  return fmt::format("{} bytes", bytes);
}

std::uint64_t default_max_input_bytes(ImportFormat f) {
  return f == ImportFormat::kineto ? std::uint64_t{4} << 30 : std::uint64_t{64} << 20;
}

std::string_view import_format_name(ImportFormat f) {
  switch (f) {
    case ImportFormat::nccl_tests:
      return "nccl-tests";
    case ImportFormat::google_benchmark:
      return "google-benchmark";
    case ImportFormat::kineto:
      return "kineto";
    case ImportFormat::xla_gemm_table:
      return "xla-gemm-table";
  }
  return "?";
}

std::optional<ImportFormat> import_format_from_name(std::string_view name) {
  for (const ImportFormat f : {ImportFormat::nccl_tests, ImportFormat::google_benchmark,
                               ImportFormat::kineto, ImportFormat::xla_gemm_table}) {
    if (import_format_name(f) == name) return f;
  }
  return std::nullopt;
}

namespace {

std::string what_of(ImportFormat format) {
  return fmt::format("{} input", import_format_name(format));
}

// Reads gzip input through `gzip`, the decompressed bytes being `size`, and says so.
Imported read_gzip(GzipInput& gzip, std::uint64_t size, const std::string& path,
                   ImportFormat format, const ImportOptions& options) {
  std::istream in(&gzip);
  in.exceptions(std::ios::badbit);  // what the buffer throws goes through getline
  Imported out = read(in, path, format, options);
  out.notes.insert(out.notes.begin(),
                   fmt::format("gzip: {} decompressed", size_text(std::max(size, gzip.total()))));
  return out;
}

}  // namespace

Imported import_rows(std::string_view text, const std::string& path, ImportFormat format,
                     const ImportOptions& options) {
  Imported out;
  if (is_gzip(text)) {
    const std::uint64_t cap = options.max_input_bytes.value_or(default_max_input_bytes(format));
    std::stringbuf sized{std::string(text)}, source{std::string(text)};
    const std::uint64_t size = gzip_size(sized, cap, path, what_of(format));
    GzipInput gzip(source, cap, path, what_of(format));
    out = read_gzip(gzip, size, path, format, options);
  } else {
    std::istringstream in{std::string(text)};
    out = read(in, path, format, options);
  }
  check_rows(out, path);
  return out;
}

Imported import_file(const std::string& path, ImportFormat format, const ImportOptions& options) {
  const std::uint64_t cap = options.max_input_bytes.value_or(default_max_input_bytes(format));
  const std::string what = fmt::format("{} input", import_format_name(format));
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) refuse(path, what, std::strerror(errno));
  if (S_ISDIR(info.st_mode)) refuse(path, what, "it is a folder, not a file");
  if (S_ISREG(info.st_mode) && static_cast<std::uint64_t>(info.st_size) > cap) {
    refuse(path, what, fmt::format("{} bytes, {}", info.st_size, over_cap(what, cap)));
  }
  CappedFile file(path, cap, what);
  Imported out;
  if (is_gzip(file.head())) {
    // A file's decompressed size is checked before it is parsed, as its size
    // is: inflating alone is fast (a 1 GiB bomb in about a second), parsing is
    // not. A pipe cannot be read twice; its cap holds as it streams.
    std::uint64_t size = 0;
    if (S_ISREG(info.st_mode)) {
      CappedFile sized(path, cap, what);
      size = gzip_size(sized, cap, path, what);
    }
    GzipInput gzip(file, cap, path, what);
    out = read_gzip(gzip, size, path, format, options);
  } else {
    std::istream in(&file);
    in.exceptions(std::ios::badbit);  // what the buffer throws goes through getline
    out = read(in, path, format, options);
  }
  check_rows(out, path);
  return out;
}

}  // namespace myriad::calibration
