// nccl-tests' text output as calibration rows (import.hpp): read a line at a time,
// a row kept per result line.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "calibration/import/readers.hpp"

namespace myriad::calibration {
namespace {

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// A number, or nullopt (for "N/A" and the like).
std::optional<double> number(const std::string& text) {
  try {
    std::size_t used = 0;
    const double x = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(x)) return std::nullopt;
    return x;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// "all_reduce_perf" -> all_reduce; "alltoall_perf" -> all_to_all.
std::optional<models::CollectiveKind> collective_of_binary(std::string name) {
  if (name.size() > 5 && name.substr(name.size() - 5) == "_perf") name.resize(name.size() - 5);
  if (name == "alltoall") return models::CollectiveKind::all_to_all;
  if (name == "sendrecv") return models::CollectiveKind::send_recv;
  return models::collective_from_key(name);
}

// One result line: a size's out-of-place columns.
struct Size {
  int line;
  double bytes;
  std::string redop;
  double time_s, algbw, busbw;
  std::string wrong;
};

// What the output says, read to its end.
struct Output {
  std::optional<models::CollectiveKind> named;
  int rank_lines = 0;
  std::string device;
  std::optional<int> header_ranks;  // nThread x nGpus of the header line
  std::vector<Size> sizes;
};

// A "#" line: the ranks and their device, the collective test, nThread x nGpus.
void read_comment(const std::string& line, const std::vector<std::string>& w, int line_no,
                  const std::string& path, const ImportOptions& o, Output& out) {
  if (w.size() >= 2 && w[1] == "Rank") {
    ++out.rank_lines;
    // "#  Rank  0 Group  0 Pid 4242 on node01 device  0 [0x1b] NVIDIA H100 80GB HBM3"
    const auto bus = line.find("] ");
    if (out.device.empty() && bus != std::string::npos) out.device = line.substr(bus + 2);
  }
  const auto test = line.find("Collective test starting:");
  if (test != std::string::npos && !o.collective) {
    const auto rest = words(line.substr(test + 25));
    if (!rest.empty()) out.named = collective_of_binary(rest[0]);
    if (!out.named && !rest.empty()) {
      import_fail(path, fmt::format("line {}", line_no),
                  fmt::format("collective test '{}' is not one Myriad prices", rest[0]));
    }
  }
  const auto threads = std::find(w.begin(), w.end(), "nThread");
  const auto gpus = std::find(w.begin(), w.end(), "nGpus");
  if (threads != w.end() && gpus != w.end() && threads + 1 != w.end() && gpus + 1 != w.end()) {
    const auto t = number(*(threads + 1)), g = number(*(gpus + 1));
    // At most --ranks' bound (2^20), whole and positive; the product computed
    // in double is exact there, and only then converted.
    constexpr double kMostRanks = 1 << 20;
    if (t && g) {
      const double ranks = *t * *g;
      if (!(*t >= 1 && *g >= 1 && *t == std::floor(*t) && *g == std::floor(*g) &&
            ranks <= kMostRanks)) {
        import_fail(path, fmt::format("line {}", line_no),
                    fmt::format("nThread x nGpus: expected whole numbers of at most {:.0f} ranks "
                                "in all, found {:g} x {:g}",
                                kMostRanks, *t, *g));
      }
      out.header_ranks = static_cast<int>(ranks);
    }
  }
}

Output read_output(std::istream& in, const std::string& path, const ImportOptions& o) {
  Output out;
  out.named = o.collective;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const auto w = words(line);
    if (w.empty()) continue;
    if (w[0] == "#") {
      read_comment(line, w, line_no, path, o, out);
      continue;
    }
    // size count type redop root time algbw busbw #wrong [in-place: time algbw busbw #wrong]
    if (w.size() != 9 && w.size() != 13) {
      import_fail(path, fmt::format("line {}", line_no),
                  fmt::format("expected a result line of 9 or 13 columns (size count type redop "
                              "root time algbw busbw #wrong ...), found {} columns",
                              w.size()));
    }
    if (out.sizes.size() >= kMaxImportedRows) {
      import_fail(path, fmt::format("line {}", line_no),
                  fmt::format("more than {} result lines (a row each, the most one import "
                              "takes): split the output",
                              kMaxImportedRows));
    }
    const auto bytes = number(w[0]), time_us = number(w[5]), algbw = number(w[6]),
               busbw = number(w[7]);
    if (!bytes || *bytes <= 0 || !time_us || *time_us <= 0 || !algbw || !busbw) {
      import_fail(path, fmt::format("line {}", line_no),
                  "expected a positive size (B) and time (us), and algbw and busbw (GB/s), "
                  "numbers");
    }
    out.sizes.push_back({line_no, *bytes, w[3], *time_us * 1e-6, *algbw, *busbw, w[8]});
  }
  if (in.bad()) import_fail(path, "read", "the file could not be read to its end");
  return out;
}

// The collective the output names, else the one its bus bandwidth factor and
// reduction operator tell: busbw / algbw tells all-reduce and reduce-scatter
// apart; gathers and all-to-alls share it.
models::CollectiveKind collective_of(const Output& out, int ranks, const std::string& path) {
  if (out.named) return *out.named;
  const Size& big =
      *std::max_element(out.sizes.begin(), out.sizes.end(),
                        [](const Size& a, const Size& b) { return a.bytes < b.bytes; });
  const double ratio = big.algbw > 0 ? big.busbw / big.algbw : 0;
  const double n = ranks;
  if (big.redop != "none" && std::abs(ratio - 2 * (n - 1) / n) < 0.02) {
    return models::CollectiveKind::all_reduce;
  }
  if (big.redop != "none" && std::abs(ratio - (n - 1) / n) < 0.02) {
    return models::CollectiveKind::reduce_scatter;
  }
  import_fail(path, fmt::format("line {}", big.line),
              "the output does not say which collective ran (all_gather_perf and alltoall_perf "
              "print alike): give --collective");
}

Row size_row(const Size& s, const std::string& family, models::CollectiveKind kind, int ranks,
             const ImportOptions& o, const std::string& path) {
  Row r;
  r.kind = RowKind::collective;
  r.family = family;
  r.name = fmt::format("{} ranks={} bytes={:.0f}", family, ranks, s.bytes);
  r.bytes = s.bytes;
  r.collective = {kind,
                  o.algorithm,
                  false,
                  ranks,
                  s.bytes,
                  models::busbw_factor(kind, ranks),
                  models::ring_steps(kind, ranks)};
  r.times_s = {s.time_s};
  r.best_s = s.time_s;
  r.arguments = {{"ranks", ranks},       {"bytes", s.bytes}, {"source", "nccl-tests"},
                 {"file", path},         {"line", s.line},   {"algbw_GBps", s.algbw},
                 {"busbw_GBps", s.busbw}};
  const auto wrong = number(s.wrong);
  if (!wrong) {
    r.check = "pass";
    r.arguments["verified"] = "not verified by the source (#wrong is " + s.wrong + ")";
  } else {
    r.check = *wrong == 0 ? "pass" : fmt::format("{:.0f} wrong elements (nccl-tests)", *wrong);
  }
  return r;
}

}  // namespace

Imported import_nccl_tests(std::istream& in, const std::string& path, const ImportOptions& o) {
  const Output output = read_output(in, path, o);
  if (output.sizes.empty()) {
    import_fail(path, "results", "no result lines (size count type redop root time ...)");
  }
  const int ranks = o.ranks                 ? *o.ranks
                    : output.rank_lines > 0 ? output.rank_lines
                                            : output.header_ranks.value_or(0);
  if (ranks < 2) {
    import_fail(path, "ranks",
                "the output names no ranks (\"#  Rank\" lines or nThread x nGpus): give --ranks");
  }
  const models::CollectiveKind kind = collective_of(output, ranks, path);
  Imported out;
  out.device = output.device;
  const std::string family =
      fmt::format("{}.{}", models::collective_key(kind), models::algorithm_name(o.algorithm));
  out.rows.reserve(output.sizes.size());
  for (const Size& s : output.sizes) out.rows.push_back(size_row(s, family, kind, ranks, o, path));
  out.notes.push_back(fmt::format(
      "{} sizes of {} on {} ranks, the out-of-place time (nccl-tests' average over its "
      "iterations: one sample a size); algorithm taken as {}{}",
      output.sizes.size(), models::collective_key(kind), ranks, models::algorithm_name(o.algorithm),
      o.collective ? "" : ", collective read from the output"));
  return out;
}

}  // namespace myriad::calibration
