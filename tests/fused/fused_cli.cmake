# `ropecheck fused` end to end in WORK (this test's own folder): inputs, the reference's outputs
# passing `check` (exit 0), a candidate of another spec failing it (exit 1, naming the tensor), and
# bad input refused with one line (exit 2).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(spec "layout=half,head_dim=64,base=10000,dtype=bf16,norm=before,fp8=e4m3,scale=per_token,destination=paged,block_size=8,q_heads=2")
# The same operation with the norm after the rotation: a different function, not a tolerance matter.
set(wrong "layout=half,head_dim=64,base=10000,dtype=bf16,norm=after,fp8=e4m3,scale=per_token,destination=paged,block_size=8,q_heads=2")

function(run expect_code)
  execute_process(COMMAND ${COMMAND} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL expect_code)
    message(FATAL_ERROR "exit code ${code}, expected ${expect_code}: ${ARGN}\n${out}${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

run(0 fused inputs --spec ${spec} --tokens 12 --seed 3 -o ${WORK}/in.npz)
run(0 fused apply --spec ${spec} ${WORK}/in.npz -o ${WORK}/out.npz)
run(0 fused check --spec ${spec} ${WORK}/in.npz ${WORK}/out.npz)
if(NOT out MATCHES "^fused: PASS" OR NOT out MATCHES "k_cache: worst e" OR NOT out MATCHES "k_scale: worst e")
  message(FATAL_ERROR "a passing check's text: ${out}")
endif()
run(0 fused check --model exact --spec ${spec} ${WORK}/in.npz ${WORK}/out.npz)

run(0 fused apply --spec ${wrong} ${WORK}/in.npz -o ${WORK}/wrong.npz)
run(1 fused check --spec ${spec} ${WORK}/in.npz ${WORK}/wrong.npz)
if(NOT out MATCHES "^fused: FAIL" OR NOT out MATCHES "first failure: q_(out|scale) token")
  message(FATAL_ERROR "a failing check's text: ${out}")
endif()

# Bad input: one line, exit 2, naming what is wrong.
function(refused what)
  execute_process(COMMAND ${COMMAND} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT code EQUAL 2 OR NOT lines EQUAL 1 OR NOT err MATCHES "${what}")
    message(FATAL_ERROR "expected exit 2 and one line naming '${what}', got ${code}: ${err}")
  endif()
endfunction()
refused("--spec: spec field 'fp8'" fused inputs --spec head_dim=8,fp8=e3m4 -o ${WORK}/x.npz)
# The inputs of a spec without a norm lack the weights a norm needs.
run(0 fused inputs --spec head_dim=64,dtype=bf16 --tokens 4 -o ${WORK}/plain.npz)
refused("q_weight" fused apply --spec head_dim=64,dtype=bf16,norm=before ${WORK}/plain.npz -o ${WORK}/x.npz)
# Outputs of another shape: k_cache's size named.
run(0 fused inputs --spec ${spec} --tokens 4 -o ${WORK}/small.npz)
refused("q_out: expected" fused check --spec ${spec} ${WORK}/small.npz ${WORK}/out.npz)
refused("f32-recipe" fused check --model f32-recipe --spec ${spec} ${WORK}/in.npz ${WORK}/out.npz)
