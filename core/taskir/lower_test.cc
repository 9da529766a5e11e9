#include "core/taskir/lower.h"

#include <string>
#include <vector>

#include "core/spec/check.h"
#include "core/testing/doubles.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using ::testing::Not;

using test_programs::TestMapping;
using test_programs::TestProgram;

absl::StatusOr<DistributedTaskIR> Lower(const TestMapping& m) {
  absl::StatusOr<TypedProgram> program = TestProgram(m);
  if (!program.ok()) return program.status();
  return LowerTensorParallelBlock().Run(*program);
}

const Task& Find(const DistributedTaskIR& ir, const std::string& name) {
  for (const Task& task : ir.tasks) {
    if (task.name == name) return task;
  }
  ADD_FAILURE() << "no task " << name;
  return ir.tasks.front();
}

// The header's example: each With* copy changes only the flag it names.
TEST(TaskFlags, WithSetsOnlyTheNamedFlag) {
  constexpr TaskFlags f =
      TaskFlags().WithRecompute(true).WithActivationStored(false);
  static_assert(f.recompute && !f.activation_stored, "named flags set");
  static_assert(!f.recommunicate && !f.activation_reused && f.output_stored,
                "other flags keep their defaults");
  const TaskFlags all = TaskFlags()
                            .WithRecompute(true)
                            .WithRecommunicate(true)
                            .WithActivationStored(false)
                            .WithActivationReused(true)
                            .WithOutputStored(false);
  EXPECT_TRUE(all.recompute);
  EXPECT_TRUE(all.recommunicate);
  EXPECT_FALSE(all.activation_stored);
  EXPECT_TRUE(all.activation_reused);
  EXPECT_FALSE(all.output_stored);
}

double GemmForwardFlops(const DistributedTaskIR& ir) {
  double flops = 0;
  for (const Task& task : ir.tasks) {
    if (std::holds_alternative<LinearTask>(task.kind) ||
        std::holds_alternative<OverlappedLinearTask>(task.kind) ||
        std::holds_alternative<BatchMatMulTask>(task.kind)) {
      flops += task.work[0].flops;
    }
  }
  return flops;
}

// MODEL.md §4.2 closed form with a*dh = h: (8bsh^2 + 4bsh*ff + 4bs^2h)/t.
TEST(LowerTensorParallelBlock, GemmWorkMatchesClosedForm) {
  for (int64_t t : {1, 2, 8}) {
    TestMapping m;
    m.t = t;
    m.microbatch = 2;
    BP_ASSERT_OK_AND_ASSIGN(const DistributedTaskIR ir, Lower(m));
    const double b = 2, s = 32, h = 64, ff = 256;
    const double expected =
        (8 * b * s * h * h + 4 * b * s * h * ff + 4 * b * s * s * h) / t;
    BP_EXPECT_DOUBLE_EQ(GemmForwardFlops(ir), expected) << "t=" << t;
    EXPECT_EQ(ir.mesh.tp, t);
  }
}

TEST(LowerTensorParallelBlock, LayerListAndLocalShapes) {
  TestMapping m;
  m.t = 2;
  BP_ASSERT_OK_AND_ASSIGN(const DistributedTaskIR ir, Lower(m));
  ASSERT_EQ(ir.tasks.size(), 24u);
  EXPECT_EQ(ir.tasks.front().name, "AttnBlock_Fork");
  EXPECT_EQ(ir.tasks.back().name, "MlpBlock_Residual");
  const auto& query = std::get<LinearTask>(Find(ir, "AttnBlock_Query").kind);
  EXPECT_EQ(query.m, 32);  // b*s
  EXPECT_EQ(query.n, 64);  // h
  EXPECT_EQ(query.k, 32);  // a*dh/t: column parallel
  const auto& out = std::get<LinearTask>(Find(ir, "AttnBlock_MLP").kind);
  EXPECT_EQ(out.n, 32);  // row parallel
  EXPECT_EQ(out.k, 64);
  const auto& mlp1 = std::get<LinearTask>(Find(ir, "MlpBlock_Mlp1").kind);
  EXPECT_EQ(mlp1.k, 128);  // ff/t
  // Edges follow the dataflow: the residual add reads the dropout and the
  // fork that saved the block input; the attention product reads V.
  const Task& residual = Find(ir, "AttnBlock_Residual");
  EXPECT_EQ(residual.deps,
            (std::vector<int32_t>{Find(ir, "AttnBlock_Fork").id,
                                  Find(ir, "AttnBlock_DropOut").id}));
  const Task& attn = Find(ir, "AttnBlock_Multihead_Attn");
  EXPECT_EQ(attn.deps,
            (std::vector<int32_t>{Find(ir, "AttnBlock_Value").id,
                                  Find(ir, "AttnBlock_Multihead_DropOut").id}));
  for (size_t i = 1; i < ir.tasks.size(); ++i) {
    ASSERT_FALSE(ir.tasks[i].deps.empty()) << ir.tasks[i].name;
    EXPECT_LT(ir.tasks[i].deps.back(), ir.tasks[i].id);
  }
}

TEST(LowerTensorParallelBlock, MultiQueryKeepsKeyValueWhole) {
  TestMapping m;
  m.t = 2;
  m.multiquery = true;
  BP_ASSERT_OK_AND_ASSIGN(const DistributedTaskIR ir, Lower(m));
  EXPECT_EQ(std::get<LinearTask>(Find(ir, "AttnBlock_Key").kind).k, 8);
  EXPECT_EQ(std::get<LinearTask>(Find(ir, "AttnBlock_Value").kind).k, 8);
  EXPECT_EQ(std::get<LinearTask>(Find(ir, "AttnBlock_Query").kind).k, 32);
}

struct CommCase {
  const char* label;
  TensorCommunication communication;
  CollectiveOp f_fw_base, f_bw_base, g_fw_base, g_bw_base;
  CollectiveOp f_fw_edge, g_fw_edge;
};

TEST(LowerTensorParallelBlock, CollectivesPerCommunicationType) {
  const CollectiveOp kNone = CollectiveOp::kNone, kAR = CollectiveOp::kAllReduce,
                     kRS = CollectiveOp::kReduceScatter,
                     kAG = CollectiveOp::kAllGather;
  const std::vector<CommCase> cases = {
      {"ar", AllReduce{}, kNone, kAR, kAR, kNone, kNone, kAR},
      {"rs_ag", ReduceScatterAllGather{}, kAG, kRS, kRS, kAG, kAG, kRS},
      {"p2p_rs_ag", EdgeReduceScatterAllGather{}, kNone, kAR, kAR, kNone, kAG,
       kRS},
  };
  for (const CommCase& c : cases) {
    TestMapping m;
    m.t = 8;
    m.communication = c.communication;
    BP_ASSERT_OK_AND_ASSIGN(const DistributedTaskIR ir, Lower(m));
    const Task& f = Find(ir, "AttnBlock_F");
    const Task& g = Find(ir, "AttnBlock_G");
    EXPECT_EQ(f.collectives[0][0].op, c.f_fw_base) << c.label;
    EXPECT_EQ(f.collectives[1][0].op, c.f_bw_base) << c.label;
    EXPECT_EQ(g.collectives[0][0].op, c.g_fw_base) << c.label;
    EXPECT_EQ(g.collectives[1][0].op, c.g_bw_base) << c.label;
    EXPECT_EQ(f.collectives[0][1].op, c.f_fw_edge) << c.label;
    EXPECT_EQ(g.collectives[0][1].op, c.g_fw_edge) << c.label;
    // The message is always the full b*s*h activation.
    EXPECT_EQ(g.collectives[0][0].bytes, 32.0 * 64 * 2) << c.label;
    // Nothing but the f/g tasks communicates.
    for (const Task& task : ir.tasks) {
      if (std::holds_alternative<TensorCommTask>(task.kind)) continue;
      for (const auto& phase : task.collectives) {
        for (const Collective& col : phase) {
          EXPECT_EQ(col.op, CollectiveOp::kNone) << task.name;
        }
      }
    }
  }
}

TEST(LowerTensorParallelBlock, RecomputeFlags) {
  struct Case {
    RecomputePolicy policy;
    bool qkv, softmax, attn_out, g_recomm, f_recomm;
  };
  for (const Case& c : std::vector<Case>{
           {RecomputePolicy::kNone, false, false, false, false, false},
           {RecomputePolicy::kAttentionOnly, false, true, false, false, true},
           {RecomputePolicy::kFull, true, true, true, true, true}}) {
    TestMapping m;
    m.t = 8;
    m.recompute = c.policy;
    BP_ASSERT_OK_AND_ASSIGN(const DistributedTaskIR ir, Lower(m));
    const std::string label = RecomputeName(c.policy);
    EXPECT_EQ(Find(ir, "AttnBlock_Query").flags.recompute, c.qkv) << label;
    EXPECT_EQ(Find(ir, "AttnBlock_Multihead_SoftMax").flags.recompute,
              c.softmax)
        << label;
    EXPECT_EQ(Find(ir, "AttnBlock_MLP").flags.recompute, c.attn_out) << label;
    EXPECT_EQ(Find(ir, "AttnBlock_G").flags.recommunicate, c.g_recomm)
        << label;
    EXPECT_EQ(Find(ir, "AttnBlock_F").flags.recommunicate, c.f_recomm)
        << label;
  }
}

// The refined profile's selective recomputation (Korthikanti et al. 2022,
// Sec. 4.1) recomputes the product with V too, and only under attn_only or
// full recomputation; the stored activations do not change.
TEST(LowerTensorParallelBlock, SelectiveRecomputeRecomputesTheCoreAttention) {
  for (RecomputePolicy policy :
       {RecomputePolicy::kNone, RecomputePolicy::kAttentionOnly,
        RecomputePolicy::kFull}) {
    TestMapping m;
    m.t = 8;
    m.recompute = policy;
    absl::StatusOr<TypedProgram> program = TestProgram(m);
    ASSERT_THAT(program, IsOk());
    TypedProgram corrected = *program;
    corrected.corrections.Set(Correction::kSelectiveRecomputeCoreAttention,
                              true);
    BP_ASSERT_OK_AND_ASSIGN(const DistributedTaskIR before,
                            LowerTensorParallelBlock().Run(*program));
    BP_ASSERT_OK_AND_ASSIGN(const DistributedTaskIR after,
                            LowerTensorParallelBlock().Run(corrected));
    ASSERT_THAT(VerifyTaskIR(after), IsOk());
    const std::string label = RecomputeName(policy);
    EXPECT_EQ(Find(before, "AttnBlock_Multihead_Attn").flags.recompute,
              policy == RecomputePolicy::kFull)
        << label;
    EXPECT_EQ(Find(after, "AttnBlock_Multihead_Attn").flags.recompute,
              policy != RecomputePolicy::kNone)
        << label;
    ASSERT_EQ(before.tasks.size(), after.tasks.size());
    for (size_t i = 0; i < before.tasks.size(); ++i) {
      const Task& x = before.tasks[i];
      const Task& y = after.tasks[i];
      EXPECT_EQ(x.footprint.activation, y.footprint.activation) << x.name;
      EXPECT_EQ(x.footprint.output, y.footprint.output) << x.name;
      EXPECT_EQ(x.flags.activation_stored, y.flags.activation_stored)
          << x.name;
      EXPECT_EQ(x.flags.output_stored, y.flags.output_stored) << x.name;
      if (x.name != "AttnBlock_Multihead_Attn") {
        EXPECT_EQ(x.flags.recompute, y.flags.recompute) << x.name;
      }
    }
  }
}

TEST(LowerTensorParallelBlock, OverlapFusesLinearsWithCollectives) {
  TestMapping m;
  m.t = 8;
  m.overlap = TensorOverlap::kRing;
  m.communication = ReduceScatterAllGather{};
  BP_ASSERT_OK_AND_ASSIGN(const DistributedTaskIR ir, Lower(m));
  EXPECT_EQ(ir.tasks.size(), 17u);
  const Task& qkv = Find(ir, "AttnBlock_QKV_AG");
  const auto& kind = std::get<OverlappedLinearTask>(qkv.kind);
  EXPECT_EQ(kind.k, 3 * 64 / 8);
  EXPECT_EQ(kind.tiles, 8);
  EXPECT_EQ(qkv.collectives[0][0].op, CollectiveOp::kAllGather);
  EXPECT_EQ(Find(ir, "MlpBlock_Mlp2_RS").collectives[0][0].op,
            CollectiveOp::kReduceScatter);
}

// The refined profile's flash attention: the s x s scores leave memory and
// the stored activations, causal attention halves the score and context work,
// the backward recomputes Q K^T; the calculon profile keeps Calculon's tasks.
TEST(LowerTensorParallelBlock, RefinedCorrectionsFuseTheAttention) {
  absl::StatusOr<TypedProgram> program = TestProgram(TestMapping{});
  ASSERT_THAT(program, IsOk());
  absl::StatusOr<DistributedTaskIR> calculon =
      LowerTensorParallelBlock().Run(*program);
  ASSERT_THAT(calculon, IsOk());
  TypedProgram refined_program = *program;
  refined_program.corrections = CorrectionsFor(ModelProfile::kRefined);
  absl::StatusOr<DistributedTaskIR> refined =
      LowerTensorParallelBlock().Run(refined_program);
  ASSERT_THAT(refined, IsOk());
  ASSERT_THAT(VerifyTaskIR(*refined), IsOk());  // work conservation holds
  const Task& qk0 = Find(*calculon, "AttnBlock_Multihead_Key_Query");
  const Task& qk1 = Find(*refined, "AttnBlock_Multihead_Key_Query");
  EXPECT_DOUBLE_EQ(qk1.work[0].flops, 0.5 * qk0.work[0].flops);
  EXPECT_DOUBLE_EQ(qk1.work[1].flops, 1.5 * qk0.work[0].flops);
  EXPECT_DOUBLE_EQ(qk1.unsharded_gemm_flops, 0.5 * qk0.unsharded_gemm_flops);
  EXPECT_GT(qk0.footprint.output, 0);
  EXPECT_EQ(qk1.footprint.output, 0);
  EXPECT_LT(qk1.work[0].bytes, qk0.work[0].bytes);
  for (const char* name :
       {"AttnBlock_Multihead_SoftMax", "AttnBlock_Multihead_DropOut"}) {
    const Task& before = Find(*calculon, name);
    const Task& after = Find(*refined, name);
    EXPECT_GT(before.work[0].bytes, 0) << name;
    EXPECT_EQ(after.work[0].bytes, 0) << name;
    EXPECT_EQ(after.work[1].bytes, 0) << name;
    EXPECT_EQ(after.footprint.activation_grad, 0) << name;
    EXPECT_DOUBLE_EQ(after.work[0].flops, 0.5 * before.work[0].flops) << name;
  }
  EXPECT_EQ(Find(*refined, "AttnBlock_Multihead_DropOut").footprint.activation,
            0);
  const Task& pv0 = Find(*calculon, "AttnBlock_Multihead_Attn");
  const Task& pv1 = Find(*refined, "AttnBlock_Multihead_Attn");
  EXPECT_DOUBLE_EQ(pv1.work[0].flops, 0.5 * pv0.work[0].flops);
  EXPECT_LT(pv1.footprint.activation, pv0.footprint.activation);
  // The linears do not change.
  EXPECT_EQ(Find(*refined, "AttnBlock_Query").work[0].flops,
            Find(*calculon, "AttnBlock_Query").work[0].flops);
  // Without causal_attention the fused kernel does the full work.
  refined_program.corrections.Set(Correction::kCausalAttention, false);
  absl::StatusOr<DistributedTaskIR> full =
      LowerTensorParallelBlock().Run(refined_program);
  ASSERT_THAT(full, IsOk());
  EXPECT_DOUBLE_EQ(Find(*full, "AttnBlock_Multihead_Key_Query").work[0].flops,
                   qk0.work[0].flops);
}

// A program of the test model with 8 experts, 2 per token, and the
// router's options (the refined profile's corrections when `refined`).
absl::StatusOr<TypedProgram> MoeProgram(bool refined, bool fused,
                                        bool aux_loss) {
  MappingSpec spec = TestSpec(TestMapping{});
  auto& training = std::get<TransformerTrainingMappingSpec>(spec);
  MixtureOfExperts moe;
  moe.experts = 8;
  moe.topk = 2;
  moe.ffn = 128;
  moe.router_fusion = fused;
  moe.aux_loss = aux_loss;
  training.model.moe = moe;
  absl::StatusOr<TypedProgram> program = CheckSpec(spec);
  if (program.ok() && refined) {
    program->corrections = CorrectionsFor(ModelProfile::kRefined);
  }
  return program;
}

// The router's kernels: a memory-bound task after the gating GEMM under the
// refined profile only, its bytes RouterKernelBytesPerToken's per token
// of the rank, fewer fused, more with the auxiliary loss.
TEST(LowerTensorParallelBlock, RouterKernelsAfterTheGatingGemm) {
  const auto lower = [](bool refined, bool fused, bool aux_loss) {
    absl::StatusOr<TypedProgram> program =
        MoeProgram(refined, fused, aux_loss);
    EXPECT_THAT(program, IsOk());
    absl::StatusOr<DistributedTaskIR> ir =
        LowerTensorParallelBlock().Run(*program);
    EXPECT_THAT(ir, IsOk());
    return *ir;
  };
  const auto router_kernels = [](const DistributedTaskIR& ir) {
    int count = 0;
    for (const Task& task : ir.tasks) {
      count += std::holds_alternative<RouterKernelsTask>(task.kind) ? 1 : 0;
    }
    return count;
  };
  EXPECT_EQ(router_kernels(lower(false, false, false)), 0);
  const DistributedTaskIR unfused = lower(true, false, false);
  ASSERT_EQ(router_kernels(unfused), 1);
  ASSERT_THAT(VerifyTaskIR(unfused), IsOk());
  const Task& task = Find(unfused, "MoeBlock_RouterKernels");
  EXPECT_EQ(task.work[0].flops, 0);
  EXPECT_FALSE(task.work[0].matrix_engine);
  // 32 tokens (b 1, s 32, t 1), E 8, k 2, logits of l bytes: unfused,
  // without the auxiliary loss, 8lE + 28E + 5kl + 40k bytes forward and
  // 4lE + 6kl + 40k backward per token (lower_mlp.cc's kernels summed).
  const double l = MoeProgram(true, false, false)->derived.bytes_per_element;
  const double tokens = 32, e = 8, k = 2;
  EXPECT_DOUBLE_EQ(task.work[0].bytes,
                   tokens * (8 * l * e + 28 * e + 5 * k * l + 40 * k));
  EXPECT_DOUBLE_EQ(task.work[1].bytes,
                   tokens * (4 * l * e + 6 * k * l + 40 * k));
  EXPECT_GT(task.work[0].bytes, 0);
  EXPECT_GT(task.work[1].bytes, 0);
  const Task& fused = Find(lower(true, true, false), "MoeBlock_RouterKernels");
  EXPECT_LT(fused.work[0].bytes, task.work[0].bytes);
  const Task& aux = Find(lower(true, false, true), "MoeBlock_RouterKernels");
  EXPECT_GT(aux.work[0].bytes, task.work[0].bytes);
  EXPECT_GT(aux.work[1].bytes, task.work[1].bytes);
  EXPECT_EQ(std::get<RouterKernelsTask>(aux.kind).tokens, tokens);
  // The routed experts read the kernels' output, not the GEMM's.
  const Task& first = Find(unfused, "MoeBlock_PermuteTokens");
  EXPECT_THAT(first.deps, ::testing::Contains(task.id));
}

TEST(LowerTensorParallelBlock, EveryTaskHasLineage) {
  TestMapping m;
  m.t = 8;
  BP_ASSERT_OK_AND_ASSIGN(const DistributedTaskIR ir, Lower(m));
  for (const Task& task : ir.tasks) {
    EXPECT_EQ(task.lineage.pass, "LowerTensorParallelBlock");
    EXPECT_FALSE(task.lineage.sources.empty()) << task.name;
  }
  const std::string text = ToText(ir);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "blueprinting.distributed_task_ir/1");
}

// RunWithoutLineage: the same tasks, numbers and names, no lineage; the
// full verifier refuses it, the lineage-free one accepts it.
TEST(LowerTensorParallelBlock, WithoutLineageIsTheSameBlock) {
  for (const int64_t t : {1, 8}) {
    TestMapping m;
    m.t = t;
    BP_ASSERT_OK_AND_ASSIGN(const TypedProgram program, TestProgram(m));
    BP_ASSERT_OK_AND_ASSIGN(DistributedTaskIR full,
                            LowerTensorParallelBlock().Run(program));
    BP_ASSERT_OK_AND_ASSIGN(
        const DistributedTaskIR lean,
        LowerTensorParallelBlock().RunWithoutLineage(program));
    ASSERT_EQ(lean.tasks.size(), full.tasks.size());
    for (const Task& task : lean.tasks) {
      EXPECT_TRUE(task.lineage.pass.empty()) << task.name;
      EXPECT_TRUE(task.lineage.sources.empty()) << task.name;
    }
    EXPECT_THAT(VerifyTaskIR(lean), Not(IsOk()));
    EXPECT_THAT(VerifyTaskIR(lean, TaskIRChecks::kWithoutLineage), IsOk());
    for (Task& task : full.tasks) task.lineage = Lineage{};
    EXPECT_EQ(ToText(lean), ToText(full)) << "t=" << t;
  }
}

// The verifier rejects corrupted IRs with a message that says what broke.
TEST(VerifyTaskIR, RejectsCorruption) {
  TestMapping m;
  m.t = 2;
  BP_ASSERT_OK_AND_ASSIGN(const DistributedTaskIR good, Lower(m));
  ASSERT_THAT(VerifyTaskIR(good), IsOk());
  struct Corruption {
    const char* expect;
    void (*apply)(DistributedTaskIR&);
  };
  const std::vector<Corruption> corruptions = {
      {"must equal its index", [](DistributedTaskIR& ir) { ir.tasks[3].id = 7; }},
      {"must name an earlier task",
       [](DistributedTaskIR& ir) { ir.tasks[3].deps = {5}; }},
      {"missing edge", [](DistributedTaskIR& ir) { ir.tasks[3].deps.clear(); }},
      {"missing lineage",
       [](DistributedTaskIR& ir) { ir.tasks[4].lineage.sources.clear(); }},
      {"negative or NaN work",
       [](DistributedTaskIR& ir) { ir.tasks[4].work[1].flops = -1; }},
      {"outside a shard boundary of that axis",
       [](DistributedTaskIR& ir) {
         ir.tasks[4].collectives[0][0].op = CollectiveOp::kAllReduce;
       }},
      {"work conservation",
       [](DistributedTaskIR& ir) { ir.tasks[4].work[0].flops *= 2; }},
  };
  for (const Corruption& c : corruptions) {
    DistributedTaskIR bad = good;
    c.apply(bad);
    const absl::Status status = VerifyTaskIR(bad);
    EXPECT_THAT(status, Not(IsOk())) << c.expect;
    EXPECT_NE(std::string(status.message()).find(c.expect), std::string::npos)
        << status;
  }
}

// With `only` and the others' GEMM work given (a relowering's check), the
// listed tasks are checked one by one and work conservation over all:
// the others' work is read, not summed.
TEST(VerifyTaskIR, OnlyWithOthersWork) {
  TestMapping m;
  m.t = 2;
  BP_ASSERT_OK_AND_ASSIGN(const DistributedTaskIR good, Lower(m));
  const std::vector<int32_t> only = {3, 4};
  GemmWork others;
  for (size_t i = 0; i < good.tasks.size(); ++i) {
    if (i != 3 && i != 4) AddGemmWork(good.tasks[i], others);
  }
  EXPECT_THAT(VerifyTaskIR(good, TaskIRChecks::kAll, &only, &others), IsOk());
  DistributedTaskIR bad = good;
  bad.tasks[4].work[1].flops = -1;
  EXPECT_THAT(VerifyTaskIR(bad, TaskIRChecks::kAll, &only, &others),
              Not(IsOk()));
  // An unlisted task's corruption is not seen: it was checked before.
  bad = good;
  bad.tasks[6].work[1].flops = -1;
  EXPECT_THAT(VerifyTaskIR(bad, TaskIRChecks::kAll, &only, &others), IsOk());
  // Work the others' sum misses breaks the conservation.
  GemmWork half = others;
  half.local /= 2;
  const absl::Status status =
      VerifyTaskIR(good, TaskIRChecks::kAll, &only, &half);
  EXPECT_NE(std::string(status.message()).find("work conservation"),
            std::string::npos)
      << status;
}

}  // namespace
}  // namespace blueprint
