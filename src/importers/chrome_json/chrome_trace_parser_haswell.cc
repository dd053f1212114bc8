// AVX2/BMI/PCLMUL build of the parser; only called when the CPU has them (chrome_trace_importer.cc).
#define TP_ISA_NAMESPACE haswell
#include "importers/chrome_json/chrome_trace_parser.inc"
