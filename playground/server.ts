// `npm run playground` builds the package and the app, then runs this one Node process.
import { main } from './src/host/main.js';

main().catch((error: unknown) => {
  console.error(`playground: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
