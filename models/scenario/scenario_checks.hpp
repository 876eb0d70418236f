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

}  // namespace myriad::models::scenario
