// The title a report gives a run. A scenario's `name` describes the file as
// written ("Llama 3 70B on 2,048 H100"); once `--set` changes its cluster or
// model, the name would say what is no longer run, so the title then comes from
// the run as resolved, with the name it came from beside it.
#pragma once

#include <string>

#include "models/scenario/scenario.hpp"

namespace myriad::models::scenario {

// The scenario's name (its file when it has none) when no override touched a
// `cluster.` or `model.` key, or when `name` itself was set by one; else
// "Llama 3 70B on 2,048 B200 (scenario "Llama 3 70B on 2,048 H100" with --set
// cluster.gpu)": the model's name, the GPU count and the GPU's name as resolved,
// and the overrides of cluster and model keys (read from `origins`).
std::string run_title(const Scenario& s);

// 16384 as "16,384".
std::string grouped(long long n);

}  // namespace myriad::models::scenario
