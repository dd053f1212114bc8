// Baseline x86-64 build of the parser, for CPUs without AVX2.
#define TP_ISA_NAMESPACE generic
#include "importers/chrome_json/chrome_trace_parser.inc"
