#pragma once
// Text that repeats across the ranks of a run, kept once per process: a process group's member list
// ("[0, 1, ..., 1023]") is written on every collective of every rank, so a copy per collective would make
// a run's summaries grow with ranks x group size. Distinct texts are few (one per process group), so the
// pool is never emptied.
#include <iosfwd>
#include <string>
#include <string_view>

namespace tuneprof {

// The pooled copy of `text`, valid until the process exits. Safe to call from several threads.
std::string_view InternText(std::string_view text);

// A field holding pooled text: whatever it is given is interned (InternText), so that it never points
// into a caller's buffer, and equal texts on every rank of a run share one copy. For labels, units and
// fixed advice that repeat across ranks, not for text that carries a rank's own numbers (the pool is
// never emptied).
class SharedText {
 public:
  SharedText() = default;
  SharedText(std::string_view text) : view_(InternText(text)) {}               // NOLINT: implicit, as a string is
  SharedText(const char* text) : SharedText(std::string_view(text)) {}         // NOLINT
  SharedText(const std::string& text) : SharedText(std::string_view(text)) {}  // NOLINT

  std::string_view view() const { return view_; }
  operator std::string_view() const { return view_; }  // NOLINT: reads as the text it holds
  std::string str() const { return std::string(view_); }
  bool empty() const { return view_.empty(); }
  size_t size() const { return view_.size(); }

  friend bool operator==(const SharedText& a, std::string_view b) { return a.view_ == b; }
  friend auto operator<=>(const SharedText& a, const SharedText& b) { return a.view_ <=> b.view_; }

 private:
  std::string_view view_;
};

// For test failures (googletest prints a value through PrintTo).
void PrintTo(const SharedText& text, std::ostream* out);

}  // namespace tuneprof
