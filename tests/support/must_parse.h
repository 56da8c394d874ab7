// MustParse: HLO text -> module for tests, with the parser's error and the
// text as a test failure (and nullptr) when it does not parse.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/hlo/parser.h"

namespace kiln::test_support {

inline std::unique_ptr<hlo::HloModule> MustParse(const std::string& text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message() << "\nin:\n" << text;
  return module.ok() ? std::move(*module) : nullptr;
}

}  // namespace kiln::test_support
