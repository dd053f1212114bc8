#include "importers/csv/csv_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

namespace tuneprof {
namespace {

CsvReader MustRead(std::string text) {
  auto reader = CsvReader::FromText("test.csv", std::move(text));
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  return std::move(reader).value();
}

bool MustNext(CsvReader* reader) {
  auto next = reader->Next();
  EXPECT_TRUE(next.ok()) << next.status().message();
  return next.ok() && next.value();
}

TEST(CsvReaderTest, ColumnsByNameAndCrlf) {
  CsvReader r = MustRead("b,a,c\r\n2,1,3\r\n5,4,6\r\n");
  EXPECT_EQ(r.Column("a"), 1);
  EXPECT_EQ(r.Column("missing"), kNoColumn);
  EXPECT_EQ(r.AnyColumn({"Block Num", "c"}), 2);
  ASSERT_TRUE(MustNext(&r));
  EXPECT_EQ(r.row(), 1u);
  EXPECT_EQ(r.Text(r.Column("a")), "1");
  EXPECT_EQ(r.Text(r.Column("c")), "3");
  ASSERT_TRUE(MustNext(&r));
  EXPECT_EQ(r.Text(0), "5");
  EXPECT_FALSE(MustNext(&r));
}

TEST(CsvReaderTest, QuotedFieldsWithCommasEscapesAndNewlines) {
  CsvReader r = MustRead("x,y\n\"a,b\",\"say \"\"hi\"\"\"\n\"two\nlines\",z");
  ASSERT_TRUE(MustNext(&r));
  EXPECT_EQ(r.Text(0), "a,b");
  EXPECT_EQ(r.Text(1), "say \"hi\"");
  ASSERT_TRUE(MustNext(&r));
  EXPECT_EQ(r.Text(0), "two\nlines");
  EXPECT_EQ(r.Text(1), "z");
  EXPECT_FALSE(MustNext(&r));
}

TEST(CsvReaderTest, TripleQuotedShapesLoseTheirInnerQuotes) {
  CsvReader r =
      MustRead("Input Shapes,Output Shapes\n\"\"\"32,3,224,224\"\"\",\"\"\"32,1,224,224,8;121,4,16,8;64\"\"\"\n");
  ASSERT_TRUE(MustNext(&r));
  EXPECT_EQ(r.Text(0), "32,3,224,224");
  EXPECT_EQ(r.Text(1), "32,1,224,224,8;121,4,16,8;64");
}

TEST(CsvReaderTest, TrailingTabInTimestampsIsTrimmedAndParsedExactly) {
  CsvReader r = MustRead("Start Time(us),Duration(us)\r\n1736408883704643.212\t,53.741\r\n");
  ASSERT_TRUE(MustNext(&r));
  int64_t start = 0, dur = 0;
  ASSERT_TRUE(CsvMicrosToNanos(r.Cell(0), &start));
  ASSERT_TRUE(CsvMicrosToNanos(r.Cell(1), &dur));
  EXPECT_EQ(start, 1736408883704643212);
  EXPECT_EQ(dur, 53741);
}

TEST(CsvReaderTest, NotAvailableAndEmptyCellsAreAbsent) {
  CsvReader r = MustRead("a,b,c,d\nN/A,,\t,7\n1,2\n");
  ASSERT_TRUE(MustNext(&r));
  EXPECT_FALSE(r.Cell(0));
  EXPECT_FALSE(r.Cell(1));
  EXPECT_FALSE(r.Cell(2));
  int64_t d = 0;
  ASSERT_TRUE(CsvInt(r.Cell(3), &d));
  EXPECT_EQ(d, 7);
  EXPECT_FALSE(r.Cell(kNoColumn));
  EXPECT_FALSE(MustNext(&r));  // the short row is dropped, not read with cells missing
}

TEST(CsvReaderTest, RowsWithAnotherCellCountAreDroppedAndCounted) {
  CsvReader r = MustRead("a,b,c\n1,2,3\n4,5\n6,7,8,9\n10,11,12\n");
  ASSERT_TRUE(MustNext(&r));
  EXPECT_EQ(r.Text(2), "3");
  ASSERT_TRUE(MustNext(&r));
  EXPECT_EQ(r.row(), 4u);  // row numbers still count the dropped rows
  EXPECT_EQ(r.Text(0), "10");
  EXPECT_FALSE(MustNext(&r));
  EXPECT_EQ(r.dropped_rows(), 2u);
  EXPECT_EQ(r.first_dropped_row(), 2u);
  EXPECT_EQ(r.DroppedRowsWarning(),
            "test.csv: 2 rows with a cell count other than the header's 3 dropped (first: row 2)");
}

TEST(CsvReaderTest, BlankLinesAreSkippedAndBomIgnored) {
  CsvReader r = MustRead("\xEF\xBB\xBFStep,Computing\n\n50,1.5\n\r\n");
  EXPECT_EQ(r.Column("Step"), 0);
  ASSERT_TRUE(MustNext(&r));
  EXPECT_EQ(r.row(), 1u);
  double computing = 0;
  ASSERT_TRUE(CsvDouble(r.Cell(1), &computing));
  EXPECT_DOUBLE_EQ(computing, 1.5);
  EXPECT_FALSE(MustNext(&r));
}

TEST(CsvReaderTest, ValueHelpersRejectMalformedText) {
  int64_t i = 0;
  double d = 0;
  EXPECT_FALSE(CsvInt(std::string_view("1.5"), &i));
  EXPECT_FALSE(CsvInt(std::nullopt, &i));
  EXPECT_FALSE(CsvDouble(std::string_view("abc"), &d));
  EXPECT_TRUE(CsvDouble(std::string_view("4028.6750000000175"), &d));
  EXPECT_FALSE(CsvMicrosToNanos(std::string_view("12:30"), &i));
}

TEST(CsvReaderTest, ErrorsNameFileAndRow) {
  CsvReader r = MustRead("a,b\n1,2\n\"open,3\n");
  ASSERT_TRUE(MustNext(&r));
  auto next = r.Next();
  ASSERT_FALSE(next.ok());
  EXPECT_NE(next.status().message().find("test.csv: row 2:"), std::string::npos) << next.status().message();
  EXPECT_EQ(r.Where("bad"), "test.csv: row 1: bad");

  auto empty = CsvReader::FromText("empty.csv", "");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty.csv"), std::string::npos);
}

// Long records, which the 16-byte splitter reads, give the cells they were written from: LF and CRLF
// ends, empty cells, a CR inside a cell's text, quoted cells and a blank line among them, at every
// alignment.
TEST(CsvReaderTest, LongRecordsSplitAsWritten) {
  for (size_t pad = 0; pad < 17; ++pad) {
    std::vector<std::vector<std::string>> rows;
    std::string text = "Name,Start Time(us),Duration(us),Input Shapes\n";
    for (int i = 0; i < 200; ++i) {
      std::vector<std::string> cells = {"aclnnGelu_GeluAiCore_Gelu" + std::string(pad + i % 5, 'x'),
                                        "1736408883704643." + std::to_string(i), i % 3 == 0 ? "" : "53.741",
                                        i % 7 == 0 ? "\"4096,4096\"" : "N/A"};
      if (i % 11 == 0) cells[2] = "1\r2";  // a CR that ends neither the cell nor the record
      std::string line;
      for (const std::string& cell : cells) line += (line.empty() ? "" : ",") + cell;
      text += line + (i % 2 == 0 ? "\r\n" : "\n");
      if (i % 13 == 0) text += "\n";
      if (i % 7 == 0) cells[3] = "4096,4096";
      if (i % 11 == 0) cells[2] = "1";  // the CR ended the record: "2" starts a short one, dropped
      if (i % 11 == 0) cells.resize(3);
      rows.push_back(cells);
    }
    CsvReader r = MustRead(text);
    for (const auto& cells : rows) {
      if (cells.size() != 4) continue;  // cut by its CR; dropped for its cell count
      ASSERT_TRUE(MustNext(&r)) << pad;
      ASSERT_EQ(r.field_count(), 4u);
      for (int c = 0; c < 4; ++c) EXPECT_EQ(r.Text(c), cells[c]) << "pad " << pad << " row " << r.row();
    }
    EXPECT_FALSE(MustNext(&r));
    EXPECT_GT(r.dropped_rows(), 0u);
  }
}

// Every record of `reader` as its cells' texts, one string per record ('|' between cells), and the
// status of the read that ended it.
std::vector<std::string> AllRecords(CsvReader* reader, std::string* ending) {
  std::vector<std::string> records;
  for (;;) {
    auto next = reader->Next();
    if (!next.ok()) {
      *ending = next.status().message();
      return records;
    }
    if (!next.value()) break;
    std::string record;
    for (size_t i = 0; i < reader->field_count(); ++i) record += std::string(reader->Text(static_cast<int>(i))) + "|";
    records.push_back(record);
  }
  *ending =
      "end after row " + std::to_string(reader->row()) + ", " + std::to_string(reader->dropped_rows()) + " dropped";
  return records;
}

class CsvStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tp_csv_stream_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Reads `text` from a file (streamed through the window) and whole, and expects the same records,
  // warnings and errors from both.
  void ExpectSameAsWhole(const std::string& text) {
    const std::string path = (dir_ / "t.csv").string();
    std::ofstream(path, std::ios::binary) << text;
    auto streamed = CsvReader::Open(path);
    auto whole = CsvReader::FromText(path, text);
    ASSERT_EQ(streamed.ok(), whole.ok());
    if (!whole.ok()) {
      EXPECT_EQ(streamed.status().message(), whole.status().message());
      return;
    }
    EXPECT_EQ(streamed->header(), whole->header());
    std::string streamed_end, whole_end;
    EXPECT_EQ(AllRecords(&streamed.value(), &streamed_end), AllRecords(&whole.value(), &whole_end));
    EXPECT_EQ(streamed_end, whole_end);
    EXPECT_EQ(streamed->DroppedRowsWarning(), whole->DroppedRowsWarning());
  }

  std::filesystem::path dir_;
};

// Records of every kind cross the 64 KiB window at every offset within a few bytes: quoted cells with ""
// escapes and line breaks, CRLF, tabs after timestamps, short rows, blank lines.
TEST_F(CsvStreamTest, RecordsAcrossTheWindowReadAsWhole) {
  const std::string rows[] = {"1,\"a,b\",2\r\n",
                              "3,\"\"\"4096,4096\"\"\",5\n",
                              "1736408883704643.212\t,x,y\n",
                              "\"two\nlines\",\"say \"\"hi\"\"\",z\r\n",
                              "6,7\n",
                              "\n",
                              "8,9,10\r"};
  for (size_t shift = 0; shift < 48; ++shift) {
    std::string text =
        "\xEF\xBB\xBF"
        "a,b,c\n" +
        std::string(shift, 'p') + ",q,r\n";
    for (size_t i = 0; text.size() < (size_t{3} << 16); ++i) text += rows[i % std::size(rows)];
    ExpectSameAsWhole(text);
  }
}

// A record far longer than the window (one quoted cell of a megabyte), and an unterminated quote near
// the end of a long file: the error names the same row and byte as when read whole.
TEST_F(CsvStreamTest, LongRecordsAndLateErrors) {
  ExpectSameAsWhole("a,b\n1,\"" + std::string(size_t{1} << 20, 'x') + "\"\n2,3\n");
  std::string text = "a,b\n";
  while (text.size() < 200000) text += "1,2\n";
  ExpectSameAsWhole(text + "\"open,3\n4,5\n");
  ExpectSameAsWhole(text + "5,6");  // no line end at the end
  ExpectSameAsWhole("a,b");
}

}  // namespace
}  // namespace tuneprof
