// Index math and the marker functions of tiled kernel IR (tiled_kernel_ir.h).
#include "compiler/codegen/tiled_kernel_ir.h"

#include <string>

#include "llvm/Support/raw_ostream.h"

namespace kiln::codegen::internal {

using mlir::Value;

KernelFunction BeginKernelFunction(mlir::OpBuilder& b, mlir::Location loc, mlir::ModuleOp module,
                                   const std::string& name, const std::vector<Shape>& params,
                                   const std::vector<Shape>& outputs) {
  mlir::MLIRContext* ctx = module.getContext();
  std::vector<mlir::Type> arg_types;
  for (const Shape& s : params) arg_types.push_back(BufferType(ctx, s));
  for (const Shape& s : outputs) arg_types.push_back(BufferType(ctx, s));
  b.setInsertionPointToEnd(module.getBody());
  KernelFunction k;
  k.func = mlir::func::FuncOp::create(b, loc, name, b.getFunctionType(arg_types, {}));
  k.entry = k.func.addEntryBlock();
  b.setInsertionPointToStart(k.entry);
  k.params.assign(k.entry->args_begin(), k.entry->args_begin() + static_cast<std::ptrdiff_t>(params.size()));
  k.outputs.assign(k.entry->args_begin() + static_cast<std::ptrdiff_t>(params.size()), k.entry->args_end());
  return k;
}

std::vector<std::vector<int64_t>> GroupDims(const Shape& shape, const std::vector<int64_t>& sizes) {
  std::vector<std::vector<int64_t>> groups(sizes.size());
  int64_t d = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    int64_t product = 1;
    while (product < sizes[k] && d < shape.rank()) {
      if (shape.dim(d) != 1) {
        groups[k].push_back(d);
        product *= shape.dim(d);
      }
      ++d;
    }
  }
  return groups;
}

Index IndexMath::MultiIndex(const Shape& shape, const std::vector<int64_t>& group_sizes,
                            const std::vector<Value>& group_values) {
  Index index(shape.rank(), Const(0));
  std::vector<std::vector<int64_t>> groups = GroupDims(shape, group_sizes);
  for (size_t k = 0; k < groups.size(); ++k) {
    Value linear = group_values[k];
    for (size_t i = groups[k].size(); i-- > 0;) {
      int64_t d = groups[k][i];
      index[d] = i == 0 ? linear : Rem(linear, shape.dim(d));
      if (i > 0) linear = Div(linear, shape.dim(d));
    }
  }
  return index;
}

mlir::func::FuncOp BarrierFunc(mlir::ModuleOp module) {
  if (auto f = module.lookupSymbol<mlir::func::FuncOp>(kBarrierFunc)) return f;
  mlir::OpBuilder b(module.getContext());
  b.setInsertionPointToStart(module.getBody());
  auto f = mlir::func::FuncOp::create(b, module.getLoc(), kBarrierFunc, b.getFunctionType({}, {}));
  f.setPrivate();
  return f;
}

Value ShuffleDown(mlir::OpBuilder& b, mlir::Location loc, mlir::ModuleOp module, Value value, int64_t n) {
  std::string type;
  llvm::raw_string_ostream os(type);
  value.getType().print(os);
  std::string name = std::string(kShuffleDownPrefix) + type;
  auto f = module.lookupSymbol<mlir::func::FuncOp>(name);
  if (!f) {
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    f = mlir::func::FuncOp::create(b, loc, name,
                                   b.getFunctionType({value.getType(), b.getI32Type()}, {value.getType()}));
    f.setPrivate();
  }
  Value offset = mlir::arith::ConstantIntOp::create(b, loc, b.getI32Type(), n);
  return mlir::func::CallOp::create(b, loc, f, mlir::ValueRange{value, offset}).getResult(0);
}

}  // namespace kiln::codegen::internal
