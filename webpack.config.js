// Bundles frontend/src/index.ts into one ES module, tensorboard_plugin_dbg/static/index.js, which TensorBoard
// imports inside the plugin's iframe and whose exported render() draws the dashboard.
// The output must be byte-for-byte reproducible: scripts/check_bundle.mjs rebuilds it and compares.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));

export default (env = {}) => ({
  mode: 'production',
  entry: path.join(root, 'frontend/src/index.ts'),
  output: {
    path: env.outDir ? path.resolve(env.outDir) : path.join(root, 'tensorboard_plugin_dbg/static'),
    filename: 'index.js',
    // CodeMirror (Source Code's editor, ~85 % of the code) is a separate chunk, imported on the first file shown
    // (panels/source_code/source_code.ts), so the first paint does not download, parse and run it. Its name
    // carries its content hash, which index.js spells out: a stale chunk makes index.js differ from a fresh
    // build, so scripts/check_bundle.mjs still catches it. import() resolves against index.js's URL
    // (/data/plugin/dbg/index.js), and `static/` is the prefix the plugin serves files of this folder under
    // (static_files.py); the file itself lies next to index.js.
    chunkFilename: '[name].[contenthash:16].js',
    publicPath: 'static/',
    module: true,
    library: { type: 'module' },
    // Only webpack's output lives here: old chunks (previous hashes) are removed by each build.
    clean: true,
  },
  experiments: { outputModule: true },
  resolve: { extensions: ['.ts', '.js'] },
  module: {
    rules: [{ test: /\.ts$/, loader: 'ts-loader', options: { transpileOnly: true }, exclude: /node_modules/ }],
  },
  devtool: false,
  performance: { hints: false },
  optimization: { moduleIds: 'deterministic', chunkIds: 'deterministic', splitChunks: false },
});
