#!/usr/bin/env bash
# Prints `Print Assumptions` of the main theorems into the test log and fails if any axiom other
# than the three the standard library's real numbers rest on appears:
#   ClassicalDedekindReals.sig_forall_dec, ClassicalDedekindReals.sig_not_dec — the classical
#     axioms from which Coq ≥ 8.12 constructs R (Reals.ClassicalDedekindReals);
#   FunctionalExtensionality.functional_extensionality_dep — used by that same construction
#     (Reals.Rdefinitions); our own proofs never call it (vectors are compared pointwise).
# Any lemma of ours that needed another axiom (classic, proof irrelevance, an Axiom/Parameter)
# would show up here and fail the test. The theorems go into one tuple, whose assumptions are the
# union of theirs: one traversal of the standard library's reals instead of one per theorem, and a
# name that no longer resolves fails the tuple's definition.
# Usage: check_assumptions.sh COQC WORK_DIR   (WORK_DIR holds the .vo files from check_coq.sh)
set -euo pipefail
coqc="$1"; work="$2"
theorems=(
  Rotation.relative_matrix Rotation.group_law Rotation.norm_preservation
  Rotation.complex_equivalence Rotation.relative_dot Rotation.multi_axis_relative
  Layouts.forms_agree Layouts.layout_permutation Attention.attention_shift_invariance
  ErrorBound.f32_rotation_bound ErrorBound.f16_rotation_bound ErrorBound.bf16_rotation_bound
  ErrorBound.cos_sin_hypotheses ErrorBound.f64_rotation_bound ErrorBound.f32_kernel_bound
  ErrorBound.f16_kernel_bound ErrorBound.bf16_kernel_bound
  ErrorBound.binary64_rotation_bound ErrorBound.f64_fast_rotation_bound
  ErrorBound.binary64_scaled_rotation_bound ErrorBound.f64_scaled_kernel_bound
  ErrorBound.f32_scaled_kernel_bound ErrorBound.f16_scaled_kernel_bound ErrorBound.bf16_scaled_kernel_bound
  ErrorBound.cache_rotation_bound ErrorBound.f64_cache_bound ErrorBound.f32_cache_bound
  ErrorBound.f16_cache_bound ErrorBound.bf16_cache_bound
  ErrorBound.binary32_entry ErrorBound.binary32_rotation_bound
  ErrorBound.f16_binary32_kernel_bound ErrorBound.bf16_binary32_kernel_bound
  RoundingTest32.decide_component RoundingTest32.decide32_entry RoundingTest32.decide32_conditions
  RoundingTest32.decide32_sound
  RoundingBits.bits_window_pos RoundingBits.bits_window RoundingBits.code_window RoundingBits.bits_low29
  RoundingBits.bits_window_sharp RoundingBits.cell_ends RoundingBits.cell_margin RoundingBits.decide32_strict
  AngleAddition.rotation_step AngleAddition.rounding_term AngleAddition.rotation_run
  AngleAddition.table_by_rotation_gap AngleAddition.direct_state_error AngleAddition.step_error
  Consecutive.dd_sum_term Consecutive.seed_state_error Consecutive.step_state_error
  Consecutive.consecutive_run Consecutive.consecutive_block_bound
  CosSinTaylor.pi_enclosure CosSinTaylor.sin_taylor_error CosSinTaylor.cos_taylor_error
  CosSinTaylor.sin_lipschitz CosSinTaylor.cos_lipschitz CosSinTaylor.sin_second_order
  CosSinTaylor.cos_second_order CosSinTaylor.quadrant_placement
  CosSinTaylor.fast_path_premises CosSinTaylor.precise_path_premises
  FastTrig.sin_poly25_remainder FastTrig.cos_poly26_remainder FastTrig.sin_poly25_error
  FastTrig.cos_poly26_error FastTrig.fast_trig_premises FastTrig.fast_trig_placed
  F64CosSin.sin_poly9_remainder F64CosSin.cos_poly8_remainder F64CosSin.sin_poly9_error
  F64CosSin.cos_poly8_error F64CosSin.f64_cos_sin_premises
  GateTolerance.careful_component GateTolerance.fma_component
  GateTolerance.careful_rotation_bound GateTolerance.gate_exact_default
  GateTolerance.fma_rotation_bound GateTolerance.gate_recipe_default
  GateTolerance.careful_scaled_component GateTolerance.gate_exact_scaled_default
  GateTolerance.gate_recipe_scaled_default
  GateTolerance.f32_angle_error GateTolerance.rotation_lipschitz
  GateTolerance.gate_f32_angle_default GateTolerance.gate_f32_angle_scaled_default
  GateTolerance.screen_enclosure GateTolerance.screen_abs_enclosure
  Fused.rel_round Fused.rel_mul Fused.sum_of_squares_bound Fused.gamma_pow Fused.inv_sqrt_perturb
  Fused.rms_scale_bound Fused.rmsnorm_element_bound Fused.pair_perturb Fused.rotated_perturb Fused.norm_then_rotation
  Fused.norm_then_f32_angle_rotation Fused.clamp_lipschitz Fused.clamp_in_range Fused.fp8_quant_bound
  Fused.fused_element_bound Fused.amax_perturb Fused.dynamic_scale_bound
  Fused.d128_norm_constants Fused.bf16_e4m3_d128_bound
  FusedNorm.tree_sum_bound FusedNorm.tree_sum_any_order FusedNorm.pair_sq_perturb FusedNorm.norm_after_squares
  FusedNorm.perturbed_element_bound FusedNorm.layernorm_centred_squares FusedNorm.layernorm_rms_bracket
  FusedNorm.layernorm_inv_rms FusedNorm.layernorm_element_bound
  FusedBackward.product_perturb FusedBackward.perturbed_tree_sum FusedBackward.backward_dx_bound
)
allowed='^(ClassicalDedekindReals\.sig_forall_dec|ClassicalDedekindReals\.sig_not_dec|FunctionalExtensionality\.functional_extensionality_dep)$'

cd "$work"
{
  echo "From RopeCheck Require Rotation Layouts Attention CosSinTaylor FastTrig F64CosSin ErrorBound RoundingTest32 RoundingBits AngleAddition Consecutive GateTolerance Fused FusedNorm FusedBackward."
  for t in "${theorems[@]}"; do
    echo "Locate RopeCheck.$t."
  done
  printf 'Definition main_theorems := ('
  sep=""
  for t in "${theorems[@]}"; do
    printf '%s\n  RopeCheck.%s' "$sep" "$t"
    sep=","
  done
  echo ")."
  echo "Print Assumptions main_theorems."
} > PrintAssumptions.v
out=$("$coqc" -Q . RopeCheck PrintAssumptions.v 2>&1)
echo "$out"

# Names of assumptions: lines "Name : type" at column 0 after an "Axioms:" header.
bad=$(echo "$out" | awk '/^Axioms:/{ax=1; next} /^Closed under the global context/{ax=0; next} ax && /^[A-Za-z_][A-Za-z0-9_.'"'"']* :/{print $1}' \
      | sort -u | grep -vE "$allowed" || true)
count=$(echo "$out" | grep -cE '^(Axioms:|Closed under the global context)' || true)
if [ "$count" -ne 1 ]; then
  echo "check_assumptions: expected 1 report (the tuple of ${#theorems[@]} theorems), got $count" >&2; exit 1
fi
if [ -n "$bad" ]; then
  echo "check_assumptions: axioms beyond the standard reals: $bad" >&2; exit 1
fi
echo "check_assumptions: ${#theorems[@]} theorems, only the standard-library axioms of R"
