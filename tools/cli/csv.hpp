// CSV text fields for the tables verbs write (sweep's rows, campaign's event log).
#pragma once

#include <string>
#include <string_view>

namespace myriad::cli {

// One CSV field (RFC 4180) for text: a name, a value from the input, a message.
// Quoted, with its quotes doubled, when it holds a comma, a quote or a line
// break. A field a spreadsheet would run as a formula, one starting with =, +, -,
// @, a tab or a carriage return, gets a ' before it, inside quotes (OWASP's advice
// on CSV injection), unless it is a plain number such as -3.5, which stays a
// number. Columns Myriad computes as numbers are written as numbers, not here.
std::string csv_field(std::string_view text);

}  // namespace myriad::cli
