// End to end: `import megatron --hf-config` for every model preset, through
// the Megatron-LM adapter (core/adapters/megatron.h) and the checker.
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "core/api/commands.h"
#include "core/presets/presets.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

using Json = nlohmann::json;

std::vector<std::string> Words(const std::string& text) {
  return absl::StrSplit(text, ' ', absl::SkipEmpty());
}

std::string System() { return FindPreset(PresetKind::kSystem, "h100_sxm_80g"); }

// The spec of `import megatron --system h100_sxm_80g [--hf-config MODEL] --
// FLAGS`, checked; {} (and a failure) when either step fails.
Json Import(const char* model, const std::string& flags) {
  const std::string config = model ? FindPreset(PresetKind::kModel, model) : "";
  const CommandResult imported =
      ImportMegatron(System(), Words(flags), model ? &config : nullptr);
  EXPECT_EQ(imported.exit_code, kExitOk)
      << (model ? model : "flags") << ": "
      << (imported.errors.empty() ? "" : imported.errors[0].message);
  if (imported.exit_code != kExitOk) return {};
  const CommandResult checked = Check(imported.output);
  EXPECT_EQ(checked.exit_code, kExitOk)
      << (model ? model : "flags") << ": "
      << (checked.errors.empty() ? "" : checked.errors[0].message);
  return Json::parse(imported.output);
}

// The number of experts of a config (0: dense), under its family's key.
int64_t ExpertsOf(const Json& config) {
  for (const char* key :
       {"num_local_experts", "num_experts", "n_routed_experts"}) {
    if (config.contains(key)) return config[key];
  }
  return 0;
}

// Every preset's spec has the config's model, as transformers builds it.
TEST(HfImport, EveryPresetGivesItsModel) {
  for (const std::string& name : PresetNames(PresetKind::kModel)) {
    const Json config = Json::parse(FindPreset(PresetKind::kModel, name));
    const Json spec = Import(name.c_str(), "--micro-batch-size 1 --bf16");
    if (spec.is_null()) continue;
    const Json& model = spec["model"];
    const int64_t heads = config["num_attention_heads"];
    const int64_t hidden = config["hidden_size"];
    EXPECT_EQ(model["num_blocks"], config["num_hidden_layers"]) << name;
    EXPECT_EQ(model["hidden"], hidden) << name;
    EXPECT_EQ(model["feedforward"], config["intermediate_size"]) << name;
    EXPECT_EQ(model["attn_heads"], heads) << name;
    EXPECT_EQ(model["kv_heads"], config.value("num_key_value_heads", heads))
        << name;
    if (config.contains("kv_lora_rank")) {
      // Latent attention: a query/key head is its unrotated and rotary parts.
      const Json& latent = model["latent_attention"];
      EXPECT_EQ(model["attn_size"],
                config["qk_nope_head_dim"].get<int64_t>() +
                    config["qk_rope_head_dim"].get<int64_t>())
          << name;
      EXPECT_EQ(latent["kv_lora_rank"], config["kv_lora_rank"]) << name;
      EXPECT_EQ(latent["q_lora_rank"], config.value("q_lora_rank", 0)) << name;
      EXPECT_EQ(latent["v_head_dim"], config["v_head_dim"]) << name;
      EXPECT_EQ(model["mtp_layers"],
                config.value("num_nextn_predict_layers", 0))
          << name;
    } else {
      const Json head_dim = config.value("head_dim", Json());
      EXPECT_EQ(model["attn_size"],
                head_dim.is_null() ? Json(hidden / heads) : head_dim)
          << name;
      EXPECT_TRUE(model["latent_attention"].is_null()) << name;
    }
    if (const int64_t experts = ExpertsOf(config); experts > 0) {
      const Json& moe = model["moe"];
      EXPECT_EQ(moe["experts"], experts) << name;
      EXPECT_EQ(moe["topk"], config["num_experts_per_tok"]) << name;
      EXPECT_EQ(moe["ffn"], config.value("moe_intermediate_size",
                                         config["intermediate_size"]))
          << name;
      EXPECT_EQ(moe["capacity_factor"], 1) << name;
    } else {
      EXPECT_TRUE(model["moe"].is_null()) << name;
    }
    EXPECT_EQ(model["seq_size"], config["max_position_embeddings"]) << name;
    EXPECT_EQ(model["mlp"], "gated") << name;
    EXPECT_EQ(model["norm"], "rmsnorm") << name;
    EXPECT_EQ(model["linear_bias"], false) << name;
    const Json& vocabulary = model["vocabulary"];
    EXPECT_EQ(vocabulary["size"], config["vocab_size"]) << name;
    EXPECT_EQ(vocabulary["divisible_by"], 128) << name;
    EXPECT_EQ(vocabulary["tied"], config.value("tie_word_embeddings", false))
        << name;
    EXPECT_EQ(vocabulary["position_embedding"], "rope") << name;
  }
}

// A config plus flags is the import of the equivalent flags, spec for spec,
// one model per family; a model flag overrides the config's. The mixtures
// of experts run on t = 4 (their 4 query groups) with expert parallelism.
TEST(HfImport, ConfigIsTheEquivalentFlags) {
  const std::string dense_run =
      " --micro-batch-size 1 --bf16 --tensor-model-parallel-size 8"
      " --sequence-parallel --seq-length 4096";
  const std::string moe_run =
      " --micro-batch-size 1 --bf16 --tensor-model-parallel-size 4"
      " --sequence-parallel --seq-length 4096 --world-size 32"
      " --expert-model-parallel-size 8 --use-distributed-optimizer";
  const std::string tail =
      " --make-vocab-size-divisible-by 128"
      " --untie-embeddings-and-output-weights --disable-bias-linear --swiglu"
      " --normalization RMSNorm --position-embedding-type rope";
  struct Case {
    const char* model;
    std::string flags;
    bool moe = false;
  };
  const std::vector<Case> cases = {
      {"llama2-70b",
       "--num-layers 80 --hidden-size 8192 --ffn-hidden-size 28672"
       " --num-attention-heads 64 --group-query-attention"
       " --num-query-groups 8 --max-position-embeddings 4096"
       " --vocab-size 32000" +
           tail},
      {"mistral-7b-v0.3",
       "--num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336"
       " --num-attention-heads 32 --group-query-attention"
       " --num-query-groups 8 --max-position-embeddings 32768"
       " --vocab-size 32768" +
           tail},
      {"qwen2.5-72b",
       "--num-layers 80 --hidden-size 8192 --ffn-hidden-size 29568"
       " --num-attention-heads 64 --group-query-attention"
       " --num-query-groups 8 --max-position-embeddings 131072"
       " --vocab-size 152064" +
           tail},
      {"qwen3-32b",
       "--num-layers 64 --hidden-size 5120 --ffn-hidden-size 25600"
       " --num-attention-heads 64 --group-query-attention"
       " --num-query-groups 8 --kv-channels 128"
       " --max-position-embeddings 40960 --vocab-size 151936" +
           tail},
      // The mixtures of experts: the model flags of Megatron-LM's oracle
      // command lines for them (tests/megatron/moe.csv), with the configs'
      // position tables.
      {"mixtral-8x22b-v0.1",
       "--num-layers 56 --hidden-size 6144 --ffn-hidden-size 16384"
       " --num-attention-heads 48 --max-position-embeddings 65536"
       " --vocab-size 32768 --make-vocab-size-divisible-by 128"
       " --normalization RMSNorm --disable-bias-linear"
       " --position-embedding-type rope --group-query-attention"
       " --num-query-groups 8 --swiglu --untie-embeddings-and-output-weights"
       " --num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 16384"
       " --moe-layer-freq 1",
       true},
      {"qwen3-235b-a22b",
       "--num-layers 94 --hidden-size 4096 --ffn-hidden-size 12288"
       " --num-attention-heads 64 --max-position-embeddings 40960"
       " --vocab-size 151936 --make-vocab-size-divisible-by 128"
       " --normalization RMSNorm --disable-bias-linear"
       " --position-embedding-type rope --kv-channels 128"
       " --group-query-attention --num-query-groups 4 --swiglu"
       " --untie-embeddings-and-output-weights --num-experts 128"
       " --moe-router-topk 8 --moe-ffn-hidden-size 1536 --moe-layer-freq 1",
       true},
      {"deepseek-v3",
       "--num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432"
       " --num-attention-heads 128 --max-position-embeddings 163840"
       " --vocab-size 129280 --make-vocab-size-divisible-by 128"
       " --normalization RMSNorm --disable-bias-linear"
       " --position-embedding-type rope --multi-latent-attention"
       " --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64"
       " --v-head-dim 128 --q-lora-rank 1536 --swiglu"
       " --untie-embeddings-and-output-weights --num-experts 256"
       " --moe-router-topk 8 --moe-ffn-hidden-size 2048"
       " --moe-layer-freq ([0]*3+[1]*58)"
       " --moe-shared-expert-intermediate-size 2048 --mtp-num-layers 1",
       true},
  };
  for (const Case& c : cases) {
    const std::string& run = c.moe ? moe_run : dense_run;
    const Json from_config = Import(c.model, run);
    EXPECT_EQ(from_config["model"]["seq_size"], 4096) << c.model;
    EXPECT_EQ(from_config, Import(nullptr, c.flags + run)) << c.model;
  }
}

// A proxy run truncates the model (--num-layers 4 over DeepSeek-V3's
// config, as benchmark recipes do): the dense-first pattern follows the
// user's --num-layers, and --mtp-num-layers 0 turns the config's MTP off.
TEST(HfImport, TruncatedProxyFollowsNumLayers) {
  const Json spec = Import(
      "deepseek-v3",
      "--num-layers 4 --mtp-num-layers 0 --seq-length 4096 "
      "--micro-batch-size 1 --bf16");
  ASSERT_FALSE(spec.is_null());
  EXPECT_EQ(spec["model"]["num_blocks"], 4);
  EXPECT_EQ(spec["model"]["moe"]["layer_pattern"], "0001");
  EXPECT_EQ(spec["model"]["mtp_layers"], 0);
  // --num-layers=N spells the same.
  EXPECT_EQ(Import("deepseek-v3",
                   "--num-layers=4 --mtp-num-layers 0 --seq-length 4096 "
                   "--micro-batch-size 1 --bf16"),
            spec);
  // Without --mtp-num-layers the config's MTP layer stays.
  const Json with_mtp = Import(
      "deepseek-v3",
      "--num-layers 4 --seq-length 4096 --micro-batch-size 1 --bf16");
  EXPECT_EQ(with_mtp["model"]["mtp_layers"], 1);
}

// Megatron-Bridge's Qwen3-30B-A3B recipe on 16 H100s (EP 16, the flex
// dispatcher's HybridEP backend, forced balance, EP overlap), imported from
// its own flags.
TEST(HfImport, Qwen3RecipeWithHybridEpAndOverlap) {
  const Json spec = Import(
      "qwen3-30b-a3b",
      "--seq-length 4096 --tensor-model-parallel-size 1 "
      "--pipeline-model-parallel-size 1 --expert-model-parallel-size 16 "
      "--expert-tensor-parallel-size 1 --world-size 16 --micro-batch-size 1 "
      "--global-batch-size 1024 --use-distributed-optimizer "
      "--overlap-grad-reduce --bf16 --moe-token-dispatcher-type flex "
      "--moe-flex-dispatcher-backend hybridep "
      "--moe-router-force-load-balancing --overlap-moe-expert-parallel-comm");
  ASSERT_FALSE(spec.is_null());
  const Json& expert = spec["parallelism"]["expert"];
  EXPECT_EQ(expert["degree"], 16);
  EXPECT_EQ(expert["dispatcher"], "hybrid_ep");
  EXPECT_EQ(expert["overlap"], true);
  EXPECT_EQ(expert["delay_wgrad"], false);
  EXPECT_EQ(expert["shared_expert_overlap"], false);
}

}  // namespace
}  // namespace blueprint
