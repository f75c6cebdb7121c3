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
    module: true,
    library: { type: 'module' },
    clean: false,
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
