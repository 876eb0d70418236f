// `myriad campaign --vary KEY=VALUES` (campaign_sensitivity.cpp): the campaign
// once per value of one key, the figures that decide against the value.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "models/scenario/scenario.hpp"
#include "sim/campaign/campaign_report.hpp"
#include "tools/cli/campaign_options.hpp"
#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

// A campaign's JSON (--json; campaign_command.cpp), which each value's point holds.
nlohmann::json campaign_json(const models::scenario::Scenario& s,
                             const sim::campaign::CampaignReport& report);

// Every value of `o.vary` loaded and checked, then each one's campaign with `options`.
int run_sensitivity(const CampaignCliOptions& o, Streams io, const Environment& env,
                    const models::scenario::Scenario& base, const std::string& text,
                    const sim::campaign::CampaignOptions& options);

}  // namespace myriad::cli
