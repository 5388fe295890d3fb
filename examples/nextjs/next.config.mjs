import { fileURLToPath } from 'node:url';

// This folder is its own project (the repository root has another lockfile): tell Next so,
// for Turbopack and for output tracing.
const root = fileURLToPath(new URL('.', import.meta.url));

/** @type {import('next').NextConfig} */
const nextConfig = {
  turbopack: { root },
  outputFileTracingRoot: root,
  reactStrictMode: true,
};

export default nextConfig;
