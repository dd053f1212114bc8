#pragma once
// The summary encoding's writer and reader (docs/summary-format.md), both driven by the one field list of
// summary_fields.h; included by the summary files' sources only.
#include <bit>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "base/interned_text.h"
#include "pipeline/summary_fields.h"

namespace tuneprof::summary_format {

// Little-endian fixed-width integers, IEEE doubles by their bits, length-prefixed strings and vectors, a
// presence byte before optional values.
class Writer {
 public:
  template <class... T>
  void operator()(const T&... values) {
    (Put(values), ...);
  }
  std::string& out() { return out_; }

 private:
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  void Put(bool v) { out_.push_back(v ? 1 : 0); }
  void Put(double v) { U64(std::bit_cast<uint64_t>(v)); }
  void Put(const PartsBeforeBubble& p) {
    for (size_t i = 0; i < kPartsBeforeBubble; ++i) Put((*p.parts)[i]);
  }
  template <class T>
  requires(std::is_integral_v<T> || std::is_enum_v<T>) void Put(T v) { U64(static_cast<uint64_t>(v)); }
  void PutText(std::string_view v) {
    U64(v.size());
    out_.append(v);
  }
  void Put(const std::string& v) { PutText(v); }
  void Put(const SharedText& v) { PutText(v); }  // written as a string: pooled in memory only
  // Pooled text (Collective::group_ranks, thousands of characters on every collective of a large group):
  // written once per file, then referred to by its number in order of first appearance.
  void Put(std::string_view v) {
    const auto [it, added] = pooled_.try_emplace(v, pooled_.size() + 1);
    U64(added ? 0 : it->second);
    if (added) PutText(v);
  }
  template <class T>
  void Put(const std::optional<T>& v) {
    Put(v.has_value());
    if (v) Put(*v);
  }
  template <class T>
  void Put(const std::vector<T>& v) {
    U64(v.size());
    for (const T& item : v) Put(item);
  }
  template <class T, size_t N>
  void Put(const std::array<T, N>& v) {
    for (const T& item : v) Put(item);
  }
  template <class T, size_t N>
  void Put(const T (&v)[N]) {
    for (const T& item : v) Put(item);
  }
  template <class T>
  void Put(const std::unique_ptr<T>& v) {  // as opt<T>
    Put(v != nullptr);
    if (v) Put(*v);
  }
  // The chip by its profile's name ("" for an unknown chip): the reader finds it among its run's profiles.
  void Put(const HardwareSelection& v) {
    Put(v.profile != nullptr ? v.profile->name : std::string());
    Put(v.device_name);
    Put(v.how);
    Put(v.inferred);
    Put(v.label);
  }
  template <class T>
  requires std::is_class_v<T>
  void Put(const T& v) {
    // Fields() lists the members once for both directions; writing only reads them.
    Fields(*this, const_cast<T&>(v));
  }

  std::string out_;
  std::unordered_map<std::string_view, uint64_t> pooled_;  // text -> its number (1, 2, ...)
};

class Reader {
 public:
  // `profiles`: the chips a HardwareSelection's name is looked up in (the run's); may be null where the
  // bytes hold none.
  explicit Reader(std::string_view bytes, const HardwareProfiles* profiles = nullptr)
      : bytes_(bytes), profiles_(profiles) {}
  template <class... T>
  void operator()(T&... values) {
    (Get(values), ...);
  }
  bool ok() const { return !failed_; }
  const std::string& unknown_chip() const { return unknown_chip_; }
  bool at_end() const { return at_ == bytes_.size(); }
  bool Expect(std::string_view text) {
    if (bytes_.substr(at_, text.size()) != text) return false;
    at_ += text.size();
    return true;
  }

 private:
  void Get(PartsBeforeBubble& p) {
    for (size_t i = 0; i < kPartsBeforeBubble; ++i) Get((*p.parts)[i]);
  }
  void Fail() {
    failed_ = true;
    at_ = bytes_.size();
  }
  uint64_t U64() {
    if (bytes_.size() - at_ < 8) {
      Fail();
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes_[at_ + i])) << (8 * i);
    at_ += 8;
    return v;
  }
  void Get(bool& v) {
    if (at_ >= bytes_.size() || static_cast<uint8_t>(bytes_[at_]) > 1) return Fail();
    v = bytes_[at_++] == 1;
  }
  void Get(double& v) { v = std::bit_cast<double>(U64()); }
  template <class T>
  requires std::is_integral_v<T>
  void Get(T& v) { v = static_cast<T>(U64()); }
  template <class T>
  requires std::is_enum_v<T>
  void Get(T& v) {
    const uint64_t raw = U64();
    if (raw >= EnumCount(T{})) return Fail();
    v = static_cast<T>(raw);
  }
  void Get(std::string& v) {
    const uint64_t size = U64();
    if (size > bytes_.size() - at_) return Fail();
    v.assign(bytes_.substr(at_, size));
    at_ += size;
  }
  void Get(SharedText& v) {  // written as a string (Writer::Put(const SharedText&))
    std::string text;
    Get(text);
    v = text;
  }
  void Get(std::string_view& v) {  // pooled text (Writer::Put(std::string_view))
    const uint64_t reference = U64();
    if (reference > pooled_.size()) return Fail();
    if (reference > 0) {
      v = pooled_[reference - 1];
      return;
    }
    const uint64_t size = U64();
    if (size > bytes_.size() - at_) return Fail();
    v = InternText(bytes_.substr(at_, size));
    pooled_.push_back(v);
    at_ += size;
  }
  template <class T>
  void Get(std::optional<T>& v) {
    bool present = false;
    Get(present);
    if (!present) return v.reset();
    Get(v.emplace());
  }
  template <class T>
  void Get(std::vector<T>& v) {
    const uint64_t size = U64();
    v.clear();
    // Every item takes at least a byte: a count past the bytes left is corruption, not an allocation.
    if (size > bytes_.size() - at_) return Fail();
    for (uint64_t i = 0; i < size && !failed_; ++i) Get(v.emplace_back());
  }
  template <class T, size_t N>
  void Get(std::array<T, N>& v) {
    for (T& item : v) Get(item);
  }
  template <class T, size_t N>
  void Get(T (&v)[N]) {
    for (T& item : v) Get(item);
  }
  template <class T>
  void Get(std::unique_ptr<T>& v) {
    bool present = false;
    Get(present);
    if (!present) return v.reset();
    v = std::make_unique<T>();
    Get(*v);
  }
  // A chip the run's profiles lack is noted, not failed on: the summary's settings, compared with the
  // run's after decoding, say why in words (made with another --hardware-file).
  void Get(HardwareSelection& v) {
    std::string name;
    Get(name);
    v.profile = nullptr;
    if (!name.empty()) {
      v.profile = profiles_ != nullptr ? profiles_->FindByName(name) : nullptr;
      if (v.profile == nullptr && unknown_chip_.empty()) unknown_chip_ = name;
    }
    Get(v.device_name);
    Get(v.how);
    Get(v.inferred);
    Get(v.label);
  }
  template <class T>
  requires std::is_class_v<T>
  void Get(T& v) { Fields(*this, v); }

  std::string_view bytes_;
  const HardwareProfiles* profiles_;
  std::string unknown_chip_;              // the first chip name not among profiles_
  std::vector<std::string_view> pooled_;  // pooled texts in order of first appearance
  size_t at_ = 0;
  bool failed_ = false;
};

// The layout a writer's calls make, in words rather than bytes: one letter per value ('b' bool, 'i'
// integer, 'f' double, 's' string, 'r' pooled text), "e<count>" per enum, '?' before an optional value,
// "[...]" around a vector's item, "<N>" before an array's, "{...}" around a struct's fields. Every
// vector, optional and pointer is described by its item type, empty or not, so the description depends
// on the declared fields alone (SummaryLayout).
class Shape {
 public:
  template <class... T>
  void operator()(const T&... values) {
    (Put(values), ...);
  }
  const std::string& out() const { return out_; }

 private:
  void Put(bool) { out_ += 'b'; }
  void Put(double) { out_ += 'f'; }
  void Put(const PartsBeforeBubble&) { out_ += "<" + std::to_string(kPartsBeforeBubble) + ">f"; }
  template <class T>
  requires std::is_integral_v<T>
  void Put(T) { out_ += 'i'; }
  template <class T>
  requires std::is_enum_v<T>
  void Put(T) { out_ += "e" + std::to_string(EnumCount(T{})); }
  void Put(const std::string&) { out_ += 's'; }
  void Put(const SharedText&) { out_ += 's'; }
  void Put(std::string_view) { out_ += 'r'; }
  template <class T>
  void Item() {
    const T item{};
    Put(item);
  }
  template <class T>
  void Put(const std::optional<T>&) {
    out_ += '?';
    Item<T>();
  }
  template <class T>
  void Put(const std::unique_ptr<T>&) {
    out_ += '?';
    Item<T>();
  }
  template <class T>
  void Put(const std::vector<T>&) {
    out_ += '[';
    Item<T>();
    out_ += ']';
  }
  template <class T, size_t N>
  void Put(const std::array<T, N>&) {
    out_ += "<" + std::to_string(N) + ">";
    Item<T>();
  }
  template <class T, size_t N>
  void Put(const T (&)[N]) {
    out_ += "<" + std::to_string(N) + ">";
    Item<T>();
  }
  void Put(const HardwareSelection& v) { (*this)(std::string(), v.device_name, v.how, v.inferred, v.label); }
  template <class T>
  requires std::is_class_v<T>
  void Put(const T& v) {
    out_ += '{';
    Fields(*this, const_cast<T&>(v));
    out_ += '}';
  }

  std::string out_;
};

// FNV-1a over the bytes before it: a flipped byte in a string or a number is caught, not read as data.
inline uint64_t Checksum(std::string_view bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (const char c : bytes) hash = (hash ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return hash;
}

}  // namespace tuneprof::summary_format
