// `myriad trace export SCENARIO --out DIR` and `myriad trace play PATH`.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "models/plan/rank_layout.hpp"
#include "models/scenario/loader.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/chakra/et_set.hpp"
#include "sim/chakra/program_trace.hpp"
#include "sim/program/evaluator.hpp"
#include "sim/program/step_program.hpp"
#include "tools/cli/trace_options.hpp"

namespace myriad::cli {
namespace {

using sim::chakra::EtNodeType;

// Nodes of a file by kind: compute, sends, receives, collectives, others.
std::array<std::size_t, 5> node_kinds(const sim::chakra::EtGraph& g) {
  std::array<std::size_t, 5> n{};
  for (const auto& node : g.nodes) {
    switch (node.type) {
      case EtNodeType::comp:
        ++n[0];
        break;
      case EtNodeType::comm_send:
        ++n[1];
        break;
      case EtNodeType::comm_recv:
        ++n[2];
        break;
      case EtNodeType::comm_coll:
        ++n[3];
        break;
      default:
        ++n[4];
        break;
    }
  }
  return n;
}

std::string file_line(const sim::chakra::EtRankFile& f) {
  const auto n = node_kinds(f.graph);
  return fmt::format("{:>7} nodes ({} compute, {} sends, {} receives, {} collectives{})",
                     f.graph.nodes.size(), n[0], n[1], n[2], n[3],
                     n[4] > 0 ? fmt::format(", {} other", n[4]) : "");
}

}  // namespace

models::GroupKind trace_group(const std::string& name) {
  if (name == "tp") return models::GroupKind::tp;
  if (name == "cp") return models::GroupKind::cp;
  if (name == "ep") return models::GroupKind::ep;
  return models::GroupKind::dp;
}

std::optional<TraceProgram> read_trace_program(const std::string& path, bool ignore_ctrl_deps,
                                               const sim::chakra::TracePricing* pricing,
                                               Streams io) {
  try {
    sim::chakra::EtReadOptions read;
    read.checks.ctrl_deps = !ignore_ctrl_deps;
    TraceProgram t;
    t.set = sim::chakra::read_et_set(path, read);
    t.program = sim::chakra::program_from_trace(t.set, pricing);
    return t;
  } catch (const std::exception& e) {
    io.err << fmt::format("error: {}\n", e.what());
    if (!ignore_ctrl_deps && std::string_view(e.what()).find("ctrl dep") != std::string::npos) {
      io.err << "  (traces converted from PyTorch record parent operators as ctrl deps: "
                "--ignore-ctrl-deps reads them as Chakra's feeder does)\n";
    }
    return std::nullopt;
  }
}

int run_trace_export(const TraceExportOptions& o, Streams io, const Environment& env) {
  const auto s = load_for_cli(o.scenario, io, env);
  if (!s) return kExitBadInput;
  const auto profile = profile_for(*s, o.profile, io, env);
  if (!profile) return kExitBadInput;
  try {
    const sim::StepProgram program = sim::build_step_program(*s, *profile);
    const sim::chakra::EtSet set = sim::chakra::program_trace(program, o.name);
    const auto manifest = sim::chakra::write_et_set(o.out_dir, set);
    std::size_t nodes = 0;
    for (const auto& f : set.files) nodes += f.graph.nodes.size();
    io.out << fmt::format(
        "Chakra execution traces of {}: {} files (one a pipeline stage, replica 0's ranks), "
        "{} nodes\n  manifest: {}\n",
        s->name, set.files.size(), nodes, manifest.string());
    for (std::size_t k = 0; k < set.files.size(); ++k) {
      io.out << fmt::format("  stage {:>3}: {}.{}.et {}\n", k, o.name, k, file_line(set.files[k]));
    }
    const double played = sim::evaluate_program(program).step_time_s;
    const double estimated = sim::estimate(*s, *profile, sim::Detail::summary).step_time_s;
    io.out << fmt::format(
        "The step they describe: {:.4f} s as the program plays without contention (estimate: "
        "{:.4f} s)\n",
        played, estimated);
  } catch (const std::exception& e) {
    io.err << fmt::format("error: trace export: {}\n", e.what());
    return kExitFailure;
  }
  return kExitOk;
}

int run_trace_play(const TracePlayOptions& o, Streams io, const Environment& env) {
  if (!outputs_ok("trace play", {{"--json", o.json_file}}, {o.path}, io)) return kExitBadInput;
  std::optional<models::scenario::Scenario> on;
  std::optional<sim::DeviceProfile> profile;
  sim::chakra::TracePricing pricing;
  if (!o.on.scenario.empty()) {
    on = load_for_cli(o.on, io, env);
    if (!on) return kExitBadInput;
    const auto measured = profile_for(*on, o.profile, io, env);
    if (!measured) return kExitBadInput;
    profile = sim::on_hardware(*measured, on->cluster.gpu);
    pricing = {&*on, &*profile, trace_group(o.group)};
  }
  auto read = read_trace_program(o.path, o.ignore_ctrl_deps, on ? &pricing : nullptr, io);
  if (!read) return kExitBadInput;
  const sim::chakra::EtSet& set = read->set;
  const sim::StepProgram& program = read->program;
  const sim::ProgramRun run = sim::evaluate_program(program);
  io.out << fmt::format(
      "Played {}: {} file{}, {}\n", o.path, set.files.size(), set.files.size() == 1 ? "" : "s",
      set.ranks <= 1 ? std::string("rank 0") : fmt::format("ranks 0-{}", set.ranks - 1));
  nlohmann::json files = nlohmann::json::array();
  for (std::size_t f = 0; f < set.files.size(); ++f) {
    double compute = 0;
    double collectives = 0;
    double end = 0;
    const auto& tasks = program.stages[f].tasks;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      const auto& t = run.times[f][i];
      end = std::max(end, t.end_s);
      (tasks[i].computes() ? compute : collectives) +=
          tasks[i].kind == sim::TaskKind::dp_collective || tasks[i].computes() ? t.end_s - t.start_s
                                                                               : 0;
    }
    const std::string name = set.files[f].file.empty() ? std::to_string(f) : set.files[f].file;
    io.out << fmt::format(
        "  {}: {}\n    ends at {:.6f} s: compute {:.6f} s, collectives {:.6f} s\n", name,
        file_line(set.files[f]), end, compute, collectives);
    files.push_back({{"file", name},
                     {"nodes", set.files[f].graph.nodes.size()},
                     {"end_s", end},
                     {"compute_s", compute},
                     {"collectives_s", collectives}});
  }
  std::string how = "traced durations";
  if (on) {
    const models::GroupSpan span = models::group_span(pricing.group, *on);
    how = fmt::format(
        "traced compute; collectives priced on {}: its {} group, {} ranks on {} node{}; sends "
        "between its stages",
        on->name.empty() ? on->file : on->name, o.group, span.size, span.nodes,
        span.nodes == 1 ? "" : "s");
  }
  io.out << fmt::format("Step time: {:.6f} s ({}; dependencies as traced)\n", run.step_time_s, how);
  if (!o.json_file.empty()) {
    const nlohmann::json j{{"path", o.path}, {"step_time_s", run.step_time_s}, {"files", files}};
    if (!write_json(o.json_file, j, "trace play", io)) return kExitFailure;
  }
  return kExitOk;
}

}  // namespace myriad::cli
