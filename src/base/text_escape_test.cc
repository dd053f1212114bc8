#include "base/text_escape.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

TEST(EscapeText, PlainAndUnicodeTextIsUnchanged) {
  EXPECT_EQ(EscapeText("aten::mm"), "aten::mm");
  EXPECT_EQ(EscapeText("ncclDevKernel_AllReduce<float>"), "ncclDevKernel_AllReduce<float>");
  EXPECT_EQ(EscapeText("\xE5\x90\x8D\xE5\x89\x8D \xC3\xA9"), "\xE5\x90\x8D\xE5\x89\x8D \xC3\xA9");  // CJK, é
  EXPECT_EQ(EscapeText("a\\b"), "a\\b");
  EXPECT_TRUE(IsTerminalSafe("aten::mm \xC3\xA9"));
}

TEST(EscapeText, C0ControlsAndDelAreShownAsHex) {
  EXPECT_EQ(EscapeText("\x1b[2Jop"), "\\x1b[2Jop");
  EXPECT_EQ(EscapeText("a\rb\bc\ad"), "a\\x0db\\x08c\\x07d");
  EXPECT_EQ(EscapeText("line\nforged"), "line\\x0aforged");
  EXPECT_EQ(EscapeText("tab\there"), "tab\\x09here");
  EXPECT_EQ(EscapeText(std::string_view("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(EscapeText("del\x7f"), "del\\x7f");
  EXPECT_FALSE(IsTerminalSafe("\x1b"));
}

TEST(EscapeText, C1ControlsAndBidiOverridesAreShownAsCodePoints) {
  EXPECT_EQ(EscapeText("csi\xC2\x9B"
                       "2J"),
            "csi\\u009b2J");
  EXPECT_EQ(EscapeText("nel\xC2\x85"), "nel\\u0085");
  EXPECT_EQ(EscapeText("rlo\xE2\x80\xAE"
                       "cba"),
            "rlo\\u202ecba");
  EXPECT_EQ(EscapeText("fsi\xE2\x81\xA8"), "fsi\\u2068");
  EXPECT_EQ(EscapeText("\xC2\xA0"), "\xC2\xA0");  // no-break space is printable
}

TEST(EscapeText, BytesThatAreNotUtf8AreShownAsHex) {
  EXPECT_EQ(EscapeText("a\x9b"
                       "b"),
            "a\\x9bb");  // a raw C1 byte (CSI on 8-bit terminals)
  EXPECT_EQ(EscapeText("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(EscapeText("\xC0\x9B"), "\\xc0\\x9b");           // ESC, overlong
  EXPECT_EQ(EscapeText("\xE2\x80"), "\\xe2\\x80");           // cut-off sequence
  EXPECT_EQ(EscapeText("\xED\xA0\x80"), "\\xed\\xa0\\x80");  // a surrogate
}

TEST(EscapeTextKeepingLines, KeepsLineBreaksOnlyAndIsIdempotent) {
  const std::string once = EscapeTextKeepingLines("rank 0\n  op \x1b]0;title\x07\r\n");
  EXPECT_EQ(once, "rank 0\n  op \\x1b]0;title\\x07\\x0d\n");
  EXPECT_EQ(EscapeTextKeepingLines(once), once);
  EXPECT_EQ(EscapeText(EscapeText("\x1b")), "\\x1b");
}

}  // namespace
}  // namespace tuneprof
