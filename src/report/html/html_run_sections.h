#pragma once
// The run page's sections that have their own file (html_report.h lists the page's sections).
#include <string>
#include <vector>

#include "report/html/html_report.h"

namespace tuneprof::html {

// "memory": allocated and reserved over time with the peak marked, then each device's peak and its holders.
std::string MemorySection(const std::vector<MemoryAnalysis>& ranks);

// "comm": bus bandwidth per collective type, the rank-to-rank matrix, then the verdict, the straggler, the
// clocks' offsets and the pipeline stages.
std::string CommSection(const CommAnalysis& comm, const RankLinkMatrix& link_matrix);

}  // namespace tuneprof::html
