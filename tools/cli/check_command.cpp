// `myriad check SCENARIO`: load, resolve presets, validate, and print the
// resolved scenario in canonical units, or every problem found.
#include <fmt/format.h>

#include <memory>
#include <ostream>

#include "models/scenario/loader.hpp"
#include "tools/cli/check_options.hpp"

namespace myriad::cli {
namespace {

std::string summary(const models::scenario::Scenario& s) {
  const auto& c = s.cluster;
  const auto& p = s.parallelism;
  return fmt::format(
      "{} GPUs ({}) = {} nodes x {}; tp {} x pp {} x cp {} x dp {}{}; {} micro-batches of {} "
      "per replica and step",
      c.gpus, c.gpu.name, c.nodes(), c.gpus_per_node, p.tp, p.pp, p.cp, p.dp,
      p.ep > 1 ? fmt::format(" (ep {})", p.ep) : "", p.micro_batches(), p.micro_batch);
}

}  // namespace

int run_check(const CheckOptions& o, Streams io, const Environment& env) {
  const VerbOutputs outputs{"check", {{"--json", o.json_file}}};
  if (!outputs_ok(outputs.verb, outputs.outputs, {o.scenario.scenario}, io)) {
    return kExitBadInput;
  }
  const auto loaded = load_for_cli(o.scenario, io, env, nullptr, &outputs);
  if (!loaded) return kExitBadInput;
  const models::scenario::Scenario& s = *loaded;
  const models::scenario::Resolved resolved = models::scenario::resolve_for_output(s);
  if (!o.json_file.empty()) {
    if (!write_json(o.json_file, models::scenario::to_json(resolved), "check", io))
      return kExitFailure;
  }
  if (!o.quiet) {
    io.out << fmt::format(
        "# {}: valid{}\n# {}\n", scenario_name(o.scenario),
        s.warnings.empty() ? "" : fmt::format(" ({} warnings)", s.warnings.size()), summary(s));
    io.out << models::scenario::to_yaml(resolved, o.origins);
  }
  return kExitOk;
}

}  // namespace myriad::cli
