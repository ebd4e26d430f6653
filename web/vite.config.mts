import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built by `make build` into dist/web, which the service serves at /console/ (src/routes/console.ts).
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    // Chromium, Firefox and Safari all support modulepreload: no polyfill to ship.
    modulePreload: { polyfill: false },
    sourcemap: true,
  },
});
