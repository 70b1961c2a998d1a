// ModuleTracker: the torch::nn layers a function builds or runs
// (Modules.cpp), the layers a user module's constructor builds in its
// members (ModuleMembers.cpp) and torch::data loaders over built-in
// datasets (DataLoaders.cpp). A room of the evaluator: it keeps no state of
// its own and reads and writes the FunctionEvaluator's (Modules,
// ModuleOrder, Loaders, UserObjects, ...; part of changeableState());
// FunctionEvaluator::modules() makes one. Each built-in layer's forward
// runs in LayerEvaluator (Layers.cpp).
#pragma once

#include "frontend/FunctionEvaluator.h"

namespace tma {

class ModuleTracker {
public:
  explicit ModuleTracker(FunctionEvaluator &FE) : FE(FE) {}
  using Flow = FunctionEvaluator::Flow;
  using LoaderBatches = FunctionEvaluator::LoaderBatches;
  using ModuleValue = FunctionEvaluator::ModuleValue;
  using UserObject = FunctionEvaluator::UserObject;

  void summarizeObject(const clang::CXXRecordDecl *RD,
                       const std::vector<const clang::FieldDecl *> &Layers,
                       const clang::CXXConstructorDecl *Ctor,
                       const Stmt *CtorBody);
  /// The summary rows of the modules, after the body is evaluated.
  std::vector<ModuleSummary> moduleSummaries() const;
  /// The layer a holder of type Holder constructed by Init is: its options
  /// and parameter shapes, or Why.
  ModuleValue layerFromConstruction(QualType Holder, const Expr *Init,
                                    const std::string &Name);
  /// Appends the layer Layer constructs to the Sequential M as its next
  /// child ("0", "1", ... as push_back names them), its parameters under
  /// that name; or M's reason it is unknown (NotLayer when Layer is no
  /// torch::nn layer).
  std::string appendSequentialLayer(ModuleValue &M, const Expr *Layer,
                                    const std::string &NotLayer);
  /// A layer a helper of this file returns (`conv1(conv3x3(in, out,
  /// stride))`, the helper `return torch::nn::Conv2d(options...);`): its
  /// return expression read with the helper's integer parameters bound to
  /// the call's arguments. nullopt when Init is no such call.
  std::optional<ModuleValue> layerFromHelper(QualType Holder, const Expr *Init,
                                             const std::string &Name);
  void declareModule(const VarDecl *VD, const DeclStmt *DS, Flow F,
                     bool Insertable);
  /// Allocates M's parameters and buffers as factories at Init, in the
  /// open statement; held under HoldKey while the module lives (empty: a
  /// temporary's, freed with the statement). DeviceMoved: why their device
  /// is unknown, if it is.
  void allocateParameters(ModuleValue &M, const Expr *Init,
                          const std::string &HoldKey,
                          const std::string &DeviceMoved);
  /// In a method of a torch::nn::Module subclass: the layers its
  /// constructor builds in its members (ModuleMembers.cpp).
  void declareMemberModules();
  bool isDataLoaderCall(const clang::Expr *E) const;
  LoaderBatches dataLoader(const clang::Expr *Init);
  /// `for (auto &batch : *loader)`, each iteration: batch's members are
  /// the loader's batch, allocated.
  void loaderBatchValues(const clang::CXXForRangeStmt *RFS, Flow F);
  /// `batch.data` / `batch.target` of such a loop variable.
  std::optional<ValueId> loaderBatchMember(const clang::MemberExpr *ME);
  /// Whether gradients are known to be off at E: a torch::NoGradGuard or
  /// InferenceMode guard declared in the function's outermost block before
  /// E's statement (a method runs in its caller's mode: not known).
  bool gradModeOffAt(const Expr *E) const;
  /// `fc->forward(x)` / `fc(x)` of a module declared here; nullopt when
  /// Object is no such module.
  std::optional<ValueId> moduleForward(const Expr *E, const FunctionDecl *Callee,
                                       const Expr *Object,
                                       llvm::ArrayRef<const Expr *> Args);
  /// Whether M is in training mode where Use runs it: a module built here
  /// is, unless eval() / train(false) ran before on every path; nullopt
  /// (Why says why) when that is not known.
  std::optional<bool> trainingMode(const ModuleValue &M, const Expr *Use,
                                   std::string &Why);
  std::optional<UserObject> userObject(QualType T, const Expr *Init);
  /// `fc->weight`, `this->fc->bias`: the parameter of a layer this function
  /// or the constructor builds, when it is known; nullopt otherwise.
  std::optional<ValueId> parameterRead(const clang::MemberExpr *ME);
  /// `lstm->forward(x[, hx])` / `gru->forward(x[, h0])` on a layer this
  /// function (or the module) builds: output, h_n and (LSTM) c_n; an
  /// LSTMCell's h_1 and c_1, a GRUCell's h_1; nullopt for any other
  /// expression.
  std::optional<std::vector<ValueId>> recurrentValues(const Expr *E);
  /// The LSTM, GRU, LSTMCell or GRUCell module whose forward S calls, or
  /// null.
  ModuleValue *recurrentModule(const Expr *S);
  /// A layer with trainable parameters run at E with gradients on: autograd
  /// keeps the tensors its backward needs (its input, the intermediates of
  /// what follows) for as long as the output lives, temporaries included;
  /// the live and peak totals would free them at the end of their
  /// statement, so they become unknown.
  void gradientsKeepIntermediates(const ModuleValue &M, const Expr *E,
                                  size_t OpsBefore);
  /// Every mention of VD in the body runs it (fc(x), fc->forward(x)) or
  /// sets its mode (train(), eval()).
  /// StayingMoves: how many of its mentions are to(device) calls that
  /// leave it where it is (the CPU), no change either.
  bool onlyRun(const clang::VarDecl *VD, unsigned StayingMoves = 0) const;

private:
  FunctionEvaluator &FE;
};

inline ModuleTracker FunctionEvaluator::modules() { return ModuleTracker(*this); }

} // namespace tma
