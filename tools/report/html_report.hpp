// Myriad's HTML reports: one self-contained page a planner opens in a browser,
// offline. The page is Myriad's report script (tools/report/report.js, its style
// report.css) with Vega and Vega-Lite inlined (npm packages tools/setup.sh puts in
// tools/report/node_modules) and the data as JSON. The script draws what the
// data's "kind" asks for:
//   configurations (sweep, plan): every configuration evaluated as a point of an
//     interactive scatterplot (axes and colour picked, brushing filters, a click
//     shows its breakdown, memory and scenario YAML), the Pareto front
//     highlighted, and the objective against each parameter in small multiples;
//   campaign: effective training time ratio and days by policy with their 95 %
//     intervals, and hours lost by cause;
//   step: the step's breakdown by engine, and each stage's waiting.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace myriad::report {

// The page for `data` (an object with "kind" and "title"). `dir` holds
// report.js, report.css and node_modules/{vega,vega-lite}/build; throws
// std::runtime_error naming what is missing and how to install it.
std::string html_page(const nlohmann::json& data, const std::filesystem::path& dir);

// `data` as JSON text to embed in a <script> element: every <, > and & (they occur
// only inside strings) written as \u003c, \u003e, \u0026, and U+2028 and U+2029 as
// \u2028 and \u2029, so that no </script>, <!-- or <script> from a name can end the
// element early or change how the browser reads on, and the element's text parses
// back to `data` exactly. Invalid UTF-8 in a string becomes U+FFFD.
std::string script_json(const nlohmann::json& data);

// `text` as HTML text or a quoted attribute value: & < > " ' as character references.
std::string html_text(std::string_view text);

}  // namespace myriad::report
