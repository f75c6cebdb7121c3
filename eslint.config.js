// ESLint (flat config) over the frontend: the recommended JavaScript and typescript-eslint rules. Formatting is
// prettier's (`npm run lint` runs both); type checking is tsc's (`npm test`).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'tensorboard_plugin_dbg/static/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['frontend/**/*.ts'],
    rules: {
      // Unused names are tsc's job (noUnusedLocals); an `_` prefix marks a parameter kept for its position.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
);
