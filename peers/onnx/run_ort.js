// Runs the RotaryEmbedding models that peers/onnx/ort_rope.py prepared, with onnxruntime-node.
//   node run_ort.js ORT_PACKAGE_DIR MANIFEST.json RESULTS.json
// MANIFEST: {models: {key: path.onnx}, runs: [{model, dtype, tokens, hidden, half, x, cos, sin, out}]}.
// Each run reads X [1, tokens, hidden], cos/sin [tokens, half] (raw little-endian, the data dtype;
// f16/bf16 as uint16 bit patterns) and position_ids 0..tokens-1, and writes Y raw to `out`.
// RESULTS: {errors: {key: message}} for the models ONNX Runtime would not load or run.
'use strict';
const fs = require('fs');

const [ortDir, manifestPath, resultsPath] = process.argv.slice(2);
const ort = require(ortDir);
const TYPES = {
  f32: ['float32', Float32Array],
  f16: ['float16', Uint16Array],
  bf16: ['bfloat16', Uint16Array],
  f64: ['float64', Float64Array],
};

function load(path, Array_) {
  const bytes = fs.readFileSync(path);
  return new Array_(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

async function main() {
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  const sessions = {};
  const errors = {};
  const options = {intraOpNumThreads: 1, interOpNumThreads: 1};
  for (const run of manifest.runs) {
    if (errors[run.model]) continue;
    try {
      if (!sessions[run.model]) sessions[run.model] = await ort.InferenceSession.create(manifest.models[run.model], options);
      const [type, Array_] = TYPES[run.dtype];
      const positions = new BigInt64Array(run.tokens);
      for (let t = 0; t < run.tokens; t++) positions[t] = BigInt(t);
      const feeds = {
        X: new ort.Tensor(type, load(run.x, Array_), [1, run.tokens, run.hidden]),
        cos: new ort.Tensor(type, load(run.cos, Array_), [run.tokens, run.half]),
        sin: new ort.Tensor(type, load(run.sin, Array_), [run.tokens, run.half]),
        pos: new ort.Tensor('int64', positions, [1, run.tokens]),
      };
      const result = await sessions[run.model].run(feeds);
      const y = result.Y.data;
      fs.writeFileSync(run.out, Buffer.from(y.buffer, y.byteOffset, y.byteLength));
    } catch (e) {
      errors[run.model] = String(e && e.message ? e.message : e).split('\n')[0].slice(0, 300);
    }
  }
  fs.writeFileSync(resultsPath, JSON.stringify({ort: ort.env.versions, errors}));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
