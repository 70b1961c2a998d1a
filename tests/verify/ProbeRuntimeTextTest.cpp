// The probe runtime text pasted into every harness is verify/tma_probe.h
// from its "// ---- tma_probe:" line on, embedded at build time by
// cmake/TmaEmbedText.cmake: a change to the script or to the marker must not
// change, cut or pad what the harness gets.
#include "verify/ProbeRuntime.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <string>

using namespace tma::verify;

namespace {

TEST(ProbeRuntimeText, IsTheHeaderFromItsMarkerOn) {
  std::string Path = std::string(TMA_SOURCE_DIR) + "/verify/tma_probe.h";
  auto Buf = llvm::MemoryBuffer::getFile(Path);
  ASSERT_TRUE(static_cast<bool>(Buf)) << Path;
  std::string Header = (*Buf)->getBuffer().str();
  size_t Marker = Header.find("\n// ---- tma_probe:");
  ASSERT_NE(Marker, std::string::npos);
  EXPECT_EQ(std::string(probeRuntimeSource()), Header.substr(Marker));
}

TEST(ProbeRuntimeText, LeavesTheHeaderPrologueOut) {
  std::string Text = probeRuntimeSource();
  EXPECT_EQ(Text.find("#pragma once"), std::string::npos);
  EXPECT_EQ(Text.find("#include <torch/torch.h>"), std::string::npos);
  EXPECT_NE(Text.find("// ---- end of tma_probe ----\n"), std::string::npos);
}

} // namespace
