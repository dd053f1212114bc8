#include "io/pickle_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace tuneprof {
namespace {

using namespace std::string_literals;

// A protocol-4 pickle of `body` followed by STOP.
std::string Pickle(const std::string& body) { return std::string("\x80\x04", 2) + body + "."; }

std::string ErrorOf(const std::string& bytes, const PickleLimits& limits = {}) {
  auto doc = ReadPickle(bytes, "x.pickle", limits);
  return doc.ok() ? "" : doc.status().message();
}

TEST(PickleReaderTest, ReadsPlainData) {
  // {'a': [1, -2, 3000000000, 'hi', None, True, 1.5], 'b': (b'xy',)}
  std::string body =
      "}\x94(\x8c\x01"
      "a\x94]\x94(K\x01J\xfe\xff\xff\xff\x8a\x05\x00\x5e\xd0\xb2\x00"s;
  body +=
      "\x8c\x02hiN\x88G\x3f\xf8\x00\x00\x00\x00\x00\x00"
      "e\x8c\x01"
      "bC\x02xy\x85u"s;
  auto doc = ReadPickle(Pickle(body), "x.pickle");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const auto list = doc->Find(doc->root(), "a");
  ASSERT_TRUE(doc->IsList(list));
  std::vector<PickleDocument::Id> items;
  doc->ForEachItem(list, [&](PickleDocument::Id id) { items.push_back(id); });
  ASSERT_EQ(items.size(), 7u);
  EXPECT_EQ(doc->Int(items[0]), 1);
  EXPECT_EQ(doc->Int(items[1]), -2);
  EXPECT_EQ(doc->Int(items[2]), 3000000000);
  EXPECT_EQ(doc->Text(items[3]), "hi");
  EXPECT_EQ(doc->kind(items[4]), PickleKind::kNone);
  EXPECT_EQ(doc->Int(items[5]), 1);
  EXPECT_DOUBLE_EQ(doc->Float(items[6]), 1.5);
  const auto tuple = doc->Find(doc->root(), "b");
  ASSERT_EQ(doc->ItemCount(tuple), 1u);
  doc->ForEachItem(tuple, [&](PickleDocument::Id id) { EXPECT_EQ(doc->Text(id), "xy"); });
  EXPECT_EQ(doc->Find(doc->root(), "missing"), PickleDocument::kAbsent);
}

TEST(PickleReaderTest, MemoSharesOneValue) {
  // ['s', 's'] where the second is a memo reference to the first, and LONG1 negatives.
  auto doc = ReadPickle(Pickle("](\x8c\x01s\x94h\x00\x8a\x01\xff\x8a\x00"
                               "e"s),
                        "x.pickle");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  std::vector<PickleDocument::Id> items;
  doc->ForEachItem(doc->root(), [&](PickleDocument::Id id) { items.push_back(id); });
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[0], items[1]);
  EXPECT_EQ(doc->Int(items[2]), -1);
  EXPECT_EQ(doc->Int(items[3]), 0);
}

TEST(PickleReaderTest, RefusesEveryOpcodeThatRunsCode) {
  const std::pair<char, const char*> kRefused[] = {{'c', "GLOBAL"},
                                                   {'\x93', "STACK_GLOBAL"},
                                                   {'R', "REDUCE"},
                                                   {'b', "BUILD"},
                                                   {'i', "INST"},
                                                   {'o', "OBJ"},
                                                   {'\x81', "NEWOBJ"},
                                                   {'\x92', "NEWOBJ_EX"},
                                                   {'\x82', "EXT1"},
                                                   {'\x83', "EXT2"},
                                                   {'\x84', "EXT4"},
                                                   {'P', "PERSID"},
                                                   {'Q', "BINPERSID"},
                                                   {'\x97', "NEXT_BUFFER"},
                                                   {'\x98', "READONLY_BUFFER"}};
  for (const auto& [op, name] : kRefused) {
    const std::string error = ErrorOf(Pickle(std::string("N") + op));
    EXPECT_NE(error.find("x.pickle: pickle opcode " + std::string(name)), std::string::npos) << error;
    EXPECT_NE(error.find("refused at offset 3"), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos);
  }
  EXPECT_NE(ErrorOf(Pickle("I01\n")).find("INT"), std::string::npos);
  EXPECT_NE(ErrorOf(Pickle("\xff")).find("unknown pickle opcode 0xff"), std::string::npos);
}

TEST(PickleReaderTest, BoundsDepth) {
  std::string deep = "N";
  for (int i = 0; i < 200; ++i) deep += "\x85";  // ((((None,),),)...)
  EXPECT_NE(ErrorOf(Pickle(deep)).find("nested deeper than the budget"), std::string::npos);
  std::string marks(200, '(');
  EXPECT_NE(ErrorOf(Pickle(marks)).find("marks nested deeper"), std::string::npos);
  std::string shallow = "N";
  for (int i = 0; i < 50; ++i) shallow += "\x85";
  EXPECT_EQ(ErrorOf(Pickle(shallow)), "");
}

TEST(PickleReaderTest, RefusesHugeLengthsAndTruncation) {
  EXPECT_NE(ErrorOf(Pickle("X\xff\xff\xff\x7f"
                           "abc"))
                .find("runs past the end"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Pickle(std::string("\x8d\xff\xff\xff\xff\xff\xff\xff\x7f", 9))).find("runs past the end"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Pickle("\x8b\xff\xff\xff\x7f")).find("wider than 64 bits"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string("\x80\x04N", 3)).find("no STOP"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string("\x80\x04J\x01", 4)).find("truncated"), std::string::npos);
  EXPECT_NE(ErrorOf(Pickle("h\x07")).find("never stored"), std::string::npos);
  EXPECT_NE(ErrorOf(Pickle("N\x94j\xff\xff\xff\x7f")).find("never stored"), std::string::npos);
  EXPECT_NE(ErrorOf(Pickle(std::string("Nr\xff\xff\xff\x7f", 6))).find("memo index beyond"), std::string::npos);
  PickleLimits small;
  small.max_bytes = 4;
  EXPECT_NE(ErrorOf(Pickle("NN0"), small).find("more than the 4"), std::string::npos);
  PickleLimits few;
  few.max_container_items = 2;
  EXPECT_NE(ErrorOf(Pickle("](NNNe"), few).find("container larger"), std::string::npos);
  few.max_objects = 2;
  EXPECT_NE(ErrorOf(Pickle("](NNNe"), few).find("more objects"), std::string::npos);
}

TEST(PickleReaderTest, RefusesMalformedStacks) {
  EXPECT_NE(ErrorOf(Pickle("a")).find("stack too short"), std::string::npos);
  EXPECT_NE(ErrorOf(Pickle("e")).find("no mark"), std::string::npos);
  EXPECT_NE(ErrorOf(Pickle("N(Ne")).find("not a container"), std::string::npos);
  EXPECT_NE(ErrorOf(Pickle("}(Nu")).find("key alone"), std::string::npos);
  EXPECT_NE(ErrorOf(Pickle("}](NNu")).find(""), std::string::npos);
  EXPECT_NE(ErrorOf(Pickle("}]Ns")).find("unhashable"), std::string::npos);
  EXPECT_NE(ErrorOf(Pickle("NN")).find("expected one value"), std::string::npos);
  EXPECT_NE(ErrorOf(Pickle("0")).find("stack empty"), std::string::npos);
}

TEST(PickleReaderTest, RefusesCycles) {
  EXPECT_NE(ErrorOf(Pickle("]2a")).find("cycle"), std::string::npos);  // l.append(l)
  // a = []; b = []; a.append(b); b.append(a)
  EXPECT_NE(ErrorOf(Pickle("]\x94]\x94h\x00h\x01"
                           "ah\x01h\x00"
                           "a0"s))
                .find("cycle"),
            std::string::npos);
}

TEST(PickleReaderTest, SniffsProtocols) {
  EXPECT_TRUE(LooksLikePickle(std::string("\x80\x04\x95", 3)));
  EXPECT_TRUE(LooksLikePickle(std::string("\x80\x02}", 3)));
  EXPECT_FALSE(LooksLikePickle("{\"traceEvents\""));
  EXPECT_FALSE(LooksLikePickle(std::string("\x80\x09}", 3)));
}

}  // namespace
}  // namespace tuneprof
