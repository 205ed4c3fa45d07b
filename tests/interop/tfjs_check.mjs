// TensorFlow.js's side of the interop tests: the pinned @tensorflow/tfjs 4.22.0
// of tests/interop/package-lock.json, CPU backend, in Node (tests/interop/CMakeLists.txt
// runs it between the steps of interop_fixture).
//
//   node tfjs_check.mjs check-export <dir>
//     tf.loadLayersModel on gltrain's exports <dir>/{mlp,cnn}_tfjs/ (through an
//     IOHandler that reads model.json and the shards it names, as tfjs-node's file://
//     would), then checks their predictions for the rows "x" of
//     <dir>/expected.safetensors against gltrain's ("mlp", "cnn") to 1e-4.
//   node tfjs_check.mjs check-roundtrip <dir>
//     tf.loadLayersModel on <dir>/res_back_tfjs/ (the functional tfjs_res after gltrain fine-tuned
//     it with its base frozen), <dir>/shp_back_tfjs/ and <dir>/rnn_back_tfjs/ (tfjs_shp and tfjs_rnn,
//     fine-tuned) predict what gltrain did ({res,shp,rnn}_back_expected.safetensors).
//   node tfjs_check.mjs make-models <dir>
//     builds two models in TF.js with seeded random weights and batch-norm statistics
//     (tfjs_cnn: Conv2D, BatchNormalization, pooling, LeakyReLU, gelu_new (which TF.js saves
//     but cannot load back; gltrain can), Flatten, a Dense without bias, Dropout, softmax;
//     tfjs_gap: strided Conv2D, ReLU layer, GlobalAveragePooling2D, an Activation('softmax')
//     layer; tfjs_act: a Dense with each of TF.js's activations elu, selu, relu6, swish,
//     mish, hardSigmoid, softsign, gelu (the erf form), an ELU layer and a ReLU layer capped
//     at 6; tfjs_shp: ZeroPadding2D, Cropping2D, UpSampling2D bilinear and nearest, Permute,
//     Reshape; tfjs_rnn: LSTMs, GRUs and Bidirectionals of each over the image's 28 rows as steps), saves them as
//     <dir>/tfjs_{cnn,gap,act,shp,rnn}/ (model.json + weights.bin) and their predictions for the same rows
//     in <dir>/tfjs_expected.safetensors ("x", "cnn", "gap", "act", "shp", "res", "rnn");
//     and tfjs_res, a functional model (a residual block with a DepthwiseConv2D and batch normalization, a
//     Concatenate with the input);
//     and tfjs_siam, two inputs through one shared Dense (a layer with two inbound nodes) and two
//     outputs, with its rows and predictions in <dir>/siam_expected.safetensors ("left", "right",
//     "match", "value"). check-roundtrip also loads it back from gltrain (<dir>/siam_back_tfjs/).
//
// Errors are max |tfjs - expected| / max(1, max |expected|). Exit status 0 when every check passes.
import fs from 'node:fs';
import path from 'node:path';

let tf;
try {
  tf = await import('@tensorflow/tfjs');
} catch (e) {
  console.error('tfjs_check: cannot load @tensorflow/tfjs from tests/interop/node_modules ' +
    `(scripts/setup.sh installs it: npm ci in tests/interop): ${e.message}`);
  process.exit(1);
}
await tf.setBackend('cpu');
if (tf.version.tfjs !== '4.22.0') {
  console.error(`tfjs_check: expected @tensorflow/tfjs 4.22.0 (package-lock.json), found ${tf.version.tfjs}`);
  process.exit(1);
}

// ---- safetensors (F32 only), the format the fixture writes its rows and predictions in
function readSafetensors(file) {
  const b = fs.readFileSync(file);
  const n = Number(b.readBigUInt64LE(0));
  const header = JSON.parse(b.subarray(8, 8 + n).toString('utf8'));
  const out = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (t.dtype !== 'F32') throw new Error(`${file}: tensor ${name} is ${t.dtype}, expected F32`);
    const bytes = b.subarray(8 + n + t.data_offsets[0], 8 + n + t.data_offsets[1]);
    out[name] = { shape: t.shape, data: new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)) };
  }
  return out;
}
function writeSafetensors(file, tensors) {
  const header = {};
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + t.data.byteLength] };
    offset += t.data.byteLength;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const size = Buffer.alloc(8);
  size.writeBigUInt64LE(BigInt(json.length));
  const parts = [size, Buffer.from(json, 'utf8'), ...Object.values(tensors).map((t) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength))];
  fs.writeFileSync(file, Buffer.concat(parts));
}

// ---- model files: what tf.io's file handlers do, for Node without tfjs-node
function fromFiles(dir) {
  return {
    load: async () => {
      const modelJSON = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
      return tf.io.getModelArtifactsForJSON(modelJSON, async (manifest) => {
        const specs = [];
        const shards = [];
        for (const group of manifest) {
          specs.push(...group.weights);
          for (const p of group.paths) shards.push(fs.readFileSync(path.join(dir, p)));
        }
        const all = Buffer.concat(shards);
        return [specs, all.buffer.slice(all.byteOffset, all.byteOffset + all.length)];
      });
    },
  };
}
function toFiles(dir) {
  return tf.io.withSaveHandler(async (artifacts) => {
    fs.mkdirSync(dir, { recursive: true });
    const weightData = tf.io.CompositeArrayBuffer.join(artifacts.weightData);
    fs.writeFileSync(path.join(dir, 'weights.bin'), Buffer.from(weightData));
    const modelJSON = {
      modelTopology: artifacts.modelTopology, format: artifacts.format, generatedBy: artifacts.generatedBy,
      convertedBy: artifacts.convertedBy, weightsManifest: [{ paths: ['weights.bin'], weights: artifacts.weightSpecs }],
    };
    fs.writeFileSync(path.join(dir, 'model.json'), JSON.stringify(modelJSON));
    return { modelArtifactsInfo: tf.io.getModelArtifactsInfoForJSON(artifacts) };
  });
}

function relativeError(got, want) {
  if (got.length !== want.length) return Infinity;
  let scale = 1;
  let err = 0;
  for (let i = 0; i < want.length; i++) {
    scale = Math.max(scale, Math.abs(want[i]));
    err = Math.max(err, Math.abs(got[i] - want[i]));
  }
  return err / scale;
}
let failures = 0;
function report(what, error, limit) {
  const ok = error <= limit;
  if (!ok) failures++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}: error ${error.toPrecision(3)} (limit ${limit})`);
}
// Rows of 784 values, shaped for the model's input ([n, 784] or [n, 28, 28, 1]).
function input(model, x) {
  const n = x.shape[0];
  return tf.tensor(x.data, [n, ...model.inputs[0].shape.slice(1)]);
}

async function checkExport(dir) {
  const expected = readSafetensors(path.join(dir, 'expected.safetensors'));
  for (const name of ['mlp', 'cnn']) {
    const model = await tf.loadLayersModel(fromFiles(path.join(dir, `${name}_tfjs`)));
    const layers = model.layers.map((l) => l.getClassName()).join(', ');
    const y = model.predict(input(model, expected.x));
    report(`tf.loadLayersModel(${name}_tfjs) [${layers}] predicts what gltrain predicted`, relativeError(await y.data(), expected[name].data), 1e-4);
  }
}

// Seeded random values for every weight: kernels ~ N(0, 2/fan_in), batch-norm statistics away from 0 and 1.
function randomizeWeights(model, seed) {
  for (const layer of model.layers) {
    const values = layer.weights.map((w, i) => {
      const s = seed++;
      const name = w.originalName.split('/').pop();
      if (name === 'kernel') {
        const fanIn = w.shape.slice(0, -1).reduce((a, b) => a * b, 1);
        return tf.randomNormal(w.shape, 0, Math.sqrt(2 / fanIn), 'float32', s);
      }
      if (name === 'moving_variance' || name === 'gamma') return tf.randomUniform(w.shape, 0.5, 2, 'float32', s);
      return tf.randomNormal(w.shape, 0, 0.3, 'float32', s + i);  // bias, beta, moving_mean
    });
    if (values.length) layer.setWeights(values);
  }
}

async function makeModels(dir) {
  const x = readSafetensors(path.join(dir, 'expected.safetensors')).x;
  const cnn = tf.sequential({ name: 'tfjs_cnn' });
  cnn.add(tf.layers.conv2d({ inputShape: [28, 28, 1], filters: 6, kernelSize: 3, padding: 'same', activation: 'relu' }));
  cnn.add(tf.layers.batchNormalization());
  cnn.add(tf.layers.maxPooling2d({ poolSize: 2, strides: 2, padding: 'same' }));                // 14
  cnn.add(tf.layers.conv2d({ filters: 8, kernelSize: 5, padding: 'valid', activation: 'gelu_new' }));  // 10
  cnn.add(tf.layers.leakyReLU({ alpha: 0.2 }));
  cnn.add(tf.layers.averagePooling2d({ poolSize: 3, strides: 2, padding: 'valid' }));           // 4
  cnn.add(tf.layers.batchNormalization({ momentum: 0.9, epsilon: 0.01 }));
  cnn.add(tf.layers.flatten());
  cnn.add(tf.layers.dense({ units: 16, activation: 'softplus', useBias: false }));
  cnn.add(tf.layers.dropout({ rate: 0.3 }));
  cnn.add(tf.layers.dense({ units: 10, activation: 'softmax' }));

  const gap = tf.sequential({ name: 'tfjs_gap' });
  gap.add(tf.layers.conv2d({ inputShape: [28, 28, 1], filters: 12, kernelSize: 3, strides: 2, padding: 'same', activation: 'tanh' }));
  gap.add(tf.layers.conv2d({ filters: 16, kernelSize: 3, padding: 'valid' }));
  gap.add(tf.layers.reLU());
  gap.add(tf.layers.globalAveragePooling2d({}));
  gap.add(tf.layers.dense({ units: 10, activation: 'sigmoid' }));
  gap.add(tf.layers.dense({ units: 10 }));
  gap.add(tf.layers.activation({ activation: 'softmax' }));

  const act = tf.sequential({ name: 'tfjs_act' });
  act.add(tf.layers.dense({ inputShape: [784], units: 24, activation: 'elu' }));
  for (const activation of ['selu', 'relu6', 'swish', 'mish', 'hardSigmoid', 'softsign', 'gelu'])
    act.add(tf.layers.dense({ units: 24, activation }));
  act.add(tf.layers.elu());
  act.add(tf.layers.reLU({ maxValue: 6 }));
  act.add(tf.layers.dense({ units: 10, activation: 'softmax' }));

  // The shape layers: padding, cropping, bilinear and nearest upsampling, Permute and Reshape.
  const shp = tf.sequential({ name: 'tfjs_shp' });
  shp.add(tf.layers.conv2d({ inputShape: [28, 28, 1], filters: 4, kernelSize: 3, activation: 'relu' }));  // 26x26x4
  shp.add(tf.layers.zeroPadding2d({ padding: [[1, 0], [2, 1]] }));                                         // 27x29
  shp.add(tf.layers.cropping2D({ cropping: [[2, 1], [0, 3]] }));                                           // 24x26
  shp.add(tf.layers.maxPooling2d({ poolSize: 2 }));                                                        // 12x13
  shp.add(tf.layers.upSampling2d({ size: [3, 2], interpolation: 'bilinear' }));                            // 36x26
  shp.add(tf.layers.upSampling2d({ size: [1, 2] }));                                                       // 36x52
  shp.add(tf.layers.conv2d({ filters: 3, kernelSize: 3, strides: 3 }));                                    // 12x17x3
  shp.add(tf.layers.permute({ dims: [3, 1, 2] }));                                                         // 3x12x17
  shp.add(tf.layers.reshape({ targetShape: [36, 17] }));                                                   // 36x17
  shp.add(tf.layers.permute({ dims: [2, 1] }));                                                            // 17x36
  shp.add(tf.layers.flatten());
  shp.add(tf.layers.dense({ units: 10, activation: 'softmax' }));

  // A functional model: a residual block with a DepthwiseConv2D and batch normalization, a Concatenate with the input.
  const inp = tf.input({ shape: [28, 28, 1], name: 'image' });
  const c1 = tf.layers.conv2d({ filters: 6, kernelSize: 3, padding: 'same', activation: 'relu' }).apply(inp);
  const d1 = tf.layers.depthwiseConv2d({ kernelSize: 3, padding: 'same', activation: 'relu' }).apply(c1);
  const c2 = tf.layers.batchNormalization().apply(tf.layers.conv2d({ filters: 6, kernelSize: 3, padding: 'same' }).apply(d1));
  const joined = tf.layers.concatenate().apply([tf.layers.add().apply([c1, c2]), inp]);
  const pooled = tf.layers.flatten().apply(tf.layers.maxPooling2d({ poolSize: 4 }).apply(joined));
  const res = tf.model({ name: 'tfjs_res', inputs: inp, outputs: tf.layers.dense({ units: 10, activation: 'softmax', name: 'head' }).apply(pooled) });

  // Each image as 28 steps of 28 pixels: an LSTM giving every step's output (TF.js's default hardSigmoid
  // gates), a Bidirectional LSTM averaging its directions, a GRU (TF.js's defaults), a Bidirectional GRU
  // concatenating its directions, an LSTM reading the steps backwards with sigmoid gates and no bias, a GRU
  // reading them backwards with sigmoid gates and no bias, a Dense on its last output.
  const rnn = tf.sequential({ name: 'tfjs_rnn' });
  rnn.add(tf.layers.lstm({ inputShape: [28, 28], units: 8, returnSequences: true }));
  rnn.add(tf.layers.bidirectional({ layer: tf.layers.lstm({ units: 5, returnSequences: true }), mergeMode: 'ave' }));
  rnn.add(tf.layers.gru({ units: 7, returnSequences: true }));
  rnn.add(tf.layers.bidirectional({ layer: tf.layers.gru({ units: 4, returnSequences: true }), mergeMode: 'concat' }));
  rnn.add(tf.layers.lstm({ units: 6, goBackwards: true, recurrentActivation: 'sigmoid', useBias: false,
                           returnSequences: true }));
  rnn.add(tf.layers.gru({ units: 6, goBackwards: true, recurrentActivation: 'sigmoid', useBias: false }));
  rnn.add(tf.layers.dense({ units: 10, activation: 'softmax' }));

  const predictions = { x };
  for (const [name, model, seed] of [['cnn', cnn, 100], ['gap', gap, 200], ['act', act, 300], ['shp', shp, 500], ['res', res, 400],
    ['rnn', rnn, 700]]) {
    randomizeWeights(model, seed);
    await model.save(toFiles(path.join(dir, `tfjs_${name}`)));
    const y = model.predict(input(model, x));
    predictions[name] = { shape: y.shape, data: await y.data() };
    console.log(`saved tfjs_${name}/ [${model.layers.map((l) => l.getClassName()).join(', ')}], ${model.countParams()} parameters`);
  }
  writeSafetensors(path.join(dir, 'tfjs_expected.safetensors'), predictions);

  // Siamese towers: one Dense applied to both inputs (its weights shared), two heads.
  const left = tf.input({ shape: [6], name: 'left' }), right = tf.input({ shape: [6], name: 'right' });
  const tower = tf.layers.dense({ units: 5, activation: 'tanh', name: 'tower' });
  const hl = tower.apply(left), hr = tower.apply(right);
  const match = tf.layers.dense({ units: 3, activation: 'softmax', name: 'match' }).apply(tf.layers.concatenate().apply([hl, hr]));
  const value = tf.layers.dense({ units: 2, name: 'value' }).apply(hr);
  const siam = tf.model({ name: 'tfjs_siam', inputs: [left, right], outputs: [match, value] });
  randomizeWeights(siam, 600);
  await siam.save(toFiles(path.join(dir, 'tfjs_siam')));
  const rowsOf = (phase) => tf.tensor2d(Array.from({ length: 8 * 6 }, (_, i) => Math.sin(0.37 * i + phase)), [8, 6]);
  const [l, r] = [rowsOf(0), rowsOf(1.3)];
  const [m, v] = siam.predict([l, r]);
  const f32 = async (t) => ({ shape: t.shape, data: await t.data() });
  writeSafetensors(path.join(dir, 'siam_expected.safetensors'),
                   { left: await f32(l), right: await f32(r), match: await f32(m), value: await f32(v) });
  console.log(`saved tfjs_siam/: inputs ${siam.inputNames.join(', ')}, outputs ${siam.outputNames.join(', ')}, ` +
              `'tower' applied ${tower.inboundNodes.length} times, ${siam.countParams()} parameters`);
}

// The functional model gltrain imported, fine-tuned with its base frozen and exported
// back (<dir>/res_back_tfjs/): TF.js predicts what gltrain predicted (res_back_expected.safetensors).
async function checkRoundTrip(dir) {
  for (const name of ['res', 'shp', 'rnn']) {
    const expected = readSafetensors(path.join(dir, `${name}_back_expected.safetensors`));
    const model = await tf.loadLayersModel(fromFiles(path.join(dir, `${name}_back_tfjs`)));
    const layers = model.layers.map((l) => l.getClassName()).join(', ');
    const y = model.predict(input(model, expected.x));
    report(`tf.loadLayersModel(${name}_back_tfjs) [${layers}] predicts what gltrain predicted after fine-tuning`,
           relativeError(await y.data(), expected[name].data), 1e-4);
  }
  // A gltrain model of two inputs and two outputs: TF.js takes [image, extra] and gives both heads.
  const multi = readSafetensors(path.join(dir, 'multi_expected.safetensors'));
  const two = await tf.loadLayersModel(fromFiles(path.join(dir, 'multi_tfjs')));
  const [img, extra] = two.inputs;
  const ys = two.predict([tf.tensor(multi.image.data, [multi.image.shape[0], ...img.shape.slice(1)]),
                          tf.tensor(multi.extra.data, multi.extra.shape)]);
  report(`tf.loadLayersModel(multi_tfjs): inputs ${two.inputNames.join(', ')}, outputs ${two.outputNames.join(', ')}; ` +
         'the classes head predicts what gltrain did', relativeError(await ys[0].data(), multi.classes.data), 1e-4);
  report('tf.loadLayersModel(multi_tfjs): the values head predicts what gltrain did',
         relativeError(await ys[1].data(), multi.values.data), 1e-4);
  // tfjs_siam through gltrain and back: its shared layer is one layer of two inbound nodes again.
  const siam = readSafetensors(path.join(dir, 'siam_back_expected.safetensors'));
  const back = await tf.loadLayersModel(fromFiles(path.join(dir, 'siam_back_tfjs')));
  const shared = back.layers.filter((l) => l.inboundNodes.length > 1).map((l) => l.name);
  const [m, v] = back.predict([tf.tensor(siam.left.data, siam.left.shape), tf.tensor(siam.right.data, siam.right.shape)]);
  report(`tf.loadLayersModel(siam_back_tfjs): layers applied twice [${shared.join(', ')}]; the match head ` +
         'predicts what gltrain did', shared.includes('tower') ? relativeError(await m.data(), siam.match.data) : Infinity, 1e-4);
  report('tf.loadLayersModel(siam_back_tfjs): the value head predicts what gltrain did',
         relativeError(await v.data(), siam.value.data), 1e-4);
}

const [mode, dir] = process.argv.slice(2);
if (mode === 'check-export' && dir) await checkExport(dir);
else if (mode === 'make-models' && dir) await makeModels(dir);
else if (mode === 'check-roundtrip' && dir) await checkRoundTrip(dir);
else {
  console.error('usage: node tfjs_check.mjs check-export|make-models|check-roundtrip <dir>');
  process.exit(2);
}
process.exit(failures ? 1 : 0);
