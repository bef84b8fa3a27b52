# The CLI file route of a LayerNorm with per-head weights (Cohere's qk-norm; fused/README.md "The
# spec"): the inputs carry q_weight [q_heads, head_dim], the reference's outputs pass `check`, an
# RMSNorm's outputs fail it and are named, and the per-head file under a shared-weight spec is
# refused naming the tensor.
include(${CMAKE_CURRENT_LIST_DIR}/cli_helpers.cmake)
set(shape "layout=interleaved,head_dim=64,base=10000,dtype=bf16,norm=before,eps=1e-5,q_heads=2,k_heads=2")
set(spec "${shape},norm_kind=layer,weight_shape=per_head")
set(rms "${shape},norm_kind=rms,weight_shape=per_head")

run(0 fused inputs --spec ${spec} --tokens 8 --seed 5 -o ${WORK}/in.npz)
run(0 fused apply --spec ${spec} ${WORK}/in.npz -o ${WORK}/out.npz)
run(0 fused check --spec ${spec} ${WORK}/in.npz ${WORK}/out.npz)
if(NOT out MATCHES "^fused: PASS" OR NOT out MATCHES "LayerNorm" OR NOT out MATCHES "layernorm_element_bound")
  message(FATAL_ERROR "a passing check's text: ${out}")
endif()

run(0 fused apply --spec ${rms} ${WORK}/in.npz -o ${WORK}/rms.npz)
run(1 fused check --spec ${spec} ${WORK}/in.npz ${WORK}/rms.npz)
if(NOT out MATCHES "^fused: FAIL" OR NOT out MATCHES "norm_kind=rms \\(expected layer\\)")
  message(FATAL_ERROR "a failing check's text: ${out}")
endif()

# One weight vector for every head expected: the file's 2 × 64 values are refused, naming q_weight.
refused("q_weight: expected 64 values" fused check --spec "${shape},norm_kind=layer" ${WORK}/in.npz ${WORK}/out.npz)
