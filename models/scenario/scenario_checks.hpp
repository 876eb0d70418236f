// After parsing: fill in derived keys, then check the combinations that no
// single key can (tp dividing heads, gpus = tp * pp * cp * dp, batch sizes...).
#pragma once

#include "models/scenario/diagnostics.hpp"
#include "models/scenario/scenario.hpp"

namespace myriad::models::scenario {

// Fills keys whose default is derived from others, recording them as derived.
void derive(Scenario& scenario);
// The model keys derived from others (kv_heads, ffn_hidden, the experts' FFN), for
// a model section at `path` whose given keys are in `origins`.
void derive_model(ModelSpec& model, const std::string& path, Origins& origins);
// Reports every impossible or dubious combination; `file` locates keys that
// were never written.
void check(const Scenario& scenario, const Location& file, Diagnostics& diagnostics);

// What a layout search changes from one candidate to the next (the parallelism
// section and model.moe.prune) needs only these, on a scenario derived and
// checked whole before: the keys derived from the layout (schedule, etp, dp),
// and the checks those keys can break (everything but the faults, the policies
// and the bandwidth floors, which no layout reads). A search of a million
// candidates spent most of its time re-deriving and re-checking the rest.
void derive_layout(Scenario& scenario);
void check_layout(const Scenario& scenario, const Location& file, Diagnostics& diagnostics);

}  // namespace myriad::models::scenario
