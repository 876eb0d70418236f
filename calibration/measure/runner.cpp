#include "calibration/measure/runner.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>

namespace myriad::calibration {
namespace {

// Collects the seconds per iteration, and the iterations, of the run; prints nothing.
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
      iterations = run.iterations;
      seconds = run.real_accumulated_time / static_cast<double>(run.iterations);
    }
  }
  double seconds = 0;
  benchmark::IterationCount iterations = 0;
  std::string error;
};

std::string human_time(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.2f} us", s * 1e6);
}

// One sample of a case: seconds per run. `iterations` is 0 on the first pass,
// which sizes the loop to min_time_s and sets it for the later passes.
double sample(const Row& row, const Instance& inst, const RunnerOptions& options,
              std::int64_t& iterations) {
  if (inst.timed) {  // the device's clock: one warm-up run sizes the loop
    if (iterations == 0) {
      const double once = inst.timed(1);
      iterations = std::clamp<std::int64_t>(
          static_cast<std::int64_t>(options.min_time_s / std::max(once, 1e-7)), 1, 100000);
    }
    return inst.timed(static_cast<int>(iterations)) / static_cast<double>(iterations);
  }
  Collector collector;
  benchmark::ClearRegisteredBenchmarks();
  auto* b = benchmark::RegisterBenchmark(row.name.c_str(),
                                         [&inst](benchmark::State& state) {
                                           for (auto _ : state) inst.run();
                                         })
                ->Repetitions(1)
                ->UseRealTime();
  if (iterations == 0) {
    b->MinTime(options.min_time_s);
  } else {
    b->Iterations(iterations);
  }
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::ClearRegisteredBenchmarks();
  if (collector.iterations == 0) {
    throw std::runtime_error(
        fmt::format("{}: no timing ({})", row.name,
                    collector.error.empty() ? "benchmark did not run" : collector.error));
  }
  iterations = collector.iterations;
  return collector.seconds;
}

}  // namespace

std::vector<Row> run_cases(const std::vector<Case>& cases, const RunnerOptions& options,
                           std::ostream& progress) {
  if (options.repetitions < 1) throw std::invalid_argument("repetitions must be at least 1");
  std::vector<Row> rows;
  rows.reserve(cases.size());
  for (const Case& c : cases) rows.push_back(c.row);
  std::vector<std::int64_t> iterations(cases.size(), 0);
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (int pass = 0; pass < options.repetitions; ++pass) {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      Row& row = rows[i];
      if (row.check.rfind("error: ", 0) == 0) continue;  // failed in an earlier pass
      try {
        const Instance inst = cases[i].prepare();
        row.times_s.push_back(sample(row, inst, options, iterations[i]));
        if (pass > 0) continue;
        row.check = inst.check();
      } catch (const std::exception& e) {
        // One kernel that cannot run (an unsupported shape, a library that is
        // missing) costs its row, not the run: the row says why, and the fit
        // refuses a profile with it.
        row.times_s.clear();
        row.check = fmt::format("error: {}", e.what());
      }
      if (pass > 0) {
        progress << fmt::format("[{:>3}/{}] {}: {}\n", i + 1, cases.size(), row.name, row.check);
        continue;
      }
      progress << fmt::format("[{:>3}/{}] {:<52} {:>11}  {}  ({:.0f} s)\n", i + 1, cases.size(),
                              row.name, row.times_s.empty() ? "-" : human_time(row.times_s.back()),
                              row.check, elapsed())
               << std::flush;
    }
    if (pass > 0) {
      progress << fmt::format("pass {}/{} over {} cases done ({:.0f} s)\n", pass + 1,
                              options.repetitions, cases.size(), elapsed())
               << std::flush;
    }
  }
  for (Row& row : rows) {
    row.best_s =
        row.times_s.empty() ? 0.0 : *std::min_element(row.times_s.begin(), row.times_s.end());
  }
  return rows;
}

}  // namespace myriad::calibration
