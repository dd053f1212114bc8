#pragma once
// What a device kernel computes, by name: one row per pattern, as data, with the vendor or compiler that
// names its kernels so and why the pattern means that class. Every row is listed in docs/advisor.md
// ("Kernel classes"), and a unit test checks the two agree.
//
// Rows match the lower-cased kernel name, first match wins. Vendor rows come first (a Tensile GEMM or a
// MIOpen implicit-GEMM convolution must not fall to a generic word in its name), then the words most
// libraries use (gemm, conv, softmax, ...), then the family defaults of compilers whose kernels name no
// operation (Inductor's pointwise and reduction kernels). A name no row matches takes the class of the
// operator that launched it (op_classes.h KernelLetters), else it is unclassified: never memory-bound by
// default.
#include <cstdint>
#include <span>
#include <string_view>

namespace tuneprof {

enum class KernelClassMatch : uint8_t {
  kPrefix,    // the lower-cased name starts with the pattern
  kContains,  // the lower-cased name contains it
};

struct KernelClassRule {
  std::string_view pattern;  // lower case
  KernelClassMatch match;
  std::string_view vendor;  // "NVIDIA", "AMD", "MTIA", "Triton", "Ascend", or "any" for words most libraries use
  char letter;              // the class (op_classes.h op_letter)
  std::string_view why;     // what kernels the pattern names
};

// Every row, first match wins.
std::span<const KernelClassRule> KernelClassRules();

// The first row the lower-cased name matches, or nullptr.
const KernelClassRule* MatchKernelClass(std::string_view lower_name);

std::string_view KernelClassMatchName(KernelClassMatch match);

// The name of a class letter as docs/advisor.md writes it ("matmul", "convolution", ...).
std::string_view OpClassName(char letter);

}  // namespace tuneprof
