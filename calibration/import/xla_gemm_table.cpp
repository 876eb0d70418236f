// OpenXLA's GEMM performance table (xla.GemmPerfTable in protobuf text format,
// xla/service/gpu/model/default_matmul_perf_table.txtpb): per device key
// ("sm_90" for H100), entries of a batch and a shape with the FLOP/s XLA
// measured for each operand type. One kernel row per entry of the chosen key with
// bf16 operands (the fit's gemm family; the other types have none), its one
// sample the entry's time (2 b m n k / FLOP/s). Read a token at a
// time: only the entries of the key being read are kept until the key is known.
#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <set>

#include "calibration/import/readers.hpp"

namespace myriad::calibration {
namespace {

struct Token {
  enum Kind { name, colon, open, close, text, number, end } kind = end;
  std::string value;
  int line = 0;
};

// The protobuf text format's tokens this table uses: field names, ':', '{', '}',
// quoted strings and numbers; '#' comments to the end of the line.
class Tokens {
 public:
  Tokens(std::istream& in, const std::string& path) : in_(in), path_(path) {}

  Token next() {
    int c = in_.get();
    while (c != EOF) {
      if (c == '\n') {
        ++line_;
      } else if (c == '#') {
        while (c != EOF && c != '\n') c = in_.get();
        continue;
      } else if (std::isspace(c) == 0) {
        break;
      }
      c = in_.get();
    }
    Token t;
    t.line = line_;
    if (c == EOF) return t;
    if (c == ':' || c == '{' || c == '}') {
      t.kind = c == ':' ? Token::colon : c == '{' ? Token::open : Token::close;
      return t;
    }
    if (c == '"') {
      t.kind = Token::text;
      for (c = in_.get(); c != '"'; c = in_.get()) {
        if (c == EOF || c == '\n') fail(t.line, "a string without its closing quote");
        if (c == '\\') fail(t.line, "an escape in a string (the table's keys have none)");
        if (t.value.size() > 256) fail(t.line, "a string of more than 256 characters");
        t.value.push_back(static_cast<char>(c));
      }
      return t;
    }
    const bool digit = std::isdigit(c) != 0 || c == '-' || c == '.';
    if (std::isalnum(c) == 0 && c != '_' && !digit) {
      fail(t.line, fmt::format("an unexpected character '{}'", static_cast<char>(c)));
    }
    t.kind = digit ? Token::number : Token::name;
    t.value.push_back(static_cast<char>(c));
    for (c = in_.peek(); std::isalnum(c) != 0 || c == '_' || c == '.' || c == '-' || c == '+';
         c = in_.peek()) {
      if (t.value.size() > 64) fail(t.line, "a word of more than 64 characters");
      t.value.push_back(static_cast<char>(in_.get()));
    }
    return t;
  }

  [[noreturn]] void fail(int line, const std::string& what) const {
    import_fail(path_, fmt::format("line {}", line), what);
  }

 private:
  std::istream& in_;
  const std::string& path_;
  int line_ = 1;
};

// One table entry's fields, as read.
struct Entry {
  double b = 0, m = 0, n = 0, k = 0;
  std::optional<double> flops;  // of the type asked for
  int line = 0;
};

class TableReader {
 public:
  TableReader(std::istream& in, const std::string& path, const ImportOptions& o)
      : tokens_(in, path), path_(path), key_(o.table_key) {}

  Imported read() {
    for (Token t = tokens_.next(); t.kind != Token::end; t = tokens_.next()) {
      expect_field(t, "entries");
      expect(Token::open, "'{' after entries");
      device_entry();
    }
    return finish();
  }

 private:
  void expect_field(const Token& t, const char* name) {
    if (t.kind != Token::name || t.value != name) {
      tokens_.fail(t.line, fmt::format("expected the field {}, found {}", name,
                                       t.kind == Token::end ? "the end" : "'" + t.value + "'"));
    }
  }
  Token expect(Token::Kind kind, const char* what) {
    Token t = tokens_.next();
    if (t.kind != kind) tokens_.fail(t.line, fmt::format("expected {}", what));
    return t;
  }
  double number(const char* field) {
    expect(Token::colon, "':'");
    const Token t = expect(Token::number, "a number");
    double v = 0;
    const auto [end, ec] = std::from_chars(t.value.data(), t.value.data() + t.value.size(), v);
    if (ec != std::errc{} || end != t.value.data() + t.value.size() || !(v >= 0) || v > 1e18) {
      tokens_.fail(t.line,
                   fmt::format("{}: expected a non-negative number, found '{}'", field, t.value));
    }
    return v;
  }

  // entries { key: "sm_90" value { entries { ... } ... } }
  void device_entry() {
    std::string key;
    std::vector<Entry> entries;
    for (Token t = tokens_.next(); t.kind != Token::close; t = tokens_.next()) {
      if (t.kind == Token::name && t.value == "key") {
        expect(Token::colon, "':'");
        key = expect(Token::text, "a quoted device key").value;
      } else if (t.kind == Token::name && t.value == "value") {
        expect(Token::open, "'{' after value");
        for (Token e = tokens_.next(); e.kind != Token::close; e = tokens_.next()) {
          expect_field(e, "entries");
          expect(Token::open, "'{' after entries");
          entries.push_back(shape_entry(e.line));
        }
      } else {
        tokens_.fail(t.line,
                     fmt::format("expected key or value in a device's entry, found '{}'", t.value));
      }
    }
    keys_.insert(key);
    if (key_.empty() || key == key_) {
      for (Entry& e : entries) kept_.emplace_back(key, e);
    }
    if (kept_.size() > kMaxImportedRows) {
      import_fail(path_, "entries",
                  fmt::format("more than {} entries (a row each, the most one import takes): "
                              "split the file or give --key",
                              kMaxImportedRows));
    }
  }

  // entries { b: 1 m: 256 n: 256 k: 256 flops { key: "bf16xbf16->bf16" value: ... } ... }
  Entry shape_entry(int line) {
    Entry e;
    e.line = line;
    for (Token t = tokens_.next(); t.kind != Token::close; t = tokens_.next()) {
      if (t.kind != Token::name) tokens_.fail(t.line, "expected a field of a GEMM entry");
      if (t.value == "b") {
        e.b = number("b");
      } else if (t.value == "m") {
        e.m = number("m");
      } else if (t.value == "n") {
        e.n = number("n");
      } else if (t.value == "k") {
        e.k = number("k");
      } else if (t.value == "flops") {
        expect(Token::open, "'{' after flops");
        std::string type;
        std::optional<double> value;
        for (Token f = tokens_.next(); f.kind != Token::close; f = tokens_.next()) {
          if (f.kind == Token::name && f.value == "key") {
            expect(Token::colon, "':'");
            type = expect(Token::text, "a quoted operand type").value;
          } else if (f.kind == Token::name && f.value == "value") {
            value = number("flops.value");
          } else {
            tokens_.fail(f.line, "expected key or value in flops");
          }
        }
        types_.insert(type);
        if (type == type_) e.flops = value;
      } else {
        tokens_.fail(t.line, fmt::format("expected b, m, n, k or flops in a GEMM entry, found '{}'",
                                         t.value));
      }
    }
    return e;
  }

  Imported finish() {
    const std::string keys = fmt::format("{}", fmt::join(keys_, ", "));
    if (key_.empty() && keys_.size() > 1) {
      import_fail(path_, "entries",
                  fmt::format("the table holds {} devices ({}): give --key", keys_.size(), keys));
    }
    if (kept_.empty()) {
      import_fail(path_, "entries",
                  keys_.empty() ? std::string("no device entries")
                                : fmt::format("no device {} (the table holds {})", key_, keys));
    }
    Imported out;
    int missing = 0;
    for (const auto& [key, e] : kept_) {
      if (e.b < 1 || e.m < 1 || e.n < 1 || e.k < 1) {
        tokens_.fail(e.line, "expected b, m, n and k of at least 1 in every GEMM entry");
      }
      if (!e.flops || *e.flops <= 0) {
        ++missing;
        continue;
      }
      Row r;
      r.name = fmt::format("xla.{} {} b={} m={} n={} k={}", key, type_, e.b, e.m, e.n, e.k);
      r.kind = RowKind::kernel;
      r.family = "gemm";
      r.op_class = models::OpClass::gemm;
      r.gemm = {e.m, e.n, e.k, e.b};
      r.flops = 2 * e.b * e.m * e.n * e.k;
      r.times_s = {r.flops / *e.flops};
      r.best_s = r.times_s.front();
      r.check = "pass";
      r.arguments = {{"source", "xla-gemm-table"},
                     {"file", path_},
                     {"key", key},
                     {"operand_types", type_},
                     {"line", e.line},
                     {"verified", "not verified by the source"}};
      out.rows.push_back(std::move(r));
    }
    if (out.rows.empty()) {
      import_fail(path_, "entries",
                  fmt::format("no entry of {} has FLOP/s for {} (its types: {})", key_, type_,
                              fmt::join(types_, ", ")));
    }
    out.device = key_.empty() ? *keys_.begin() : key_;
    out.notes.push_back(fmt::format(
        "{} GEMMs of {} ({}), one sample each: the table's time (2 b m n k / its FLOP/s){}",
        out.rows.size(), out.device, type_,
        missing > 0 ? fmt::format("; {} entries without {} left out", missing, type_) : ""));
    return out;
  }

  Tokens tokens_;
  const std::string& path_;
  std::string key_;
  // The fit's gemm family is bf16: the table's other types have no family.
  std::string type_ = "bf16xbf16->bf16";
  std::set<std::string> keys_;
  std::set<std::string> types_;
  std::vector<std::pair<std::string, Entry>> kept_;
};

}  // namespace

Imported import_xla_gemm_table(std::istream& in, const std::string& path, const ImportOptions& o) {
  return TableReader(in, path, o).read();
}

}  // namespace myriad::calibration
