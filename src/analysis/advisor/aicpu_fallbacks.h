#pragma once
// Why an Ascend operator ran on the AI CPU, from what the run itself holds (docs/advisor.md, "AI CPU
// fallbacks"). Two sources, no copied per-CANN-version lists:
//
// - The run's own evidence of the dtypes the AI Core takes: kernel_details rows of the same operator type
//   that ran on the AI Core (AI_CORE, AI_VECTOR_CORE, MIX_AIC, MIX_AIV), input by input and output by
//   output. An AI CPU call whose dtype at some place never appears there on the AI Core points at that
//   dtype; one whose dtypes all do ran on the AI CPU for another reason; with no AI Core call of the type
//   the run says nothing and the hint is a guess.
// - A table of the indexing and data-dependent operators (index_put_, nonzero, boolean indexing, argmin /
//   argmax on int64, unique) with the PyTorch form that keeps shapes fixed, in our own words.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

// Whether an Accelerator Core value is the AI Core's (cube, vector or mixed).
bool IsAiCoreUnit(std::string_view core);

// The dtypes of a ';'-separated list, as written ("FLOAT;INT64" -> FLOAT, INT64); empty tokens included.
std::vector<std::string_view> SplitDtypes(std::string_view list);

// Whether a dtype token says nothing ("", "N/A", "UNDEFINED", "NULL").
bool UnknownDtype(std::string_view dtype);

// When a guide applies to a call of its operator types.
enum class AiCpuGuideWhen : uint8_t {
  kAlways,
  kBoolInput,    // some input is BOOL (a mask)
  kNoBoolInput,  // no input is BOOL (integer index tensors)
  kInt64Values,  // the first input (the values) is INT64
};

// One row of the guide table: the CANN operator types ("IndexPut|IndexPutV2"), when it applies, the
// PyTorch call that makes them and the form to use instead.
struct AiCpuGuide {
  std::string_view types;
  AiCpuGuideWhen when = AiCpuGuideWhen::kAlways;
  std::string_view made_by;  // "x[mask] = v (index_put_ with a boolean mask)"
  std::string_view guide;    // "x.masked_fill_(mask, v) ..."
};

std::span<const AiCpuGuide> AiCpuGuideTable();

// The row for an AI CPU call of `type` with these input dtypes; nullptr when none applies.
const AiCpuGuide* AiCpuGuideFor(std::string_view type, std::string_view input_dtypes);

// The AI Core calls of each operator type in kernel_details, by the dtype at each input and output place.
class AiCoreDtypes {
 public:
  explicit AiCoreDtypes(const Trace& trace);

  // The AI Core calls of `type` in the run (0: none, the run cannot tell which dtypes it takes there).
  uint64_t Calls(std::string_view type) const;

  // The AI Core calls of `type` with `dtype` at input (or output) `place`.
  uint64_t CallsWith(std::string_view type, bool output, size_t place, std::string_view dtype) const;

  // The dtypes of an AI CPU call of `type` the AI Core never takes at their place in this run, as
  // "an INT32 input", "a UINT64 output", "INT64 at input 2"; unknown dtypes are left out.
  std::vector<std::string> Missing(std::string_view type, std::string_view inputs, std::string_view outputs) const;

  // Its `limit` AI Core dtype signatures most like the call's `inputs` / `outputs` (the most places with
  // the same dtype), commoner first among equals: "INT32 -> FLOAT x4, INT64 -> INT32 x1 and 2 more".
  std::string Signatures(std::string_view type, size_t limit, std::string_view inputs = {},
                         std::string_view outputs = {}) const;

  // The dtypes the AI Core takes at input `place` of `type`, commonest first, with their calls.
  std::vector<std::pair<std::string_view, uint64_t>> InputsAt(std::string_view type, size_t place) const;

 private:
  struct OfType {
    uint64_t calls = 0;
    std::vector<std::map<std::string_view, uint64_t>> inputs;   // per place: dtype -> calls
    std::vector<std::map<std::string_view, uint64_t>> outputs;  // per place: dtype -> calls
    std::map<std::pair<std::string_view, std::string_view>, uint64_t> signatures;
  };
  const OfType* Find(std::string_view type) const;

  std::map<std::string_view, OfType> by_type_;
};

// "INT32 -> UINT64", or "INT32" without outputs; "dtypes not recorded" when neither list says anything.
std::string DtypeSignature(std::string_view inputs, std::string_view outputs);

}  // namespace tuneprof
