import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// base './': every asset URL is relative, so the UI works behind any path prefix.
export default defineConfig({
  base: './',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, modulePreload: { polyfill: false } },
  test: { environment: 'node', include: ['src/**/*.test.ts'] },
});
