#include "calibration/measure/runner.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ostream>
#include <stdexcept>

namespace myriad::calibration {
namespace {

// Collects the seconds per iteration of each repetition; prints nothing.
class Collector : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context& /*context*/) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.iterations <= 0) continue;
      if (run.error_occurred) {
        error = run.error_message;
        continue;
      }
      times_s.push_back(run.real_accumulated_time / static_cast<double>(run.iterations));
    }
  }
  std::vector<double> times_s;
  std::string error;
};

std::string human_time(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.2f} us", s * 1e6);
}

// Device-timed cases: one warm-up run sizes the loop to min_time_s, then each
// repetition times that many runs.
std::vector<double> device_times(const Instance& inst, const RunnerOptions& options) {
  const double once = inst.timed(1);
  const int iterations =
      std::clamp(static_cast<int>(options.min_time_s / std::max(once, 1e-7)), 1, 100000);
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(options.repetitions));
  for (int r = 0; r < options.repetitions; ++r) {
    times.push_back(inst.timed(iterations) / iterations);
  }
  return times;
}

void finish(Row& row, const Instance& inst, std::size_t i, std::size_t n,
            std::chrono::steady_clock::time_point start, std::ostream& progress) {
  row.median_s = median(row.times_s);
  row.check = inst.check();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress << fmt::format("[{:>3}/{}] {:<52} {:>11}  {}  ({:.0f} s)\n", i + 1, n, row.name,
                          human_time(row.median_s), row.check, elapsed)
           << std::flush;
}

}  // namespace

std::vector<Row> run_cases(const std::vector<Case>& cases, const RunnerOptions& options,
                           std::ostream& progress) {
  if (options.repetitions < 1) throw std::invalid_argument("repetitions must be at least 1");
  std::vector<Row> rows;
  rows.reserve(cases.size());
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    Row row = c.row;
    Instance inst = c.prepare();
    if (inst.timed) {
      row.times_s = device_times(inst, options);
      finish(row, inst, i, cases.size(), start, progress);
      rows.push_back(std::move(row));
      continue;
    }
    Collector collector;
    benchmark::ClearRegisteredBenchmarks();
    benchmark::RegisterBenchmark(row.name.c_str(),
                                 [&inst](benchmark::State& state) {
                                   for (auto _ : state) inst.run();
                                 })
        ->Repetitions(options.repetitions)
        ->MinTime(options.min_time_s)
        ->UseRealTime();
    benchmark::RunSpecifiedBenchmarks(&collector);
    benchmark::ClearRegisteredBenchmarks();
    if (collector.times_s.empty()) {
      throw std::runtime_error(
          fmt::format("{}: no timing ({})", row.name,
                      collector.error.empty() ? "benchmark did not run" : collector.error));
    }
    row.times_s = collector.times_s;
    finish(row, inst, i, cases.size(), start, progress);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace myriad::calibration
