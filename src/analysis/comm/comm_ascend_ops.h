#pragma once

// The rank's communication as torch_npu's communication.json and communication_matrix.json describe it:
// per op its time split and per-transport traffic, and the link matrix.

#include "analysis/comm/comm_collectives.h"

namespace tuneprof {

// Fills the rank's Ascend ops, per-transport totals and wait and synchronization ratios.
void ReadAscendOps(const Trace& trace, const HardwareSelection& hw, RankCommunication* rank);

// Fills the rank's link cells (totals only, per group where the file lets them be) and its rank matrix.
void ReadAscendMatrix(const Trace& trace, RankCommunication* rank);

}  // namespace tuneprof
