// The Megatron-LM adapter: a Megatron-LM training command line to a training
// MappingSpec on a given system.
//
// Flags are Megatron-LM's names, written "--flag value" or "--flag=value":
//   --num-layers N                    model.num_blocks          (required)
//   --hidden-size N                   model.hidden              (required)
//   --num-attention-heads N           model.attn_heads          (required)
//   --seq-length N                    model.seq_size            (required)
//   --ffn-hidden-size N               model.feedforward         (4 * hidden)
//   --kv-channels N                   model.attn_size           (hidden /
//   heads)
//   --tensor-model-parallel-size N    parallelism.tensor.degree (1)
//   --pipeline-model-parallel-size N  parallelism.pipeline.degree (1)
//   --virtual-pipeline-model-parallel-size V
//   --num-layers-per-virtual-pipeline-stage L
//                                     interleaved_1f1b with V, or with
//                                     V = num_layers / p / L (one of the two)
//   --world-size N                    parallelism.data.degree = N / (t * p);
//                                     stands in for torchrun's WORLD_SIZE
//                                     (default t * p, i.e. data degree 1)
//   --micro-batch-size N              batch.microbatch_size     (required)
//   --global-batch-size N             batch.global_batch_size   (micro * d)
//   --sequence-parallel               communication rs_ag (ignored when the
//                                     tensor degree is 1, as Megatron does)
//   --recompute-granularity full|selective
//                                     recompute full | attn_only
//   --recompute-method uniform        required with granularity full; "block"
//                                     recomputes only some blocks per stage,
//                                     which the model cannot represent
//   --use-distributed-optimizer       parallelism.data.optimizer_sharding
//   --overlap-grad-reduce             parallelism.data.overlap
//   --fp16 | --bf16                   options.datatype float16 | bfloat16
//                                     (float32 without either)
// Any other flag, or a positional argument, is an error that says the model
// cannot represent it.
//
// Knobs Megatron-LM has no flag for take these documented defaults (the
// canonical spec, and so `blueprint check`, prints every one of them):
//   * --sequence-parallel with selective recompute redoes the sequence-parallel
//     all-gathers in the backward pass (all_gather_redo = true), as Korthikanti
//     et al. 2022 ("seqsel") and Calculon's validation do; otherwise false.
//   * parallelism.tensor.overlap none; options.attention multihead;
//     options.fused_activation false; no offload.
//   * network tiers: tensor on tier 0 (the fastest, e.g. NVLink); pipeline and
//     data on the system's last tier (e.g. InfiniBand).
//   * parallelism.pipeline.stage_layout even: Megatron-LM requires
//     num_layers % pipeline size == 0; the checker reports a remainder.
//   * model.name is empty.
//
// Example:
//   absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
//       {"--num-layers", "96", "--hidden-size", "12288", ...}, system);
#ifndef BLUEPRINTING_CORE_ADAPTERS_MEGATRON_H_
#define BLUEPRINTING_CORE_ADAPTERS_MEGATRON_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/spec/spec.h"

namespace blueprint {

// FromMegatronArgs: the training spec that `args` (the flags only, without
// the program name) describe on `system`. The spec is not checked: run
// CheckSpec on it. kInvalidArgument lists every problem of the command line,
// one per line, naming the flag.
absl::StatusOr<MappingSpec> FromMegatronArgs(
    const std::vector<std::string>& args, const System& system);

// MegatronFlagNames: the supported flags, "--" included, in the order above.
const std::vector<std::string>& MegatronFlagNames();

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ADAPTERS_MEGATRON_H_
