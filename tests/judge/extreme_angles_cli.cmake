# The oracle at huge angles through the command line, in WORK (this test's own folder): the reference's sweep
# at linear factor 1e-70 (angles to 2^264), and `apply` then `check` of its own outputs for an HF
# config whose rope_scaling is linear with factor 1e-308 (θ'_0 = 1e308), under --model exact and the
# default claim. Each must exit 0: the oracle passes its own gate.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# A pass, whose diagnosis blames no angle: the spec's angles past what long double resolves are not
# compared with the outputs' (judge/diagnosis.cpp angle_resolved), so no "angle: error up to".
function(expect_pass)
  execute_process(COMMAND ${COMMAND} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "exit code ${code}, expected 0: ${ARGN}\n${out}${err}")
  endif()
  if("${out}${err}" MATCHES "angle: error up to")
    message(FATAL_ERROR "a passing run blames the angle: ${ARGN}\n${out}${err}")
  endif()
endfunction()

expect_pass(sweep --impl reference --spec
            layout=half,head_dim=64,base=10000,dtype=f32,scaling=linear,factor=1e-70 --samples 64)

file(WRITE "${WORK}/config.json"
     "{\"model_type\": \"llama\", \"hidden_size\": 256, \"num_attention_heads\": 4, \"max_position_embeddings\": 4096, "
     "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 1e-308}, \"rope_theta\": 10000, \"torch_dtype\": \"float32\"}")
# 16 tokens of 2 heads of head_dim 64: inputs -6.5, ..., -1.5, 0.5, ..., 6.5, exact in binary32.
set(values "")
foreach(k RANGE 0 2047)
  math(EXPR v "${k} % 13 - 6")
  list(APPEND values "${v}.5")
endforeach()
list(JOIN values ", " text)
# apply reads a list of values; check a tensor file (a JSON object of named arrays).
file(WRITE "${WORK}/input.json" "[${text}]")
file(WRITE "${WORK}/input_tensor.json" "{\"q/0/input\": [${text}]}")
set(positions 0:2147483647:134217728)
expect_pass(apply --hf-config ${WORK}/config.json --positions ${positions} --input ${WORK}/input.json --heads 2
            --out ${WORK}/out.npy)
expect_pass(check --hf-config ${WORK}/config.json --positions ${positions} --input ${WORK}/input_tensor.json
            --heads 2 --candidate ${WORK}/out.npy --model exact)
expect_pass(check --hf-config ${WORK}/config.json --positions ${positions} --input ${WORK}/input_tensor.json
            --heads 2 --candidate ${WORK}/out.npy)
