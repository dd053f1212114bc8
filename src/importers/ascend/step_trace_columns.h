#pragma once
// step_trace_time's durations, each under the title its CSV (torch_npu's per rank, msprof-analyze's
// per cluster) gives it and the name its database table StepTraceTime gives it, with the field it
// fills: the text and the database readers read the same columns in this order.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

#include "model/trace.h"

namespace tuneprof {

struct StepTraceColumn {
  std::string_view csv_title;
  std::string_view db_name;
  int64_t ReportedStepTime::*field;
};

inline constexpr StepTraceColumn kStepTraceColumns[] = {
    {"Computing", "computing", &ReportedStepTime::computing_ns},
    {"Communication(Not Overlapped)", "communication_not_overlapped",
     &ReportedStepTime::communication_not_overlapped_ns},
    {"Overlapped", "overlapped", &ReportedStepTime::overlapped_ns},
    {"Communication", "communication", &ReportedStepTime::communication_ns},
    {"Free", "free", &ReportedStepTime::free_ns},
    {"Stage", "stage", &ReportedStepTime::stage_ns},
    {"Bubble", "bubble", &ReportedStepTime::bubble_ns},
    {"Communication(Not Overlapped and Exclude Receive)", "communication_not_overlapped_and_exclude_receive",
     &ReportedStepTime::communication_not_overlapped_exclude_receive_ns},
    {"Preparing", "preparing", &ReportedStepTime::preparing_ns},
};
inline constexpr size_t kStepTraceColumnCount = std::size(kStepTraceColumns);

}  // namespace tuneprof
