import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// `npm run dev`: Vite serves the app with hot reload and forwards `/api` to the Node server
// (`npm start` in another terminal, port 3000 unless PORT says otherwise), so the browser
// calls one origin in development as in production.
const apiServer = `http://127.0.0.1:${process.env.PORT ?? '3000'}`;

export default defineConfig({
  plugins: [react()],
  server: {
    proxy: { '/api': { target: apiServer, changeOrigin: false } },
  },
  build: {
    // ai and zod are big; the example is a demo, not a budget.
    chunkSizeWarningLimit: 1024,
    rollupOptions: {
      onwarn(warning, warn) {
        // zod's `/* @__PURE__ */` comments in odd places: harmless, and noisy on every build.
        if (warning.code === 'INVALID_ANNOTATION') return;
        warn(warning);
      },
    },
  },
});
