import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'vite';

/**
 * The console (issue 14): a Svelte 5 single-page app built into web/dist, which `colony serve` serves
 * at `/` under `Content-Security-Policy: default-src 'self'` — so the build inlines nothing: no inline
 * script, no inline style, no asset from another origin.
 */
export default defineConfig({
  root: new URL('.', import.meta.url).pathname,
  base: '/',
  plugins: [svelte({ compilerOptions: { css: 'external' } })],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
  logLevel: 'warn',
});
