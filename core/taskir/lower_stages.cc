// The tasks of the first and last pipeline stage of a model with a
// vocabulary: the input embedding; the final norm, output layer and loss,
// and the multi-token prediction blocks.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/taskir/lower_builder.h"

namespace blueprint {
namespace lower_internal {
namespace {

// An output layer that uses another's table (the embedding's, tied; the
// model's, in an MTP block): no weights, gradients or optimizer state of
// its own.
void SharedWeights(Task& head) {
  head.footprint.weight = 0;
  head.footprint.weight_grad_sharded = 0;
  head.footprint.weight_grad_unsharded = 0;
  head.footprint.optimizer = 0;
  head.work[static_cast<int>(Stage::kOptimizer)] = StageWork{};
}

}  // namespace

Task& BlockBuilder::AddEmbedding(absl::string_view name) {
  const BlockContext& c = ctx_;
  const int64_t rows = c.derived.padded_vocabulary / c.t();
  RawLayer r;
  const double tokens = static_cast<double>(c.batch_seq);
  const double out = tokens * c.h();
  // A gather of one row per token (plus a learned position row), and in
  // the backward pass the scatter-add of the gradients into the table.
  const Vocabulary& vocabulary = c.model.vocabulary;
  const bool positions = vocabulary.position == PositionEmbedding::kLearned &&
                         vocabulary.max_positions > 0;
  r.fw_flops = positions ? out : 0;
  r.wgrad_flops = out;
  r.inputs = out;
  r.outputs = out;
  // A learned position table (max_positions x hidden, replicated) is left
  // out of the weights, as Megatron-LM's weight and optimizer accounting
  // leaves it out (under 0.5% of a first stage's weights).
  const double table = static_cast<double>(rows) * c.h();
  r.weight_space = r.weight_grads = table;
  r.optim_space = 2 * table;
  Sources sources = {"derived:padded_vocabulary", "spec:model.hidden",
                     "spec:parallelism.tensor.degree",
                     "spec:batch.microbatch_size", "spec:model.seq_size"};
  if (positions) {
    sources.push_back("spec:model.vocabulary.max_positions");
  }
  Task& task = Add(name, EmbeddingTask{c.batch_seq, rows, c.h()}, r,
                   TaskFlags().WithActivationStored(false), std::move(sources));
  // Only the rows touched are read (not the whole table); the gradient's
  // scatter reads and writes as many.
  const double touched = out * c.bpe();
  task.work[static_cast<int>(Stage::kForward)].bytes = 2 * touched;
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes = 0;
  task.work[static_cast<int>(Stage::kWeightGrad)].bytes = 3 * touched;
  task.footprint.activation = 0;
  task.footprint.activation_grad = 0;
  return task;
}

void BlockBuilder::BuildFirstStage() {
  ctx_.placement = Placement::kFirstStage;
  const int32_t embedding = AddEmbedding("Embedding").id;
  // Each rank looks up the rows it holds; the partial outputs are summed
  // (reduce-scattered under sequence parallelism) over the TP ranks.
  const int32_t reduce = AddTensorComm("Embedding_G", true,
                                       TaskFlags().WithActivationStored(false))
                             .id;
  Reads(reduce, {embedding});
}

void BlockBuilder::BuildLastStage() {
  ctx_.placement = Placement::kLastStage;
  ctx_.bias = false;  // Megatron-LM's output layer has no bias
  const BlockContext& c = ctx_;
  const int64_t vocab = c.derived.padded_vocabulary;  // padded
  const int32_t norm =
      AddLayerNorm("FinalNorm", ResidualActivation(), TaskFlags()).id;
  const int32_t f = AddTensorComm("Head_F", false, TaskFlags()).id;
  Reads(f, {norm});
  const Sources head_sources = {"derived:padded_vocabulary",
                                "spec:model.hidden",
                                "spec:parallelism.tensor.degree",
                                "spec:batch.microbatch_size",
                                "spec:model.seq_size",
                                "spec:model.vocabulary.tied"};
  const double logits_gemm =
      2.0 * FullBatchSeq() * c.h() * static_cast<double>(vocab);
  Task& head = AddLinear("Head_Logits", c.batch_seq, c.h(), vocab / c.t(),
                         logits_gemm, TaskFlags(), head_sources);
  const int32_t logits = head.id;
  if (c.model.vocabulary.tied) {
    // A tied output layer uses the embedding's table: no weights, gradients
    // or optimizer state of its own. (On a pipeline the last stage keeps a
    // copy of the table; the analyses add it, so that the task IR does not
    // depend on p.)
    SharedWeights(head);
  }
  Reads(logits, {f});
  int32_t loss = AddSoftMax("Head_CrossEntropy", c.batch_seq * (vocab / c.t()),
                            TaskFlags().WithOutputStored(false))
                     .id;
  Reads(loss, {logits});
  // Multi-token prediction: per MTP block, the normed hidden state and the
  // next token's embedding projected from 2h to h, a block of the last
  // block's kind, and the shared output layer and loss again.
  for (int64_t i = 0; i < c.model.mtp_layers; ++i) {
    const std::string prefix = absl::StrCat("Mtp", i, "_");
    const int32_t mtp_norm = AddLayerNorm(Name(prefix, "Norms"),
                                          2 * ResidualActivation(), TaskFlags())
                                 .id;
    Reads(mtp_norm, {loss});
    const int32_t proj =
        AddLinear(Name(prefix, "Projection"), c.batch_seq, 2 * c.h(),
                  c.h() / c.t(), 2.0 * FullBatchSeq() * (2 * c.h()) * c.h(),
                  TaskFlags(),
                  {"spec:model.mtp_layers", "spec:model.hidden",
                   "spec:parallelism.tensor.degree"})
            .id;
    Reads(proj, {mtp_norm});
    const int32_t attention = BuildAttention(proj);
    const int32_t block =
        c.last_block_moe ? BuildMoe(attention) : BuildMlp(attention);
    const int32_t mtp_f =
        AddTensorComm(Name(prefix, "Head_F"), false, TaskFlags()).id;
    Reads(mtp_f, {block});
    Task& mtp_head =
        AddLinear(Name(prefix, "Head_Logits"), c.batch_seq, c.h(),
                  vocab / c.t(), logits_gemm, TaskFlags(), head_sources);
    // The output layer is shared with the model's: no weights of its own.
    SharedWeights(mtp_head);
    const int32_t mtp_logits = mtp_head.id;
    Reads(mtp_logits, {mtp_f});
    loss = AddSoftMax(Name(prefix, "Head_CrossEntropy"),
                      c.batch_seq * (vocab / c.t()),
                      TaskFlags().WithOutputStored(false))
               .id;
    Reads(loss, {mtp_logits});
  }
}

}  // namespace lower_internal
}  // namespace blueprint
