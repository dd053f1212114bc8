// The GE graph-dump reader on generated dumps: both forms (ModelDef and ONNX text), inputs resolved to
// ops, output shapes and dtypes, and hostile text (each one error naming the file and line, no ops kept).
#include "importers/ascend/ge_graph.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "model/trace.h"
#include "io/scratch_dir_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

class GeGraphTest : public ::testing::Test {
 protected:
  ScratchDir scratch_{"tp_ge_graph_"};
  const fs::path& dir_ = scratch_.path();

  std::string Write(const std::string& name, const std::string& text) { return scratch_.Write(name, text); }

  // Writes `text` as the dump `name` and reads it alone into `trace`.
  Status ReadDump(const std::string& name, const std::string& text, Trace* trace, const GeGraphLimits& limits = {}) {
    SideTableBuilder out(trace);
    return ReadGeGraphDump(Write(name, text), &out, limits);
  }
};

constexpr char kModelDef[] = R"(name: "graph_1"
# a comment
graph {
  name: "graph_1"
  op { name: "x" type: "Data" output_desc { dtype: DT_FLOAT16 shape { dim: 8 dim: 768 } } }
  op { name: "bias" type: "Const" output_desc { dtype: DT_FLOAT16 shape { dim: 768 } layout: "ND" }
       attr { key: "value" value { t { data: "\001\002" } } } }
  op {
    name: "MatMul_1"
    type: "MatMulV2"
    input: "x:0"
    input: "w:0"
    input: "x:-1"
    attr { key: "transpose_x1" value { b: false } }
    input_desc { dtype: DT_FLOAT16 shape { dim: 8 dim: 768 } }
    output_desc { dtype: DT_FLOAT16 shape { dim: 8 dim: 768 } }
  }
  op { name: "Add_1" type: "Add" input: "MatMul_1:0" input: "bias:0"
       output_desc { dtype: DT_FLOAT16 shape { dim: 8 dim: 768 } }
       output_desc { dtype: DT_INT32 shape { } } }
}
)";

TEST_F(GeGraphTest, ReadsTheModelDefForm) {
  Trace trace;
  ASSERT_TRUE(ReadDump("ge_proto_00000001_graph_1_Build.txt", kModelDef, &trace).ok());
  const GeGraphTable& table = trace.ge_graphs();
  ASSERT_EQ(table.files.size(), 1u);
  ASSERT_EQ(table.ops.size(), 4u);
  EXPECT_EQ(trace.str(table.ops[2].name), "MatMul_1");
  EXPECT_EQ(trace.str(table.ops[2].type), "MatMulV2");
  EXPECT_EQ(trace.str(table.ops[2].graph), "graph_1");
  EXPECT_EQ(table.ops[2].inputs, (std::vector<uint32_t>{0}));  // w is not in the graph; x:-1 is control
  EXPECT_EQ(table.ops[3].inputs, (std::vector<uint32_t>{2, 1}));
  EXPECT_EQ(trace.str(table.ops[1].output_shapes), "768");
  EXPECT_EQ(trace.str(table.ops[3].output_shapes), "8,768;");
  EXPECT_EQ(trace.str(table.ops[3].output_data_types), "DT_FLOAT16;DT_INT32");
}

TEST_F(GeGraphTest, ReadsTheOnnxForm) {
  const std::string onnx = R"(ir_version: 3
graph {
  node { input: "x" output: "s_out" name: "Sigmoid_3" op_type: "ge:Sigmoid" }
  node { input: "x" input: "s_out" output: "m_out" name: "Mul_4" op_type: "ge:Mul"
         attribute { name: "shape" ints: [1, 2] type: INTS } }
  node { output: "x" name: "x_in" op_type: "ge:Data" }
  name: "g"
}
)";
  Trace trace;
  ASSERT_TRUE(ReadDump("ge_onnx_00000002_graph_1_Build.pbtxt", onnx, &trace).ok());
  const GeGraphTable& table = trace.ge_graphs();
  ASSERT_EQ(table.ops.size(), 3u);
  EXPECT_EQ(trace.str(table.ops[0].type), "Sigmoid");
  EXPECT_EQ(table.ops[0].inputs, (std::vector<uint32_t>{2}));
  EXPECT_EQ(table.ops[1].inputs, (std::vector<uint32_t>{2, 0}));
  EXPECT_EQ(trace.str(table.ops[1].graph), "g");
}

TEST_F(GeGraphTest, HostileTextIsOneErrorNamingTheFileAndLine) {
  const std::pair<std::string, std::string> cases[] = {
      {"graph { op { name: \"a\" }\n", "the file ends inside a message"},
      {"}\n", "a '}' that closes nothing"},
      {"graph {\n op { name: \"a }\n}", "line 2: a string not closed on its line"},
      {std::string(200, '{'), "a field name expected"},
      {"graph { name: }", "a value expected after name"},
      {"graph { name: \"\x01\" } \x02", "unexpected byte 0x02"},
      {"graph { op { name: [ { } ] } }", "a list of messages"},
      {"graph { op: 7 : }", "a field name expected"},
  };
  int n = 0;
  for (const auto& [text, cause] : cases) {
    Trace trace;
    const std::string name = "ge_proto_" + std::to_string(n++) + "_Build.txt";
    const Status s = ReadDump(name, text, &trace);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.message().find((dir_ / name).string() + ": line "), 0u) << s.message();
    EXPECT_NE(s.message().find(cause), std::string::npos) << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos);
    EXPECT_TRUE(trace.ge_graphs().ops.empty());
    EXPECT_TRUE(trace.ge_graphs().files.empty());
  }
}

TEST_F(GeGraphTest, LimitsBoundDepthStringsOpsAndDims) {
  GeGraphLimits limits;
  limits.max_depth = 4;
  limits.max_string_bytes = 16;
  limits.max_ops = 2;
  limits.max_dims = 3;
  const std::pair<std::string, std::string> cases[] = {
      {"a { b { c { d { e { } } } } }", "nested deeper than 4"},
      {"graph { name: \"" + std::string(40, 'x') + "\" }", "longer than 16 bytes"},
      {"graph { op { } op { } op { } }", "more than 2 ops"},
      {"graph { op { output_desc { shape { dim: 1 dim: 2 dim: 3 dim: 4 } } } }", "more than 3 dimensions"},
  };
  int n = 0;
  for (const auto& [text, cause] : cases) {
    Trace trace;
    const Status s = ReadDump("limits_" + std::to_string(n++), text, &trace, limits);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.message().find(cause), std::string::npos) << s.message();
  }
  Trace trace;
  SideTableBuilder out(&trace);
  const std::string absent = (dir_ / "absent_Build.txt").string();
  const Status missing = ReadGeGraphDump(absent, &out);
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(missing.message().find(absent + ": "), 0u) << missing.message();
  const std::string fifo = (dir_ / "ge_proto_fifo_Build.txt").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Status refused = ReadGeGraphDump(fifo, &out);  // refused at once, never waiting for a writer
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.message().find(fifo + ": "), 0u) << refused.message();
  EXPECT_EQ(ReadGeGraphDumps(dir_.string(), &out), 0u);  // a FIFO is no dump
}

TEST_F(GeGraphTest, ReadsEveryDumpInADirectoryAndWarnsOfBadOnes) {
  Write("ge_proto_00000001_graph_1_Build.txt", kModelDef);
  Write("ge_proto_00000001_graph_1_PreRunBegin.txt", kModelDef);  // an earlier stage: not read
  Write("ge_onnx_00000003_graph_2_Build.pbtxt", "graph { node { name: \"n\" ");
  Trace trace;
  SideTableBuilder out(&trace);
  EXPECT_EQ(ReadGeGraphDumps(dir_.string(), &out), 2u);
  EXPECT_EQ(trace.ge_graphs().files.size(), 1u);
  EXPECT_EQ(trace.ge_graphs().ops.size(), 4u);
  ASSERT_EQ(trace.metadata().warnings.size(), 1u);
  EXPECT_NE(trace.metadata().warnings[0].find("ge_onnx_00000003_graph_2_Build.pbtxt: line 1: the file ends inside"),
            std::string::npos);
  EXPECT_TRUE(IsGeGraphDumpName("ge_onnx_1_graph.pbtxt"));
  EXPECT_FALSE(IsGeGraphDumpName("ge_proto_1_PreRunBegin.txt"));
}

}  // namespace
}  // namespace tuneprof
