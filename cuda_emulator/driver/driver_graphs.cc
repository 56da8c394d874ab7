// Driver API: stream capture and CUDA graphs (graphs.h): cuStreamBeginCapture
// (_v2), cuStreamEndCapture, cuStreamIsCapturing, cuStreamGetCaptureInfo
// (_v3), cuGraphInstantiateWithFlags, cuGraphLaunch, cuGraphExecUpdate
// (_v2), cuGraphGetNodes, cuGraphGetEdges (_v2), cuGraphDestroy,
// cuGraphExecDestroy; conditional nodes: cuStreamBeginCaptureToGraph,
// cuStreamUpdateCaptureDependencies (_v2), cuGraphConditionalHandleCreate,
// cuGraphAddNode (_v2, conditional nodes only).
//
// A graph launch runs its nodes in order on the stream, each as its direct
// call would (memcheck, the stream clock, the launch counters events sum),
// so profiles and counters see a graph's work as they see direct work.
#include "cuda_emulator/driver/driver_errors.h"
#include "cuda_emulator/driver/emulated_device.h"
#include "cuda_emulator/driver/exports.h"

namespace {

using kiln::emu::driver::EmulatedDevice;
using kiln::emu::driver::Fail;

EmulatedDevice& Device() { return EmulatedDevice::Get(); }

CUresult EnterStream(CUstream stream, const char* call) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (!Device().timeline().Find(stream)) return Fail(CUDA_ERROR_INVALID_HANDLE, std::string(call) + ": not a live stream");
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

KILN_EMU_EXPORT CUresult cuStreamBeginCapture(CUstream hStream, CUstreamCaptureMode mode) {
  if (CUresult r = EnterStream(hStream, "cuStreamBeginCapture"); r != CUDA_SUCCESS) return r;
  return Device().graphs().BeginCapture(hStream, mode);
}

KILN_EMU_EXPORT CUresult cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) {
  if (CUresult r = EnterStream(hStream, "cuStreamEndCapture"); r != CUDA_SUCCESS) return r;
  return Device().graphs().EndCapture(hStream, phGraph);
}

KILN_EMU_EXPORT CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
  if (CUresult r = EnterStream(hStream, "cuStreamIsCapturing"); r != CUDA_SUCCESS) return r;
  return Device().graphs().IsCapturing(hStream, captureStatus);
}

// The status, id, graph and dependencies (no edge data: all default).
KILN_EMU_EXPORT CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                                cuuint64_t* id_out, CUgraph* graph_out,
                                                const CUgraphNode** dependencies_out,
                                                const CUgraphEdgeData** edgeData_out, size_t* numDependencies_out) {
  if (CUresult r = EnterStream(hStream, "cuStreamGetCaptureInfo"); r != CUDA_SUCCESS) return r;
  if (!captureStatus_out) return Fail(CUDA_ERROR_INVALID_VALUE, "cuStreamGetCaptureInfo: the status pointer is null");
  if (CUresult r = Device().graphs().IsCapturing(hStream, captureStatus_out); r != CUDA_SUCCESS) return r;
  if (id_out) *id_out = Device().graphs().CaptureId(hStream);
  Device().graphs().CaptureGraph(hStream, graph_out, dependencies_out, numDependencies_out);
  if (edgeData_out) *edgeData_out = nullptr;
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph, const CUgraphNode* dependencies,
                                                     const CUgraphEdgeData* dependencyData, size_t numDependencies,
                                                     CUstreamCaptureMode mode) {
  if (CUresult r = EnterStream(hStream, "cuStreamBeginCaptureToGraph"); r != CUDA_SUCCESS) return r;
  if (dependencyData) return Fail(CUDA_ERROR_NOT_SUPPORTED, "cuStreamBeginCaptureToGraph: the emulator takes no edge data");
  return Device().graphs().BeginCaptureToGraph(hStream, hGraph, dependencies, numDependencies, mode);
}

KILN_EMU_EXPORT CUresult cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode* dependencies,
                                                           const CUgraphEdgeData* dependencyData,
                                                           size_t numDependencies, unsigned int flags) {
  if (CUresult r = EnterStream(hStream, "cuStreamUpdateCaptureDependencies"); r != CUDA_SUCCESS) return r;
  if (dependencyData) {
    return Fail(CUDA_ERROR_NOT_SUPPORTED, "cuStreamUpdateCaptureDependencies: the emulator takes no edge data");
  }
  return Device().graphs().UpdateCaptureDependencies(hStream, dependencies, numDependencies, flags);
}

KILN_EMU_EXPORT CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle* pHandle_out, CUgraph hGraph,
                                                        CUcontext ctx, unsigned int defaultLaunchValue,
                                                        unsigned int flags) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (!ctx) return Fail(CUDA_ERROR_INVALID_CONTEXT, "cuGraphConditionalHandleCreate: null context");
  uint64_t handle = 0;
  CUresult r = Device().graphs().CreateConditionalHandle(&handle, hGraph, defaultLaunchValue, flags);
  if (r == CUDA_SUCCESS) *pHandle_out = handle;
  return r;
}

// Conditional nodes only: the other kinds come from stream capture.
KILN_EMU_EXPORT CUresult cuGraphAddNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                        const CUgraphEdgeData* dependencyData, size_t numDependencies,
                                        CUgraphNodeParams* nodeParams) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (!nodeParams) return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphAddNode: null parameters");
  if (dependencyData) return Fail(CUDA_ERROR_NOT_SUPPORTED, "cuGraphAddNode: the emulator takes no edge data");
  if (nodeParams->type != CU_GRAPH_NODE_TYPE_CONDITIONAL) {
    return Fail(CUDA_ERROR_NOT_SUPPORTED, "cuGraphAddNode: the emulator adds conditional nodes only, got type " +
                                              std::to_string(nodeParams->type));
  }
  return Device().graphs().AddConditionalNode(phGraphNode, hGraph, dependencies, numDependencies,
                                              nodeParams->conditional,
                                              kiln::emu::driver::EmulatedDriverVersion() >= 12080);
}

KILN_EMU_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph,
                                                     unsigned long long flags) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  CUresult r = Device().graphs().Instantiate(phGraphExec, hGraph, flags);
  if (r == CUDA_SUCCESS) Device().Count(EmulatedDevice::Counted::kGraphInstantiation);
  return r;
}

KILN_EMU_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  if (CUresult r = EnterStream(hStream, "cuGraphLaunch"); r != CUDA_SUCCESS) return r;
  std::shared_ptr<const std::vector<kiln::emu::driver::GraphNode>> nodes = Device().graphs().ExecNodes(hGraphExec);
  if (!nodes) return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphLaunch: not a live graph exec");
  if (Device().graphs().CaptureId(hStream) != 0) {
    return Fail(CUDA_ERROR_NOT_SUPPORTED, "cuGraphLaunch: the emulator does not capture graph launches (child graphs)");
  }
  std::shared_ptr<kiln::emu::driver::StreamTimeline> timeline = Device().timeline().Find(hStream);
  if (!timeline) return Fail(CUDA_ERROR_INVALID_HANDLE, "cuGraphLaunch: not a live stream");
  Device().graphs().ResetConditionals(*nodes);
  return Device().RunGraph(*nodes, hStream, *timeline);
}

KILN_EMU_EXPORT CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph,
                                           CUgraphExecUpdateResultInfo* resultInfo) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  CUresult r = Device().graphs().Update(hGraphExec, hGraph, resultInfo);
  if (r == CUDA_SUCCESS) Device().Count(EmulatedDevice::Counted::kGraphUpdate);
  return r;
}

// Node handles are the nodes' addresses inside the graph; they name nodes
// for cuGraphGetEdges and nothing else.
KILN_EMU_EXPORT CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode* nodes, size_t* numNodes) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (!numNodes) return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphGetNodes: the count pointer is null");
  return Device().graphs().GetNodes(hGraph, nodes, numNodes);
}

// The edges (dependency -> dependent), without edge data (all default).
KILN_EMU_EXPORT CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to,
                                         CUgraphEdgeData* edgeData, size_t* numEdges) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (!numEdges) return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphGetEdges: the count pointer is null");
  if ((from == nullptr) != (to == nullptr)) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphGetEdges: from and to must both be null or both be arrays");
  }
  if (edgeData && from) {
    for (size_t i = 0; i < *numEdges; ++i) edgeData[i] = CUgraphEdgeData{};
  }
  return Device().graphs().GetEdges(hGraph, from, to, numEdges);
}

KILN_EMU_EXPORT CUresult cuGraphDestroy(CUgraph hGraph) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  return Device().graphs().DestroyGraph(hGraph);
}

KILN_EMU_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  return Device().graphs().DestroyExec(hGraphExec);
}

}  // extern "C"
