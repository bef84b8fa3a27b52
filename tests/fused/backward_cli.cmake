# `ropecheck fused backward` end to end in WORK (this test's own folder): inputs and incoming
# gradients, the exact gradients passing `check` (exit 0), the gradients of the forward rotation
# failing it and named (exit 1), and bad input refused with one line (exit 2).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(spec "layout=half,head_dim=64,base=10000,dtype=bf16,norm=before,q_heads=2")
# direction=inverse: the exact gradients with R(θ)·dy in place of R(−θ)·dy.
set(forward "layout=half,head_dim=64,base=10000,dtype=bf16,norm=before,q_heads=2,direction=inverse")

function(run expect_code)
  execute_process(COMMAND ${COMMAND} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL expect_code)
    message(FATAL_ERROR "exit code ${code}, expected ${expect_code}: ${ARGN}\n${out}${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

run(0 fused backward inputs --spec ${spec} --tokens 8 --seed 3 -o ${WORK}/in.npz)
run(0 fused backward apply --spec ${spec} ${WORK}/in.npz -o ${WORK}/grad.npz)
run(0 fused backward check --spec ${spec} ${WORK}/in.npz ${WORK}/grad.npz)
if(NOT out MATCHES "^fused: PASS" OR NOT out MATCHES "dq_weight: worst e" OR out MATCHES "explanation:")
  message(FATAL_ERROR "a passing check's text: ${out}")
endif()

run(0 fused backward apply --spec ${forward} ${WORK}/in.npz -o ${WORK}/forward.npz)
run(1 fused backward check --spec ${spec} ${WORK}/in.npz ${WORK}/forward.npz)
if(NOT out MATCHES "^fused: FAIL" OR NOT out MATCHES "first failure: d" OR NOT out MATCHES "explanation: reproduced by the forward rotation")
  message(FATAL_ERROR "a failing check's text: ${out}")
endif()

function(refused what)
  execute_process(COMMAND ${COMMAND} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT code EQUAL 2 OR NOT lines EQUAL 1 OR NOT err MATCHES "${what}")
    message(FATAL_ERROR "expected exit 2 and one line naming '${what}', got ${code}: ${err}")
  endif()
endfunction()
refused("spec field 'norm'" fused backward inputs --spec head_dim=64,norm=after -o ${WORK}/x.npz)
refused("spec field 'fp8'" fused backward inputs --spec head_dim=64,fp8=e4m3 -o ${WORK}/x.npz)
# A gradients file in place of the inputs, and an inputs file in place of the gradients: the
# missing tensor named.
refused("grad.npz: q: expected a tensor" fused backward check --spec ${spec} ${WORK}/grad.npz ${WORK}/grad.npz)
refused("in.npz: dq: expected a tensor" fused backward check --spec ${spec} ${WORK}/in.npz ${WORK}/in.npz)
