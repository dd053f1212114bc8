#pragma once
// Interns strings into 32-bit ids so that the model stores names once, not per event.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace tuneprof {

struct StringId {
  uint32_t value = 0;  // 0 is the empty string
  friend bool operator==(StringId, StringId) = default;
  friend auto operator<=>(StringId, StringId) = default;
};

class StringPool {
 public:
  StringPool();
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;
  StringPool(StringPool&&) = default;
  StringPool& operator=(StringPool&&) = default;

  StringId Intern(std::string_view text);
  // Returns the id of `text` if interned, else nullopt-like kNone.
  bool Find(std::string_view text, StringId* id) const;
  std::string_view Get(StringId id) const { return views_[id.value]; }
  size_t size() const { return views_.size(); }

 private:
  void Grow();
  char* Store(std::string_view text);

  // Open-addressing table of ids (0 = empty slot); the hash is kept beside the id to skip compares.
  struct Slot {
    uint32_t id = 0;
    uint32_t hash = 0;
  };
  std::vector<Slot> slots_;
  std::vector<std::string_view> views_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0;
  size_t block_size_ = 0;
};

}  // namespace tuneprof
