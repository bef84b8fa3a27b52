# Fused golden suites and `apply` with a fused spec through the CLI, in WORK (this test's own
# folder): `golden generate --fused` (refusing to overwrite without --force), `golden verify` and
# `golden lint` of the suite, `check --golden` of it (a candidate without its outputs fails as
# missing, or is skipped with --allow-missing), `apply --spec FUSED` writing the bytes `fused apply`
# writes, and bad input refused with one line (exit 2). The careful kernel and the named bug:
# fused_golden_test.cpp.
include(${CMAKE_CURRENT_LIST_DIR}/cli_helpers.cmake)
set(spec "layout=half,head_dim=64,base=10000,dtype=bf16,norm=before,fp8=e4m3,scale=per_token,destination=paged,block_size=8,q_heads=2")

run(0 golden generate --fused ${spec} --tokens 8 --positions 0:65536:4096 --seed 3 --out ${WORK}/fused-cli.json)
if(NOT out MATCHES "wrote .*fused-cli.json \\(2 tests, arrays in .*fused-cli.safetensors\\)")
  message(FATAL_ERROR "generate's line: ${out}")
endif()
refused("fused-cli.json: expected a new file" golden generate --fused ${spec} --tokens 8 --out ${WORK}/fused-cli.json)
run(0 golden generate --fused ${spec} --tokens 8 --positions 0:65536:4096 --seed 3 --out ${WORK}/fused-cli.json --force)
run(0 golden verify ${WORK}/fused-cli.json)
if(NOT out MATCHES "fused-cli.json: ok \\(2 tests, [0-9]+ values\\)")
  message(FATAL_ERROR "verify's line: ${out}")
endif()
run(0 golden lint ${WORK}/fused-cli.json)
# The JSON Schema, independently of the C++ reader (Debian's python3-jsonschema, as golden's tests).
execute_process(COMMAND ${PYTHON} ${SOURCE}/golden/validate_schema.py ${SOURCE}/golden/schema/ropecheck-golden-fused-1.schema.json
                        ${WORK}/fused-cli.json RESULT_VARIABLE code OUTPUT_VARIABLE schema_out ERROR_VARIABLE schema_err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "the fused schema refuses a generated suite: ${schema_out}${schema_err}")
endif()

# The sidecar holds the inputs and SUITE/ID/expected/..., not a candidate's SUITE/ID/q_out.
run(1 check --golden ${WORK}/fused-cli.json --candidate ${WORK}/fused-cli.safetensors)
if(NOT out MATCHES "fused-cli/1 \\(positions 0 .. 28672\\): FAIL: missing" OR NOT out MATCHES "fused suite fused-cli: FAIL \\(2 of 2 tests fail, 2 missing\\)")
  message(FATAL_ERROR "a missing candidate's text: ${out}")
endif()
run(0 check --golden ${WORK}/fused-cli.json --candidate ${WORK}/fused-cli.safetensors --allow-missing)
refused("--golden: a fused suite is judged with its derived bounds" check --golden ${WORK}/fused-cli.json --candidate ${WORK}/fused-cli.safetensors --json ${WORK}/r.json)
# A folder of suites is read as RoPE suites: a fused one in it is named by its schema.
refused("fused-cli.json: schema: expected \"ropecheck-golden/1\" \\(a fused suite" check --golden ${WORK} --candidate ${WORK}/fused-cli.safetensors)
refused("--model: expected exact or f32-angle for a fused suite" check --golden ${WORK}/fused-cli.json --candidate ${WORK}/fused-cli.safetensors --model f32-recipe)

# `apply` with a fused spec: the fused reference, byte for byte `fused apply`'s.
run(0 fused inputs --spec ${spec} --tokens 6 --seed 2 -o ${WORK}/in.npz)
run(0 fused apply --spec ${spec} ${WORK}/in.npz -o ${WORK}/fused-apply.npz)
run(0 apply --spec ${spec} --input ${WORK}/in.npz --out ${WORK}/apply.npz)
file(SHA256 ${WORK}/fused-apply.npz want)
file(SHA256 ${WORK}/apply.npz got)
if(NOT want STREQUAL got)
  message(FATAL_ERROR "apply --spec FUSED wrote other bytes than fused apply")
endif()
refused("--positions, --heads: expected none with a fused spec" apply --spec ${spec} --positions 0 --input ${WORK}/in.npz --out ${WORK}/x.npz)
refused("--out: expected an .npz file for a fused spec's outputs" apply --spec ${spec} --input ${WORK}/in.npz)
refused("--model: expected exact with a fused spec" apply --spec ${spec} --model f32-recipe --input ${WORK}/in.npz --out ${WORK}/x.npz)
refused("--positions is required" apply --spec head_dim=4 --input 1,2,3,4)
refused("golden generate --fused: expected --tokens N" golden generate --fused ${spec} --out ${WORK}/x.json)
refused("--fused: spec field 'fp8'" golden generate --fused head_dim=8,fp8=e3m4 --tokens 2 --out ${WORK}/x.json)
