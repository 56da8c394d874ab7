// Helpers shared by the evaluator's tests: run HLO text through the parser
// and the reference evaluator, and build or read literals compactly.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"

namespace kiln::test_support {

// Parses a whole module and evaluates its entry computation on `args`.
inline StatusOr<Literal> EvaluateHlo(const std::string& text, const std::vector<Literal>& args = {}) {
  auto module = hlo::ParseHloModule(text);
  if (!module.ok()) return module.status().WithContext("parse");
  return hlo::Evaluator().Evaluate(**module, args);
}

// EvaluateHlo of a module whose entry computation has body `body`.
inline StatusOr<Literal> EvaluateEntryBody(const std::string& body,
                                           const std::vector<Literal>& args = {}) {
  return EvaluateHlo("HloModule m\n\nENTRY e {\n" + body + "}\n", args);
}

// The Must* forms report an error as a test failure and return an empty
// literal, so a test keeps going and reports every mismatch.
inline Literal MustEvaluateHlo(const std::string& text, const std::vector<Literal>& args = {}) {
  StatusOr<Literal> result = EvaluateHlo(text, args);
  if (!result.ok()) {
    ADD_FAILURE() << result.status().message() << "\nin:\n" << text;
    return Literal();
  }
  return std::move(*result);
}

inline Literal MustEvaluateEntryBody(const std::string& body, const std::vector<Literal>& args = {}) {
  return MustEvaluateHlo("HloModule m\n\nENTRY e {\n" + body + "}\n", args);
}

// Every element, row-major, as a double.
inline std::vector<double> Values(const Literal& lit) {
  std::vector<double> v;
  for (int64_t i = 0; i < lit.element_count(); ++i) v.push_back(lit.GetF64(i));
  return v;
}

// An array of `type` and `dims` holding `values` in row-major order.
inline Literal Array(ElementType type, const std::vector<int64_t>& dims,
                     const std::vector<double>& values) {
  StatusOr<Literal> lit = Literal::Vector(type, values).Reshape(dims);
  EXPECT_TRUE(lit.ok()) << lit.status().message();
  return lit.ok() ? std::move(*lit) : Literal();
}

}  // namespace kiln::test_support
