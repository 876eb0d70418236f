// The one escaping point for text meant for a terminal: `myriad` writes its
// standard output and standard error through it (tools/cli/cli.cpp), so that a
// name from the input (a scenario's file or name, a model's, a --vary value)
// cannot clear the screen, retitle the window or hide what follows.
#pragma once

#include <streambuf>

namespace myriad::cli {

// A stream buffer that writes everything it is given on to `target` with control
// bytes other than line feed and tab (escape, bell, carriage return, NUL, DEL)
// written as \xNN (models::scenario::printable). It holds nothing back: what it is given is
// at `target` when the call returns, in order with what others write there. A
// write `target` refuses fails here too, so the stream over it goes bad.
class PrintableStreambuf : public std::streambuf {
 public:
  explicit PrintableStreambuf(std::streambuf* target) : target_(target) {}

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  std::streambuf* target_;
};

}  // namespace myriad::cli
