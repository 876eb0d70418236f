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

// Half a unit of the last place `text` prints: how far the number it stands for
// may be from it ("45.88": 0.005).
double half_last_place(const std::string& text) {
  const auto point = text.find('.');
  if (point == std::string::npos) return 0.5;
  return 0.5 * std::pow(10.0, -static_cast<double>(text.size() - point - 1));
}

// One result line: a size's out-of-place columns, and the in-place #wrong.
struct Size {
  int line;
  double bytes;
  std::string redop;
  double time_s, algbw, busbw;
  double bw_rounding;  // how far busbw may be from algbw x factor as they are printed, per factor
  double busbw_rounding;
  std::string wrong, in_place_wrong;
};

// What the output says, read to its end.
struct Output {
  std::optional<models::CollectiveKind> named;
  std::vector<int> rank_lines{0};  // "#  Rank" lines under each run's header
  std::string device;
  std::optional<int> header_ranks;  // nThread x nGpus of the header line
  std::vector<Size> sizes;
  std::size_t columns = 0;  // of the table's result lines: 9, or 13 with the in-place columns
  int open_table = 0;       // the first result line of a table its closing lines have not ended
};

// nccl-tests ends each table with "# Out of bounds values : N OK" and "# Avg bus
// bandwidth    : X" (src/common.cu); an output without them was cut short.
constexpr std::string_view kClosingLine = "# Avg bus bandwidth";

// A "#" line: the ranks and their device, the collective test, nThread x nGpus.
void read_comment(const std::string& line, const std::vector<std::string>& w, int line_no,
                  const std::string& path, const ImportOptions& o, Output& out) {
  if (w.size() >= 2 && w[1] == "Rank") {
    ++out.rank_lines.back();
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
  if (threads != w.end() && gpus != w.end() && out.rank_lines.back() > 0) {
    out.rank_lines.push_back(0);  // another run's header: its ranks are counted apart
  }
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
      if (line.find(kClosingLine) != std::string::npos) out.open_table = 0;
      continue;
    }
    // size count type redop root time algbw busbw #wrong [in-place: time algbw busbw #wrong]
    if (w.size() != 9 && w.size() != 13) {
      import_fail(path, fmt::format("line {}", line_no),
                  fmt::format("expected a result line of 9 or 13 columns (size count type redop "
                              "root time algbw busbw #wrong ...), found {} columns",
                              w.size()));
    }
    if (out.columns != 0 && w.size() != out.columns) {
      import_fail(path, fmt::format("line {}", line_no),
                  fmt::format("a result line of {} columns where line {} has {}: a line cut short",
                              w.size(), out.sizes.front().line, out.columns));
    }
    out.columns = w.size();
    if (out.open_table == 0) out.open_table = line_no;
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
    out.sizes.push_back({line_no, *bytes, w[3], *time_us * 1e-6, *algbw, *busbw,
                         half_last_place(w[6]), half_last_place(w[7]), w[8],
                         w.size() == 13 ? w[12] : std::string("-")});
  }
  if (in.bad()) import_fail(path, "read", "the file could not be read to its end");
  if (out.open_table != 0) {
    import_fail(path, fmt::format("line {}", line_no),
                fmt::format("the output ends inside the table that starts at line {}, without "
                            "nccl-tests' closing lines (\"# Out of bounds values\", \"{}\"): "
                            "cut short (a run that did not finish, or a log copied in part)",
                            out.open_table, kClosingLine));
  }
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
  if (big.redop != "none") {
    import_fail(path, fmt::format("line {}", big.line),
                fmt::format("busbw / algbw is {:.4g}, neither all-reduce's 2(n-1)/n = {:.4g} nor "
                            "reduce-scatter's (n-1)/n = {:.4g} on {} ranks: the ranks (--ranks, "
                            "the \"#  Rank\" lines, nThread x nGpus) are not those that ran, or "
                            "give --collective",
                            ratio, 2 * (n - 1) / n, (n - 1) / n, ranks));
  }
  import_fail(path, fmt::format("line {}", big.line),
              "the output does not say which collective ran (all_gather_perf and alltoall_perf "
              "print alike): give --collective");
}

// Every result line's busbw is its algbw times the factor of the collective on
// these ranks (models::busbw_factor, as nccl-tests computes it), to the places
// printed. Else the ranks or the collective are not those that ran, and the fit,
// which computes busbw from the bytes, the time and that factor, would be wrong.
void check_factor(const Output& out, models::CollectiveKind kind, int ranks,
                  const std::string& path) {
  const double factor = models::busbw_factor(kind, ranks);
  for (const Size& s : out.sizes) {
    const double slack = s.busbw_rounding + factor * s.bw_rounding + 1e-9 * std::abs(s.busbw);
    if (std::abs(s.busbw - factor * s.algbw) <= slack) continue;
    import_fail(path, fmt::format("line {}", s.line),
                fmt::format("busbw {:g} GB/s is not algbw {:g} GB/s x {:.4g}, the bus bandwidth "
                            "factor of {} on {} ranks: the ranks (--ranks, the \"#  Rank\" "
                            "lines, nThread x nGpus) or the collective (--collective) are not "
                            "those that ran",
                            s.busbw, s.algbw, factor, models::collective_key(kind), ranks));
  }
}

// Whether every bus byte the algorithm moves crosses the GPU's own links: a
// ring, a tree, a chain, pairwise exchanges, a transfer. nccl-tests' busbw is
// the rate of the busiest of them then (its doc/PERFORMANCE.md), so it cannot
// pass the link rate. NVLS reduces in the NVSwitch, SHARP in the network's
// switches, and a hierarchical all-reduce sends part of the bytes once over the
// network: less crosses each GPU's links.
bool bus_bytes_cross_own_links(models::CollectiveAlgorithm a) {
  return a != models::CollectiveAlgorithm::nvls && a != models::CollectiveAlgorithm::hierarchical &&
         a != models::CollectiveAlgorithm::sharp;
}

// The most busbw any run can show on links of `link_GBps` per GPU and
// direction. Whatever the algorithm, each GPU receives the part of the result it
// did not hold and sends what the others need of its data: an all-reduce's
// whole size (algbw <= link, busbw <= 2(n-1)/n x link), (n-1)/n of it for a
// gather, a scatter or an all-to-all, all of it for a broadcast or a transfer
// (busbw <= link). Where the bus bytes cross the GPU's own links, busbw <= link.
double busbw_bound_GBps(models::CollectiveKind kind, models::CollectiveAlgorithm a, int ranks,
                        double link_GBps) {
  if (bus_bytes_cross_own_links(a)) return link_GBps;
  return std::max(1.0, models::busbw_factor(kind, ranks)) * link_GBps;
}

// Each row's busbw against the profile's links (ImportOptions::bus_ceiling):
// refused above what the links could carry; flagged, in the row and a note,
// above the ring's ceiling the tool prices, naming the algorithm.
void check_ceiling(std::vector<Row>& rows, const Output& out, models::CollectiveKind kind,
                   int ranks, const ImportOptions& o, const std::string& path,
                   std::vector<std::string>& notes) {
  if (!o.bus_ceiling) {
    notes.emplace_back(
        "bus bandwidths not checked against a link rate: --profile PROFILE checks them against "
        "its NVLink rate and the ring ceiling the tool prices");
    return;
  }
  const BusCeiling& c = *o.bus_ceiling;
  const double link = c.link_Bps / 1e9, ring = c.ring_Bps / 1e9;
  const double bound = busbw_bound_GBps(kind, o.algorithm, ranks, link);
  const std::string algorithm(models::algorithm_name(o.algorithm));
  int above = 0;
  const Size* first = nullptr;
  for (std::size_t i = 0; i < out.sizes.size(); ++i) {
    const Size& s = out.sizes[i];
    if (s.busbw - s.busbw_rounding > bound) {
      import_fail(path, fmt::format("line {}", s.line),
                  fmt::format("busbw {:g} GB/s is more than {} links of {:g} GB/s per GPU and "
                              "direction ({}) can carry for {} by {}, at most {:.4g} GB/s: {}the "
                              "profile is another GPU's",
                              s.busbw, c.device, link, c.profile, models::collective_key(kind),
                              algorithm, bound,
                              bus_bytes_cross_own_links(o.algorithm)
                                  ? "NCCL ran NVLS (the NVSwitch reduces: --algorithm nvls), or "
                                  : ""));
    }
    if (s.busbw - s.busbw_rounding <= ring) continue;
    ++above;
    if (first == nullptr) first = &s;
    rows[i].arguments["above_ring_ceiling"] =
        fmt::format("busbw {:g} GB/s above the {:.4g} GB/s ring ceiling of {} ({})", s.busbw, ring,
                    c.profile, algorithm);
  }
  if (above == 0) {
    notes.push_back(fmt::format(
        "bus bandwidths within the {:.4g} GB/s ring ceiling of {} ({}, links of {:g} GB/s)", ring,
        c.profile, c.device, link));
    return;
  }
  notes.push_back(fmt::format(
      "{} of {} sizes (the first at line {}, {:g} GB/s) have a busbw above the {:.4g} GB/s ring "
      "ceiling the tool prices with {} ({}, links of {:g} GB/s): {}",
      above, out.sizes.size(), first->line, first->busbw, ring, c.profile, c.device, link,
      bus_bytes_cross_own_links(o.algorithm)
          ? fmt::format("faster than the tool's {} model; if NCCL ran NVLS (its all-reduce on "
                        "NVSwitch systems that have it), import with --algorithm nvls",
                        algorithm)
          : fmt::format("as {} can, sending less than the bus bytes over each GPU's links",
                        algorithm)));
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
  // Both runs' #wrong, out-of-place and in-place (when printed): a wrong result
  // in either fails the row.
  const auto wrong = number(s.wrong), in_place = number(s.in_place_wrong);
  if (!wrong) {
    r.check = "pass";
    r.arguments["verified"] = "not verified by the source (#wrong is " + s.wrong + ")";
  } else {
    r.check = *wrong == 0 ? "pass" : fmt::format("{:.0f} wrong elements (nccl-tests)", *wrong);
  }
  if (in_place && *in_place != 0) {
    r.check = fmt::format("{}{:.0f} wrong elements in place (nccl-tests)",
                          r.check == "pass" ? "" : r.check + "; ", *in_place);
  }
  return r;
}

}  // namespace

Imported import_nccl_tests(std::istream& in, const std::string& path, const ImportOptions& o) {
  const Output output = read_output(in, path, o);
  if (output.sizes.empty()) {
    import_fail(path, "results", "no result lines (size count type redop root time ...)");
  }
  const int rank_lines = output.rank_lines.front();
  if (std::any_of(output.rank_lines.begin(), output.rank_lines.end(),
                  [&](int n) { return n != rank_lines; })) {
    import_fail(path, "ranks",
                fmt::format("runs on {} ranks in one output: import each run's output apart",
                            fmt::join(output.rank_lines, ", ")));
  }
  const int ranks = o.ranks          ? *o.ranks
                    : rank_lines > 0 ? rank_lines
                                     : output.header_ranks.value_or(0);
  if (ranks < 2) {
    import_fail(path, "ranks",
                "the output names no ranks (\"#  Rank\" lines or nThread x nGpus): give --ranks");
  }
  const models::CollectiveKind kind = collective_of(output, ranks, path);
  check_factor(output, kind, ranks, path);
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
  check_ceiling(out.rows, output, kind, ranks, o, path, out.notes);
  return out;
}

}  // namespace myriad::calibration
