#include "io/gzip_source.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <vector>

#include "io/gzip_for_test.h"
#include "io/memory_source.h"

namespace tuneprof {
namespace {

// A trace-like text that compresses as real traces do, with enough variety to need several blocks.
std::string TraceText(int events) {
  std::string text = "{\"traceEvents\": [\n";
  for (int i = 0; i < events; ++i) {
    text += "  {\"ph\": \"X\", \"name\": \"kernel_" + std::to_string(i % 37) +
            "\", \"ts\": " + std::to_string(1000 + i * 13) + ", \"dur\": " + std::to_string(i % 101) + "},\n";
  }
  return text + "  {}]}";
}

// What reading a whole source gives: its bytes, or its error, and its cut-off verdict.
struct Outcome {
  bool ok = true;
  std::string text;  // the bytes, or the error message
  bool truncated = false;
  bool operator==(const Outcome&) const = default;
};

Outcome ReadThrough(const std::string& gz, GzipInflater inflater, size_t input_bytes, size_t read_size) {
  auto source = MakeGzipSource(std::make_unique<MemorySource>("t.json.gz", gz), input_bytes, inflater);
  Outcome outcome;
  std::vector<char> buffer(read_size);
  for (;;) {
    Result<size_t> n = source->Read(buffer.data(), buffer.size());
    if (!n.ok()) return Outcome{false, n.status().message(), false};
    if (*n == 0) break;
    outcome.text.append(buffer.data(), *n);
  }
  outcome.truncated = source->truncated();
  return outcome;
}

// Both inflaters read `gz` alike, whatever the sizes of the input buffer and of the reads.
void ExpectSameThroughBoth(const std::string& gz, const std::string& what) {
  for (size_t input : {size_t{4096}, size_t{1} << 20}) {
    for (size_t read : {size_t{1000}, size_t{1} << 16}) {
      const Outcome zlib = ReadThrough(gz, GzipInflater::kZlib, input, read);
      const Outcome isal = ReadThrough(gz, GzipInflater::kIsal, input, read);
      EXPECT_EQ(zlib, isal) << what << " (input " << input << ", reads of " << read << "): zlib "
                            << (zlib.ok ? "read " + std::to_string(zlib.text.size()) + " bytes" : zlib.text)
                            << ", igzip "
                            << (isal.ok ? "read " + std::to_string(isal.text.size()) + " bytes" : isal.text);
    }
  }
}

TEST(GzipSource, ReadsMembersAndPaddingAsZlibDoes) {
  const std::string text = TraceText(20000);
  const std::string gz = Gzip(text);
  const Outcome one = ReadThrough(gz, DefaultGzipInflater(), 4096, 1000);
  ASSERT_TRUE(one.ok) << one.text;
  EXPECT_EQ(one.text, text);
  EXPECT_FALSE(one.truncated);
  ExpectSameThroughBoth(gz, "one member");
  ExpectSameThroughBoth(gz + Gzip("{}", 1) + Gzip(text, 9), "three members");
  ExpectSameThroughBoth(gz + std::string(10000, '\0'), "zero padding at the end");
  ExpectSameThroughBoth(gz + std::string(512, '\0') + gz, "a member after zero padding");
  ExpectSameThroughBoth(Gzip(""), "an empty member");
}

TEST(GzipSource, DamageGetsZlibsVerdict) {
  const std::string text = TraceText(5000);
  const std::string gz = Gzip(text);
  ExpectSameThroughBoth(gz + "garbage", "trailing garbage");
  ExpectSameThroughBoth(gz + "x", "one trailing byte");
  ExpectSameThroughBoth(gz + "\x1f", "half a magic number after the member");
  ExpectSameThroughBoth(gz + std::string(512, '\0') + "garbage", "garbage after zero padding");
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 8] ^= 0x55;
  ExpectSameThroughBoth(bad_crc, "a wrong CRC");
  std::string bad_size = gz;
  bad_size[bad_size.size() - 2] ^= 0x01;
  ExpectSameThroughBoth(bad_size, "a wrong length");
  std::string bad_header = gz;
  bad_header[2] = 7;
  ExpectSameThroughBoth(bad_header, "an unknown method");
  for (const char reserved : {'\x20', '\x40', '\x80'}) {
    std::string flags = gz;
    flags[3] = static_cast<char>(flags[3] | reserved);
    ExpectSameThroughBoth(flags, "a reserved header flag");
    ExpectSameThroughBoth(gz + flags, "a reserved header flag on the second member");
  }
  for (size_t at = 10; at < gz.size() - 8; at += gz.size() / 23) {
    std::string flipped = gz;
    flipped[at] ^= 0x20;
    ExpectSameThroughBoth(flipped, "a flipped byte at " + std::to_string(at));
  }
  const Outcome crc = ReadThrough(bad_crc, GzipInflater::kIsal, 1 << 20, 1 << 16);
  EXPECT_FALSE(crc.ok);
  EXPECT_NE(crc.text.find("t.json.gz: corrupt gzip data"), std::string::npos) << crc.text;
  EXPECT_EQ(crc.text.find('\n'), std::string::npos);
}

// A file cut anywhere reads up to the cut, said to be cut off, or fails, and alike through both.
TEST(GzipSource, CutAnywhereReadsAsZlibDoes) {
  const std::string gz = Gzip(TraceText(400)) + Gzip(TraceText(300));
  for (size_t cut = 1; cut < gz.size(); cut += 13)
    ExpectSameThroughBoth(gz.substr(0, cut), "cut at " + std::to_string(cut));
  const Outcome half = ReadThrough(gz.substr(0, gz.size() / 2), GzipInflater::kIsal, 4096, 1000);
  EXPECT_TRUE(half.ok);
  EXPECT_TRUE(half.truncated);
  EXPECT_FALSE(half.text.empty());
}

// The content's size comes from the last member's trailer, within reason: a trailer can claim anything.
TEST(GzipSource, ContentSizeHintTrustsTheTrailerWithinReason) {
  const std::string text = TraceText(20000);
  const std::string gz = Gzip(text);
  const auto hint = [](const std::string& bytes) {
    return MakeGzipSource(std::make_unique<MemorySource>("t.json.gz", bytes), 4096, GzipInflater::kIsal)
        ->content_size_hint();
  };
  EXPECT_EQ(hint(gz), std::min<uint64_t>(text.size(), gz.size() * 64));
  std::string claims_4_gib = gz;
  claims_4_gib.replace(claims_4_gib.size() - 4, 4, "\xff\xff\xff\xff");
  EXPECT_EQ(hint(claims_4_gib), claims_4_gib.size() * 64);
  // A short last member says nothing of the ones before it: a typical ratio stands in.
  const std::string two = gz + Gzip("{}");
  EXPECT_EQ(hint(two), two.size() * 12);
}

// A parser that tripped over damaged content is told of the gzip damage instead; a sound file keeps its
// parser's error.
TEST(GzipSource, PreferGzipDamageNamesTheDamage) {
  const std::string gz = Gzip(TraceText(5000));
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 8] ^= 0x55;
  const Status parse_error = InvalidInput("t.json.gz: byte 12: expected a value");
  const auto verdict = [&](const std::string& bytes) {
    auto source = MakeGzipSource(std::make_unique<MemorySource>("t.json.gz", bytes), 4096, GzipInflater::kIsal);
    return PreferGzipDamage(*source, parse_error).message();
  };
  EXPECT_NE(verdict(bad_crc).find("t.json.gz: corrupt gzip data near compressed byte"), std::string::npos)
      << verdict(bad_crc);
  EXPECT_EQ(verdict(gz), parse_error.message());
  EXPECT_EQ(verdict(gz.substr(0, gz.size() / 2)), parse_error.message());  // cut off: not damage
  auto sound = MakeGzipSource(std::make_unique<MemorySource>("t.json.gz", gz), 4096, GzipInflater::kZlib);
  EXPECT_TRUE(PreferGzipDamage(*sound, Status::Ok()).ok());
}

TEST(GzipSource, DefaultIsIgzipWhereBuiltIn) {
  if (std::getenv("TUNEPROF_INFLATE") != nullptr) GTEST_SKIP() << "TUNEPROF_INFLATE is set";
  EXPECT_EQ(DefaultGzipInflater(), IsalBuiltIn() ? GzipInflater::kIsal : GzipInflater::kZlib);
}

}  // namespace
}  // namespace tuneprof
