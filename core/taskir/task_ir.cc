#include "core/taskir/task_ir.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/format.h"
#include "core/base/status_macros.h"

namespace blueprint {

const char* StageName(Stage s) {
  switch (s) {
    case Stage::kForward: return "fw";
    case Stage::kActivationGrad: return "agrad";
    case Stage::kWeightGrad: return "wgrad";
    case Stage::kOptimizer: return "optim";
  }
  return "?";
}

const char* BlockVariantName(BlockVariant v) {
  switch (v) {
    case BlockVariant::kBase: return "base";
    case BlockVariant::kEdge: return "edge";
  }
  return "?";
}

const char* CommPhaseName(CommPhase p) {
  switch (p) {
    case CommPhase::kForward: return "fw";
    case CommPhase::kBackward: return "bw";
    case CommPhase::kRecommunication: return "recomm";
  }
  return "?";
}

const char* CollectiveOpName(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kNone: return "none";
    case CollectiveOp::kAllReduce: return "all_reduce";
    case CollectiveOp::kReduceScatter: return "reduce_scatter";
    case CollectiveOp::kAllGather: return "all_gather";
    case CollectiveOp::kPointToPoint: return "p2p";
    case CollectiveOp::kAllToAll: return "all_to_all";
  }
  return "?";
}

const char* MeshAxisName(MeshAxis a) {
  switch (a) {
    case MeshAxis::kTensor: return "tp";
    case MeshAxis::kExpert: return "ep";
    case MeshAxis::kContext: return "cp";
  }
  return "?";
}

const char* TaskKindName(const TaskKind& kind) {
  return std::visit(
      Overloaded{
          [](const LinearTask&) { return "linear"; },
          [](const OverlappedLinearTask&) { return "overlapped_linear"; },
          [](const BatchMatMulTask&) { return "batch_matmul"; },
          [](const LayerNormTask&) { return "layer_norm"; },
          [](const DropOutTask&) { return "dropout"; },
          [](const GeLUTask&) { return "gelu"; },
          [](const SoftMaxTask&) { return "softmax"; },
          [](const ElementWiseTask&) { return "elementwise"; },
          [](const ForkTask&) { return "fork"; },
          [](const TensorCommTask&) { return "tensor_comm"; },
          [](const GatedActivationTask&) { return "gated_activation"; },
          [](const EmbeddingTask&) { return "embedding"; },
          [](const ExchangeTask&) { return "exchange"; },
          [](const PermutationTask&) { return "permutation"; },
          [](const RouterKernelsTask&) { return "router_kernels"; },
      },
      kind);
}

const char* PlacementName(Placement p) {
  switch (p) {
    case Placement::kEveryBlock: return "block";
    case Placement::kFirstStage: return "first_stage";
    case Placement::kLastStage: return "last_stage";
  }
  return "?";
}

const char* MoePartName(MoePart p) {
  switch (p) {
    case MoePart::kNone: return "none";
    case MoePart::kRouter: return "router";
    case MoePart::kPermutation: return "permutation";
    case MoePart::kDispatch: return "dispatch";
    case MoePart::kExperts: return "experts";
    case MoePart::kCombine: return "combine";
    case MoePart::kSharedExperts: return "shared_experts";
  }
  return "?";
}

namespace {

std::string KindShape(const TaskKind& kind) {
  return std::visit(
      Overloaded{
          [](const LinearTask& k) {
            return absl::StrCat("m=", k.m, " n=", k.n, " k=", k.k);
          },
          [](const OverlappedLinearTask& k) {
            return absl::StrCat("m=", k.m, " n=", k.n, " k=", k.k,
                                " conjugate=", k.conjugate ? 1 : 0,
                                " overlap=", TensorOverlapName(k.overlap),
                                " tiles=", k.tiles);
          },
          [](const BatchMatMulTask& k) {
            return absl::StrCat("batch=", k.batch, " m=", k.m, " n=", k.n,
                                " k=", k.k);
          },
          [](const LayerNormTask& k) {
            return absl::StrCat("elements=", k.elements, " hidden=", k.hidden);
          },
          [](const DropOutTask& k) {
            return absl::StrCat("elements=", k.elements);
          },
          [](const GeLUTask& k) {
            return absl::StrCat("elements=", k.elements,
                                " fused=", k.fused ? 1 : 0);
          },
          [](const SoftMaxTask& k) {
            return absl::StrCat("elements=", k.elements);
          },
          [](const ElementWiseTask& k) {
            return absl::StrCat("lhs=", k.lhs, " rhs=", k.rhs);
          },
          [](const ForkTask& k) {
            return absl::StrCat("elements=", k.elements, " users=", k.users);
          },
          [](const TensorCommTask& k) {
            return absl::StrCat("elements=", k.elements,
                                " conjugate=", k.conjugate ? 1 : 0);
          },
          [](const GatedActivationTask& k) {
            return absl::StrCat("elements=", k.elements,
                                " fused=", k.fused ? 1 : 0);
          },
          [](const EmbeddingTask& k) {
            return absl::StrCat("tokens=", k.tokens, " rows=", k.rows,
                                " hidden=", k.hidden);
          },
          [](const ExchangeTask& k) {
            return absl::StrCat("elements=", k.elements,
                                " axis=", MeshAxisName(k.axis),
                                " overlapped_by=", k.overlapped_by);
          },
          [](const PermutationTask& k) {
            return absl::StrCat("read=", k.read, " written=", k.written,
                                " hidden=", k.hidden);
          },
          [](const RouterKernelsTask& k) {
            return absl::StrCat("tokens=", k.tokens, " experts=", k.experts,
                                " topk=", k.topk,
                                " fused=", k.fused ? "true" : "false",
                                " aux_loss=", k.aux_loss ? "true" : "false");
          },
      },
      kind);
}

bool IsTensorTask(const TaskKind& kind) {
  return std::holds_alternative<TensorCommTask>(kind) ||
         std::holds_alternative<OverlappedLinearTask>(kind);
}

// The ranks of a mesh axis.
int64_t AxisSize(const LogicalMesh& mesh, MeshAxis axis) {
  switch (axis) {
    case MeshAxis::kTensor: return mesh.tp;
    case MeshAxis::kExpert: return mesh.ep;
    case MeshAxis::kContext: return mesh.cp;
  }
  return mesh.tp;
}

// NaN, negative or infinite: one test for the three (NaN fails both
// comparisons), as the lowering's checks run on every number of every task.
bool BadNumber(double x) {
  return !(x >= 0 && x <= std::numeric_limits<double>::max());
}

}  // namespace

std::string ToText(const DistributedTaskIR& ir) {
  std::string out = absl::StrCat(DistributedTaskIR::kFormat, "\n");
  absl::StrAppend(&out, "mesh tp=", ir.mesh.tp);
  // Calculon's and the dense models' blocks have one axis.
  if (ir.mesh.ep != 1 || ir.mesh.cp != 1) {
    absl::StrAppend(&out, " ep=", ir.mesh.ep, " cp=", ir.mesh.cp);
  }
  absl::StrAppend(&out, "\n");
  absl::StrAppend(&out, "training=", ir.training ? 1 : 0,
                  " bytes_per_element=", ir.bytes_per_element,
                  " optimizer_shard=", ir.optimizer_shard,
                  " tp_overlap=", TensorOverlapName(ir.overlap), "\n");
  for (const Task& task : ir.tasks) {
    absl::StrAppend(&out, "task ", task.id, " ", task.name, " ",
                    TaskKindName(task.kind), " ", KindShape(task.kind), "\n");
    // Block tasks (all of Calculon's model) print no placement line.
    if (task.placement != Placement::kEveryBlock) {
      absl::StrAppend(&out, "  placement ", PlacementName(task.placement),
                      "\n");
    }
    if (task.share != 1) {
      absl::StrAppend(&out, "  share ", FormatDouble(task.share), "\n");
    }
    absl::StrAppend(&out, "  deps [", absl::StrJoin(task.deps, ","), "]\n");
    for (int s = 0; s < kNumStages; ++s) {
      const StageWork& w = task.work[s];
      absl::StrAppend(&out, "  work ", StageName(static_cast<Stage>(s)),
                      " flops=", FormatDouble(w.flops),
                      " bytes=", FormatDouble(w.bytes),
                      " engine=", w.matrix_engine ? "matrix" : "vector", "\n");
    }
    for (int p = 0; p < kNumCommPhases; ++p) {
      for (int v = 0; v < kNumVariants; ++v) {
        const Collective& c = task.collectives[p][v];
        if (c.op == CollectiveOp::kNone) continue;
        absl::StrAppend(&out, "  comm ", CommPhaseName(static_cast<CommPhase>(p)),
                        " ", BlockVariantName(static_cast<BlockVariant>(v)),
                        " op=", CollectiveOpName(c.op),
                        c.axis == MeshAxis::kTensor
                            ? ""
                            : absl::StrCat(" axis=", MeshAxisName(c.axis)),
                        " bytes=", FormatDouble(c.bytes), " peers=", c.peers,
                        " reduction_flops=", FormatDouble(c.reduction_flops),
                        "\n");
      }
    }
    const Footprint& f = task.footprint;
    absl::StrAppend(&out, "  memory weight=", FormatDouble(f.weight),
                    " activation=", FormatDouble(f.activation),
                    " output=", FormatDouble(f.output),
                    " activation_grad=", FormatDouble(f.activation_grad),
                    " weight_grad_sharded=",
                    FormatDouble(f.weight_grad_sharded),
                    " weight_grad_unsharded=",
                    FormatDouble(f.weight_grad_unsharded),
                    " optimizer=", FormatDouble(f.optimizer), "\n");
    const TaskFlags& fl = task.flags;
    absl::StrAppend(&out, "  flags recompute=", fl.recompute ? 1 : 0,
                    " recommunicate=", fl.recommunicate ? 1 : 0,
                    " activation_stored=", fl.activation_stored ? 1 : 0,
                    " activation_reused=", fl.activation_reused ? 1 : 0,
                    " output_stored=", fl.output_stored ? 1 : 0, "\n");
    // Printed only where set: every dense model's text stays as it was.
    if (task.expert_state) absl::StrAppend(&out, "  expert_state\n");
    if (task.moe_part != MoePart::kNone) {
      absl::StrAppend(&out, "  moe_part ", MoePartName(task.moe_part), "\n");
    }
    absl::StrAppend(&out, "  gemm_unsharded_flops=",
                    FormatDouble(task.unsharded_gemm_flops), "\n");
    absl::StrAppend(&out, "  lineage pass=", task.lineage.pass, " from [",
                    absl::StrJoin(task.lineage.sources, ","), "]\n");
  }
  return out;
}

bool IsGemm(const TaskKind& kind) {
  return std::visit(
      Overloaded{
          [](const LinearTask&) { return true; },
          [](const OverlappedLinearTask&) { return true; },
          [](const BatchMatMulTask&) { return true; },
          [](const LayerNormTask&) { return false; },
          [](const DropOutTask&) { return false; },
          [](const GeLUTask&) { return false; },
          [](const SoftMaxTask&) { return false; },
          [](const ElementWiseTask&) { return false; },
          [](const ForkTask&) { return false; },
          [](const TensorCommTask&) { return false; },
          [](const GatedActivationTask&) { return false; },
          [](const EmbeddingTask&) { return false; },
          [](const ExchangeTask&) { return false; },
          [](const PermutationTask&) { return false; },
          [](const RouterKernelsTask&) { return false; },
      },
      kind);
}

void AddGemmWork(const Task& task, GemmWork& work) {
  if (!IsGemm(task.kind)) return;
  work.local += task.share * task.work[static_cast<int>(Stage::kForward)].flops;
  work.unsharded += task.share * task.unsharded_gemm_flops;
}

absl::Status VerifyTaskIR(const DistributedTaskIR& ir, TaskIRChecks checks,
                          const std::vector<int32_t>* only,
                          const GemmWork* others) {
  if (ir.mesh.tp < 1) {
    return absl::InternalError(
        absl::StrCat("task IR: mesh tp (", ir.mesh.tp, ") must be >= 1"));
  }
  if (ir.tasks.empty()) return absl::InternalError("task IR: no tasks");
  GemmWork gemm_work;
  if (only != nullptr && others != nullptr) gemm_work = *others;
  size_t next_only = 0;  // into *only
  for (size_t i = 0; i < ir.tasks.size(); ++i) {
    if (only != nullptr) {
      if (next_only < only->size() &&
          (*only)[next_only] == static_cast<int32_t>(i)) {
        ++next_only;
      } else if (others != nullptr) {
        // Verified before, its GEMM work in `others`: the next one to check.
        if (next_only == only->size()) break;
        i = static_cast<size_t>((*only)[next_only]) - 1;
        continue;
      } else {
        // Verified before: only its part of the work conservation.
        AddGemmWork(ir.tasks[i], gemm_work);
        continue;
      }
    }
    const Task& task = ir.tasks[i];
    // Built only for an error: the strategy search verifies every block.
    const auto where = [&task, i] {
      return absl::StrCat("task IR: task ", i, " (", task.name, ")");
    };
    if (task.id != static_cast<int32_t>(i)) {
      return absl::InternalError(absl::StrCat(where(), ": id ", task.id,
                                              " must equal its index ", i));
    }
    // Each placement's tasks form one chain of tasks after the previous
    // placement's; only the first task of a placement reads no other task.
    const bool starts_placement =
        i == 0 || ir.tasks[i - 1].placement != task.placement;
    if (i > 0 && task.placement < ir.tasks[i - 1].placement) {
      return absl::InternalError(
          absl::StrCat(where(), ": placement ", PlacementName(task.placement),
                       " after ", PlacementName(ir.tasks[i - 1].placement)));
    }
    if (!starts_placement && task.deps.empty()) {
      return absl::InternalError(
          absl::StrCat(where(), ": reads no other task (missing edge)"));
    }
    for (int32_t dep : task.deps) {
      // Edges point strictly backwards, which makes the graph acyclic, and
      // stay within the placement.
      if (dep < 0 || dep >= task.id ||
          ir.tasks[static_cast<size_t>(dep)].placement != task.placement) {
        return absl::InternalError(absl::StrCat(
            where(), ": dependency ", dep,
            " must name an earlier task of the same placement"));
      }
    }
    const bool has_lineage =
        !task.lineage.pass.empty() && !task.lineage.sources.empty();
    if (checks == TaskIRChecks::kAll && !has_lineage) {
      return absl::InternalError(absl::StrCat(where(), ": missing lineage"));
    }
    for (int s = 0; s < kNumStages; ++s) {
      if (BadNumber(task.work[s].flops) || BadNumber(task.work[s].bytes)) {
        return absl::InternalError(absl::StrCat(
            where(), ": negative or NaN work in stage ",
            StageName(static_cast<Stage>(s))));
      }
    }
    if (task.expert_state && !IsGemm(task.kind)) {
      return absl::InternalError(
          absl::StrCat(where(), ": expert_state on a task that is not a GEMM"));
    }
    const Footprint& f = task.footprint;
    for (double x : {f.weight, f.activation, f.output, f.activation_grad,
                     f.weight_grad_sharded, f.weight_grad_unsharded,
                     f.optimizer}) {
      if (BadNumber(x)) {
        return absl::InternalError(
            absl::StrCat(where(), ": negative or NaN memory footprint"));
      }
    }
    for (const auto& phase : task.collectives) {
      for (const Collective& c : phase) {
        if (BadNumber(c.bytes) || BadNumber(c.reduction_flops)) {
          return absl::InternalError(
              absl::StrCat(where(), ": negative or NaN collective size"));
        }
        if (c.op == CollectiveOp::kNone) continue;
        // Collectives sit only at shard boundaries: the f/g operators on
        // the tp axis, the exchanges on theirs.
        const auto* exchange = std::get_if<ExchangeTask>(&task.kind);
        if (exchange != nullptr ? c.axis != exchange->axis
                                : !IsTensorTask(task.kind) ||
                                      c.axis != MeshAxis::kTensor) {
          return absl::InternalError(absl::StrCat(
              where(), ": collective ", CollectiveOpName(c.op), " on axis ",
              MeshAxisName(c.axis), " outside a shard boundary of that axis"));
        }
        // The allgather dispatcher's all-gather and reduce-scatter span the
        // expert-tensor x expert ranks (Megatron-LM's tp_ep_group): a
        // multiple of the ep axis.
        const bool tp_ep_group =
            c.axis == MeshAxis::kExpert &&
            (c.op == CollectiveOp::kAllGather ||
             c.op == CollectiveOp::kReduceScatter) &&
            c.peers > 0 && c.peers % AxisSize(ir.mesh, c.axis) == 0;
        if (c.peers != AxisSize(ir.mesh, c.axis) && !tp_ep_group) {
          return absl::InternalError(absl::StrCat(
              where(), ": collective over ", c.peers, " peers, mesh ",
              MeshAxisName(c.axis), " is ", AxisSize(ir.mesh, c.axis)));
        }
      }
    }
    if (BadNumber(task.share) || task.share > 1) {
      return absl::InternalError(
          absl::StrCat(where(), ": share must lie in [0, 1]"));
    }
    if (IsGemm(task.kind)) {
      AddGemmWork(task, gemm_work);
    } else if (task.unsharded_gemm_flops != 0) {
      return absl::InternalError(
          absl::StrCat(where(), ": non-GEMM task carries GEMM work"));
    }
  }
  // Work conservation: the t * cp ranks of a microbatch together do the
  // unsharded GEMM work.
  const double unsharded_gemm = gemm_work.unsharded;
  const double summed =
      gemm_work.local * static_cast<double>(ir.mesh.tp) * ir.mesh.cp;
  if (std::fabs(summed - unsharded_gemm) > 1e-9 * unsharded_gemm) {
    return absl::InternalError(absl::StrCat(
        "task IR: work conservation violated: local GEMM FLOPs x tp = ",
        FormatDouble(summed), ", unsharded GEMM FLOPs = ",
        FormatDouble(unsharded_gemm)));
  }
  return absl::OkStatus();
}

}  // namespace blueprint
