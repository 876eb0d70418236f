#include "tools/report/html_report.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace myriad::report {
namespace {

std::string read_asset(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw std::runtime_error(fmt::format(
        "the HTML report needs {}, which is not there: run tools/setup.sh (it installs the "
        "report's npm packages, Vega and Vega-Lite, into {})",
        file.string(), (file.parent_path().parent_path().parent_path()).string()));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Replaces every `from` in `text` by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// Style and script code must not close its element early: </script and </style
// only occur in its strings, where <\/ is the same text.
std::string code_safe(const std::string& text) {
  return replaced(replaced(text, "</script", "<\\/script"), "</style", "<\\/style");
}

}  // namespace

std::string script_json(const nlohmann::json& data) {
  const std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(json.size());
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (json.compare(i, 3, "\xe2\x80\xa8") == 0) {  // U+2028 in UTF-8
      out += "\\u2028";
      i += 2;
    } else if (json.compare(i, 3, "\xe2\x80\xa9") == 0) {  // U+2029
      out += "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string html_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string html_page(const nlohmann::json& data, const std::filesystem::path& dir) {
  if (!data.is_object() || !data.contains("kind")) {
    throw std::invalid_argument("an HTML report's data needs a kind");
  }
  const auto modules = dir / "node_modules";
  const std::string vega = read_asset(modules / "vega" / "build" / "vega.min.js");
  const std::string vega_lite = read_asset(modules / "vega-lite" / "build" / "vega-lite.min.js");
  const std::string script = read_asset(dir / "report.js");
  const std::string style = read_asset(dir / "report.css");
  const std::string title = data.value("title", std::string("Myriad report"));
  const std::string json = script_json(data);
  std::string page;
  page.reserve(vega.size() + vega_lite.size() + script.size() + json.size() + 4096);
  page += "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += fmt::format("<title>{}</title>\n", html_text(title));
  page +=
      "<meta name=\"generator\" content=\"myriad\">\n<style>\n" + code_safe(style) + "\n</style>\n";
  page += "<script>\n" + code_safe(vega) + "\n</script>\n";
  page += "<script>\n" + code_safe(vega_lite) + "\n</script>\n";
  page += "<script id=\"myriad-data\" type=\"application/json\">" + json + "</script>\n";
  page += "</head>\n<body>\n<div id=\"app\"></div>\n<script>\n" + code_safe(script) +
          "\n</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace myriad::report
