#include "report/console/module_report.h"

#include <gtest/gtest.h>

#include <string>

namespace tuneprof {
namespace {

ModuleView OneModule() {
  ModuleView view;
  view.has_nn_modules = true;
  ModuleRow row;
  row.path = row.name = "Model_0";
  row.count = 1;
  row.host_ns = 2'000'000;
  row.host_self_ns = 2'000'000;
  row.forward_ns = row.self_ns = 500'000;
  view.modules.push_back(row);
  view.device_total_ns = 1'000'000;
  view.attributed_ns = 500'000;
  view.host_total_ns = 2'000'000;
  return view;
}

std::string Json(const ModuleView& view) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  WriteModuleViewJson(view, &w);
  w.EndObject();
  return out;
}

TEST(ModuleReportTest, UnknownBackwardIsADashAndNullNeverZero) {
  ModuleView view = OneModule();
  std::string text;
  AppendModuleViewText(view, false, &text);
  EXPECT_NE(text.find("bwd: - (no fwdbwd links"), std::string::npos) << text;
  EXPECT_NE(text.find("0.500        -    0.500  50.0%"), std::string::npos) << text;
  EXPECT_NE(Json(view).find("\"backward_us\":null"), std::string::npos);
  view.backward_known = true;
  EXPECT_NE(Json(view).find("\"backward_us\":0"), std::string::npos);
}

TEST(ModuleReportTest, WithoutDeviceWorkModulesAreSharedByHostTime) {
  ModuleView view = OneModule();
  view.modules[0].forward_ns = view.modules[0].self_ns = 0;
  view.device_total_ns = view.attributed_ns = 0;
  view.by_host = true;
  std::string text;
  AppendModuleViewText(view, false, &text);
  EXPECT_NE(text.find("no device work in the trace: ranked by host time, 2.000 ms in the root modules"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("device work 0.000 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("2.000         -        -        -        - 100.0%"), std::string::npos) << text;
  std::string top;
  AppendTopModulesText(view, false, &top);
  EXPECT_NE(top.find("top modules (self host time"), std::string::npos) << top;
  EXPECT_NE(Json(view).find("\"module_ranked_by\":\"host\""), std::string::npos);
}

}  // namespace
}  // namespace tuneprof
