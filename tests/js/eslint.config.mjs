// ESLint's configuration for the site's JavaScript (docs/assets/**/*.js): one dialect, ES
// modules (ES2022), in the browser (worker.js: in a worker). tests/js/test_eslint.py runs it
// with the pinned ESLint of package.json / package-lock.json beside this file.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: { ...globals.browser },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "no-var": "error",
      "prefer-const": "error",
      eqeqeq: ["error", "always"],
      strict: ["error", "never"],
      "no-implicit-globals": "error",
      "no-unused-vars": ["error", { args: "after-used", caughtErrors: "none" }],
    },
  },
  {
    files: ["**/tools/worker.js"],
    languageOptions: { globals: { ...globals.worker } },
  },
];
