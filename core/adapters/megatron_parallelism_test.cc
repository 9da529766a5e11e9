// The Megatron-LM adapter's parallelism flags (megatron_parallelism.cc):
// data-parallel knobs, recompute and the schedule, virtual stages, context
// and expert parallelism, the expert dispatcher, data-parallel sharding.
#include "core/adapters/megatron.h"

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "core/adapters/megatron_test_util.h"
#include "core/spec/check.h"
#include "core/spec/spec.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using megatron_test::A100;
using megatron_test::Args;
using megatron_test::Errors;
using megatron_test::Import;
using megatron_test::Notes;
using megatron_test::kModel;

TEST(Megatron, DataParallelKnobs) {
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
      Args("--num-layers=24 --hidden-size=4096 --num-attention-heads=32 "
           "--seq-length=2048 --micro-batch-size=1 "
           "--tensor-model-parallel-size=1 --world-size=8 "
           "--use-distributed-optimizer --overlap-grad-reduce --bf16 "
           "--sequence-parallel"),
      A100());
  ASSERT_TRUE(spec.ok()) << spec.status();
  const auto& s = std::get<TransformerTrainingMappingSpec>(*spec);
  EXPECT_TRUE(
      std::holds_alternative<ShardOptimizer>(s.parallelism.data.sharding));
  EXPECT_TRUE(s.parallelism.data.overlap);
  EXPECT_EQ(s.parallelism.data.degree, 8);
  EXPECT_EQ(s.options.datatype, DataType::kBFloat16);
  EXPECT_TRUE(
      std::holds_alternative<SingleStage>(s.parallelism.pipeline.schedule));
  // Megatron-LM turns sequence parallelism off with one tensor rank.
  EXPECT_TRUE(
      std::holds_alternative<AllReduce>(s.parallelism.tensor.communication));
}

TEST(Megatron, RecomputeAndScheduleErrors) {
  const std::string model =
      "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
      "--seq-length 2048 --micro-batch-size 1 ";
  EXPECT_EQ(Errors(model + "--recompute-granularity full"),
            std::vector<std::string>{
                "--recompute-granularity full needs --recompute-method "
                "uniform"});
  EXPECT_EQ(Errors(model + "--recompute-granularity full "
                           "--recompute-method block"),
            std::vector<std::string>{
                "--recompute-method block recomputes only some blocks of "
                "each stage, which the model cannot represent (it recomputes "
                "every block); use --recompute-method uniform"});
  EXPECT_EQ(Errors(model + "--recompute-granularity partial"),
            std::vector<std::string>{
                "--recompute-granularity must be one of full, selective (got "
                "\"partial\")"});
  EXPECT_EQ(Errors(model + "--pipeline-model-parallel-size 8 "
                           "--num-layers-per-virtual-pipeline-stage 5"),
            std::vector<std::string>{
                "--num-layers-per-virtual-pipeline-stage (5) must divide the "
                "layers per pipeline stage (--num-layers 96 / "
                "--pipeline-model-parallel-size 8 = 12)"});
  EXPECT_EQ(
      Errors(model + "--pipeline-model-parallel-size 7 "
                     "--num-layers-per-virtual-pipeline-stage 2"),
      std::vector<std::string>{"--num-layers (96) must be divisible by "
                               "--pipeline-model-parallel-size (7) to use "
                               "--num-layers-per-virtual-pipeline-stage"});
  EXPECT_EQ(Errors(model + "--virtual-pipeline-model-parallel-size 2 "
                           "--num-layers-per-virtual-pipeline-stage 2"),
            std::vector<std::string>{
                "--virtual-pipeline-model-parallel-size and "
                "--num-layers-per-virtual-pipeline-stage cannot both be "
                "given"});
  EXPECT_EQ(Errors(model + "--tensor-model-parallel-size 8 --world-size 12"),
            std::vector<std::string>{"--world-size (12) must be divisible by "
                                     "--tensor-model-parallel-size (8) * "
                                     "--pipeline-model-parallel-size (1)"});
  EXPECT_EQ(Errors("--num-layers 96 --hidden-size 100 --num-attention-heads "
                   "3 --seq-length 2048 --micro-batch-size 1"),
            std::vector<std::string>{
                "--kv-channels defaults to --hidden-size (100) / "
                "--num-attention-heads (3), which must then divide evenly; "
                "give --kv-channels"});
  EXPECT_EQ(Errors(model + "--world-size 99999999999999999999"),
            std::vector<std::string>{
                "--world-size needs a positive integer that fits in 64 bits "
                "(digits only, no sign, spaces or leading zeros; got "
                "\"99999999999999999999\")"});
}

//----- The parallelism and precision flags
//----------------------------------------

TEST(MegatronParallelism, VirtualStagesHaveThreeSpellings) {
  const std::string model =
      "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
      "--seq-length 2048 --micro-batch-size 1 --pipeline-model-parallel-size "
      "8 ";
  for (const std::string flags :
       {"--num-virtual-stages-per-pipeline-rank 3",
        "--virtual-pipeline-model-parallel-size 3",
        "--num-layers-per-virtual-pipeline-stage 4"}) {
    const TransformerTrainingMappingSpec spec = Import(model + flags);
    ASSERT_TRUE(std::holds_alternative<InterleavedOneForwardOneBackward>(
        spec.parallelism.pipeline.schedule))
        << flags;
    EXPECT_EQ(std::get<InterleavedOneForwardOneBackward>(
                  spec.parallelism.pipeline.schedule)
                  .virtual_stages,
              3)
        << flags;
  }
  EXPECT_EQ(Errors(model + "--num-virtual-stages-per-pipeline-rank 3 "
                           "--num-layers-per-virtual-pipeline-stage 4"),
            std::vector<std::string>{
                "--num-virtual-stages-per-pipeline-rank and "
                "--num-layers-per-virtual-pipeline-stage cannot both be "
                "given"});
  EXPECT_EQ(Errors(model + "--num-virtual-stages-per-pipeline-rank 3 "
                           "--virtual-pipeline-model-parallel-size 3 "
                           "--num-layers-per-virtual-pipeline-stage 4"),
            std::vector<std::string>{
                "--virtual-pipeline-model-parallel-size, "
                "--num-virtual-stages-per-pipeline-rank and "
                "--num-layers-per-virtual-pipeline-stage cannot be given "
                "together"});
}

TEST(MegatronParallelism, Recompute) {
  EXPECT_EQ(Import(std::string(kModel) + "--recompute-activations")
                .parallelism.recompute,
            RecomputePolicy::kAttentionOnly);
  EXPECT_EQ(Import(std::string(kModel) +
                   "--recompute-granularity full --recompute-method uniform "
                   "--recompute-num-layers 1")
                .parallelism.recompute,
            RecomputePolicy::kFull);
  EXPECT_EQ(Errors(std::string(kModel) +
                   "--recompute-granularity full --recompute-method uniform "
                   "--recompute-num-layers 2"),
            std::vector<std::string>{
                "--recompute-num-layers 2 keeps the input of every 2th block "
                "only, which the model cannot represent (it keeps each "
                "block's input); use --recompute-num-layers 1"});
  EXPECT_EQ(Errors(std::string(kModel) + "--recompute-granularity selective "
                                         "--recompute-num-layers 1"),
            std::vector<std::string>{"--recompute-num-layers only applies to "
                                     "--recompute-granularity full"});
  // Megatron-LM reads the modules with selective granularity only.
  const std::string modules =
      std::string(kModel) + "--recompute-modules core_attn mlp";
  EXPECT_EQ(Errors(modules), std::vector<std::string>{});
  const std::vector<std::string> notes = Notes(modules);
  EXPECT_NE(std::find(notes.begin(), notes.end(),
                      "--recompute-modules has no effect without "
                      "--recompute-granularity selective, as in Megatron-LM "
                      "(granularity none)"),
            notes.end());
  const TransformerTrainingMappingSpec selective = Import(
      std::string(kModel) +
      "--recompute-granularity selective --recompute-modules mlp layernorm");
  EXPECT_EQ(selective.parallelism.recompute, RecomputePolicy::kNone);
  EXPECT_TRUE(selective.parallelism.recompute_modules.Has(
      RecomputeModule::kMlp));
  EXPECT_TRUE(selective.parallelism.recompute_modules.Has(
      RecomputeModule::kLayerNorm));
  EXPECT_EQ(Errors(std::string(kModel) +
                   "--recompute-granularity selective --recompute-modules "
                   "mlp gdn_norm_out"),
            std::vector<std::string>{
                "--recompute-modules takes words of core_attn, moe_act, "
                "layernorm, mla_up_proj, mlp, moe, shared_experts (got "
                "\"gdn_norm_out\")"});
}

TEST(MegatronParallelism, DataParallelKnobsNeedTwoRanks) {
  const std::string knobs = std::string(kModel) +
                            "--use-distributed-optimizer --overlap-grad-reduce "
                            "--overlap-param-gather";
  const TransformerTrainingMappingSpec sharded =
      Import(knobs + " --world-size 8");
  EXPECT_TRUE(std::holds_alternative<ShardOptimizer>(
      sharded.parallelism.data.sharding));
  EXPECT_TRUE(sharded.parallelism.data.overlap);
  const TransformerTrainingMappingSpec one = Import(knobs);
  EXPECT_TRUE(
      std::holds_alternative<NoSharding>(one.parallelism.data.sharding));
  EXPECT_FALSE(one.parallelism.data.overlap);
  EXPECT_EQ(Notes(knobs),
            std::vector<std::string>{
                "--use-distributed-optimizer and --overlap-grad-reduce and "
                "--overlap-param-gather have no effect with one data-parallel "
                "rank (--world-size = --tensor-model-parallel-size * "
                "--pipeline-model-parallel-size)"});
  EXPECT_EQ(Errors(std::string(kModel) + "--overlap-param-gather"),
            (std::vector<std::string>{
                "--overlap-param-gather needs --overlap-grad-reduce, as "
                "Megatron-LM asserts",
                "--overlap-param-gather needs --use-distributed-optimizer or "
                "--use-megatron-fsdp, as Megatron-LM asserts"}));
  EXPECT_EQ(Notes(std::string(kModel) + "--sequence-parallel"),
            std::vector<std::string>{
                "--sequence-parallel has no effect with one tensor-parallel "
                "rank, as in Megatron-LM"});
}

// --tp-comm-overlap: Transformer Engine's userbuffers as the ring overlap,
// only under sequence parallelism (Megatron-LM asserts it).
TEST(Megatron, TensorCommunicationOverlap) {
  const TransformerTrainingMappingSpec overlapped =
      Import(std::string(kModel) +
             "--tensor-model-parallel-size 2 --world-size 2 "
             "--sequence-parallel --tp-comm-overlap");
  EXPECT_EQ(overlapped.parallelism.tensor.overlap, TensorOverlap::kRing);
  EXPECT_TRUE(std::holds_alternative<ReduceScatterAllGather>(
      overlapped.parallelism.tensor.communication));
  EXPECT_EQ(Import(std::string(kModel) +
                   "--tensor-model-parallel-size 2 --world-size 2 "
                   "--sequence-parallel")
                .parallelism.tensor.overlap,
            TensorOverlap::kNone);
  EXPECT_EQ(Errors(std::string(kModel) +
                   "--tensor-model-parallel-size 2 --world-size 2 "
                   "--tp-comm-overlap"),
            std::vector<std::string>{
                "--tp-comm-overlap needs --sequence-parallel with "
                "--tensor-model-parallel-size > 1 (got 2), as Megatron-LM "
                "asserts"});
  EXPECT_EQ(Errors(std::string(kModel) +
                   "--sequence-parallel --tp-comm-overlap"),
            std::vector<std::string>{
                "--tp-comm-overlap needs --sequence-parallel with "
                "--tensor-model-parallel-size > 1 (got 1), as Megatron-LM "
                "asserts"});
}

//----- Context and expert parallelism, data-parallel sharding
//-------------------

TEST(MegatronParallelism, ContextParallelism) {
  const TransformerTrainingMappingSpec s =
      Import(std::string(kModel) +
             "--context-parallel-size 2 --tensor-model-parallel-size 2 "
             "--world-size 16");
  EXPECT_EQ(s.parallelism.context.degree, 2);
  EXPECT_EQ(s.parallelism.context.exchange, ContextExchange::kRing);
  // t * cp = 4 ranks fit in (and divide) the NVLink tier of 8.
  EXPECT_EQ(s.parallelism.context.network_tier, 0);
  EXPECT_EQ(s.parallelism.data.degree, 4);
  EXPECT_EQ(s.batch.global_batch_size, 8);
  EXPECT_EQ(
      Import(std::string(kModel) + "--context-parallel-size 16 --world-size 16")
          .parallelism.context.network_tier,
      1);
  EXPECT_EQ(Import(std::string(kModel) +
                   "--context-parallel-size 2 --cp-comm-type allgather")
                .parallelism.context.exchange,
            ContextExchange::kAllGather);
  // One type per layer, all the same, is one type.
  EXPECT_EQ(Import(std::string(kModel) +
                   "--context-parallel-size 2 --cp-comm-type allgather "
                   "allgather allgather")
                .parallelism.context.exchange,
            ContextExchange::kAllGather);
  EXPECT_EQ(
      Errors(std::string(kModel) +
             "--context-parallel-size 2 --cp-comm-type p2p a2a --world-size 3"),
      (std::vector<std::string>{
          "unsupported Megatron-LM flag --cp-comm-type \"p2p\" ... \"a2a\": "
          "one value per layer is modelled only when every layer has the "
          "same",
          "--world-size (3) must be divisible by --tensor-model-parallel-size "
          "(1) * --context-parallel-size (2) * --pipeline-model-parallel-size "
          "(1)"}));
  EXPECT_EQ(Errors(std::string(kModel) +
                   "--context-parallel-size 2 --cp-comm-type a2a+p2p"),
            std::vector<std::string>{
                "unsupported Megatron-LM flag --cp-comm-type a2a+p2p: "
                "all-to-all (Ulysses) context parallelism is not modelled "
                "(parallelism.context.exchange is ring, p2p, or all_gather, "
                "allgather)"});
  EXPECT_EQ(Errors(std::string(kModel) + "--cp-comm-type ring"),
            std::vector<std::string>{
                "--cp-comm-type must be one of p2p, allgather, a2a, a2a+p2p "
                "(got \"ring\")"});
  EXPECT_EQ(Notes(std::string(kModel) + "--cp-comm-type allgather"),
            std::vector<std::string>{
                "--cp-comm-type has no effect with one context-parallel "
                "rank"});
}

// The token dispatcher and the expert exchange's overlaps: Megatron-LM's
// flags, each to its spec field, and its assertions as errors.
TEST(MegatronParallelism, ExpertDispatcherAndOverlap) {
  const std::string moe = std::string(kModel) +
                          "--num-experts 8 --bf16 "
                          "--expert-model-parallel-size 8 --world-size 8 ";
  // Megatron-LM's default dispatcher is allgather.
  EXPECT_EQ(Import(moe).parallelism.expert.dispatcher,
            ExpertDispatcher::kAllGather);
  EXPECT_EQ(Import(moe + "--moe-token-dispatcher-type allgather")
                .parallelism.expert.dispatcher,
            ExpertDispatcher::kAllGather);
  EXPECT_EQ(Import(moe + "--moe-token-dispatcher-type alltoall")
                .parallelism.expert.dispatcher,
            ExpertDispatcher::kAllToAll);
  EXPECT_EQ(Import(moe + "--moe-token-dispatcher-type flex")
                .parallelism.expert.dispatcher,
            ExpertDispatcher::kDeepEp);
  EXPECT_EQ(Import(moe + "--moe-token-dispatcher-type flex "
                         "--moe-flex-dispatcher-backend hybridep")
                .parallelism.expert.dispatcher,
            ExpertDispatcher::kHybridEp);
  EXPECT_EQ(Import(moe + "--moe-token-dispatcher-type flex "
                         "--moe-enable-deepep")
                .parallelism.expert.dispatcher,
            ExpertDispatcher::kDeepEp);
  const TransformerTrainingMappingSpec overlap =
      Import(moe + "--moe-token-dispatcher-type flex "
                   "--overlap-moe-expert-parallel-comm --delay-wgrad-compute");
  EXPECT_TRUE(overlap.parallelism.expert.overlap);
  EXPECT_TRUE(overlap.parallelism.expert.delay_wgrad);
  EXPECT_FALSE(overlap.parallelism.expert.shared_expert_overlap);
  EXPECT_TRUE(Import(moe + "--moe-shared-expert-overlap")
                  .parallelism.expert.shared_expert_overlap);
  EXPECT_EQ(Notes(moe + "--moe-flex-dispatcher-backend hybridep"),
            std::vector<std::string>{
                "--moe-flex-dispatcher-backend has no effect without "
                "--moe-token-dispatcher-type flex"});
  EXPECT_EQ(
      Errors(moe + "--moe-token-dispatcher-type allgather "
                   "--moe-enable-deepep"),
      (std::vector<std::string>{
          "--moe-enable-deepep needs --moe-token-dispatcher-type flex, not "
          "allgather, as Megatron-LM asserts"}));
  EXPECT_EQ(Errors(moe + "--moe-token-dispatcher-type flex "
                         "--moe-flex-dispatcher-backend ncclep"),
            std::vector<std::string>{
                "--moe-flex-dispatcher-backend ncclep is not modelled (deepep "
                "and hybridep are)"});
  // The checker states Megatron-LM's assertions on the overlaps, all at once.
  absl::StatusOr<MappingSpec> bad = FromMegatronArgs(
      Args(std::string(kModel) +
           "--num-experts 8 --fp16 --world-size 8 --delay-wgrad-compute "
           "--moe-token-dispatcher-type flex --moe-shared-expert-overlap"),
      A100());
  ASSERT_TRUE(bad.ok()) << bad.status();
  std::vector<std::string> fields;
  for (const Violation& v : FindViolations(*bad)) fields.push_back(v.field);
  EXPECT_EQ(fields, (std::vector<std::string>{
                        "parallelism.expert.delay_wgrad",
                        "parallelism.expert.shared_expert_overlap"}));
  absl::StatusOr<MappingSpec> lone = FromMegatronArgs(
      Args(std::string(kModel) +
           "--num-experts 8 --fp16 --world-size 8 "
           "--moe-token-dispatcher-type alltoall "
           "--overlap-moe-expert-parallel-comm --moe-shared-expert-overlap "
           "--recompute-granularity full --recompute-method uniform"),
      A100());
  ASSERT_TRUE(lone.ok()) << lone.status();
  fields.clear();
  for (const Violation& v : FindViolations(*lone)) fields.push_back(v.field);
  EXPECT_EQ(fields, (std::vector<std::string>{
                        "parallelism.expert.overlap",
                        "parallelism.expert.overlap",
                        "parallelism.expert.overlap"}));
  // The allgather dispatcher (Megatron-LM's default) runs no overlap.
  absl::StatusOr<MappingSpec> gathered = FromMegatronArgs(
      Args(std::string(kModel) +
           "--num-experts 8 --fp16 --expert-model-parallel-size 8 "
           "--world-size 8 --overlap-moe-expert-parallel-comm"),
      A100());
  ASSERT_TRUE(gathered.ok()) << gathered.status();
  std::vector<std::string> messages;
  for (const Violation& v : FindViolations(*gathered)) {
    messages.push_back(v.message);
  }
  EXPECT_EQ(messages,
            std::vector<std::string>{
                "parallelism.expert.overlap (true) needs the all_to_all, "
                "deep_ep or hybrid_ep dispatcher, not all_gather, as "
                "Megatron-LM asserts (overlap_moe_expert_parallel_comm with "
                "the alltoall or flex token dispatcher)"});
}

TEST(MegatronParallelism, ExpertParallelism) {
  const std::string moe = std::string(kModel) + "--num-experts 8 --fp16 ";
  const TransformerTrainingMappingSpec s =
      Import(moe + "--expert-model-parallel-size 4 --world-size 8");
  EXPECT_EQ(s.parallelism.expert.degree, 4);
  EXPECT_EQ(s.parallelism.expert.tensor_degree, 0);
  EXPECT_EQ(s.parallelism.expert.network_tier, 0);
  // ep * etp = 16 ranks do not fit in the NVLink tier of 8.
  const TransformerTrainingMappingSpec wide =
      Import(moe +
             "--expert-model-parallel-size 8 --tensor-model-parallel-size 2 "
             "--world-size 16");
  EXPECT_EQ(wide.parallelism.expert.network_tier, 1);
  const TransformerTrainingMappingSpec etp =
      Import(moe +
             "--expert-model-parallel-size 8 --tensor-model-parallel-size 2 "
             "--expert-tensor-parallel-size 1 --world-size 16");
  EXPECT_EQ(etp.parallelism.expert.tensor_degree, 1);
  EXPECT_EQ(etp.parallelism.expert.network_tier, 0);
  EXPECT_TRUE(CheckSpec(MappingSpec(etp)).ok());
  // Megatron-LM asserts that expert parallelism has experts to split.
  EXPECT_EQ(Errors(std::string(kModel) + "--expert-model-parallel-size 2 "
                                         "--world-size 2"),
            std::vector<std::string>{
                "--expert-model-parallel-size (2) needs --num-experts, as "
                "Megatron-LM asserts"});
  // The checker says what else Megatron-LM would refuse.
  absl::StatusOr<MappingSpec> split = FromMegatronArgs(
      Args(moe + "--expert-model-parallel-size 3 --world-size 3"), A100());
  ASSERT_TRUE(split.ok()) << split.status();
  const std::vector<Violation> violations = FindViolations(*split);
  ASSERT_FALSE(violations.empty());
  EXPECT_EQ(violations[0].field, "parallelism.expert.degree");
}

TEST(MegatronParallelism, DataParallelSharding) {
  const std::string base = std::string(kModel) + "--world-size 8 ";
  const auto sharding = [&](const std::string& flags) {
    return Import(base + flags).parallelism.data.sharding;
  };
  EXPECT_TRUE(std::holds_alternative<NoSharding>(sharding("")));
  EXPECT_TRUE(std::holds_alternative<ShardOptimizer>(
      sharding("--use-distributed-optimizer")));
  // Megatron-FSDP: optim_grads_params (ZeRO-3) unless the strategy says
  // otherwise, over every data-parallel rank.
  const DataSharding fsdp = sharding("--use-megatron-fsdp");
  ASSERT_TRUE(std::holds_alternative<ShardParameters>(fsdp));
  EXPECT_EQ(std::get<ShardParameters>(fsdp).group, 0);
  EXPECT_TRUE(std::holds_alternative<ShardGradients>(sharding(
      "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads")));
  EXPECT_TRUE(std::holds_alternative<ShardOptimizer>(
      sharding("--use-megatron-fsdp --data-parallel-sharding-strategy optim "
               "--use-distributed-optimizer")));
  EXPECT_TRUE(std::holds_alternative<NoSharding>(sharding(
      "--use-megatron-fsdp --data-parallel-sharding-strategy no_shard")));
  // The strategy is Megatron-FSDP's only.
  EXPECT_TRUE(std::holds_alternative<ShardOptimizer>(
      sharding("--use-distributed-optimizer --data-parallel-sharding-strategy "
               "optim_grads_params")));
  EXPECT_EQ(Notes(base + "--data-parallel-sharding-strategy optim"),
            std::vector<std::string>{
                "--data-parallel-sharding-strategy has no effect without "
                "--use-megatron-fsdp, as in Megatron-LM"});
  // Megatron-FSDP gathers parameters as the distributed optimizer does.
  EXPECT_EQ(Errors(base + "--use-megatron-fsdp --overlap-grad-reduce "
                          "--overlap-param-gather"),
            std::vector<std::string>{});
  EXPECT_EQ(Notes(std::string(kModel) + "--use-megatron-fsdp"),
            std::vector<std::string>{
                "--use-megatron-fsdp has no effect with one data-parallel rank "
                "(--world-size = --tensor-model-parallel-size * "
                "--pipeline-model-parallel-size)"});
  EXPECT_TRUE(std::holds_alternative<NoSharding>(
      Import(std::string(kModel) + "--use-megatron-fsdp")
          .parallelism.data.sharding));
}

}  // namespace
}  // namespace blueprint
