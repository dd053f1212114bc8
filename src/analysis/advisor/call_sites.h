#pragma once
// Where in the user's code an operator was called: the innermost frame around it that is not the Python
// runtime's or a library's (torch/, torch_npu/, site-packages/, ...), with the nn.Module it runs in. The
// frames are an operator's own recorded stack where it or an operator around it has one (torch_npu's
// with_stack: the Db export's call chains, the text export's `Call stack`), else the trace's Python
// frames (Kineto / torch_npu `python_function` events of with_stack=True). A recorded stack wins over
// the Python frames around it: it holds the line the call was made from, while a frame already running
// when profiling began carries the line it had reached then. A recorded frame's absolute path is named
// by its file name ("main.py(366): train"), as the Python tracer names a script's. Sites are memoized per range walked from,
// so naming many operators of one call site walks its stack once.
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/core/host_op_tree.h"
#include "model/trace.h"

namespace tuneprof {

// Whether a Python frame's name is the runtime's or a library's rather than the user's: relative as the
// Python tracer writes it ("torch/nn/modules/module.py(1520): _call_impl") or an absolute path into an
// installation's lib/pythonX.Y, as recorded stacks write it.
bool LibraryFrame(std::string_view name);

// The innermost of a recorded stack's frames (one a line, innermost first) that is not a library's, ""
// when none is; sets `module_below` where a frame inside it is a module's call machinery.
std::string_view UserFrame(std::string_view frames, bool* module_below);

class CallSites {
 public:
  CallSites(const Trace& trace, const HostOpTree& tree);

  // "main.py(375): train", with " in nn.Module: Attention_3" when a module encloses the event below that
  // frame; the module alone when every frame is a library's; "" without Python frames.
  const std::string& Of(uint32_t event);

 private:
  std::string Find(uint32_t at) const;
  // The user's frame of the stack recorded for `at`, "" when every frame is a library's; with `module`
  // (one met below `at`), else with the innermost module around `at` where the stack shows a module
  // called below that frame.
  std::string FromStack(StringId stack, uint32_t at, std::string_view module) const;
  // The innermost nn.Module Python frame around `at`, itself included; "" when none is.
  std::string_view ModuleAround(uint32_t at) const;

  const Trace& trace_;
  const HostOpTree& tree_;
  std::unordered_map<uint32_t, StringId> stacks_;  // event -> its recorded stack
  std::unordered_map<uint32_t, std::string> memo_;
  const std::string empty_;
};

// The host event that launched each device event, indexed by event (kNoIndex where none is known): the
// runtime call its correlation names, followed back through torch_npu's task queue (`async_task_queue`
// flows, Db export) to the enqueue inside the operator; the framework operator an `async_npu` flow leads
// from (text export) where there is one.
std::vector<uint32_t> DeviceLaunchers(const Trace& trace);

// The timeline task of each kernel_details row: the device event of the same start and name that
// `launchers` (DeviceLaunchers') names a launcher for (kNoIndex where the timeline lacks it or nothing
// launched it).
std::vector<uint32_t> KernelDetailTasks(const Trace& trace, const std::vector<uint32_t>& launchers);

// The launching host event of each kernel_details row, through the timeline's task of the same start and
// name (kNoIndex where the timeline lacks it or nothing launched it). `launchers` is DeviceLaunchers'.
std::vector<uint32_t> KernelDetailLaunchers(const Trace& trace, const std::vector<uint32_t>& launchers);

// The call sites of `events` (host events, kNoIndex skipped), most frequent first, at most `listed`:
// "main.py(375): train x12; model.py(40): forward x3"; "" when none has one.
std::string TopCallSites(CallSites* sites, std::span<const uint32_t> events, size_t listed = 3);

// A group of kernel_details rows under the name a finding reports it by ("Cast", "TransData [32,3]").
struct NamedDetailRows {
  std::string_view name;
  std::span<const uint32_t> rows;
};

// "Cast: main.py(40): forward x12; ..." for the first `listed` groups, in the order given, whose rows the
// trace ties to the user's code through their launches; "" when none is.
std::string DetailGroupCallSites(const Trace& trace, const HostOpTree& tree, std::span<const NamedDetailRows> groups,
                                 size_t listed);

}  // namespace tuneprof
